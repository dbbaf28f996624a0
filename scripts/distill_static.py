"""Distil a static embedding table from the installed all-MiniLM-L6-v2, and measure it.

    python scripts/distill_static.py build --out DIR [--dim 256] [--dtype int8] [--raw CACHE.npy]
    python scripts/distill_static.py measure [--work DIR] [--raw CACHE.npy] [--runs 15]
                                             [--out bench/results/static_embed.json]

`build` (the model2vec recipe, NumPy only, no torch): every token of the WordPiece vocabulary is run
through MiniLM as `[CLS] token [SEP]` (batched) with `semantic.Encoder`'s own forward pass and
mean-pooled; the vectors are centred and projected on their top-D principal axes, each axis divided
by the square root of its standard deviation (half whitening: without it the first axes, which every
token shares, drown the rest; full whitening over-weights noise); each row is then multiplied by a
token weight that grows with the log of the token's rank in the vocabulary (BERT's vocabulary lists
words roughly by frequency, so frequent words weigh little, as SIF/idf would have them) and stored
as float16 or int8 with one scale for the whole table. The choices (D, whitening, weighting) were
picked on the tune split of `bench/data/` only. `--raw` caches the pooled forward outputs (vocab ×
384 float32, 47 MB) so further variants skip the ~80 s forward pass.

`measure` builds D=128/256 × float16/int8 under --work (a temp dir by default; nothing is written to
the repository but the results file) and reports: build time and sizes; recall@5 and MRR of pure
cosine ranking per prompt's scope (project + global lessons) for the full model and every table, on
`bench/data/` and on `bench/data/heldout/` when present; Spearman correlation of static vs full
cosines over every in-scope (prompt, lesson) pair; whole-process wall time and peak RSS of
hook-like `python -I -c` processes (median of --runs, interleaved) against bare `python -I -c pass`;
and scoring a query against 10,000 stored vectors (NumPy int8/float16, and the stdlib path:
sign-code popcount + exact rescoring), with how often that path keeps the exact top 5.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "src"))

from ace_engine.embed import semantic, static_embed  # noqa: E402

WEIGHT_FIRST_WORD = 1996  # BERT uncased: [PAD], [unused*], [UNK]…, single characters, then words by frequency
K = 5


# -- build -------------------------------------------------------------------------------------------


def forward_vocab(enc: semantic.Encoder, ids: np.ndarray | None = None, batch: int = 512) -> np.ndarray:
    """(vocab, 384) float32: MiniLM's mean-pooled output for `[CLS] token [SEP]`, for every token
    (or only `ids`; other rows stay zero — the tests distil a sample to stay fast)."""
    rows = len(enc.tokenizer.vocab)
    todo = np.arange(rows) if ids is None else np.unique(ids)
    out = np.zeros((rows, semantic.DIM), dtype=np.float32)
    for start in range(0, len(todo), batch):
        chunk = todo[start : start + batch]
        seq = np.stack([np.full(len(chunk), enc.tokenizer.cls), chunk, np.full(len(chunk), enc.tokenizer.sep)], 1)
        out[chunk] = enc._forward(seq, np.ones(seq.shape, dtype=np.float32))
    return out


def token_weights(vocab: list[str]) -> np.ndarray:
    rank = np.maximum(np.arange(len(vocab), dtype=np.float64) - (WEIGHT_FIRST_WORD - 1), 1.0)
    return np.log1p(rank) / np.log(len(vocab))


def project(raw: np.ndarray, vocab: list[str], dim: int) -> np.ndarray:
    """Centred, PCA'd to `dim`, half-whitened, weighted rows (float32). Fitted on the real tokens
    that have an output (not [PAD] / [unused*], not rows left zero)."""
    real = np.array([not (t.startswith("[unused") or t == "[PAD]") for t in vocab]) & raw.any(1)
    mean = raw[real].mean(0)
    eigval, eigvec = np.linalg.eigh(np.cov((raw[real] - mean).T.astype(np.float64)))
    order = np.argsort(eigval)[::-1][:dim]
    axes = eigvec[:, order]
    axes *= np.sign(axes[np.abs(axes).argmax(0), np.arange(dim)])  # a fixed sign per axis: reproducible
    projected = np.where(raw.any(1, keepdims=True), (raw - mean) @ axes / eigval[order] ** 0.25, 0.0)
    return (projected * token_weights(vocab)[:, None]).astype(np.float32)


def write_table(directory: str, rows: np.ndarray, dtype: str, vocab_path: str, meta: dict) -> dict:
    os.makedirs(directory, exist_ok=True)
    if dtype == "int8":
        scale = float(np.abs(rows).max() / 127.0)
        stored = np.clip(np.rint(rows / scale), -127, 127).astype(np.int8)
    else:
        scale, stored = 1.0, rows.astype(np.float16)
    np.save(os.path.join(directory, "table.npy"), stored)
    shutil.copyfile(vocab_path, os.path.join(directory, "vocab.txt"))
    static_embed.write_vocab_index(directory)
    with open(os.path.join(directory, "table.npy"), "rb") as fh:
        digest = hashlib.sha256(fh.read()).hexdigest()  # vectors.model_key: a new table re-embeds
    meta = {"format": static_embed.FORMAT, "name": os.path.basename(os.path.normpath(directory)), "dim": rows.shape[1],
            "dtype": dtype, "scale": scale, "rows": rows.shape[0], "table_sha256": digest, **meta}
    with open(os.path.join(directory, "meta.json"), "w", encoding="utf-8") as fh:
        json.dump(meta, fh, indent=1)
    return meta


def raw_outputs(cache: str | None) -> tuple[np.ndarray, float]:
    """The forward outputs (from the cache when given and present) and the seconds they took."""
    if cache and os.path.exists(cache):
        return np.load(cache), 0.0
    enc = semantic.encoder()
    started = time.perf_counter()
    raw = forward_vocab(enc)
    seconds = time.perf_counter() - started
    if cache:
        np.save(cache, raw)
    return raw, seconds


def build(out: str, dim: int, dtype: str, cache: str | None) -> dict:
    directory = semantic.model_dir()
    if directory is None:
        raise SystemExit(f"the model package is missing: {semantic.missing()}")
    vocab_path = os.path.join(directory, "vocab.txt")
    with open(vocab_path, encoding="utf-8") as fh:
        vocab = [line.rstrip("\n") for line in fh]
    raw, forward_s = raw_outputs(cache)
    started = time.perf_counter()
    rows = project(raw, vocab, dim)
    with open(os.path.join(directory, "model.safetensors"), "rb") as fh:
        digest = hashlib.sha256(fh.read()).hexdigest()
    meta = write_table(out, rows, dtype, vocab_path, {
        "model": semantic.MODEL, "model_sha256": digest, "pooling": "mean([CLS] token [SEP])",
        "pca": "centred, half-whitened", "weights": "log1p(rank - 1995) / log(vocab)"})
    meta["forward_s"] = round(forward_s, 1)
    meta["project_write_s"] = round(time.perf_counter() - started, 1)
    return meta


# -- measure: quality --------------------------------------------------------------------------------


def load_set(directory: str) -> tuple[list[dict], list[dict]] | None:
    try:
        with open(os.path.join(directory, "bullets.json"), encoding="utf-8") as fh:
            bullets = json.load(fh)["bullets"]
        with open(os.path.join(directory, "queries.json"), encoding="utf-8") as fh:
            queries = [q for q in json.load(fh) if q["relevant"]]
    except FileNotFoundError:
        return None
    return bullets, queries


def ranking_metrics(bullets: list[dict], queries: list[dict], lessons: np.ndarray, prompts: np.ndarray,
                    full: tuple[np.ndarray, np.ndarray] | None = None) -> dict:
    """recall@5 / MRR of cosine ranking in each prompt's scope; with `full`, Spearman of these
    cosines against the full model's over all in-scope pairs, and the mean per-prompt Spearman."""
    project_of = np.array([b["project"] for b in bullets])
    index = {b["key"]: i for i, b in enumerate(bullets)}
    recall, mrr, ours, theirs, per_prompt = [], [], [], [], []
    for n, q in enumerate(queries):
        scope = np.where((project_of == q["project"]) | (project_of == "global"))[0]
        scores = lessons[scope] @ prompts[n]
        top = scope[np.argsort(-scores, kind="stable")][:K].tolist()
        relevant = {index[key] for key in q["relevant"]}
        recall.append(len(relevant & set(top)) / len(relevant))
        mrr.append(next((1 / r for r, i in enumerate(top, 1) if i in relevant), 0.0))
        if full is not None:
            reference = full[0][scope] @ full[1][n]
            ours.append(scores)
            theirs.append(reference)
            per_prompt.append(spearman(scores, reference))
    result = {"recall@5": round(statistics.fmean(recall), 3), "mrr": round(statistics.fmean(mrr), 3)}
    if full is not None:
        result["spearman_pairs"] = round(spearman(np.concatenate(ours), np.concatenate(theirs)), 3)
        result["spearman_per_prompt"] = round(statistics.fmean(per_prompt), 3)
    return result


