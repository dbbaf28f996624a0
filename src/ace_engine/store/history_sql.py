"""The captured history as the agent asks about it (`ace mcp`, `ace statusline`): prompts, commands,
failures and what followed them, and a session's figures — behind the store interface.

Contract: read-only. `tool_events` and `messages` have no index by project or by text (their
indexes are `(session_id, id)` and `created_at`), so every text search here walks a window of
primary keys given by the caller — `(low, high]`, newest first, with a LIMIT — and the caller
(`mcp_server.history`) walks windows back from the newest until it has enough or its time is
up: a search costs what the window costs, never the whole table at once. Terms match
case-insensitively (ASCII) as substrings: a tool call's `input` (the command, the file, the
pattern), and for a failed call also its `error` and `response`; a successful call's output is
not searched (every Read of a file would match its words). Everything else walks an index: a
session's next calls, its injections, changes since a time, the project's command statistics.
Rows are plain dicts; times are epoch seconds.

`McpStore` is the local store with these reads and the dashboard's (`views_sql.ViewsSQL`: a
lesson's injections and outcomes) mixed in: what `ace mcp` and `ace statusline` open. Like
`ViewsSQLiteStore`, it is not part of `SQLiteStore`, so the hooks pay nothing for it.

Cost: imports the store (`store.sqlite`) and `views_sql`; never on a hook's path.
"""

from __future__ import annotations

from ._base import StoreBase, like_escape
from .sqlite import SQLiteStore
from .views_sql import ViewsSQL

TYPE_CHECKING = False  # not `typing.TYPE_CHECKING`: the store's modules keep `typing` off the hook path
if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Any, Literal

    from ._base import SQLValue
    from .records import CommandStatsHit, MessageHit, ProjectSession, SessionHead, ToolHit, TranscriptSessionHit

# A tool call as the history shows it: what `observe.trajectory.step_from_event` reads.
_TOOL = ("id, session_id, agent_id, tool_use_id, tool_name, input, response, success, exit_code, error,"
         " is_interrupt, duration_ms, created_at")
MAX_ROWS = 200


def _like(term: str) -> str:
    return "%" + like_escape(term) + "%"


def _tool_rows(rows: list[Any]) -> list[ToolHit]:
    for row in rows:
        row["success"] = bool(row["success"])
        row["is_interrupt"] = bool(row["is_interrupt"])
    return rows


def _limit(n: int) -> int:
    return max(1, min(int(n), MAX_ROWS))


