"""Fit the static embedding table to the full model's sentence embeddings ("tokenlearn"), and measure it.

    python scripts/fit_static.py corpus  [--out build/static/corpus.txt] [--size 90000]
    python scripts/fit_static.py targets [--corpus build/static/corpus.txt] [--out build/static/targets.npy]
    python scripts/fit_static.py fit     [--corpus ...] [--targets ...] [--partial] [--raw build/static/raw.npy]
                                         [--lambdas 0.3,1,3,10] [--out build/static/minilm-static-d256-int8-fit]
                                         [--results bench/results/static_fit.json]

Contract. `corpus` writes one text a line (5–60 words, deduplicated case- and space-insensitively) of
software-engineering prose: docstrings and doc files of the venv's site-packages and of a pyenv Python's
standard library, /usr/share/doc text, man(1) pages stripped of troff, the user prompts and assistant text
of the sessions under the shared learning corpus ($ACE_LEARNING_CORPUS, default ../shared/learning-corpus
beside the checkout), and bench/data's lessons plus its *tune* prompts.
No `bench/data/` test prompt goes in, and any text equal to a `bench/data/heldout/` prompt or lesson
(other than the bench lessons themselves) is dropped — the held-out set is read for that filter only.
`targets` runs the full MiniLM (`semantic.encoder()`) over the corpus (resumable: parts of 4,096 texts
are cached beside the output). `fit` starts from the distilled table E0 (`distill_static.project`: PCA
to D, half whitening, rank weights) and solves, per output column, the ridge problem

    min_Δ ||A (E0 + Δ) - Y||² + λ ||Δ||²

with A the (texts × vocab) token-count matrix whose rows are divided by the norm of the text's current
runtime sum (so A·E0 has unit rows, as the runtime's normalised sum does) and Y the targets mapped by the
table's own PCA/half-whitening map and L2-normalised: block conjugate gradients on AᵀA + λI over the D
columns at once (scipy.sparse). A second round recomputes the row norms with the fitted table and
refits from it (the runtime normalisation is not linear). λ is chosen by pure-cosine MRR on the
`tune` split of bench/data; test-split and held-out figures are reported, never used to choose. The
table directory is in the existing format (`static_embed.Table` reads it unchanged), meta.json saying
how it was fitted; the results file holds corpus size and sources, times, the λ grid and the metrics
of the distilled and fitted tables next to the full model.

Cost (2 cores): corpus ~1–2 min; targets ~100 texts/s (≈15 min for 90k texts); fit ~1 min per λ.
Memory: the sparse matrix and a few (vocab × D) float64 blocks, well under 2 GB.
"""

from __future__ import annotations

import argparse
import ast
import glob
import gzip
import json
import os
import random
import re
import statistics
import sys
import sysconfig
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "src"))
sys.path.insert(0, os.path.join(ROOT, "scripts"))

import distill_static  # noqa: E402

from ace_engine.embed import semantic, static_embed  # noqa: E402

# The work files (tens of MB) go to build/static, ignored by git; the paths recorded in the results are
# relative to the repository (`shown`), so that they mean the same on every machine.
STATIC = os.environ.get("ACE_STATIC_WORK") or os.path.join(ROOT, "build", "static")
SESSIONS = os.environ.get("ACE_LEARNING_CORPUS") or os.path.join(os.path.dirname(ROOT), "shared", "learning-corpus")
MIN_WORDS, MAX_WORDS = 5, 60


def shown(path: str) -> str:
    """`path` as the results record it: relative to the repository, or its name alone when outside."""
    full = os.path.abspath(path)
    return os.path.relpath(full, ROOT) if full.startswith(ROOT + os.sep) else os.path.basename(full)
DIM = 256


# -- corpus ------------------------------------------------------------------------------------------


_SENTENCE = re.compile(r"(?<=[.!?:;])\s+(?=[A-Z`\"'(\[])")
_TROFF_ESC = re.compile(r"\\f[BIRPC0-9]|\\h'[^']*'|\\f\(..|\\\(..|\\\*\(..|\\\*.|\\[&|^%e-]|\\s[-+]?\d")


def norm_key(text: str) -> str:
    return " ".join(text.lower().split())


def prose(text: str) -> bool:
    """Mostly words: code listings, tables and hex dumps are not what lessons or prompts look like."""
    letters = sum(c.isalpha() for c in text)
    return letters >= 0.6 * len(text.replace(" ", "")) and not text.count("|") > 3 and "====" not in text


