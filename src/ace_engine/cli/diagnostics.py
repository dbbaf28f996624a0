"""What `ace status` and `ace doctor` report: is ace-engine on here, is the store healthy, are the
hooks pointing at a working interpreter (each distinct installed command is run once, for real,
when it is exactly what `ace install` writes for this installation), is Claude Code there, does
the model path work (`model_path`: one real call unless --offline); and,
from `doctor_checks`, the MCP registration, the extras configured features need and the plugin's
interpreter. Each failed check carries a fix that works as written (tests/test_install.py applies
each). Cost: doctor starts one hook process per distinct install, reads a few small files and, with
a model configured, makes one tiny model call."""

import os
import shutil
import subprocess
import sys
import time
from typing import Any

from ..core import config, log, paths, trust
from ..core.project import identify
from ..hooks import health
from ..hooks.events import EVENTS
from ..integrations import claude_settings
from ..store import spool
from ..store.sqlite import SQLiteStore, StoreError
from . import doctor_checks
from .doctor_checks import Check
from .output import plural


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


def unreadable_settings(project_root: str) -> list[dict]:
    """[{scope, path, error}] for the settings files that exist but cannot be used (not valid JSON,
    not an object…): Claude Code cannot read their hooks either, and `ace install` refuses them, so
    the fix is the file, not a re-install. The error names the file, and the line and column."""
    bad = []
    for scope, path in settings_locations(project_root):
        try:
            claude_settings.load(path)
        except claude_settings.SettingsError as exc:
            bad.append({"scope": scope, "path": path, "error": str(exc).split(". Nothing was changed")[0]})
    return bad


def status(project_dir: str) -> dict:
    project = identify(project_dir)
    installs = hook_installs(project.root)
    from .agent_setup import installs as agent_installs

    agents = [{k: v for k, v in a.items() if k != "commands"} for a in agent_installs(project.root)]
    report: dict[str, Any] = {
        "project": {"root": project.root, "remote": project.remote, "name": project.name, "key": project.key},
        "enabled": bool(installs) or plugin_enabled() or any(a["events"] for a in agents),
        "unreadable_settings": unreadable_settings(project.root),
        "agents": agents,
        "installs": [{k: v for k, v in i.items() if k != "commands"} for i in installs],
        "plugin_enabled": plugin_enabled(),
        "store": {"path": paths.db_path(), "exists": os.path.exists(paths.db_path())},
        "spooled_records": spool.count_pending(),
        "degraded": health.read(),
        "last_errors": log.tail(5),
    }
    from .model_path import summary  # the model path: provider, today's spend against the caps, a failure

    try:
        report["llm"] = summary(config.load(project.root))
    except config.ConfigError as exc:
        report["llm"] = {"provider": None, "model": None, "meter": None, "failure": None, "error": str(exc)}
    if report["store"]["exists"]:
        report["store"]["bytes"] = sum(
            os.path.getsize(p) for p in (paths.db_path(), paths.db_path() + "-wal") if os.path.exists(p)
        )
        try:
            with SQLiteStore() as store:
                report["counts_project"] = store.counts(project.key)
                report["counts_total"] = store.counts()
                report["last_activity"] = store.last_activity(project.key)
                from .playbook_common import waiting  # lessons seen once on weak evidence, waiting to recur

                project_id = store.project_id(project.key)
                total, newest = waiting(store, project_id)
                # What was learned: the live lessons (this project's and the global ones, as injection
                # sees them) and those waiting to recur.
                report["lessons"] = {"active": store.count_bullets(project_id) if project_id is not None else 0,
                                     "waiting": total}
                report["waiting"] = {"count": total, "newest": [
                    {"id": b["id"], "content": b["content"], "section": b["section"]} for b in newest]}
                report["experiment"] = store.running_experiment()  # the holdout (`ace experiment`)
        except StoreError as exc:
            report["store"]["error"] = str(exc)
    return report


def generated_command(command: str) -> bool:
    """True when `command` is exactly what `ace install` writes for this installation (this
    interpreter, this package's launcher) for one of the events."""
    parsed = claude_settings.parse_hook_command(command)
    return parsed is not None and parsed.python == sys.executable


