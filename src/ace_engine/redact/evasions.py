"""Evasions folded before redaction: a secret hidden by zero-width or full-width characters,
look-alike letters, URL encoding (`%41`), string splitting (`"ghp_ab" + "cd…"`, `\\`-newline) or
base64 is found and redacted like a plain one.

Contract: `unfold(text, plain, redact_plain)` returns `plain` (`text` as `redact_plain` left
it) with every secret that `redact_plain` finds only in a normalised copy of `text` replaced too.
What is stored keeps the original text's structure: only the stretch between the first and the
last change is taken from the normalised copy (with its markers); every other character is the
original one, redacted as written. A base64 run whose decoded text holds a secret is replaced
whole by `[REDACTED:encoded-secret]`. Returns `plain` itself when nothing was hidden.

Cost: a few C-level checks gate everything (`isascii`, `%`, quotes next to `+`, a long base64
run); only text that has such a feature pays for one linear pass that builds the normalised copy
and its map back to the original, and one more `redact_plain` over it (two when it finds one).
The stretch that changed is found by comparing blocks, not chars. Imports only `re` (through
`spans`, the pattern cache and marker shared by the rule modules) and, when a base64 run is
there, `binascii` (a C module).
"""

from .spans import marker, rx

TYPE_CHECKING = False  # not `typing.TYPE_CHECKING`: hooks import this module and must not load `typing`
if TYPE_CHECKING:
    from collections.abc import Callable

_INVISIBLE = frozenset("\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180e\u200b\u200c\u200d\u200e\u200f"
                       "\u202a\u202b\u202c\u202d\u202e\u2060\u2061\u2062\u2063\u2064\ufeff")
# Cyrillic and Greek letters that look like Latin ones in key names and token prefixes.
_LOOKALIKE = {"а": "a", "е": "e", "о": "o", "р": "p", "с": "c", "у": "y", "х": "x", "і": "i", "ѕ": "s",
              "ј": "j", "һ": "h", "ԁ": "d", "ο": "o", "α": "a", "ε": "e", "ι": "i", "κ": "k", "ρ": "p",
              "τ": "t", "υ": "u", "А": "A", "Е": "E", "О": "O", "Р": "P", "С": "C", "Х": "X", "І": "I",
              "Ѕ": "S", "Ј": "J", "Н": "H", "М": "M", "Т": "T", "В": "B", "К": "K"}
_HEX = frozenset("0123456789abcdefABCDEF")

# A string split in two: a quote, then blanks, an operator (`+`, `.`, `||`), a line continuation
# (`\`, a newline) and blanks in that order, each optional, then a quote. Every run of blanks
# follows a character that is not a blank, so the regex can split a run of blanks only one way:
# written as `[ \t]*` four times in a row with only optional parts between (as it once was), a
# quote followed by 1,000 spaces cost more than two minutes of backtracking.
_WS, _OP, _NL = r"[ \t]*", r"(?:\+|\.|\|\|)", r"(?:\\\r?\n?|\r\n?|\n)"
_SPLIT = rf"[\"']{_WS}(?:{_OP}{_WS})?(?:{_NL}{_WS})?(?:{_OP}{_WS})?[\"']"
# What makes a text worth folding: an operator between the quotes, or a line break.
_SPLIT_GATE = rf"[\"']{_WS}{_OP}{_WS}(?:{_NL}{_WS})?[\"']|[\"']{_WS}\\?\r?\n{_WS}[\"']"


def _fold(text: str) -> "tuple[str, list[int]] | None":
    """(normalised copy, map) -- map[i] is where the copy's char i starts in `text`, with
    map[len(copy)] == len(text) -- or None when folding changes nothing."""
    out: list[str] = []
    where: list[int] = []
    n = len(text)
    i = 0
    changed = False
    split = rx(_SPLIT)
    while i < n:
        c = text[i]
        o = ord(c)
        if o > 127:
            if c in _INVISIBLE:
                changed = True
                i += 1
                continue
            if 0xFF01 <= o <= 0xFF5E:
                c = chr(o - 0xFEE0)
                changed = True
            elif o == 0x3000:
                c = " "
                changed = True
            elif c in _LOOKALIKE:
                c = _LOOKALIKE[c]
                changed = True
        elif c == "%" and i + 2 < n and text[i + 1] in _HEX and text[i + 2] in _HEX:
            code = int(text[i + 1:i + 3], 16)
            if 32 <= code < 127:
                out.append(chr(code))
                where.append(i)
                i += 3
                changed = True
                continue
        elif c in "\"'":
            m = split.match(text, i)
            # "abc" + "def", 'abc' 'def', "abc" \<newline> "def": one string to whoever reads it.
            if m is not None and m.end() - i >= 2 and m.group(0)[0] == m.group(0)[-1] and (
                    "+" in m.group(0) or "\n" in m.group(0) or " " in m.group(0) or "." in m.group(0)
                    or "|" in m.group(0)):
                i = m.end()
                changed = True
                continue
        elif c == "\\" and text.startswith("\n", i + 1):
            i += 2
            changed = True
            continue
        out.append(c)
        where.append(i)
        i += 1
    if not changed:
        return None
    where.append(n)
    return "".join(out), where


