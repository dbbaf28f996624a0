"""Static sentence embeddings: a per-token table distilled from all-MiniLM-L6-v2, read by lookup.

Contract. A *table* is a directory holding
    table.npy   (vocab rows × D) int8 or float16, a plain NumPy `.npy` file
    vocab.txt   the MiniLM WordPiece vocabulary the rows are indexed by (one token a line)
    vocab.idx   a hash index over vocab.txt (`write_vocab_index`), so no process builds the dict
    meta.json   {"format": 1, "dim": D, "dtype": "int8"|"float16", "scale": s, "rows": n, ...}
built offline by `scripts/distill_static.py` (the model2vec recipe: every vocabulary token run through
MiniLM alone, mean-pooled, PCA'd to D, half-whitened, token weights folded into the rows). A text
embeds as the L2-normalised sum of its tokens' rows — no transformer pass. `load()` returns None when
the table is missing or unusable (the caller stays lexical); `embed()` returns None for a text with no
known token. Vectors are lists of floats, comparable by dot product (cosine).

Cost (measured, `bench/results/static_embed.json`). Importing this module is stdlib-only (the
tokenizer is `wordpiece.WordPiece`, stdlib-only too). `load()` reads the 0.6 MB
vocabulary index and opens the table; `embed` reads only the rows of the text's tokens (positioned
reads: they cost no resident memory, unlike a memory map here — see `Table.row`). Over what the
UserPromptSubmit hook imports anyway, import + load + embedding a prompt added ~3 ms and 1.5 MiB to a
process; NumPy is not imported on this path, since importing it alone costs ~8× a bare interpreter
start. `Table.matrix()` / `Table.embed_many()` are the batch path (NumPy memory-map,
`np.load(mmap_mode="r")`) for CLI and background work. `pack_code()` / `hamming()` / `nearest()` /
`rescore()` are the stdlib scoring path for a hook — sign-bit codes compared by popcount, then exact
dot products for the few best: ~3 ms for 10,000 stored vectors of 256 dimensions.
"""

from __future__ import annotations

import json
import math
import operator
import os
import sys

from .wordpiece import WordPiece

TYPE_CHECKING = False  # numpy types are for mypy only; numpy loads on the batch path alone
if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence
    from typing import Any

    from numpy.typing import NDArray

    Array = NDArray[Any]

FORMAT = 1
DEFAULT_NAME = "minilm-static-d256-int8"
MAX_CHARS = 4000  # a pasted log must not cost a hook seconds of tokenizing; the head says what it is
MAX_TOKENS = 512
_NPY_MAGIC = b"\x93NUMPY"
_VOCAB_MAGIC = b"ACEVOC2\0"  # 2: FNV-1a buckets (1 used zlib's CRC-32: zlib costs a hook 0.35 ms to import)
_ITEMSIZE = {"int8": 1, "float16": 2}

_tables: dict[str, Table | None] = {}


DATA_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data")


def default_dir(name: str = DEFAULT_NAME) -> str:
    """The shipped table (package data, `embed/data/<name>`; the plugin route reads it from the
    source tree). Never a path from a repository or the environment: it is code-like input."""
    return os.path.join(DATA_DIR, name)


def _fnv1a(key: bytes) -> int:
    """32-bit FNV-1a: a stable hash (unlike `hash()`), cheap for vocabulary tokens (≤ ~20 bytes)."""
    h = 0x811C9DC5
    for byte in key:
        h = ((h ^ byte) * 0x01000193) & 0xFFFFFFFF
    return h


