"""Lesson vectors: every lesson's embedding kept beside it, and the cosines a search needs.

Contract. The embedder of the default install is the static table shipped in `embed/data/`
(`static_embed`: a text embeds by table lookup, stdlib only, no model run), so semantic search
needs no extra package and no manual step. `retrieval.embedder = "minilm"` selects the full
all-MiniLM-L6-v2 instead (`semantic.py`, the `semantic` extra): better on paraphrases, but a
hook then loads NumPy and 90 MB of weights. `cosines()` is the one entry of search: it returns
{bullet id: cosine} for the scope's nearest lessons and for the ids the caller also asks about,
or None when semantic search can't run (the caller stays lexical; the reason is logged once and
`status()` reports it for `ace doctor`).

Writes. `Playbook` calls `embed_bullets` for every lesson whose content it writes (add, update,
merge, import, learn, bootstrap, sync all go through it); `embed_missing` catches the rest
(stores from before this, a failed write) — a few per search in a hook, all of them from `ace
embed`, `ace install` and the learning worker. A vector is stored with the content key it was
computed from, so a changed lesson is simply missing until embedded again. A lesson's situations
(retrieval/situations.py) are embedded when recorded, in the learning worker, and folded with the
lesson into a second vector (`fold_key`, SITUATION_WEIGHT below), rewritten whenever either changes.
With `retrieval.write_time`, the lesson part of that second vector is its write-time vector (the full
model's, mapped into the table's space by the worker: write_time.py, `write_key`), so a hook reads it
at no extra cost; a lesson with a write-time vector and no situation gets a second vector too.

A static vector is stored as: sign code (D/8 bytes, bit i = component i > 0), scale (float32),
then the unit vector's components as int8 (value = scale × int). Search reads the scope's pack
(schema 6: all ids and codes in one row, rebuilt when the store has changed), ranks every code by
Hamming distance to the query's (popcount, `static_embed.hamming`), and computes exact cosines for
the `top` nearest plus the asked-for ids only. With `retrieval.situations` (the default) the pack
holds each lesson's folded code and the rescoring reads its folded vector, where it has one.

Cost (measured, `bench/retrieval_bench.py`): stdlib only on the static path; with the pack
current, ~1 ms to embed the prompt, ~2 ms to read the pack and ~5 ms to rank 10,000 codes, ~2 ms
to rescore 60 vectors. A stale pack costs one read of the scope's codes (~15 ms at 10,000).
"""

from __future__ import annotations

import math
import operator
import os

from ..core import log
from ..core.config import value_of
from . import static_embed

TYPE_CHECKING = False  # not `typing.TYPE_CHECKING`: hooks import this module
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Mapping, Sequence
    from typing import Any

    from ..core._types import Bullet
    from ..core.config import Config
    from ..store.interfaces import PlaybookStore

    Settings = Config | Mapping[str, Any]

DATA_DIR = static_embed.DATA_DIR  # a module attribute, so the tests can point it elsewhere
EMBEDDERS = ("static", "minilm")
# A lesson's situations (retrieval/situations.py: the prompts it was learned and confirmed in) are
# folded into a second vector of it, stored under `fold_key(model)`: unit(lesson + SITUATION_WEIGHT ×
# the situations' mean), which search scores in place of the lesson's own when it is current — as
# if the prompts were part of the lesson's text, without changing the text. Measured against scoring
# each situation as a vector of its own by the maximum (bench/results/retrieval-replay.json): the
# fold found more on the replay set (raw R@5 0.848 vs 0.823, MRR 0.733 vs 0.712) and costs a hook one
# row per lesson instead of up to 8. The weight, on the same set (default configuration, replay split,
# thresholded R@5 / MRR / negatives empty): 0.25 → 0.652 / 0.638 / 0.41, 0.5 → 0.681 / 0.650 / 0.39,
# 1 → 0.681 / 0.646 / 0.38, 2 → 0.638 / 0.599 / 0.36.
SITUATION_WEIGHT = 0.5
HOOK_LAZY_LIMIT = 16  # lessons a search embeds itself when some lack a vector (~1.7 ms each)
BATCH = 256
_warned: set[str] = set()


def _warn_once(key: str, message: str) -> None:
    if key not in _warned:
        _warned.add(key)
        log.warning("retrieval", message)


def table_dir() -> str:
    """The shipped table (package data; the plugin route reads it from the source tree)."""
    return os.path.join(DATA_DIR, static_embed.DEFAULT_NAME)


