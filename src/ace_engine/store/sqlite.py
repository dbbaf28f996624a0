"""The embedded store: one SQLite file in WAL mode shared by every project and session.

Contract: `SQLiteStore` is every table family of the store (`CaptureSQL`: projects, sessions,
events; `PlaybookSQL`: bullets, changes, injections, pins, vectors; `JobsSQL`: jobs, learning
runs, heuristics history; `MaintenanceSQL`: health and gc; `MetaSQL`: store-wide facts;
`AnchorsSQL`: what lessons rest on; `SyncSQL`: the team sync's cursors, other clients' counts and
the outbox) over one
shared connection — a redacting one (`redacting.py`), so no write can carry a secret. What each
family offers is a typing.Protocol of `interfaces.py`; `store.lessons`, `store.events`,
`store.sessions`, `store.jobs`, `store.summaries`, `store.team_sync`, `store.maintenance` and
`store.meta` hand out one family as a narrow repository (this same object, typed as that family,
so there is still one connection and one transaction path). The team server's PostgreSQL store
(`server/storage/`) is a separate store with its own interface, not an implementation of these.
Opening migrates a store behind `schema.MIGRATIONS` (or the `migrations` given) and refuses one
that is newer.

Writers take the write lock up front (`BEGIN IMMEDIATE`, in `transaction()`) so two hooks can never
deadlock on a lock upgrade; they wait up to the busy timeout and then fail fast, and the caller
spools. Errors of the driver come out as `StoreError`.

Cost: opening is one `connect`, two pragmas and, on every hook, no migration; the families'
modules import nothing beyond the standard library and `paths`.
"""

from __future__ import annotations

import os

from ..core import paths
from ..core.closing import Closing
from ._base import StoreError, sqlite3
from .anchors_sql import AnchorsSQL
from .capture_sql import CaptureSQL
from .continuity_sql import ContinuitySQL
from .experiment_sql import ExperimentSQL
from .import_sql import ImportSQL
from .jobs_sql import JobsSQL
from .maintenance_sql import MaintenanceSQL
from .meta_sql import MetaSQL
from .playbook_sql import PlaybookSQL
from .schema import MIGRATIONS, migrate
from .situations_sql import SituationsSQL
from .sync_sql import SyncSQL

TYPE_CHECKING = False  # not `typing.TYPE_CHECKING`: the hooks must not import `typing` (~3 ms)
if TYPE_CHECKING:
    from collections.abc import Sequence

    from . import interfaces as family
    from .interfaces import Store

__all__ = ["SQLiteStore", "StoreError"]


def _refuse_symlinks(path: str) -> None:
    """SQLite follows symlinks and has no no-follow flag reachable from Python: refuse the store
    when the database or its -wal / -shm is one, and create a missing database 0600 ourselves
    with O_NOFOLLOW (its -wal and -shm then inherit that mode)."""
    for suffix in ("", "-wal", "-shm"):
        if os.path.islink(path + suffix):
            raise StoreError(f"{path + suffix} is a symlink; ace-engine does not follow symlinks in its "
                             f"data directory. Remove it (and move the real file there if it is yours)")
    if not os.path.lexists(path):
        os.close(paths.open_nofollow(path, os.O_RDWR | os.O_CREAT, 0o600))


class SQLiteStore(CaptureSQL, PlaybookSQL, SituationsSQL, JobsSQL, MaintenanceSQL, MetaSQL, SyncSQL, ContinuitySQL,
                  ImportSQL, ExperimentSQL, AnchorsSQL, Closing):
    def __init__(self, path: str | None = None, *, busy_timeout_ms: int = 2000,
                 migrations: Sequence[tuple[str, str]] = MIGRATIONS) -> None:
        self.path = path or paths.db_path()
        try:
            paths.ensure_private_dir(os.path.dirname(self.path))
            _refuse_symlinks(self.path)
            from .redacting import RedactingConnection  # the one redaction choke point for writes

            self.conn = RedactingConnection(sqlite3.connect(
                self.path,
                timeout=busy_timeout_ms / 1000,
                isolation_level=None,  # we manage transactions explicitly
                check_same_thread=False,
            ))
            self.conn.execute("PRAGMA synchronous=NORMAL")
            if self.schema_version() != len(migrations):
                migrate(self.conn, migrations)
                try:
                    os.chmod(self.path, 0o600)
                except OSError:
                    pass
        except (sqlite3.Error, OSError) as exc:
            raise StoreError(f"{self.path}: {exc}") from exc

    # -- the families as narrow repositories: this object, typed as one family --------------------------
    @property
    def sessions(self) -> family.SessionsStore:
        return self

    @property
    def events(self) -> family.EventsStore:
        return self

    @property
    def lessons(self) -> family.PlaybookStore:
        return self

    @property
    def jobs(self) -> family.JobsStore:
        return self

    @property
    def summaries(self) -> family.ContinuityStore:
        return self

    @property
    def team_sync(self) -> family.SyncStore:
        return self

    @property
    def maintenance(self) -> family.MaintenanceStore:
        return self

    @property
    def meta(self) -> family.MetaStore:
        return self

    def close(self) -> None:
        try:
            self.conn.close()
        except sqlite3.Error:
            pass


if TYPE_CHECKING:
    def _implements(store: SQLiteStore) -> Store:  # mypy checks every family's Protocol here
        return store
