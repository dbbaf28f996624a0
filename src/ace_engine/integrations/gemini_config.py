"""Switch ace-engine on and off for Gemini CLI: the `hooks` and `mcpServers` of its settings.json.

Contract: `install(scope, project_root)` merges ace-engine's hooks (`agent_hooks`) into
`<project>/.gemini/settings.json`, or with scope "user" `~/.gemini/settings.json`, and registers
`ace mcp` under `mcpServers.ace` (`{"command": <this Python>, "args": ["-I", "-m",
"ace_engine.mcp_server"]}`). Everything else in the file is kept; a file that is not a JSON
object is refused untouched (Gemini accepts comments in it; we do not rewrite such a file);
a backup is written before a change; re-running changes nothing; `uninstall` removes exactly the
handlers and the server entry that are ours (and a file or folder it leaves empty). Hooks are on
in Gemini by default; `hooksConfig.enabled = false` switches them all off, which `status` reports.

Gemini warns before it runs a project's hook it has not seen (it fingerprints each command), and
reads a project's `.gemini/` only in a trusted folder when folder trust is on: its own prompts.

Cost: one small JSON file read and, on a change, written atomically.
"""

from __future__ import annotations

import os
from typing import Any

from ..core.errors import SettingsError
from . import agent_hooks, claude_settings
from .mcp_config import MODULE, SERVER
from .mcp_config import is_ours as is_our_server


def _table(data: dict[str, Any], key: str) -> dict[str, Any]:
    """`data[key]` when it is a table, else {} (a hand-edited file may hold anything there)."""
    value = data.get(key)
    return value if isinstance(value, dict) else {}


def settings_path(scope: str, project_root: str) -> str:
    folder = os.path.join(os.path.expanduser("~"), ".gemini") if scope == "user" \
        else os.path.join(project_root, ".gemini")
    return os.path.join(folder, "settings.json")


def server_entry(python: str | None = None) -> dict[str, Any]:
    import sys

    return {"command": python or sys.executable, "args": ["-I", "-m", MODULE]}


def install(scope: str, project_root: str, python: str | None = None, with_mcp: bool = True) -> dict[str, Any]:
    path = settings_path(scope, project_root)
    current = claude_settings.load(path)
    data, events = agent_hooks.merge(dict(current or {}), "gemini", python)
    added, notes = [], []
    servers = data.get("mcpServers")
    if with_mcp:
        if servers is not None and not isinstance(servers, dict):
            raise SettingsError(f'{path}: "mcpServers" must be an object; nothing was changed')
        entry = (servers or {}).get(SERVER)
        if entry is None:
            data = {**data, "mcpServers": {**(servers or {}), SERVER: server_entry(python)}}
            added.append(f"mcpServers.{SERVER}")
        elif not is_our_server(entry):
            notes.append(f"an MCP server named `{SERVER}` that is not ace-engine's is in {path}; kept")
    backup = claude_settings.write(path, data, current is not None) if events or added else None
    return {"agent": "gemini", "scope": scope, "path": path, "config": path, "changed": bool(events or added),
            "events": events, "added": added, "notes": notes, "backups": [backup] if backup else []}


def uninstall(scope: str, project_root: str) -> dict[str, Any]:
    path = settings_path(scope, project_root)
    current = claude_settings.load(path)
    if current is None:
        return {"agent": "gemini", "scope": scope, "path": path, "config": path, "changed": False, "events": [],
                "removed": []}
    data, events = agent_hooks.strip(current)
    removed = []
    servers = data.get("mcpServers")
    if isinstance(servers, dict) and is_our_server(servers.get(SERVER)):
        rest = {k: v for k, v in servers.items() if k != SERVER}
        data = {k: v for k, v in data.items() if k != "mcpServers"} | ({"mcpServers": rest} if rest else {})
        removed.append(f"mcpServers.{SERVER}")
    if events or removed:
        backup = claude_settings.write(path, data, True)
        if not data:  # only ours was in it: leave nothing behind
            os.unlink(path)
            if backup and os.path.exists(backup):
                os.unlink(backup)
            try:
                os.rmdir(os.path.dirname(path))
            except OSError:
                pass
    return {"agent": "gemini", "scope": scope, "path": path, "config": path, "changed": bool(events or removed),
            "events": events, "removed": removed}


def status(scope: str, project_root: str) -> dict[str, Any]:
    path = settings_path(scope, project_root)
    try:
        data = claude_settings.load(path) or {}
        problem = None
    except SettingsError as exc:
        data, problem = {}, str(exc)
    servers = _table(data, "mcpServers")
    hooks_config = _table(data, "hooksConfig")
    return {"agent": "gemini", "scope": scope, "path": path, "config": path, "events": agent_hooks.installed(data),
            "feature": hooks_config.get("enabled", True), "mcp": is_our_server(servers.get(SERVER)),
            "problem": problem}
