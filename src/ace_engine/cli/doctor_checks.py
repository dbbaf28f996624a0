"""`ace doctor`'s checks of the set-up around the engine: the MCP registration, the optional
extras each configured feature needs, and the Claude Code plugin's interpreter. (`diagnostics`
runs them with its own checks of the store and the hooks; `Check` is the record of both.)

`run_hook` runs an installed hook once for real, in a throw-away store, for the hook checks of
`diagnostics` (Claude Code) and `agent_setup` (Codex, Gemini); `denies` / `answers` judge its answer.

Contract: each function returns `Check`s; a failure carries a fix that works when applied as
written — extras are added to the environment `ace` runs in (`install_route.extra_hint`: pip of
this venv, `pipx inject`, `uv tool install --with`). Nothing from a repository is run: the
`.mcp.json` entry is checked against this interpreter without starting it. Only the interpreter
the plugin's hooks would run (`$ACE_PYTHON`, or `python3` in an absolute PATH entry: the user's
environment, never the project directory) is started, to read its version.

Cost: a few small JSON files read, `find_spec` calls, and for the plugin one interpreter start.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from typing import Any

from ..core import install_route
from ..integrations.claude_settings import LAUNCHER


class Check:
    def __init__(self, name: str, ok: bool, detail: str, fix: str | None = None, warn: bool = False):
        self.name, self.ok, self.detail, self.fix, self.warn = name, ok, detail, fix, warn

    def as_dict(self) -> dict:
        level = "ok" if self.ok else ("warn" if self.warn else "fail")
        return {"check": self.name, "status": level, "detail": self.detail, "fix": self.fix}


# What a hook is asked when `ace doctor` runs it: a permission it must refuse, whatever PATH holds.
HOOK_PROBE = {"hook_event_name": "PermissionRequest", "tool_name": "Bash",
              "tool_input": {"command": "ace clear --confirm"}}


def run_hook(argv: list[str], payload: dict[str, Any]) -> tuple[int, str, str] | str:
    """Run an installed hook process for real with `payload`, against a throw-away store and
    directory: (exit code, stdout, stderr), or why it could not run. The caller has checked that
    `argv` is what `ace install` writes for this installation: nothing else is ever run here."""
    import json
    import tempfile

    if not os.path.isfile(argv[0]) or not os.access(argv[0], os.X_OK):
        return f"interpreter {argv[0]} does not exist or is not executable"
    if LAUNCHER in argv and not os.path.isfile(LAUNCHER):
        return f"hook launcher {LAUNCHER} does not exist (was ace-engine moved or uninstalled?)"
    with tempfile.TemporaryDirectory(prefix="ace-doctor-") as home:
        try:
            proc = subprocess.run(argv, input=json.dumps({"session_id": "ace-doctor", "cwd": home, **payload}),
                                  cwd=home, capture_output=True, text=True, timeout=20,
                                  env={**os.environ, "ACE_HOME": home})
        except (OSError, subprocess.TimeoutExpired) as exc:
            return f"hook command failed to run: {exc}"
    return proc.returncode, proc.stdout, proc.stderr


def denies(ran: tuple[int, str, str] | str) -> str | None:
    """None when a hook run (`run_hook`) exited 0 and denied (Claude Code's and Codex's PermissionRequest
    answer); else what went wrong."""
    return _judged(ran, _is_denial)


def _is_denial(answer: Any) -> bool:
    specific = answer.get("hookSpecificOutput") if isinstance(answer, dict) else None
    decision = specific.get("decision") if isinstance(specific, dict) else None
    return isinstance(decision, dict) and decision.get("behavior") == "deny"


def answers(ran: tuple[int, str, str] | str) -> str | None:
    """None when a hook run exited 0 with nothing or a JSON object on stdout (what every agent
    accepts); else what went wrong."""
    return _judged(ran, lambda answer: answer is None or isinstance(answer, dict))


def _judged(ran: tuple[int, str, str] | str, good: Callable[[Any], bool]) -> str | None:
    """`ran`'s problem: why it could not run, or an exit code other than 0, or stdout that is neither
    empty (None) nor JSON `good` accepts."""
    import json

    if isinstance(ran, str):
        return ran
    code, out, err = ran
    try:
        answer = json.loads(out) if out.strip() else None
    except ValueError:
        answer = False  # not JSON: no judge accepts it
    if code == 0 and answer is not False and good(answer):
        return None
    return f"hook command answered wrongly (exit {code}): {(out + err).strip()[:200]}"


def _scope_flag(scope: str) -> str:
    return "" if scope == "project" else f" --{scope}"


def mcp_checks(project_root: str) -> list[Check]:
    """The `ace` server in the project's `.mcp.json`: ours, runnable here (this interpreter with
    the `mcp` package), approved in a settings file; and no settings file approving a server
    that is not there."""
    from ..integrations import mcp_config

    reg = mcp_config.registration(project_root)
    path, entry = reg["mcp_json"], reg["entry"]
    if reg["problem"]:
        return [Check("mcp", False, reg["problem"], f"fix or move aside {path}, then `ace install --mcp`")]
    if entry is None:
        dangling = [p for scope, p in reg["enabled_in"] if scope != "user"]
        if dangling:
            scope = next(s for s, p in reg["enabled_in"] if p == dangling[0])
            return [Check("mcp", False, f"{dangling[0]} approves MCP server `ace`, but {path} has none",
                          f"`ace install --mcp{_scope_flag(scope)}` registers it, "
                          f"`ace uninstall{_scope_flag(scope)}` removes the approval", warn=True)]
        return []  # not set up: nothing to check
    if not reg["ours"]:
        return [Check("mcp", False, f"{path}: the MCP server `ace` is not ace-engine's; left alone",
                      "rename it if you want ace-engine's (`ace install --mcp`)", warn=True)]
    command = str(entry.get("command") or "")
    if command != sys.executable:
        if not (os.path.isfile(command) and os.access(command, os.X_OK)):
            return [Check("mcp", False, f"{path}: server `ace` runs {command!r}, which does not exist here",
                          "`ace install --mcp` (writes this installation's interpreter)")]
        return [Check("mcp", False, f"{path}: server `ace` runs {command}, not this ace-engine's interpreter "
                      f"({sys.executable}); not checked", "`ace install --mcp` if this ace-engine should serve it",
                      warn=True)]
    problem = mcp_config.sdk_problem()
    if problem:
        return [Check("mcp", False, f"{path}: server `ace` cannot start: {problem} in {sys.prefix}",
                      f"`{install_route.extra_hint('mcp')}`")]
    checks = [Check("mcp", True, f"{path}: server `ace` ({sys.executable}, mcp installed)")]
    if reg["disabled_in"]:
        scope, where = reg["disabled_in"][0]
        checks.append(Check("mcp approval", False, f"{where} disables MCP server `ace`",
                            f"`ace install --mcp{_scope_flag(scope)}` (approves it)", warn=True))
    elif not reg["enabled_in"]:
        checks.append(Check("mcp approval", False, "no settings file approves MCP server `ace`: Claude Code "
                            "asks before starting it", "`ace install --mcp` (or --local)", warn=True))
    return checks


def _missing(modules: list[str]) -> list[str]:
    out = []
    for module in modules:
        try:
            if importlib.util.find_spec(module) is None:
                out.append(module)
        except (ImportError, ValueError):
            out.append(module)
    return out


def _extra_check(name: str, why: str, extra: str, modules: dict[str, str]) -> Check:
    """`modules`: {import name: requirement name} of the packages the feature needs."""
    missing = _missing(list(modules))
    if not missing:
        return Check(name, True, f"{why}: {', '.join(modules)} installed")
    hint = install_route.extra_hint(extra, only=[modules[m] for m in missing])
    return Check(name, False, f"{why}, but {', '.join(missing)} {'is' if len(missing) == 1 else 'are'} not "
                 f"installed in {sys.prefix}", f"`{hint}` (from the [{extra}] extra)")


def extras_checks(cfg: Any) -> list[Check]:
    """For each configured feature, the optional packages it needs, in the environment `ace` runs in."""
    checks = []
    provider = cfg["llm.provider"] if cfg is not None else "none"
    from ..llm import ALIASES, REGISTRY

    row = REGISTRY.get(ALIASES.get(str(provider), str(provider)))
    sdk = row.sdk if row is not None else None
    if sdk:
        checks.append(_extra_check("llm extra", f"llm.provider = {provider}", "llm", {sdk: sdk}))
    database = os.environ.get("ACE_SERVER_DATABASE") or ""
    if database:
        web = {"starlette": "starlette", "uvicorn": "uvicorn", "jinja2": "jinja2"}
        if database.startswith(("postgresql:", "postgres:")):
            web.update({"psycopg": "psycopg", "psycopg_pool": "psycopg-pool"})
        checks.append(_extra_check("server extra", "ACE_SERVER_DATABASE is set (`ace server run`)", "server", web))
    return checks


def semantic_fix(problem: str) -> str:
    """The fix for semantic search that can't run: the missing package added here, or the static embedder."""
    if "numpy" in problem or "not installed" in problem:
        return f"`{install_route.extra_hint('semantic')}`, or `ace config set retrieval.embedder static`"
    return "reinstall ace-engine, or `ace config set retrieval.embedder static`"


