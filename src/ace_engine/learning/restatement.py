"""A lesson said again in other words: the curator's second duplicate test, by meaning.

Contract. `restated(store, project_id, content, statuses, limit)` → (cosine, bullet): the lesson
of the project, of those statuses and in any section, among the `limit` found by its distinctive
words (`similarity.fts_query`: an indexed lookup), that `restates` says is the same, or None.
`restates(new, others)` → (cosine, index) of the closest of `others` that states the same
rule as `new`, or None. Two lessons do when the cosine of their vectors in the shipped static
table (`embed/static_embed.py`, the one semantic search uses by default; never the optional model,
so the rule means the same on every install) is at least `MERGE_COSINE` and both or neither
forbid something (`forbids`: "don't", "never", "avoid" …) — "verify with `mise run test`; don't
run `mise run test:ci`" and "verify with `mise run test:ci`" lie at 0.94 and say the opposite —
and they are not worded alike but for what they name (their words outside code spans and paths,
`similarity.prose_words`, share at least `WORDED_ALIKE` Jaccard while their spans or paths,
`similarity.names`, differ): "When `go test ./...` fails with `undefined: NewServer` …" and the
same with `go build` lie at 0.97, and so do two lessons on two files written from one template.
Telling those apart is the lexical test's anchor guard; this test is for lessons worded apart.

Why a second test. The lexical one (`similarity.duplicate_score`, `learning.merge_similarity`)
compares shapes and refuses two lessons whose first code spans differ. A model words the same
lesson anew every session: "Bead branches are created without an upstream: push with `git push -u
origin HEAD`" it catches, but "Integration tests need the build tag: `go test -tags=integration
…`" against "… the `integration` build tag: run `mise run test:integration`" it scores 0. Of 119
pairs a reader called the same lesson, it merged 7; each of the other 112 left two entries where
the user has one lesson, the second sighting that would promote a candidate never counted, and
both were injected.

Thresholds, chosen on 269 labelled pairs (`bench/data/restatement_pairs.jsonl`: the most similar
pairs of lessons of two sessions of the same repository, from the tuning split's stores with
recorded model answers, both answer sets; a reader labelled each same / overlap / different from
the two texts alone, before any threshold was tried; tests/test_learning_restatement.py recomputes
it). Pairs merged at each cosine, with both guards (without the prohibition guard, from 0.94
down, the "don't run X" lessons merge with "run X"; the template guard costs one pair):

    0.95 → 15 same, 0 overlap, 0 different
    0.94 → 21 same, 0 overlap, 0 different      ← MERGE_COSINE
    0.93 → 27 same, 3 overlap, 0 different
    0.90 → 53 same, 15 overlap, 0 different

`WORDED_ALIKE` is the lexical test's own 0.8 (`learning.merge_similarity`'s default): with it, every
"different" and "lookalike" pair of the lexical study (tests/test_learning_curator.py) stays apart;
without it, 5 of them lie at or above 0.94.
"Overlap" (each says something the other does not) is kept apart: one wording survives a merge.

Cost: one table lookup per word of each text (the table opens once per process, positioned reads);
~1.3 ms a lesson (measured), so ≤ 20 neighbours cost the learning worker ~30 ms a candidate. No I/O beyond the
table, no LLM.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TYPE_CHECKING

from ..embed import static_embed
from . import similarity as sim

if TYPE_CHECKING:
    from ..store.interfaces import BulletRow, Store

MERGE_COSINE = 0.94
WORDED_ALIKE = 0.8
_FORBIDS = re.compile(r"\b(?:don'?t|do not|never|avoid|must not|mustn'?t|shouldn'?t|should not|instead of)\b",
                      re.IGNORECASE)


def forbids(text: str) -> bool:
    """Does the lesson forbid or steer away from something?"""
    return bool(_FORBIDS.search(text))


def _cosine(a: Sequence[float], b: Sequence[float]) -> float:
    return sum(x * y for x, y in zip(a, b, strict=True))


def _named_apart(words: frozenset[str], named: frozenset[str], other: str) -> bool:
    """Worded alike (outside code spans and paths) but naming other things: a template's two uses.
    `words` and `named` are the new lesson's `prose_words` and `names`."""
    return sim.jaccard(words, sim.prose_words(other)) >= WORDED_ALIKE and named != sim.names(other)


def restates(new: str, others: Sequence[str], threshold: float = MERGE_COSINE) -> tuple[float, int] | None:
    """The closest of `others` that says what `new` says (cosine ≥ threshold, the same polarity, not
    worded alike), as (cosine rounded to 3 places, its index); None when none does or the table is
    missing."""
    table = static_embed.load()
    if table is None:
        return None
    vector = table.embed(new)
    if vector is None:
        return None
    polarity, words, named = forbids(new), sim.prose_words(new), sim.names(new)
    best: tuple[float, int] | None = None
    for i, other in enumerate(others):
        if forbids(other) != polarity or _named_apart(words, named, other):
            continue
        theirs = table.embed(other)
        if theirs is None:
            continue
        cos = _cosine(vector, theirs)
        if cos >= threshold and (best is None or cos > best[0]):
            best = (cos, i)
    return None if best is None else (round(best[0], 3), best[1])


def restated(store: Store, project_id: int | None, content: str, statuses: Sequence[str],
             limit: int) -> tuple[float, BulletRow] | None:
    """The project's lesson that says what `content` says in other words, with the cosine."""
    match = sim.fts_query(content)
    if match is None:
        return None
    near = store.fts_candidates(match, project_id, include_global=False, limit=limit, statuses=statuses)
    found = restates(content, [bullet["content"] for bullet in near])
    return None if found is None else (found[0], near[found[1]])
