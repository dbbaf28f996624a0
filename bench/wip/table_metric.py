"""Metric learning on the static table (issue 24, not landed): can the table itself rank paraphrases better?

    .venv/bin/python bench/wip/table_metric.py '{"epochs": 30, "lam": 1000.0, "lr": 0.001, "with_corpus": true}'

A linear map W (D×D, from the identity, or I + U Vᵀ with "rank") applied to every row of the shipped
table, so it could be baked into the rows at no hook cost (unit(Σ rows W) = unit((Σ rows) W)). Trained
by full-batch Adam on InfoNCE (temperature tau) over each prompt's scope — the tuned set's `tune`
split, plus ("with_corpus") the gold prompts of the learning corpus's tune-split sessions and of the
shared dev set — with an L2 pull toward the identity (lam / 1000). Reported, pure cosine R@5 / MRR:
the tuned set's splits, and the gold prompts of the corpus's held-out-split sessions (corp-held),
which no run trains on. The retrieval held-out set is not read.

Measured (2026-11-27): identity para 0.745/0.550, test 0.913/0.856, corp-held 0.902/0.715. Every
setting tried fits its training prompts (tune → 0.95-1.0) and moves the rest by noise or down: the
best, lam 1000 with the corpus, para 0.770/0.562, test 0.913/0.867, corp-held 0.902/0.712; full W at
lam 1, para 0.725/0.563, corp-held 0.894/0.693; rank 16, corp-held 0.878-0.882. Not landed: a few
hundred in-domain pairs don't teach 256-dimensional word rows anything that carries to other repos.
"""

import json
import os
import sys

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "src"))
sys.path.insert(0, os.path.join(ROOT, "bench"))
import retrieval_bench as rb  # noqa: E402

from ace_engine.embed import static_embed  # noqa: E402

t = static_embed.load(static_embed.default_dir())
M = (
    np.asarray(t.matrix()).astype(np.float32) * float(t.meta.get("scale", 1.0))
    if t.meta.get("dtype") == "int8"
    else np.asarray(t.matrix()).astype(np.float32)
)
D = M.shape[1]


def S(texts):
    out = np.zeros((len(texts), D), np.float32)
    for i, x in enumerate(texts):
        ids = t.token_ids(x)
        if ids:
            out[i] = M[np.asarray(ids)].sum(0)
    return out


def tuned_sets():
    ds, qs = rb.load_dataset("tuned")
    B = ds["bullets"]
    keyidx = {b["key"]: i for i, b in enumerate(B)}
    keyed = {p["name"] for p in ds["projects"] if p["key"]}
    scope = {}
    for p in ds["projects"]:
        scope[p["name"]] = [i for i, b in enumerate(B) if b["project"] == p["name"] or b["project"] not in keyed]
    LB = S([b["content"] for b in B])
    sets = {}
    for sp in ("tune", "para", "test"):
        Q = [q for q in qs if q["split"] == sp and q["relevant"]]
        sets[sp] = (
            S([q["prompt"] for q in Q]),
            [np.array(scope[q["project"]]) for q in Q],
            [[keyidx[k] for k in q["relevant"]] for q in Q],
        )
    return LB, sets


def gold_sets(path, splits=None):
    """(lesson S, query S, scope, rel) from a gold file: lessons of a repo are its scope."""
    g = json.load(open(path))
    ts = g["trajectories"]
    if splits:
        ts = [x for x in ts if x.get("split") in splits]
    lessons, repo_of, qs = [], [], []
    for x in ts:
        for lesson in x["lessons"]:
            li = len(lessons)
            lessons.append(lesson["lesson"])
            repo_of.append(x.get("repo") or x["id"])
            for p in lesson.get("prompts", []):
                qs.append((p, li))
    repo_of = np.array(repo_of)
    LB = S(lessons)
    Qs = S([p for p, _ in qs])
    scopes = [np.where(repo_of == repo_of[li])[0] for _, li in qs]
    return LB, (Qs, scopes, [[li] for _, li in qs])


def unit(X):
    return X / np.maximum(np.linalg.norm(X, axis=-1, keepdims=True), 1e-9)


def evaluate(W, LB, data):
    Qs, scopes, rels = data
    EL = unit(LB @ W)
    EQ = unit(Qs @ W)
    r5, mrr = [], []
    for i in range(len(Qs)):
        sc = EL[scopes[i]] @ EQ[i]
        order = scopes[i][np.argsort(-sc)][:5]
        rel = set(rels[i])
        r5.append(len(rel & set(order.tolist())) / len(rel))
        mrr.append(next((1 / n for n, j in enumerate(order.tolist(), 1) if j in rel), 0))
    return round(float(np.mean(r5)), 3), round(float(np.mean(mrr)), 3)


