"""Switch ace-engine on and off for Antigravity CLI: its `hooks.json` and its `mcp_config.json`.

Contract (from agy's documented layout; no binary was run): `install(scope, project_root)` writes
ace-engine's hook, named `ace-engine`, into `<project>/.agents/hooks.json`, or with scope "user"
`~/.gemini/antigravity-cli/hooks.json`, and registers `ace mcp` as `mcpServers.ace` in the
`mcp_config.json` beside it (`{"command": <this Python>, "args": ["-I", "-m", "ace_engine.mcp_server"]}`).
The file maps hook names to `{"enabled"?, EVENT: [...]}`: PreToolUse / PostToolUse take matcher
groups (`{"matcher", "hooks": [handler]}`), every other event a flat list of handlers
(`{"type": "command", "command", "timeout"}`, whole seconds). Only our named hook and our server
entry are ever changed: other hooks, servers and keys are kept in their order; an `"enabled":
false` the user set on ours (agy's `/hooks` toggle) is kept and reported; a hook or server named
like ours that is not ace-engine's is left alone and reported. agy parses strictly and drops the
whole file on any error, so a file that is not strict JSON (comments, NaN, a trailing comma) or
not an object is refused untouched (`SettingsError`), and nothing non-strict is ever written. A
symlink at either path is refused (a repository's `.agents/` may point anywhere). A backup
(`*.ace-backup`) is written before a change, each file replaced atomically; re-running changes
nothing; `uninstall` removes exactly our hook and server (and a file or folder left empty).

Cost: two small JSON files read and, on a change, written atomically.
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any

from ..agents import registry
from ..core.errors import SettingsError
from ..core.files import atomic_write
from ..core.paths import read_optional
from ..hooks.events import EVENTS
from .agent_hooks import hook_command
from .claude_settings import is_ours
from .mcp_config import MODULE, SERVER
from .mcp_config import is_ours as is_our_server

AGENT = "antigravity"
NAME = "ace-engine"  # our hook's name: the top-level key of hooks.json that is ours
GROUPED = ("PreToolUse", "PostToolUse")  # the events whose entries are matcher groups
_LIMIT = 4 * 1024 * 1024


def folder(scope: str, project_root: str) -> str:
    if scope == "user":
        return os.path.join(os.path.expanduser("~"), ".gemini", "antigravity-cli")
    return os.path.join(project_root, ".agents")


def paths(scope: str, project_root: str) -> tuple[str, str]:
    """(hooks.json, mcp_config.json) of a scope: "user" or "project"."""
    base = folder(scope, project_root)
    return os.path.join(base, "hooks.json"), os.path.join(base, "mcp_config.json")


def _reject_constant(name: str) -> None:
    raise ValueError(f"{name} is not JSON")


def load(path: str) -> dict[str, Any] | None:
    """The file's object, None when absent; SettingsError for anything agy would not load (or a link)."""
    raw = read_optional(path, SettingsError, "fix or move it aside, then re-run", limit=_LIMIT, follow=False)
    if raw is None:
        return None
    if not raw.strip():
        return {}
    try:
        data = json.loads(raw.decode("utf-8"), parse_constant=_reject_constant)
    except (UnicodeDecodeError, ValueError) as exc:
        raise SettingsError(f"{path}: not strict JSON ({exc}); Antigravity would ignore the whole file. Nothing was "
                            "changed; fix the file or move it aside, then re-run.") from exc
    if not isinstance(data, dict):
        raise SettingsError(f"{path}: the top level must be a JSON object; nothing was changed")
    return data


def write(path: str, data: dict[str, Any], existed: bool) -> str | None:
    """Back up the current file (if any), then replace it atomically; the backup's path."""
    text = json.dumps(data, indent=2, ensure_ascii=False, allow_nan=False) + "\n"
    os.makedirs(os.path.dirname(path), exist_ok=True)
    backup = None
    mode = 0o644
    if existed:
        backup = f"{path}.ace-backup"
        with open(path, "rb") as src:  # a regular file: `load` refused a link
            atomic_write(backup, src.read(), fsync=False)
        mode = os.stat(path).st_mode & 0o777
    atomic_write(path, text, mode=mode)
    return backup


def hook_entry(python: str | None = None) -> dict[str, Any]:
    """Our named hook: every event of the agent's row, in the shape agy takes for it."""
    agent = registry.get(AGENT)
    entry: dict[str, Any] = {}
    for native, ours in agent.events.items():
        handler = {"type": "command", "command": hook_command(AGENT, native, python),
                   "timeout": int(EVENTS[ours]["timeout"]) * agent.timeout_scale}
        entry[native] = [{"matcher": "", "hooks": [handler]}] if native in GROUPED else [handler]
    return entry


