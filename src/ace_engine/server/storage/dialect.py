"""The two engines behind `TeamDB`: connections, transactions and the few words they spell apart.

Contract: `open_dialect(url)` gives a `Dialect` for `None` / `sqlite:///path` / a plain file path
(SQLite, stdlib `sqlite3`) or `postgresql://…` / `postgres://…` (psycopg 3 and a
`psycopg_pool.ConnectionPool`, min 1 / max 10, imported only here and only for such a URL; one
direct connection is tried first, so a wrong URL or a dead server is one line within
`CONNECT_TIMEOUT_S`, not the pool's retries and repeated log lines).
`dialect.write()` and `dialect.read()` are context managers yielding a `Tx`: one transaction,
committed when the block ends, rolled back when it raises. A write transaction on SQLite takes
the write lock up front (`BEGIN IMMEDIATE`); on PostgreSQL it runs in READ COMMITTED and callers
serialise on row locks. On PostgreSQL a `read()` block runs in autocommit: under READ COMMITTED
each statement has its own snapshot either way, and BEGIN / COMMIT would be two more round trips
per request. `dialect.single()` is for ONE write statement (an upsert, a touch): autocommit on
both engines, so the statement is its own transaction. `Tx.all_many` sends several queries at
once and `Tx.pipeline()` several writes (PostgreSQL's pipeline mode: one round trip instead of
one per statement, which matters most inside a push, under the project's lock). `Tx.stream`
yields rows as they arrive (psycopg's chunked `stream`, a lazy cursor on SQLite), so a large read
never holds the whole result as rows. `json_text` selects a JSON column as its text
(`body::text`), for a caller that passes it on without parsing it. Statements are written once
with `?` placeholders (`Tx` turns them into `%s` for psycopg). Driver errors come out as
`TeamDBError`, a unique-constraint violation as its subclass `Conflict`, so a caller can tell
"someone else inserted this first".

SQLite: one connection per thread (uvicorn runs sync routes in a thread pool), WAL, busy timeout
5 s, foreign keys on; the file is created 0600 (never through a symlink) in a private directory.
Connecting, the PRAGMAs, `pg_advisory_xact_lock`, `day_sql` (the UTC day number of a time column),
`least` / `greatest` and the schema's column types are the only places the two engines differ.

Cost: stdlib only until a PostgreSQL URL is opened.
"""

from __future__ import annotations

import json
import os
import re
import sqlite3
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from functools import lru_cache
from typing import Any
from urllib.parse import unquote

from ...core import paths
from ...core.errors import AceError
from ...core.install_route import extra_hint
from .records import SQLParam

__all__ = ["Conflict", "Dialect", "NotFound", "Row", "TeamDBError", "Tx", "open_dialect", "default_path"]

Row = dict[str, Any]  # a driver's row by column name, before `records` names its shape

MIN_SQLITE = (3, 35, 0)  # UPDATE … RETURNING
CONNECT_TIMEOUT_S = 5  # the first connection of a PostgreSQL URL: a dead host fails within this
ANY_FROM = 40  # `Tx.among`: an IN list up to this many values, an array beyond (PostgreSQL)
ROWS_PER_INSERT = 250  # a multi-row INSERT's rows: 11 columns at most, far under SQLite's 32,766 parameters
MIGRATION_LOCK = 0x61636574  # pg_advisory_xact_lock key shared by every ace team server ("acet")


class TeamDBError(AceError):
    """The team server's database cannot be opened or used; the message names the fix."""


class Conflict(TeamDBError):
    """A unique constraint refused a row another transaction inserted first."""


class NotFound(TeamDBError, LookupError):
    """A project or lesson the call names is not there (or not in the state the call needs)."""


def default_path() -> str:
    return os.path.join(paths.ace_home(), "team-server.db")


def safe_url(url: str) -> str:
    """`url` without a password, fit for a message."""
    return re.sub(r"//[^@/]*@", "//***@", url)


def _first_line(exc: BaseException) -> str:
    """A driver error in one line: psycopg's messages span lines and repeat per address tried."""
    lines = [line.strip() for line in str(exc).splitlines() if line.strip()]
    return lines[0] if lines else type(exc).__name__