class HistorySQL(StoreBase):
    # -- where a window starts ------------------------------------------------------------------------

    def tool_id_bounds(self, since: float | None = None) -> tuple[int, int]:
        """(low, high): tool event ids `(low, high]` cover every call at or after `since` (all of
        them without it). Ids grow with time, so the first call since then bounds the window."""
        return self._id_bounds("tool_events", since)

    def message_id_bounds(self, since: float | None = None) -> tuple[int, int]:
        """Like `tool_id_bounds`, for captured prompts and final messages."""
        return self._id_bounds("messages", since)

    def _id_bounds(self, table: Literal["tool_events", "messages"], since: float | None) -> tuple[int, int]:
        high = int(self.conn.execute(f"SELECT COALESCE(MAX(id), 0) FROM {table}").fetchone()[0])
        if since is None:
            return 0, high
        row = self.conn.execute(f"SELECT id FROM {table} WHERE created_at >= ? ORDER BY created_at LIMIT 1",
                                (since,)).fetchone()
        return (high, high) if row is None else (int(row[0]) - 1, high)

    def row_time(self, table: str, row_id: int) -> float | None:
        """When the first row at or after `row_id` of `tool_events` or `messages` was captured (how
        far back a scan that stopped there got)."""
        if table not in ("tool_events", "messages"):
            raise ValueError(f"row_time reads tool_events or messages, not {table!r}")
        row = self.conn.execute(f"SELECT created_at FROM {table} WHERE id >= ? ORDER BY id LIMIT 1",
                                (row_id,)).fetchone()
        return float(row[0]) if row else None

    # -- searching a window, newest first -----------------------------------------------------------

    def tool_events_matching(self, project_id: int, low: int, high: int, terms: Sequence[str], *,
                             failed_only: bool = False, input_only: bool = False,
                             skip_tools: Sequence[str] = (), limit: int = 50) -> list[ToolHit]:
        """This project's tool calls with ids in `(low, high]` that contain every term (see the
        module docstring for where; `input_only`: in the call's input alone), newest first, but
        none of a tool whose name starts with one of `skip_tools`. No terms: every call (every
        failure with `failed_only`)."""
        sql = f"SELECT {_TOOL} FROM tool_events WHERE id > ? AND id <= ? AND project_id = ?"
        params: list[SQLValue] = [low, high, project_id]
        for prefix in skip_tools:
            sql += " AND tool_name NOT LIKE ? ESCAPE '\\'"
            params.append(_like(prefix)[1:])
        if failed_only:
            sql += " AND success = 0"
        for term in terms:
            pattern = _like(term)
            if input_only:
                sql += " AND input LIKE ? ESCAPE '\\'"
                params.append(pattern)
                continue
            sql += (" AND (input LIKE ? ESCAPE '\\' OR (success = 0 AND (error LIKE ? ESCAPE '\\'"
                    " OR response LIKE ? ESCAPE '\\')))")
            params += [pattern, pattern, pattern]
        return _tool_rows(self._rows(sql + " ORDER BY id DESC LIMIT ?", (*params, _limit(limit))))

    def messages_matching(self, project_id: int, low: int, high: int, terms: Sequence[str], *,
                          limit: int = 50) -> list[MessageHit]:
        """This project's prompts and final messages with ids in `(low, high]` that contain every
        term (no terms: all of them), newest first."""
        sql = ("SELECT id, session_id, agent_id, role, text, created_at FROM messages"
               " WHERE id > ? AND id <= ? AND project_id = ?")
        params: list[SQLValue] = [low, high, project_id]
        for term in terms:
            sql += " AND text LIKE ? ESCAPE '\\'"
            params.append(_like(term))
        return self._rows(sql + " ORDER BY id DESC LIMIT ?", (*params, _limit(limit)))

    # -- what followed ------------------------------------------------------------------------------

    def tool_events_after(self, session_id: str, agent_id: str | None, after_id: int,
                          limit: int = 30) -> list[ToolHit]:
        """The next `limit` calls of the same session and agent after `after_id` (the index on
        `(session_id, id)`), oldest first: what was done about a failure."""
        agent = "agent_id IS NULL" if not agent_id else "agent_id = ?"
        params: tuple[SQLValue, ...] = (session_id, after_id) + ((agent_id,) if agent_id else ())
        return _tool_rows(self._rows(
            f"SELECT {_TOOL} FROM tool_events WHERE session_id = ? AND id > ? AND {agent} ORDER BY id LIMIT ?",
            (*params, _limit(limit))))

    def session_heads(self, session_ids: Sequence[str]) -> dict[str, SessionHead]:
        """Per session: when it started, its status, its first prompt (200 characters)."""
        ids = [s for s in dict.fromkeys(session_ids) if isinstance(s, str)][:MAX_ROWS]
        if not ids:
            return {}
        rows = self._rows(
            "SELECT s.session_id, s.started_at, s.ended_at, s.status,"
            " (SELECT substr(m.text, 1, 200) FROM messages m WHERE m.session_id = s.session_id AND m.role = 'user'"
            "  ORDER BY m.id LIMIT 1) AS first_prompt"
            f" FROM sessions s WHERE s.session_id IN ({','.join('?' * len(ids))})", ids)
        return {r["session_id"]: r for r in rows}

    def command_stats_like(self, project_id: int, needle: str | None, limit: int = 10) -> list[CommandStatsHit]:
        """The project's command statistics (runs, failures, last error, last success), commands
        containing `needle` (all without it), the most failed first. Walks the primary key's
        `project_id` prefix: one project's commands, a few hundred rows at most."""
        sql = ("SELECT command, kind, runs, failures, sessions_failed, substr(last_error, 1, 500) AS last_error,"
               " last_session, last_ok_at, last_fail_at FROM command_stats WHERE project_id = ?")
        params: list[SQLValue] = [project_id]
        if needle:
            sql += " AND command LIKE ? ESCAPE '\\'"
            params.append(_like(needle))
        return self._rows(sql + " ORDER BY failures DESC, last_fail_at DESC LIMIT ?", (*params, _limit(limit)))

    def transcript_sessions_matching(self, project_id: int, terms: Sequence[str], since: float | None = None,
                                     limit: int = 20) -> list[TranscriptSessionHit]:
        """This project's sessions known only from a learned transcript (`project_sessions`), whose
        summary text holds every one of `terms` (any, when none), newest first: what MCP
        `search_history` can say of them, having no captured events to search."""
        sql = ("SELECT m.session_id, m.text, m.last_at FROM session_summaries m WHERE m.project_id = ?"
               " AND m.last_at >= ? AND NOT EXISTS (SELECT 1 FROM sessions s WHERE s.session_id = m.session_id)")
        params: list[SQLValue] = [project_id, since or 0.0]
        for term in terms:
            sql += " AND m.text LIKE ? ESCAPE '\\'"
            params.append(_like(term))
        return self._rows(sql + " ORDER BY m.last_at DESC LIMIT ?", (*params, _limit(limit)))

    # -- a session's figures (the status line) ------------------------------------------------------

    def session_shown(self, session_id: str) -> tuple[int, int]:
        """(injections, distinct lessons) recorded for this session (the `(session_id, id)` index)."""
        row = self.conn.execute("SELECT COUNT(*), COUNT(DISTINCT bullet_id) FROM injections WHERE session_id = ?",
                                (session_id,)).fetchone()
        return int(row[0]), int(row[1])

    def lessons_added_since(self, project_id: int | None, since: float, source: str | None = None,
                            status: str | None = None) -> int:
        """Lessons of this project (and global ones) added since `since`, by `source` when given
        (`learning`: what the learner wrote), in `status` now when given (`candidate`: still
        waiting to recur). The change log's time index, then each lesson's row."""
        sql = ("SELECT COUNT(DISTINCT c.bullet_id) FROM bullet_changes c JOIN bullets b ON b.id = c.bullet_id"
               " WHERE c.created_at >= ? AND c.op = 'ADD' AND (b.project_id IS ? OR b.project_id IS NULL)")
        params: tuple[SQLValue, ...] = (since, project_id)
        if source is not None:
            sql += " AND c.source = ?"
            params += (source,)
        if status is not None:
            sql += " AND b.status = ?"
            params += (status,)
        return int(self.conn.execute(sql, params).fetchone()[0])

    def waiting_review(self, project_id: int | None) -> int:
        """Lessons of this project (and global ones) held for review: quarantined."""
        return int(self.conn.execute(
            "SELECT COUNT(*) FROM bullets WHERE status = 'quarantined' AND (project_id IS ? OR project_id IS NULL)",
            (project_id,)).fetchone()[0])

    def marked_in_session(self, bullet_id: str, session_id: str, source: str) -> bool:
        """Did `source` already mark this lesson in this session? (the `(bullet_id, id)` index)"""
        return self.conn.execute(
            "SELECT 1 FROM bullet_changes WHERE bullet_id = ? AND op = 'TAG' AND source = ? AND session_id = ?"
            " LIMIT 1", (bullet_id, source, session_id)).fetchone() is not None


