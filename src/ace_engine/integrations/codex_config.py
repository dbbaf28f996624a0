"""Switch ace-engine on and off for Codex CLI: its `hooks.json` and its `config.toml`.

Contract: `install(scope, project_root)` merges ace-engine's hooks (`agent_hooks`) into
`hooks.json` — `<project>/.codex/hooks.json`, or with scope "user" `$CODEX_HOME/hooks.json`
(default `~/.codex`) — and, in the `config.toml` beside it, turns on Codex's hooks feature
(`[features] hooks = true`; Codex 0.169 reads the older `codex_hooks` as an alias and either being
true is kept), and registers `ace mcp` as `[mcp_servers.ace]` in the user's `config.toml`
(`$CODEX_HOME`): Codex 0.169 starts no MCP server named in a project's `.codex/config.toml`
(seen: the server's tools are offered to the model only from the user's file). Every line it adds to `config.toml`
ends with `MARK`, and `uninstall` removes exactly those lines and that one table (and a file or
folder it leaves empty): the user's own lines, comments and order are never rewritten. A file that
is not valid JSON / TOML is refused untouched (`SettingsError`); a backup (`*.ace-backup`) is
written before a change; re-running changes nothing. A feature set to false by the user, or an
`ace` server that is not ours, is left as it is and reported.

Codex runs no hook it has not been shown: a new or changed hook waits for the user's review in
`/hooks` (and a project's `.codex/` is read only once the project is trusted). ace-engine writes
neither approval: `install` says so, and `ace doctor` repeats it.

Cost: two small files read and, on a change, written atomically.
"""

from __future__ import annotations

import json
import os
import re
import sys
import tomllib
from typing import Any

from ..core.errors import SettingsError
from ..core.files import atomic_write
from ..core.paths import read_optional
from . import agent_hooks, claude_settings
from .mcp_config import MODULE, SERVER
from .mcp_config import is_ours as is_our_server

MARK = "# added by ace-engine"
_HEADER = re.compile(r"^\s*\[\s*([^\]\[]+?)\s*\]\s*(#.*)?$")


def _table(data: dict[str, Any], key: str) -> dict[str, Any]:
    """`data[key]` when it is a table, else {} (a hand-edited file may hold anything there)."""
    value = data.get(key)
    return value if isinstance(value, dict) else {}


def codex_home() -> str:
    return os.environ.get("CODEX_HOME") or os.path.join(os.path.expanduser("~"), ".codex")


def paths(scope: str, project_root: str) -> tuple[str, str]:
    """(hooks.json, config.toml) of a scope: "user" or "project"."""
    folder = codex_home() if scope == "user" else os.path.join(project_root, ".codex")
    return os.path.join(folder, "hooks.json"), os.path.join(folder, "config.toml")