class MappedVocab:
    """token → id read from `vocab.idx` (an open-addressing hash table, FNV-1a buckets) and
    `vocab.txt` by positioned reads: building the 30k-entry dict from vocab.txt costs a hook ~10 ms
    and reading both files whole ~0.5 ms (measured), while a prompt's ~100 lookups (WordPiece tries
    the longest pieces first) cost ~0.1 ms of `pread`s — a miss one, a hit three. Answers are
    memoised per process.

    vocab.idx: magic, u32 tokens, u32 buckets (a power of two); u32 × buckets (token id + 1, 0 =
    empty, linear probing from fnv1a(token) & (buckets - 1)); u32 × (tokens + 1) line offsets into
    vocab.txt. Little-endian; elsewhere the tokenizer builds the dict."""

    def __init__(self, txt_path: str, idx_path: str) -> None:
        if sys.byteorder != "little":
            raise ValueError(f"{idx_path}: not a vocabulary index for this machine")
        self._txt = os.open(txt_path, os.O_RDONLY)
        self._idx = os.open(idx_path, os.O_RDONLY)
        try:
            head = os.pread(self._idx, 16, 0)
            tokens, buckets = int.from_bytes(head[8:12], "little"), int.from_bytes(head[12:16], "little")
            if (head[:8] != _VOCAB_MAGIC or buckets & (buckets - 1) or buckets == 0
                    or os.fstat(self._idx).st_size != 16 + 4 * (buckets + tokens + 1)):
                raise ValueError(f"{idx_path}: not a vocabulary index of this version, or truncated")
        except (OSError, ValueError):
            self.close()
            raise
        self._offsets_at = 16 + 4 * buckets
        self._mask = buckets - 1
        self._seen: dict[str, int | None] = {}
        self.size = tokens

    def _u32(self, at: int, count: int = 1) -> memoryview:
        return memoryview(os.pread(self._idx, 4 * count, at)).cast("I")

    def get(self, token: str) -> int | None:
        if token in self._seen:
            return self._seen[token]
        key = token.encode("utf-8")
        slot = _fnv1a(key) & self._mask
        found = None
        while (entry := self._u32(16 + 4 * slot)[0]) != 0:
            start, end = self._u32(self._offsets_at + 4 * (entry - 1), 2)
            if os.pread(self._txt, end - start, start).rstrip(b"\n") == key:
                found = entry - 1
                break
            slot = (slot + 1) & self._mask
        self._seen[token] = found
        return found

    def close(self) -> None:
        for fd in (self._txt, self._idx):
            try:
                os.close(fd)
            except OSError:
                pass

    def __contains__(self, token: object) -> bool:
        return isinstance(token, str) and self.get(token) is not None

    def __getitem__(self, token: str) -> int:
        found = self.get(token)
        if found is None:
            raise KeyError(token)
        return found

    def __len__(self) -> int:
        return self.size


class _Tokenizer(WordPiece):
    """`wordpiece.WordPiece` (the same splitting and greedy longest match) over a `MappedVocab`."""

    def __init__(self, vocab: MappedVocab) -> None:  # not super().__init__: that builds the dict
        self.vocab = vocab  # type: ignore[assignment]  # only `in` and `[]` are used on it
        self.unk, self.cls, self.sep = vocab["[UNK]"], vocab["[CLS]"], vocab["[SEP]"]


def write_vocab_index(directory: str) -> str:
    """Write `vocab.idx` for the `vocab.txt` in `directory` (at build time); returns its path."""
    with open(os.path.join(directory, "vocab.txt"), "rb") as fh:
        lines = fh.read().split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    offsets = [0]
    for line in lines:
        offsets.append(offsets[-1] + len(line) + 1)
    buckets = 1 << max(4, (2 * len(lines) - 1).bit_length())  # load factor ≤ 1/2: short probes
    table = [0] * buckets
    for token_id, line in enumerate(lines):
        slot = _fnv1a(line) & (buckets - 1)
        while table[slot]:
            slot = (slot + 1) & (buckets - 1)
        table[slot] = token_id + 1
    path = os.path.join(directory, "vocab.idx")
    with open(path, "wb") as fh:
        import struct  # build time only

        fh.write(_VOCAB_MAGIC + struct.pack("<II", len(lines), buckets))
        fh.write(struct.pack(f"<{buckets}I", *table) + struct.pack(f"<{len(offsets)}I", *offsets))
    return path