def spearman(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.corrcoef(np.argsort(np.argsort(a)), np.argsort(np.argsort(b)))[0, 1])


def quality(tables: dict[str, str]) -> dict:
    enc = semantic.encoder()
    result: dict = {}
    for name, path in (("bench", "bench/data"), ("heldout_paraphrase", "bench/data/heldout")):
        data = load_set(os.path.join(ROOT, path))
        if data is None:
            continue
        bullets, queries = data
        full = (enc.encode([b["content"] for b in bullets]), enc.encode([q["prompt"] for q in queries]))
        entry = {"lessons": len(bullets), "prompts": len(queries),
                 "full_minilm": ranking_metrics(bullets, queries, *full)}
        for label, directory in tables.items():
            table = static_embed.Table(directory)
            lessons = table.embed_many(b["content"] for b in bullets)
            prompts = table.embed_many(q["prompt"] for q in queries)
            entry[label] = ranking_metrics(bullets, queries, lessons, prompts, full)
            table.close()
        result[name] = entry
    return result


# -- measure: cost -----------------------------------------------------------------------------------


HWM = "\nwith open('/proc/self/status') as _f: print(next(l for l in _f if l.startswith('VmHWM')).split()[1])"


def processes(commands: dict[str, str], runs: int) -> dict:
    """Median wall ms of `python -I -c CODE` per command, runs interleaved, and peak RSS MiB as the
    process's own VmHWM (wait4's ru_maxrss would count this large parent's: a spawned child
    inherits the peak of the address space it ran in before exec)."""
    times: dict[str, list[float]] = {name: [] for name in commands}
    with open(os.devnull, "wb") as null:
        for _ in range(runs + 1):
            for name, code in commands.items():
                started = time.perf_counter()
                pid = os.posix_spawn(sys.executable, [sys.executable, "-I", "-c", code], os.environ,
                                     file_actions=[(os.POSIX_SPAWN_DUP2, null.fileno(), 1)])
                _, status = os.waitpid(pid, 0)
                if status != 0:
                    raise SystemExit(f"{name}: exit status {status}")
                times[name].append((time.perf_counter() - started) * 1000)
    peak = {name: max(int(subprocess.run([sys.executable, "-I", "-c", code + HWM], capture_output=True, text=True,
                                         check=True).stdout.split()[-1]) for _ in range(3)) / 1024
            for name, code in commands.items()}
    bare = statistics.median(times["bare"][1:])
    return {name: {"median_ms": round(statistics.median(times[name][1:]), 1),
                   "ratio_to_bare": round(statistics.median(times[name][1:]) / bare, 2),
                   "peak_rss_mib": round(peak[name], 1)} for name in commands}


