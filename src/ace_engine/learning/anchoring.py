"""After a trajectory is curated: the anchors of the lessons it wrote, the lessons it contradicts,
and the re-check of what changed in the project since the last one.

Contract: `after_curation(store, playbook, trajectory, stats, root, now)` — called by the pipeline
inside the curation transaction — (1) finds and keeps the anchors of every lesson the curation
added or observed again (`playbook/staleness.record`: re-observed is confirmed, so its anchors
take today's values), and promotes back a lesson a check had demoted to re-check: this session's
evidence confirms it; (2) demotes the lessons this session contradicts: their command found
broken, or their fix applied and the failure back (`contradiction.check`); (3) re-checks the
project's anchor files whose stamp moved (`staleness.check`). Returns what it did, for the run's statistics.

Cost: per touched lesson one extraction (bounded reads of the files it names, each file read
once per trajectory); the check stats each anchor file. No LLM.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..playbook import staleness
from ..playbook.anchors import Reader
from ..playbook.playbook import PlaybookError
from . import contradiction

if TYPE_CHECKING:
    from ..core._types import Trajectory
    from ..playbook.playbook import Playbook
    from ..store.interfaces import Store


def after_curation(store: Store, playbook: Playbook, trajectory: Trajectory, stats: dict[str, Any],
                   root: str | None, now: float, *, withhold: bool = False) -> dict[str, Any]:
    out: dict[str, Any] = {"anchored": 0, "confirmed": 0, "contradicted": []}
    pid = playbook.project_id
    if pid is None or not root:
        return out
    reader = Reader(root)
    for bullet in store.get_bullets(list(dict.fromkeys(stats.get("touched") or []))):
        if bullet["project_id"] != pid or bullet["status"] not in ("active", "candidate"):
            continue
        demoted = bullet["status"] == "candidate" and staleness.demoted_by_check(store, bullet["id"])
        out["anchored"] += bool(staleness.record(store, dict(bullet), root, now, reader))
        if demoted:
            try:
                playbook.promote(bullet["id"], source="learning", session_id=trajectory.get("session_id"), now=now,
                                 reason="confirmed again by a later session's evidence after a re-check")
                out["confirmed"] += 1
            except PlaybookError:
                pass
    out["contradicted"] = contradiction.check(store, playbook, trajectory, now)
    out["check"] = staleness.check(store, pid, root, now, withhold=withhold)
    return out
