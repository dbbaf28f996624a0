"""Lexical candidates of a search: which FTS5 terms to use, and the bullets they match.

Contract: `terms(store, query)` picks the search terms (lean: common ones left out while rarer
ones remain, prefix fallbacks for terms matching nothing); `candidates(store, terms, …)` returns
the bullets matching them, best BM25 first — or, when even the kept terms match `BM25_MATCHES`
bullets or more, the bullets with every term, then a few of the newest with any, so the cost no
longer grows with the matches. `search.py` re-ranks them with everything else it knows.

Cost: a few capped COUNT queries (well under a millisecond at 10k bullets) and one FTS5 query:
~2 µs per match it scores, so at most ~2 ms (the cap) at any store size.
"""

from __future__ import annotations

from . import query as query_mod

TYPE_CHECKING = False  # not `typing.TYPE_CHECKING`: the hooks must not import `typing` (~3 ms)
if TYPE_CHECKING:
    from ..core._types import Bullet
    from ..store.interfaces import PlaybookStore

# A search term found in this many bullets or more is "common": see `terms`.
COMMON_TERM_DOCS = 250
# Kept terms matching this many bullets or more are not ranked by BM25 (see `candidates`):
# 1,000 matches cost about 2 ms; 3,750 cost 9 ms on the hooks bench's playbook.
BM25_MATCHES = 1000


def terms(store: PlaybookStore, q: query_mod.Query) -> list[str]:
    """The FTS5 terms for a query (to be OR-ed), lean enough to stay fast on a large playbook.

    BM25 is computed for every bullet that matches any term, so a term found in hundreds of
    bullets ("test", "error") makes the search slow and adds little to the ranking (its IDF is
    low; the re-ranker still counts it through `coverage`). Terms matching `COMMON_TERM_DOCS`
    bullets or more are left out as long as two rarer ones remain (else the three least common
    are kept); terms matching nothing are replaced by their prefix fallback when it matches.
    Counting is capped, so it costs well under a millisecond at 10k bullets.
    """
    pairs = query_mod.fts_terms(q)
    if not pairs:
        return []
    terms = [term for term, _ in pairs]
    counts = list(store.fts_doc_counts(terms, COMMON_TERM_DOCS))
    fallbacks = list(dict.fromkeys(fb for (_, fb), n in zip(pairs, counts, strict=True)
                                   if n == 0 and fb and fb not in terms))
    if fallbacks:
        terms += fallbacks
        counts += store.fts_doc_counts(fallbacks, COMMON_TERM_DOCS)
    found = sorted(((n, i) for i, n in enumerate(counts) if n > 0))
    rare = [i for n, i in found if n < COMMON_TERM_DOCS]
    keep = rare if len(rare) >= 2 else sorted(set(rare) | {i for _, i in found[:3]})
    return [terms[i] for i in sorted(keep)]


def candidates(store: PlaybookStore, terms: list[str], project_id: int | None,
                        include_global: bool, wanted: int) -> list[Bullet]:
    """The bullets matching `terms`, best BM25 first, unless even the kept terms match
    `BM25_MATCHES` bullets or more (a prompt of common words only, on a large playbook): BM25
    over all of them would cost milliseconds per thousand and tell little apart. Then the newest
    bullets with every term come first (up to `wanted`), then the newest with any, up to half of
    `wanted`: an arbitrary slice of thousands, each costing a cosine and a scoring, while the
    semantic pass brings the lessons nearest in meaning anyway. The re-ranker orders them all."""
    expression = " OR ".join(terms)
    if store.fts_doc_counts([expression], BM25_MATCHES)[0] < BM25_MATCHES:
        return store.fts_candidates(expression, project_id, include_global=include_global, limit=wanted)
    found = store.fts_candidates(" AND ".join(terms), project_id, include_global=include_global, limit=wanted,
                                 order="newest") if len(terms) > 1 else []
    room = wanted // 2 - len(found)
    if room > 0:
        seen = {b["id"] for b in found}
        found += [b for b in store.fts_candidates(expression, project_id, include_global=include_global,
                                                  limit=room + len(seen), order="newest") if b["id"] not in seen][:room]
    return found
