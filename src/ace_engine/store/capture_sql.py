"""The capture tables — projects, sessions, hook events, tool events, messages — behind the store
interface: the hook write path (`apply`), the one place that finds or creates a project, and the
reads of what was captured (CLI, learning worker).

Contract: `apply(record)` writes one hook's record (see `hooks.records`) in one write
transaction; replaying it is idempotent for tool events (unique `tool_use_id`) and the spool
guarantees each record is applied once. `find_project` / `create_project` are the only SQL that
looks a project up by key or inserts one; every family goes through them.

Cost: `apply` is a handful of indexed statements; this module imports only `_base`.
"""

from __future__ import annotations

from ._base import StoreBase, StoreError, sqlite3

TYPE_CHECKING = False  # not `typing.TYPE_CHECKING`: the hooks must not import `typing` (~3 ms)
if TYPE_CHECKING:
    from collections.abc import Iterable
    from typing import Any

    from ..core import _types as row_types  # the row shapes this module returns
    from .interfaces import Job, Record
    from .redacting import RedactingConnection


# -- projects: the one place for their lookup and creation ----------------------------------------

def find_project(conn: RedactingConnection, key: str) -> int | None:
    row = conn.execute("SELECT id FROM projects WHERE key=?", (key,)).fetchone()
    return row[0] if row else None


def create_project(conn: RedactingConnection, key: str, root: str, remote: str | None, name: str,
                   now: float) -> int:
    rowid = conn.execute(
        "INSERT INTO projects(key, root, remote, name, created_at, last_seen_at) VALUES (?,?,?,?,?,?)",
        (key, root, remote, name, now, now),
    ).lastrowid
    if rowid is None:  # pragma: no cover - an INSERT that did not raise inserted a row
        raise StoreError(f"project {key!r} was not inserted")
    return rowid


# Captured events of the main agent have agent_id NULL; jobs store '' (NULLs aren't unique).
_AGENT_NULL = "agent_id IS NULL"
_AGENT_EQ = "agent_id = ?"


def agent_clause(agent_id: str | None) -> tuple[str, tuple[str, ...]]:
    """The WHERE clause selecting one agent's captured events ('' or None: the main agent)."""
    return (_AGENT_NULL, ()) if not agent_id else (_AGENT_EQ, (agent_id,))


_TOOL_COLUMNS = ("tool_use_id, tool_name, success, exit_code, error, is_interrupt, duration_ms, input, response,"
                 " agent_id, agent_type, created_at")


def _tool_events(rows: list[Any]) -> list[row_types.ToolEventRow]:
    for row in rows:  # stored as 0/1
        row["success"] = bool(row["success"])
        row["is_interrupt"] = bool(row["is_interrupt"])
    return rows


