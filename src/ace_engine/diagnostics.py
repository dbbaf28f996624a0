"""What `ace status` and `ace doctor` report: is ace-engine on here, is the store healthy, are the
hooks pointing at a working interpreter, is Claude Code there. Each failed check carries its fix."""

import os
import shutil
import subprocess
import sys
import time

from . import config, log, paths
from .hooks import health
from .hooks.events import EVENTS
from .integrations import claude_settings
from .project import identify
from .store import spool
from .store.sqlite import SQLiteStore, StoreError


def settings_locations(project_root: str) -> list[tuple[str, str]]:
    return [
        (scope, claude_settings.settings_path(scope, project_root))
        for scope in ("project", "local", "user")
    ]


def plugin_enabled() -> bool:
    """True when the ace-engine plugin is enabled in the user's Claude Code settings."""
    try:
        data = claude_settings.load(claude_settings.settings_path("user", "")) or {}
    except claude_settings.SettingsError:
        return False
    enabled = data.get("enabledPlugins") or {}
    return isinstance(enabled, dict) and any(
        name.split("@")[0] == "ace-engine" and on for name, on in enabled.items()
    )


def hook_installs(project_root: str) -> list[dict]:
    found = []
    for scope, path in settings_locations(project_root):
        events = claude_settings.installed_events(path)
        if events:
            found.append({"scope": scope, "path": path, "events": sorted(events), "commands": events})
    return found


def status(project_dir: str) -> dict:
    project = identify(project_dir)
    installs = hook_installs(project.root)
    report = {
        "project": {"root": project.root, "remote": project.remote, "name": project.name, "key": project.key},
        "enabled": bool(installs) or plugin_enabled(),
        "installs": [{k: v for k, v in i.items() if k != "commands"} for i in installs],
        "plugin_enabled": plugin_enabled(),
        "store": {"path": paths.db_path(), "exists": os.path.exists(paths.db_path())},
        "spooled_records": spool.count_pending(),
        "degraded": health.read(),
        "last_errors": log.tail(5),
    }
    if report["store"]["exists"]:
        report["store"]["bytes"] = sum(
            os.path.getsize(p) for p in (paths.db_path(), paths.db_path() + "-wal") if os.path.exists(p)
        )
        try:
            with SQLiteStore() as store:
                report["counts_project"] = store.counts(project.key)
                report["counts_total"] = store.counts()
                report["last_activity"] = store.last_activity(project.key)
        except StoreError as exc:
            report["store"]["error"] = str(exc)
    return report


class Check:
    def __init__(self, name: str, ok: bool, detail: str, fix: str | None = None, warn: bool = False):
        self.name, self.ok, self.detail, self.fix, self.warn = name, ok, detail, fix, warn

    def as_dict(self) -> dict:
        level = "ok" if self.ok else ("warn" if self.warn else "fail")
        return {"check": self.name, "status": level, "detail": self.detail, "fix": self.fix}


def probe_hook_command(command: str) -> str | None:
    """Run an installed hook command for real (a PermissionRequest for `ace status`, against a
    throw-away store) and check its answer. None when it works; else the reason."""
    import json
    import shlex
    import tempfile

    try:
        argv = shlex.split(command)
    except ValueError as exc:
        return f"unparsable command {command!r}: {exc}"
    if not argv or not os.path.isfile(argv[0]) or not os.access(argv[0], os.X_OK):
        return f"interpreter {argv[0] if argv else '?'} does not exist or is not executable"
    if len(argv) > 2 and argv[1].endswith(".py") and not os.path.isfile(argv[1]):
        return f"hook launcher {argv[1]} does not exist (was ace-engine moved or uninstalled?)"
    payload = {"hook_event_name": "PermissionRequest", "session_id": "ace-doctor", "cwd": os.getcwd(),
               "tool_name": "Bash", "tool_input": {"command": "ace status"}}
    with tempfile.TemporaryDirectory(prefix="ace-doctor-") as home:
        try:
            proc = subprocess.run(argv[:-1] + ["PermissionRequest"], input=json.dumps(payload),
                                  capture_output=True, text=True, timeout=20, env={**os.environ, "ACE_HOME": home})
        except (OSError, subprocess.TimeoutExpired) as exc:
            return f"hook command failed to run: {exc}"
    try:
        behavior = json.loads(proc.stdout)["hookSpecificOutput"]["decision"]["behavior"]
    except (ValueError, KeyError, TypeError):
        behavior = None
    if proc.returncode != 0 or behavior != "allow":
        return f"hook command answered wrongly (exit {proc.returncode}): {(proc.stdout + proc.stderr).strip()[:200]}"
    return None