class Table:
    """An opened table: the tokenizer, and the rows read on demand (positioned reads, see `row`)."""

    def __init__(self, directory: str) -> None:
        with open(os.path.join(directory, "meta.json"), encoding="utf-8") as fh:
            meta = json.load(fh)
        if meta.get("format") != FORMAT or meta.get("dtype") not in _ITEMSIZE:
            raise ValueError(f"unsupported table format {meta.get('format')!r} / {meta.get('dtype')!r}")
        self.directory = directory
        self.meta = meta
        self.dim = int(meta["dim"])
        self.rows = int(meta["rows"])
        self.dtype = str(meta["dtype"])
        self.scale = float(meta.get("scale", 1.0))
        txt, idx = os.path.join(directory, "vocab.txt"), os.path.join(directory, "vocab.idx")
        try:
            self.tokenizer: WordPiece = _Tokenizer(MappedVocab(txt, idx))
        except (OSError, ValueError):  # no index (or another byte order): the dict, ~10 ms more
            self.tokenizer = WordPiece(txt)
        if len(self.tokenizer.vocab) != self.rows:
            raise ValueError(f"vocab has {len(self.tokenizer.vocab)} tokens, table {self.rows} rows")
        self.path = os.path.join(directory, "table.npy")
        self._row_bytes = self.dim * _ITEMSIZE[self.dtype]
        self._file = open(self.path, "rb", buffering=0)  # kept open for `row`; `close()` closes it
        # The data is the file's tail: its length fixes the offset. The `.npy` header (magic,
        # version, length, then a Python literal) must end exactly there and name our dtype and
        # shape; checked by string search, since parsing a literal would need `ast`.
        self.offset = os.fstat(self._file.fileno()).st_size - self.rows * self._row_bytes
        header = self._file.read(max(self.offset, 0))
        major = header[6] if len(header) > 12 else 0
        length = (int.from_bytes(header[8:10], "little") + 10 if major == 1
                  else int.from_bytes(header[8:12], "little") + 12 if major in (2, 3) else -1)
        descr = b"'|i1'" if self.dtype == "int8" else b"'<f2'"
        shape = f"'shape': ({self.rows}, {self.dim})".encode()
        if not header.startswith(_NPY_MAGIC) or length != self.offset or descr not in header or shape not in header:
            self._file.close()
            raise ValueError(f"{self.path}: not a {self.dtype} table of {self.rows}×{self.dim}")
        self._f16 = None
        if self.dtype == "float16":
            import struct  # float16 tables only; the shipped one is int8

            self._f16 = struct.Struct(f"<{self.dim}e")

    def row(self, token: int) -> list[float] | list[int]:
        """One token's row as stored (ints for int8; times `self.scale` for the values).

        A positioned read, not a memory map: on a file system with large page-cache folios (ext4,
        Linux 6.18 here) touching one mapped row made a whole folio resident — 5.3 MB of RSS for a
        25-token prompt over a 7.8 MB table — while a read costs a syscall and no resident memory."""
        self._file.seek(self.offset + token * self._row_bytes)
        data = self._file.read(self._row_bytes)
        if self.dtype == "int8":
            return memoryview(data).cast("b").tolist()
        assert self._f16 is not None  # set for every float16 table
        return list(self._f16.unpack(data))

    def token_ids(self, text: str) -> list[int]:
        """WordPiece ids of the text's head, without [CLS]/[SEP] and unknown pieces."""
        tok = self.tokenizer
        ids: list[int] = []
        for word in tok.basic(text[:MAX_CHARS]):
            ids.extend(i for i in tok.wordpiece(word) if i != tok.unk)
            if len(ids) >= MAX_TOKENS:
                break
        return ids[:MAX_TOKENS]

    def embed(self, text: str) -> list[float] | None:
        """The text's unit vector, or None when it has no known token. Pure Python, no NumPy."""
        ids = self.token_ids(text) if isinstance(text, str) else []
        if not ids:
            return None
        rows = {i: self.row(i) for i in set(ids)}  # a repeated token is read once
        # zip(*rows) walks the D columns in C; the per-token weights are already in the rows.
        summed = [sum(column) for column in zip(*(rows[i] for i in ids), strict=True)]
        norm = math.sqrt(sum(x * x for x in summed))
        if norm == 0.0:
            return None
        return [x / norm for x in summed]

    def matrix(self) -> Array:
        """The whole table as a read-only NumPy memory-map (int8 or float16, not yet scaled)."""
        import numpy as np

        return np.load(self.path, mmap_mode="r")

    def embed_many(self, texts: Iterable[str]) -> Array:
        """(n, D) float32 unit rows (zero rows for texts with no known token): the batch path."""
        import numpy as np

        table = self.matrix()
        texts = list(texts)
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for n, text in enumerate(texts):
            ids = self.token_ids(text) if isinstance(text, str) else []
            if ids:
                out[n] = table[np.asarray(ids)].astype(np.float32).sum(0)
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        return out / np.maximum(norms, 1e-12)

    def close(self) -> None:
        self._file.close()
        vocab = getattr(self.tokenizer, "vocab", None)
        if isinstance(vocab, MappedVocab):
            vocab.close()


def load(directory: str | None = None) -> Table | None:
    """The table at `directory` (default `default_dir()`), opened once per process; None when it is
    missing or unusable — then retrieval stays lexical."""
    directory = directory or default_dir()
    if directory not in _tables:
        try:
            _tables[directory] = Table(directory)
        except (OSError, ValueError, KeyError, TypeError) as exc:
            from ..core import log

            if not isinstance(exc, FileNotFoundError):
                log.warning("retrieval", f"static embedding table at {directory} unusable ({exc}); lexical only")
            _tables[directory] = None
    return _tables[directory]


