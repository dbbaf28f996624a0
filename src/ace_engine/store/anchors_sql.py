"""What lessons rest on (`lesson_anchors`, `anchor_files`, migration 12) behind the store interface.

Contract: `put_anchors` replaces a lesson's anchors with the ones given (its content was written:
what it names is found again) and registers each anchor's file in `anchor_files` with the stamp it
has now; `anchor_stamps` is the SessionStart check's first read — one row per anchor file of the
project, no join; `anchors_in` the anchors of the files whose stamp moved, only of lessons still
active or candidate; `set_anchor_states` and `set_file_stamps` write what a check found.
`command_anchors` is the contradiction check's read (commands a lesson tells to run); `rechecks` an
injected lesson's caveats; `to_recheck` what the model is asked to confirm.

Cost: the hook's reads are one primary-key range scan of `anchor_files` (a row per file, not per
lesson) and, only for files that changed, one indexed read of their anchors; stdlib and `_base` only.
"""

from __future__ import annotations

from ._base import StoreBase

TYPE_CHECKING = False  # not `typing.TYPE_CHECKING`: the hooks must not import `typing` (~3 ms)
if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping, Sequence
    from typing import Any

    from .records import AnchorRow

_ANCHOR = "a.bullet_id, a.project_id, a.kind, a.name, a.file, a.value, a.state, a.detail, a.created_at, a.checked_at"
LIVE = ("active", "candidate")


