"""`ace install / uninstall --agent codex|gemini`, and what `ace status` and `ace doctor` say about
the agents other than Claude Code.

Thin over `integrations.codex_config` / `integrations.gemini_config` (what is written where) and
`hooks.agents.LOST` (what an agent cannot get). Scopes: the project (default) or `--user`.

Cost: a few small config files read; written only by install / uninstall.
"""

from __future__ import annotations

import sys
from typing import Any

from ..hooks.agents import EVENTS_BY_AGENT, LOST
from ..integrations.agent_hooks import hook_argv, hook_command
from .doctor_checks import HOOK_PROBE, Check, answers, denies, run_hook
from .output import emit_json, fail, plural, say

AGENTS = ("codex", "gemini")
NAMES = {"claude": "Claude Code", "codex": "Codex CLI", "gemini": "Gemini CLI"}
SCOPES = ("project", "user")


def run(action: str, agent: str, scope: str | None, project_dir: str | None, python: str | None,
        as_json: bool) -> None:
    """`ace install|uninstall --agent AGENT [--user]` for the project of `project_dir`."""
    from ..core.project import identify
    from .common import resolve_dir

    if scope == "local":
        fail(f"--local is Claude Code's; for {agent} use the project (default) or --user", code=2)
    root = identify(resolve_dir(project_dir)).root
    if action == "install":
        return install(agent, scope or "project", root, python, as_json)
    return uninstall(agent, scope or "project", root, as_json)


def _module(agent: str) -> Any:
    if agent == "codex":
        from ..integrations import codex_config

        return codex_config
    from ..integrations import gemini_config

    return gemini_config


def install(agent: str, scope: str, root: str, python: str | None, as_json: bool) -> None:
    from ..integrations import claude_settings, mcp_config

    problem = mcp_config.sdk_problem(python)
    try:
        result = _module(agent).install(scope, root, python, with_mcp=problem is None)
        claude_settings.precompile()
    except OSError as exc:  # SettingsError is an AceError: the `ace` group shows it
        fail(str(exc))
    if problem:
        result["notes"].append(f"MCP server not registered: {problem} in {python or sys.executable} "
                               f"(`{mcp_config.sdk_hint(python)}`, then re-run)")
    if as_json:
        return emit_json({**result, "lost": LOST[agent]})
    name = NAMES[agent]
    if result["changed"]:
        if result["events"]:
            say("Installed ace-engine hooks for {} in [bold]{}[/].", plural(len(result["events"]), f"{name} event"),
                result["path"])
        for what in result["added"]:
            say("Added {} to {}.", what, result["config"])
        for backup in result["backups"]:
            say("Backup of the previous file: {}", backup)
    else:
        say("ace-engine is already installed for {} in [bold]{}[/]; nothing changed.", name, result["path"])
    for note in result["notes"]:
        say("[yellow]Note:[/] {}", note)
    _say_trust(agent, scope)
    _say_lost(agent)


def _say_trust(agent: str, scope: str) -> None:
    if agent == "codex":
        say("Codex runs a hook only after you have reviewed it: start `codex` and approve the ace-engine hooks in "
            "/hooks{}.", "" if scope == "user" else " (and trust this project when Codex asks: it reads .codex/ "
            "only in trusted projects)")
    else:
        say("Gemini CLI asks before it runs a project's hooks for the first time{}.",
            "" if scope == "user" else ", and reads .gemini/ only in a folder you trust (when folder trust is on)")


def _say_lost(agent: str) -> None:
    lost = LOST[agent]
    if lost:
        say("What {} does not offer, and what ace-engine does instead:", NAMES[agent])
        for event, why in lost.items():
            say("  {}: {}", event, why)


def uninstall(agent: str, scope: str, root: str, as_json: bool) -> None:
    try:
        result = _module(agent).uninstall(scope, root)
    except OSError as exc:
        fail(str(exc))
    if as_json:
        return emit_json(result)
    if result["changed"]:
        if result["events"]:
            say("Removed ace-engine hooks for {} from [bold]{}[/].",
                plural(len(result["events"]), f"{NAMES[agent]} event"), result["path"])
        for what in result["removed"]:
            say("Removed {} from {}.", what, result["config"])
    else:
        say("No ace-engine set-up for {} in {}; nothing changed.", NAMES[agent], result["path"])