def _handlers(entry: object) -> list[tuple[str, dict[str, Any]]]:
    """(event, handler) of every handler in a named hook, in either shape."""
    found = []
    for event, items in entry.items() if isinstance(entry, dict) else []:
        for item in items if isinstance(items, list) else []:
            inner = item.get("hooks") if isinstance(item, dict) and "hooks" in item else [item]
            found += [(event, h) for h in inner if isinstance(h, dict)] if isinstance(inner, list) else []
    return found


def installed(data: dict[str, Any]) -> dict[str, str]:
    """{event: command} of ace-engine's handlers in our named hook."""
    return {event: str(h.get("command", "")) for event, h in _handlers(data.get(NAME)) if is_ours(h)}


def server_entry(python: str | None = None) -> dict[str, Any]:
    return {"command": python or sys.executable, "args": ["-I", "-m", MODULE]}


def install(scope: str, project_root: str, python: str | None = None, with_mcp: bool = True) -> dict[str, Any]:
    hooks_path, mcp_path = paths(scope, project_root)
    current = load(hooks_path)
    servers_file = load(mcp_path)  # both read (and refused when unusable) before either is written
    data = dict(current or {})
    notes: list[str] = []
    events: list[str] = []
    existing = data.get(NAME)
    if existing is not None and not installed(data) and existing != {}:
        notes.append(f"a hook named `{NAME}` that is not ace-engine's is in {hooks_path}; kept, nothing installed")
    else:
        wanted = hook_entry(python)
        if isinstance(existing, dict) and isinstance(existing.get("enabled"), bool):
            wanted = {"enabled": existing["enabled"], **wanted}  # the user's switch stays theirs
            if existing["enabled"] is False:
                notes.append(f'the `{NAME}` hook is switched off ("enabled": false) in {hooks_path}; kept')
        if existing != wanted:
            events = sorted(e for e in wanted if e != "enabled")
            data[NAME] = wanted
    added: list[str] = []
    servers_data = dict(servers_file or {})
    if with_mcp:
        servers = servers_data.get("mcpServers")
        if servers is not None and not isinstance(servers, dict):
            raise SettingsError(f'{mcp_path}: "mcpServers" must be an object; nothing was changed')
        entry = (servers or {}).get(SERVER)
        if entry is None:
            servers_data["mcpServers"] = {**(servers or {}), SERVER: server_entry(python)}
            added.append(f"mcpServers.{SERVER}")
        elif not is_our_server(entry):
            notes.append(f"an MCP server named `{SERVER}` that is not ace-engine's is in {mcp_path}; kept")
    backups = []
    if events:
        backups.append(write(hooks_path, data, current is not None))
    if added:
        backups.append(write(mcp_path, servers_data, servers_file is not None))
    return {"agent": AGENT, "scope": scope, "path": hooks_path, "config": mcp_path, "changed": bool(events or added),
            "events": events, "added": added, "notes": notes, "backups": [b for b in backups if b]}


def _replace(path: str, data: dict[str, Any]) -> None:
    """Write what is left; a file left empty goes, with its backup (we made it, or only ours was in it)."""
    backup = write(path, data, True)
    if not data:
        os.unlink(path)
        if backup and os.path.exists(backup):
            os.unlink(backup)


def uninstall(scope: str, project_root: str) -> dict[str, Any]:
    hooks_path, mcp_path = paths(scope, project_root)
    current = load(hooks_path)
    servers_file = load(mcp_path)
    events: list[str] = []
    removed: list[str] = []
    if current is not None and installed(current):
        events = sorted(installed(current))
        _replace(hooks_path, {k: v for k, v in current.items() if k != NAME})
    servers = (servers_file or {}).get("mcpServers")
    if isinstance(servers, dict) and is_our_server(servers.get(SERVER)):
        rest = {k: v for k, v in servers.items() if k != SERVER}
        left = {k: v for k, v in (servers_file or {}).items() if k != "mcpServers"} | ({"mcpServers": rest} if rest
                                                                                       else {})
        _replace(mcp_path, left)
        removed.append(f"mcpServers.{SERVER}")
    try:
        os.rmdir(os.path.dirname(hooks_path))
    except OSError:
        pass  # not empty, or not there
    return {"agent": AGENT, "scope": scope, "path": hooks_path, "config": mcp_path,
            "changed": bool(events or removed), "events": events, "removed": removed}


def status(scope: str, project_root: str) -> dict[str, Any]:
    """What `ace status` / `ace doctor` read: our handlers, our hook's switch, our server."""
    hooks_path, mcp_path = paths(scope, project_root)
    try:
        data = load(hooks_path) or {}
        servers = (load(mcp_path) or {}).get("mcpServers")
        problem = None
    except SettingsError as exc:
        data, servers, problem = {}, None, str(exc)
    ours = data.get(NAME)
    enabled = ours.get("enabled", True) if isinstance(ours, dict) else True
    return {"agent": AGENT, "scope": scope, "path": hooks_path, "config": hooks_path, "events": installed(data),
            "feature": enabled, "mcp": isinstance(servers, dict) and is_our_server(servers.get(SERVER)),
            "problem": problem}