def stored(vectors: np.ndarray) -> tuple[np.ndarray, np.ndarray, bytes]:
    """Lesson vectors as a hook would keep them: int8 rows with a float32 scale each, and sign codes."""
    scales = (np.abs(vectors).max(1) / 127.0).astype(np.float32)
    rows = np.rint(vectors / np.maximum(scales, 1e-12)[:, None]).astype(np.int8)
    return rows, scales, b"".join(static_embed.pack_code(v) for v in vectors.tolist())


HOOK_SCORE = """
import struct, ace_engine.embed.static_embed as s
t = s.load({table!r}); q = t.embed({prompt!r}); d = t.dim
with open({codes!r}, 'rb') as fh: codes = fh.read()
n = len(codes) * 8 // d
best = s.nearest(s.hamming(s.pack_code(q), codes, d), {m})
with open({rows!r}, 'rb', buffering=0) as fh:
    scales = struct.unpack(f'<{{n}}f', fh.read(4 * n))
    def row(i):
        fh.seek(4 * n + i * d)
        return memoryview(fh.read(d)).cast('b').tolist()
    dots = s.rescore(q, ((i, row(i)) for i in best), len(best))
top = sorted(((i, v * scales[i]) for i, v in dots), key=lambda p: -p[1])[:5]
"""


def stdlib_top(query: list[float], rows: list, scales: list, codes: bytes, dim: int, m: int) -> list[int]:
    """The hook's path: popcount top-m, exact rescoring of the int8 rows, best 5 (indices)."""
    best = static_embed.nearest(static_embed.hamming(static_embed.pack_code(query), codes, dim), m)
    dots = static_embed.rescore(query, ((i, rows[i]) for i in best), len(best))  # int8 dots, then each row's scale
    return [i for i, _ in sorted(((i, s * scales[i]) for i, s in dots), key=lambda p: -p[1])[:K]]