def installs(root: str) -> list[dict[str, Any]]:
    """Every scope where an agent other than Claude Code has ace-engine's hooks (or a broken file)."""
    found = []
    for agent in AGENTS:
        for scope in SCOPES:
            state = _module(agent).status(scope, root)
            if state["events"] or state["problem"]:
                found.append({**state, "events": sorted(state["events"]), "commands": state["events"],
                              "name": NAMES[agent]})
    return found


def show_status(found: list[dict[str, Any]]) -> None:
    for state in found:
        if state["problem"]:
            say("  {}: [red]{}[/]", state["name"], state["problem"])
        else:
            say("  {} hooks in {} ({}){}", state["name"], state["path"], plural(len(state["events"]), "event"),
                "" if state["feature"] is not False else " [yellow]— hooks switched off in its config[/]")


def checks(root: str) -> list[Check]:
    """One doctor check per agent installed: every event there, the hook switch on, MCP, what is lost."""
    out = []
    for state in installs(root):
        agent, name = state["agent"], f"{state['agent']} ({state['scope']})"
        if state["problem"]:
            out.append(Check(name, False, state["problem"], "fix or move the file aside, then `ace install --agent "
                             f"{agent}{' --user' if state['scope'] == 'user' else ''}`"))
            continue
        missing = sorted(set(EVENTS_BY_AGENT[agent]) - set(state["events"]))
        flag = " --user" if state["scope"] == "user" else ""
        if missing:
            out.append(Check(name, False, f"hooks missing for {', '.join(missing)} in {state['path']}",
                             f"`ace install --agent {agent}{flag}`"))
            continue
        if state["feature"] is False:
            out.append(Check(name, False, f"hooks are switched off in {state['config']}",
                             "set [features] hooks = true" if agent == "codex" else "set hooksConfig.enabled to true"))
            continue
        detail = (f"{plural(len(state['events']), 'event')} in {state['path']}; MCP server "
                  f"{'registered' if state['mcp'] else 'not registered'}; lacks: {', '.join(LOST[agent]) or 'nothing'}")
        review = ("approve them in Codex's /hooks if you have not" if agent == "codex"
                  else "Gemini asks before a project's hooks first run")
        # Run for real, like Claude Code's (`diagnostics.probe_hook_command`), but only a command `ace
        # install --agent` wrote for this installation: the file is the repository's, anyone's.
        foreign = sorted(native for native, command in state["commands"].items()
                         if command != hook_command(agent, native, sys.executable))
        problem = None if foreign else _probe(agent)
        if foreign:
            detail += (f"; {plural(len(foreign), 'hook command')} not ace-engine's for this installation, not run "
                       f"({', '.join(foreign)})")
        elif problem:
            detail += f"; {problem}"
        fix = (f"re-run `ace install --agent {agent}{flag}` (it writes the commands for this installation)" if foreign
               else f"reinstall ace-engine the way you installed it (`ace log` shows the hook's error), then "
                    f"`ace install --agent {agent}{flag}`" if problem else review)
        out.append(Check(name, not foreign and not problem, detail, fix, warn=bool(foreign)))
    return out


def _probe(agent: str) -> str | None:
    """Run the agent's hook as `ace doctor` runs Claude Code's: a PermissionRequest it must refuse where
    the agent has one (Codex), else a prompt (Gemini's BeforeAgent) answered with nothing or JSON."""
    if "PermissionRequest" in EVENTS_BY_AGENT[agent]:
        return denies(run_hook(hook_argv(agent, "PermissionRequest", sys.executable), HOOK_PROBE))
    return answers(run_hook(hook_argv(agent, "BeforeAgent", sys.executable),
                            {"hook_event_name": "BeforeAgent", "prompt": "how do I run the tests here?"}))