def table() -> static_embed.Table | None:
    return static_embed.load(table_dir())


def model_key(t: static_embed.Table) -> str:
    """The `bullet_vectors.model` of a table's vectors: its name and content hash, so vectors from
    another table are never compared with this one's."""
    return f"{t.meta.get('name', static_embed.DEFAULT_NAME)}@{str(t.meta.get('table_sha256', 'unknown'))[:12]}"


def embedder(cfg: Settings | None) -> str:
    name = "static"
    if cfg is not None:
        try:
            name = str(cfg["retrieval.embedder"])
        except (KeyError, TypeError, IndexError):
            pass
    return name if name in EMBEDDERS else "static"


# -- the stored form --------------------------------------------------------------------------------


def to_blob(vector: Sequence[float]) -> bytes:
    """code + scale + int8 components of a unit vector (see the module docstring)."""
    peak = max(abs(x) for x in vector) or 1.0
    scale = peak / 127.0
    ints = bytes((round(x / scale) & 0xFF) for x in vector)
    head = bytearray(4)
    memoryview(head).cast("f")[0] = scale  # native float32 (little-endian where the table loads)
    return static_embed.pack_code(vector) + bytes(head) + ints


def _decode(blob: bytes, dim: int) -> list[float]:
    """A stored vector's components (see `to_blob`)."""
    offset = dim // 8
    scale = memoryview(blob)[offset:offset + 4].cast("f")[0]
    return [scale * x for x in memoryview(blob)[offset + 4: offset + 4 + dim].cast("b")]


def _dot(query: Sequence[float], blob: bytes, dim: int) -> float:
    offset = dim // 8
    scale = memoryview(blob)[offset:offset + 4].cast("f")[0]
    ints = memoryview(blob)[offset + 4: offset + 4 + dim].cast("b")
    return scale * sum(map(operator.mul, query, ints))


# -- writing ----------------------------------------------------------------------------------------


def embed_bullets(store: PlaybookStore, bullets: Iterable[Bullet]) -> int:
    """Store the built-in embedder's vector of each bullet (for its current content); returns how
    many. Never raises: a lesson without a vector is found by `embed_missing` later."""
    t = table()
    if t is None:
        return 0
    try:
        key = model_key(t)
        rows = list(bullets)
        items = []
        for b, vector in zip(rows, _embed_texts(t, [b["content"] for b in rows]), strict=True):
            if vector is not None:
                items.append((b["id"], b["content_key"], to_blob(vector)))
        if items:
            store.put_vectors(key, items)
            _fold(store, t, key, [bid for bid, _, _ in items])  # a changed lesson's fold follows it
        return len(items)
    except Exception as exc:  # noqa: BLE001 — a failed embedding must not fail the write it follows
        _warn_once("write", f"could not store lesson vectors ({type(exc).__name__}: {exc}); "
                            "`ace embed` computes them later")
        return 0


def _embed_texts(t: static_embed.Table, texts: list[str]) -> list[list[float] | None]:
    """The texts' vectors: NumPy's batch path for many when it is installed (~10× faster than the
    stdlib one, same vectors to float precision), else one by one."""
    if len(texts) >= 64:
        try:
            import numpy  # noqa: F401  (probe only: the batch path is in static_embed)
        except ImportError:
            pass
        else:
            return [row if any(row) else None for row in t.embed_many(texts).tolist()]
    return [t.embed(text) for text in texts]


def embed_missing(store: PlaybookStore, *, cfg: Settings | None = None, limit: int | None = None,
                  progress: Callable[[int], object] | None = None) -> int:
    """Vectors for the active and candidate lessons that lack one for their current content, with
    the configured embedder; returns how many were embedded. `progress(done)` after each batch.
    Without a `limit` (`ace embed`), the situations' vectors and the folds that are missing too (the
    full model's write-time vectors are write_time.py's, which its callers run after this)."""
    store_rows: Callable[[PlaybookStore, list[Bullet]], int]
    if embedder(cfg) == "minilm":
        from . import semantic

        key, store_rows = semantic.MODEL, semantic.store_vectors
    else:
        t = table()
        if t is None:
            return 0
        key, store_rows = model_key(t), embed_bullets
    done = 0
    tried: set[str] = set()
    while limit is None or done < limit:
        want = BATCH if limit is None else min(BATCH, limit - done)
        rows = [b for b in store.bullets_missing_vectors(key, limit=want) if b["id"] not in tried]
        if not rows:
            break
        tried.update(b["id"] for b in rows)
        done += store_rows(store, rows)
        if progress is not None:
            progress(done)
    if limit is None and embedder(cfg) != "minilm":
        embed_situations(store)  # `ace embed`, the worker: the lessons' situations too (never a hook's few)
    return done


