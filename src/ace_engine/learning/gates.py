"""Quality gates: which turns are worth learning from at all.

Not learned (the job is `skipped` with the reason; the bullets shown still get their feedback):
greetings and acknowledgements, `ace` and slash commands, and any turn without substantial
work — no Edit / Write and no state-changing command. Questions, listings and status checks
fall out of that last rule: they only read. A turn whose prompt states a rule (`corrections.correction`:
"we only do patch releases", "keep in mind, tests need `test:env`") is learned whatever it did: the
user's words are the lesson, not the work.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from ..observe import commands
from ..observe.corrections import stated

if TYPE_CHECKING:
    from ..core._types import Trajectory

_GREETING = re.compile(
    r"^\s*(?:hi|hello|hey|yo|thanks?(?: you)?|thank you|thx|ty|ok(?:ay)?|yes|no|yep|nope|sure|cool|great|nice|"
    r"good (?:morning|afternoon|evening)|bye|continue|go on|go ahead|proceed|done|lgtm)\b[\s\W]*$", re.IGNORECASE)
_ACE_COMMAND = re.compile(r"^\s*(?:!?ace\b|/)", re.IGNORECASE)


def substantial(trajectory: Trajectory) -> bool:
    """Did the turn change anything: an edit, or a command that is not read-only?"""
    for step in trajectory.get("trajectory") or []:
        if step.get("kind") == "edit":
            return True
        command = step.get("command")
        if command and commands.is_state_changing(command):
            return True
    return False


def skip_reason(trajectory: Trajectory) -> str | None:
    """Why this turn is not learned from, or None when it is."""
    task = (trajectory.get("task") or "").strip()
    steps = trajectory.get("trajectory") or []
    if task and _ACE_COMMAND.match(task) and not substantial(trajectory):
        return "ace or slash command"
    if task and _GREETING.match(task) and not steps:
        return "greeting or acknowledgement"
    if stated(trajectory):
        return None
    if not steps:
        return "no tool use (a question or a chat)"
    if not substantial(trajectory):
        kinds = {s.get("kind") for s in steps}
        what = "listing / status check" if kinds <= {"readonly", "read"} else "read-only turn"
        return f"no substantial work ({what}: no edit, no state-changing command)"
    return None