@lru_cache(maxsize=4096)  # multi-row INSERTs come in many lengths
def _pyformat(sql: str) -> str:
    return sql.replace("%", "%%").replace("?", "%s")


@lru_cache(maxsize=64)
def _numbered(rows: int, columns: int) -> str:
    """`($1, …, $c), ($c+1, …)`: `rows` rows of `columns` PostgreSQL placeholders."""
    return ", ".join("(" + ", ".join(f"${r * columns + c + 1}" for c in range(columns)) + ")" for r in range(rows))


class Tx:
    """One transaction's cursor: `execute` (rowcount), `all` / `one` (rows as dicts), `value`
    (first column of the first row, or None). `?` placeholders on both engines."""

    __slots__ = ("cur", "pyformat", "loads")

    def __init__(self, cur: Any, pyformat: bool, loads: bool) -> None:
        self.cur = cur
        self.pyformat = pyformat
        self.loads = loads  # JSON columns come back as text (SQLite) rather than parsed (psycopg)

    def _run(self, sql: str, params: Sequence[SQLParam]) -> Any:
        self.cur.execute(_pyformat(sql) if self.pyformat else sql, tuple(params))
        return self.cur

    def execute(self, sql: str, params: Sequence[SQLParam] = ()) -> int:
        return int(self._run(sql, params).rowcount)

    def all(self, sql: str, params: Sequence[SQLParam] = ()) -> list[Row]:
        cur = self._run(sql, params)
        if cur.description is None:  # a write without RETURNING (`all_many` sends some)
            return []
        names = [d[0] for d in cur.description]
        return [dict(zip(names, row, strict=True)) for row in cur.fetchall()]

    def stream(self, sql: str, params: Sequence[SQLParam] = (), size: int = 200) -> Iterator[tuple[Any, ...]]:
        """The rows of a query as tuples, fetched `size` at a time (module docstring)."""
        if self.pyformat:
            yield from self.cur.stream(_pyformat(sql), tuple(params), size=size)
            # psycopg 3.3 leaves the connection in libpq's chunked-rows mode after a stream: the next
            # pipeline on it (`all_many`, a push's writes) fails with "TUPLES_CHUNK" until a plain
            # query has run. The pool hands this connection to any request next: leave it sane.
            self.cur.execute("SELECT 1")
            return
        self.cur.execute(sql, tuple(params))
        while batch := self.cur.fetchmany(size):
            yield from batch

    def among(self, values: Sequence[SQLParam]) -> tuple[str, tuple[Any, ...]]:
        """`column <among>` tests membership in `values`; returns the SQL after the column and its
        parameters. `IN (?, …)`, except on PostgreSQL for more than ANY_FROM values: `= ANY(?)` with
        ONE array parameter, so the text does not depend on the count and psycopg caches its parse
        (it parses every statement of over 50 parameters again; measured, the array's adaptation
        costs more than that parse below ~50: a push's dozen keys stay an IN list)."""
        if self.pyformat and len(values) > ANY_FROM:
            return "= ANY(?)", (list(values),)
        return f"IN ({', '.join('?' * len(values))})", tuple(values)

    def insert_rows(self, table: str, columns: Sequence[str], rows: Sequence[Sequence[Any]], tail: str = "") -> None:
        """`rows` into `table` with multi-row INSERTs, ROWS_PER_INSERT rows per statement; `tail`: an ON
        CONFLICT clause. (A constant `INSERT … SELECT * FROM unnest(?::type[], …)` on PostgreSQL, which
        psycopg would cache and prepare, was measured and left out: a 10-delta push cost the same CPU
        or more — the arrays' adaptation costs what the parse saved.)"""
        names = ", ".join(columns)
        row = f"({', '.join('?' * len(columns))})"
        for start in range(0, len(rows), ROWS_PER_INSERT):
            chunk = rows[start:start + ROWS_PER_INSERT]
            values = [v for r in chunk for v in r]
            if self.pyformat:  # PostgreSQL's own `$n` placeholders: psycopg need not parse the text (below)
                self._raw(f"INSERT INTO {table}({names}) VALUES {_numbered(len(chunk), len(columns))}{tail}", values)
            else:
                self.execute(f"INSERT INTO {table}({names}) VALUES {', '.join([row] * len(chunk))}{tail}", values)

    def _raw(self, sql: str, params: Sequence[SQLParam]) -> None:
        """`sql` with `$1…$n` placeholders, sent as it is (a psycopg `RawCursor` on this connection).
        psycopg parses a `%s` statement of over 50 parameters on every call (it caches only smaller
        ones): for a push's multi-row INSERTs that parse was ~5% of the server's CPU."""
        from psycopg import RawCursor  # a PostgreSQL Tx: psycopg is there

        with RawCursor(self.cur.connection) as raw:
            raw.execute(sql, tuple(params))

    def tuples(self, sql: str, params: Sequence[SQLParam] = ()) -> list[tuple[Any, ...]]:
        """The rows of a query as tuples, without naming their columns (a caller that reads many)."""
        return list(self._run(sql, params).fetchall())

    def all_many(self, queries: Sequence[tuple[str, Sequence[SQLParam]]]) -> list[list[Row]]:
        """Several queries' rows, sent together: one round trip on PostgreSQL (pipeline mode, a
        cursor each), one after the other on SQLite (in process: nothing to save)."""
        if not self.pyformat:
            return [self.all(sql, params) for sql, params in queries]
        conn = self.cur.connection
        cursors = [conn.cursor() for _ in queries]
        try:
            with conn.pipeline():
                for cur, (sql, params) in zip(cursors, queries, strict=True):
                    cur.execute(_pyformat(sql), tuple(params))
            out: list[list[Row]] = []
            for cur in cursors:
                if cur.description is None:  # a write without RETURNING (sent with the reads)
                    out.append([])
                    continue
                names = [d[0] for d in cur.description]
                out.append([dict(zip(names, row, strict=True)) for row in cur.fetchall()])
            return out
        finally:
            for cur in cursors:
                cur.close()

    @contextmanager
    def pipeline(self, commit: bool = False) -> Iterator[None]:
        """Statements run inside are sent without waiting for each answer (PostgreSQL's pipeline
        mode: one round trip for all, errors raised at the end); their results are not read. With
        `commit`, the transaction's COMMIT goes in the same round trip (on PostgreSQL; SQLite
        commits in process when the `write()` block ends): nothing may be written after it."""
        if not self.pyformat:
            yield
            return
        conn = self.cur.connection
        with conn.pipeline():
            yield
            if commit:
                conn.commit()

    def one(self, sql: str, params: Sequence[SQLParam] = ()) -> Row | None:
        rows = self.all(sql, params)
        return rows[0] if rows else None

    def value(self, sql: str, params: Sequence[SQLParam] = ()) -> Any:
        row = self._run(sql, params).fetchone()
        self.cur.fetchall()  # drain (an UPDATE … RETURNING finishes its work only when read to the end)
        return None if row is None else row[0]

    def json(self, value: object) -> Any:
        """A JSON column's value as Python data."""
        if not self.loads or not isinstance(value, (str, bytes)):
            return value  # psycopg parsed it already; None is None
        return json.loads(value)