class AnchorsSQL(StoreBase):
    def put_anchors(self, bullet_id: str, project_id: int | None, anchors: Iterable[Mapping[str, Any]],
                    stamps: Mapping[str, str | None], now: float) -> int:
        """Replace `bullet_id`'s anchors; `stamps` is {file: stamp now} of the files they live in."""
        rows = [(bullet_id, project_id, str(a["kind"]), str(a["name"]), str(a.get("file") or ""), a.get("value"),
                 str(a.get("state") or "ok"), a.get("detail"), now, now) for a in anchors]
        with self.transaction():
            self.conn.execute("DELETE FROM lesson_anchors WHERE bullet_id=?", (bullet_id,))
            self.conn.executemany(
                "INSERT OR REPLACE INTO lesson_anchors(bullet_id, project_id, kind, name, file, value, state, detail,"
                " created_at, checked_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", rows)
            if project_id is not None:
                self.conn.executemany(
                    "INSERT INTO anchor_files(project_id, file, stamp, checked_at) VALUES (?, ?, ?, ?)"
                    " ON CONFLICT(project_id, file) DO NOTHING",
                    [(project_id, f, s, now) for f, s in stamps.items() if f])
        return len(rows)

    def anchors_of(self, bullet_id: str) -> list[AnchorRow]:
        return self._rows(f"SELECT {_ANCHOR} FROM lesson_anchors a WHERE a.bullet_id=? ORDER BY a.kind, a.name",
                          (bullet_id,))

    def anchors_of_many(self, bullet_ids: Sequence[str]) -> list[AnchorRow]:
        out: list[AnchorRow] = []
        for start in range(0, len(bullet_ids), 500):
            chunk = list(bullet_ids[start:start + 500])
            out += self._rows(f"SELECT {_ANCHOR} FROM lesson_anchors a WHERE a.bullet_id IN "
                              f"({','.join('?' * len(chunk))})", chunk)
        return out

    def anchor_stamps(self, project_id: int) -> dict[str, str | None]:
        """{file: stamp at the last check} of the project's anchor files."""
        return {r[0]: r[1] for r in self.conn.execute("SELECT file, stamp FROM anchor_files WHERE project_id=?",
                                                      (project_id,))}

    def anchors_in(self, project_id: int, files: Sequence[str], values_only: Sequence[str] = ()) -> list[AnchorRow]:
        """The anchors living in `files` of lessons still active or candidate; for the files in
        `values_only` (still there) without their `file` anchors, which only say the file exists."""
        out: list[AnchorRow] = []
        present = set(values_only)
        groups = (([f for f in files if f not in present], False), ([f for f in files if f in present], True))
        for group, skip in groups:
            for start in range(0, len(group), 400):
                chunk = group[start:start + 400]
                out += self._rows(
                    f"SELECT {_ANCHOR}, b.status AS status FROM lesson_anchors a JOIN bullets b ON b.id = a.bullet_id"
                    f" WHERE a.project_id=? AND a.file IN ({','.join('?' * len(chunk))}) AND b.status IN (?, ?)"
                    + (" AND a.kind != 'file'" if skip else ""), (project_id, *chunk, *LIVE))
        return out

    def live_files(self, project_id: int, files: Sequence[str]) -> set[str]:
        """Those of `files` some live lesson's anchor lives in (one indexed probe each, stopping at the first)."""
        return {f for f in files if self.conn.execute(
            "SELECT 1 FROM lesson_anchors a JOIN bullets b ON b.id = a.bullet_id WHERE a.project_id=? AND a.file=?"
            " AND b.status IN (?, ?) LIMIT 1", (project_id, f, *LIVE)).fetchone()}

    def flagged(self, bullet_ids: Sequence[str]) -> dict[str, list[tuple[str, str]]]:
        """{bullet id: [(state, what the check found)]} of the given lessons' anchors found changed or
        gone: an injected lesson's caveat, or (gone, not archived yet) a reason not to inject it. A
        primary-key prefix read per chunk, for the few lessons a block shows."""
        out: dict[str, list[tuple[str, str]]] = {}
        for start in range(0, len(bullet_ids), 500):
            chunk = list(bullet_ids[start:start + 500])
            for bullet_id, state, detail in self.conn.execute(
                    f"SELECT bullet_id, state, detail FROM lesson_anchors WHERE bullet_id IN"
                    f" ({','.join('?' * len(chunk))}) AND state IN ('changed', 'gone') ORDER BY bullet_id, kind, name",
                    chunk):
                out.setdefault(bullet_id, []).append((state, detail or ""))
        return out

    def rechecks(self, bullet_ids: Sequence[str]) -> dict[str, list[str]]:
        """{bullet id: what changed} of the given lessons with an anchor in state `changed`."""
        return {b: [d for s, d in found if s == "changed"] for b, found in self.flagged(bullet_ids).items()
                if any(s == "changed" for s, _ in found)}

    def to_recheck(self, project_id: int, limit: int = 20) -> list[AnchorRow]:
        """The anchors in state `changed` or `recheck` of the project's live lessons, newest check first:
        what a confirmation (the model's batch, `learning/recheck.py`) looks at."""
        return self._rows(f"SELECT {_ANCHOR}, b.status AS status FROM lesson_anchors a JOIN bullets b"
                          " ON b.id = a.bullet_id WHERE a.project_id=? AND a.state IN ('changed', 'recheck')"
                          " AND b.status IN (?, ?) ORDER BY a.checked_at DESC LIMIT ?", (project_id, *LIVE, limit))

    def unsettled_anchors(self, project_id: int, states: Sequence[str] = ("gone",),
                          limit: int = 200) -> list[AnchorRow]:
        """Anchors in `states` (gone; changed too when those are withheld) of the project's live
        lessons, files not commands, at most `limit` (more than a check acts on): what a check that ran
        out of time left to act on. A scan of the project's anchors, run only then."""
        return self._rows(f"SELECT {_ANCHOR}, b.status AS status FROM lesson_anchors a JOIN bullets b"
                          f" ON b.id = a.bullet_id WHERE a.project_id=? AND a.state IN ({','.join('?' * len(states))})"
                          " AND a.kind != 'command' AND b.status IN (?, ?) ORDER BY a.state = 'gone' DESC LIMIT ?",
                          (project_id, *states, *LIVE, limit))

    def command_anchors(self, project_id: int) -> list[AnchorRow]:
        """The commands the project's live lessons tell to run."""
        return self._rows(f"SELECT {_ANCHOR}, b.status AS status FROM lesson_anchors a JOIN bullets b"
                          " ON b.id = a.bullet_id WHERE a.project_id=? AND a.kind='command' AND a.file=''"
                          " AND b.status IN (?, ?)", (project_id, *LIVE))

    def set_anchor_states(self, rows: Iterable[Mapping[str, Any]], now: float) -> None:
        """Write each anchor's `state`, `detail` and (given) `value` as a check found them."""
        with self.transaction():
            for r in rows:
                self.conn.execute(
                    "UPDATE lesson_anchors SET state=?, detail=?, value=COALESCE(?, value), checked_at=?"
                    " WHERE bullet_id=? AND kind=? AND name=? AND file=?",
                    (r["state"], r.get("detail"), r.get("new_value"), now, r["bullet_id"], r["kind"], r["name"],
                     r["file"]))

    def set_file_stamps(self, project_id: int, stamps: Mapping[str, str | None], now: float,
                        forget: Sequence[str] = ()) -> None:
        """Record the stamps the check saw; `forget`: files no live anchor lives in any more."""
        with self.transaction():
            self.conn.executemany("UPDATE anchor_files SET stamp=?, checked_at=? WHERE project_id=? AND file=?",
                                  [(s, now, project_id, f) for f, s in stamps.items()])
            self.conn.executemany("DELETE FROM anchor_files WHERE project_id=? AND file=?",
                                  [(project_id, f) for f in forget])
