"""The team sync's tables behind the store interface: `sync_state`, `team_counts`, and the change
log read as an outbox (schema migration 7; the protocol is docs/team-server.md).

Contract: `sync_state(project_id)` is the project's row (`remote`, `push_cursor`, `pull_cursor`,
`last_error`, `pushed_at`, `pulled_at`, `updated_at`) or None; `set_sync_state` upserts the fields
given and nothing else.
`team_counts` are other clients' own absolute counts of a lesson, as this machine accepted them
(the inbox bounds their growth); `team_marks_since` sums the helpful / harmful marks pulls added
to a lesson since a time (the TAG changes of source `team`), for the inbox's daily bound.
`changes_after` is the outbox: this project's project-scope changes after a change id that did not
come from the team (source `team`: applied from a pull, never pushed back), oldest first, each
with its bullet's current state. Writes join the caller's `transaction()` (the inbox applies a
page of deltas and moves the pull cursor in one).

Cost: primary-key lookups and one indexed range scan of `bullet_changes` per outbox page.
"""

from __future__ import annotations

import json

from ._base import StoreBase

TYPE_CHECKING = False  # not `typing.TYPE_CHECKING`: the store's modules stay cheap to import
if TYPE_CHECKING:
    from collections.abc import Sequence

    from .records import OutboxChange, SyncFields, SyncState

SYNC_FIELDS = ("remote", "push_cursor", "pull_cursor", "last_error", "pushed_at", "pulled_at")
TEAM_SOURCE = "team"  # `bullet_changes.source` of what a pull applied

_OUTBOX = ("FROM bullet_changes c JOIN bullets b ON b.id = c.bullet_id"
           " WHERE b.project_id = ? AND c.id > ? AND COALESCE(c.source, '') != ?")


class SyncSQL(StoreBase):
    # -- sync_state ----------------------------------------------------------------------------------

    def sync_state(self, project_id: int) -> SyncState | None:
        row: SyncState | None = self._one(
            "SELECT project_id, remote, push_cursor, pull_cursor, last_error, pushed_at, pulled_at, updated_at"
            " FROM sync_state"
            " WHERE project_id = ?", (project_id,))
        return row

    def set_sync_state(self, project_id: int, fields: SyncFields, now: float) -> None:
        """Upsert the given fields (of `SYNC_FIELDS`) of the project's row; the others keep their value
        (a new row starts with both cursors at 0)."""
        unknown = [k for k in fields if k not in SYNC_FIELDS]
        if unknown:
            raise self._error(f"unknown sync_state field {unknown[0]!r}")
        names = list(fields)
        sets = ", ".join(f"{n}=excluded.{n}" for n in [*names, "updated_at"])
        with self.transaction():
            self.conn.execute(
                f"INSERT INTO sync_state(project_id, {', '.join([*names, 'updated_at'])})"
                f" VALUES ({', '.join('?' * (len(names) + 2))})"
                f" ON CONFLICT(project_id) DO UPDATE SET {sets}",
                (project_id, *fields.values(), now))

    # -- team_counts ---------------------------------------------------------------------------------

    def team_counts(self, bullet_id: str) -> dict[str, tuple[int, int]]:
        """{client_id: (helpful, harmful)} of the other clients, for one lesson."""
        return {r[0]: (int(r[1]), int(r[2])) for r in self.conn.execute(
            "SELECT client_id, helpful, harmful FROM team_counts WHERE bullet_id = ?", (bullet_id,))}

    def team_count_sums(self, bullet_ids: Sequence[str]) -> dict[str, tuple[int, int]]:
        """{bullet_id: (Σ helpful, Σ harmful)} over the other clients (lessons without any: absent)."""
        sums: dict[str, tuple[int, int]] = {}
        ids = list(dict.fromkeys(bullet_ids))
        for start in range(0, len(ids), 500):
            chunk = ids[start:start + 500]
            for bid, helpful, harmful in self.conn.execute(
                f"SELECT bullet_id, SUM(helpful), SUM(harmful) FROM team_counts"
                f" WHERE bullet_id IN ({','.join('?' * len(chunk))}) GROUP BY bullet_id", chunk):
                sums[bid] = (int(helpful), int(harmful))
        return sums

    def team_marks_since(self, bullet_id: str, since: float) -> tuple[int, int]:
        """(helpful, harmful) marks that pulls (source `team`) added to the lesson since `since`."""
        row = self.conn.execute(
            "SELECT SUM(CASE WHEN json_extract(detail, '$.tag') = 'helpful' THEN json_extract(detail, '$.count') END),"
            " SUM(CASE WHEN json_extract(detail, '$.tag') = 'harmful' THEN json_extract(detail, '$.count') END)"
            " FROM bullet_changes WHERE bullet_id = ? AND op = 'TAG' AND source = ? AND created_at >= ?"
            " AND json_valid(detail)", (bullet_id, TEAM_SOURCE, since)).fetchone()
        return int(row[0] or 0), int(row[1] or 0)

    def set_team_count(self, bullet_id: str, client_id: str, helpful: int, harmful: int) -> None:
        with self.transaction():
            self.conn.execute(
                "INSERT INTO team_counts(bullet_id, client_id, helpful, harmful) VALUES (?,?,?,?)"
                " ON CONFLICT(bullet_id, client_id) DO UPDATE SET helpful=excluded.helpful, harmful=excluded.harmful",
                (bullet_id, client_id, int(helpful), int(harmful)))

    # -- the outbox ----------------------------------------------------------------------------------

    def changes_after(self, project_id: int, after_change_id: int, limit: int = 500) -> list[OutboxChange]:
        """The project's project-scope changes after `after_change_id` not made by a pull, oldest
        first: the change (`id`, `bullet_id`, `op`, `detail` decoded, `reason`, `source`,
        `created_at`) and its bullet now (`status`, `origin`, `content`, `section`, `domains` a
        list, `helpful`, `harmful`, `helpful_explicit`, `harmful_explicit`)."""
        rows = self._rows(
            "SELECT c.id, c.bullet_id, c.op, c.detail, c.reason, c.source, c.created_at, b.status, b.origin,"
            " b.content, b.section, b.domains, b.helpful, b.harmful, b.helpful_explicit, b.harmful_explicit"
            f" {_OUTBOX} ORDER BY c.id LIMIT ?", (project_id, after_change_id, TEAM_SOURCE, limit))
        for row in rows:
            try:
                row["detail"] = json.loads(row["detail"]) if row["detail"] else None
            except ValueError:
                row["detail"] = None
            row["domains"] = row["domains"].split() if row["domains"] else []
        return rows

    def outbox_size(self, project_id: int, after_change_id: int) -> int:
        """How many changes `changes_after` would return without a limit."""
        return int(self.conn.execute(f"SELECT COUNT(*) {_OUTBOX}",
                                     (project_id, after_change_id, TEAM_SOURCE)).fetchone()[0])
