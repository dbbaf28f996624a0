"""Tests for ace_engine.redact.sanitize."""


import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ace_engine.redact.sanitize import (
    cap,
    decode_bytes,
    is_blank,
    repair_utf8,
    sanitize,
    strip_private,
)
from conftest import examples

GH_TOKEN = "ghp" + "_" + "a1B2c3D4e5F6g7H8" * 2 + "x9Y8"


# --- decode_bytes / repair_utf8 -------------------------------------------------

def test_decode_bytes_replaces_invalid_bytes():
    assert decode_bytes(b"ok \xff\xfe end") == "ok \ufffd\ufffd end"
    assert decode_bytes("héllo ✓".encode()) == "héllo ✓"
    assert decode_bytes(b"cut \xe2\x9c") == "cut \ufffd"  # truncated sequence
    assert decode_bytes(bytearray(b"abc")) == "abc"
    assert decode_bytes(b"") == ""


@given(st.binary(max_size=200))
def test_decode_bytes_never_raises(data):
    decode_bytes(data).encode("utf-8")


def test_repair_utf8_lone_surrogates():
    out = repair_utf8("a\ud800b\udfffc")
    assert out == "a\ufffdb\ufffdc"
    out.encode("utf-8")


def test_repair_utf8_joins_a_split_surrogate_pair():
    assert repair_utf8("x\ud83d\ude00y") == "x\U0001f600y"


def test_repair_utf8_strips_nul():
    assert repair_utf8("a\x00b\x00") == "ab"
    assert repair_utf8("\ud800\x00é") == "\ufffdé"


def test_repair_utf8_fast_path_returns_same_object():
    for s in ("plain ascii", "unicode ✓ é 😀", ""):
        assert repair_utf8(s) is s


@given(st.text(st.characters(exclude_categories=()), max_size=200))
def test_repair_utf8_always_encodes(s):
    out = repair_utf8(s)
    out.encode("utf-8")
    assert "\x00" not in out


# --- strip_private --------------------------------------------------------------

@pytest.mark.parametrize("text,expected", [
    ("a <private>secret</private> b", "a  b"),
    ("a <private>x</private> b <private>y</private> c", "a  b  c"),
    ("start <private>line1\nline2\n</private>end", "start end"),
    ("A <PRIVATE>x</Private> B <PrIvAtE>y</pRiVaTe> C", "A  B  C"),
    ("keep <private>drop everything after", "keep "),
    ("a <private>1 <private>2</private> 3</private> b", "a  b"),  # nested
    ("a stray</private> b", "a stray b"),
    ("a <private reason='pii'>x</private> b", "a  b"),
    ("a </ private> <privateer> b", "a </ private> <privateer> b"),
    ("no tags at all", "no tags at all"),
    ("x < y and <p>html</p>", "x < y and <p>html</p>"),
])
def test_strip_private(text, expected):
    assert strip_private(text) == expected


def test_wholly_private_prompt_is_blank():
    assert is_blank(strip_private("<private>my ssn is 123</private>"))
    assert is_blank(strip_private("  <private>a</private>\n<private>b\n"))
    assert not is_blank(strip_private("hi <private>a</private>"))


def test_is_blank():
    assert is_blank("") and is_blank(" \n\t ")
    assert not is_blank(" x ")


# --- cap ------------------------------------------------------------------------

def test_cap_short_text_unchanged():
    assert cap("hello", 10) == "hello"
    assert cap("hello", 5) == "hello"
    big = "x" * 1000
    assert cap(big, 0) is big and cap(big, -1) is big


def test_cap_keeps_head_and_tail_with_marker():
    s = "".join(chr(ord("a") + i % 26) for i in range(10_000))
    out = cap(s, 1000)
    assert len(out) <= 1000
    head, _, rest = out.partition("\n…[ace: ")
    count, _, tail = rest.partition(" chars cut]…\n")
    assert s.startswith(head) and s.endswith(tail)
    assert len(head) > len(tail) > 0
    assert int(count) == len(s) - len(head) - len(tail)


def test_cap_keeps_the_error_lines_of_the_part_it_cuts():
    """A long log with its one error line mid-way (turbo printing a package's failure among pages of
    passing tests): the capped text still has the line, between the marker and the tail."""
    noise = "".join(f"@acme/core:test: (pass) suite > case {i} [0.05ms]\n" for i in range(400))
    log = noise + "@acme/pull:test: error: Missing SHOP_DB_URL or SHOP_DB_HOST\n" + noise + " Tasks: 7 failed\n"
    out = cap(log, 8_000)
    assert len(out) <= 8_000
    head, _, rest = out.partition("\n…[ace: ")
    _, _, after = rest.partition(" chars cut]…\n")
    assert after.startswith("[ace: lines kept from the cut part]\n@acme/pull:test: error: Missing SHOP_DB_URL")
    assert log.startswith(head) and log.endswith(after.partition("\n…\n")[2])
    # No key line in the cut part: the plain head + marker + tail.
    assert "lines kept" not in cap(noise * 2, 8_000)
    # Huge text (sanitize's pre-cut windows): the kept line is redacted like the rest.
    secret = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
    huge = noise * 30 + f"error: push refused for token {secret}\n" + noise * 4
    stored = sanitize(huge, 8_000)
    assert "error: push refused for token [REDACTED:github-token]" in stored and secret not in stored
    assert len(stored) <= 8_000


