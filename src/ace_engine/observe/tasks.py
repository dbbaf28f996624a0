"""Turns joined into one task: what the LLM reflector reads in one call.

A trajectory is one turn (the steps between two user prompts, `trajectory.split_turns`). A task is
usually several: the user asks, looks at the result, corrects ("no, use the mise task"), asks for
the next part. Learning each turn with its own model call costs a call per prompt and shows the
model a correction without the failure it corrects. `join(turns)` makes one trajectory of
consecutive turns of one agent:

- steps renumbered in order across the turns (1…N), so every step has one number the model can cite
  and the curator can resolve (`Curator._provenance` reads the steps by number);
- `turns`: where each turn starts ({first: step number, prompts: the user's prompts}), so the
  prompt can show each of the user's words where it was said;
- prompts, files, cited and shown bullets, tool events: the union in order; the outcome and the
  final message: the last turn's; the turn before and its open failures: the first turn's;
- origin evidence: the union of the turns' (each is cumulative for the agent's own events; each
  adds its own non-user entries), deduplicated and in time order — a package someone else named in
  any of the turns is still someone else's.

Pure: no I/O, linear in the steps and the evidence.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, cast

from . import origins

if TYPE_CHECKING:
    from ..core._types import Trajectory, TrajectoryStep


def _evidence(turns: list[Trajectory]) -> list[dict[str, Any]]:
    seen: set[str] = set()
    items: list[dict[str, Any]] = []
    for traj in turns:
        for item in traj.get("origin_evidence") or []:
            key = json.dumps([item.get("use"), item.get("seen"), item.get("at")], default=str)
            if key not in seen:
                seen.add(key)
                items.append(item)
    return origins.in_order(items)


def join(turns: list[Trajectory]) -> Trajectory:
    """One trajectory of `turns` (consecutive turns of one agent, in order); a single turn as it is."""
    if len(turns) == 1:
        return turns[0]
    first, last = turns[0], turns[-1]
    steps: list[TrajectoryStep] = []
    starts: list[dict[str, Any]] = []
    for traj in turns:
        starts.append({"first": len(steps) + 1, "prompts": list(traj.get("prompts") or []),
                       "task": str(traj.get("task") or "")})
        for step in traj.get("trajectory") or []:
            copy = cast("TrajectoryStep", dict(step))
            copy["step"] = len(steps) + 1
            steps.append(copy)

    def union(field: str) -> list[Any]:
        return list(dict.fromkeys(x for t in turns for x in (t.get(field) or [])))  # type: ignore[attr-defined]

    joined = cast("Trajectory", dict(last))
    joined.update({
        "task": str(first.get("task") or ""),
        "prompts": [p for t in turns for p in t.get("prompts") or []],
        "trajectory": steps,
        "playbook_used": union("playbook_used"),
        "cited": union("cited"),
        "files": union("files"),
        "files_read": union("files_read"),
        "tool_event_ids": [n for t in turns for n in t.get("tool_event_ids") or []],
        "interrupted": bool(last.get("interrupted")),
        "started_at": first.get("started_at"),
        "continuation": bool(first.get("continuation")),
        "git": next((t["git"] for t in turns if t.get("git")), {}),
    })
    # The turn before the task and the failures it ended on are the first turn's.
    joined.pop("previous", None)
    joined.pop("carried", None)
    if "previous" in first:
        joined["previous"] = first["previous"]
    if "carried" in first:
        joined["carried"] = first["carried"]
    if any("origin_evidence" in t for t in turns):
        joined["origin_evidence"] = _evidence(turns)
    joined["turns"] = starts
    return joined
