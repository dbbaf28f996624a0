"""Codex plugins that run ace-engine's hooks, and whether Codex will run them.

Codex (0.128 and later) installs a plugin into `$CODEX_HOME/plugins/cache/<marketplace>/<plugin>/
<version>/` (its manifest `.codex-plugin/plugin.json`, whose `hooks` names the hooks file, by
default `hooks/hooks.json`, commands using `${PLUGIN_ROOT}`), and runs the hooks a plugin ships only
when `[features].plugin_hooks = true` is in its config. ace-engine has no Codex plugin of its own
(`ace install --agent codex` writes `.codex/hooks.json`, which needs no such flag), but a user may
install one that runs our hooks — a port of our Claude Code plugin, a team's bundle. Then, with the
flag off, Codex loads the plugin and silently never runs its hooks: nothing is captured.

Contract: `ace_plugins()` lists the installed plugins whose hooks file has a handler running
ace-engine's hooks (`claude_settings.is_ours`) and that `[plugins."<name>@<marketplace>"]` does not
switch off; `plugin_hooks(project_root)` is the flag as Codex reads it (the project's
`.codex/config.toml`, else the user's; None when neither says). ace-engine never sets the flag
itself: `ace doctor` says when it is off and prints the line to add (`FIX_LINE`). Every file here
is read, never run; links are not followed, each read is bounded, the walk stops at `MAX_PLUGINS`.

Cost: a directory walk of the plugin cache (three levels) and a few small files; only `ace doctor`.
"""

from __future__ import annotations

import json
import os
from typing import Any

from ..core.errors import SettingsError
from ..core.paths import read_optional
from .claude_settings import is_ours
from .codex_config import codex_home, load_toml, paths

FIX_LINE = "plugin_hooks = true"
MAX_PLUGINS = 500
_LIMIT = 1024 * 1024


def _dirs(path: str) -> list[str]:
    try:
        with os.scandir(path) as it:
            return sorted(e.path for e in it if e.is_dir(follow_symlinks=False))
    except OSError:
        return []


def _json(path: str) -> Any:
    try:
        raw = read_optional(path, SettingsError, "", limit=_LIMIT, follow=False)
        return json.loads(raw) if raw else None
    except (SettingsError, ValueError, UnicodeDecodeError):
        return None


def _runs_ours(hooks_file: Any) -> bool:
    hooks = hooks_file.get("hooks") if isinstance(hooks_file, dict) else None
    for groups in hooks.values() if isinstance(hooks, dict) else []:
        for group in groups if isinstance(groups, list) else []:
            handlers = group.get("hooks") if isinstance(group, dict) else None
            if isinstance(handlers, list) and any(is_ours(h) for h in handlers):
                return True
    return False


def _hooks_path(root: str, manifest: Any) -> str | None:
    """The hooks file a plugin's manifest names (inside the plugin), or the default one."""
    named = manifest.get("hooks") if isinstance(manifest, dict) else None
    rel = named if isinstance(named, str) and named else "hooks/hooks.json"
    path = os.path.normpath(os.path.join(root, rel))
    return path if path.startswith(os.path.normpath(root) + os.sep) else None


def _switched_off(config: dict[str, Any], key: str) -> bool:
    plugins = config.get("plugins")
    entry = plugins.get(key) if isinstance(plugins, dict) else None
    return isinstance(entry, dict) and entry.get("enabled") is False


def ace_plugins() -> list[dict[str, str]]:
    """The installed Codex plugins that run ace-engine's hooks: {name, marketplace, root, hooks}."""
    cache = os.path.join(codex_home(), "plugins", "cache")
    try:
        config = load_toml(os.path.join(codex_home(), "config.toml"))[1]
    except SettingsError:
        config = {}
    found: list[dict[str, str]] = []
    seen = 0
    for market in _dirs(cache):
        for plugin in _dirs(market):
            for root in _dirs(plugin):
                seen += 1
                if seen > MAX_PLUGINS:
                    return found
                manifest = _json(os.path.join(root, ".codex-plugin", "plugin.json"))
                if not isinstance(manifest, dict):
                    continue
                hooks = _hooks_path(root, manifest)
                name = manifest.get("name") if isinstance(manifest.get("name"), str) else os.path.basename(plugin)
                key = f"{name}@{os.path.basename(market)}"
                if hooks and _runs_ours(_json(hooks)) and not _switched_off(config, key):
                    found.append({"name": key, "marketplace": os.path.basename(market), "root": root, "hooks": hooks})
    return found


def plugin_hooks(project_root: str) -> tuple[bool | None, str]:
    """(the `[features].plugin_hooks` value Codex reads — the project's file first, then the user's —
    or None when neither sets it; the file to fix: the one that set it, else the user's)."""
    project_toml, user_toml = paths("project", project_root)[1], paths("user", project_root)[1]
    for path in dict.fromkeys([project_toml, user_toml]):
        try:
            features = load_toml(path)[1].get("features")
        except SettingsError:
            continue  # a broken file is reported by the Codex install check
        value = features.get("plugin_hooks") if isinstance(features, dict) else None
        if isinstance(value, bool):
            return value, path
    return None, user_toml