PLUGIN_PYTHON = "ACE_PYTHON"
# Run in the plugin's interpreter: "3.11 2.3.0" (its version, and the mcp package's, if any).
PROBE = ("import sys, importlib.util, importlib.metadata as m; print('%d.%d' % sys.version_info[:2], "
         "m.version('mcp') if importlib.util.find_spec('mcp') else '')")


def _plugin_mcp_check(python: str, mcp_version: str) -> Check:
    """The plugin's MCP server (bin/ace_mcp.py) runs in its interpreter when that has mcp 2, else
    as `ace mcp` when `ace` is on PATH; this checks the `ace` doctor runs as."""
    from ..integrations import mcp_config

    if mcp_version.split(".")[0] == "2":
        return Check("plugin mcp", True, f"the plugin's MCP server runs in {python} (mcp {mcp_version})")
    if shutil.which("ace") and mcp_config.sdk_problem() is None:
        return Check("plugin mcp", True, "the plugin's MCP server runs as `ace mcp` (mcp installed)")
    return Check("plugin mcp", False, f"the plugin's MCP server cannot start: no mcp 2 in {python}, nor where "
                 f"`ace` runs ({sys.prefix})", f"`{install_route.extra_hint('mcp')}` (then it runs as `ace mcp`)",
                 warn=True)