def embed(text: str, directory: str | None = None) -> list[float] | None:
    """`load(directory).embed(text)`, or None when there is no table or no known token."""
    table = load(directory)
    return table.embed(text) if table is not None else None


# -- stdlib scoring: sign codes + popcount, exact rescoring of the few best -----------------------


def pack_code(vector: Sequence[float]) -> bytes:
    """The vector's sign bits (bit i set when component i > 0), little-endian, D/8 bytes: Hamming
    distance between codes approximates the angle between vectors (sign random projection on the
    table's PCA axes). D must be a multiple of 8."""
    bits = 0
    for i, x in enumerate(vector):
        if x > 0:
            bits |= 1 << i
    return bits.to_bytes(len(vector) // 8, "little")


_POPCOUNT = bytes(bin(i).count("1") for i in range(256))
_ALL_BYTES = int.from_bytes(bytes(range(256)), "little")  # byte i is i
_EVERY_BYTE = int.from_bytes(b"\x01" * 256, "little")  # × x: byte i is x, no carries


def _popcount_xor(x: int) -> bytes:
    """The 256-byte table t[b] = popcount(b ^ x), built in C: the bytes 0..255 XOR-ed with x in one
    big-integer operation, then translated through the popcount table (a Python loop over the 256
    bytes cost ~40 µs per table, 31 tables per search)."""
    return (_ALL_BYTES ^ (x * _EVERY_BYTE)).to_bytes(256, "little").translate(_POPCOUNT)


HAMMING_BYTES = 31  # code bytes compared: 31 × 8 = 248 ≤ 255, so a distance is one byte (below)


def hamming(query_code: bytes, packed: bytes, dim: int) -> bytes:
    """Hamming distance from the query's code to each code in `packed` (codes back to back, as
    `pack_code` writes them), over the first `HAMMING_BYTES` bytes of each code (the table's first
    248 principal axes: the last ones carry the least variance, and the exact rescoring sees them
    all), one byte per code. No Python loop over the rows: for each byte position k, the k-th bytes
    of all codes (a strided slice) are translated through a table giving popcount(byte ^ query[k]),
    and the columns are summed as big integers whose base-256 digits (≤ 248) cannot carry. ~0.7 ms
    for 10,000 codes."""
    width = dim // 8
    rows = len(packed) // width
    total = 0
    for k in range(min(width, HAMMING_BYTES)):
        total += int.from_bytes(packed[k::width].translate(_popcount_xor(query_code[k])), "little")
    return total.to_bytes(rows + 1, "little")[:rows]


def nearest(distances: Sequence[int], m: int) -> list[int]:
    """Indices of the m smallest distances, in index order: on a list (at least m: ties at the cut
    all kept), on `bytes` (what `hamming` returns) exactly m, ties at the cut taken in index order.
    Counting, not sorting: distances are small integers; on bytes the counting and the selection
    run in C (`bytes.count`, `translate`, `find`)."""
    if m >= len(distances):
        return list(range(len(distances)))
    if not isinstance(distances, bytes):
        counts = [0] * (max(distances) + 1)
        for d in distances:
            counts[d] += 1
        total = 0
        for cut, count in enumerate(counts):
            total += count
            if total >= m:
                return [i for i, d in enumerate(distances) if d <= cut]
        return list(range(len(distances)))
    below, cut = 0, 0  # below: how many lie strictly under `cut`
    for cut in range(256):
        here = distances.count(cut)
        if below + here >= m:
            break
        below += here
    # Everything under the cut, and of the ties at the cut only as many as make m (in index order):
    # one byte per distance makes ties common, and each extra one costs an exact rescoring.
    marks = distances.translate(bytes(1 if d < cut else 2 if d == cut else 0 for d in range(256)))
    out, at, ties = [], marks.find(1), m - below
    while at >= 0:
        out.append(at)
        at = marks.find(1, at + 1)
    at = marks.find(2)
    while at >= 0 and ties > 0:
        out.append(at)
        ties -= 1
        at = marks.find(2, at + 1)
    return sorted(out)


def rescore(query: Sequence[float], candidates: Iterable[tuple[int, Sequence[float]]],
            k: int) -> list[tuple[int, float]]:
    """The k best (index, dot product) among the (index, vector) candidates, exactly."""
    import heapq  # not at the top: the hooks' path (vectors.py) rescores without it

    scored = [(i, sum(map(operator.mul, query, vector))) for i, vector in candidates]
    return heapq.nlargest(k, scored, key=lambda pair: pair[1])
