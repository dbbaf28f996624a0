"""The continuity table — one summary per session (`session_summaries`) — behind the store interface.

Contract: `put_session_summary` writes (or rewrites) a session's summary in one transaction,
keeping when it was first written; every string goes through the redacting connection like any
other write. `recent_summaries` is the SessionStart hook's read: one index range
(`session_summaries_recent`: project, carry, last activity) returning plain columns, no JSON to
decode. The other reads (CLI, dashboard, MCP) decode `summary`. `continuity_events` is what the
summarizer reads: a session's tool events and messages with their ids and agents, in order.
Summaries go with their session in gc (`maintenance_sql.py`).

Cost: the hook's read is one indexed SELECT of at most `limit` rows; this module imports only
`json` and `_base`.
"""

from __future__ import annotations

import json

from ._base import StoreBase

TYPE_CHECKING = False  # not `typing.TYPE_CHECKING`: the hooks must not import `typing` (~3 ms)
if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Any

    from .records import CarriedSummary, ContinuityEvents, SummaryInput, SummaryRow

_COLUMNS = ("session_id, project_id, version, kind, summary, text, branch, open_ends, carry, last_at, created_at,"
            " updated_at, agent")  # agent: migration 10
_HOOK_COLUMNS = "session_id, branch, open_ends, last_at, text, kind"


def _decoded(row: Any) -> SummaryRow:  # a `_COLUMNS` row (a dict), `summary` decoded
    try:
        summary = json.loads(row["summary"]) if row.get("summary") else {}
    except ValueError:  # never written by us; shown as "no facts" rather than failing a view
        summary = {}
    row["summary"] = summary if isinstance(summary, dict) else {}
    row["carry"] = bool(row.get("carry"))
    return row


