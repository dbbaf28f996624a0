"""Register ace-engine's MCP server with Claude Code: the project's `.mcp.json` and a settings file.

Contract: `install(project_root, settings_path)` merges one server named `ace` into the
project's `.mcp.json` (`{"mcpServers": {"ace": {"type": "stdio", "command": <this Python>,
"args": ["-I", "-m", "ace_engine.mcp_server", (--allow-writes)]}}}`) and, in the chosen
Claude Code settings file, approves it (`enabledMcpjsonServers`, and out of
`disabledMcpjsonServers`: installing is the user's approval) and allows its read-only tools
(`permissions.allow`: `mcp__ace__search_lessons` …) so searching never prompts; the two writing
tools are left to Claude Code's prompt. Everything else in both files — other servers, other
keys, the order of keys — is kept; re-running changes nothing; a file that is not a JSON object
is refused untouched (`SettingsError`); a backup (`*.ace-backup`) is written before a change. A
server named `ace` that is not ours is never replaced. `uninstall` removes exactly what install
added (and a `.mcp.json` or settings file it leaves empty); when it takes the server out of
`.mcp.json` it also takes the approval out of every project settings file (`settings.json` and
`settings.local.json`), so no file approves a server that is gone, whichever scope was named.
`registration` reads what `ace doctor` checks; `sdk_problem` says whether an interpreter has the
`mcp` package (`ace install --mcp` refuses, writing nothing, when the server's would not).
`-I`: the project's environment
(PYTHONPATH set in its `.claude/settings.json`, modules in the project directory) never reaches
the interpreter; `-m ace_engine.mcp_server` needs ace-engine and `mcp` installed in it — the
Python `ace` itself runs on, as for the hooks.

`install_statusline(settings_path)` sets Claude Code's `statusLine` to `ace statusline`
(`statusline_command`: this Python, `-I -m ace_engine.integrations.statusline`, no CLI framework
on the path of a line drawn after every message) unless the user has a status line of their own,
which is kept; `uninstall_statusline` removes only ours.

Cost: two small JSON files read and, on a change, written atomically.
"""

from __future__ import annotations

import os
import shlex
import sys
from typing import Any

from ..core.errors import SettingsError
from . import claude_settings

SERVER = "ace"
MODULE = "ace_engine.mcp_server"
READ_TOOLS = ("search_lessons", "get_lesson", "search_history", "recent_failures")
ALLOW = tuple(f"mcp__{SERVER}__{tool}" for tool in READ_TOOLS)


def mcp_json_path(project_root: str) -> str:
    return os.path.join(project_root, ".mcp.json")


def server_entry(python: str | None = None, allow_writes: bool = False) -> dict[str, Any]:
    return {"type": "stdio", "command": python or sys.executable,
            "args": ["-I", "-m", MODULE] + (["--allow-writes"] if allow_writes else [])}


def statusline_command(python: str | None = None) -> dict[str, Any]:
    """Claude Code's `statusLine` setting for `ace statusline` (stdlib and the store: fast)."""
    return {"type": "command",
            "command": f"{shlex.quote(python or sys.executable)} -I -m ace_engine.integrations.statusline"}


def is_ours(entry: object) -> bool:
    """An MCP server entry that runs ace-engine's server (this module's, `ace mcp`, the plugin's launcher)."""
    if not isinstance(entry, dict):
        return False
    args = [str(a) for a in entry.get("args") or []] if isinstance(entry.get("args"), list) else []
    command = str(entry.get("command") or "")
    return (MODULE in args or any(a.endswith("ace_mcp.py") for a in args)
            or (os.path.basename(command) == "ace" and args[:1] == ["mcp"]))


def _load(path: str, what: str) -> dict[str, Any] | None:
    """The JSON object in `path` (read as Claude Code's settings are: `claude_settings.load`); None
    when missing; SettingsError when it, or one of the keys this module changes, can't be used."""
    data = claude_settings.load(path)
    if data is None:
        return None
    for key, kind in (("mcpServers", dict), ("permissions", dict), ("enabledMcpjsonServers", list),
                      ("disabledMcpjsonServers", list)):
        if key in data and not isinstance(data[key], kind):
            raise SettingsError(f'{path}: "{key}" must be a JSON {"object" if kind is dict else "list"} in {what}; '
                                "nothing was changed")
    allow = (data.get("permissions") or {}).get("allow")
    if allow is not None and not isinstance(allow, list):
        raise SettingsError(f'{path}: "permissions.allow" must be a list; nothing was changed')
    return data


def _remove_emptied(path: str, backup: str | None) -> None:
    """A file we emptied was ours alone: no file, no backup of only our entries."""
    os.unlink(path)
    if backup is not None:
        os.unlink(backup)