def chunks(text: str, rng: random.Random) -> list[str]:
    """Paragraphs split into sentences, packed into passages of a random 8–45 word target (both
    single sentences and short passages occur: prompts are one or two sentences, lessons a few)."""
    out = []
    for para in re.split(r"\n\s*\n", text):
        para = " ".join(para.split())
        if not para:
            continue
        current: list[str] = []
        target = rng.randint(8, 45)
        for sentence in _SENTENCE.split(para):
            words = sentence.split()
            if len(words) > MAX_WORDS:  # an over-long sentence: cut into word windows
                for i in range(0, len(words), 40):
                    out.append(" ".join(words[i : i + 40]))
                continue
            current.extend(words)
            if len(current) >= target:
                out.append(" ".join(current))
                current, target = [], rng.randint(8, 45)
        if current:
            out.append(" ".join(current))
    return [c for c in out if MIN_WORDS <= len(c.split()) <= MAX_WORDS and prose(c)]


def py_docstrings(root: str, rng: random.Random, limit_files: int) -> list[str]:
    files = sorted(glob.glob(os.path.join(root, "**", "*.py"), recursive=True))
    files = [f for f in files if "/test" not in f and "__pycache__" not in f]
    rng.shuffle(files)
    out = []
    for path in files[:limit_files]:
        try:
            with open(path, encoding="utf-8") as fh:
                tree = ast.parse(fh.read())
        except (OSError, SyntaxError, UnicodeDecodeError, ValueError, RecursionError):
            continue
        for node in ast.walk(tree):
            if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
                doc = ast.get_docstring(node)
                if doc:
                    # Drop doctest and parameter-table lines: they are code and type lists, not prose.
                    doc = "\n".join(line for line in doc.splitlines() if not line.lstrip().startswith((">>>", "...")))
                    out.extend(chunks(doc, rng))
    return out


def read_text(path: str) -> str:
    opener = gzip.open if path.endswith(".gz") else open
    try:
        with opener(path, "rt", encoding="utf-8", errors="replace") as fh:
            return fh.read(200_000)
    except (OSError, EOFError):
        return ""


def doc_files(patterns: list[str], rng: random.Random, limit_files: int) -> list[str]:
    files = sorted({f for p in patterns for f in glob.glob(p, recursive=True) if os.path.isfile(f)})
    rng.shuffle(files)
    out = []
    for path in files[:limit_files]:
        text = read_text(path)
        # Markdown/reST markup: headings, code fences, link targets, directive lines.
        text = re.sub(r"```.*?```", "\n\n", text, flags=re.S)
        text = "\n".join("" if re.match(r"\s*([#=*\-~^`.:]{3,}|\.\. |#|\* \* )", line) else line
                         for line in text.splitlines())
        text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", text)
        out.extend(chunks(text, rng))
    return out