def scoring(table: static_embed.Table, texts: list[str], origin: list[str], repeats: int = 30) -> dict:
    """In-process: one query against 10,000 stored vectors, NumPy and stdlib; how much of the exact
    top 5 the stdlib path keeps; and recall@5 of the bench prompts when their scope's lessons sit
    among ~9,000 distractors (the latency set's variants of other projects' lessons)."""
    data = load_set(os.path.join(ROOT, "bench", "data"))
    assert data is not None
    bullets, queries = data
    vectors = table.embed_many(texts)
    prompts = table.embed_many(q["prompt"] for q in queries)
    lessons = table.embed_many(b["content"] for b in bullets)
    rows, scales, codes = stored(vectors)
    l_rows, l_scales, l_codes = stored(lessons)
    width = table.dim // 8
    as_f16 = vectors.astype(np.float16)

    def clock(fn, runs: int = repeats) -> float:
        fn()
        laps = []
        for _ in range(runs):
            started = time.perf_counter()
            fn()
            laps.append((time.perf_counter() - started) * 1000)
        return round(statistics.median(laps), 3)

    q, qlist, int_rows, fscales = prompts[0], prompts[0].tolist(), rows.tolist(), scales.tolist()
    result: dict = {"n": len(texts), "dim": table.dim,
                    "numpy_f32_ms": clock(lambda: vectors @ q),
                    "numpy_f16_to_f32_ms": clock(lambda: as_f16.astype(np.float32) @ q),
                    "numpy_int8_to_f32_ms": clock(lambda: (rows.astype(np.float32) @ q) * scales),
                    "stdlib_hamming_ms": clock(lambda: static_embed.hamming(static_embed.pack_code(qlist), codes,
                                                                              table.dim)),
                    "stdlib_exact_all_ms": clock(lambda: static_embed.rescore(qlist, enumerate(int_rows), K), 3)}
    ms = (50, 100, 200)
    for m in ms:
        result[f"stdlib_popcount{m}_rescore_ms"] = clock(
            lambda m=m: stdlib_top(qlist, int_rows, fscales, codes, table.dim, m))
    project_of = [b["project"] for b in bullets]
    index = {b["key"]: i for i, b in enumerate(bullets)}
    kept: dict[int, list[float]] = {m: [] for m in ms}
    recall: dict[str, list[float]] = {name: [] for name in ["exact", *map(str, ms)]}
    for n, query in enumerate(queries):
        qv = prompts[n].tolist()
        exact = set(np.argsort(-(vectors @ prompts[n]))[:K].tolist())
        pool = [i for i, p in enumerate(project_of) if p in (query["project"], "global")]
        others = [j for j, o in enumerate(origin) if o not in (query["project"], "global")]
        pool_rows = l_rows[pool].tolist() + rows[others].tolist()
        pool_scales = l_scales[pool].tolist() + scales[others].tolist()
        pool_codes = b"".join([l_codes[i * width:(i + 1) * width] for i in pool]
                              + [codes[j * width:(j + 1) * width] for j in others])
        pool_vectors = np.concatenate([lessons[pool], vectors[others]])
        relevant = {pool.index(index[key]) for key in query["relevant"]}
        recall["exact"].append(len(relevant & set(np.argsort(-(pool_vectors @ prompts[n]))[:K].tolist()))
                               / len(relevant))
        for m in ms:
            kept[m].append(len(exact & set(stdlib_top(qv, int_rows, fscales, codes, table.dim, m))) / K)
            fast = stdlib_top(qv, pool_rows, pool_scales, pool_codes, table.dim, m)
            recall[str(m)].append(len(relevant & set(fast)) / len(relevant))
    for m in ms:
        result[f"stdlib_popcount{m}_keeps_exact_top5"] = round(statistics.fmean(kept[m]), 3)
    result["distractors"] = len(others)
    for name, values in recall.items():
        label = "exact" if name == "exact" else f"stdlib_popcount{name}"
        result[f"recall@5_among_distractors_{label}"] = round(statistics.fmean(values), 3)
    return result


