"""Searching the playbook: FTS5 candidates, re-ranked in Python by a documented hybrid score.

    relevance R = (w_bm25·bm25 + w_coverage·coverage + w_fuzzy·fuzzy + w_domain·domain) / Σw
        bm25      FTS5 BM25 s of the bullet as s / (best s + BM25_DAMPING): relative to the best
                  candidate, but low for all when even the best match is weak
        coverage  share of the query's concepts the bullet contains, each concept weighted by
                  how rare it is among the candidates (an IDF over the candidate set); this is
                  the absolute part that lets the threshold cut weak matches
        fuzzy     best trigram similarity between an identifier / file path of the query (or of
                  `files`) and one of the bullet's; left out of Σw when the query has none
        domain    share of a bullet domain's words found among the query's and files' words
    fused (default): with the cosine c of the query's and the bullet's embeddings (vectors.py),
              S = w_semantic · clip((c - COSINE_FLOOR) / COSINE_SPAN), and
              R = (max(R, S) + BOTH · min(R, S)) / (1 + BOTH): either signal alone can carry a
              bullet, both together rank it higher; S is absolute, so it means the same in a
              5-lesson and a 10,000-lesson store
    prior P = (w_confidence·confidence + w_helpful·helpful + w_recency·recency) / Σw_prior
        helpful   net helpful marks h - x (explicit ones ×3), as h'/(h'+5): 0 new, 0.5 at +5
        recency   0.5 ** (days since last use or update / half life)
    score = R · (1 - p + p·P),  p = Σw_prior / (Σw_relevance + Σw_prior)

That is a weighted sum of all the parts in which the prior parts are scaled by relevance: a
trusted, recent bullet ranks above an equally relevant new one, but cannot ride into a prompt on
an unrelated word. Weights and the cut are config keys (`retrieval.*`): a hit must score `threshold`
and `relative_cut` × the best hit's score, except that the best hit alone may instead pass a little
under the threshold (SEMANTIC_ALLOWANCE) on its cosine (≥ `semantic_threshold`): the fused score
puts a paraphrase sharing no word with its lesson at share × its rescaled cosine, under a threshold
that must also stop weak lexical matches, so the cut is calibrated per kind of evidence. The
weights were tuned on `bench/retrieval_bench.py`'s tune and para splits; the cut (0.26 / 0.35 /
0.825, allowance 0.04) and the cosine's rescaling and fusion (FLOOR 0.125, SPAN 0.5, BOTH 0.35) were
chosen on its real-sessions replay set and the tuned set (the objective: recall + MRR / 2 + empty
negatives × 0.3 - irrelevant lessons shown × 0.1, summed over both replay splits and the tune and
para splits, with at most 0.59 irrelevant lessons per replay prompt, for a store with the table's
lesson vectors and one with write-time ones; a random local search from the previous values,
bench/results/retrieval-heldout.json has the figures). Held-out R@5 ≥ 0.85 with MRR ≥ 0.75 is out
of reach of any cut (bench/retrieval_ceiling.py): the raw ranking's held-out MRR is 0.76, and the
best cut fitted to the held-out set itself gives 0.850 / 0.749 at 2.4 wrong lessons per prompt. Real
prompts with no lesson look like those with one (the best cosine separates them with AUC 0.66 on
the replay set, 0.998 on held-out), so the cut those need is the stricter one kept here.

Situations (situations.py): with `retrieval.situations`, a candidate's situations count as its words
for `coverage`, and its cosine is that of its vector folded with theirs (embed/vectors.py).

One piece, past 400 lines, because the score above is one formula: its parts and their fusion are read
together whenever a weight is tuned, and the candidates they rank come from the query built here.

Stdlib only: the default semantic path (vectors.py, the shipped static table) too; the optional
full model (semantic.py: NumPy and its weights) loads only with `retrieval.embedder = "minilm"`.
"""

from __future__ import annotations

import math
import re
import time

from ..core import log
from ..core.config import DEFAULTS
from ..core.config import value_of as _setting
from ..playbook.domains import GENERIC, path_words, words_match
from . import general, lexical
from . import query as query_mod

