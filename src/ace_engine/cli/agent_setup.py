"""`ace install / uninstall --agent AGENT`, and what `ace status` and `ace doctor` say about the
agents other than Claude Code.

Thin over the agent registry (`agents.registry`): each agent's row names its installer in
`integrations/` (what is written where: `install`, `uninstall`, `status`), what it cannot get
(`Agent.lost`), what its user is told (`Agent.trust`, `Agent.hooks_off_fix`) and the hook `ace
doctor` runs (`Agent.probe`). Scopes: the project (default) or `--user`.

Cost: a few small config files read; written only by install / uninstall.
"""

from __future__ import annotations

import importlib
import sys
from typing import Any

from ..agents import registry
from ..integrations.agent_hooks import hook_argv, hook_command
from .doctor_checks import Check, answers, denies, run_hook
from .output import emit_json, fail, plural, say

SCOPES = ("project", "user")


def installable() -> list[str]:
    """The agents `ace install --agent` sets up through an installer of their own."""
    return [agent.name for agent in registry.agents() if agent.installer]


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
    """The agent's installer: `integrations.<Agent.installer>`."""
    return importlib.import_module(f"ace_engine.integrations.{registry.get(agent).installer}")


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
        return emit_json({**result, "lost": registry.get(agent).lost})
    name = registry.label(agent)
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
    every, project, _ = registry.get(agent).trust
    if every:
        say("{}{}.", every, "" if scope == "user" else project)
    if registry.get(agent).legacy:
        say("[yellow]Legacy:[/] {}.", registry.get(agent).legacy)


def _say_lost(agent: str) -> None:
    lost = registry.get(agent).lost
    if lost:
        say("What {} does not offer, and what ace-engine does instead:", registry.label(agent))
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
                plural(len(result["events"]), f"{registry.label(agent)} event"), result["path"])
        for what in result["removed"]:
            say("Removed {} from {}.", what, result["config"])
    else:
        say("No ace-engine set-up for {} in {}; nothing changed.", registry.label(agent), result["path"])


def installs(root: str) -> list[dict[str, Any]]:
    """Every scope where an agent other than Claude Code has ace-engine's hooks (or a broken file)."""
    found = []
    for agent in installable():
        for scope in SCOPES:
            state = _module(agent).status(scope, root)
            if state["events"] or state["problem"]:
                found.append({**state, "events": sorted(state["events"]), "commands": state["events"],
                              "name": registry.label(agent), "legacy": registry.get(agent).legacy})
    return found


def show_status(found: list[dict[str, Any]]) -> None:
    for state in found:
        if state["problem"]:
            say("  {}: [red]{}[/]", state["name"], state["problem"])
        else:
            say("  {} hooks in {} ({}){}{}", state["name"], state["path"], plural(len(state["events"]), "event"),
                "" if state["feature"] is not False else " [yellow]— hooks switched off in its config[/]",
                " [yellow]— legacy:[/] " + state["legacy"] if state.get("legacy") else "")


def checks(root: str) -> list[Check]:
    """One doctor check per agent installed: every event there, the hook switch on, MCP, what is lost;
    and one for a Codex plugin that runs our hooks (`codex_plugin_check`)."""
    out = [check] if (check := codex_plugin_check(root)) is not None else []
    for state in installs(root):
        agent, name = state["agent"], f"{state['agent']} ({state['scope']})"
        if state["problem"]:
            out.append(Check(name, False, state["problem"], "fix or move the file aside, then `ace install --agent "
                             f"{agent}{' --user' if state['scope'] == 'user' else ''}`"))
            continue
        missing = sorted(set(registry.get(agent).events) - set(state["events"]))
        flag = " --user" if state["scope"] == "user" else ""
        if missing:
            out.append(Check(name, False, f"hooks missing for {', '.join(missing)} in {state['path']}",
                             f"`ace install --agent {agent}{flag}`"))
            continue
        if state["feature"] is False:
            out.append(Check(name, False, f"hooks are switched off in {state['config']}",
                             registry.get(agent).hooks_off_fix))
            continue
        detail = (f"{plural(len(state['events']), 'event')} in {state['path']}; MCP server "
                  f"{'registered' if state['mcp'] else 'not registered'}; "
                  f"lacks: {', '.join(registry.get(agent).lost) or 'nothing'}")
        if registry.get(agent).legacy:
            detail += f"; legacy: {registry.get(agent).legacy}"
        review = registry.get(agent).trust[2]
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


def codex_plugin_check(root: str) -> Check | None:
    """When a Codex plugin that runs ace-engine's hooks is installed: whether Codex's
    `[features].plugin_hooks` lets it run them (off or unset: Codex loads the plugin, runs none of
    its hooks). None when there is no such plugin."""
    from ..integrations import codex_plugins

    found = codex_plugins.ace_plugins()
    if not found:
        return None
    names = ", ".join(p["name"] for p in found)
    value, config = codex_plugins.plugin_hooks(root)
    if value is True:
        doubled = [s["path"] for s in (_module("codex").status(scope, root) for scope in SCOPES) if s["events"]]
        if doubled:  # both run: every event would be captured twice
            return Check("codex plugin", False, f"{names} runs ace-engine's hooks, and so does {', '.join(doubled)}: "
                         "every Codex event is handled twice", "keep one: `ace uninstall --agent codex"
                         f"{' --user' if doubled[0] == _module('codex').paths('user', root)[0] else ''}` or remove "
                         "the plugin", warn=True)
        return Check("codex plugin", True, f"{names}: its hooks run ([features] plugin_hooks = true)")
    said = "set to false" if value is False else "not set (off by default)"
    return Check("codex plugin", False, f"{names} runs ace-engine's hooks, but [features] plugin_hooks is {said}: "
                 "Codex loads the plugin and runs none of its hooks",
                 f"{'set' if value is False else 'add'} `{codex_plugins.FIX_LINE}` under `[features]` in {config} "
                 "(or remove the plugin and use "
                 "`ace install --agent codex`)")


def _probe(agent: str) -> str | None:
    """Run the agent's hook as `ace doctor` runs Claude Code's (`Agent.probe`): a PermissionRequest it
    must refuse where the agent has one (Codex), else an event answered with nothing or JSON."""
    probe = registry.get(agent).probe
    if probe is None:
        return None
    native, payload, judge = probe
    result = run_hook(hook_argv(agent, native, sys.executable), payload)
    return denies(result) if judge == "denies" else answers(result)