def fold_key(model: str) -> str:
    """The `bullet_vectors.model` of the lessons' vectors folded with their situations."""
    return f"{model}+situations"


def write_key(model: str) -> str:
    """The `bullet_vectors.model` of the lessons' write-time vectors: the full model's, mapped into
    the table's space by the learning worker (embed/write_time.py); folded in place of the table's."""
    return f"{model}+full"


def embed_situations(store: PlaybookStore, bullet_ids: Sequence[str] | None = None) -> int:
    """Vectors of the built-in embedder for the situations (retrieval/situations.py) that lack one,
    then the folded vectors of `bullet_ids` (None: every lesson whose folded vector is missing or
    older than its content); returns how many situations were embedded. Never raises."""
    t = table()
    if t is None:
        return 0
    key = model_key(t)
    done = 0
    try:
        tried: set[int] = set()
        while True:
            rows = [r for r in store.situations_missing_vectors(key, limit=BATCH + len(tried)) if r[0] not in tried]
            if not rows:
                break
            tried.update(sid for sid, _ in rows)
            items = [(sid, to_blob(v)) for (sid, _), v in zip(rows, _embed_texts(t, [text for _, text in rows]),
                                                              strict=True) if v is not None]
            if items:
                store.put_situation_vectors(key, items)
            done += len(items)
        ids = (store.bullets_missing_folds(key, fold_key(key), write_key(key)) if bullet_ids is None
               else list(bullet_ids))
        for start in range(0, len(ids), BATCH):
            _fold(store, t, key, ids[start:start + BATCH])
    except Exception as exc:  # noqa: BLE001 — a lost situation vector costs recall, never the write it follows
        _warn_once("situations", f"could not store situation vectors ({type(exc).__name__}: {exc})")
    return done


def _fold(store: PlaybookStore, t: static_embed.Table, key: str, ids: Sequence[str]) -> None:
    """Store the second vector of those lessons that have situations or a write-time vector:
    unit(base + SITUATION_WEIGHT × mean of its situations), base being the lesson's write-time vector
    (the full model's, mapped: embed/write_time.py) when it has a current one, else the table's."""
    width = t.dim // 8 + 4 + t.dim  # code, scale, components: see `to_blob`
    situations: dict[str, list[list[float]]] = {}
    for bid, blob in store.situation_vectors(key, ids):
        if len(blob) == width:
            situations.setdefault(bid, []).append(_decode(blob, t.dim))
    written = {bid: blob for bid, blob in store.vectors_of(write_key(key), list(ids)) if len(blob) == width}
    lessons = {bid: written.get(bid, blob) for bid, blob in store.vectors_of(key, list(ids))
               if bid in situations or bid in written}  # the others search by their own vector
    keys = {b["id"]: b["content_key"] for b in store.get_bullets(list(lessons))}
    items = []
    for bid, blob in lessons.items():
        rows = situations.get(bid, [])
        if not rows:  # a write-time vector alone: stored as it is (decoding and encoding would round it)
            items.append((bid, keys[bid], blob))
            continue
        folded = _decode(blob, t.dim)
        for row in rows:
            folded = [a + SITUATION_WEIGHT / len(rows) * b for a, b in zip(folded, row, strict=True)]
        norm = math.sqrt(sum(a * a for a in folded)) or 1.0
        items.append((bid, keys[bid], to_blob([a / norm for a in folded])))
    if items:
        store.put_vectors(fold_key(key), items)


# -- searching --------------------------------------------------------------------------------------


class _Pack:
    """A scope's bullet rowids (native u32, 40 KB at 10,000, where their ids would take 250 KB)
    and codes, back to back in the same order."""

    __slots__ = ("rowids", "codes", "count", "_view")

    def __init__(self, rowids: bytes, codes: bytes, code_width: int) -> None:
        self.rowids, self.codes = rowids, codes
        self.count = len(codes) // code_width if code_width else 0
        self._view = memoryview(rowids).cast("I") if len(rowids) % 4 == 0 else None

    def valid(self) -> bool:
        return self._view is not None and len(self._view) == self.count

    def rowid_at(self, i: int) -> int:
        assert self._view is not None
        return int(self._view[i])

    @staticmethod
    def encode(rowids: Sequence[int]) -> bytes:
        out = bytearray(4 * len(rowids))
        view = memoryview(out).cast("I")
        for i, rowid in enumerate(rowids):
            view[i] = rowid
        return bytes(out)