def train(pairs, W0=None, tau=0.05, lam=1.0, lr=0.01, epochs=200, rank=None, seed=0):
    """pairs: list of (LB, (Qs, scopes, rels)). Full-batch Adam on W = I + A."""
    rng = np.random.default_rng(seed)
    A = np.zeros((D, D), np.float32) if rank is None else None
    if rank is not None:
        U = rng.normal(0, 0.01, (D, rank)).astype(np.float32)
        V = rng.normal(0, 0.01, (D, rank)).astype(np.float32)
        params = [U, V]
    else:
        params = [A]
    m = [np.zeros_like(p) for p in params]
    v = [np.zeros_like(p) for p in params]
    for ep in range(epochs):
        W = np.eye(D, dtype=np.float32) + (params[0] if rank is None else params[0] @ params[1].T)
        gW = np.zeros((D, D), np.float32)
        loss = 0
        n = 0
        for LB, (Qs, scopes, rels) in pairs:
            XL = LB @ W
            nL = np.linalg.norm(XL, axis=1, keepdims=True) + 1e-9
            EL = XL / nL
            XQ = Qs @ W
            nQ = np.linalg.norm(XQ, axis=1, keepdims=True) + 1e-9
            EQ = XQ / nQ
            gEL = np.zeros_like(EL)
            gEQ = np.zeros_like(EQ)
            for i in range(len(Qs)):
                sc = scopes[i]
                s = EL[sc] @ EQ[i] / tau
                s -= s.max()
                p = np.exp(s)
                p /= p.sum()
                y = np.isin(sc, rels[i]).astype(np.float32)
                y /= y.sum()
                loss += -np.sum(y * np.log(p + 1e-12))
                n += 1
                g = (p - y) / tau
                gEQ[i] += g @ EL[sc]
                np.add.at(gEL, sc, np.outer(g, EQ[i]))
            gXL = (gEL - EL * np.sum(gEL * EL, 1, keepdims=True)) / nL
            gXQ = (gEQ - EQ * np.sum(gEQ * EQ, 1, keepdims=True)) / nQ
            gW += LB.T @ gXL + Qs.T @ gXQ
        gW /= max(n, 1)
        if rank is None:
            grads = [gW + lam * params[0] / 1000]
        else:
            Ucur, Vcur = params
            grads = [gW @ Vcur + lam * Ucur / 1000, gW.T @ Ucur + lam * Vcur / 1000]
        for k, (p_, g_) in enumerate(zip(params, grads, strict=True)):
            m[k] = 0.9 * m[k] + 0.1 * g_
            v[k] = 0.999 * v[k] + 0.001 * g_ * g_
            mh = m[k] / (1 - 0.9 ** (ep + 1))
            vh = v[k] / (1 - 0.999 ** (ep + 1))
            p_ -= lr * mh / (np.sqrt(vh) + 1e-8)
        if ep % 50 == 0 or ep == epochs - 1:
            print(f"  ep {ep} loss {loss / max(n, 1):.4f}", flush=True)
    return np.eye(D, dtype=np.float32) + (params[0] if rank is None else params[0] @ params[1].T)


if __name__ == "__main__":
    LB, sets = tuned_sets()
    shared = os.environ.get("ACE_LEARNING_CORPUS") or os.path.join(os.path.dirname(ROOT), "shared", "learning-corpus")
    devL, dev = gold_sets(os.path.join(shared, "dev", "gold.json"))
    corpL, corp_tune = gold_sets(os.path.join(ROOT, "bench/corpus/gold.json"), {"tune"})
    corpLH, corp_held = gold_sets(os.path.join(ROOT, "bench/corpus/gold.json"), {"heldout"})
    identity = np.eye(D, dtype=np.float32)

    def report(W, label):
        print(
            label,
            "tune",
            evaluate(W, LB, sets["tune"]),
            "para",
            evaluate(W, LB, sets["para"]),
            "test",
            evaluate(W, LB, sets["test"]),
            "dev",
            evaluate(W, devL, dev),
            "corp-tune",
            evaluate(W, corpL, corp_tune),
            "corp-held",
            evaluate(W, corpLH, corp_held),
            flush=True,
        )

    report(identity, "identity")
    cfg = json.loads(sys.argv[1]) if len(sys.argv) > 1 else {}
    train_sets = [(LB, sets["tune"])]
    if cfg.pop("with_corpus", False):
        train_sets += [(corpL, corp_tune), (devL, dev)]
    out = cfg.pop("out", None)
    W = train(train_sets, **cfg)
    report(W, "trained " + json.dumps(cfg))
    if out:
        np.save(out, W)
