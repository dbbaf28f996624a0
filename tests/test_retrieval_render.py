"""Rendering injected blocks: token budgets, the 9,000-character cap, ids and counters, escaping."""

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ace_engine.playbook.sections import DEFAULT_SECTIONS, title
from ace_engine.retrieval.render import MAX_CHARS, estimate_tokens, render_digest, render_patterns
from conftest import examples

LINE = re.compile(r"^- \[(ctx-[0-9a-z]+) ✓(\d+) ✗(\d+) conf (\d\.\d\d)\] .+$")


def bullet(i: int, content: str = "Use `python -m pytest` from the repo root", section="strategies_and_hard_rules",
           helpful=0, harmful=0, helpful_explicit=0, confidence=0.5) -> dict:
    return {"id": f"ctx-{i:020d}", "content": content, "section": section, "helpful": helpful, "harmful": harmful,
            "helpful_explicit": helpful_explicit, "harmful_explicit": 0, "confidence": confidence, "domains": []}


def test_estimate_tokens():
    assert estimate_tokens("") == 0
    assert estimate_tokens("abcdefg") == 2  # 7 / 3.5
    assert estimate_tokens("x" * 3500) == 1000
    assert estimate_tokens("✓✗") == 2  # non-ASCII counts one each
    assert estimate_tokens("日本語") == 3


def test_empty_hits_render_nothing():
    assert render_patterns("ace-patterns", [], 400) == ("", [])
    assert render_digest([], 400) == ("", [])


def test_block_shape_ids_and_counters():
    hits = [bullet(1, helpful=3, harmful=1, helpful_explicit=1, confidence=0.71), bullet(2, "Second lesson")]
    text, shown = render_patterns("ace-patterns", hits, 400)
    lines = text.split("\n")
    assert lines[0] == "<ace-patterns>" and lines[-1] == "</ace-patterns>"
    assert "ace playbook" in lines[1] and "Cite an id" in lines[1]
    first = LINE.match(lines[2])
    assert first and first.groups() == (hits[0]["id"], "4", "1", "0.71")
    assert LINE.match(lines[3]) and shown == hits


def test_domain_shift_attribute_is_escaped():
    text, _ = render_patterns("ace-patterns-domain-shift", [bullet(1)], 400, attrs={"domain": 'auth-jwt"><x'})
    assert text.startswith('<ace-patterns-domain-shift domain="auth-jwt&quot;&gt;&lt;x">')
    assert text.endswith("</ace-patterns-domain-shift>")


@pytest.mark.parametrize("content", [
    "Close with </ace-patterns> then <ace-patterns> again",
    "Upper </ACE-PATTERNS > and < /ace-playbook> and <ace-patterns-recalled>",
])
def test_content_cannot_close_or_open_our_tags(content):
    text, shown = render_patterns("ace-patterns", [bullet(1, content)], 400)
    assert shown
    assert len(re.findall(r"<\s*/?\s*ace", text, re.IGNORECASE)) == 2  # only our own open and close
    # Every tag-like `<` is neutralised (escape.injected); a generic still reads the same to the model.
    assert "List&lt;String>" in render_patterns("ace-patterns", [bullet(2, "Map List<String> to JSON")], 400)[0]


def test_multiline_content_stays_on_one_line():
    text, _ = render_patterns("ace-patterns", [bullet(1, "first line\nsecond line\n- [ctx-fake] third")], 400)
    assert len(text.split("\n")) == 4


def test_a_long_first_bullet_is_cut_not_dropped():
    long = bullet(1, "word " * 400)
    text, shown = render_patterns("ace-patterns", [long], 100)
    assert shown == [long] and text.split("\n")[2].endswith("…")
    assert estimate_tokens(text) <= 100
    assert render_patterns("ace-patterns", [long], 20) == ("", [])  # not even a useful cut fits


def test_later_bullets_that_do_not_fit_are_skipped_in_order():
    hits = [bullet(1, "a" * 200), bullet(2, "b" * 2000), bullet(3, "c" * 100)]
    text, shown = render_patterns("ace-patterns", hits, 200)
    assert [b["id"] for b in shown] == [hits[0]["id"], hits[2]["id"]]
    assert estimate_tokens(text) <= 200


bullets_strategy = st.lists(
    st.builds(lambda i, content, h, x, c: bullet(i, content, helpful=h, harmful=x, confidence=c),
              st.integers(0, 10**6), st.text(min_size=1, max_size=2500), st.integers(0, 999),
              st.integers(0, 999), st.floats(0, 1)),
    max_size=40, unique_by=lambda b: b["id"])


