"""claude-mem's SQLite database, read (never written): its sessions, user prompts, observations and
session summaries, for `ace import --from claude-mem`.

The schema, from claude-mem's source (`src/services/sqlite/SessionStore.ts`, its migrations):
`sdk_sessions (id, content_session_id, memory_session_id, project, platform_source, user_prompt,
started_at_epoch, completed_at_epoch, status, …)` — `content_session_id` is the agent's own session
id, `memory_session_id` claude-mem's; `user_prompts (content_session_id, prompt_number,
prompt_text, created_at_epoch)`; `observations (memory_session_id, project, type, title, subtitle,
facts, narrative, concepts, files_read, files_modified, prompt_number, created_at_epoch, …)` with
`facts` / `concepts` / `files_*` JSON lists as text; `session_summaries (memory_session_id,
project, request, investigated, learned, completed, next_steps, notes, prompt_number,
created_at_epoch, …)`. Epochs are milliseconds (`Date.now()`). Versions before its migration 17
named the ids `claude_session_id` / `sdk_session_id`: both spellings are read. Columns a version
lacks read as NULL.

Contract: `ClaudeMem(path)` opens the file read-only (`mode=ro`, no WAL checkpoint, no write) and
raises `ClaudeMemError`, one line naming the problem, for a missing file, one that is no SQLite
database, or a database without claude-mem's tables. Rows come back as dicts, oldest first.

Cost: one indexed query per session for its prompts, observations and summaries.
"""

from __future__ import annotations

import os
import sqlite3  # the full module: a foreign file, read by a CLI command, never on a hook's path
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from ..core.closing import Closing
from ..core.errors import AceError

if TYPE_CHECKING:
    from collections.abc import Iterator

HINT = "claude-mem keeps it at ~/.claude-mem/claude-mem.db"
_NEEDED = ("sdk_sessions", "observations")
# Our name → the names claude-mem's versions gave the column, newest first.
_ALIASES = {
    "content_session_id": ("content_session_id", "claude_session_id"),
    "memory_session_id": ("memory_session_id", "sdk_session_id"),
}
_SESSION = ("id", "content_session_id", "memory_session_id", "project", "platform_source", "user_prompt",
            "started_at_epoch", "completed_at_epoch", "status", "custom_title")
_PROMPT = ("id", "content_session_id", "prompt_number", "prompt_text", "created_at_epoch")
_OBSERVATION = ("id", "memory_session_id", "project", "type", "title", "subtitle", "text", "facts", "narrative",
                "concepts", "files_read", "files_modified", "prompt_number", "created_at_epoch", "agent_type")
_SUMMARY = ("id", "memory_session_id", "project", "request", "investigated", "learned", "completed", "next_steps",
            "files_read", "files_edited", "notes", "prompt_number", "created_at_epoch")


class ClaudeMemError(AceError):
    """claude-mem's database cannot be read; the message, one line, says why and where it lives."""


class ClaudeMem(Closing):
    def __init__(self, path: str) -> None:
        self.path = path
        if not os.path.exists(path):
            raise ClaudeMemError(f"{path} does not exist; {HINT} (or give its path)")
        if not os.path.isfile(path):
            raise ClaudeMemError(f"{path} is not a file; {HINT}")
        try:
            self.conn = sqlite3.connect(f"file:{quote(os.path.abspath(path))}?mode=ro", uri=True, timeout=5)
            self.conn.row_factory = sqlite3.Row
            tables = {r[0] for r in self.conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        except sqlite3.DatabaseError as exc:
            raise ClaudeMemError(f"{path} is not a SQLite database ({exc}); {HINT}") from None
        missing = [t for t in _NEEDED if t not in tables]
        if missing:
            raise ClaudeMemError(f"{path} is a SQLite database but not claude-mem's: it has no "
                                 f"{' or '.join(missing)} table; {HINT}")
        self.tables = tables
        self.columns = {t: {r[1] for r in self.conn.execute(f"PRAGMA table_info({t})")}
                        for t in ("sdk_sessions", "observations", "session_summaries", "user_prompts") if t in tables}

    def close(self) -> None:
        self.conn.close()

    def _select(self, table: str, wanted: tuple[str, ...]) -> str:
        have = self.columns.get(table, set())
        parts = []
        for name in wanted:
            found = next((c for c in _ALIASES.get(name, (name,)) if c in have), None)
            parts.append(f"{found} AS {name}" if found else f"NULL AS {name}")
        return f"SELECT {', '.join(parts)} FROM {table}"

    def _id_column(self, table: str, name: str) -> str | None:
        return next((c for c in _ALIASES[name] if c in self.columns.get(table, set())), None)

    def _rows(self, sql: str, params: tuple[Any, ...] = ()) -> list[dict[str, Any]]:
        try:
            return [dict(r) for r in self.conn.execute(sql, params)]
        except sqlite3.DatabaseError as exc:
            raise ClaudeMemError(f"{self.path}: cannot read claude-mem's tables ({exc}); {HINT}") from None

    def count_sessions(self) -> int:
        return int(self._rows("SELECT COUNT(*) AS n FROM sdk_sessions")[0]["n"])

    def sessions(self) -> Iterator[dict[str, Any]]:
        """Every session, oldest first."""
        yield from self._rows(self._select("sdk_sessions", _SESSION) + " ORDER BY started_at_epoch, id")

    def prompts(self, content_session_id: str) -> list[dict[str, Any]]:
        column = self._id_column("user_prompts", "content_session_id") if "user_prompts" in self.tables else None
        if column is None or not content_session_id:
            return []
        return self._rows(self._select("user_prompts", _PROMPT) + f" WHERE {column} = ?"
                          " ORDER BY prompt_number, created_at_epoch, id", (content_session_id,))

    def observations(self, memory_session_id: str) -> list[dict[str, Any]]:
        column = self._id_column("observations", "memory_session_id")
        if column is None or not memory_session_id:
            return []
        return self._rows(self._select("observations", _OBSERVATION) + f" WHERE {column} = ?"
                          " ORDER BY created_at_epoch, id", (memory_session_id,))

    def summaries(self, memory_session_id: str) -> list[dict[str, Any]]:
        column = self._id_column("session_summaries", "memory_session_id") \
            if "session_summaries" in self.tables else None
        if column is None or not memory_session_id:
            return []
        return self._rows(self._select("session_summaries", _SUMMARY) + f" WHERE {column} = ?"
                          " ORDER BY created_at_epoch, id", (memory_session_id,))