TYPE_CHECKING = False  # not `typing.TYPE_CHECKING`: hooks import this module and must not load `typing`
if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping, Sequence
    from typing import Any

    from ..core._types import Bullet, ScoredBullet
    from ..core.config import Config
    from ..store.interfaces import PlaybookStore

    Settings = Config | Mapping[str, Any]
    # A candidate's raw score parts, turned into `score_parts` and `why` for the hits returned:
    # bm25, coverage, concepts matched, concepts, fuzzy, domain, domain name, cosine, prior parts.
    Parts = tuple[float, float, int, int, float, float, str, float | None, dict[str, float]]
    Hit = tuple[float, Bullet, Parts]  # (score, bullet, parts)

PRIOR_PARTS = ("confidence", "helpful", "recency")
LEXICAL_PARTS = ("bm25", "coverage", "fuzzy", "domain")
LOW_CONFIDENCE = 0.5
LOW_HELPFUL = 2
# Cosine of the built-in static embeddings: ~0.1-0.3 for unrelated texts, 0.35-0.7 for the same
# topic; rescaled as (cosine - FLOOR) / SPAN, clipped to 0..1. FLOOR, SPAN, BOTH and the cut were
# chosen together on the bench's tune and para splits and its real-sessions replay set,
# for stores with and without write-time lesson vectors (embed/write_time.py); see the module docstring.
COSINE_FLOOR = 0.125
COSINE_SPAN = 0.5
# The most a best hit's cosine can excuse under the threshold (see `_cut`). With the floor and span
# above, a paraphrase at cosine 0.35-0.40 already scores 0.21-0.26; more allowance let more wrong
# lessons through on the replay set than right ones.
SEMANTIC_ALLOWANCE = 0.04
# In `fuse`, the weaker signal's weight next to the stronger one's (tuned with the others).
BOTH = 0.35
# See the bm25 part above; strong matches have s = 10–40 (tuned on the bench).
BM25_DAMPING = 16.0
# A query concept no candidate contains weighs this much of the rarest concept's weight.
UNKNOWN_CONCEPT_WEIGHT = 0.8

_abbreviation_cache: dict[str, dict[str, tuple[str, ...]]] = {}


def _weights(cfg: Settings | None) -> dict[str, float]:
    weights = {}
    for part in LEXICAL_PARTS + PRIOR_PARTS + ("semantic",):
        try:
            weights[part] = max(0.0, float(_setting(cfg, f"retrieval.weights.{part}")))
        except (TypeError, ValueError):
            weights[part] = float(DEFAULTS[f"retrieval.weights.{part}"])
    return weights


def _abbreviations(cfg: Settings | None) -> dict[str, tuple[str, ...]]:
    extra = _setting(cfg, "retrieval.abbreviations")
    key = repr(extra)
    table = _abbreviation_cache.get(key)
    if table is None:
        table = query_mod.normalize_abbreviations(extra)
        _abbreviation_cache.clear()
        _abbreviation_cache[key] = table
    return table


def _trigrams(text: str) -> set[str]:
    padded = f"  {text} "
    return {padded[i : i + 3] for i in range(len(padded) - 2)}


def _similarity(a: str, b: str) -> float:
    """Dice coefficient of character trigrams: cheap, order-tolerant, typo-tolerant."""
    ta, tb = _trigrams(a), _trigrams(b)
    return 2 * len(ta & tb) / (len(ta) + len(tb)) if ta and tb else 0.0


def _needles(ident: str) -> list[str]:
    """What to look for verbatim in a bullet for one query identifier: itself, its file name, and
    its significant dotted / path components (`AsyncClient.__init__` → asyncclient)."""
    needles = [ident]
    for part in re.split(r"[./\\:]+", ident):
        part = part.strip("_-")
        if len(part) >= 4 and part not in GENERIC and part not in needles:
            needles.append(part)
    return needles


def _fuzzy_matrix(identifiers: list[str], candidates: list[Bullet]) -> list[list[float]]:
    """sim[i][c]: how well query identifier i matches candidate c (1.0 verbatim, else the best
    trigram similarity with one of the bullet's identifiers, 0 below 0.5)."""
    needles = [_needles(i) for i in identifiers]
    matrix = [[0.0] * len(candidates) for _ in identifiers]
    for c, bullet in enumerate(candidates):
        lowered = bullet["content"].lower()
        idents = None
        for i, ident in enumerate(identifiers):
            if any(n in lowered for n in needles[i]):
                matrix[i][c] = 1.0
                continue
            if idents is None:
                idents = query_mod.text_identifiers(bullet["content"])
            best = max((_similarity(ident, other) for other in idents), default=0.0)
            matrix[i][c] = best if best >= 0.5 else 0.0
    return matrix


