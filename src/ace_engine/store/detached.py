"""The life of a detached process that works on the local store: the one shape every background
entry point (the learning worker, the re-screen, the spool replay) runs in.

Contract: `run_detached(lock, lock_fd, work, area=…, failure=…)` enters the detached state
(`core.background.enter_detached`: owner-only files, a lower priority unless `nice=False`, the lock
adopted from the spawning hook or taken; it returns at once when another process holds it), opens
the store with a long busy timeout (a hook may be writing), runs `work(store)`, and always releases
the lock and closes the store. An exception from `work` or from opening the store is logged as
`<failure>: <type>: <message>` under `area` and not raised: a detached process has no one to tell
but the log.

Cost: what `work` costs, plus opening one store connection.
"""

from __future__ import annotations

from ..core import log
from ..core.background import enter_detached

TYPE_CHECKING = False  # not `typing.TYPE_CHECKING`: spawned by hooks, this path loads no `typing`
if TYPE_CHECKING:
    from collections.abc import Callable

    from ..core.background import ProcessLock
    from .sqlite import SQLiteStore

BUSY_TIMEOUT_MS = 30_000  # background work waits for the hooks, never the other way round


def run_detached(lock: ProcessLock, lock_fd: int | None, work: Callable[[SQLiteStore], None], *, area: str,
                 failure: str, nice: bool = True) -> None:
    """See the module contract."""
    if not enter_detached(lock, lock_fd, nice=nice):
        return
    from .sqlite import SQLiteStore

    store = None
    try:
        store = SQLiteStore(busy_timeout_ms=BUSY_TIMEOUT_MS)
        work(store)
    except Exception as exc:  # noqa: BLE001 — a detached process has no one to tell but the log
        log.error(area, f"{failure}: {type(exc).__name__}: {exc}")
    finally:
        lock.release()
        if store is not None:
            store.close()