def doctor(project_dir: str, fix: bool = False) -> list[Check]:
    checks: list[Check] = []
    project = identify(project_dir)

    ok_python = sys.version_info >= (3, 11)
    checks.append(Check("interpreter", ok_python, f"{sys.executable} (Python {sys.version.split()[0]})",
                        None if ok_python else "install Python 3.11 or newer and reinstall ace-engine"))

    try:
        config.load(project.root, strict=True)
        checks.append(Check("config", True, "user and project config valid"))
    except config.ConfigError as exc:
        checks.append(Check("config", False, str(exc), "edit the file named above; `ace config show` lists valid keys"))

    home = paths.ace_home()
    inside_repo = identify(home).root if os.path.isdir(home) else None
    if inside_repo and os.path.exists(os.path.join(inside_repo, ".git")):
        checks.append(Check("data dir", False, f"{home} is inside the git repository {inside_repo}",
                            "set ACE_HOME to a directory outside any repository", warn=True))
    checks.append(_store_check(fix))

    pending = spool.count_pending()
    if pending and fix:
        try:
            with SQLiteStore() as store:
                applied = spool.replay(store)
            checks.append(Check("spool", True, f"replayed {applied} spooled records"))
            health.clear()
        except (StoreError, Exception) as exc:  # noqa: BLE001
            checks.append(Check("spool", False, f"{pending} records wait in {paths.spool_dir()}: {exc}",
                                "fix the store problem above, then run `ace doctor --fix`"))
    elif pending:
        checks.append(Check("spool", False, f"{pending} records wait in {paths.spool_dir()}",
                            "run `ace doctor --fix` to write them to the store", warn=True))
    else:
        checks.append(Check("spool", True, "nothing waiting"))

    checks.extend(_hook_checks(project.root))
    checks.append(_claude_check())

    errors = log.tail(3)
    checks.append(Check("recent errors", not errors, "; ".join(errors) if errors else "none logged",
                        f"see {paths.log_path()}" if errors else None, warn=True))
    return checks


def _store_check(fix: bool) -> Check:
    path = paths.db_path()
    try:
        with SQLiteStore() as store:
            integrity = store.integrity()
            if integrity != "ok":
                raise StoreError(f"integrity check: {integrity}")
            store.check_writable()
            mode = os.stat(path).st_mode & 0o777
            if mode & 0o077:
                os.chmod(path, 0o600)
            return Check("store", True, f"{path} (schema v{store.schema_version()}, healthy, writable)")
    except StoreError as exc:
        message = str(exc)
        if fix and ("not a database" in message or "malformed" in message or "integrity" in message):
            aside = f"{path}.corrupt-{time.strftime('%Y%m%d%H%M%S')}"
            for suffix in ("", "-wal", "-shm"):
                if os.path.exists(path + suffix):
                    os.replace(path + suffix, aside + suffix)
            SQLiteStore().close()
            return Check("store", True, f"corrupt store moved to {aside}; a new one was created")
        if "not a database" in message or "malformed" in message or "integrity" in message:
            remedy = "run `ace doctor --fix` to move the corrupt file aside and start a new store"
        elif "readonly" in message or "read-only" in message or "Permission" in message:
            remedy = f"make {os.path.dirname(path)} and its files writable by you (chmod u+w)"
        elif "locked" in message:
            remedy = "another process holds the store; retry, or find it with `fuser` on the file"
        else:
            remedy = f"check that {os.path.dirname(path)} exists, is writable and the disk has space"
        return Check("store", False, message, remedy)


def _hook_checks(project_root: str) -> list[Check]:
    installs = hook_installs(project_root)
    if not installs:
        if plugin_enabled():
            return [Check("hooks", True, "installed through the ace-engine Claude Code plugin")]
        return [Check("hooks", False, "no ace-engine hooks in any settings file for this project",
                      "run `ace install` in the project (or install the Claude Code plugin)")]
    checks = []
    for install in installs:
        missing = sorted(set(EVENTS) - set(install["events"]))
        # One probe per distinct interpreter + launcher; the event word at the end varies.
        distinct = {c.rsplit(" ", 1)[0]: c for c in install["commands"].values()}
        problems = [p for p in map(probe_hook_command, distinct.values()) if p]
        ok = not missing and not problems
        detail = f"{install['path']}: {len(install['events'])}/{len(EVENTS)} events"
        if missing:
            detail += f"; missing {', '.join(missing)}"
        if problems:
            detail += "; " + "; ".join(problems)
        checks.append(Check(f"hooks ({install['scope']})", ok, detail,
                            None if ok else f"re-run `ace install{'' if install['scope'] == 'project' else ' --' + install['scope']}`"))
    return checks


def _claude_check() -> Check:
    claude = shutil.which("claude")
    if not claude:
        return Check("claude code", False, "`claude` not found on PATH",
                     "install Claude Code (npm install -g @anthropic-ai/claude-code)", warn=True)
    try:
        proc = subprocess.run([claude, "--version"], capture_output=True, text=True, timeout=20)
        version = proc.stdout.strip() or proc.stderr.strip()
    except (OSError, subprocess.TimeoutExpired) as exc:
        return Check("claude code", False, f"{claude} did not answer --version: {exc}",
                     "reinstall Claude Code", warn=True)
    return Check("claude code", True, f"{claude} {version}")
