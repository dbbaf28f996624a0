"""Code-pattern observations → curator input.

The detector (`code_patterns`) sees what each Edit / Write put into the code. One bare `except:` is
not a lesson; the agent writing the same harmful pattern into this project in several sessions
(`learning.code_pattern_sessions`, default 2) is, so hits are counted per session in the store and
the pattern's lesson becomes a candidate only past that count (the curator then adds it once and
merely reinforces it afterwards). An edit that removes a harmful pattern whose lesson is already
in the playbook marks that lesson helpful.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..playbook.playbook import content_key
from . import code_patterns

if TYPE_CHECKING:
    from ..core._types import BulletTag, Candidate, Reflection, Trajectory
    from ..core.config import Config
    from ..store.interfaces import Store


def reflection(store: Store, project_id: int | None, trajectory: Trajectory, cfg: Config, now: float) -> Reflection:
    """Candidates and tags from the trajectory's file writes; records this session's hits (call
    inside the curation transaction)."""
    candidates: list[Candidate] = []
    tags: list[BulletTag] = []
    session_id = trajectory.get("session_id") or ""
    needed = cfg["learning.code_pattern_sessions"]
    proposed: set[str] = set()
    for step in trajectory.get("trajectory") or []:
        data = step.get("written")
        if data is None:
            continue
        for obs in code_patterns.detect(step.get("tool") or "", data, cfg):
            if obs["polarity"] != "harmful":
                continue
            pattern = obs["pattern_id"]
            if obs["change"] == "added":
                store.record_pattern_hit(project_id, pattern, session_id, obs.get("file"), now)
                sessions = store.pattern_sessions(project_id, pattern)
                if sessions >= needed and pattern not in proposed:
                    proposed.add(pattern)
                    candidates.append({
                        "content": obs["lesson"], "section": "troubleshooting_and_pitfalls",
                        "evidence": f"step {step.get('step')}: {obs.get('file')} gained {pattern}"
                                    f" (written in {sessions} sessions)",
                        "source_steps": [step["step"]],
                        "confidence": 0.8,  # seen in `needed` sessions already: strong enough to inject
                    })
            elif obs["change"] == "removed":
                existing = store.find_by_content_key(content_key(obs["lesson"]), project_id)
                if existing is not None and existing["status"] == "active":
                    tags.append({"bullet_id": existing["id"], "tag": "helpful",
                                 "reason": f"the agent removed {pattern} from {obs.get('file')}"})
    return {"candidates": candidates, "tags": tags}