def probe_hook_command(command: str) -> str | None:
    """Run an installed hook command for real (a PermissionRequest for `ace clear --confirm`,
    against a throw-away store) and check its answer: a denial, whatever PATH holds (an `allow`
    would depend on which `ace` PATH finds). None when it works; else the reason.

    Only a command `ace install` generated for this installation is ever run: settings files
    (a repository's `.claude/settings.json` above all) are not ours, and a command that merely
    looks like ours could be anything. Any other command is refused here without running it."""
    parsed = claude_settings.parse_hook_command(command)
    if parsed is None or parsed.python != sys.executable:
        return f"not ace-engine's command for this installation, not run: {command[:200]!r}"
    return doctor_checks.denies(doctor_checks.run_hook(parsed._replace(event="PermissionRequest").argv,
                                                       doctor_checks.HOOK_PROBE))


def doctor(project_dir: str, fix: bool = False, offline: bool = False) -> list[Check]:
    checks: list[Check] = []
    project = identify(project_dir)

    ok_python = sys.version_info >= (3, 11)
    checks.append(Check("interpreter", ok_python, f"{sys.executable} (Python {sys.version.split()[0]})",
                        None if ok_python else "install Python 3.11 or newer and reinstall ace-engine"))

    cfg: Any = None
    try:
        cfg = config.load(project.root, strict=True)
        checks.append(Check("config", True, "user and project config valid"))
        for path in sorted({path for _, path in cfg.ignored.values()}):
            keys = sorted(key for key, (_, where) in cfg.ignored.items() if where == path)
            checks.append(Check("config trust", False, f"{path} sets user-level key(s) {', '.join(keys)}: ignored, "
                                "the file is not trusted", trust.ignored_fix(path), warn=True))
    except config.ConfigError as exc:
        checks.append(Check("config", False, str(exc), "edit the file named above; `ace config show` lists valid keys"))

    home = paths.ace_home()
    inside_repo = identify(home).root if os.path.isdir(home) else None
    if inside_repo and os.path.exists(os.path.join(inside_repo, ".git")):
        checks.append(Check("data dir", False, f"{home} is inside the git repository {inside_repo}",
                            "set ACE_HOME to a directory outside any repository", warn=True))
    store_check = _store_check(fix)
    checks.append(store_check)
    if store_check.ok:
        checks.append(_policy_check(fix))
        checks.append(_search_check(project.root, fix))

    pending = spool.count_pending()
    where = ", ".join(sorted({os.path.dirname(p) for p in spool.pending_files()})) or paths.spool_dir()
    degraded = health.read() or {}
    lost = degraded.get("lost") or 0
    lost_text = (f"; {lost} record{'s' if lost != 1 else ''} could be kept nowhere and "
                 f"{'are' if lost != 1 else 'is'} lost ({health.diagnose(degraded.get('reason'))})" if lost else "")
    if pending and fix:
        try:
            with SQLiteStore() as store:
                applied = spool.replay(store)
            checks.append(Check("spool", not lost, f"replayed {applied} spooled records{lost_text}",
                                None, warn=True))
            health.clear()
        except (StoreError, Exception) as exc:  # noqa: BLE001
            checks.append(Check("spool", False, f"{plural(pending, 'record')} waiting in {where}: {exc}{lost_text}",
                                "fix the store problem above, then run `ace doctor --fix`"))
    elif pending:
        checks.append(Check("spool", False, f"{plural(pending, 'record')} waiting in {where}{lost_text}",
                            "run `ace doctor --fix` to write them to the store", warn=True))
    elif lost:
        checks.append(Check("spool", False, f"nothing waiting{lost_text}",
                            "fix the cause; `ace doctor --fix` clears this note", warn=True))
        if fix:
            health.clear()
    else:
        checks.append(Check("spool", True, "nothing waiting"))

    checks.extend(_hook_checks(project.root))
    from .agent_setup import checks as agent_checks

    checks.extend(agent_checks(project.root))
    checks.extend(doctor_checks.mcp_checks(project.root))
    checks.extend(doctor_checks.extras_checks(cfg))
    checks.append(_claude_check())
    from .model_path import doctor_check  # the model path, with one real call unless offline

    checks.append(doctor_check(cfg, offline=offline))

    errors = log.tail(3)
    checks.append(Check("recent errors", not errors, "; ".join(errors) if errors else "none logged",
                        f"see {paths.log_path()}" if errors else None, warn=True))
    return checks


