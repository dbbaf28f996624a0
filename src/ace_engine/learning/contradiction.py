"""Contradiction by evidence: a later session whose steps show a lesson's command broken demotes it.

Contract: `check(store, playbook, trajectory, now)` finds the trajectory's commands that failed as
*broken* — the tool itself says the target, script, recipe, task, program or option does not
exist (`No rule to make target 'gen'`, `Missing script: "type-check"`, `unrecognized arguments:
--fast`, `command not found`, exit 127) — and that no later step of the same task ran again with
success. A live lesson with a command anchor (`playbook/anchors.py`) that such a run starts with,
and whose words hold the thing the error names, is demoted at once to a candidate to re-check
(DEMOTE, source `learning`), the failing steps (step number, tool event, the error) as the reason,
its command anchor marked changed. A test that fails, a build with a type error, are not this: the
command worked and found a problem, which says nothing against a lesson telling to run it.

Cost: nothing unless a step failed as broken; then one indexed read of the project's command
anchors. No LLM.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..core._types import Trajectory, TrajectoryStep
    from ..playbook.playbook import Playbook
    from ..store.interfaces import Store

_BROKEN = [re.compile(p, re.I) for p in (
    r"No rule to make target [`'\"]?([^'\"`\s,]+)",
    r"Missing script:? [\"']?([^\"'\s]+)",
    r"Command [\"']([^\"']+)[\"'] not found",
    r"has a [\"']([^\"']+)[\"'] script",
    r"does not contain recipe [`'\"]?([^`'\"\s]+)",
    r"The task [\"']([^\"']+)[\"'] could not be found",
    r"(?:^|\s)([\w./-]+): command not found",
    r"command not found: ([\w./-]+)",
    r"unrecognized arguments?: (-[\w-]+)",
    r"unknown (?:option|flag|argument):? [`'\"]?(-[\w-]+)",
    r"no such option:? [`'\"]?(-[\w-]+)",
    r"unexpected argument [`'\"](-[\w-]+)",
    r"Unknown command:? [`'\"]?([\w:.-]+)",
)]


def broken(step: TrajectoryStep) -> str | None:
    """What a failed step's error says does not exist (a target, a script, an option…), or None."""
    if step.get("success") or step.get("background") or not step.get("command"):
        return None
    text = "\n".join(str(step.get(k) or "") for k in ("error", "output", "result"))[:20000]
    for pattern in _BROKEN:
        match = pattern.search(text)
        if match:
            return match.group(1)
    if step.get("exit_code") == 127:
        return str(step.get("command") or "").split()[0] if str(step.get("command") or "").split() else None
    return None


def _words(command: str) -> list[str]:
    return " ".join(command.split()).split(" ")


def failures(trajectory: Trajectory) -> list[tuple[TrajectoryStep, str]]:
    """The steps whose command failed as broken and never passed later in the task, with what it named."""
    steps = list(trajectory.get("trajectory") or [])
    out = []
    for n, step in enumerate(steps):
        named = broken(step)
        if named is None:
            continue
        command = " ".join(str(step.get("command")).split())
        if any(s.get("success") and " ".join(str(s.get("command") or "").split()) == command for s in steps[n + 1:]):
            continue
        out.append((step, named))
    return out


def _covers(anchor: str, command: str, named: str) -> bool:
    """Does the failing `command` run the lesson's command `anchor`, and name what the error names?"""
    mine, run = _words(anchor), _words(command)
    if len(mine) < 2 and not mine[0].startswith(("./", "bin/", "scripts/")):
        return False  # a bare program (`pytest`): its failure is about the arguments this run gave
    if run[:len(mine)] != mine:
        return False
    thing = named.strip("'\"`").split("=")[0]
    return any(w.strip("'\"").split("=")[0] == thing for w in mine) or mine[0].endswith(thing)


def check(store: Store, playbook: Playbook, trajectory: Trajectory, now: float) -> list[str]:
    """Demote the live lessons this trajectory's broken commands contradict; their ids."""
    found = failures(trajectory)
    if not found or playbook.project_id is None:
        return []
    from ..playbook.playbook import PlaybookError

    session = trajectory.get("session_id")
    demoted: list[str] = []
    updates: list[dict[str, Any]] = []
    for anchor in store.command_anchors(playbook.project_id):
        hits = [(s, n) for s, n in found if _covers(anchor["name"], str(s.get("command")), n)]
        if not hits or anchor["bullet_id"] in demoted:
            continue
        steps = "; ".join(f"step {s.get('step')} (tool event {s.get('tool_event_id')}): `{_short(s.get('command'))}` "
                          f"failed, `{_short(n)}` not found ({_short(s.get('error'))})" for s, n in hits[:3])
        detail = f"contradicted by session {session or '?'}: {steps}"
        updates.append({**anchor, "state": "changed", "detail": detail[:400]})
        if anchor.get("status") != "active":
            continue
        try:
            playbook.demote(anchor["bullet_id"], source="learning", reason=detail[:500], session_id=session, now=now)
        except PlaybookError:
            continue
        demoted.append(anchor["bullet_id"])
    if updates:
        store.set_anchor_states(updates, now)
    return demoted


def _short(text: object) -> str:
    value = " ".join(str(text or "").split()).replace("`", "'")
    return value if len(value) <= 80 else value[:77] + "..."
