"""Fit the write-time map (issue 24): full-model lesson vectors → the static table's space.

    .venv/bin/python scripts/fit_write_map.py [--words 6000] [--lambdas 0.03,0.1,0.3,1,3,10]
                                              [--out src/ace_engine/embed/data/minilm-static-d256-int8]

Contract. The learning worker embeds a lesson with the full all-MiniLM-L6-v2 (384-d) and maps it into
the shipped static table's space (256-d) with W, so the hook, which embeds the prompt with the table,
compares like with like (`embed/write_time.py`). W is a ridge regression fitted on `--words` whole-word
tokens of the table's vocabulary (seeded choice): MiniLM of the word → the table's unit vector of it,

    W = argmin ||X W - Y||² + λ ||W||²,

no text of bench/data in the fit. λ and the stored form — `mapped` (unit(x W)) or `sum`
(unit(static + α unit(x W)), α in 0.5 / 0.75 / 1) — are chosen on the *tuned* set (bench/data: the `tune` and `para` splits,
pure cosine, each prompt against its project's and the global lessons, R@5 + MRR); the held-out
paraphrase set is printed for information and never used to choose. Writes `write_map.npy` (float16,
384 × 256) and `write_map.json` (λ, form, the table's hash it was fitted for, the figures) into `--out`.

Cost: NumPy and the full model (the `semantic` extra); ~1-2 min on 2 shared cores.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "src"))

import numpy as np  # noqa: E402

from ace_engine.embed import semantic, static_embed  # noqa: E402


def unit(a: np.ndarray) -> np.ndarray:
    n = np.linalg.norm(a, axis=1, keepdims=True)
    n[n == 0] = 1
    return a / n


def table_vectors(t: static_embed.Table, texts: list[str]) -> np.ndarray:
    return unit(np.array([t.embed(x) or [0.0] * t.dim for x in texts], dtype=np.float64))


def load(folder: str, splits: tuple[str, ...]) -> tuple[list[dict], list[dict]]:
    with open(os.path.join(folder, "bullets.json"), encoding="utf-8") as fh:
        bullets = json.load(fh)["bullets"]
    with open(os.path.join(folder, "queries.json"), encoding="utf-8") as fh:
        queries = json.load(fh)
    para = os.path.join(folder, "paraphrase_tune.json")
    if "para" in splits and os.path.exists(para):
        with open(para, encoding="utf-8") as fh:
            queries += [{**q, "split": "para"} for q in json.load(fh)]
    return bullets, [q for q in queries if q["relevant"] and q["split"] in splits]


class Eval:
    """Pure-cosine R@5 / MRR of one dataset for any lesson-side matrix."""

    def __init__(self, t: static_embed.Table, enc: semantic.Encoder, folder: str, splits: tuple[str, ...]) -> None:
        self.bullets, self.queries = load(folder, splits)
        self.keys = [b["key"] for b in self.bullets]
        self.static = table_vectors(t, [b["content"] for b in self.bullets])
        self.full = enc.encode([b["content"] for b in self.bullets]).astype(np.float64)
        self.prompts = table_vectors(t, [q["prompt"] for q in self.queries])
        self.scopes = []
        for q in self.queries:
            scope = [j for j, b in enumerate(self.bullets) if b["project"] in (q["project"], "global", "")]
            self.scopes.append(np.array(scope or range(len(self.bullets))))

    def lessons(self, w: np.ndarray, form: str, weight: float = 1.0) -> np.ndarray:
        mapped = unit(self.full @ w)
        return mapped if form == "mapped" else unit(self.static + weight * mapped)

    def score(self, lessons: np.ndarray) -> tuple[float, float]:
        recall = mrr = 0.0
        for i, q in enumerate(self.queries):
            scope = self.scopes[i]
            order = scope[np.argsort(-(lessons[scope] @ self.prompts[i]), kind="stable")][:5]
            ranked = [self.keys[j] for j in order]
            relevant = set(q["relevant"])
            recall += len(relevant & set(ranked)) / len(relevant)
            mrr += next((1 / r for r, k in enumerate(ranked, 1) if k in relevant), 0.0)
        return round(recall / len(self.queries), 4), round(mrr / len(self.queries), 4)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--words", type=int, default=6000)
    parser.add_argument("--lambdas", default="0.03,0.1,0.3,1,3,10")
    parser.add_argument("--out", default=os.path.join(ROOT, "src", "ace_engine", "embed", "data",
                                                      static_embed.DEFAULT_NAME))
    args = parser.parse_args()
    t = static_embed.load(os.path.join(ROOT, "src", "ace_engine", "embed", "data", static_embed.DEFAULT_NAME))
    assert t is not None, "the static table is missing"
    enc = semantic.encoder()
    with open(os.path.join(t.directory, "vocab.txt"), encoding="utf-8") as fh:
        vocab = [w.strip() for w in fh]
    words = [w for w in vocab if w.isalpha() and len(w) >= 3]
    random.Random(1).shuffle(words)
    words = words[:args.words]
    started = time.time()
    cache = os.path.join(os.environ.get("TMPDIR", "/tmp"), f"fit_write_map-{len(words)}.npy")
    if os.path.exists(cache):  # the model's vectors of the words: the slow part, the same every run
        x = np.load(cache)
    else:
        x = enc.encode(words, batch_size=64).astype(np.float64)
        np.save(cache, x)
    y = table_vectors(t, words)
    print(f"{len(words)} words encoded in {time.time() - started:.0f} s")
    tuned = Eval(t, enc, os.path.join(ROOT, "bench", "data"), ("tune", "para"))
    heldout = Eval(t, enc, os.path.join(ROOT, "bench", "data", "heldout"), ("test",))
    rows = [{"form": "static", "lambda": None, "tuned": tuned.score(tuned.static),
             "heldout": heldout.score(heldout.static)}]
    print(f"static table on both sides: tuned {rows[0]['tuned']}  held-out {rows[0]['heldout']}")
    best: tuple[float, dict, np.ndarray] | None = None
    for lam in (float(v) for v in args.lambdas.split(",")):
        w = np.linalg.solve(x.T @ x + lam * np.eye(x.shape[1]), x.T @ y)
        for form, weight in (("mapped", 1.0), ("sum", 0.5), ("sum", 0.75), ("sum", 1.0)):
            row = {"form": form, "weight": weight, "lambda": lam, "tuned": tuned.score(tuned.lessons(w, form, weight)),
                   "heldout": heldout.score(heldout.lessons(w, form, weight))}
            rows.append(row)
            print(f"{form:<7} α {weight:<4} λ {lam:<5} tuned R@5/MRR {row['tuned']}  held-out {row['heldout']}"
                  " (not used to choose)", flush=True)
            objective = sum(row["tuned"])
            if best is None or objective > best[0]:
                best = (objective, row, w)
    assert best is not None
    _, chosen, w = best
    print(f"chosen on the tuned set: {chosen['form']} α {chosen['weight']} λ {chosen['lambda']}")
    np.save(os.path.join(args.out, "write_map.npy"), w.astype(np.float16))
    meta = {"model": semantic.MODEL, "table_sha256": t.meta.get("table_sha256"), "form": chosen["form"],
            "weight": chosen["weight"], "lambda": chosen["lambda"], "words": len(words), "chosen_on": "bench/data tune+para, pure cosine R@5+MRR",
            "fit_script": "scripts/fit_write_map.py", "grid": rows}
    with open(os.path.join(args.out, "write_map.json"), "w", encoding="utf-8") as fh:
        json.dump(meta, fh, indent=1)
        fh.write("\n")


if __name__ == "__main__":
    main()
