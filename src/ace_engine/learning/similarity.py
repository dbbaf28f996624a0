"""Lexical similarity of lessons: normalized token sets, Jaccard and containment, the "anchor"
guard, and the FTS query that finds a lesson's possible duplicates without comparing it to the
whole playbook (`neighbour_query`).

    similarity(a, b) = max(jaccard(A, B), 0.9 · containment(A, B))   when both have ≥ 4 tokens
                       jaccard(A, B)                                 otherwise
    containment(A, B) = |A ∩ B| / min(|A|, |B|)
    duplicate_score(a, b) = 0 when both name things in code spans and the first two spans'
                            words differ (another command, error or file), else similarity(a, b)

Containment catches the commonest near-duplicate — the same lesson with a few words added
("… from the repository root") — that Jaccard alone scores too low; the 0.9 factor keeps a short
lesson wholly inside a long, different one from counting as a full match. The anchor guard
catches what no bag of words can: lessons written from one template that differ in the one word
that matters (`src/app.py` vs `src/db.py`: Jaccard 0.87).

Threshold (`learning.merge_similarity`, default 0.8), chosen on the labelled pairs in
`tests/test_learning_curator.py` (12 duplicates, 13 related-but-different lessons):
    0.75 → 12/12 duplicates merged, 1/13 different lessons merged (ruff format vs black)
    0.80 → 12/12 merged, 0/13                          ← default
    0.85 → 10/12 merged, 0/13 (reworded duplicates missed)
Without the anchor guard, 0.8 would merge 5 of the 13 different lessons.
"""

import re

_TOKEN = re.compile(r"[a-z0-9][a-z0-9_]*")
STOPWORDS = frozenset(
    "a an and are as at be been but by can do does did for from has have if in into is it its of on or so "
    "than that the then there these this those to was were when where which while will with you your "
    "i we they he she them our us my me not no yes just also only very more most some any all each "
    "should would could must may might use used using run runs ran".split()
)
_SUFFIXES = ("ing", "ed", "es", "s")


def _stem(word: str) -> str:
    if len(word) > 4 and not word.isdigit():
        for suffix in _SUFFIXES:
            if word.endswith(suffix) and len(word) - len(suffix) >= 3:
                return word[: -len(suffix)]
    return word


def tokens(text: str) -> frozenset[str]:
    """Normalized content words: lower case, stop words dropped, light suffix stemming."""
    return frozenset(_stem(w) for w in _TOKEN.findall(str(text).lower()) if w not in STOPWORDS and len(w) > 1)


def jaccard(a: frozenset, b: frozenset) -> float:
    if not a or not b:
        return 0.0
    return len(a & b) / len(a | b)


def containment(a: frozenset, b: frozenset) -> float:
    if not a or not b:
        return 0.0
    return len(a & b) / min(len(a), len(b))


def similarity(a: str | frozenset[str], b: str | frozenset[str]) -> float:
    """0..1; `a`, `b` are texts or token sets."""
    ta = a if isinstance(a, frozenset) else tokens(a)
    tb = b if isinstance(b, frozenset) else tokens(b)
    score = jaccard(ta, tb)
    if min(len(ta), len(tb)) >= 4:
        score = max(score, 0.9 * containment(ta, tb))
    return round(score, 4)


_SPAN = re.compile(r"`([^`\n]+)`")


def anchors(text: str) -> frozenset[str]:
    """The words of a lesson's first two code spans — what it is about: the command and its
    error, the two files, the file and its error. Numbers don't count."""
    words: set[str] = set()
    for span in _SPAN.findall(str(text))[:2]:
        words |= {w for w in tokens(span) if not w.isdigit()}
    return frozenset(words)


def duplicate_score(a: str, b: str) -> float:
    """`similarity`, except that two lessons about different things (their anchors differ: another
    command, error or file) are never duplicates however alike the rest of the wording is."""
    aa, ab = anchors(a), anchors(b)
    if aa and ab and aa != ab:
        return 0.0
    return similarity(a, b)


_FTS_WORD = re.compile(r"[a-z0-9]+")


def neighbour_query(text: str) -> str | None:
    """The FTS5 expression that finds a lesson's possible duplicates among thousands of bullets.

    A lesson with code spans can only duplicate a bullet that names the same things, so every
    word of its anchors is required (AND): a handful of matches, ~0.5 ms at 10,000 bullets.
    Without spans (free prose, e.g. from an LLM), its longest words are OR-ed and ranked by
    BM25 — ~10 ms at 10,000 bullets, still independent of comparing against every bullet.
    """
    words: list[str] = []
    for span in _SPAN.findall(str(text))[:2]:
        for word in _FTS_WORD.findall(span.lower()):
            if len(word) > 1 and word not in words:
                words.append(word)
    if words:
        return " AND ".join(f'"{w}"' for w in words[:12])
    return fts_query(text)


def fts_query(text: str, limit: int = 10) -> str | None:
    """An FTS5 expression OR-ing the lesson's most distinctive words (longest first). None when
    the text has no usable word."""
    words = sorted({w for w in _TOKEN.findall(str(text).lower()) if w not in STOPWORDS and len(w) > 2 and "_" not in w},
                   key=lambda w: (-len(w), w))[:limit]
    if not words:
        return None
    return " OR ".join(f'"{w}"' for w in words)


def overlap(bullet_text: str, context_tokens: frozenset) -> float:
    """Share of a bullet's words found in a task's context: "plausibly relevant" when high."""
    tb = tokens(bullet_text)
    if not tb:
        return 0.0
    return len(tb & context_tokens) / len(tb)