class Dialect:
    name: str
    id_type: str
    json_type: str
    day_sql: str  # the UTC day number (days since the epoch) of a column named `created_at`
    least: str  # the two-or-more-argument minimum (SQLite's scalar MIN, PostgreSQL's LEAST)
    greatest: str
    json_text: str  # a JSON column as text: `{}` formatted with the column's name
    # A condition, always true, that lets the statement it is in commit without waiting for its flush
    # to disk, for state whose loss in a database crash is harmless (a rate take). PostgreSQL: the
    # statement's own transaction only (`set_config(…, true)`, evaluated for any row it writes).
    relaxed = "1 = 1"

    def single(self) -> AbstractContextManager[Tx]:
        """One write statement as its own transaction (autocommit)."""
        raise NotImplementedError

    def write(self) -> AbstractContextManager[Tx]:
        raise NotImplementedError

    def read(self) -> AbstractContextManager[Tx]:
        raise NotImplementedError

    def migration_lock(self, tx: Tx) -> None:
        """Serialise migrations between servers starting at once (inside the write transaction)."""

    def close(self) -> None:
        raise NotImplementedError


class SQLiteDialect(Dialect):
    name = "sqlite"
    id_type = "INTEGER PRIMARY KEY AUTOINCREMENT"
    json_type = "TEXT"
    day_sql = "CAST(created_at / 86400 AS INTEGER)"  # truncation is floor for times after 1970
    least, greatest = "MIN", "MAX"
    json_text = "{}"

    def __init__(self, path: str) -> None:
        if sqlite3.sqlite_version_info < MIN_SQLITE:
            raise TeamDBError(f"the team server needs SQLite ≥ 3.35 (this Python has {sqlite3.sqlite_version}); "
                              f"use a newer Python, or PostgreSQL (`postgresql://…`)")
        self.path = os.path.abspath(os.path.expanduser(path))
        self._local = threading.local()
        self._all: list[sqlite3.Connection] = []
        self._lock = threading.Lock()
        self._closed = False
        try:
            paths.ensure_private_dir(os.path.dirname(self.path))
            for suffix in ("", "-wal", "-shm"):
                if os.path.islink(self.path + suffix):
                    raise TeamDBError(f"{self.path + suffix} is a symlink; the team server does not follow "
                                      f"symlinks to its database. Remove it or give the real path")
            if not os.path.lexists(self.path):
                os.close(paths.open_nofollow(self.path, os.O_RDWR | os.O_CREAT, 0o600))
            self._wal(self._conn())
        except (sqlite3.Error, OSError) as exc:
            raise TeamDBError(f"cannot open the team database {self.path}: {exc}; check the path "
                              f"and its directory's permissions") from exc

    @staticmethod
    def _wal(conn: sqlite3.Connection) -> None:
        """WAL mode, persistent: once per file is enough. Switching takes an exclusive lock, which
        SQLite may refuse at once ("database is locked") while another process or thread switches
        it or migrates (replicas or `--workers N` starting together): read the mode first, and
        retry the switch for up to the busy timeout."""
        for attempt in range(50):
            try:
                if str(conn.execute("PRAGMA journal_mode").fetchone()[0]).lower() != "wal":
                    conn.execute("PRAGMA journal_mode=WAL")
                return
            except sqlite3.OperationalError as exc:
                if "locked" not in str(exc) or attempt == 49:
                    raise
                time.sleep(0.1)

    def _conn(self) -> sqlite3.Connection:
        conn: sqlite3.Connection | None = getattr(self._local, "conn", None)
        if conn is None:
            if self._closed:
                raise TeamDBError("the team database is closed; open it again (TeamDB.open)")
            conn = sqlite3.connect(self.path, timeout=5.0, isolation_level=None, check_same_thread=False)
            conn.execute("PRAGMA busy_timeout=5000")
            conn.execute("PRAGMA foreign_keys=ON")
            conn.execute("PRAGMA synchronous=NORMAL")
            self._local.conn = conn
            with self._lock:
                self._all.append(conn)
        return conn

    @contextmanager
    def _transaction(self, begin: str) -> Iterator[Tx]:
        try:
            conn = self._conn()
            conn.execute(begin)
        except sqlite3.Error as exc:
            raise TeamDBError(f"team database {self.path}: {exc}") from exc
        try:
            yield Tx(conn.cursor(), pyformat=False, loads=True)
            conn.execute("COMMIT")
        except BaseException as exc:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            if isinstance(exc, sqlite3.IntegrityError) and "UNIQUE" in str(exc):
                raise Conflict(str(exc)) from exc
            if isinstance(exc, sqlite3.Error):
                raise TeamDBError(f"team database {self.path}: {exc}") from exc
            raise

    def write(self) -> AbstractContextManager[Tx]:
        return self._transaction("BEGIN IMMEDIATE")

    @contextmanager
    def _autocommit(self) -> Iterator[Tx]:
        try:
            yield Tx(self._conn().cursor(), pyformat=False, loads=True)  # no BEGIN: each statement commits
        except sqlite3.IntegrityError as exc:
            if "UNIQUE" in str(exc):
                raise Conflict(str(exc)) from exc
            raise TeamDBError(f"team database {self.path}: {exc}") from exc
        except sqlite3.Error as exc:
            raise TeamDBError(f"team database {self.path}: {exc}") from exc

    def single(self) -> AbstractContextManager[Tx]:
        return self._autocommit()

    def read(self) -> AbstractContextManager[Tx]:
        return self._transaction("BEGIN")  # deferred: one snapshot for the reads of the block

    def close(self) -> None:
        with self._lock:
            self._closed = True
            conns, self._all = self._all, []
        for conn in conns:
            try:
                conn.close()
            except sqlite3.Error:
                pass