def measure(work: str, cache: str | None, runs: int, out: str) -> dict:
    tables, builds = {}, {}
    for dim in (128, 256):
        for dtype in ("float16", "int8"):
            label = f"d{dim}_{dtype}"
            tables[label] = os.path.join(work, label)
            started = time.perf_counter()
            meta = build(tables[label], dim, dtype, cache)
            builds[label] = {"forward_s": meta["forward_s"], "total_s": round(time.perf_counter() - started, 1),
                             "table_bytes": os.path.getsize(os.path.join(tables[label], "table.npy")),
                             "vocab_bytes": os.path.getsize(os.path.join(tables[label], "vocab.txt"))}
    result: dict = {"python": sys.version.split()[0], "numpy": np.__version__, "cpus": os.cpu_count(),
                    "load_average_at_start": [round(x, 2) for x in os.getloadavg()],
                    "when": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "build": builds}
    result["quality"] = quality(tables)
    sys.path.insert(0, os.path.join(ROOT, "bench"))
    import retrieval_bench  # the latency bench's own 10k-lesson generator: the same texts

    dataset, queries = retrieval_bench.load_dataset()
    texts = [content for _, content in retrieval_bench.vary(dataset, 10_000)]
    origin = [dataset["bullets"][i % len(dataset["bullets"])]["project"] for i in range(len(texts))]
    prompts = [q["prompt"] for q in queries]
    chosen = static_embed.Table(tables["d256_int8"])
    rows, scales, codes = stored(chosen.embed_many(texts))
    codes_path, rows_path = os.path.join(work, "codes.bin"), os.path.join(work, "rows.bin")
    with open(codes_path, "wb") as fh:
        fh.write(codes)
    with open(rows_path, "wb") as fh:
        fh.write(scales.astype("<f4").tobytes() + rows.tobytes())
    prompt = prompts[1]
    table_dir = tables["d256_int8"]
    embed = f"import ace_engine.embed.static_embed as s; s.embed({prompt!r}, {table_dir!r})"
    hook_imports = "import json, math, operator, re, sqlite3, ace_engine.core.log, ace_engine.retrieval.search"
    result["process"] = processes({
        "bare": "pass",
        "import_static_embed": "import ace_engine.embed.static_embed",
        "embed_stdlib_d256_int8": embed,
        "embed_stdlib_d256_float16": embed.replace("d256_int8", "d256_float16"),
        "embed_plus_score_10k_stdlib_popcount100": HOOK_SCORE.format(
            table=table_dir, prompt=prompt, codes=codes_path, rows=rows_path, m=100),
        # What the UserPromptSubmit hook imports anyway (from `-X importtime`): the increments over it.
        "hook_imports": hook_imports,
        "hook_imports_plus_embed": f"{hook_imports}\n{embed}",
        "hook_imports_plus_embed_score_10k": hook_imports + "\n" + HOOK_SCORE.format(
            table=table_dir, prompt=prompt, codes=codes_path, rows=rows_path, m=100),
        "import_numpy": "import numpy",
        "embed_numpy_mmap_d256_int8": "import ace_engine.embed.static_embed as s; "
                                      f"s.load({table_dir!r}).embed_many([{prompt!r}])",
    }, runs)
    result["process_prompt"] = prompt
    result["scoring_10k"] = {label: scoring(static_embed.Table(tables[label]), texts, origin)
                             for label in ("d256_int8", "d128_int8")}
    started = time.perf_counter()
    for p in prompts:
        chosen.embed(p)
    result["embed_in_process_ms_per_prompt"] = round((time.perf_counter() - started) * 1000 / len(prompts), 3)
    with open(out, "w", encoding="utf-8") as fh:
        json.dump(result, fh, indent=1)
        fh.write("\n")
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    b = sub.add_parser("build")
    b.add_argument("--out", default=static_embed.default_dir())
    b.add_argument("--dim", type=int, default=256)
    b.add_argument("--dtype", choices=("int8", "float16"), default="int8")
    b.add_argument("--raw")
    m = sub.add_parser("measure")
    m.add_argument("--work")
    m.add_argument("--raw")
    m.add_argument("--runs", type=int, default=15)
    m.add_argument("--out", default=os.path.join(ROOT, "bench", "results", "static_embed.json"))
    args = parser.parse_args()
    if args.command == "build":
        print(json.dumps(build(args.out, args.dim, args.dtype, args.raw), indent=1))
        return
    with tempfile.TemporaryDirectory(prefix="ace-static-") as tmp:
        work = args.work or tmp
        print(json.dumps(measure(work, args.raw or os.path.join(work, "raw.npy"), args.runs, args.out), indent=1))


if __name__ == "__main__":
    main()
