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

`get_reflector(cfg)`: with `learning.reflector` = `auto` (default) or `llm`, the module
`ace_engine.learning.llm_reflector` is asked for one through `make_reflector(cfg)`, which returns
a Reflector when a provider is configured and available, else None; `heuristic`, an import error
or None give the `HeuristicReflector`.
"""

from typing import Protocol


class ReflectorError(Exception):
    """The reflector could not produce a reflection; the caller falls back to the heuristics."""


class Reflector(Protocol):
    name: str

    def reflect(self, trajectory: dict, playbook: list[dict]) -> dict: ...


def heuristic(cfg=None) -> Reflector:
    """The offline heuristic reflector, with the thresholds of `cfg` (slow steps, co-edits)."""
    from .heuristics import HeuristicReflector

    return HeuristicReflector.from_config(cfg) if cfg is not None else HeuristicReflector()


def get_reflector(cfg) -> Reflector:
    """The LLM reflector when configured and available, else the heuristic one."""
    choice = str(cfg["learning.reflector"]).lower()
    if choice in ("auto", "llm"):
        try:
            from . import llm_reflector
        except ImportError:
            llm_reflector = None
        make = getattr(llm_reflector, "make_reflector", None)
        if make is not None:
            try:
                found = make(cfg)
            except Exception as exc:  # noqa: BLE001 — a broken provider must not stop learning
                from .. import log

                log.warning("learning", f"LLM reflector unavailable, using heuristics: {type(exc).__name__}: {exc}")
                found = None
            if found is not None:
                return found
    return heuristic(cfg)


def normalize(reflection) -> dict:
    """A reflection with the shape guaranteed (lists of dicts with the required keys)."""
    out = {"candidates": [], "tags": []}
    if not isinstance(reflection, dict):
        return out
    for cand in reflection.get("candidates") or []:
        if isinstance(cand, dict) and isinstance(cand.get("content"), str) and cand.get("content").strip():
            item = dict(cand)
            item.setdefault("section", "troubleshooting_and_pitfalls")
            item["evidence"] = str(item.get("evidence") or "")
            out["candidates"].append(item)
    for tag in reflection.get("tags") or []:
        if isinstance(tag, dict) and isinstance(tag.get("bullet_id"), str) and tag.get("tag") in ("helpful", "harmful", "neutral"):
            out["tags"].append({"bullet_id": tag["bullet_id"], "tag": tag["tag"], "reason": str(tag.get("reason") or "")})
    return out
