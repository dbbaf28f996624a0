"""Secrets by class: the gitleaks and detect-secrets formats of `rule_table`, applied to text.

Contract: `class_tokens(text)` returns `text` with every value that one of those rules recognises
replaced by `[REDACTED:<rule id>]`, or the very same object when none is found. It runs after the
older rules of `redact` (whose markers it never matches), so known kinds keep their names.

How, in time linear in the text: ONE regex scan finds the runs of token characters at least 11
long (every format in the table is at least that long). A run is looked at only
- at its head: the rules whose keyword starts the run (a dict by first character, then
  `startswith`) -- prefixed tokens such as `AGE-SECRET-KEY-1…`, `sq0atp-…`, `dop_v1_…` (a
  one-letter head, Discord's `[MNO]…` bot token, only on runs of 40+ characters);
- and, only when the run holds a digit (random values do; paths and identifiers mostly not):
  - for the few formats found by a keyword rather than a prefix (`….atlasv1.…`, `…-us12`,
    a `https://….webhook.office.com/…` URL), by `in` over the run and 100 characters around it;
  - when the run is assigned (`NAME = run`, `"name": "run"`, `name => run`): the rules whose
    keyword occurs in the 80 characters of name before the operator (`DATADOG_API_KEY=…`).
A candidate rule's regex then runs in a window of bounded size around that run, never again over
a stretch it already searched (bar a 400-character overlap), so the whole scan stays linear.
Values must also reach the rule's entropy (gitleaks' own thresholds).

Cost: imports `re` (and `spans`, the marker and span applying shared by the rule modules); the
data table is imported, and indexed, the first time a text holds a run (~0.3 ms), and a rule's
regex is compiled the first time it is a candidate. Text without an 11-character run (most prompts
and prose) costs one regex scan.
"""

import re

from .spans import MARK, apply_spans, rx

TYPE_CHECKING = False  # not `typing.TYPE_CHECKING`: hooks import this module and must not load `typing`
if TYPE_CHECKING:
    # (id, heads, pattern, ignore case, value group, min entropy) and (id, keywords, name, value,
    # min entropy): the row shapes of `rule_table`' tables.
    TokenRule = tuple[str, tuple[str, ...], str, bool, int, float]
    ContextRule = tuple[str, tuple[str, ...], str, str, float]
    Spans = list[tuple[int, int, str]]

_ASSIGN_CTX = (r"[ \t\w.-]{0,20}[\s'\"]{0,3}(?:=|>|:{1,3}=|\|\||:|=>|\?=|,)[`'\"\s=]{0,5}(?P<v>%s)"
               r"(?=[`'\"\s;,)\]}<]|\\[nr]|$)")
_WINDOW_AFTER = 320  # the longest token of the table (a Slack config token) is ~180 characters

# [heads, infix, context, allowlists] built on first use: head char -> [(head, rule)], [(keyword, rule)]
# twice, rule id -> the pattern of values that are not its secret.
_index: list = []


_RUN_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_~+/.-")


def _build() -> None:
    # The table (~0.2 ms to import) is loaded the first time a text holds a long run.
    from .rule_table import (
        CONTEXT_RULES,
        DETECT_SECRETS_CONTEXT,
        DETECT_SECRETS_RULES,
        TOKEN_ALLOWLISTS,
        TOKEN_HEADS,
        TOKEN_RULES,
    )

    heads: dict[str, list[tuple[str, TokenRule]]] = {}
    infix: list[tuple[str, TokenRule]] = []
    for rule in TOKEN_RULES + DETECT_SECRETS_RULES:
        prefixes = TOKEN_HEADS.get(rule[0])
        # A head a run cannot start with (`https://…`, `"secret_key"`) is found by its keywords.
        if prefixes and all(set(h) <= _RUN_CHARS and h[0] not in "+/.-~" for h in prefixes):
            for head in prefixes:
                heads.setdefault(head[0], []).append((head, rule))
        else:
            infix.extend((kw, rule) for kw in rule[1])
    context = [(kw, rule) for rule in CONTEXT_RULES + DETECT_SECRETS_CONTEXT for kw in rule[1]]
    _index[:] = [heads, infix, context, TOKEN_ALLOWLISTS]