def _domain_score(domains: list[str], context: list[str], cache: dict[str, float]) -> tuple[float, str]:
    best, name = 0.0, ""
    for domain in domains:
        if domain == "general":  # the catch-all of `domains.derive`, says nothing
            continue
        if domain not in cache:
            words = [w for w in domain.split("-") if w]
            hits = sum(1 for dw in words if any(words_match(dw, cw) for cw in context))
            cache[domain] = hits / len(words) if words else 0.0
        if cache[domain] > best:
            best, name = cache[domain], domain
    return best, name


def _helpful(bullet: Bullet) -> float:
    net = (bullet.get("helpful") or 0) + 3 * (bullet.get("helpful_explicit") or 0) \
        - (bullet.get("harmful") or 0) - 3 * (bullet.get("harmful_explicit") or 0)
    return net / (net + 5.0) if net > 0 else 0.0


def _recency(bullet: Bullet, now: float, half_life_days: float) -> float:
    last = max(bullet.get("updated_at") or 0.0, bullet.get("last_used_at") or 0.0)
    age_days = max(0.0, (now - last) / 86400.0)
    return 0.5 ** (age_days / max(half_life_days, 0.01))


def _prior(bullet: Bullet, weights: dict[str, float], now: float, half_life: float) -> tuple[float, dict[str, float]]:
    parts = {
        "confidence": float(bullet.get("confidence") or 0.0),
        "helpful": _helpful(bullet),
        "recency": _recency(bullet, now, half_life),
    }
    total = sum(weights[p] for p in PRIOR_PARTS)
    value = sum(weights[p] * parts[p] for p in PRIOR_PARTS) / total if total else 0.0
    return value, parts


def _is_low_quality(bullet: Bullet) -> bool:
    return (float(bullet.get("confidence") or 0.0) < LOW_CONFIDENCE
            and (bullet.get("helpful") or 0) + (bullet.get("helpful_explicit") or 0) < LOW_HELPFUL)


def _domain_filter(bullets: list[Bullet], allowed: Iterable[str] | None,
                   blocked: Iterable[str] | None) -> list[Bullet]:
    if allowed:
        allowed_set = set(allowed)
        bullets = [b for b in bullets if allowed_set.intersection(b.get("domains") or ())]
    if blocked:
        blocked_set = set(blocked)
        bullets = [b for b in bullets if not blocked_set.intersection(b.get("domains") or ())]
    return bullets


def _semantic_wanted(mode: str, cfg: Settings | None) -> bool:
    if mode in ("semantic", "hybrid"):
        return True
    return mode == "auto" and bool(_setting(cfg, "retrieval.semantic"))


