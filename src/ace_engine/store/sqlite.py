"""The embedded store: one SQLite file in WAL mode shared by every project and session.

Writers take the write lock up front (`BEGIN IMMEDIATE`) so two hooks can never deadlock on a
lock upgrade; they wait up to the busy timeout and then fail fast, and the caller spools.
"""

import os

try:  # The C module itself: `sqlite3` adds only datetime adapters we don't use, ~3 ms per hook.
    import _sqlite3 as sqlite3
except ImportError:  # pragma: no cover - interpreters that only ship the package
    import sqlite3

from .. import paths
from .policy_version import META_KEY, POLICY_VERSION
from .learning_sql import LearningSQL
from .maintenance_sql import MaintenanceSQL
from .playbook_sql import PlaybookSQL
from .schema import LATEST, MIGRATIONS


def _statements(script: str):
    """Split a migration into statements (triggers hold `;` inside BEGIN … END). Not
    `executescript`, which would commit the migrating transaction half-way."""
    buffer = ""
    for piece in script.split(";"):
        buffer += piece + ";"
        if sqlite3.complete_statement(buffer):
            if buffer.strip(" \n;"):
                yield buffer
            buffer = ""


class StoreError(Exception):
    """The store cannot be used (missing directory, corrupt, read-only, locked, disk full…)."""


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