def entropy(s: str) -> float:
    """Shannon entropy of `s`, bits per character."""
    import math  # here: a hook that never gets here does not pay for it

    n = len(s)
    if not n:
        return 0.0
    counts: dict[str, int] = {}
    for c in s:
        counts[c] = counts.get(c, 0) + 1
    return -sum(k / n * math.log2(k / n) for k in counts.values())


_OVERLAP = 400  # longer than any token of the table: a match across two windows is still seen


def _window(rid: str, ws: int, we: int, searched: "dict[str, int]") -> int:
    """Where rule `rid` still has to look in [ws, we): not again over what it already searched
    (less an overlap), so many runs triggering one rule cost it one pass over the text."""
    done = searched.get(rid, -1)
    if done >= we:
        return -1
    searched[rid] = we
    return max(ws, done - _OVERLAP) if done >= 0 else ws


def _token_hits(rule: "TokenRule", text: str, ws: int, we: int, spans: "Spans") -> None:
    rid, _, pattern, icase, group, min_ent = rule
    found = rx(pattern, re.IGNORECASE if icase else 0)
    allow = _index[3].get(rid)
    for m in found.finditer(text, ws, we):
        g = group if group <= (found.groups or 0) else 0
        s, e = m.span(g)
        if s < 0 or e - s < 8:
            s, e = m.span()  # no group, or a piece of the token (a repeated group): take it all
        if entropy(text[s:e]) >= min_ent and not (allow and rx(allow).search(text, s, e)):
            spans.append((s, e, rid))


def _context_hits(rule: "ContextRule", text: str, ws: int, we: int, spans: "Spans") -> None:
    rid, _, name, value, min_ent = rule
    for m in rx("(?:" + name + ")" + _ASSIGN_CTX % value, re.IGNORECASE).finditer(text, ws, we):
        s, e = m.span("v")
        if entropy(text[s:e]) >= min_ent:
            spans.append((s, e, rid))


def _operator_before(text: str, s: int) -> int:
    """Position of the assignment operator right before a value starting at `s`, or -1."""
    i = s - 1
    lo = max(0, s - 6)
    while i >= lo and text[i] in " \t'\"`":
        i -= 1
    return i if i >= 0 and text[i] in "=:>,|" else -1


def class_tokens(text: str) -> str:
    """Redact the values the gitleaks / detect-secrets formats recognise (see the module doc)."""
    runs = rx(r"[A-Za-z0-9_][A-Za-z0-9_~+/.-]{10,}={0,3}").finditer(text)
    spans: Spans = []
    searched: dict[str, int] = {}  # rule id -> end of the text it has searched
    n = len(text)
    for m in runs:
        s, e = m.span()
        if text.startswith(MARK, s - 10):
            continue  # a marker's kind, not a value
        if not _index:
            _build()
        heads, infix, context, _ = _index
        low = text[s:min(e, s + 64)].lower()
        we = min(n, e + _WINDOW_AFTER)
        done: set[str] = set()
        for kw, rule in heads.get(low[0], ()):
            if rule[0] not in done and low.startswith(kw) and (len(kw) > 1 or e - s >= 40):
                done.add(rule[0])
                ws = _window(rule[0], max(0, s - 8), we, searched)
                if ws >= 0:
                    _token_hits(rule, text, ws, we, spans)
        # A random value of 11+ characters holds a digit (a miss has odds of ~1e-3): paths,
        # identifiers and words without one (`tests/test_api.py`, `self.compiled_patterns`) are
        # not worth the keyword lookups below.
        if rx(r"[0-9]").search(text, s, e) is None:
            continue
        near = text[max(0, s - 100):min(n, e + 100)].lower()
        for kw, rule in infix:
            if rule[0] not in done and kw in near:
                done.add(rule[0])
                ws = _window(rule[0], max(0, s - 100), we, searched)
                if ws >= 0:
                    _token_hits(rule, text, ws, we, spans)
        op = _operator_before(text, s)
        if op >= 0:
            area = text[max(0, op - 80):op + 1].lower()
            for kw, rule in context:
                if rule[0] not in done and kw in area:
                    done.add(rule[0])
                    ws = _window("ctx:" + rule[0], max(0, op - 80), min(n, e + 3), searched)
                    if ws >= 0:
                        _context_hits(rule, text, ws, min(n, e + 3), spans)
    return apply_spans(text, spans)
