"""Write-time quality: lesson vectors from the full model, in the static table's space.

Contract. The hook embeds a prompt with the shipped static table (vectors.py: stdlib, ~1 ms); the
lesson side has time to spare, so the learning worker and `ace embed` — never a hook — embed each
lesson with the full all-MiniLM-L6-v2 (semantic.py) and map it into the table's space with a linear
map W fitted for that table (`write_map.npy` beside it, by scripts/fit_write_map.py: ridge regression
from the model's vectors of the table's words to the table's rows of them; λ and the form chosen on the
tuned set, never the held-out one). The result, `unit(static + α unit(x W))` or `unit(x W)` as
`write_map.json` says, is stored as the lesson's *write-time vector* (`vectors.write_key`, the same
int8 form and content key as the table's own), and the lesson's second vector (`vectors._fold`, the
one the hook already reads with `retrieval.situations`) is rebuilt from it: a hook reads no more rows
and runs no more code than before. A lesson whose content changes loses its write-time vector (the
content key no longer matches) until the next run; search then uses the table's vector, as always.

With `retrieval.write_time` (off by default: see config.py), the worker calls `refresh` after its
jobs and `ace embed` after the table's vectors; turning it off stops new ones, and a lesson keeps the
one it has until its content changes. `refresh(store)` does the lessons that lack one and returns how
many; without NumPy, the model package
(the `semantic` extra) or a map fitted for the shipped table it does nothing and returns 0 (the
default install: search stays as good as the table alone). Never raises.

Cost: NumPy and the model load once per run that has lessons to do (~1 s), then ~15 ms a lesson on
one core; the map is 384 × 256 float16 (192 KB).
"""

from __future__ import annotations

import json
import os

from ..core import log
from . import vectors

TYPE_CHECKING = False  # not `typing.TYPE_CHECKING`: keep the import light like the rest of embed/
if TYPE_CHECKING:
    from typing import Any

    from ..store.interfaces import PlaybookStore
    from . import static_embed
    from .vectors import Settings

BATCH = 64
WORKER_LIMIT = 512  # lessons per learning-worker run (~8 s of one core at most)
MAP_FILE, META_FILE = "write_map.npy", "write_map.json"
_warned: set[str] = set()


def _note_once(key: str, message: str) -> None:
    if key not in _warned:
        _warned.add(key)
        log.write("INFO", "retrieval", message)


def load_map(t: static_embed.Table) -> tuple[Any, str, float] | None:
    """(W as float32, form, the mapped part's weight in the `sum` form) for table `t`, or None when
    there is no map fitted for it or NumPy or the full model is missing (said once in the log)."""
    from . import semantic

    problem = semantic.missing()
    if problem:
        _note_once("missing", f"write-time lesson vectors are off: {problem}")
        return None
    try:
        with open(os.path.join(t.directory, META_FILE), encoding="utf-8") as fh:
            meta = json.load(fh)
        if meta.get("table_sha256") != t.meta.get("table_sha256") or meta.get("model") != semantic.MODEL:
            _note_once("stale", "write-time lesson vectors are off: the map was fitted for another table")
            return None
        import numpy as np

        w = np.load(os.path.join(t.directory, MAP_FILE)).astype(np.float32)
        if w.shape != (semantic.DIM, t.dim):
            raise ValueError(f"map of shape {w.shape}")
        return w, str(meta.get("form") or "sum"), float(meta.get("weight", 1.0))
    except (OSError, ValueError) as exc:
        _note_once("map", f"write-time lesson vectors are off: no usable map ({type(exc).__name__}: {exc})")
        return None


def refresh_if_on(store: PlaybookStore, cfg: Settings | None) -> int:
    """After `vectors.embed_missing` (`ace embed`, `ace doctor --fix`): with `retrieval.write_time`
    set, the write-time vectors too (`refresh`); else nothing. Returns how many were written."""
    from ..core.config import value_of

    return refresh(store) if value_of(cfg, "retrieval.write_time") else 0


def refresh(store: PlaybookStore, limit: int | None = None) -> int:
    """Write-time vectors for the active and candidate lessons that lack a current one, then their
    folds (vectors._fold); returns how many were written. Worker and CLI only: loads the full model."""
    t = vectors.table()
    if t is None:
        return 0
    key = vectors.model_key(t)
    target = vectors.write_key(key)
    if not store.bullets_missing_vectors(target, limit=1):
        return 0  # nothing to do: never load the model
    loaded = load_map(t)
    if loaded is None:
        return 0
    w, form, weight = loaded
    done = 0
    tried: set[str] = set()
    try:
        import numpy as np

        from . import semantic

        encoder = semantic.encoder()
        while limit is None or done < limit:
            rows = [b for b in store.bullets_missing_vectors(target, limit=BATCH + len(tried)) if b["id"] not in tried]
            rows = rows[:BATCH if limit is None else min(BATCH, limit - done)]
            if not rows:
                break
            tried.update(b["id"] for b in rows)
            texts = [b["content"] for b in rows]
            mapped = encoder.encode(texts) @ w
            mapped /= np.maximum(np.linalg.norm(mapped, axis=1, keepdims=True), 1e-9)
            if form == "sum":  # the table's own vector of the text (as embed_bullets computes it) plus the map's
                own = np.array([v or [0.0] * t.dim for v in vectors._embed_texts(t, texts)], dtype=np.float32)
                mapped = own + weight * mapped
                mapped /= np.maximum(np.linalg.norm(mapped, axis=1, keepdims=True), 1e-9)
            items = [(b["id"], b["content_key"], vectors.to_blob(m.tolist()))
                     for b, m in zip(rows, mapped, strict=True)]
            if items:
                store.put_vectors(target, items)
                vectors._fold(store, t, key, [bid for bid, _, _ in items])
            done += len(items)
    except Exception as exc:  # noqa: BLE001 — a lesson without one is searched by the table's vector
        log.warning("retrieval", f"could not store write-time lesson vectors ({type(exc).__name__}: {exc})")
    return done
