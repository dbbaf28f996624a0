"""How far any cut can take retrieval: the ranking's ceiling and the separability of prompts (issue 24).

    python bench/retrieval_ceiling.py [--write-time] [--out bench/results/retrieval-ceiling.json]

A cut only removes hits, so what it can reach is bounded by the raw ranking (k=5, no threshold): the
thresholded MRR of a set is at most its raw MRR, reached only if every prompt's first hit is kept when
it is right. And a cut must decide *per prompt* whether anything is worth showing, so it can only be as
good as some score separates the prompts that have a lesson from those that should get nothing.

For the labelled sets (bench/data: the tuned `tune`, `para` and `test` splits; bench/data/heldout) and
the real-sessions replay set (bench/retrieval_replay.py: `replay`, `final`), with the default
configuration, this reports:

  ceiling     raw R@5 / MRR of the ranking as shipped, of pure cosine, and of the best fusion of the
              cosine and lexical parts on a grid (cosine floor, span, BOTH, semantic share, coverage
              weight), chosen by the summed raw MRR of the tuning splits (tune, para, replay, final)
  separable   AUC, over positive vs negative prompts, of the best hit's cosine (against every lesson
              in scope, not only the candidates) and of the best hit's score: 1.0 means some cut
              keeps every prompt that has a lesson and drops every prompt that has none
  frontier    the default cut's threshold × relative cut on the raw scores: R@5 / MRR / negatives
              empty / irrelevant shown per positive prompt on every split, so the trade between the
              held-out set and real prompts is read off one table. Like `retrieval_replay.cut_sweep`,
              it re-applies the cut to the raw ranking; a search run with that cut fetches fewer
              candidates by meaning, and BM25 and coverage are relative to the candidates, so its
              figures differ a little (default cut: held-out 0.675 / 0.658 both ways; replay split
              0.673 / 0.669 here, 0.636 / 0.632 in retrieval_bench.py)

The held-out set enters only as these aggregates: its prompts are not printed, and nothing here is
chosen on it. `--write-time`: the stores hold the full model's write-time lesson vectors (needs the
`semantic` extra). Cost: ~10 s (a few minutes with --write-time: the model embeds every lesson).
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import statistics
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "src"))

import retrieval_bench as rb  # noqa: E402
import retrieval_replay as rr  # noqa: E402

from ace_engine.core.config import DEFAULTS  # noqa: E402
from ace_engine.embed import vectors  # noqa: E402
from ace_engine.retrieval import search as search_mod  # noqa: E402

CANDIDATES = 50  # every candidate a search scores, best first
TUNING = ("tuned/tune", "tuned/para", "replay/replay", "replay/final")


def _raw(store, project_id, prompt: str, now: float) -> dict:
    """The search's whole raw ranking, with each hit's score parts, and the best cosine in scope."""
    cfg = {**DEFAULTS, "retrieval.threshold": -1.0}
    hits = search_mod.search(store, project_id, prompt, k=CANDIDATES, cfg=cfg, now=now)
    every = vectors.cosines(store, project_id, prompt, cfg=DEFAULTS, top=1_000_000) or {}
    return {"raw": [(h["id"], h["score"], h.get("score_parts", {})) for h in hits],
            "best_cosine": max(every.values(), default=0.0)}


def collect(tmp: str, write_time: bool) -> dict[str, list[dict]]:
    """{set/split: [{relevant, raw, best_cosine}]} for the labelled sets and the replay walk."""
    rows: dict[str, list[dict]] = {}
    for name in ("tuned", "heldout"):
        dataset, queries = rb.load_dataset(name)
        store, ids, project_ids = rb.build_store(os.path.join(tmp, f"{name}.db"), dataset, write_time)
        for q in queries:
            row = _raw(store, project_ids[q["project"]], q["prompt"], rb.NOW)
            rows.setdefault(f"{name}/{q['split']}", []).append({"relevant": [ids[k] for k in q["relevant"]], **row})
        store.close()

    def search(store, q: dict, cfg: dict, mode: str) -> dict:
        return {"split": q["split"], "relevant": q["relevant"], **_raw(store, q["project_id"], q["prompt"], q["now"])}

    original, rr._search = rr._search, search  # the walk, with this search in place of its own
    try:
        for row in rr.walk(os.path.join(tmp, "replay.db"), {"auto": (dict(DEFAULTS), "auto")}, write_time)["auto"]:
            rows.setdefault(f"replay/{row.pop('split')}", []).append(row)
    finally:
        rr._search = original
    return rows


def measure(rows: list[dict], shown) -> dict:
    """R@5, MRR, irrelevant shown per positive prompt, share of negatives left empty."""
    recall, mrr, noise, empty = [], [], [], []
    for row in rows:
        ids = shown(row)[:rb.K]
        relevant = set(row["relevant"])
        if relevant:
            recall.append(len(relevant & set(ids)) / len(relevant))
            mrr.append(next((1 / n for n, i in enumerate(ids, 1) if i in relevant), 0.0))
            noise.append(sum(1 for i in ids if i not in relevant))
        else:
            empty.append(1.0 if not ids else 0.0)
    out = {"recall": recall, "mrr": mrr, "irrelevant_shown": noise, "negative_empty": empty}
    return {k: round(statistics.fmean(v), 3) for k, v in out.items() if v}


def _lexical(parts: dict, coverage_weight: float, with_fuzzy: bool) -> float:
    """The hit's lexical part as `search._score` weighs it, with another coverage weight. The fuzzy
    weight counts when the query's identifiers matched some candidate (`with_fuzzy`), as it does there."""
    weights = {"bm25": DEFAULTS["retrieval.weights.bm25"], "coverage": coverage_weight,
               "domain": DEFAULTS["retrieval.weights.domain"],
               "fuzzy": DEFAULTS["retrieval.weights.fuzzy"] if with_fuzzy else 0.0}
    return sum(w * parts.get(p, 0.0) for p, w in weights.items()) / sum(weights.values())


