"""Static embedding table: a missing or broken table means None (the caller stays lexical), the
hook path reads only the rows it needs and never imports NumPy, its vocabulary index agrees with the
tokenizer's dict, the stdlib scorer finds the exact best, and a table distilled from the installed
MiniLM orders clear sentence pairs the way the full model does."""

import json
import math
import os
import random
import subprocess
import sys

import pytest

from ace_engine.core import log
from ace_engine.embed import semantic, static_embed
from benchutil import script_module

np = pytest.importorskip("numpy")
needs_model = pytest.mark.skipif(not semantic.available(), reason="semantic extra (MiniLM package) not installed")

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TOY_VOCAB = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "the", "cache", "stale", "##s", "save", "date", "utc",
             "time", "##zone", "push", "branch", "upstream", "tests", "run", "memory", "export"]


def distiller():
    return script_module(os.path.join(ROOT, "scripts", "distill_static.py"), "distill_static")


def toy_table(path, dtype, dim=64, seed=3):
    """A table in the real format (written by the real writer) over a 20-token vocabulary."""
    directory = path / f"toy-{dtype}"
    directory.mkdir()
    vocab = path / f"vocab-{dtype}.txt"
    vocab.write_text("\n".join(TOY_VOCAB) + "\n", encoding="utf-8")
    rows = np.random.default_rng(seed).normal(size=(len(TOY_VOCAB), dim)).astype(np.float32)
    distiller().write_table(str(directory), rows, dtype, str(vocab), {"model": "toy"})
    return str(directory), rows


@pytest.fixture(autouse=True)
def _fresh_tables(monkeypatch):
    monkeypatch.setattr(static_embed, "_tables", {})


def test_missing_or_broken_table_yields_none(tmp_path):
    assert static_embed.load(str(tmp_path / "absent")) is None
    assert static_embed.embed("stale numbers after save", str(tmp_path / "absent")) is None
    assert static_embed.load() is not None  # the default place is the table shipped in the package
    directory, _ = toy_table(tmp_path, "int8")
    table_file = os.path.join(directory, "table.npy")
    with open(table_file, "r+b") as fh:
        fh.truncate(os.path.getsize(table_file) - 64)  # a row short: the header no longer fits
    assert static_embed.load(directory) is None
    assert any("static embedding table" in line for line in log.tail(20, level="WARN"))
    meta = os.path.join(directory, "meta.json")
    with open(meta, "w", encoding="utf-8") as fh:
        json.dump({"format": 99}, fh)
    static_embed._tables.clear()
    assert static_embed.load(directory) is None


@pytest.mark.parametrize("dtype", ["int8", "float16"])
def test_stdlib_rows_match_the_numpy_memory_map(tmp_path, dtype):
    directory, rows = toy_table(tmp_path, dtype)
    table = static_embed.load(directory)
    assert table is not None and table.dim == 64 and table.rows == len(TOY_VOCAB)
    matrix = table.matrix()
    assert isinstance(matrix, np.memmap) and matrix.dtype == np.dtype(dtype)
    values = matrix.astype(np.float32) * table.scale
    assert np.allclose(values, rows, atol=0.02 * np.abs(rows).max())  # int8 / float16 rounding only
    assert table.row(5) == matrix[5].tolist()
    text = "The stale caches, the stale save: run tests!"
    assert table.token_ids(text) == [4, 6, 5, 7, 4, 6, 8, 17, 16]  # unknown pieces (punctuation) dropped
    ours = table.embed(text)
    expected = matrix[[4, 6, 5, 7, 4, 6, 8, 17, 16]].astype(np.float64).sum(0)
    assert np.allclose(ours, expected / np.linalg.norm(expected), atol=1e-9)
    assert math.isclose(sum(x * x for x in ours), 1.0, rel_tol=1e-9)
    assert np.allclose(table.embed_many([text, "???", ""])[0], ours, atol=1e-6)
    assert not table.embed_many(["???"]).any()
    assert table.embed("??? !!!") is None and table.embed("") is None