def _parts(out):
    """(head, kept lines, tail) of a capped text."""
    head, _, rest = out.partition("\n…[ace: ")
    rest = rest.partition(" chars cut]…\n")[2]
    kept = []
    if rest.startswith("[ace: lines kept from the cut part]\n"):
        block, _, rest = rest[len("[ace: lines kept from the cut part]\n"):].partition("\n…\n")
        kept = block.split("\n")
    return head, kept, rest


ALPHA = st.text(st.characters(codec="ascii"), max_size=3000)  # no "…"


@settings(max_examples=examples(300))
@given(s=ALPHA, limit=st.integers(min_value=-5, max_value=3500))
def test_cap_properties(s, limit):
    out = cap(s, limit)
    if limit <= 0 or len(s) <= limit:
        assert out == s
        return
    assert len(out) <= limit
    assert "…" in out  # cut => marked
    if "\n…[ace: " in out:
        head, kept, tail = _parts(out)
        assert s.startswith(head) and s.endswith(tail)
        assert all(line and line in s[len(head):len(s) - len(tail)] for line in kept)
        if limit >= 100:
            assert head and tail
    else:
        assert s.startswith(out[:-1])  # tiny limit: head + "…"


# --- sanitize -------------------------------------------------------------------

def test_sanitize_pipeline_order():
    text = "a\x00b <private>hidden</private> token=" + GH_TOKEN + " \ud800"
    out = sanitize(text, 10_000)
    assert out == "ab  token=[REDACTED:github-token] \ufffd"


def test_sanitize_redacts_before_capping():
    # The secret sits right at the head/tail boundary: no fragment may leak.
    filler = "y" * 600
    text = filler + " " + GH_TOKEN + " " + filler
    for limit in range(560, 700, 7):
        out = sanitize(text, limit)
        assert len(out) <= limit
        assert GH_TOKEN[:12] not in out and GH_TOKEN[-12:] not in out


def test_sanitize_no_limit():
    text = "k " + GH_TOKEN + " " + "z" * 100_000
    assert sanitize(text, 0) == "k [REDACTED:github-token] " + "z" * 100_000


def test_sanitize_huge_text_is_capped_and_redacted():
    line = "src/module.py:12: assert value == expected  # ok\n"
    body = line * (20_000_000 // len(line))
    head_secret = "export GITHUB_TOKEN=" + GH_TOKEN + "\n"
    tail_secret = "\nAuthorization: Bearer " + "abc123DEF456ghi789" + "\n"
    text = line * 3 + head_secret + body + tail_secret
    assert len(text) > 20_000_000
    out = sanitize(text, 20_000)  # its time: bench/budgets_bench.py
    assert len(out) <= 20_000
    assert GH_TOKEN not in out and "[REDACTED:github-token]" in out
    assert "abc123DEF456ghi789" not in out
    assert "Bearer [REDACTED:auth-header]" in out
    assert "…[ace: " in out


def test_sanitize_huge_text_private_span_reaching_the_tail():
    # <private> opens in the part that is cut away: the tail must not show
    # what it hides.
    text = "x" * 1_000_000 + "<private>" + "Q" * 1_000_000 + "</private>end"
    out = sanitize(text, 10_000)
    assert "Q" not in out and out.endswith("end")


def test_sanitize_huge_text_private_key_reaching_the_tail():
    # A PEM block starts in the part that is cut away; its body runs into
    # the kept tail.  The body lines must not leak.
    body = ("MIIEvQIBADANBgkqhkiG9w0BAQEFAASC" + "\n") * 2000
    text = ("x " * 500_000 + "-----" + "BEGIN PRIVATE KEY-----\n" + body
            + "-----" + "END PRIVATE KEY-----\nafter the key")
    out = sanitize(text, 10_000)
    assert len(out) <= 10_000
    assert "MIIEvQIBADANBgkq" not in out
    assert out.endswith("after the key")


@settings(max_examples=examples(200), deadline=None)
@given(s=st.text(st.characters(exclude_categories=()), max_size=2000),
       limit=st.integers(min_value=0, max_value=500))
def test_sanitize_output_is_bounded_and_encodable(s, limit):
    out = sanitize(s, limit)
    out.encode("utf-8")
    if limit > 0:
        assert len(out) <= limit
