"""Switch ace-engine on and off in Claude Code settings files by merging hook entries.

Only entries whose command runs `ace_engine.hooks` are ours: everything else in the file — other
keys, other tools' hooks, the user's formatting of values — is preserved. A file that is not
valid JSON is refused and left untouched; a backup is written before any change.

An installed hook is `hook_argv` (`[python, "-I", LAUNCHER, event]`), written as `hook_command`;
`parse_hook_command` is its inverse, the one way a written command is read back (`ace doctor`).
Every file in the project goes through `load` and `write` (also `.mcp.json`, via `mcp_config`).
"""

import json
import os
import re
import shlex
import shutil
import sys
from typing import NamedTuple

from ..core.errors import SettingsError
from ..core.files import atomic_write
from ..core.paths import read_optional
from ..hooks.events import EVENTS, MATCHERS

PLUGIN_MARKER = "ace_hook.py"
# Our handlers, whichever way they were written: `…/ace_engine/hooks/launch.py EVENT` (what we
# install), `-m ace_engine.hooks EVENT`, `ace hook EVENT`, or the plugin's launcher.
OURS = re.compile(r"ace_engine[./\\]hooks|\bace hook |" + re.escape(PLUGIN_MARKER))
LAUNCHER = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "hooks", "launch.py")


def settings_path(scope: str, project_root: str) -> str:
    if scope == "user":
        return os.path.join(os.path.expanduser("~"), ".claude", "settings.json")
    name = "settings.local.json" if scope == "local" else "settings.json"
    return os.path.join(project_root, ".claude", name)


def hook_argv(event: str, python: str | None = None) -> list[str]:
    """The one definition of an installed hook: `[python, "-I", LAUNCHER, event]`.

    `-I` (isolated): a repository's `.claude/settings.json` may set `env` for the session, and
    PYTHONPATH / PYTHONHOME / PYTHONSTARTUP there must not reach our interpreter; the launcher
    puts the package on sys.path itself."""
    return [python or sys.executable, "-I", LAUNCHER, event]


def hook_command(event: str, python: str | None = None) -> str:
    """`hook_argv` as the shell line written into the settings file."""
    return shlex.join(hook_argv(event, python))


class HookCommand(NamedTuple):
    """An installed hook command read back by `parse_hook_command`."""

    python: str  # the interpreter it runs
    event: str

    @property
    def argv(self) -> list[str]:
        return hook_argv(self.event, self.python)


def parse_hook_command(command: str) -> HookCommand | None:
    """The inverse of `hook_command`: its interpreter and event when `command` is exactly what
    `ace install` writes (this package's launcher, one of the events, any interpreter), else None.
    Whether that interpreter may be run is the caller's decision."""
    try:
        argv = shlex.split(command)
    except ValueError:
        return None
    if len(argv) != 4 or argv[3] not in EVENTS or command != hook_command(argv[3], argv[0]):
        return None
    return HookCommand(argv[0], argv[3])


def is_ours(handler: object) -> bool:
    return isinstance(handler, dict) and bool(OURS.search(str(handler.get("command", ""))))


