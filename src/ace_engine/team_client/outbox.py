"""The outbox: this project's local playbook changes after the push cursor, as protocol deltas.

Contract: the outbox is the change log itself (`bullet_changes`), read after `sync_state.push_cursor`
by `store.changes_after` — only this project's project-scope lessons (global ones stay on the
machine) and never a change a pull applied (source `team`: it came from the server). `next_batch`
maps each change to at most one delta with key `"{bullet_id}:{change_id}"`, so a batch sent twice
(a crash between the server's answer and the cursor update) is answered `duplicate` and changes
nothing. What travels is only what is synced (`active` lessons, playbook.py); an archive for
staleness (REMOVE, source `anchors`) is a REMOVE like any other, and a demotion a QUARANTINE: the
protocol has no candidates, so the team holds the lesson for its reviewer, who keeps or rejects it
for every machine (a teammate whose session found it broken is evidence, not a verdict):

| change | delta |
|---|---|
| ADD, PROMOTE, RESTORE of a lesson active now | ADD with its current content, section, domains |
| UPDATE of content / section / domains of an active lesson | UPDATE with those fields, current values |
| TAG helpful / harmful | TAG with this client's own absolute counts (below) |
| MERGE | MERGE (`other_id`, the kept lesson's content) |
| REMOVE, QUARANTINE (not of a candidate, not the archiving half of a MERGE) | the same, with the reason |
| DEMOTE of a lesson still a candidate (its anchor changed, a session contradicted it) | QUARANTINE, the reason |

Anything else (a candidate's life, a flagged lesson held back, provenance-only updates, neutral
tags) sends nothing; its change id still moves the cursor. A TAG carries absolute counts: local
helpful (implicit + explicit marks) less what the other clients counted (`team_counts`, which a
pull adds to the local counter), the same for harmful; the server keeps each client's maximum, so
a retry or a replay never double-counts.

Cost: one indexed query per batch of up to `limit` changes, one for the other clients' counts.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..store.interfaces import SyncStore
    from ..store.records import OutboxChange

BATCH = 500  # the protocol's limit per push
_CONTENT_FIELDS = ("content", "section", "domains")


class Batch:
    """Deltas to push (`deltas`), the change id each key stands for, and `last_change`: the last
    change id read, which the push cursor moves to once the server has answered (0: nothing read)."""

    __slots__ = ("deltas", "last_change", "read")

    def __init__(self) -> None:
        self.deltas: list[dict[str, Any]] = []
        self.last_change = 0
        self.read = 0


def next_batch(store: SyncStore, project_id: int, cursor: int, limit: int = BATCH) -> Batch:
    """The next changes after `cursor` as at most `limit` deltas (see the module contract)."""
    batch = Batch()
    rows = store.changes_after(project_id, cursor, limit)
    sums = store.team_count_sums([r["bullet_id"] for r in rows if r["op"] == "TAG"])
    for row in rows:
        batch.read += 1
        batch.last_change = int(row["id"])
        delta = to_delta(row, sums.get(row["bullet_id"], (0, 0)))
        if delta is not None:
            batch.deltas.append(delta)
    return batch


def own_counts(row: OutboxChange, others: tuple[int, int]) -> tuple[int, int]:
    """This client's own (helpful, harmful) of a lesson: local counters less the other clients'."""
    helpful = int(row["helpful"] or 0) + int(row["helpful_explicit"] or 0) - others[0]
    harmful = int(row["harmful"] or 0) + int(row["harmful_explicit"] or 0) - others[1]
    return max(0, helpful), max(0, harmful)


def to_delta(row: OutboxChange, others: tuple[int, int] = (0, 0)) -> dict[str, Any] | None:
    """One `changes_after` row as a protocol delta, or None when it sends nothing."""
    op, status = row["op"], row["status"]
    detail = row["detail"] if isinstance(row["detail"], dict) else {}
    delta: dict[str, Any] = {"key": f"{row['bullet_id']}:{row['id']}", "lesson_id": row["bullet_id"]}
    # The protocol takes at most 16 domains a lesson (the first are the lesson's own, derived later).
    current = {"content": row["content"], "section": row["section"], "domains": list(row["domains"])[:16]}
    if op in ("ADD", "PROMOTE", "RESTORE"):
        if status != "active":
            return None
        return {**delta, "op": "ADD", **current}
    if op == "UPDATE":
        changed = [f for f in _CONTENT_FIELDS if f in (detail.get("after") or {})]
        if status != "active" or not changed:
            return None
        return {**delta, "op": "UPDATE", **{f: current[f] for f in changed}}
    if op == "TAG":
        if detail.get("tag") not in ("helpful", "harmful") or status == "candidate":
            return None
        helpful, harmful = own_counts(row, others)
        return {**delta, "op": "TAG", "helpful": helpful, "harmful": harmful}
    if op == "MERGE":
        other = detail.get("absorbed")
        if not isinstance(other, str) or status == "candidate":
            return None
        return {**delta, "op": "MERGE", "other_id": other, "content": row["content"]}
    if op == "DEMOTE":
        if status != "candidate":
            return None  # confirmed again before this push: the team never needs to hear of it
        return {**delta, "op": "QUARANTINE", **({"reason": str(row["reason"])[:500]} if row["reason"] else {})}
    if op in ("REMOVE", "QUARANTINE"):
        if detail.get("merged_into") or detail.get("from") == "candidate":
            return None
        return {**delta, "op": op, **({"reason": str(row["reason"])[:500]} if row["reason"] else {})}
    return None
