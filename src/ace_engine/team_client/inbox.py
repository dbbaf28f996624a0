"""The inbox: deltas pulled from the team server, applied to the local playbook.

Contract: `apply_page(store, playbook, deltas, …)` applies one page of LoggedDeltas (seq order)
through `Playbook` operations with source `team`, and moves `sync_state.pull_cursor` to the page's
last seq in the SAME store transaction: a crash (or any error) part-way leaves neither a change
nor a moved cursor, and the next pull applies the page again. Deltas at or below the cursor are
skipped, so a page applied twice changes nothing.

The client trusts no server: content comes in through `Playbook.add` / `update`, so the local
safety policy quarantines what it flags (a pulled lesson is never active on that path) and the
store's redaction applies. Per op:

- ADD: a new lesson with the server's `lesson_id` as its id and origin `team`; an id that is
  already here (our own lesson coming back, or a re-pull) is not duplicated — its content is taken
  as an UPDATE if the server's differs, and a lesson a pulled QUARANTINE held is restored (an
  approval; the local policy still decides). A lesson whose words this project already has under
  another id is not added twice (`Playbook.add`'s exact-duplicate rule).
- UPDATE: content / section / domains of the lesson (an unknown id with content: added as above).
- TAG: the other clients' counts (`counts`: `{client_id: [helpful, harmful]}`) go to `team_counts`,
  each kept at its maximum, and the local counters grow by how much their sum grew — bounded like
  the server bounds a token (`playbook.mark_budget.grant`): a client's count grows by at most
  `MARKS_PER_DAY` a pull, and the team's by at most `TEAM_MARKS_PER_DAY` a UTC day per lesson, so
  a server inventing clients or counts cannot rank a lesson first. This client's own entry is
  ignored: it counted locally already.
- MERGE: `other_id` archived, the kept lesson's content updated; counters are not summed (each
  lesson's counts come with its own TAG deltas).
- QUARANTINE, REMOVE: the lesson quarantined / archived; a teammate's reason is kept as its note,
  labelled as such (never as a review's verdict).

Deltas this client pushed (`client_id` ours) are skipped but move the cursor. Deltas on lessons
of another project or the global scope, of unknown lessons, or that the playbook refuses
(`PlaybookError`, `SectionError`) are skipped and counted; the page goes on.

Cost: one store transaction per page; the playbook's own cost per delta.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..core import log
from ..playbook.ids import looks_like_id
from ..playbook.mark_budget import MARKS_PER_DAY, TEAM_MARKS_PER_DAY, grant
from ..playbook.playbook import PlaybookError
from ..playbook.sections import SectionError
from ..store.sync_sql import TEAM_SOURCE

if TYPE_CHECKING:
    from ..core._types import Bullet
    from ..playbook.playbook import Playbook
    from ..store.interfaces import Store

ORIGIN = "team"


def _field(delta: dict[str, Any], name: str) -> Any:
    """A field of a LoggedDelta: at its top level, or in its `body` as the server stored it."""
    if name in delta:
        return delta[name]
    body = delta.get("body")
    return body.get(name) if isinstance(body, dict) else None


class _Page:
    def __init__(self, store: Store, playbook: Playbook, project_id: int, client_id: str, now: float) -> None:
        self.store, self.playbook, self.project_id, self.client_id, self.now = (
            store, playbook, project_id, client_id, now)
        self.counts = {"applied": 0, "own": 0, "skipped": 0}

    def local(self, lesson_id: object) -> Bullet | None:
        """The lesson here, if it is one of this project's (never a global or another project's)."""
        if not isinstance(lesson_id, str) or not looks_like_id(lesson_id):
            return None
        bullet = self.store.get_bullet(lesson_id)
        return bullet if bullet is not None and bullet["project_id"] == self.project_id else None

    def apply(self, delta: dict[str, Any]) -> bool:
        """Apply one delta; False when it was skipped."""
        op = str(_field(delta, "op") or "").upper()
        lesson_id = _field(delta, "lesson_id")
        seq = delta.get("seq")
        meta: dict[str, Any] = {"source": TEAM_SOURCE, "reason": f"team seq {seq}", "now": self.now}
        bullet = self.local(lesson_id)
        if op in ("ADD", "UPDATE"):
            return self._content(op, delta, lesson_id, bullet, meta)
        if bullet is None:
            return False
        if op == "TAG":
            return self._tag(delta, bullet, meta)
        if op == "MERGE":
            other = self.local(_field(delta, "other_id"))
            if other is not None and other["id"] != bullet["id"]:
                self.playbook.remove(other["id"], **{**meta, "reason": f"merged into {bullet['id']} (team seq {seq})"})
            content = _field(delta, "content")
            if isinstance(content, str) and content:
                self.playbook.update(bullet["id"], content=content, **meta)
            return True
        if op == "QUARANTINE":
            self.playbook.quarantine(bullet["id"], **{**meta, "reason": _reason(delta, seq)})
            return True
        if op == "REMOVE":
            self.playbook.remove(bullet["id"], **{**meta, "reason": _reason(delta, seq)})
            return True
        return False

    def _content(self, op: str, delta: dict[str, Any], lesson_id: object, bullet: Bullet | None,
                 meta: dict[str, Any]) -> bool:
        content, section, domains = (_field(delta, f) for f in ("content", "section", "domains"))
        domains = [str(d) for d in domains] if isinstance(domains, list) else None
        if bullet is None:
            if not (isinstance(lesson_id, str) and isinstance(content, str) and isinstance(section, str)):
                return False
            if self.store.get_bullet(lesson_id) is not None:  # that id is another scope's here: leave it
                return False
            team = {"seq": delta.get("seq"), "client": delta.get("client_id")}
            _, created = self.playbook.add(content, section, domains=domains, provenance={"team": team},
                                           bullet_id=lesson_id, origin=ORIGIN, **meta)
            return created
        updated = self.playbook.update(bullet["id"], content=content if isinstance(content, str) else None,
                                       section=section if isinstance(section, str) else None, domains=domains,
                                       **meta)
        if op == "ADD" and updated["status"] == "quarantined" and self._held_by_team(bullet["id"]):
            # The team's reviewer approved what a team QUARANTINE held here; the local policy (the
            # pattern list and the provenance rule, in `Playbook.restore`) still has the last word.
            try:
                self.playbook.restore(bullet["id"], **meta)
            except PlaybookError:
                pass  # held back here: only this user's `ace review --approve` makes it active
        return True

    def _held_by_team(self, bullet_id: str) -> bool:
        """Was the lesson's last QUARANTINE a pulled one (not this user's, not the local policy's)?"""
        for change in self.store.changes(bullet_id, limit=50):
            if change["op"] == "QUARANTINE":
                return bool(change["source"] == TEAM_SOURCE)
        return False

    def _tag(self, delta: dict[str, Any], bullet: Bullet, meta: dict[str, Any]) -> bool:
        counts = _field(delta, "counts")
        if not isinstance(counts, dict):
            return False
        known = self.store.team_counts(bullet["id"])
        spent = self.store.team_marks_since(bullet["id"], self.now // 86400 * 86400)
        grew = [0, 0]
        for client, pair in counts.items():
            if client == self.client_id or not isinstance(client, str):
                continue
            try:
                asked = [max(0, int(n)) for n in pair][:2]
            except (TypeError, ValueError):
                continue
            if len(asked) != 2:
                continue
            old = known.get(client, (0, 0))
            step = [min(grant(asked[i], old[i], 0, MARKS_PER_DAY),
                        grant(TEAM_MARKS_PER_DAY, 0, spent[i] + grew[i], TEAM_MARKS_PER_DAY)) for i in (0, 1)]
            if any(step):
                self.store.set_team_count(bullet["id"], client, old[0] + step[0], old[1] + step[1])
                grew[0] += step[0]
                grew[1] += step[1]
        for tag, count in (("helpful", grew[0]), ("harmful", grew[1])):
            if count:
                self.playbook.tag(bullet["id"], tag, count=count, **meta)
        return True


def _reason(delta: dict[str, Any], seq: object) -> str:
    reason = _field(delta, "reason")
    return f"a teammate's note: {str(reason)[:300]} (team seq {seq})" if reason else f"team seq {seq}"


def apply_page(store: Store, playbook: Playbook, deltas: list[dict[str, Any]], *, project_id: int, client_id: str,
               cursor: int, now: float | None = None, replay: bool = False,
               on_applied: Callable[[], object] | None = None) -> tuple[int, dict[str, int]]:
    """Apply one page of pulled deltas and move the pull cursor, atomically (module contract).
    Returns (the new cursor, {applied, own, skipped}). The cursor stored when the transaction
    starts wins over `cursor` if it is further (another process pulled meanwhile), unless
    `replay` (`ace pull --from-start`). `on_applied` runs after the deltas are applied and before
    the cursor moves, inside the transaction (tests raise there to prove a crash at that point
    leaves nothing behind)."""
    now = time.time() if now is None else now
    page = _Page(store, playbook, project_id, client_id, now)
    with store.transaction(), playbook:  # the playbook's batch flushes inside the transaction
        stored = store.sync_state(project_id)
        cursor = last = cursor if replay else max(cursor, int(stored["pull_cursor"] if stored else 0))
        for delta in sorted((d for d in deltas if isinstance(d, dict)), key=lambda d: _seq(d)):
            seq = _seq(delta)
            if seq <= last:
                continue
            last = seq
            if delta.get("client_id") == client_id:
                page.counts["own"] += 1
                continue
            try:
                page.counts["applied" if page.apply(delta) else "skipped"] += 1
            except (PlaybookError, SectionError) as exc:  # one malformed or refused delta must not stop the sync
                page.counts["skipped"] += 1
                log.warning("sync", f"pulled delta seq {seq} ({_field(delta, 'op')} {_field(delta, 'lesson_id')}) "
                                    f"skipped: {exc}")
        if on_applied is not None:
            on_applied()
        if last != cursor:
            store.set_sync_state(project_id, {"pull_cursor": last}, now)
    return last, page.counts


def _seq(delta: dict[str, Any]) -> int:
    try:
        return int(delta.get("seq") or 0)
    except (TypeError, ValueError):
        return 0
