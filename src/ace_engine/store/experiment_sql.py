"""The holdout's tables (`experiments`, `experiment_arms`, migration 11) behind the store interface.

Contract: at most one experiment runs (`stopped_at` NULL): `start_experiment` stops a running one
first, in the same transaction; `ensure_experiment` (the hooks') returns the running one or starts
it. A session's arm is written once (`set_session_arm` keeps the first row: the arm never changes,
whichever hook asks again) and read back by primary key. `arm_sessions`
is the report's read: every session given an arm, with its start and project, one indexed SELECT.

Cost: the hooks' reads are primary-key lookups (`session_arm`) and one small-table scan
(`running_experiment`: a handful of rows); stdlib and `_base` only.
"""

from __future__ import annotations

from ._base import StoreBase

TYPE_CHECKING = False  # not `typing.TYPE_CHECKING`: the hooks must not import `typing` (~3 ms)
if TYPE_CHECKING:
    from .records import ArmRow, ArmSession, ExperimentRow

_EXPERIMENT = "id, share, started_at, stopped_at, announced_at"


class ExperimentSQL(StoreBase):
    def start_experiment(self, share: float, now: float, *, announced: bool = False) -> int:
        with self.transaction():
            self.conn.execute("UPDATE experiments SET stopped_at=? WHERE stopped_at IS NULL", (now,))
            cur = self.conn.execute("INSERT INTO experiments(share, started_at, announced_at) VALUES (?, ?, ?)",
                                    (float(share), now, now if announced else None))
            return self._inserted(cur)

    def ensure_experiment(self, share: float, now: float) -> ExperimentRow:
        """The running experiment, or one started now with `share` (a hook's path: two hooks racing
        under the write lock start one, not two)."""
        with self.transaction():
            row = self.running_experiment()
            if row is None:
                self.conn.execute("INSERT INTO experiments(share, started_at) VALUES (?, ?)", (float(share), now))
                row = self.running_experiment()
        assert row is not None  # just found, or just written
        return row

    def stop_experiment(self, now: float) -> ExperimentRow | None:
        with self.transaction():
            row = self.running_experiment()
            if row is not None:
                self.conn.execute("UPDATE experiments SET stopped_at=? WHERE id=?", (now, row["id"]))
                row["stopped_at"] = now
            return row

    def running_experiment(self) -> ExperimentRow | None:
        return self._one(f"SELECT {_EXPERIMENT} FROM experiments WHERE stopped_at IS NULL ORDER BY id DESC LIMIT 1")

    def experiments(self) -> list[ExperimentRow]:
        return self._rows(f"SELECT {_EXPERIMENT} FROM experiments ORDER BY id")

    def announce_experiment(self, experiment_id: int, now: float) -> bool:
        """Mark the experiment announced; True only for the call that did (the user is told once)."""
        with self.transaction():
            cur = self.conn.execute("UPDATE experiments SET announced_at=? WHERE id=? AND announced_at IS NULL",
                                    (now, experiment_id))
            return cur.rowcount == 1

    def session_arm(self, session_id: str) -> ArmRow | None:
        return self._one("SELECT session_id, experiment_id, project_id, arm, assigned_at, hook FROM experiment_arms"
                         " WHERE session_id=?", (session_id,))

    def set_session_arm(self, session_id: str, experiment_id: int, project_id: int | None, arm: str, now: float,
                        hook: str | None) -> ArmRow:
        """Record `arm` for the session unless it has one; returns the arm it has (the first one)."""
        with self.transaction():
            self.conn.execute("INSERT OR IGNORE INTO experiment_arms(session_id, experiment_id, project_id, arm,"
                              " assigned_at, hook) VALUES (?, ?, ?, ?, ?, ?)",
                              (session_id, experiment_id, project_id, arm, now, hook))
            row = self.session_arm(session_id)
        assert row is not None  # just written, or already there
        return row

    def arm_sessions(self, project_id: int | None = None) -> list[ArmSession]:
        """Sessions given an arm (of one project, or all), oldest first, with their start and project key."""
        sql = ("SELECT a.session_id, a.experiment_id, a.arm, a.assigned_at, a.hook, s.started_at, s.project_id,"
               " p.key AS project, e.started_at AS experiment_started_at"
               " FROM experiment_arms a JOIN sessions s ON s.session_id = a.session_id"
               " JOIN experiments e ON e.id = a.experiment_id LEFT JOIN projects p ON p.id = s.project_id")
        params: tuple[int, ...] = ()
        if project_id is not None:
            sql += " WHERE s.project_id = ?"
            params = (project_id,)
        return self._rows(sql + " ORDER BY s.started_at", params)