def _gated(text: str) -> bool:
    if not text.isascii():
        return True
    if "%" in text and rx(r"%[0-9A-Fa-f]{2}").search(text) is not None:
        return True
    if "\\\n" in text:
        return True
    return ('"' in text or "'" in text) and rx(_SPLIT_GATE).search(text) is not None


def _common_prefix(a: str, b: str) -> int:
    """Length of the common prefix of `a` and `b`: compared a block at a time (C speed), then
    char by char inside the first block that differs -- linear."""
    n = min(len(a), len(b))
    i = 0
    while i < n and a[i:i + 4096] == b[i:i + 4096]:
        i += 4096
    i = min(i, n)
    while i < n and a[i] == b[i]:
        i += 1
    return i


def _common_suffix(a: str, b: str, limit: int) -> int:
    """Length of the common suffix of `a` and `b`, at most `limit`."""
    la, lb = len(a), len(b)
    k = 0
    while k < limit and a[max(la - k - 4096, la - limit):la - k] == b[max(lb - k - 4096, lb - limit):lb - k]:
        k = min(k + 4096, limit)
    while k < limit and a[la - k - 1] == b[lb - k - 1]:
        k += 1
    return k


def _decoded_secrets(text: str, redact_plain: "Callable[[str], str]") -> str:
    """Base64 runs whose decoded text holds a secret, replaced whole."""
    spans = []
    for m in rx(r"(?<![A-Za-z0-9+/=_-])[A-Za-z0-9+/]{24,}={0,2}(?![A-Za-z0-9+/=_-])").finditer(text):
        run = m.group(0)
        if len(run) % 4 == 1 or len(run) > 65536:
            continue
        import binascii

        try:
            raw = binascii.a2b_base64(run + "=" * (-len(run) % 4))
        except (binascii.Error, ValueError):
            continue
        try:
            plain = raw.decode("utf-8")
        except UnicodeDecodeError:
            continue
        if sum(ch.isprintable() or ch in "\n\t" for ch in plain) < 0.9 * len(plain):
            continue  # an image, a digest: data, not text
        if redact_plain(plain) != plain:
            spans.append(m.span())
    if not spans:
        return text
    out, last = [], 0
    for s, e in spans:
        out.append(text[last:s])
        out.append(marker("encoded-secret"))
        last = e
    out.append(text[last:])
    return "".join(out)


def unfold(text: str, plain: str, redact_plain: "Callable[[str], str]") -> str:
    """`plain` (= `redact_plain(text)`) with the secrets an evasion hid in `text` redacted too.

    The normalised copy is made from the original `text`, not from `plain`: a token split in two
    whose first half is already a secret on its own must still be seen whole."""
    out = plain
    if len(out) >= 24 and rx(r"[A-Za-z0-9+/]{24}").search(out) is not None:
        out = _decoded_secrets(out, redact_plain)
    if not _gated(text):
        return out
    folded = _fold(text)
    if folded is None:
        return out
    copy, where = folded
    red = redact_plain(copy)
    if red == copy:
        return out
    i = _common_prefix(copy, red)
    j = _common_suffix(copy, red, min(len(copy), len(red)) - i)
    start, end = where[i], where[len(copy) - j]
    merged = text[:start] + red[i:len(red) - j] + text[end:]
    # What lies outside the changed stretch is still the original text: redact it as written.
    merged = redact_plain(merged)
    if len(merged) >= 24 and rx(r"[A-Za-z0-9+/]{24}").search(merged) is not None:
        merged = _decoded_secrets(merged, redact_plain)
    return merged
