"""Sessions brought in from another memory tool (`ace import --from claude-mem`): their session
row and their prompts and observations as messages, so `ace sessions`, the dashboard and MCP
`search_history` see them like captured ones.

Contract: `import_session` writes the session (status `ended`, `source` naming where it came
from, its agent) and its messages in one transaction, through the redacting connection (the one
redaction choke point); it writes nothing and answers False for a session id the store already
has — captured by the hooks, or imported before — so importing twice changes nothing.

Cost: one indexed lookup, then one INSERT per message.
"""

from __future__ import annotations

from ._base import StoreBase

TYPE_CHECKING = False  # not `typing.TYPE_CHECKING`: the store's modules keep the hooks' import light
if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence
    from typing import Any


class ImportSQL(StoreBase):
    def has_session(self, session_id: str) -> bool:
        return self.conn.execute("SELECT 1 FROM sessions WHERE session_id = ?", (session_id,)).fetchone() is not None

    def import_session(self, session: Mapping[str, Any], messages: Sequence[Mapping[str, Any]]) -> bool:
        """`session`: {session_id, project_id, cwd, agent, source, started_at, ended_at};
        `messages`: [{role, text, created_at}]. False (nothing written) when the id is known."""
        with self.transaction():
            if self.has_session(session["session_id"]):
                return False
            self.conn.execute(
                "INSERT INTO sessions(session_id, project_id, cwd, source, started_at, ended_at, status, end_reason,"
                " agent) VALUES (?,?,?,?,?,?,'ended',?,?)",
                (session["session_id"], session.get("project_id"), session.get("cwd"), session.get("source"),
                 float(session["started_at"]), session.get("ended_at"), session.get("source"), session.get("agent")))
            self.conn.executemany(
                "INSERT INTO messages(session_id, project_id, agent_id, role, text, created_at)"
                " VALUES (?,?,NULL,?,?,?)",
                [(session["session_id"], session.get("project_id"), m["role"], m["text"], float(m["created_at"]))
                 for m in messages if m.get("text")])
        return True