class CaptureSQL(StoreBase):
    # -- the hook write path ------------------------------------------------------------------------

    def apply(self, record: Record) -> None:
        """Write one hook's record atomically (raises StoreError; the caller spools)."""
        try:
            with self.transaction():
                self._write(record)
        except sqlite3.Error as exc:
            raise self._error(exc) from exc

    def apply_many(self, records: Iterable[Record]) -> None:
        """Write records in one transaction: all or none (the spool's replay chunks)."""
        try:
            with self.transaction():
                for record in records:
                    self._write(record)
        except sqlite3.Error as exc:
            raise self._error(exc) from exc

    def _write(self, r: Record) -> None:
        conn = self.conn
        at = r["at"]
        event = r["event"]
        sid = r.get("session_id")
        project_id = None
        project = r.get("project")
        if project:
            project_id = find_project(conn, project["key"])
            if project_id is None:
                project_id = create_project(conn, project["key"], project["root"], project.get("remote"),
                                            project["name"], at)
            elif event == "SessionStart":
                conn.execute("UPDATE projects SET root=?, last_seen_at=? WHERE id=?", (project["root"], at, project_id))
        if sid:
            s = r.get("session") or {}
            conn.execute(
                "INSERT OR IGNORE INTO sessions(session_id, project_id, cwd, transcript_path,"
                " agent_type, source, permission_mode, started_at, agent) VALUES (?,?,?,?,?,?,?,?,?)",
                (sid, project_id, s.get("cwd"), s.get("transcript_path"), s.get("agent_type"),
                 r.get("detail") if event == "SessionStart" else None, s.get("permission_mode"), at,
                 s.get("agent")),  # agent: which coding agent (migration 10); None from Claude Code's hooks
            )
            if event == "SessionStart":
                conn.execute(
                    "UPDATE sessions SET status='active', ended_at=NULL, end_reason=NULL,"
                    " transcript_path=COALESCE(?, transcript_path) WHERE session_id=?",
                    (s.get("transcript_path"), sid),
                )
            elif event == "SessionEnd":
                conn.execute("UPDATE sessions SET status='ended', ended_at=?, end_reason=? WHERE session_id=?",
                             (at, r.get("detail"), sid))
            elif event == "PreCompact":
                conn.execute("UPDATE sessions SET compactions=compactions+1 WHERE session_id=?", (sid,))
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
                (tool["tool_use_id"], sid, project_id, r.get("agent_id"), r.get("agent_type"), tool["tool_name"],
                 tool.get("input"), tool.get("response"), 1 if tool["success"] else 0, tool.get("exit_code"),
                 tool.get("error"), 1 if tool.get("is_interrupt") else 0, tool.get("duration_ms"), at),
            )
        message = r.get("message")
        if message:
            conn.execute(
                "INSERT INTO messages(session_id, project_id, agent_id, role, text, created_at)"
                " VALUES (?,?,?,?,?,?)",
                (sid, project_id, r.get("agent_id"), message["role"], message["text"], at),
            )

    # -- projects -----------------------------------------------------------------------------------

    def project_id(self, key: str) -> int | None:
        return find_project(self.conn, key)

    def ensure_project(self, key: str, root: str, remote: str | None, name: str, now: float) -> int:
        found = find_project(self.conn, key)  # the common case: no write lock
        if found is not None:
            return found
        with self.transaction():
            found = find_project(self.conn, key)  # another process may have created it meanwhile
            return found if found is not None else create_project(self.conn, key, root, remote, name, now)

    def list_projects(self) -> list[row_types.ProjectRow]:
        """Every known project (id, key, root, remote, name), oldest first."""
        return self._rows("SELECT id, key, root, remote, name FROM projects ORDER BY id")

    def project_row(self, project_id: int) -> row_types.ProjectRow | None:
        return self._one("SELECT * FROM projects WHERE id = ?", (project_id,))

    # -- reads for the CLI --------------------------------------------------------------------------

    def list_sessions(self, project_key: str | None = None, limit: int = 50) -> list[row_types.SessionSummary]:
        where, params = "", []
        if project_key is not None:
            where, params = "WHERE p.key = ?", [project_key]
        return self._rows(
            f"""
            SELECT s.session_id, p.name AS project, p.root AS project_root, s.cwd, s.source,
                   s.status, s.started_at, s.ended_at, s.end_reason, s.compactions,
                   s.transcript_path, s.agent,
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

    def session(self, session_id: str) -> row_types.SessionRow | None:
        return self._one(
            "SELECT s.*, p.name AS project, p.root AS project_root, p.remote AS project_remote"
            " FROM sessions s LEFT JOIN projects p ON p.id = s.project_id WHERE s.session_id = ?",
            (session_id,),
        )

    def session_events(self, session_id: str) -> row_types.SessionEvents:
        tool_events = _tool_events(self._rows(
            f"SELECT {_TOOL_COLUMNS} FROM tool_events WHERE session_id = ? ORDER BY id", (session_id,)))
        return {
            "hook_events": self._rows(
                "SELECT event, detail, agent_id, created_at, duration_ms FROM hook_events"
                " WHERE session_id = ? ORDER BY id", (session_id,)),
            "tool_events": tool_events,
            "messages": self._rows(
                "SELECT role, text, agent_id, created_at FROM messages WHERE session_id = ? ORDER BY id",
                (session_id,)),
        }

    def counts(self, project_key: str | None = None) -> row_types.StoreCounts:
        scope: str = ""
        params: tuple[int | None, ...] = ()
        if project_key is not None:  # an unknown key counts nothing (`= NULL` matches no row)
            scope, params = " WHERE project_id = ?", (find_project(self.conn, project_key),)

        def count(table: str) -> int:
            return int(self.conn.execute(f"SELECT COUNT(*) FROM {table}{scope}", params).fetchone()[0])

        projects = int(self.conn.execute("SELECT COUNT(*) FROM projects").fetchone()[0])
        return {"sessions": count("sessions"), "tool_events": count("tool_events"), "messages": count("messages"),
                "hook_events": count("hook_events"), "projects": projects}

    def last_activity(self, project_key: str | None = None) -> float | None:
        sql = "SELECT MAX(created_at) FROM hook_events"
        params: tuple[int | None, ...] = ()
        if project_key is not None:
            sql += " WHERE project_id = ?"
            params = (find_project(self.conn, project_key),)
        found: float | None = self.conn.execute(sql, params).fetchone()[0]
        return found

    # -- reads for the learning worker: what a job covers ------------------------------------------

    def job_tool_events(self, job: Job) -> list[row_types.ToolEventRow]:
        clause, args = agent_clause(job["agent_id"])
        return _tool_events(self._rows(
            "SELECT id, tool_use_id, tool_name, input, response, success, exit_code, error, is_interrupt,"
            f" duration_ms, agent_id, agent_type, created_at FROM tool_events WHERE session_id = ? AND {clause}"
            " AND id > ? AND id <= ? ORDER BY id",
            (job["session_id"], *args, job["tool_from"], job["tool_to"]),
        ))

    def job_messages(self, job: Job) -> list[row_types.MessageRow]:
        clause, args = agent_clause(job["agent_id"])
        return self._rows(
            f"SELECT id, role, text, created_at FROM messages WHERE session_id = ? AND {clause}"
            " AND id > ? AND id <= ? ORDER BY id",
            (job["session_id"], *args, job["msg_from"], job["msg_to"]),
        )

    def last_prompt_before(self, session_id: str, message_id: int,
                           before_time: float | None = None) -> row_types.MessageRow | None:
        """The main agent's last user prompt before a point: the task a continuation belongs to."""
        sql = ("SELECT id, role, text, created_at FROM messages WHERE session_id = ? AND agent_id IS NULL"
               " AND role = 'user' AND id <= ?")
        params: tuple[str | int | float, ...] = (session_id, message_id)
        if before_time is not None:
            sql += " AND created_at <= ?"
            params += (before_time,)
        return self._one(sql + " ORDER BY id DESC LIMIT 1", params)

    def tool_events_before(self, session_id: str, agent_id: str | None, tool_id: int,
                           limit: int = 30) -> list[row_types.ToolEventRow]:
        """The last `limit` tool events of this session+agent up to `tool_id` (the previous turn)."""
        clause, args = agent_clause(agent_id)
        rows = self._rows(
            "SELECT id, tool_use_id, tool_name, input, response, success, exit_code, error, is_interrupt,"
            f" duration_ms, created_at FROM tool_events WHERE session_id = ? AND {clause} AND id <= ?"
            " ORDER BY id DESC LIMIT ?", (session_id, *args, tool_id, limit),
        )
        return _tool_events(rows[::-1])

    def session_tool_ids(self, session_id: str) -> set[str]:
        return {r[0] for r in self.conn.execute("SELECT tool_use_id FROM tool_events WHERE session_id = ?",
                                                (session_id,))}