class PostgresDialect(Dialect):
    name = "postgresql"
    id_type = "BIGSERIAL PRIMARY KEY"
    json_type = "JSONB"
    day_sql = "CAST(FLOOR(created_at / 86400) AS BIGINT)"  # CAST alone would round
    least, greatest = "LEAST", "GREATEST"
    json_text = "{}::text"
    relaxed = "set_config('synchronous_commit', 'off', true) IS NOT NULL"  # WAL order is kept

    def __init__(self, url: str) -> None:
        try:
            import psycopg
            from psycopg_pool import ConnectionPool
        except ImportError as exc:
            raise TeamDBError(f"a PostgreSQL team database needs psycopg 3 and psycopg_pool ({exc.name or exc} "
                              f"is missing): {extra_hint('server', ['psycopg', 'psycopg-pool'])}") from exc
        self._psycopg = psycopg
        self.url = url

        def configure(conn: Any) -> None:
            conn.isolation_level = psycopg.IsolationLevel.READ_COMMITTED
            conn.autocommit = False

        try:  # one direct attempt first: a wrong URL fails at once, in one line, not after the pool's retries
            psycopg.connect(url, connect_timeout=CONNECT_TIMEOUT_S).close()
        except psycopg.Error as exc:
            raise TeamDBError(f"cannot connect to the team database {safe_url(url)}: {_first_line(exc)}; check "
                              f"the URL and that PostgreSQL is running and accepts this user") from None
        try:
            self.pool = ConnectionPool(url, min_size=1, max_size=10, configure=configure, open=True,
                                       name="ace-team")
            self.pool.wait(timeout=10.0)
        except psycopg.Error as exc:  # PoolTimeout (nothing could connect) is one too
            try:
                self.pool.close()
            except (psycopg.Error, AttributeError):
                pass
            raise TeamDBError(f"cannot connect to the team database {safe_url(url)}: {_first_line(exc)}; check "
                              f"the URL and that PostgreSQL is running and accepts this user") from exc

    @contextmanager
    def _transaction(self, autocommit: bool = False) -> Iterator[Tx]:
        errors = self._psycopg.errors
        try:
            with self.pool.connection() as conn:
                if autocommit:
                    conn.autocommit = True
                try:
                    with conn.cursor() as cur:
                        yield Tx(cur, pyformat=True, loads=False)
                finally:
                    if autocommit and not conn.closed:
                        conn.autocommit = False  # as `configure` left it, for the pool's next user
        except errors.UniqueViolation as exc:
            raise Conflict(str(exc)) from exc
        except self._psycopg.Error as exc:
            raise TeamDBError(f"team database {safe_url(self.url)}: {exc}") from exc

    def write(self) -> AbstractContextManager[Tx]:
        return self._transaction()

    def read(self) -> AbstractContextManager[Tx]:
        return self._transaction(autocommit=True)  # READ COMMITTED: a snapshot per statement either way

    def single(self) -> AbstractContextManager[Tx]:
        return self._transaction(autocommit=True)

    def migration_lock(self, tx: Tx) -> None:
        tx.value("SELECT pg_advisory_xact_lock(?)", (MIGRATION_LOCK,))

    def close(self) -> None:
        self.pool.close()


def open_dialect(url: str | None) -> Dialect:
    """The engine `url` names (see the module contract); TeamDBError for one it cannot open."""
    if url is None or url == "":
        return SQLiteDialect(default_path())
    if url.startswith(("postgresql://", "postgres://")):
        return PostgresDialect(url)
    if url.startswith("sqlite://"):
        rest = unquote(url[len("sqlite://"):])
        if not rest.startswith("/") or rest == "/":
            raise TeamDBError(f"{url!r}: write a SQLite URL as sqlite:///absolute/path/team-server.db")
        if rest.startswith("/~"):
            return SQLiteDialect(rest[1:])
        return SQLiteDialect("/" + rest.lstrip("/"))  # sqlite:///abs and sqlite:////abs alike
    if "://" in url:
        raise TeamDBError(f"{safe_url(url)!r}: the team database must be sqlite:///path or postgresql://…")
    return SQLiteDialect(url)  # a plain file path
