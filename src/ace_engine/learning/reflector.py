"""The Reflector interface: a trajectory in, candidate lessons and bullet tags out.

A trajectory is the ACE plugin's learn payload (DESIGN.md, "JSON compatibility") plus what the
trajectory builder adds (see `trajectory.py`):

    {task, trajectory: [{step, tool, action, result, success, kind, command, files, error,
                         exit_code, duration_ms, tool_event_id, change?}],
     result: {success, output, summary}, playbook_used: [bullet ids], git: {...},
     session_id, agent_id, agent_type, project: {id, key, root, name}, files: [edited],
     files_read, prompts, cited: [ids the agent cited], previous: {task, commands},
     history: {co_edits: [{a, b, sessions}], commands: {key: stats}}, source, interrupted}

A reflector returns

    {"candidates": [{"content", "section", "domains"?: [...], "evidence": str,
                     "confidence"?: float, "source_steps"?: [int], "files"?: [...], "kind"?: str}],
     "tags": [{"bullet_id", "tag": "helpful" | "harmful", "reason"}]}

Candidates then go through the quality filter, the poisoning defence and the curator, whoever
proposed them. A reflector that cannot do its job (an LLM that is over budget, unreachable or
keeps answering invalid JSON) raises `ReflectorError`: the job falls back to the heuristic
reflector instead of failing.

Which reflector runs is chosen in `reflector_choice.py` (`get_reflector(cfg)`). This module is a
leaf: it imports nothing of `learning` (only the import-free `errors`), so every reflector can
import `ReflectorError` from it without a cycle. Cost: `typing` only.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol, cast

from ..core.errors import AceError

if TYPE_CHECKING:
    from ..core._types import Bullet, BulletTag, Candidate, Reflection, Trajectory


class ReflectorError(AceError):
    """The reflector could not produce a reflection; the caller falls back to the heuristics."""


class Reflector(Protocol):
    name: str

    def reflect(self, trajectory: Trajectory, playbook: list[Bullet]) -> Reflection: ...


def normalize(reflection: object) -> Reflection:
    """A reflection with the shape guaranteed (lists of dicts with the required keys)."""
    candidates: list[Candidate] = []
    tags: list[BulletTag] = []
    out: Reflection = {"candidates": candidates, "tags": tags}
    if not isinstance(reflection, dict):
        return out
    for cand in reflection.get("candidates") or []:
        content = cand.get("content") if isinstance(cand, dict) else None
        if isinstance(content, str) and content.strip():
            item = dict(cand)
            item.setdefault("section", "troubleshooting_and_pitfalls")
            item["evidence"] = str(item.get("evidence") or "")
            candidates.append(cast("Candidate", item))  # other keys are a model's: the curator reads what it knows
    for tag in reflection.get("tags") or []:
        if isinstance(tag, dict) and isinstance(tag.get("bullet_id"), str) and tag.get("tag") in ("helpful", "harmful",
                                                                                                   "neutral"):
            tags.append({"bullet_id": tag["bullet_id"], "tag": tag["tag"], "reason": str(tag.get("reason") or "")})
    return out
