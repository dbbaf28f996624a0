"""Issue 24's "write-time quality", measured only (did not land): lesson vectors from the full model
(all-MiniLM-L6-v2, as the learning worker could compute them) mapped into the static table's space by
a ridge-regression linear map, prompts embedded with the static table as the hook does. Pure cosine,
raw (no threshold), held-out paraphrase set, each prompt against its project's and the global lessons.

    .venv/bin/python bench/wip/write_time_map.py [VOCAB_WORDS=5000]     (~3 min on 2 shared cores)

Fits: `vocab` (VOCAB_WORDS whole-word tokens of the table's vocabulary, MiniLM of the word → the
table's vector of it), `tuned texts` (the tuned set's lessons and prompts, not held-out), and both.
Measured 2026-11-27 (shared machine): static lesson 0.775 / 0.587; MiniLM on both sides 0.850 / 0.673;
mapped [vocab, λ 0.1] 0.825 / 0.626; static + mapped [vocab, λ 10] 0.838 / 0.633; tuned-text fits
0.775-0.838 R@5. λ was not chosen on a separate split: read these as an estimate (+0.05 R@5, +0.04 MRR).
Landing it needs the learning worker (learning/) to store the mapped vector beside the table's one.
"""
import json, os, sys, time, random
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "src")); sys.path.insert(0, ROOT + "/bench")
import numpy as np
from ace_engine.embed import static_embed, semantic
T = static_embed.load()
E = semantic.encoder()
def st(texts):
    out = []
    for t in texts:
        v = static_embed.embed(t)
        out.append(np.zeros(T.dim) if v is None else np.array(v))
    a = np.array(out); n = np.linalg.norm(a, axis=1, keepdims=True); n[n == 0] = 1
    return a / n
def unit(a):
    n = np.linalg.norm(a, axis=1, keepdims=True); n[n == 0] = 1; return a / n
vocab = [w.strip() for w in open(T.directory + "/vocab.txt", encoding="utf-8")]
words = [w for w in vocab if w.isalpha() and len(w) >= 3 and not w.startswith("##")]
random.Random(1).shuffle(words)
N = int(sys.argv[1]) if len(sys.argv) > 1 else 6000
t0 = time.time(); Xw = E.encode(words[:N], batch_size=64); Yw = st(words[:N]); print("vocab encode", N, round(time.time()-t0,1), "s")
# texts from the tuned set (not held-out) as a second fit
tb = json.load(open(ROOT + "/bench/data/bullets.json")); tq = json.load(open(ROOT + "/bench/data/queries.json"))
texts = [b["content"] for b in tb["bullets"]] + [q["prompt"] for q in tq]
Xt = E.encode(texts); Yt = st(texts)
def fit(X, Y, lam):
    return np.linalg.solve(X.T @ X + lam * np.eye(X.shape[1]), X.T @ Y)
hb = json.load(open(ROOT + "/bench/data/heldout/bullets.json")); hq = json.load(open(ROOT + "/bench/data/heldout/queries.json"))
bl = hb["bullets"]; keys = [b["key"] for b in bl]
Lm = E.encode([b["content"] for b in bl]); Ls = st([b["content"] for b in bl])
sit = json.load(open(ROOT + "/bench/data/heldout/situations.json"))["situations"]
qs = [q for q in hq if q["relevant"]]
Q = st([q["prompt"] for q in qs]); Qm = E.encode([q["prompt"] for q in qs])
def evaluate(L, Qv=Q, label=""):
    R = M = 0
    for i, q in enumerate(qs):
        scope = [j for j, b in enumerate(bl) if b["project"] == q["project"] or b["project"] in ("global", "")]
        if not scope: scope = list(range(len(bl)))
        sims = sorted(((float(Qv[i] @ L[j]), keys[j]) for j in scope), reverse=True)
        ranked = [k for _, k in sims][:5]
        rel = set(q["relevant"])
        R += len(rel & set(ranked)) / len(rel)
        M += next((1 / r for r, k in enumerate(ranked, 1) if k in rel), 0)
    print(f"{label:<40} R@5 {R/len(qs):.3f} MRR {M/len(qs):.3f}")
print("projects", set(b["project"] for b in bl))
evaluate(Ls, label="static lesson (baseline)")
evaluate(Lm, Qm, label="minilm both sides")
for src, X, Y in (("vocab", Xw, Yw), ("tuned texts", Xt, Yt), ("both", np.vstack([Xw, Xt]), np.vstack([Yw, Yt]))):
    for lam in (0.1, 1.0, 10.0):
        W = fit(X, Y, lam); Lmap = unit(Lm @ W)
        evaluate(Lmap, label=f"mapped[{src} lam {lam}]")
        evaluate(unit(Ls + Lmap), label=f"  static+mapped[{src} lam {lam}]")