def _pack(store: PlaybookStore, t: static_embed.Table, key: str, project_id: int | None,
          include_global: bool, folded: bool = False) -> _Pack:
    """The scope's pack, from the store when it is current, else rebuilt (after embedding a few
    lessons that lack a vector) and stored for the next search. `folded`: a lesson's code is that
    of its vector folded with its situations when it has one, so they find it among the nearest."""
    width = t.dim // 8
    stamp = store.vector_stamp()
    pack_key = key if folded else f"{key}+own"  # the default keeps the name packs always had
    found = store.vector_pack(pack_key, project_id, include_global)
    if found is not None and found[0] == stamp:
        pack = _Pack(found[1], found[2], width)
        if pack.valid() and pack.count * width == len(pack.codes):
            return pack  # else not a pack this version wrote: rebuilt below
    if embed_missing(store, limit=HOOK_LAZY_LIMIT):
        stamp = store.vector_stamp()
    rows = [(rowid, code) for rowid, code in store.vector_codes(key, project_id, include_global, width,
                                                                 fold_key(key) if folded else None)
            if len(code) == width]
    pack = _Pack(_Pack.encode([rowid for rowid, _ in rows]), b"".join(code for _, code in rows), width)
    try:
        store.put_vector_pack(pack_key, project_id, include_global, stamp, pack.rowids, pack.codes)
    except Exception as exc:  # noqa: BLE001 — a read-only or busy store still answers from what it read
        _warn_once("pack", f"could not store the vector pack ({type(exc).__name__}: {exc})")
    return pack


def cosines(store: PlaybookStore, project_id: int | None, query: str, *, cfg: Settings | None = None,
            include_global: bool = True, also: Iterable[str | int] = (), top: int = 40) -> dict[str, float] | None:
    """{bullet id: cosine with the query} for the scope's `top` nearest lessons and for the bullets
    in `also`, given by id or by rowid (those without a vector are left out), or None when semantic
    search can't run here."""
    if not isinstance(query, str) or not query.strip():
        return None
    if embedder(cfg) == "minilm":
        from . import semantic

        return semantic.cosines(store, project_id, query, cfg=cfg, include_global=include_global)
    t = table()
    if t is None:
        _warn_once("table", f"the embedding table is missing or unusable at {table_dir()}; searching lexically "
                            "(reinstall ace-engine)")
        return None
    try:
        vector = t.embed(query)
        if vector is None:  # no word the table knows: no evidence either way
            return {}
        key = model_key(t)
        folded = bool(value_of(cfg, "retrieval.situations"))
        pack = _pack(store, t, key, project_id, include_global, folded)
        near = dict.fromkeys(a for a in also if isinstance(a, int))  # candidates given by rowid
        if pack.count:
            distances = static_embed.hamming(static_embed.pack_code(vector), pack.codes, t.dim)
            near.update(dict.fromkeys(pack.rowid_at(i) for i in static_embed.nearest(distances, top)))
        rows = store.vectors_of(key, [a for a in dict.fromkeys(also) if isinstance(a, str)], list(near))
        found = {bid: _dot(vector, blob, t.dim) for bid, blob in rows}
        if found and folded:
            for bid, blob in store.vectors_of(fold_key(key), list(found)):
                found[bid] = _dot(vector, blob, t.dim)
        return found
    except Exception as exc:  # noqa: BLE001 — semantic search must never break a search
        _warn_once("failed", f"semantic search failed ({type(exc).__name__}: {exc}); searching lexically")
        return None


def status(store: PlaybookStore | None, cfg: Settings | None = None) -> dict[str, Any]:
    """What `ace doctor` reports: the embedder, whether it can run here (and if not, why), and how
    many active lessons have a vector."""
    name = embedder(cfg)
    report: dict[str, Any] = {"embedder": name, "mode": "lexical", "problem": None}
    if name == "minilm":
        from . import semantic

        report["problem"] = semantic.missing()
        key = semantic.MODEL
    else:
        t = table()
        if t is None:
            report["problem"] = f"the embedding table is missing or unusable at {table_dir()} (reinstall ace-engine)"
            key = ""
        else:
            key = model_key(t)
    report["model"] = key
    if report["problem"] is None:
        report["mode"] = "semantic + lexical"
        if store is not None:
            missing = store.missing_vector_count(key)
            report["missing_vectors"] = missing
    return report