def test_hook_path_reads_rows_without_numpy(tmp_path):
    directory, _ = toy_table(tmp_path, "int8")
    code = ("import sys\n"
            "import ace_engine.embed.static_embed as s\n"
            f"v = s.embed('stale cache after save', {directory!r})\n"
            "assert v is not None and len(v) == 64\n"
            "print('numpy' in sys.modules)\n")
    out = subprocess.run([sys.executable, "-I", "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_vocab_index_agrees_with_the_tokenizer_dict(tmp_path):
    source = os.path.join(semantic.model_dir(), "vocab.txt") if semantic.model_dir() else None
    if source is None:
        source = str(tmp_path / "vocab.txt")
        with open(source, "w", encoding="utf-8") as fh:
            fh.write("\n".join(TOY_VOCAB) + "\n")
    directory = tmp_path / "index"
    directory.mkdir()
    with open(source, encoding="utf-8") as src, open(directory / "vocab.txt", "w", encoding="utf-8") as dst:
        dst.write(src.read())
    static_embed.write_vocab_index(str(directory))
    mapped = static_embed.MappedVocab(str(directory / "vocab.txt"), str(directory / "vocab.idx"))
    reference = semantic.WordPiece(str(directory / "vocab.txt"))
    assert len(mapped) == len(reference.vocab)
    assert all(mapped[token] == i for token, i in reference.vocab.items())
    for absent in ("notatokenatall", "##qqqq", "", "Cache"):
        assert absent not in mapped and mapped.get(absent) is None
    tokenizer = static_embed._Tokenizer(mapped)
    for text in ["naïve café résumé 東京 ünïcödé", "pushing my worktree branch doesn't work", "x" * 150, " \t\n"]:
        assert tokenizer.encode(text) == reference.encode(text)
    (directory / "vocab.idx").write_bytes(b"not an index")
    with pytest.raises(ValueError):
        static_embed.MappedVocab(str(directory / "vocab.txt"), str(directory / "vocab.idx"))


def test_popcount_first_pass_then_exact_rescoring_finds_the_best():
    rng = random.Random(7)
    dim, n = 256, 3000
    vectors = []
    for _ in range(n):
        v = [rng.gauss(0, 1) for _ in range(dim)]
        norm = math.sqrt(sum(x * x for x in v))
        vectors.append([x / norm for x in v])
    codes = b"".join(static_embed.pack_code(v) for v in vectors)
    assert len(codes) == n * dim // 8
    target = 1234
    query = [x + rng.gauss(0, 0.02) for x in vectors[target]]  # a near copy of one stored vector
    distances = static_embed.hamming(static_embed.pack_code(query), codes, dim)
    compared = static_embed.HAMMING_BYTES * 8  # the first 248 dimensions: a distance fits one byte
    naive = [sum((a > 0) != (b > 0) for a, b in zip(query[:compared], v[:compared], strict=True))
             for v in vectors[:200]]
    assert isinstance(distances, bytes) and list(distances[:200]) == naive
    best = static_embed.nearest(distances, 50)
    cut = sorted(distances)[49]
    assert len(best) == 50 and all(distances[i] <= cut for i in best) and target in best
    top = static_embed.rescore(query, ((i, vectors[i]) for i in best), 3)
    exact = max(range(n), key=lambda i: sum(a * b for a, b in zip(query, vectors[i], strict=True)))
    assert top[0][0] == exact == target and top[0][1] > top[1][1]
    assert static_embed.nearest([3, 1, 2], 10) == [0, 1, 2]
    assert static_embed.nearest(bytes([3, 1, 2, 1]), 2) == [1, 3] == static_embed.nearest([3, 1, 2, 1], 2)
    assert static_embed.nearest(bytes([2, 1, 2, 2, 0]), 3) == [0, 1, 4]  # one of the tied 2s, the first
    for small in (72, 392):  # a code shorter than the compared bytes, and one longer
        short = [[rng.gauss(0, 1) for _ in range(small)] for _ in range(300)]
        packed = b"".join(static_embed.pack_code(v) for v in short)
        upto = min(small, compared)
        expected = [sum((a > 0) != (b > 0) for a, b in zip(short[0][:upto], v[:upto], strict=True)) for v in short]
        assert list(static_embed.hamming(static_embed.pack_code(short[0]), packed, small)) == expected
    opposite = [-x for x in vectors[0]]  # the largest distance must not wrap around a byte
    assert static_embed.hamming(static_embed.pack_code(opposite), codes, dim)[0] == compared == 248


TRIPLES = [  # (anchor, close in meaning, unrelated): few shared words, the full model clearly agrees
    ("the dashboard keeps showing stale numbers after I save",
     "invalidate the cached value whenever the record is written", "use a feature branch for every pull request"),
    ("customers see tomorrow's date on late evening orders",
     "store timestamps in UTC and convert to the local timezone for display", "the login page needs a bigger logo"),
    ("the service runs out of memory while exporting the report",
     "stream the export in chunks to keep memory bounded", "rename the variable to snake case"),
    ("git refuses to push my new branch", "set the upstream remote branch when pushing for the first time",
     "the invoice total is rounded wrong"),
    ("how do I run the test suite", "run the tests with pytest from the repository root",
     "the css grid breaks on mobile"),
    ("the database migration failed in production", "review every schema migration before deploying it",
     "the font looks blurry in the sidebar"),
    ("my API requests are rejected with an expired token", "refresh the access token before it expires",
     "sort the table by the date column"),
]


@pytest.mark.slow  # runs the full model over a sample of its vocabulary (10 s alone)
@needs_model
def test_distilled_table_orders_pairs_like_the_full_model(tmp_path):
    """Distil a sample of the vocabulary (every 20th token, plus the tokens of these sentences —
    the full table takes ~80 s) with the real recipe, then compare against the full model."""
    distill = distiller()
    enc = semantic.encoder()
    vocab = sorted(enc.tokenizer.vocab, key=enc.tokenizer.vocab.get)
    texts = [t for triple in TRIPLES for t in triple]
    wanted = {i for t in texts for i in enc.tokenizer.encode(t)}
    ids = np.array(sorted(wanted | set(range(1000, len(vocab), 20))))
    rows = distill.project(distill.forward_vocab(enc, ids), vocab, 256)
    directory = str(tmp_path / "table")
    distill.write_table(directory, rows, "int8", os.path.join(semantic.model_dir(), "vocab.txt"), {})
    table = static_embed.load(directory)
    full = enc.encode(texts)
    for n, (anchor, close, far) in enumerate(TRIPLES):
        f_anchor, f_close, f_far = full[3 * n : 3 * n + 3]
        assert f_anchor @ f_close > f_anchor @ f_far + 0.15, anchor  # the full model: clearly ordered
        s_anchor, s_close, s_far = (table.embed(t) for t in (anchor, close, far))
        dot = lambda a, b: sum(x * y for x, y in zip(a, b, strict=True))  # noqa: E731
        assert dot(s_anchor, s_close) > dot(s_anchor, s_far), anchor
