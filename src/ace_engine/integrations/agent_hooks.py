"""The hook entries ace-engine writes for another agent, merged into a JSON hooks object.

Codex and Gemini read Claude Code's layout — `{"hooks": {EVENT: [{"matcher"?, "hooks": [{"type":
"command", "command", "timeout"}]}]}}` — Codex from `hooks.json`, Gemini from `settings.json`
(Antigravity's hooks are grouped by a hook name instead: `antigravity_config` writes them, with
`hook_command` from here).
An installed handler runs this package's launcher with the agent and its own event name
(`[python, "-I", LAUNCHER, AGENT, EVENT]`), which `hooks.agents` adapts; the events are the
agent's that ace-engine handles (its `Agent.events`), each with the timeout Claude Code gets for
the same event, in the agent's unit (`Agent.timeout_scale`), its matcher (`Agent.matchers`) and,
where the agent wants one, a `name` (`Agent.named_handlers`).

`merge(data, agent, python)` / `strip(data)` change only handlers that run ace-engine's hooks
(`claude_settings.is_ours`): other keys, other tools' hooks and their order are kept. Reading,
refusing malformed files and writing with a backup are `claude_settings.load` / `write`.

Cost: pure data; no file access here.
"""

from __future__ import annotations

import shlex
import sys
from typing import Any

from ..agents import registry
from ..hooks.events import EVENTS
from .claude_settings import LAUNCHER, _strip_ours, is_ours, strip_hooks


def hook_argv(agent: str, event: str, python: str | None = None) -> list[str]:
    return [python or sys.executable, "-I", LAUNCHER, agent, event]


def hook_command(agent: str, event: str, python: str | None = None) -> str:
    return shlex.join(hook_argv(agent, event, python))


def desired_entries(agent: str, python: str | None = None) -> dict[str, dict[str, Any]]:
    """{agent's event: the matcher group ace-engine installs for it}."""
    found = registry.get(agent)
    entries: dict[str, dict[str, Any]] = {}
    for native, ours in found.events.items():
        handler: dict[str, Any] = {"type": "command", "command": hook_command(agent, native, python),
                                   "timeout": EVENTS[ours]["timeout"] * found.timeout_scale}
        if found.named_handlers:
            handler = {"name": f"ace-engine {native}", **handler}
        group: dict[str, Any] = {"hooks": [handler]}
        if found.matchers.get(native):
            group = {"matcher": found.matchers[native], **group}
        entries[native] = group
    return entries


def merge(data: dict[str, Any], agent: str, python: str | None = None) -> tuple[dict[str, Any], list[str]]:
    """`data` with ace-engine's hooks for `agent` in it, and the events changed ([] = as wanted)."""
    hooks = dict(data.get("hooks") or {})
    changed = []
    for event, group in desired_entries(agent, python).items():
        groups = list(hooks.get(event) or [])
        if group in groups and sum(1 for g in groups for h in (g.get("hooks") or []) if is_ours(h)) == 1:
            continue
        kept, _ = _strip_ours(groups)
        hooks[event] = kept + [group]
        changed.append(event)
    if not changed:
        return data, []
    return {**data, "hooks": hooks}, changed


strip = strip_hooks  # the same rule as Claude Code's settings: our handlers out, others' kept


def installed(data: dict[str, Any]) -> dict[str, str]:
    """{event: command} of ace-engine's handlers in a hooks object."""
    found = {}
    for event, groups in (data.get("hooks") or {}).items():
        for group in groups if isinstance(groups, list) else []:
            for handler in (group.get("hooks") or []) if isinstance(group, dict) else []:
                if is_ours(handler):
                    found[event] = str(handler.get("command", ""))
    return found