def _search_check(root: str, fix: bool) -> Check:
    """Which search the hooks run here: semantic + lexical, or lexical only and why."""
    from ..embed import vectors

    try:
        cfg: Any = config.load(root)
    except config.ConfigError:
        cfg = None
    if cfg is not None and not cfg["retrieval.semantic"]:
        return Check("search", True, "lexical only (retrieval.semantic = false)")
    try:
        with SQLiteStore() as store:
            state = vectors.status(store, cfg)
            if state["problem"]:
                return Check("search", False, f"lexical only: {state['problem']}",
                             doctor_checks.semantic_fix(state["problem"]), warn=True)
            missing = state.get("missing_vectors", 0)
            if missing and fix:
                done = vectors.embed_missing(store, cfg=cfg)
                from ..embed import write_time  # the full model, when installed and `retrieval.write_time` is on

                write_time.refresh_if_on(store, cfg)
                missing -= done
                return Check("search", not missing, f"{state['mode']} ({state['embedder']}: {state['model']}); "
                             f"embedded {plural(done, 'lesson')}", None if not missing else "see the log", warn=True)
    except (StoreError, OSError) as exc:
        return Check("search", False, f"could not read the store: {exc}", "see the store check above", warn=True)
    detail = f"{state['mode']} ({state['embedder']}: {state['model']})"
    if missing:
        return Check("search", False, f"{detail}; {plural(missing, 'lesson')} without a vector yet "
                     "(searches embed a few each time)", "run `ace embed` or `ace doctor --fix`", warn=True)
    return Check("search", True, f"{detail}; every lesson embedded")


_REMEDY = {
    "unsafe data directory": "set ACE_HOME to a directory you own that no one else can write to "
                             "(ace-engine creates a missing one 0700); never a shared one like /tmp",
    "corrupt": "run `ace doctor --fix` to move the corrupt file aside and start a new store",
    "locked": "another process holds the store; retry, or find it with `fuser` on the file",
    "read-only": "the file system holding {home} is read-only: remount it read-write or set ACE_HOME "
                 "to a writable place; records are kept in the spool outside it meanwhile",
    "disk full": "free space on the disk holding {home} (`ace gc` shrinks the store once it can write)",
    "permission denied": "make {home} and its files yours and writable by you (chown / chmod u+w)",
    "unavailable": "check that {home} exists, is writable and the disk has space",
}


def _store_check(fix: bool) -> Check:
    """Open, integrity-check and write-probe the store; a failure names its true cause
    (`health.diagnose`) and the fix for that cause. Never changes a file ace-engine did not make,
    and `--fix` moves aside only a store that is corrupt."""
    path = paths.db_path()
    try:
        with SQLiteStore() as store:
            integrity = store.integrity()
            if integrity != "ok":
                raise StoreError(f"integrity check: {integrity}")
            store.check_writable()
            mode = os.lstat(path).st_mode & 0o777
            if mode & 0o077:
                os.chmod(path, 0o600, follow_symlinks=False)  # our own file, created 0600
            return Check("store", True, f"{path} (schema v{store.schema_version()}, healthy, writable)")
    except StoreError as exc:
        message = str(exc)
        cause = health.diagnose(message)
        if fix and cause == "corrupt":
            aside = f"{path}.corrupt-{time.strftime('%Y%m%d%H%M%S')}"
            for suffix in ("", "-wal", "-shm"):
                if os.path.lexists(path + suffix):
                    os.replace(path + suffix, aside + suffix)
            SQLiteStore().close()
            return Check("store", True, f"corrupt store moved to {aside}; a new one was created")
        remedy = _REMEDY.get(cause, _REMEDY["unavailable"]).format(home=paths.ace_home())
        return Check("store", False, f"{cause}: {message}", remedy)