def plugin_checks(plugin_on: bool, settings_hooks: list[tuple[str, str]]) -> list[Check]:
    """With the ace-engine plugin enabled: the interpreter its hooks run (`$ACE_PYTHON`, else
    `python3` on PATH) is Python >= 3.11 — an older one makes them do nothing — and no settings
    file installs the same hooks a second time."""
    if not plugin_on:
        return []
    checks = []
    wanted = os.environ.get(PLUGIN_PYTHON) or "python3"
    # Only absolute PATH entries: a relative one ("." or empty) would find a file in the project.
    path = os.pathsep.join(d for d in os.environ.get("PATH", os.defpath).split(os.pathsep) if os.path.isabs(d))
    python = wanted if os.path.isabs(wanted) else shutil.which(wanted, path=path)
    version, plugin_mcp = None, ""
    if python and os.path.isfile(python):
        try:
            proc = subprocess.run([python, "-I", "-c", PROBE], capture_output=True, text=True, timeout=20)
            if proc.returncode == 0:
                version, _, plugin_mcp = proc.stdout.strip().partition(" ")
        except (OSError, subprocess.TimeoutExpired):
            version = None
    major_minor = tuple(int(x) for x in version.split(".")) if version and version.replace(".", "").isdigit() else ()
    fix = (f"set {PLUGIN_PYTHON} to a Python 3.11 or newer where Claude Code starts, e.g. "
           f"`export {PLUGIN_PYTHON}={sys.executable}`")
    if not python or not version:
        checks.append(Check("plugin python", False, f"the plugin's hooks run `{wanted}`, which is not found or "
                            "does not start: they do nothing", fix))
    elif major_minor < (3, 11):
        checks.append(Check("plugin python", False, f"the plugin's hooks run {python} (Python {version}); they "
                            "need 3.11 or newer and do nothing until then", fix))
    else:
        checks.append(Check("plugin python", True, f"the plugin's hooks run {python} (Python {version})"))
        checks.append(_plugin_mcp_check(python, plugin_mcp))
    for scope, path in settings_hooks:
        checks.append(Check("plugin hooks", False, f"the ace-engine plugin is enabled and {path} installs the "
                            "same hooks: each event runs twice",
                            f"`ace uninstall{_scope_flag(scope)}` (the plugin keeps providing them)", warn=True))
    return checks