def search(store: PlaybookStore, project_id: int | None, query: object, *, k: int = 5,
           files: Iterable[object] | None = (), domains_allowed: Iterable[str] | None = None,
           domains_blocked: Iterable[str] | None = None, threshold: float | None = None,
           exclude_ids: Iterable[str] | None = (), mode: str = "auto", cfg: Settings | None = None,
           include_global: bool = True, now: float | None = None) -> list[ScoredBullet]:
    """The bullets most relevant to `query` (a prompt), best first, each with `score` and `why`.

    `files`: paths in play (fuzzy and domain matching); `domains_allowed` / `domains_blocked`:
    domain names a bullet must have one of / must have none of; `threshold`: minimum score
    (default `retrieval.threshold`); `exclude_ids`: bullets already shown; `mode`: "lexical",
    "semantic", "hybrid", or "auto" (hybrid when `retrieval.semantic` is on, else lexical).
    An empty list is a normal answer. Never raises on odd input.
    """
    k = max(0, int(k or 0))
    if k == 0:
        return []
    now = time.time() if now is None else now
    threshold = float(_setting(cfg, "retrieval.threshold") if threshold is None else threshold)
    semantic_threshold = float(_setting(cfg, "retrieval.semantic_threshold")) if threshold > 0 else 2.0
    weights = _weights(cfg)
    paths = tuple(f for f in (files or ()) if isinstance(f, str) and f)
    text = query if isinstance(query, str) else ""
    file_words = [w for f in paths for w in path_words(f)]
    if file_words:
        text = f"{text}\n{' '.join(file_words)}"
    q = query_mod.parse(text, files=paths, abbreviations=_abbreviations(cfg),
                        max_terms=_setting(cfg, "retrieval.max_terms"))
    excluded = set(exclude_ids or ())
    base = _setting(cfg, "retrieval.candidates")
    wanted = min(base + len(excluded), 3 * base)  # room for the bullets already shown
    if domains_allowed or domains_blocked:
        wanted *= 2

    candidates: list[Bullet] = []
    terms: list[str] = []
    try:
        terms = lexical.terms(store, q)
        if terms:
            candidates = lexical.candidates(store, terms, project_id, include_global, wanted)
    except Exception as exc:  # noqa: BLE001 — a search must never break its caller
        log.error("retrieval", f"full-text search failed for {' OR '.join(terms)[:200]!r}: {type(exc).__name__}: {exc}")
        candidates = []

    cosines = None
    if _semantic_wanted(mode, cfg):
        from ..embed import vectors

        cosines = vectors.cosines(store, project_id, query if isinstance(query, str) else "", cfg=cfg,
                                  include_global=include_global, top=wanted,
                                  also=[b.get("rowid") or b["id"] for b in candidates])  # rowids: one query
    semantic_share = 0.0
    if cosines:
        semantic_share = 1.0 if mode == "semantic" else min(1.0, weights["semantic"])
        known = {b["id"] for b in candidates}
        # A lesson found by meaning alone is fetched and scored only if its cosine could carry it
        # over the threshold, and only the 2k nearest of those: matching no query term, such
        # lessons rank among themselves by cosine (the prior aside), so no more than k can make
        # the answer; scoring 40 of them cost a hook ~10 ms on a playbook of near-duplicates.
        least = min(_least_cosine(threshold, weights, semantic_share), semantic_threshold)
        extra = [bid for bid, cos in sorted(cosines.items(), key=lambda kv: -kv[1])
                 if bid not in known and cos >= least][:2 * k]
        candidates += store.get_bullets(extra)

    candidates = [b for b in candidates if b["id"] not in excluded and b.get("status", "active") == "active"]
    candidates = _domain_filter(candidates, domains_allowed, domains_blocked)
    if not candidates:
        return []
    known_by: dict[str, str] = {}
    if _setting(cfg, "retrieval.situations") and mode != "semantic":
        # A lesson's situations (situations.py) count as its words too: the prompts it was learned
        # and confirmed in say what a user types when it is needed, in the user's words.
        for bid, text in store.situation_texts([b["id"] for b in candidates]):
            known_by[bid] = f"{known_by.get(bid, '')}\n{text}"
    hits = _score(candidates, q, paths, weights, cosines, semantic_share, now,
                  _setting(cfg, "retrieval.recency_half_life_days"), semantic_only=mode == "semantic",
                  known_by=known_by)
    hits = _cut(hits, threshold, semantic_threshold, float(_setting(cfg, "retrieval.relative_cut") or 0.0))
    hits.sort(key=lambda h: (-h[0], h[1]["id"]))
    good = [h for h in hits if not _is_low_quality(h[1])]
    if len(good) >= k:
        hits = good
    return [_explain(*h) for h in general.prefer_general(hits)[:k]]


def _cut(hits: list[Hit], threshold: float, semantic_threshold: float, relative: float) -> list[Hit]:
    """The hits worth injecting: each must score `threshold`, except the best one, which may pass on
    its cosine (≥ `semantic_threshold`: a paraphrase sharing no word with the lesson scores low in the
    fused score, yet its cosine says it is the one) when it scores at least `threshold` -
    SEMANTIC_ALLOWANCE (so a stricter threshold is always stricter); and each must score `relative` ×
    the best hit's score. Threshold ≤ 0 asks for the ranking itself: no cut at all."""
    if threshold <= 0 or not hits:
        return hits
    best = min(hits, key=lambda h: (-h[0], h[1]["id"]))  # the first of the ranking
    kept = [h for h in hits if h[0] >= threshold]
    if best[0] < threshold and best[0] >= threshold - SEMANTIC_ALLOWANCE and (best[2][7] or 0.0) >= semantic_threshold:
        kept = [best]  # the semantic key alone: nothing scoring under it can be worth more
    if kept and relative > 0:
        # Far below the best hit is noise whatever the store's size: this part of the cut is relative.
        floor = relative * max(h[0] for h in kept)
        kept = [h for h in kept if h[0] >= floor]
    return kept