def _policy_check(fix: bool) -> Check:
    """Were the stored lessons screened under this version's safety policy? Until they are, the
    hooks inject nothing (and start a re-screen); `--fix` runs it here."""
    from ..playbook import rescreen

    try:
        with SQLiteStore() as store:
            recorded = store.policy_version()
            if not rescreen.outdated(store):
                return Check("lesson policy", True, f"stored lessons screened under safety policy v{recorded}")
            if not fix:
                return Check("lesson policy", False,
                             f"stored lessons were screened under safety policy v{recorded}, this ace-engine has "
                             f"v{rescreen.POLICY_VERSION}: nothing is injected until they are re-screened",
                             "run `ace doctor --fix` (the next session also starts it in the background)", warn=True)
            result = rescreen.ensure_screened(store)
    except Exception as exc:  # noqa: BLE001 — a store that opened can still be locked or full
        return Check("lesson policy", False, f"re-screening the stored lessons failed: {type(exc).__name__}: {exc}",
                     "fix the store problem, then run `ace doctor --fix` again")
    if result is None:  # a background re-screen finished while we waited
        return Check("lesson policy", True, f"stored lessons screened under safety policy v{rescreen.POLICY_VERSION}")
    held = result["quarantined"]
    return Check("lesson policy", True, f"{result['screened']} stored lessons re-screened under safety policy "
                 f"v{result['version']}: {len(held)} quarantined" + (" (`ace review` lists them)" if held else ""))


def _hook_checks(project_root: str) -> list[Check]:
    installs = hook_installs(project_root)
    plugin = plugin_enabled()
    extra = doctor_checks.plugin_checks(plugin, [(i["scope"], i["path"]) for i in installs])
    # A settings file Claude Code cannot parse: its hooks (ours or not) do not run, and `ace install`
    # would refuse it, so the fix is to repair the file.
    extra = [Check(f"settings ({bad['scope']})", False, bad["error"],
                   f"fix the JSON at the place named (or move the file aside), then `ace install"
                   f"{'' if bad['scope'] == 'project' else ' --' + bad['scope']}`")
             for bad in unreadable_settings(project_root)] + extra
    if not installs and not plugin and any(c.name.startswith("settings (") for c in extra):
        return extra
    if not installs:
        if plugin:
            return [Check("hooks", True, "installed through the ace-engine Claude Code plugin"), *extra]
        return [Check("hooks", False, "no ace-engine hooks in any settings file for this project",
                      "run `ace install` in the project (or install the Claude Code plugin)")]
    checks = []
    for install in installs:
        missing = sorted(set(EVENTS) - set(install["events"]))
        # Commands `ace install` did not write for this installation are never run (they come
        # from a file anyone may have written: a cloned repository's .claude/settings.json).
        foreign = sorted({c for c in install["commands"].values() if not generated_command(c)})
        # One probe per distinct interpreter + launcher; the event word at the end varies.
        distinct = {c.rsplit(" ", 1)[0]: c for c in install["commands"].values() if generated_command(c)}
        problems = [p for p in map(probe_hook_command, distinct.values()) if p]
        ok = not missing and not problems and not foreign
        detail = f"{install['path']}: {len(install['events'])}/{len(EVENTS)} events"
        if missing:
            detail += f"; missing {', '.join(missing)}"
        if problems:
            detail += "; " + "; ".join(problems)
        if foreign:
            detail += (f"; {len(foreign)} hook command(s) not ace-engine's for this installation, not run: "
                       + "; ".join(repr(c[:120]) for c in foreign[:3]))
        scope_flag = "" if install["scope"] == "project" else " --" + install["scope"]
        fix = None if ok else (f"re-run `ace install{scope_flag}` (it writes the commands for this installation)"
                               + (" and review the commands named above" if foreign else ""))
        if problems and not missing and not foreign:  # the commands are right: this installation is broken
            fix = (f"reinstall ace-engine the way you installed it (`ace log` shows the hook's error), then "
                   f"`ace install{scope_flag}`")
        checks.append(Check(f"hooks ({install['scope']})", ok, detail, fix,
                            warn=bool(foreign) and not missing and not problems))
    return checks + extra


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
