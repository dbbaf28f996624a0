"""Contradiction by evidence: a later session whose steps contradict a lesson demotes it at once.

Contract: `check(store, playbook, trajectory, now)` demotes a live lesson (DEMOTE, source
`learning`, the steps — step number, tool event, the error — as the reason, its command anchor
marked changed) in two cases:

- *its command now fails*: a command that failed as *broken* — the tool itself says the target,
  script, recipe, task, program or option does not exist (`No rule to make target 'gen'`,
  `Missing script: "type-check"`, `unrecognized arguments: --fast`, `command not found`, exit 127)
  — and that no later step of the same task ran again with success, starts with a command anchor
  of the lesson (`playbook/anchors.py`) whose words hold the thing the error names;
- *its fix no longer fixes*: the lesson names a failure (a code span that is not one of its
  commands, `ImportError: cannot import name 'Client'`) and a command to run against it; this
  session ran that command with success, and afterwards another command failed with that same
  failure. The fix was applied and the failure came back: what the lesson prescribes is no longer
  what fixes it (e.g. "run `make gen` before `make test`" after the client stopped being generated).

A test that fails, a build with a type error, are neither: the command worked and found a problem,
which says nothing against a lesson telling to run it, unless the lesson promised that this failure
goes away. Nor is a failure among the steps the lesson was written from (its contradicting step's tool
event lies within the span of the events the lesson cites): whoever wrote it saw that failure and what
fixed it after (`bun install` ran, the import still failed, and the build the lesson also names made
it pass) — the session that taught a lesson does not refute it.

Cost: nothing unless a step failed; then one indexed read of the project's command anchors, and
for the second case the text of the few lessons whose command this session ran before a failure.
No LLM.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..core._types import Trajectory, TrajectoryStep
    from ..playbook.playbook import Playbook
    from ..store.interfaces import BulletRow, Store
    from ..store.records import AnchorRow

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
    """Demote the live lessons this trajectory contradicts (module doc); their ids."""
    steps = list(trajectory.get("trajectory") or [])
    if playbook.project_id is None or not any(_failed(s) for s in steps):
        return []
    anchors = store.command_anchors(playbook.project_id)
    session = trajectory.get("session_id")
    found = failures(trajectory)
    hits: dict[str, tuple[AnchorRow, list[TrajectoryStep], str]] = {}  # bullet id → (its anchor, steps, why)
    for anchor in anchors:
        broke = [(s, n) for s, n in found if _covers(anchor["name"], str(s.get("command")), n)]
        if broke and anchor["bullet_id"] not in hits:
            steps_text = "; ".join(f"{_at(s)}: `{_short(s.get('command'))}` failed, `{_short(n)}` not found "
                                   f"({_short(s.get('error'))})" for s, n in broke[:3])
            hits[anchor["bullet_id"]] = (anchor, [s for s, _ in broke],
                                         f"contradicted by session {session or '?'}: {steps_text}")
    for bullet_id, (anchor, later, why) in refixed(store, anchors, steps).items():
        hits.setdefault(bullet_id, (anchor, [later], f"its fix no longer fixes (session {session or '?'}): {why}"))
    taught = {b["id"]: _cited_span(b) for b in store.get_bullets(list(hits))} if hits else {}
    evidence = {bid: (anchor, why) for bid, (anchor, against, why) in hits.items()
                if not all(_within(s, taught.get(bid)) for s in against)}
    if not evidence:
        return []
    from ..playbook.playbook import PlaybookError

    demoted: list[str] = []
    for bullet_id, (anchor, detail) in evidence.items():
        if anchor.get("status") != "active":
            continue
        try:
            playbook.demote(bullet_id, source="learning", reason=detail[:500], session_id=session, now=now)
        except PlaybookError:
            continue
        demoted.append(bullet_id)
    store.set_anchor_states([{**a, "state": "changed", "detail": d[:400]} for a, d in evidence.values()], now)
    return demoted


def _failed(step: TrajectoryStep) -> bool:
    return bool(step.get("command")) and not step.get("success") and not step.get("background")


def _cited_span(bullet: BulletRow) -> tuple[int, int] | None:
    """The first and last tool event the lesson cites as its evidence (`provenance.tool_event_ids`)."""
    events = [e for e in (bullet["provenance"] or {}).get("tool_event_ids") or [] if isinstance(e, int)]
    return (min(events), max(events)) if events else None


def _within(step: TrajectoryStep, span: tuple[int, int] | None) -> bool:
    """Is this step among those the lesson was written from (its tool event inside the cited span)?"""
    event = step.get("tool_event_id")
    return span is not None and isinstance(event, int) and span[0] <= event <= span[1]


def _at(step: TrajectoryStep) -> str:
    return f"step {step.get('step')} (tool event {step.get('tool_event_id')})"


def _runs(anchor: str, command: str) -> bool:
    """Does `command` run the lesson's command `anchor` (its words first; a bare program is too loose)?"""
    mine, run = _words(anchor), _words(command)
    return (len(mine) >= 2 or mine[0].startswith(("./", "bin/", "scripts/"))) and run[:len(mine)] == mine