def man_pages(rng: random.Random, limit_files: int) -> list[str]:
    files = sorted(glob.glob("/usr/share/man/man1/*.gz"))
    rng.shuffle(files)
    # Most pages here are gcloud's (16.6k of 18k): a tenth of the sample at most, the rest other tools.
    cloud = [f for f in files if os.path.basename(f).startswith("gcloud")]
    files = [f for f in files if not os.path.basename(f).startswith("gcloud")] + cloud[: limit_files // 10]
    out = []
    for path in files[:limit_files]:
        lines = []
        for line in read_text(path).splitlines():
            if line.startswith((".", "'")):  # requests: keep the text of .B/.I/.SH-like ones
                m = re.match(r"\.(B|I|BR|IR|RB|RI)\s+(.*)", line)
                if m:
                    lines.append(m.group(2).replace('"', ""))
                elif re.match(r"\.(PP|LP|P|SH|SS|sp|br|IP|TP|HP|RS|RE)\b", line):
                    lines.append("")
                continue
            lines.append(line)
        text = _TROFF_ESC.sub("", "\n".join(lines)).replace("\\-", "-").replace("\\", "")
        out.extend(chunks(text, rng))
    return out


def session_texts(rng: random.Random) -> list[str]:
    out = []
    for path in sorted(glob.glob(os.path.join(SESSIONS, "**", "*.jsonl"), recursive=True)):
        with open(path, encoding="utf-8") as fh:
            for line in fh:
                try:
                    entry = json.loads(line)
                except ValueError:
                    continue
                message = entry.get("message")
                if not isinstance(message, dict) or entry.get("type") not in ("user", "assistant"):
                    continue
                content = message.get("content")
                blocks = [content] if isinstance(content, str) else [
                    b.get("text") or b.get("thinking") or "" for b in content or []
                    if isinstance(b, dict) and b.get("type") in ("text", "thinking")]
                for block in blocks:
                    if block and not block.lstrip().startswith("<"):  # command/system wrappers
                        out.extend(chunks(block, rng))
    return out


def bench_texts() -> list[str]:
    data = distill_static.load_set(os.path.join(ROOT, "bench", "data"))
    assert data is not None
    bullets, queries = data
    return [b["content"] for b in bullets] + [q["prompt"] for q in queries if q["split"] == "tune"]


def excluded() -> set[str]:
    """Texts that must not be trained on: bench test prompts, held-out prompts and held-out lessons
    that are not bench lessons (the brief puts the bench lessons in the corpus)."""
    bench = distill_static.load_set(os.path.join(ROOT, "bench", "data"))
    assert bench is not None
    keep = {norm_key(b["content"]) for b in bench[0]}
    out = {norm_key(q["prompt"]) for q in bench[1] if q["split"] != "tune"}
    heldout = os.path.join(ROOT, "bench", "data", "heldout")
    if os.path.exists(os.path.join(heldout, "queries.json")):  # read whole: prompts without a relevant lesson too
        with open(os.path.join(heldout, "bullets.json"), encoding="utf-8") as fh:
            out |= {norm_key(b["content"]) for b in json.load(fh)["bullets"]} - keep
        with open(os.path.join(heldout, "queries.json"), encoding="utf-8") as fh:
            out |= {norm_key(q["prompt"]) for q in json.load(fh)}
    return out


def build_corpus(out: str, size: int, seed: int = 0) -> dict:
    rng = random.Random(seed)
    site = os.path.join(ROOT, ".venv", "lib", "python3.11", "site-packages")
    stdlib = [sysconfig.get_paths()["stdlib"]]  # the running Python's standard library
    started = time.perf_counter()
    # (name, texts, cap): caps keep one kind of text from dominating; bench and sessions go in whole.
    sources = [
        ("bench_lessons_and_tune_prompts", bench_texts(), None),
        ("learning_corpus_sessions", session_texts(rng), None),
        ("site_packages_docstrings", py_docstrings(site, rng, 4000), 0.25),
        ("site_packages_docs", doc_files([os.path.join(site, "**", e) for e in ("*.md", "*.rst", "*.txt")],
                                         rng, 2000), 0.08),
        ("pyenv_stdlib_docstrings", py_docstrings(stdlib[0], rng, 3000) if stdlib else [], 0.25),
        ("usr_share_doc", doc_files(["/usr/share/doc/**/*.md", "/usr/share/doc/**/*.txt", "/usr/share/doc/**/README*",
                                     "/usr/share/doc/**/NEWS*", "/usr/share/doc/**/changelog*"], rng, 3000), 0.12),
        ("man1_pages", man_pages(rng, 3000), 0.20),
    ]
    banned = excluded()
    seen: set[str] = set()
    texts: list[str] = []
    stats = {}
    for name, items, cap in sources:
        rng.shuffle(items)
        limit = len(items) if cap is None else int(cap * size)
        kept = dropped = 0
        for text in items:
            if kept >= limit or len(texts) >= size:
                break
            key = norm_key(text)
            if key in banned:
                dropped += 1
                continue
            if key in seen:
                continue
            seen.add(key)
            texts.append(" ".join(text.split()))
            kept += 1
        stats[name] = {"candidates": len(items), "kept": kept, "dropped_as_evaluation_text": dropped}
    rng.shuffle(texts)  # any prefix is then a fair sample: `fit --partial` can use the parts encoded so far
    with open(out, "w", encoding="utf-8") as fh:
        fh.write("\n".join(texts) + "\n")
    words = [len(t.split()) for t in texts]
    return {"path": shown(out), "texts": len(texts), "sources": stats, "words_mean": round(statistics.fmean(words), 1),
            "words_median": statistics.median(words), "build_s": round(time.perf_counter() - started, 1)}


def read_corpus(path: str) -> list[str]:
    with open(path, encoding="utf-8") as fh:
        return [line.rstrip("\n") for line in fh if line.strip()]


# -- targets -----------------------------------------------------------------------------------------


def targets(corpus: str, out: str, part: int = 4096) -> dict:
    """Full-model embeddings of the corpus, (n, 384) float32, in parts so an interrupted run resumes."""
    texts = read_corpus(corpus)
    enc = semantic.encoder()
    started = time.perf_counter()
    parts = []
    for n, start in enumerate(range(0, len(texts), part)):
        path = f"{out}.part{n:03d}.npy"
        if not os.path.exists(path):
            np.save(path, enc.encode(texts[start : start + part], batch_size=64))
            print(f"{start + part} / {len(texts)} at {time.perf_counter() - started:.0f} s", flush=True)
        parts.append(path)
    np.save(out, np.concatenate([np.load(p) for p in parts]))
    for p in parts:
        os.remove(p)
    return {"texts": len(texts), "encode_s": round(time.perf_counter() - started, 1)}


# -- fit ---------------------------------------------------------------------------------------------


def pca_map(raw: np.ndarray, vocab: list[str], dim: int) -> tuple[np.ndarray, np.ndarray]:
    """(mean, matrix): `distill_static.project`'s map before token weights, (x - mean) @ matrix."""
    real = np.array([not (t.startswith("[unused") or t == "[PAD]") for t in vocab]) & raw.any(1)
    mean = raw[real].mean(0)
    eigval, eigvec = np.linalg.eigh(np.cov((raw[real] - mean).T.astype(np.float64)))
    order = np.argsort(eigval)[::-1][:dim]
    axes = eigvec[:, order]
    axes *= np.sign(axes[np.abs(axes).argmax(0), np.arange(dim)])
    return mean, axes / eigval[order] ** 0.25


def count_matrix(texts: list[str], table: static_embed.Table):
    """Sparse (texts × vocab) token counts, tokenised exactly as the runtime does (`Table.token_ids`)."""
    from scipy import sparse

    indptr, indices = [0], []
    for text in texts:
        ids = table.token_ids(text)
        indices.extend(ids)
        indptr.append(len(indices))
    data = np.ones(len(indices), dtype=np.float64)
    matrix = sparse.csr_matrix((data, np.array(indices), np.array(indptr)), shape=(len(texts), table.rows))
    matrix.sum_duplicates()
    return matrix


def block_cg(a, rhs: np.ndarray, lam: float, x0: np.ndarray, iters: int, tol: float = 1e-4) -> tuple[np.ndarray, int]:
    """Solve (AᵀA + λI) X = rhs column-wise by conjugate gradients, all columns at once (each column
    keeps its own step sizes; the sparse products are shared)."""
    at = a.T.tocsr()

    def op(x: np.ndarray) -> np.ndarray:
        return at @ (a @ x) + lam * x

    x = x0.copy()
    r = rhs - op(x)
    p = r.copy()
    rs = (r * r).sum(0)
    start = np.sqrt(rs).max()
    for it in range(1, iters + 1):
        ap = op(p)
        alpha = rs / np.maximum((p * ap).sum(0), 1e-30)
        x += p * alpha
        r -= ap * alpha
        new = (r * r).sum(0)
        if np.sqrt(new).max() < tol * start:
            return x, it
        p = r + p * (new / np.maximum(rs, 1e-30))
        rs = new
    return x, iters


def fit_rounds(counts, e0: np.ndarray, y: np.ndarray, lam: float, rounds: int, iters: int):
    """Yield (table, log) after each round. E = E0 + Δ minimising ||A(E0 + Δ) - Y||² + λ||Δ||², A =
    counts with rows divided by the norm of each text's sum under the current table; each further
    round recomputes those norms with the fitted table and refits (warm-started)."""
    from scipy import sparse

    table = e0.astype(np.float64)
    for _ in range(rounds):
        norms = np.linalg.norm(counts @ table, axis=1)
        a = (sparse.diags(1.0 / np.maximum(norms, 1e-9)) @ counts).tocsr()
        before = a @ table
        cos0 = (before * y).sum(1) / np.maximum(np.linalg.norm(before, axis=1), 1e-9)
        residual = y - a @ e0  # Δ is relative to E0 (the prior)
        started = time.perf_counter()
        delta, it = block_cg(a, a.T @ residual, lam, table - e0, iters)
        table = e0 + delta
        fit = a @ table
        cos = (fit * y).sum(1) / np.maximum(np.linalg.norm(fit, axis=1), 1e-9)
        yield table.astype(np.float32), {
            "cg_iters": it, "seconds": round(time.perf_counter() - started, 1),
            "train_mean_cos_before": round(float(cos0.mean()), 4), "train_mean_cos_after": round(float(cos.mean()), 4)}


def split_metrics(directory: str | None, encoder=None, splits: tuple[str, ...] | None = None) -> dict:
    """recall@5 / MRR (pure cosine) on bench tune, bench test and held-out; `directory` None = full model."""
    result = {}
    for name, path, split in (("bench_tune", "bench/data", "tune"), ("bench_test", "bench/data", "test"),
                              ("heldout_paraphrase", "bench/data/heldout", None)):
        data = distill_static.load_set(os.path.join(ROOT, path))
        if data is None or (splits is not None and name not in splits):
            continue
        bullets, queries = data
        queries = [q for q in queries if split is None or q.get("split") == split]
        if directory is None:
            lessons = encoder.encode([b["content"] for b in bullets])
            prompts = encoder.encode([q["prompt"] for q in queries])
        else:
            table = static_embed.Table(directory)
            lessons = table.embed_many(b["content"] for b in bullets)
            prompts = table.embed_many(q["prompt"] for q in queries)
            table.close()
        result[name] = {"prompts": len(queries), **distill_static.ranking_metrics(bullets, queries, lessons, prompts)}
    return result


def fit(args: argparse.Namespace) -> dict:
    directory = semantic.model_dir()
    if directory is None:
        raise SystemExit(f"the model package is missing: {semantic.missing()}")
    vocab_path = os.path.join(directory, "vocab.txt")
    with open(vocab_path, encoding="utf-8") as fh:
        vocab = [line.rstrip("\n") for line in fh]
    raw = np.load(args.raw)
    e0 = distill_static.project(raw, vocab, DIM)
    mean, matrix = pca_map(raw, vocab, DIM)
    texts = read_corpus(args.corpus)
    if args.partial and not os.path.exists(args.targets):  # the parts `targets` has written so far
        full = np.concatenate([np.load(p) for p in sorted(glob.glob(args.targets + ".part*.npy"))])
        texts = texts[: len(full)]
    else:
        full = np.load(args.targets)
    assert len(full) == len(texts), "targets do not match the corpus: rerun `targets`"
    work = args.out + ".work"
    distilled = os.path.join(work, "distilled")
    distill_static.write_table(distilled, e0, "int8", vocab_path, {"fit": "none (distilled)"})
    table = static_embed.Table(distilled)
    started = time.perf_counter()
    counts = count_matrix(texts, table)
    table.close()
    keep = np.asarray(counts.sum(1)).ravel() > 0  # texts with no known token have no row to fit
    counts, full = counts[keep], full[keep]
    tokenise_s = time.perf_counter() - started
    variants = {}
    # "table_map": the rows' own map (centred on the token mean); "corpus_centred": centred on the
    # corpus's mean sentence instead, so the direction every sentence shares does not dominate Y.
    y_variants = {"table_map": lambda: (full - mean) @ matrix,
                  "corpus_centred": lambda: (full - full.mean(0)) @ matrix}
    for label in args.target_maps:
        y = y_variants[label]()
        y = y / np.linalg.norm(y, axis=1, keepdims=True)
        for lam in args.lambdas:
            started = time.perf_counter()
            log = []
            for rounds, (rows, entry) in enumerate(fit_rounds(counts, e0, y, lam, args.rounds, args.iters), 1):
                log.append(entry)
                name = f"{label}_lam{lam:g}_r{rounds}"
                out = os.path.join(work, name)
                distill_static.write_table(out, rows, "int8", vocab_path, {})
                variants[name] = {"lambda": lam, "rounds": rounds, "target": label,
                                  "fit_s": round(time.perf_counter() - started, 1), "rounds_log": list(log),
                                  "tune": split_metrics(out, splits=("bench_tune",))["bench_tune"]}
                print(name, json.dumps(variants[name]), flush=True)
    best = max(variants, key=lambda n: (variants[n]["tune"]["mrr"], variants[n]["tune"]["recall@5"]))
    chosen = variants[best]
    rows = np.load(os.path.join(work, best, "table.npy")).astype(np.float32)  # already int8: rewrite as is
    with open(os.path.join(work, best, "meta.json"), encoding="utf-8") as fh:
        scale = json.load(fh)["scale"]
    with open(os.path.join(directory, "model.safetensors"), "rb") as fh:
        import hashlib

        digest = hashlib.sha256(fh.read()).hexdigest()
    meta = distill_static.write_table(args.out, rows * scale, "int8", vocab_path, {
        "model": semantic.MODEL, "model_sha256": digest, "pooling": "mean([CLS] token [SEP])",
        "pca": "centred, half-whitened", "weights": "log1p(rank - 1995) / log(vocab)",
        "fit": "ridge toward the distilled rows: min ||A(E0+D) - Y||^2 + lambda ||D||^2, A = token counts / "
               "norm of the text's runtime sum, Y = full MiniLM sentence embeddings through the table's PCA map, "
               "normalised; block CG; rounds recompute the norms",
        "fit_lambda": chosen["lambda"], "fit_rounds": chosen["rounds"], "fit_target": chosen["target"],
        "fit_corpus_texts": int(counts.shape[0]), "fit_chosen_on": "bench/data tune split, pure-cosine MRR",
        "fit_script": "scripts/fit_static.py"})
    encoder = semantic.encoder()
    result = {
        "when": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "corpus": {"path": shown(args.corpus), "texts_used": int(counts.shape[0]), "tokens": int(counts.sum()),
                   "vocab_rows_seen": int((np.asarray(counts.sum(0)).ravel() > 0).sum()),
                   "tokenise_s": round(tokenise_s, 1)},
        "chosen": best, "table": shown(args.out), "table_scale": meta["scale"],
        "grid": variants,
        "metrics_pure_cosine": {"full_minilm": split_metrics(None, encoder),
                                "distilled_d256_int8": split_metrics(distilled),
                                "fitted_d256_int8": split_metrics(args.out)},
    }
    if os.path.exists(args.corpus + ".json"):
        with open(args.corpus + ".json", encoding="utf-8") as fh:
            result["corpus"]["build"] = json.load(fh)
    if args.partial and not os.path.exists(args.targets):
        with open(os.path.join(os.path.dirname(args.targets), "targets.log"), encoding="utf-8") as fh:
            progress = fh.read().split("\n")
        result["targets"] = {"partial": True, "texts_encoded": int(len(full)), "encoder_progress_log": progress[-2:]}
    elif os.path.exists(args.targets + ".json"):
        with open(args.targets + ".json", encoding="utf-8") as fh:
            result["targets"] = json.load(fh)
    with open(args.results, "w", encoding="utf-8") as fh:
        json.dump(result, fh, indent=1)
        fh.write("\n")
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    c = sub.add_parser("corpus")
    c.add_argument("--out", default=os.path.join(STATIC, "corpus.txt"))
    c.add_argument("--size", type=int, default=90_000)
    t = sub.add_parser("targets")
    t.add_argument("--corpus", default=os.path.join(STATIC, "corpus.txt"))
    t.add_argument("--out", default=os.path.join(STATIC, "targets.npy"))
    f = sub.add_parser("fit")
    f.add_argument("--corpus", default=os.path.join(STATIC, "corpus.txt"))
    f.add_argument("--targets", default=os.path.join(STATIC, "targets.npy"))
    f.add_argument("--raw", default=os.path.join(STATIC, "raw.npy"))
    f.add_argument("--lambdas", type=lambda s: [float(x) for x in s.split(",")], default=[0.01, 0.03, 0.1, 0.3, 1.0])
    f.add_argument("--rounds", type=int, default=2, help="each round's table is a grid point")
    f.add_argument("--iters", type=int, default=150)
    f.add_argument("--target-maps", type=lambda s: s.split(","), default=["table_map", "corpus_centred"])
    f.add_argument("--partial", action="store_true", help="use the target parts written so far")
    f.add_argument("--out", default=os.path.join(STATIC, "minilm-static-d256-int8-fit"))
    f.add_argument("--results", default=os.path.join(ROOT, "bench", "results", "static_fit.json"))
    args = parser.parse_args()
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    if args.command == "corpus":
        result = build_corpus(args.out, args.size)
        with open(args.out + ".json", "w", encoding="utf-8") as fh:
            json.dump(result, fh, indent=1)
    elif args.command == "targets":
        result = targets(args.corpus, args.out)
        with open(args.out + ".json", "w", encoding="utf-8") as fh:
            json.dump(result, fh, indent=1)
    else:
        result = fit(args)
        result = {k: result[k] for k in ("chosen", "metrics_pure_cosine")}
    print(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