class McpStore(SQLiteStore, ViewsSQL, HistorySQL):
    """The local store with the history reads and the dashboard's (what `ace mcp` opens)."""

    def project_sessions(self, project_key: str | None, limit: int = 50) -> list[ProjectSession]:
        """The sessions of a project (of every project with None), newest first: the one list that
        `ace sessions`, MCP `search_history` and `ace recent` (through its summaries) agree on.
        Those the hooks captured (`list_sessions`' rows, `origin` "captured"), and those known only
        from a transcript `ace learn --transcript` learned (`origin` "transcript", `status`
        "learned from transcript"): no captured events, so their counts come from their summary, their times from
        their learning runs and summary. Walks the sessions' index, then the learning runs and
        summaries (a row per learned turn or session) — a CLI / MCP read, never a hook's."""
        captured = [{**row, "origin": "captured"} for row in self.list_sessions(project_key, limit)]
        scope, params = ("AND p.key = ?", (project_key,)) if project_key is not None else ("", ())
        learned = self._rows(
            "SELECT t.session_id, p.name AS project, p.root AS project_root, MIN(t.at) AS started_at,"
            " MAX(t.at) AS ended_at FROM (SELECT session_id, project_id, created_at AS at FROM learning_runs"
            "   WHERE source = 'transcript' AND session_id IS NOT NULL"
            "   UNION ALL SELECT session_id, project_id, last_at FROM session_summaries) t"
            " LEFT JOIN projects p ON p.id = t.project_id"
            f" WHERE NOT EXISTS (SELECT 1 FROM sessions s WHERE s.session_id = t.session_id) {scope}"
            " GROUP BY t.session_id ORDER BY MAX(t.at) DESC LIMIT ?", (*params, _limit(limit)))
        summaries = self.session_summaries([row["session_id"] for row in learned])
        for row in learned:
            known = summaries.get(row["session_id"])
            counts = (known["summary"].get("counts") if known else None) or {}
            row.update(origin="transcript", cwd=None, source="transcript", status="learned from transcript",
                       agent=known.get("agent") if known else None,
                       end_reason=None, compactions=0, transcript_path=None, hook_events=0,
                       tool_events=int(counts.get("tool_calls") or 0),
                       tool_failures=int(counts.get("failed_calls") or 0), messages=int(counts.get("prompts") or 0))
        rows = captured + learned
        rows.sort(key=lambda r: -float(r.get("ended_at") or r.get("started_at") or 0.0))
        return rows[:limit]