def install(project_root: str, settings_path: str, *, python: str | None = None,
            allow_writes: bool = False) -> dict[str, Any]:
    """Register and approve the `ace` server; see the module docstring. Both files are checked
    before either is written."""
    mcp_path = mcp_json_path(project_root)
    mcp_data, settings = _load(mcp_path, ".mcp.json"), _load(settings_path, "Claude Code settings")
    servers = dict((mcp_data or {}).get("mcpServers") or {})
    current = servers.get(SERVER)
    if current is not None and not is_ours(current):
        raise SettingsError(f"{mcp_path} already has an MCP server named `{SERVER}` that is not ace-engine's; "
                            "rename or remove it, then re-run. Nothing was changed")
    wanted = server_entry(python, allow_writes)
    result: dict[str, Any] = {"mcp_json": mcp_path, "settings": settings_path, "mcp_changed": False,
                              "settings_changed": False, "backups": []}
    if current != wanted:
        servers[SERVER] = wanted
        backup = claude_settings.write(mcp_path, {**(mcp_data or {}), "mcpServers": servers}, mcp_data is not None)
        result["mcp_changed"] = True
        result["backups"] += [backup] if backup else []
    data = dict(settings or {})
    enabled = list(data.get("enabledMcpjsonServers") or [])
    disabled = list(data.get("disabledMcpjsonServers") or [])
    permissions = dict(data.get("permissions") or {})
    allow = list(permissions.get("allow") or [])
    changed = SERVER not in enabled or SERVER in disabled or any(rule not in allow for rule in ALLOW)
    if changed:
        data["enabledMcpjsonServers"] = enabled + ([SERVER] if SERVER not in enabled else [])
        if SERVER in disabled:
            data["disabledMcpjsonServers"] = [name for name in disabled if name != SERVER]
        permissions["allow"] = allow + [rule for rule in ALLOW if rule not in allow]
        data["permissions"] = permissions
        backup = claude_settings.write(settings_path, data, settings is not None)
        result["settings_changed"] = True
        result["backups"] += [backup] if backup else []
    result["changed"] = result["mcp_changed"] or result["settings_changed"]
    result["writes"] = allow_writes
    return result


def install_statusline(settings_path: str, *, python: str | None = None) -> dict[str, Any]:
    """Set `statusLine` to `ace statusline` in a settings file — unless one is set already that is
    not ours: the user's own status line is kept (`kept` says so)."""
    settings = _load(settings_path, "Claude Code settings")
    current = (settings or {}).get("statusLine")
    wanted = statusline_command(python)
    result: dict[str, Any] = {"settings": settings_path, "changed": False, "kept": None, "backup": None}
    if current == wanted:
        return result
    if current is not None and not _our_statusline(current):
        result["kept"] = current
        return result
    result["backup"] = claude_settings.write(settings_path, {**(settings or {}), "statusLine": wanted},
                                             settings is not None)
    result["changed"] = True
    return result


def uninstall_statusline(settings_path: str) -> dict[str, Any]:
    settings = _load(settings_path, "Claude Code settings")
    if settings is None or not _our_statusline(settings.get("statusLine")):
        return {"settings": settings_path, "changed": False}
    data = {k: v for k, v in settings.items() if k != "statusLine"}
    backup = claude_settings.write(settings_path, data, True)
    if not data:
        _remove_emptied(settings_path, backup)
    return {"settings": settings_path, "changed": True}


def _our_statusline(entry: object) -> bool:
    command = str(entry.get("command", "")).strip() if isinstance(entry, dict) else ""
    return "ace_engine.integrations.statusline" in command or command.endswith("ace statusline")


def uninstall(project_root: str, settings_path: str) -> dict[str, Any]:
    """Remove exactly what `install` added: our server, its approval and its read rules from
    `settings_path` — and, when the server leaves `.mcp.json`, from every project settings file
    (`.claude/settings.json` and `settings.local.json`), so none approves a server that is gone.
    Every file is checked before any is written."""
    mcp_path = mcp_json_path(project_root)
    targets = [settings_path] + [claude_settings.settings_path(scope, project_root) for scope in ("project", "local")]
    targets = list(dict.fromkeys(os.path.abspath(p) for p in targets))
    mcp_data = _load(mcp_path, ".mcp.json")
    loaded = {path: _load(path, "Claude Code settings") for path in targets}
    result: dict[str, Any] = {"mcp_json": mcp_path, "settings": settings_path, "mcp_changed": False,
                              "settings_changed": False, "unapproved_in": []}
    servers = dict((mcp_data or {}).get("mcpServers") or {})
    if mcp_data is not None and is_ours(servers.get(SERVER)):
        del servers[SERVER]
        data = {**mcp_data, "mcpServers": servers}
        if not servers:
            del data["mcpServers"]
        backup = claude_settings.write(mcp_path, data, True)
        if not data:
            _remove_emptied(mcp_path, backup)
        result["mcp_changed"] = True
    for path, settings in loaded.items():
        if settings is None or (path != os.path.abspath(settings_path) and not result["mcp_changed"]):
            continue
        if _unapprove(path, settings):
            result["unapproved_in"].append(path)
    result["settings_changed"] = bool(result["unapproved_in"])
    result["changed"] = result["mcp_changed"] or result["settings_changed"]
    return result