def load_toml(path: str) -> tuple[str | None, dict[str, Any]]:
    """(the file's text or None when absent, its parsed table); SettingsError when unusable."""
    raw = read_optional(path, SettingsError, "check its permissions")
    if raw is None:
        return None, {}
    try:
        text = raw.decode("utf-8")
        return text, tomllib.loads(text)
    except (UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise SettingsError(f"{path}: not valid TOML ({exc}). Nothing was changed; fix the file or move it "
                            "aside, then re-run.") from exc


def _write_toml(path: str, text: str, existed: bool) -> str | None:
    tomllib.loads(text)  # never write what Codex could not read
    backup = None
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    mode = 0o644
    if existed:
        backup = f"{path}.ace-backup"
        with open(path, "rb") as src, open(backup, "wb") as dst:
            dst.write(src.read())
        mode = os.stat(path).st_mode & 0o777
    atomic_write(path, text, mode=mode)
    return backup


# Codex starts an MCP server with a reduced environment; these say where ace-engine's store and
# settings are (when set at all), so the server reads the same store the hooks write.
FORWARDED_ENV = ("ACE_HOME", "ACE_CONFIG", "XDG_DATA_HOME", "XDG_CONFIG_HOME")


def _server_lines(python: str | None) -> list[str]:
    args = ["-I", "-m", MODULE]
    return [f"[mcp_servers.{SERVER}]  {MARK}", f"command = {json.dumps(python or sys.executable)}  {MARK}",
            f"args = {json.dumps(args)}  {MARK}", f"env_vars = {json.dumps(list(FORWARDED_ENV))}  {MARK}"]


def merge_toml(text: str, data: dict[str, Any], python: str | None, with_mcp: bool,
               feature: bool = True) -> tuple[str, list[str], list[str]]:
    """(new text, what was added, what was left alone and why) for `config.toml`."""
    lines = text.splitlines()
    added: list[str] = []
    notes: list[str] = []
    features = _table(data, "features")
    if not feature or features.get("hooks") is True or features.get("codex_hooks") is True:
        pass
    elif features.get("hooks") is False or features.get("codex_hooks") is False:
        notes.append("[features] hooks is set to false in config.toml: Codex runs no hooks until it is true")
    else:
        at = next((i for i, line in enumerate(lines) if (m := _HEADER.match(line)) and m.group(1) == "features"),
                  None)
        if at is None:
            lines += ([""] if lines and lines[-1].strip() else []) + [f"[features]  {MARK}", f"hooks = true  {MARK}"]
        else:
            lines.insert(at + 1, f"hooks = true  {MARK}")
        added.append("features.hooks")
    servers = _table(data, "mcp_servers")
    if with_mcp:
        entry = servers.get(SERVER)
        if entry is None:
            lines += ([""] if lines and lines[-1].strip() else []) + _server_lines(python)
            added.append(f"mcp_servers.{SERVER}")
        elif not is_our_server(entry):
            notes.append(f"an MCP server named `{SERVER}` that is not ace-engine's is in config.toml; kept")
    return "\n".join(lines) + "\n", added, notes


def strip_toml(text: str) -> tuple[str, list[str]]:
    """`config.toml` without the lines `merge_toml` added (and the `[mcp_servers.ace]` table)."""
    return _without_ours(text, marked_lines=True)


def _strip_server(text: str) -> tuple[str, list[str]]:
    """Only our `[mcp_servers.ace]` table out of a `config.toml`."""
    return _without_ours(text, marked_lines=False)


def _without_ours(text: str, *, marked_lines: bool) -> tuple[str, list[str]]:
    """`text` without our `[mcp_servers.ace]` table and, with `marked_lines`, every other line
    `merge_toml` marked as ours; and the tables / keys removed."""
    out: list[str] = []
    removed: list[str] = []
    in_ours = False
    for line in text.splitlines():
        m = _HEADER.match(line)
        if m:
            in_ours = line.rstrip().endswith(MARK) and m.group(1) == f"mcp_servers.{SERVER}"
        if in_ours or (marked_lines and line.rstrip().endswith(MARK)):
            if m:
                removed.append(m.group(1))
            elif marked_lines and line.strip().startswith("hooks"):
                removed.append("features.hooks")
            continue
        out.append(line)
    while out and not out[-1].strip():
        out.pop()
    return ("\n".join(out) + "\n") if out else "", removed


def install(scope: str, project_root: str, python: str | None = None, with_mcp: bool = True) -> dict[str, Any]:
    hooks_path, toml_path = paths(scope, project_root)
    user_toml = paths("user", project_root)[1]
    current = claude_settings.load(hooks_path)
    text, data = load_toml(toml_path)  # every file read (and refused when malformed) before any is written
    user_text, user_data = (text, data) if user_toml == toml_path else load_toml(user_toml)
    merged, events = agent_hooks.merge(current or {}, "codex", python)
    new_text, added, notes = merge_toml(text or "", data, python, with_mcp and user_toml == toml_path)
    backups = []
    if events:
        backups.append(claude_settings.write(hooks_path, merged, current is not None))
    if added:
        backups.append(_write_toml(toml_path, new_text, text is not None))
    if with_mcp and user_toml != toml_path:
        user_new, user_added, user_notes = merge_toml(user_text or "", user_data, python, True, feature=False)
        notes += user_notes
        if user_added:
            backups.append(_write_toml(user_toml, user_new, user_text is not None))
            added += [f"{what} (in {user_toml})" for what in user_added]
    return {"agent": "codex", "scope": scope, "path": hooks_path, "config": toml_path, "changed": bool(events or added),
            "events": events, "added": added, "notes": notes, "backups": [b for b in backups if b]}


def uninstall(scope: str, project_root: str) -> dict[str, Any]:
    hooks_path, toml_path = paths(scope, project_root)
    current = claude_settings.load(hooks_path)
    text, _ = load_toml(toml_path)
    events: list[str] = []
    removed: list[str] = []
    if current is not None:
        stripped, events = agent_hooks.strip(current)
        if events:
            _replace_json(hooks_path, stripped)
    # The MCP server a project install registered lives in the user's file: it goes with it,
    # unless ace-engine's user-level hooks still use it.
    user_hooks, user_toml = paths("user", project_root)
    user_on = scope != "user" and bool(agent_hooks.installed(_quiet_load(user_hooks)))
    for path in dict.fromkeys([toml_path] + ([] if user_on else [user_toml])):
        file_text = text if path == toml_path else load_toml(path)[0]
        if file_text is None:
            continue
        new_text, gone = strip_toml(file_text) if path == toml_path else _strip_server(file_text)
        if gone:
            removed += gone if path == toml_path else [f"{what} (in {path})" for what in gone]
            if new_text.strip():
                _write_toml(path, new_text, True)
            else:
                os.unlink(path)
    _remove_empty_dir(os.path.dirname(hooks_path))
    return {"agent": "codex", "scope": scope, "path": hooks_path, "config": toml_path,
            "changed": bool(events or removed), "events": events, "removed": removed}


def _quiet_load(path: str) -> dict[str, Any]:
    try:
        return claude_settings.load(path) or {}
    except SettingsError:
        return {}


def _replace_json(path: str, data: dict[str, Any]) -> None:
    """Write the stripped hooks file; a file left empty (we created it) goes, with its backup."""
    backup = claude_settings.write(path, data, True)
    if not data:
        os.unlink(path)
        if backup and os.path.exists(backup):
            os.unlink(backup)


def _remove_empty_dir(folder: str) -> None:
    try:
        os.rmdir(folder)
    except OSError:
        pass  # not empty, or not there


def status(scope: str, project_root: str) -> dict[str, Any]:
    """What `ace status` / `ace doctor` read: the hooks installed, the feature (the scope's file,
    else the user's), the MCP server (the user's file: the only one Codex starts servers from)."""
    hooks_path, toml_path = paths(scope, project_root)
    user_toml = paths("user", project_root)[1]
    try:
        events = agent_hooks.installed(claude_settings.load(hooks_path) or {})
        data = load_toml(toml_path)[1]
        user = data if user_toml == toml_path else load_toml(user_toml)[1]
        problem = None
    except SettingsError as exc:
        events, data, user, problem = {}, {}, {}, str(exc)
    feature = None
    for table in (_table(data, "features"), _table(user, "features")):
        feature = table.get("hooks", table.get("codex_hooks")) if feature is None else feature
    return {"agent": "codex", "scope": scope, "path": hooks_path, "config": toml_path, "events": events,
            "feature": feature, "mcp": is_our_server(_table(user, "mcp_servers").get(SERVER)), "problem": problem}