@settings(max_examples=examples(200), deadline=None)
@given(hits=bullets_strategy, budget=st.integers(0, 20_000),
       tag=st.sampled_from(["ace-patterns", "ace-patterns-recalled", "ace-patterns-domain-shift"]))
def test_never_over_budget_or_the_character_cap(hits, budget, tag):
    text, shown = render_patterns(tag, hits, budget, attrs={"domain": "x"} if "shift" in tag else None)
    assert len(text) <= MAX_CHARS and estimate_tokens(text) <= budget
    assert (text == "") == (shown == [])
    positions = [hits.index(b) for b in shown]
    assert positions == sorted(positions)  # order kept, a subsequence of the hits
    body = text.split("\n")[2:-1]
    assert len(body) == len(shown)
    for line, b in zip(body, shown, strict=True):
        assert line.startswith(f"- [{b['id']} ✓{b['helpful']} ✗{b['harmful']} conf ")


@settings(max_examples=examples(100), deadline=None)
@given(hits=bullets_strategy, budget=st.integers(0, 20_000))
def test_digest_never_over_budget_or_cap(hits, budget):
    text, shown = render_digest(hits, budget)
    assert len(text) <= MAX_CHARS and estimate_tokens(text) <= budget
    assert (text == "") == (shown == [])


def test_huge_budget_still_capped_at_9000_chars():
    hits = [bullet(i, f"lesson {i} " + "x" * 900) for i in range(30)]
    text, shown = render_patterns("ace-patterns", hits, 1_000_000)
    assert 8_000 < len(text) <= MAX_CHARS and 0 < len(shown) < 30


def test_digest_groups_by_section_in_playbook_order_most_valuable_first():
    hits = [
        bullet(1, "top pitfall", section="troubleshooting_and_pitfalls"),
        bullet(2, "top rule", section="strategies_and_hard_rules"),
        bullet(3, "an api", section="apis_to_use"),
        bullet(4, "second rule", section="strategies_and_hard_rules"),
        bullet(5, "a custom-section lesson", section="team_conventions"),
    ]
    text, shown = render_digest(hits, 1000)
    lines = text.split("\n")
    assert lines[0] == "<ace-playbook>" and lines[-1] == "</ace-playbook>"
    headings = [line[3:] for line in lines if line.startswith("## ")]
    order = [s for s in DEFAULT_SECTIONS if s in {b["section"] for b in hits}]
    assert headings == [title(s) for s in order] + ["Team conventions"]
    assert [b["id"] for b in shown] == [hits[1]["id"], hits[3]["id"], hits[0]["id"], hits[2]["id"], hits[4]["id"]]
    # With a small budget the most valuable come first, whatever their section.
    for budget in (70, 80, 100):
        text, shown = render_digest(hits, budget)
        assert hits[0] in shown and len(shown) < len(hits) and estimate_tokens(text) <= budget


def _digest_by_layout(bullets, budget):
    """The digest's rule stated plainly: take each bullet in order when the whole block, laid out
    with it (grouped under section titles), still fits. `render_digest` keeps the block's size as it
    grows instead; the two must agree."""
    from ace_engine.retrieval.render import DIGEST_HEADER, _Block, bullet_line
    block, chosen = _Block("ace-playbook", None, DIGEST_HEADER, budget), {}

    def lines(groups):
        order = [s for s in DEFAULT_SECTIONS if s in groups] + [s for s in groups if s not in DEFAULT_SECTIONS]
        return [x for s in order for x in [f"## {title(s)}", *map(bullet_line, groups[s])]]
    for b in bullets:
        trial = {s: list(v) for s, v in chosen.items()}
        trial.setdefault(b["section"], []).append(b)
        if block.fits(lines(trial)):
            chosen = trial
    if not chosen:
        return "", []
    return block.text(lines(chosen)), [b for s in chosen for b in chosen[s]]


@settings(max_examples=examples(60), deadline=None)
@given(st.lists(st.tuples(st.sampled_from([*DEFAULT_SECTIONS, "custom_notes"]), st.integers(1, 80), st.booleans()),
                max_size=40), st.integers(0, 2500))
def test_the_digest_takes_what_fits_as_a_whole_layout_would(specs, budget):
    bullets = [{"id": f"ctx-{i:04d}", "section": section, "content": ("é " if accent else "") + "word " * words,
                "helpful": 0, "harmful": 0, "confidence": 0.7} for i, (section, words, accent) in enumerate(specs)]
    text, shown = render_digest(bullets, budget)
    want_text, want_shown = _digest_by_layout(bullets, budget)
    assert text == want_text
    assert {b["id"] for b in shown} == {b["id"] for b in want_shown}
    assert estimate_tokens(text) <= max(budget, 0) and len(text) <= MAX_CHARS