_SPAN = re.compile(r"`([^`\n]{8,300})`")
# A span that says what failed (not a path or a name the traceback of any failure may hold).
_FAILURE = re.compile(r"error|exception|panic|cannot|can't|not found|no such|undefined|missing|invalid|denied|"
                      r"refused|expected|unknown|failed|fatal|traceback|not defined|no module", re.I)


def _squeeze(text: str) -> str:
    return " ".join(text.split()).lower()


def _names_failure(span: str, text: str) -> bool:
    """Is the failure `span` (a lesson's code span; `…` where the lesson cut it) in the error `text`?"""
    pieces = [_squeeze(p) for p in span.split("…") if len(p.strip()) >= 4]
    return bool(pieces) and all(p in text for p in pieces)


def refixed(store: Store, anchors: list[AnchorRow],
            steps: list[TrajectoryStep]) -> dict[str, tuple[AnchorRow, TrajectoryStep, str]]:
    """{bullet id: (its fix's anchor, the step that failed again, the steps told)} of the lessons whose
    fix this session applied (their command ran with success) before a later command failed with the
    failure the lesson names."""
    ran: dict[str, tuple[AnchorRow, int]] = {}
    for n, step in enumerate(steps):
        if not step.get("success") or not step.get("command"):
            continue
        for anchor in anchors:
            if anchor["bullet_id"] not in ran and _runs(anchor["name"], str(step["command"])):
                ran[anchor["bullet_id"]] = (anchor, n)
    ran = {b: (a, n) for b, (a, n) in ran.items() if any(_failed(s) for s in steps[n + 1:])}
    if not ran:
        return {}
    commands: dict[str, set[str]] = {}
    for a in anchors:
        commands.setdefault(a["bullet_id"], set()).add(_squeeze(a["name"]))
    out: dict[str, tuple[AnchorRow, TrajectoryStep, str]] = {}
    for bullet in store.get_bullets(list(ran)):
        anchor, n = ran[bullet["id"]]
        spans = [s for s in _SPAN.findall(bullet["content"])
                 if _FAILURE.search(s) and _squeeze(s) not in commands[bullet["id"]]]
        for later in steps[n + 1:]:
            if not _failed(later) or _runs(anchor["name"], str(later.get("command"))):
                continue  # its own command failing is the first case's
            text = _squeeze("\n".join(str(later.get(k) or "") for k in ("error", "output", "result"))[:20000])
            span = next((s for s in spans if _names_failure(s, text)), None)
            if span:
                out[bullet["id"]] = (anchor, later, f"{_at(steps[n])}: `{_short(steps[n].get('command'))}` ran, then "
                                             f"{_at(later)}: `{_short(later.get('command'))}` failed again with "
                                             f"`{_short(span)}` ({_short(later.get('error'))})")
                break
    return out


def _short(text: object) -> str:
    value = " ".join(str(text or "").split()).replace("`", "'")
    return value if len(value) <= 80 else value[:77] + "..."