def fused(row: dict, floor: float, span: float, both: float, share: float, coverage: float) -> list[str]:
    """The raw ranking re-fused from the hits' parts (`search.fuse` with other constants; no prior)."""
    with_fuzzy = any(parts.get("fuzzy") for _, _, parts in row["raw"])
    scored = [(search_mod.fuse(_lexical(parts, coverage, with_fuzzy), parts.get("cosine") or 0.0, share,
                               floor=floor, span=span, both=both), bid) for bid, _, parts in row["raw"]]
    return [bid for _, bid in sorted(scored, key=lambda s: -s[0])]


def auc(positives: list[float], negatives: list[float]) -> float | None:
    if not positives or not negatives:
        return None
    wins = sum((p > n) + 0.5 * (p == n) for p in positives for n in negatives)
    return round(wins / (len(positives) * len(negatives)), 3)


def report(rows: dict[str, list[dict]]) -> dict:
    as_shipped = {split: measure(r, lambda row: [h[0] for h in row["raw"]]) for split, r in rows.items()}
    by_cosine = {split: measure(r, lambda row: [h[0] for h in sorted(row["raw"], key=lambda h: -(h[2].get("cosine")
                                                                                                  or 0.0))])
                 for split, r in rows.items()}
    grid = []
    for setting in itertools.product((0.1, 0.125, 0.15, 0.2), (0.4, 0.5, 0.6), (0.2, 0.35, 0.5, 0.8),
                                     (0.6, 0.8, 1.0), (0.3, 0.6)):
        m = {split: measure(r, lambda row, s=setting: fused(row, *s)) for split, r in rows.items()}
        grid.append((sum(m[s]["mrr"] for s in TUNING if s in m), setting, m))
    best = max(grid, key=lambda g: g[0])
    separable = {}
    for split, r in rows.items():
        pos = [row for row in r if row["relevant"]]
        neg = [row for row in r if not row["relevant"]]
        separable[split] = {
            "positives": len(pos), "negatives": len(neg),
            "best_cosine_auc": auc([row["best_cosine"] for row in pos], [row["best_cosine"] for row in neg]),
            "best_score_auc": auc([row["raw"][0][1] if row["raw"] else 0.0 for row in pos],
                                  [row["raw"][0][1] if row["raw"] else 0.0 for row in neg])}
    frontier = []
    for threshold in (0.18, 0.20, 0.22, 0.24, 0.26, 0.28, 0.30):
        for relative in (0.0, 0.6, 0.7, 0.825):
            frontier.append({"threshold": threshold, "relative_cut": relative, **{
                split: measure(r, lambda row, t=threshold, c=relative: rr.cut(
                    [(h[0], h[1], h[2].get("cosine")) for h in row["raw"]], t, c,
                    DEFAULTS["retrieval.semantic_threshold"])) for split, r in rows.items()}})
    return {"ceiling": {"as_shipped": as_shipped, "pure_cosine": by_cosine,
                        "best_fusion": {"floor, span, both, share, coverage": best[1], "metrics": best[2]}},
            "separable": separable, "frontier": frontier}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--write-time", action="store_true", help="stores with the full model's lesson vectors")
    parser.add_argument("--out", default=None, help="default bench/results/retrieval-ceiling[-write-time].json")
    args = parser.parse_args()
    out = args.out or os.path.join(HERE, "results", "retrieval-ceiling" + ("-write-time" if args.write_time else "")
                                   + ".json")
    with tempfile.TemporaryDirectory(prefix="ace-ceiling-") as tmp:
        os.environ["ACE_HOME"] = os.path.join(tmp, "home")  # the run's logs stay in the temp dir
        rows = collect(tmp, args.write_time)
    result = {"when": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "write_time": args.write_time,
              "settings": {k: v for k, v in DEFAULTS.items() if k.startswith("retrieval.")}, **report(rows)}
    with open(out, "w", encoding="utf-8") as fh:
        json.dump(result, fh, indent=1)
    splits = list(rows)
    print(f"{'raw R@5 / MRR':<22}" + "".join(f"{s:>16}" for s in splits))
    for label, m in (("as shipped", result["ceiling"]["as_shipped"]), ("pure cosine", result["ceiling"]["pure_cosine"]),
                     (f"best fusion {result['ceiling']['best_fusion']['floor, span, both, share, coverage']}",
                      result["ceiling"]["best_fusion"]["metrics"])):
        print(f"{label[:44]:<22}" + "".join(f"{m[s].get('recall', 0):>9.3f}/{m[s].get('mrr', 0):.3f}" for s in splits))
    print("\nAUC positives vs negatives: best cosine in scope / best hit's score")
    for split, s in result["separable"].items():
        if s["best_cosine_auc"] is not None:
            print(f"  {split:<16} {s['best_cosine_auc']:.3f} / {s['best_score_auc']:.3f}"
                  f"   ({s['positives']} positive, {s['negatives']} negative prompts)")
    print("\nthe cut (threshold, relative): R@5 / MRR / negatives empty / irrelevant per positive prompt")
    for row in result["frontier"]:
        print(f"  {row['threshold']:.2f} {row['relative_cut']:.3f}" + "".join(
            f"  {s.split('/')[-1][:6]} {row[s].get('recall', 0):.2f}/{row[s].get('mrr', 0):.2f}/"
            f"{row[s].get('negative_empty', float('nan')):.2f}/{row[s].get('irrelevant_shown', 0):.1f}"
            for s in ("tuned/para", "replay/replay", "replay/final", "heldout/test")))
    print(f"written to {out}")


if __name__ == "__main__":
    main()