def _idf_weights(hits: Sequence[Sequence[float]], n: int, unknown: float) -> list[float]:
    """One weight per row (a query concept or identifier): log(1 + n/df) over the candidates,
    where df counts the candidates that have it; `unknown` × the rarest weight when none has."""
    weights = []
    for row in hits:
        df = sum(1 for hit in row if hit)
        weights.append(math.log(1.0 + n / df) if df else unknown * math.log(1.0 + n))
    return weights


def _least_cosine(threshold: float, weights: dict[str, float], share: float) -> float:
    """The cosine below which a lesson matching no query term cannot reach `threshold`: such a
    lesson's lexical part is at most its fuzzy and domain parts, and the prior only lowers a score.
    Found by bisection on `fuse` itself, so the two can't disagree."""
    if threshold <= 0 or share <= 0:
        return -1.0
    total = weights["bm25"] + weights["coverage"] + weights["domain"] + weights["fuzzy"]
    lexical_at_most = (weights["fuzzy"] + weights["domain"]) / total if total else 0.0
    low, high = COSINE_FLOOR, COSINE_FLOOR + COSINE_SPAN
    if fuse(lexical_at_most, high, share) < threshold:
        return 2.0  # not even a perfect cosine would do
    for _ in range(20):
        middle = (low + high) / 2
        low, high = (low, middle) if fuse(lexical_at_most, middle, share) >= threshold else (middle, high)
    return low


def fuse(lexical: float, cosine: float, share: float, *, floor: float | None = None, span: float | None = None,
         both: float | None = None) -> float:
    """Relevance from the lexical part (0..1) and the cosine: the stronger of the two signals plus
    BOTH × the weaker, over 1 + BOTH. Either signal alone can carry a lesson (a verbatim match whose
    embedding is diluted by a long text, a paraphrase sharing no word), and agreeing ones rank
    above either alone. `share` scales the semantic side (1 in semantic mode). `floor`, `span` and
    `both` stand in for COSINE_FLOOR, COSINE_SPAN and BOTH (the benches try others)."""
    floor = COSINE_FLOOR if floor is None else floor
    both = BOTH if both is None else both
    semantic = share * min(1.0, max(0.0, (cosine - floor) / (COSINE_SPAN if span is None else span)))
    strong, weak = (lexical, semantic) if lexical >= semantic else (semantic, lexical)
    return (strong + both * weak) / (1.0 + both)


def _score(candidates: list[Bullet], q: query_mod.Query, files: Sequence[str], weights: dict[str, float],
           cosines: dict[str, float] | None, semantic_share: float, now: float, half_life: float,
           semantic_only: bool = False, known_by: Mapping[str, str] | None = None) -> list[Hit]:
    """Each candidate with its score and raw parts, in the candidates' order; see the module
    docstring. `semantic_only` (mode "semantic"): the relevance is the semantic part alone.
    `known_by`: more text a candidate is known by (its situations), counted by `coverage`."""
    n = len(candidates)
    extra = known_by or {}
    term_keys = [[query_mod.term_key(alt) for alt in group] for group in q.groups]
    texts = [query_mod.normalized_text(b["content"] + extra.get(b["id"], "")) for b in candidates]
    # covered[g][c]: candidate c contains an alternative of concept g.
    covered = [[any(query_mod.contains(t, key) for key in group) for t in texts] for group in term_keys]
    group_weights = _idf_weights(covered, n, UNKNOWN_CONCEPT_WEIGHT)
    total_group_weight = sum(group_weights) or 1.0

    fuzzy = _fuzzy_matrix(q.identifiers, candidates) if q.identifiers else []
    ident_weights = _idf_weights(fuzzy, n, 0.0)
    total_ident_weight = sum(ident_weights)

    bm25s = [-(b.get("bm25") or 0.0) for b in candidates]
    best_bm25 = max(bm25s) if bm25s else 0.0
    context = list(dict.fromkeys(q.words + [w for f in files for w in path_words(f)]))
    domain_cache: dict[str, float] = {}
    lexical_total = weights["bm25"] + weights["coverage"] + weights["domain"]
    if total_ident_weight:
        lexical_total += weights["fuzzy"]
    prior_total = sum(weights[p] for p in PRIOR_PARTS)
    prior_share = prior_total / (lexical_total + prior_total) if lexical_total + prior_total else 0.0

    hits: list[Hit] = []
    for c, b in enumerate(candidates):
        bm25_part = bm25s[c] / (best_bm25 + BM25_DAMPING) if bm25s[c] > 0 else 0.0
        coverage = sum(w for w, row in zip(group_weights, covered, strict=True) if row[c]) / total_group_weight
        fuzzy_part = (sum(w * row[c] for w, row in zip(ident_weights, fuzzy, strict=True)) / total_ident_weight
                      if total_ident_weight else 0.0)
        domain, domain_name = _domain_score(b.get("domains") or [], context, domain_cache)
        lexical = (weights["bm25"] * bm25_part + weights["coverage"] * coverage + weights["fuzzy"] * fuzzy_part
                   + weights["domain"] * domain) / lexical_total if lexical_total else 0.0
        relevance, cosine = lexical, None
        if cosines is not None and semantic_share:
            cosine = cosines.get(b["id"], 0.0)
            relevance = fuse(0.0 if semantic_only else lexical, cosine, semantic_share)
        prior, parts = _prior(b, weights, now, half_life)
        score = round(relevance * (1.0 - prior_share + prior_share * prior), 4)
        hits.append((score, b, (bm25_part, coverage, sum(row[c] for row in covered), len(covered), fuzzy_part,
                                domain, domain_name, cosine, parts)))
    return hits


