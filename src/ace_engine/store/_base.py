"""What every table family of the store shares: one connection, row reading, and the one way to write.

Contract: a family class (`CaptureSQL`, `PlaybookSQL`, `JobsSQL`, `MaintenanceSQL`, `MetaSQL`) is a
`StoreBase`: it reads and writes through `self.conn` (the redacting connection of `redacting.py`)
and groups its writes with `self.transaction()` — `BEGIN IMMEDIATE` … `COMMIT`, `ROLLBACK` on an
exception; a nested `transaction()` joins the outer one. Nothing else in the store writes
BEGIN / COMMIT / ROLLBACK by hand. `SQLiteStore` is all families over one connection.

Cost: on every hook's path, so stdlib only and no `contextlib` (a class is the context manager).
"""

from __future__ import annotations

try:  # The C module itself: `sqlite3` adds only datetime adapters we don't use, ~3 ms per hook.
    import _sqlite3 as sqlite3
except ImportError:  # pragma: no cover - interpreters that only ship the package
    import sqlite3  # type: ignore[no-redef]  # the same API, one level up

from ..core.errors import AceError

TYPE_CHECKING = False  # not `typing.TYPE_CHECKING`: the hooks must not import `typing` (~3 ms)
if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Any, Literal

    from .redacting import RedactingConnection

    SQLValue = str | int | float | bytes | None  # what SQLite stores and binds
    Params = Sequence[SQLValue]

__all__ = ["StoreBase", "StoreError", "Transaction", "like_escape", "sqlite3"]


def like_escape(text: str) -> str:
    """`text` as a literal inside a LIKE pattern written with `ESCAPE '\\'`: its `\\`, `%` and `_`
    escaped, so a term the user or agent typed matches itself and nothing wider."""
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


class StoreError(AceError):
    """The store cannot be used (missing directory, corrupt, read-only, locked, disk full…)."""


class Transaction:
    """`with store.transaction():` one write transaction taken with the write lock up front
    (`BEGIN IMMEDIATE`, so two writers never deadlock upgrading a read lock); nesting joins the
    outer one. `discard()` makes the outer transaction roll back instead of committing (a dry run,
    a probe of the write lock)."""

    __slots__ = ("conn", "outer", "keep")

    def __init__(self, conn: RedactingConnection) -> None:
        self.conn = conn
        self.outer = False
        self.keep = True

    def __enter__(self) -> Transaction:
        self.outer = not self.conn.in_transaction
        if self.outer:
            self.conn.execute("BEGIN IMMEDIATE")
        return self

    def discard(self) -> None:
        self.keep = False

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: object) -> Literal[False]:
        if self.outer:
            if exc_type is None and self.keep:
                try:
                    self.conn.execute("COMMIT")
                except BaseException:  # a failed COMMIT (busy, disk full) leaves the transaction open
                    if self.conn.in_transaction:
                        self.conn.execute("ROLLBACK")
                    raise
            elif self.conn.in_transaction:  # SQLite may have rolled back already (disk full, I/O error)
                self.conn.execute("ROLLBACK")
        return False


class StoreBase:
    """The connection holder every family shares (SQLiteStore sets both in `__init__`)."""

    conn: RedactingConnection
    path: str

    def transaction(self) -> Transaction:
        """`with store.transaction():` one write transaction; nesting joins the outer one."""
        return Transaction(self.conn)

    # Rows are dicts; `Any` because their shape is the calling method's to state (its return type).
    def _rows(self, sql: str, params: Params = ()) -> list[Any]:
        cur = self.conn.execute(sql, params)
        names = [d[0] for d in cur.description]
        return [dict(zip(names, row, strict=True)) for row in cur.fetchall()]

    def _one(self, sql: str, params: Params = ()) -> Any:
        rows = self._rows(sql, params)
        return rows[0] if rows else None

    def _count(self, sql: str, params: Params = ()) -> int:
        """The one number a `SELECT COUNT(*) …` answers."""
        return int(self.conn.execute(sql, params).fetchone()[0])

    def _inserted(self, cur: sqlite3.Cursor) -> int:
        """The row id of the row an INSERT just inserted."""
        if cur.lastrowid is None:  # pragma: no cover - an INSERT that did not raise inserted a row
            raise StoreError(f"{self.path}: an INSERT returned no row id")
        return cur.lastrowid

    def _error(self, exc: BaseException | str) -> StoreError:
        """A driver error (or a message) as the store's own, naming the file."""
        return StoreError(f"{self.path}: {exc}")