def _unapprove(path: str, settings: dict[str, Any]) -> bool:
    """Take `ace` out of `enabledMcpjsonServers` and our read rules out of `permissions.allow`
    in one settings file; a file left empty goes. True when it changed."""
    data = dict(settings)
    enabled = list(data.get("enabledMcpjsonServers") or [])
    permissions = dict(data.get("permissions") or {})
    allow = list(permissions.get("allow") or [])
    if SERVER not in enabled and not any(rule in allow for rule in ALLOW):
        return False
    kept = [name for name in enabled if name != SERVER]
    if kept:
        data["enabledMcpjsonServers"] = kept
    else:
        data.pop("enabledMcpjsonServers", None)
    kept_allow = [rule for rule in allow if rule not in ALLOW]
    if kept_allow:
        permissions["allow"] = kept_allow
    else:
        permissions.pop("allow", None)
    if permissions:
        data["permissions"] = permissions
    else:
        data.pop("permissions", None)
    backup = claude_settings.write(path, data, True)
    if not data:
        _remove_emptied(path, backup)
    return True

SCOPES = ("project", "local", "user")


def registration(project_root: str) -> dict[str, Any]:
    """What `ace doctor` checks: the project's `.mcp.json` entry named `ace` (None when absent or
    unreadable; `problem` then says which), whether it is ours, and which settings files approve
    it (`enabledMcpjsonServers` or `enableAllProjectMcpServers`) or disable it. Reads only."""
    mcp_path = mcp_json_path(project_root)
    out: dict[str, Any] = {"mcp_json": mcp_path, "entry": None, "ours": False, "problem": None,
                           "enabled_in": [], "disabled_in": []}
    try:
        servers = (_load(mcp_path, ".mcp.json") or {}).get("mcpServers") or {}
        out["entry"] = servers.get(SERVER)
        out["ours"] = is_ours(out["entry"])
    except SettingsError as exc:
        out["problem"] = str(exc)
    for scope in SCOPES:
        path = claude_settings.settings_path(scope, project_root)
        try:
            data = _load(path, "Claude Code settings") or {}
        except SettingsError:
            continue  # the hooks check names an unreadable settings file
        if SERVER in (data.get("enabledMcpjsonServers") or []) or data.get("enableAllProjectMcpServers") is True:
            out["enabled_in"].append((scope, path))
        if SERVER in (data.get("disabledMcpjsonServers") or []):
            out["disabled_in"].append((scope, path))
    return out


SDK_CHECK = ("import importlib.util, importlib.metadata as m; "
             "print(m.version('mcp') if importlib.util.find_spec('mcp') else '')")


def sdk_problem(python: str | None = None) -> str | None:
    """Why `ace mcp` can't start with `python` (default: this interpreter): the `mcp` package,
    version 2, is missing there. None when it is there. Another interpreter is asked in a
    subprocess (the user named it with `--python`)."""
    import importlib.util
    from importlib import metadata

    version = ""
    if python and os.path.abspath(python) != os.path.abspath(sys.executable):
        import subprocess

        try:
            proc = subprocess.run([python, "-I", "-c", SDK_CHECK], capture_output=True, text=True, timeout=30)
        except (OSError, subprocess.TimeoutExpired) as exc:
            return f"{python} does not run ({exc})"
        version = proc.stdout.strip() if proc.returncode == 0 else ""
    else:
        try:
            version = metadata.version("mcp") if importlib.util.find_spec("mcp") else ""
        except (ImportError, ValueError, metadata.PackageNotFoundError):
            version = ""
    if not version:
        return "the `mcp` package is not installed"
    if version.split(".")[0] != "2":
        return f"the `mcp` package is version {version}; ace-engine's server needs 2.x"
    return None


def sdk_hint(python: str | None = None) -> str:
    """The command that adds the `mcp` package where the server runs: this environment's way
    (`install_route`), or that of the environment `python` belongs to."""
    from ..core import install_route

    if python and os.path.abspath(python) != os.path.abspath(sys.executable):
        return install_route.extra_hint("mcp", prefix=os.path.dirname(os.path.dirname(python)), python=python)
    return install_route.extra_hint("mcp")