class SQLiteStore(PlaybookSQL, LearningSQL, MaintenanceSQL):
    def __init__(self, path: str | None = None, *, busy_timeout_ms: int = 2000):
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
            if self.conn.execute("PRAGMA user_version").fetchone()[0] != LATEST:
                self._migrate()
        except (sqlite3.Error, OSError) as exc:
            raise StoreError(f"{self.path}: {exc}") from exc

    # -- lifecycle -----------------------------------------------------------------------------

    def _migrate(self) -> None:
        conn = self.conn
        version = conn.execute("PRAGMA user_version").fetchone()[0]
        if version > LATEST:
            raise StoreError(
                f"store schema v{version} is newer than this ace-engine (v{LATEST}); upgrade ace-engine"
            )
        if version == 0:
            # Must precede the first table; lets gc return space to the file system.
            conn.execute("PRAGMA auto_vacuum=INCREMENTAL")
            conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("BEGIN IMMEDIATE")
        try:
            version = conn.execute("PRAGMA user_version").fetchone()[0]  # another process may have won
            for number in range(version + 1, LATEST + 1):
                for statement in _statements(MIGRATIONS[number - 1]):
                    conn.execute(statement)
                conn.execute(f"PRAGMA user_version={number}")
            if version == 0:  # a new store holds no lesson yet: nothing to re-screen
                conn.execute("INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)",
                             (META_KEY, str(POLICY_VERSION)))
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        try:
            os.chmod(self.path, 0o600)
        except OSError:
            pass

    def close(self) -> None:
        try:
            self.conn.close()
        except sqlite3.Error:
            pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def schema_version(self) -> int:
        return self.conn.execute("PRAGMA user_version").fetchone()[0]

    # -- the hook write path ----------------------------------------------------------------------

    def apply(self, record: dict) -> None:
        """Write one hook's record (see `capture.records`) atomically. Replaying is idempotent for
        tool events (unique `tool_use_id`); the spool guarantees each record is applied once."""
        try:
            self._apply(record)
        except sqlite3.Error as exc:
            raise StoreError(f"{self.path}: {exc}") from exc

    def apply_many(self, records: list[dict]) -> None:
        conn = self.conn
        try:
            conn.execute("BEGIN IMMEDIATE")
            try:
                for record in records:
                    self._write(record)
                conn.execute("COMMIT")
            except BaseException:
                conn.execute("ROLLBACK")
                raise
        except sqlite3.Error as exc:
            raise StoreError(f"{self.path}: {exc}") from exc

    def _apply(self, record: dict) -> None:
        conn = self.conn
        conn.execute("BEGIN IMMEDIATE")
        try:
            self._write(record)
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise

    def _write(self, r: dict) -> None:
        conn = self.conn
        at = r["at"]
        event = r["event"]
        sid = r.get("session_id")
        project_id = None
        project = r.get("project")
        if project:
            row = conn.execute("SELECT id FROM projects WHERE key=?", (project["key"],)).fetchone()
            if row:
                project_id = row[0]
                if event == "SessionStart":
                    conn.execute(
                        "UPDATE projects SET root=?, last_seen_at=? WHERE id=?",
                        (project["root"], at, project_id),
                    )
            else:
                project_id = conn.execute(
                    "INSERT INTO projects(key, root, remote, name, created_at, last_seen_at)"
                    " VALUES (?,?,?,?,?,?)",
                    (project["key"], project["root"], project.get("remote"), project["name"], at, at),
                ).lastrowid
        if sid:
            s = r.get("session") or {}
            conn.execute(
                "INSERT OR IGNORE INTO sessions(session_id, project_id, cwd, transcript_path,"
                " agent_type, source, permission_mode, started_at) VALUES (?,?,?,?,?,?,?,?)",
                (
                    sid,
                    project_id,
                    s.get("cwd"),
                    s.get("transcript_path"),
                    s.get("agent_type"),
                    r.get("detail") if event == "SessionStart" else None,
                    s.get("permission_mode"),
                    at,
                ),
            )
            if event == "SessionStart":
                conn.execute(
                    "UPDATE sessions SET status='active', ended_at=NULL, end_reason=NULL,"
                    " transcript_path=COALESCE(?, transcript_path) WHERE session_id=?",
                    (s.get("transcript_path"), sid),
                )
            elif event == "SessionEnd":
                conn.execute(
                    "UPDATE sessions SET status='ended', ended_at=?, end_reason=? WHERE session_id=?",
                    (at, r.get("detail"), sid),
                )
            elif event == "PreCompact":
                conn.execute(
                    "UPDATE sessions SET compactions=compactions+1 WHERE session_id=?", (sid,)
                )
        conn.execute(
            "INSERT INTO hook_events(session_id, project_id, event, detail, agent_id, created_at,"
            " duration_ms) VALUES (?,?,?,?,?,?,?)",
            (sid, project_id, event, r.get("detail"), r.get("agent_id"), at, r.get("duration_ms")),
        )
        tool = r.get("tool_event")
        if tool:
            conn.execute(
                "INSERT OR IGNORE INTO tool_events(tool_use_id, session_id, project_id, agent_id,"
                " agent_type, tool_name, input, response, success, exit_code, error, is_interrupt,"
                " duration_ms, created_at) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                (
                    tool["tool_use_id"],
                    sid,
                    project_id,
                    r.get("agent_id"),
                    r.get("agent_type"),
                    tool["tool_name"],
                    tool.get("input"),
                    tool.get("response"),
                    1 if tool["success"] else 0,
                    tool.get("exit_code"),
                    tool.get("error"),
                    1 if tool.get("is_interrupt") else 0,
                    tool.get("duration_ms"),
                    at,
                ),
            )
        message = r.get("message")
        if message:
            conn.execute(
                "INSERT INTO messages(session_id, project_id, agent_id, role, text, created_at)"
                " VALUES (?,?,?,?,?,?)",
                (sid, project_id, r.get("agent_id"), message["role"], message["text"], at),
            )

    # -- reads for the CLI ------------------------------------------------------------------------

    def _rows(self, sql: str, params=()) -> list[dict]:
        cur = self.conn.execute(sql, params)
        names = [d[0] for d in cur.description]
        return [dict(zip(names, row)) for row in cur.fetchall()]

    def project_id(self, key: str) -> int | None:
        row = self.conn.execute("SELECT id FROM projects WHERE key=?", (key,)).fetchone()
        return row[0] if row else None

    def list_sessions(self, project_key: str | None = None, limit: int = 50) -> list[dict]:
        where, params = "", []
        if project_key is not None:
            where, params = "WHERE p.key = ?", [project_key]
        return self._rows(
            f"""
            SELECT s.session_id, p.name AS project, p.root AS project_root, s.cwd, s.source,
                   s.status, s.started_at, s.ended_at, s.end_reason, s.compactions,
                   s.transcript_path,
                   (SELECT COUNT(*) FROM tool_events t WHERE t.session_id = s.session_id) AS tool_events,
                   (SELECT COUNT(*) FROM tool_events t WHERE t.session_id = s.session_id
                        AND t.success = 0) AS tool_failures,
                   (SELECT COUNT(*) FROM messages m WHERE m.session_id = s.session_id) AS messages,
                   (SELECT COUNT(*) FROM hook_events h WHERE h.session_id = s.session_id) AS hook_events
            FROM sessions s LEFT JOIN projects p ON p.id = s.project_id
            {where}
            ORDER BY s.started_at DESC LIMIT ?
            """,
            (*params, limit),
        )

    def session(self, session_id: str) -> dict | None:
        rows = self._rows(
            "SELECT s.*, p.name AS project, p.root AS project_root, p.remote AS project_remote"
            " FROM sessions s LEFT JOIN projects p ON p.id = s.project_id WHERE s.session_id = ?",
            (session_id,),
        )
        return rows[0] if rows else None

    def session_events(self, session_id: str) -> dict:
        tool_events = self._rows(
            "SELECT tool_use_id, tool_name, success, exit_code, error, is_interrupt, duration_ms,"
            " input, response, agent_id, agent_type, created_at FROM tool_events"
            " WHERE session_id = ? ORDER BY id",
            (session_id,),
        )
        for event in tool_events:
            event["success"] = bool(event["success"])
            event["is_interrupt"] = bool(event["is_interrupt"])
        return {
            "hook_events": self._rows(
                "SELECT event, detail, agent_id, created_at, duration_ms FROM hook_events"
                " WHERE session_id = ? ORDER BY id",
                (session_id,),
            ),
            "tool_events": tool_events,
            "messages": self._rows(
                "SELECT role, text, agent_id, created_at FROM messages"
                " WHERE session_id = ? ORDER BY id",
                (session_id,),
            ),
        }

    def counts(self, project_key: str | None = None) -> dict:
        if project_key is None:
            pid_filter, params = "", ()
        else:
            pid_filter, params = " WHERE project_id = (SELECT id FROM projects WHERE key = ?)", (project_key,)
        out = {}
        for table in ("sessions", "tool_events", "messages", "hook_events"):
            out[table] = self.conn.execute(f"SELECT COUNT(*) FROM {table}{pid_filter}", params).fetchone()[0]
        out["projects"] = self.conn.execute("SELECT COUNT(*) FROM projects").fetchone()[0]
        return out

    def last_activity(self, project_key: str | None = None) -> float | None:
        sql = "SELECT MAX(created_at) FROM hook_events"
        params: tuple = ()
        if project_key is not None:
            sql += " WHERE project_id = (SELECT id FROM projects WHERE key = ?)"
            params = (project_key,)
        return self.conn.execute(sql, params).fetchone()[0]
