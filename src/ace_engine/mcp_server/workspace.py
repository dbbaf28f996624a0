"""What every MCP tool works with: the project, its configuration, the store, the session, the clock.

Contract: one `Workspace` per server process. The project is the server's working directory
(Claude Code starts MCP servers in the project directory), identified like the hooks identify
it (`project.identify`: the git top level, the normalized remote); the configuration is the
layered one of that project, read leniently (a bad file is logged and skipped, as for the hooks:
the server must start). The store (`store.history_sql.McpStore`) is opened on first use and
kept; when it cannot be opened, each tool says so with the fix instead of the server dying. The
Claude Code session is `$CLAUDE_CODE_SESSION_ID`, which Claude Code gives the servers it starts
(None elsewhere): explicit marks and proposals are recorded under it, as the hooks record
injections. `writes` says whether the two writing tools are offered: `--allow-writes` on the
command line, or the user-level `mcp.allow_writes` setting once it exists (never a repository's
`.ace.toml`: config.py keeps user-level keys out of project files). `lock` serialises the tools'
use of the one SQLite connection: the SDK may run calls on worker threads.

Cost: `identify` (two small file reads) and `config.load` at start; the store opens on first use.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable

from ..core import config
from ..core.project import Project, identify
from ..store._base import StoreError
from ..store.history_sql import McpStore
from .answer import ToolError

# A tool answers within a second: a store held by a writer for longer is reported, not waited for.
BUSY_TIMEOUT_MS = 600
SESSION_ENV = "CLAUDE_CODE_SESSION_ID"


def user_allows_writes(cfg: config.Config) -> bool:
    """The user-level `mcp.allow_writes` setting; False while config.py has no such key."""
    try:
        return bool(cfg["mcp.allow_writes"])
    except KeyError:
        return False


class Workspace:
    def __init__(self, cwd: str, *, allow_writes: bool = False, session_id: str | None = None,
                 store_path: str | None = None, clock: Callable[[], float] = time.time) -> None:
        self.project: Project = identify(os.path.abspath(cwd))
        self.cfg = config.load(self.project.root)
        self.writes = allow_writes or user_allows_writes(self.cfg)
        self.session_id = session_id if session_id is not None else (os.environ.get(SESSION_ENV) or None)
        self.store_path = store_path
        self.clock = clock
        self.lock = threading.Lock()
        self.proposals = 0  # lessons proposed through this server (a session's cap)
        self._store: McpStore | None = None

    def now(self) -> float:
        return self.clock()

    def store(self) -> McpStore:
        if self._store is None:
            try:
                self._store = McpStore(self.store_path, busy_timeout_ms=BUSY_TIMEOUT_MS)
            except StoreError as exc:
                raise ToolError(f"the ace-engine store cannot be opened ({exc}); run `ace doctor` for the fix") from exc
        return self._store

    def project_id(self) -> int | None:
        """The project's id in the store; None until the hooks captured something of it (not
        cached: the hooks may create it while the server runs)."""
        return self.store().project_id(self.project.key)

    def in_scope(self, project_id: int | None) -> bool:
        """May this project's tools see a lesson of `project_id`? Its own lessons and the global ones."""
        return project_id is None or project_id == self.project_id()

    def close(self) -> None:
        if self._store is not None:
            self._store.close()
            self._store = None