class ContinuitySQL(StoreBase):
    def put_session_summary(self, row: SummaryInput, now: float) -> None:
        """Write the summary of `row["session_id"]`: `row` holds project_id, version, kind,
        summary (a dict), text, branch, open_ends, carry and last_at, and may hold `agent` (else
        the session's recorded agent). A rewrite keeps created_at, and the agent unless given."""
        summary = json.dumps(row["summary"], ensure_ascii=False, sort_keys=True, separators=(",", ":"))
        with self.transaction():
            self.conn.execute(
                f"INSERT INTO session_summaries({_COLUMNS}) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,"
                " COALESCE(?, (SELECT agent FROM sessions WHERE session_id = ?)))"
                " ON CONFLICT(session_id) DO UPDATE SET project_id=excluded.project_id, version=excluded.version,"
                " agent=COALESCE(excluded.agent, session_summaries.agent),"
                " kind=excluded.kind, summary=excluded.summary, text=excluded.text, branch=excluded.branch,"
                " open_ends=excluded.open_ends, carry=excluded.carry, last_at=excluded.last_at,"
                " updated_at=excluded.updated_at",
                (row["session_id"], row.get("project_id"), int(row["version"]), row["kind"], summary, row["text"],
                 row.get("branch"), int(row.get("open_ends") or 0), 1 if row.get("carry") else 0,
                 float(row["last_at"]), now, now, row.get("agent"), row["session_id"]),
            )

    def set_summary_agent(self, session_id: str, agent: str | None) -> None:
        """Record which agent `session_id` ran in on its summary (a transcript's, learned after the
        fact: no captured session says it). No summary, or no agent: nothing changes."""
        if agent:
            with self.transaction():
                self.conn.execute("UPDATE session_summaries SET agent = ? WHERE session_id = ?", (agent, session_id))

    def session_agents(self, session_ids: Sequence[str]) -> dict[str, str]:
        """Per session that says: the agent it ran in (its captured session's, else its summary's)."""
        ids = [s for s in dict.fromkeys(session_ids) if isinstance(s, str)][:500]
        if not ids:
            return {}
        marks = ",".join("?" * len(ids))
        rows = self.conn.execute(
            f"SELECT session_id, agent FROM session_summaries WHERE agent IS NOT NULL AND session_id IN ({marks})"
            f" UNION ALL SELECT session_id, agent FROM sessions WHERE agent IS NOT NULL AND session_id IN ({marks})",
            (*ids, *ids)).fetchall()
        return {r[0]: r[1] for r in rows}

    def note_first_head(self, session_id: str, sha: str) -> None:
        """Keep `sha` as the commit `session_id` started on, unless one is kept already (the
        SessionStart hook's write: `continuity/head.py`); read back with `get_state(session_id,
        "first_head")`."""
        with self.transaction():
            self.conn.execute("INSERT OR IGNORE INTO session_state(session_id, key, value) VALUES (?, 'first_head', ?)",
                              (session_id, sha))

    def session_summary(self, session_id: str) -> SummaryRow | None:
        """The stored summary of one session (`summary` decoded), or None."""
        row = self._one(f"SELECT {_COLUMNS} FROM session_summaries WHERE session_id = ?", (session_id,))
        return _decoded(row) if row else None

    def session_summaries(self, session_ids: Sequence[str]) -> dict[str, SummaryRow]:
        """The stored summaries of these sessions, by session id (those without one are absent)."""
        out: dict[str, SummaryRow] = {}
        ids = list(dict.fromkeys(session_ids))
        for start in range(0, len(ids), 500):  # SQLite's parameter limit
            chunk = ids[start:start + 500]
            marks = ",".join("?" * len(chunk))
            for row in self._rows(f"SELECT {_COLUMNS} FROM session_summaries WHERE session_id IN ({marks})", chunk):
                out[row["session_id"]] = _decoded(row)
        return out

    def recent_summaries(self, project_id: int | None, *, since: float = 0.0, exclude_session: str | None = None,
                         limit: int = 12, min_version: int = 0) -> list[CarriedSummary]:
        """The SessionStart read: the project's summaries worth carrying over, last active since
        `since`, newest first, without `exclude_session` (the asking one), written by summary
        version `min_version` or later. Plain columns (session_id, branch, open_ends, last_at,
        text, kind); `summary` is not read."""
        if project_id is None:
            return []
        return self._rows(
            f"SELECT {_HOOK_COLUMNS} FROM session_summaries WHERE project_id = ? AND carry = 1 AND last_at >= ?"
            " AND session_id != ? AND version >= ? ORDER BY last_at DESC LIMIT ?",
            (project_id, since, exclude_session or "", min_version, limit),
        )

    def summary_page(self, project_id: int | None, *, limit: int = 20, carry_only: bool = False,
                     all_projects: bool = False) -> list[SummaryRow]:
        """Summaries newest first (`summary` decoded), of one project or `all_projects`."""
        where, params = [], []
        if not all_projects:
            where.append("project_id IS ?")
            params.append(project_id)
        if carry_only:
            where.append("carry = 1")
        clause = f"WHERE {' AND '.join(where)}" if where else ""
        rows = self._rows(f"SELECT {_COLUMNS} FROM session_summaries {clause} ORDER BY last_at DESC LIMIT ?",
                          (*params, limit))
        return [_decoded(row) for row in rows]

    def continuity_events(self, session_id: str) -> ContinuityEvents:
        """What a session's summary is made of: its tool events (every agent) and messages, each
        with its id, agent and time, in capture order."""
        events = self._rows(
            "SELECT id, tool_use_id, tool_name, input, response, success, exit_code, error, is_interrupt,"
            " duration_ms, agent_id, agent_type, created_at FROM tool_events WHERE session_id = ? ORDER BY id",
            (session_id,))
        for event in events:
            event["success"] = bool(event["success"])
            event["is_interrupt"] = bool(event["is_interrupt"])
        messages = self._rows(
            "SELECT id, role, text, agent_id, created_at FROM messages WHERE session_id = ? ORDER BY id",
            (session_id,))
        return {"tool_events": events, "messages": messages}