def _explain(score: float, bullet: Bullet, raw: Parts) -> ScoredBullet:
    """A returned hit: the bullet with its score, the parts as `score_parts` and a short `why`."""
    bm25_part, coverage, matched, groups, fuzzy, domain, domain_name, cosine, parts = raw
    score_parts = {"bm25": round(bm25_part, 3), "coverage": round(coverage, 3), "fuzzy": round(fuzzy, 3),
                   "domain": round(domain, 3), **{p: round(v, 3) for p, v in parts.items()}}
    if cosine is not None:
        score_parts["cosine"] = round(cosine, 3)
    why = [f"bm25 {bm25_part:.2f}", f"terms {matched}/{groups}"]
    if fuzzy:
        why.append(f"fuzzy {fuzzy:.2f}")
    if domain:
        why.append(f"domain {domain_name}")
    if cosine is not None:
        why.append(f"cosine {cosine:.2f}")
    why.append(f"conf {parts['confidence']:.2f}")
    if parts["helpful"]:
        why.append(f"helpful {parts['helpful']:.2f}")
    why.append(f"recency {parts['recency']:.2f}")
    return {**bullet, "score": score, "score_parts": score_parts, "why": ", ".join(why)}


def top(store: PlaybookStore, project_id: int | None, k: int, *, cfg: Settings | None = None,
        include_global: bool = True, now: float | None = None,
        sections: Iterable[str] | None = None) -> list[ScoredBullet]:
    """The `k` most valuable active bullets (confidence, helpfulness, recency) for the session
    digest, best first, each with `score` and `why`. `sections` limits them to those sections."""
    k = max(0, int(k or 0))
    if k == 0:
        return []
    now = time.time() if now is None else now
    weights = _weights(cfg)
    half_life = _setting(cfg, "retrieval.recency_half_life_days")
    # The store orders by confidence, then helpfulness, then recency; a wider window lets a very
    # recent or much-used bullet of slightly lower confidence in.
    window = max(3 * k, 60)
    if sections:
        rows = [b for section in dict.fromkeys(sections) for b in store.list_bullets(
            project_id, include_global=include_global, order="value", section=section, limit=window)]
    else:
        rows = store.list_bullets(project_id, include_global=include_global, order="value", limit=window)
    scored: list[ScoredBullet] = []
    for b in rows:
        value, parts = _prior(b, weights, now, half_life)
        scored.append({**b, "score": round(value, 4), "score_parts": {p: round(v, 3) for p, v in parts.items()},
                       "why": ", ".join(f"{p} {v:.2f}" for p, v in parts.items())})
    scored.sort(key=lambda b: (-b["score"], b["id"]))
    return scored[:k]