def load(path: str) -> dict | None:
    """The settings object, None if the file doesn't exist; SettingsError if it can't be used."""
    raw = read_optional(path, SettingsError, "check its permissions")
    if raw is None:
        return None
    if not raw.strip():
        return {}
    try:
        data = json.loads(raw.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise SettingsError(f"{path}: not UTF-8 text ({exc}); fix or move it aside, then re-run") from exc
    except json.JSONDecodeError as exc:
        raise SettingsError(
            f"{path}: not valid JSON (line {exc.lineno}, column {exc.colno}: {exc.msg}). "
            "Nothing was changed; fix the file or move it aside, then re-run."
        ) from exc
    if not isinstance(data, dict):
        raise SettingsError(f"{path}: the top level must be a JSON object; nothing was changed")
    hooks = data.get("hooks")
    if hooks is not None and not isinstance(hooks, dict):
        raise SettingsError(f'{path}: "hooks" must be an object; nothing was changed')
    for event, groups in (hooks or {}).items():
        if not isinstance(groups, list):
            raise SettingsError(f'{path}: "hooks.{event}" must be a list; nothing was changed')
    return data


def write(path: str, data: dict, existed: bool) -> str | None:
    """Back up the current file (if any), then replace it atomically. Returns the backup path.
    (Also how `mcp_config` writes `.mcp.json` and the settings keys it owns.)"""
    backup = None
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    mode = 0o644
    if existed:
        backup = f"{path}.ace-backup"
        shutil.copy2(path, backup)
        mode = os.stat(path).st_mode & 0o777
    atomic_write(path, json.dumps(data, indent=2, ensure_ascii=False) + "\n", mode=mode)
    return backup


def precompile() -> None:
    """Write the package's bytecode now, so hooks never compile source at run time (matters where
    PYTHONDONTWRITEBYTECODE is set or site-packages is read-only)."""
    import compileall

    try:
        compileall.compile_dir(os.path.dirname(os.path.dirname(LAUNCHER)), quiet=2)
    except OSError:
        pass


def desired_entries(python: str | None = None) -> dict[str, dict]:
    entries = {}
    for event, spec in EVENTS.items():
        handler = {"type": "command", "command": hook_command(event, python), "timeout": spec["timeout"]}
        group: dict = {"hooks": [handler]}
        if MATCHERS.get(event):
            group = {"matcher": MATCHERS[event], **group}
        entries[event] = group
    return entries


def _strip_ours(groups: list) -> tuple[list, bool]:
    """Remove our handlers from a list of matcher groups; drop groups left empty by that."""
    kept, changed = [], False
    for group in groups:
        handlers = group.get("hooks") if isinstance(group, dict) else None
        if not isinstance(handlers, list) or not any(is_ours(h) for h in handlers):
            kept.append(group)
            continue
        changed = True
        rest = [h for h in handlers if not is_ours(h)]
        if rest:
            kept.append({**group, "hooks": rest})
    return kept, changed


def install(path: str, python: str | None = None) -> dict:
    """Merge our hook entries into `path`. Idempotent: a second run changes nothing."""
    current = load(path)
    existed = current is not None
    data = dict(current or {})
    hooks = dict(data.get("hooks") or {})
    changed_events = []
    for event, group in desired_entries(python).items():
        groups = list(hooks.get(event) or [])
        if group in groups and sum(1 for g in groups for h in (g.get("hooks") or []) if is_ours(h)) == 1:
            continue  # already exactly as wanted
        kept, _ = _strip_ours(groups)
        hooks[event] = kept + [group]
        changed_events.append(event)
    if not changed_events:
        return {"path": path, "changed": False, "events": [], "backup": None}
    data["hooks"] = hooks
    backup = write(path, data, existed)
    return {"path": path, "changed": True, "events": changed_events, "backup": backup}


def strip_hooks(data: dict) -> tuple[dict, list[str]]:
    """`data` without ace-engine's hook handlers (and the event lists they alone filled), and the
    events it changed; the same for every agent whose config holds Claude Code-shaped `hooks`."""
    hooks = dict(data.get("hooks") or {})
    removed = []
    for event in list(hooks):
        kept, changed = _strip_ours(hooks[event])
        if not changed:
            continue
        removed.append(event)
        if kept:
            hooks[event] = kept
        else:
            del hooks[event]
    if not removed:
        return data, []
    out = dict(data)
    if hooks:
        out["hooks"] = hooks
    else:
        out.pop("hooks", None)
    return out, removed


def uninstall(path: str) -> dict:
    """Remove exactly our hook entries (and the containers they alone filled)."""
    current = load(path)
    if current is None:
        return {"path": path, "changed": False, "events": [], "backup": None}
    data, removed = strip_hooks(current)
    if not removed:
        return {"path": path, "changed": False, "events": [], "backup": None}
    backup = write(path, data, True)
    if not data:
        # Nothing but our hooks was in it: we created it, so leave nothing behind — not the file,
        # not its backup (which holds only our hooks too), not a `.claude` folder left empty.
        os.unlink(path)
        if backup is not None:  # always, as the file existed
            os.unlink(backup)
        backup = None
        try:
            os.rmdir(os.path.dirname(path))
        except OSError:
            pass  # not empty: other files live there
    return {"path": path, "changed": True, "events": removed, "backup": backup}


def installed_events(path: str) -> dict[str, str]:
    """{event: command} for our handlers in `path` (empty when none or unreadable)."""
    try:
        data = load(path) or {}
    except SettingsError:
        return {}
    found = {}
    for event, groups in (data.get("hooks") or {}).items():
        for group in groups:
            for handler in (group.get("hooks") or []) if isinstance(group, dict) else []:
                if is_ours(handler):
                    found[event] = handler.get("command", "")
    return found


def plugin_hooks_json() -> dict:
    """The plugin's `hooks/hooks.json`: same events, matchers and timeouts as `ace install`, run
    through the plugin's launcher with `$ACE_PYTHON` (default `python3`)."""
    hooks = {}
    for event, group in desired_entries("PYTHON").items():
        handler = dict(group["hooks"][0])
        handler["command"] = (
            f'"${{ACE_PYTHON:-python3}}" -I "${{CLAUDE_PLUGIN_ROOT}}/hooks/{PLUGIN_MARKER}" {event}'
        )
        hooks[event] = [{**group, "hooks": [handler]}]
    return {"description": "ace-engine: capture, learn and inject coding lessons", "hooks": hooks}
