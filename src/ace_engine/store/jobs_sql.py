"""The learning tables behind the store interface: the job queue (`jobs`), per-task learning
statistics (`learning_runs`), and the history the heuristics mine (`file_edits`, `command_stats`,
`code_pattern_hits`).

The hook path uses only `enqueue_job` / `enqueue_leftovers`: a handful of indexed queries in one
write transaction. Everything else runs in the learning worker or the CLI.

Exactly-once learning rests on three rules:
- a job covers the events of one session+agent after the previous job's end (`tool_from`,
  `msg_from` exclusive, `…_to` inclusive), and its `dedup_key` is unique, so two hooks racing
  for the same events create one job;
- a worker claims a job by flipping it to `running` with a lease and bumping `attempts`;
- the job is marked done in the same transaction as the playbook changes it caused, and only if
  it is still the claim this worker made (`finish_job` checks pid and attempt): a worker killed
  mid-job leaves nothing behind but a `running` row, retried after the lease or at once by the
  next worker that takes the project lock.
"""

from __future__ import annotations

import json

from ._base import StoreBase
from .capture_sql import agent_clause

TYPE_CHECKING = False  # not `typing.TYPE_CHECKING`: the hooks must not import `typing` (~3 ms)
if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping, Sequence
    from typing import Any

    from ._base import Params
    from .interfaces import Job
    from .records import CoEdit, CommandRun, CommandStats, LearningRunRow, LearningTotals


class JobsSQL(StoreBase):
    # -- the hook path: enqueue -----------------------------------------------------------------

    def enqueue_job(self, session_id: str, agent_id: str | None, agent_type: str | None, trigger: str,
                    now: float, max_attempts: int = 3) -> int | None:
        """Queue a job for the events of `session_id`/`agent_id` captured since the previous job;
        None when there are none (or another process queued them first)."""
        with self.transaction():
            return self._enqueue(session_id, agent_id or "", agent_type, trigger, now, max_attempts)

    def enqueue_leftovers(self, session_id: str, trigger: str, now: float, max_attempts: int = 3) -> list[int]:
        """SessionEnd: one job per agent (main and subagents) with events no job covers yet."""
        ids = []
        with self.transaction():
            agents: dict[str, str | None] = {}
            for agent_id, agent_type in self.conn.execute(
                "SELECT DISTINCT agent_id, agent_type FROM tool_events WHERE session_id = ?"
                " UNION SELECT DISTINCT agent_id, NULL FROM messages WHERE session_id = ?",
                (session_id, session_id),
            ):
                agents[agent_id or ""] = agents.get(agent_id or "") or agent_type
            for agent_id, agent_type in agents.items():
                job = self._enqueue(session_id, agent_id, agent_type, trigger, now, max_attempts)
                if job:
                    ids.append(job)
        return ids

    def _enqueue(self, session_id: str, agent_id: str, agent_type: str | None, trigger: str, now: float,
                 max_attempts: int) -> int | None:
        conn = self.conn
        last = conn.execute(
            "SELECT tool_to, msg_to, window_to FROM jobs WHERE session_id = ? AND agent_id = ? AND kind = 'session'"
            " ORDER BY id DESC LIMIT 1", (session_id, agent_id),
        ).fetchone()
        tool_from, msg_from, window_from = last or (0, 0, 0.0)
        clause, args = agent_clause(agent_id)
        tools, tool_to = conn.execute(
            f"SELECT COUNT(*), MAX(id) FROM tool_events WHERE session_id = ? AND {clause} AND id > ?",
            (session_id, *args, tool_from),
        ).fetchone()
        messages, msg_to = conn.execute(
            f"SELECT COUNT(*), MAX(id) FROM messages WHERE session_id = ? AND {clause} AND id > ?",
            (session_id, *args, msg_from),
        ).fetchone()
        if not tools and not messages:
            return None
        row = conn.execute("SELECT project_id FROM sessions WHERE session_id = ?", (session_id,)).fetchone()
        cur = conn.execute(
            "INSERT OR IGNORE INTO jobs(kind, dedup_key, project_id, session_id, agent_id, agent_type, trigger,"
            " tool_from, tool_to, msg_from, msg_to, tool_events, messages, window_from, window_to, max_attempts,"
            " created_at) VALUES ('session',?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
            (f"s:{session_id}:{agent_id}:{tool_from}:{msg_from}", row[0] if row else None, session_id, agent_id,
             agent_type, trigger, tool_from, tool_to or tool_from, msg_from, msg_to or msg_from, tools, messages,
             window_from, now, max_attempts, now),
        )
        return cur.lastrowid if cur.rowcount else None

    # -- jobs that carry their own trajectory (transcripts, plugin payloads) -----------------------

    def job_by_key(self, dedup_key: str) -> Job | None:
        return self._job_row("SELECT * FROM jobs WHERE dedup_key = ?", (dedup_key,))

    def insert_done_job(self, kind: str, dedup_key: str, project_id: int | None, session_id: str | None,
                        agent_id: str, agent_type: str | None, status: str, result: Mapping[str, Any] | None,
                        reason: str | None, now: float) -> int | None:
        """Record a job learned directly (inside the caller's curation transaction); None when a job
        with this key exists already — the caller then rolls back: that task was learned."""
        cur = self.conn.execute(
            "INSERT OR IGNORE INTO jobs(kind, dedup_key, project_id, session_id, agent_id, agent_type, trigger,"
            " window_to, status, attempts, result, reason, created_at, started_at, finished_at)"
            " VALUES (?,?,?,?,?,?,'cli',?,?,1,?,?,?,?,?)",
            (kind, dedup_key, project_id, session_id, agent_id, agent_type, now, status,
             json.dumps(result) if result is not None else None, reason, now, now, now),
        )
        return cur.lastrowid if cur.rowcount else None

    # -- claiming and finishing --------------------------------------------------------------------

    def claim_job(self, project_id: int | None, pid: int, now: float, lease_seconds: float, *,
                  ignore_backoff: bool = False) -> Job | None:
        """Take the oldest runnable job (queued and due, or running with an expired lease) of the
        project; None when there is none. A lapsed job out of attempts is marked failed instead."""
        due = "1" if ignore_backoff else "not_before <= ?"
        due_args: tuple[float, ...] = () if ignore_backoff else (now,)
        with self.transaction():
            while True:
                job = self._job_row(
                    f"SELECT * FROM jobs WHERE project_id IS ? AND ((status = 'queued' AND {due})"
                    " OR (status = 'running' AND lease_until < ?)) ORDER BY id LIMIT 1",
                    (project_id,) + due_args + (now,),
                )
                if job is None:
                    return None
                if job["status"] == "running" and job["attempts"] >= job["max_attempts"]:
                    self.conn.execute(
                        "UPDATE jobs SET status = 'failed', finished_at = ?, lease_until = NULL,"
                        " last_error = ? WHERE id = ?",
                        (now, _lapsed(job), job["id"]),
                    )
                    continue
                if job["status"] == "running":
                    job["last_error"] = _lapsed(job)
                self.conn.execute(
                    "UPDATE jobs SET status = 'running', attempts = attempts + 1, lease_until = ?, worker_pid = ?,"
                    " started_at = ?, last_error = ? WHERE id = ?",
                    (now + lease_seconds, pid, now, job["last_error"], job["id"]),
                )
                job["status"], job["attempts"] = "running", job["attempts"] + 1
                job["lease_until"], job["worker_pid"], job["started_at"] = now + lease_seconds, pid, now
                return job

    def requeue_orphans(self, project_id: int | None, now: float) -> int:
        """Running jobs of a project whose lock we now hold belong to a dead worker: queue them
        again (or fail them when out of attempts). Returns how many were found."""
        with self.transaction():
            orphans = self._rows("SELECT * FROM jobs WHERE status = 'running' AND project_id IS ?", (project_id,))
            for job in orphans:
                done = job["attempts"] >= job["max_attempts"]
                self.conn.execute(
                    "UPDATE jobs SET status = ?, lease_until = NULL, not_before = ?, last_error = ?,"
                    " finished_at = ? WHERE id = ? AND status = 'running'",
                    ("failed" if done else "queued", now, _lapsed(job), now if done else None, job["id"]),
                )
        return len(orphans)

    def renew_lease(self, job: Job, until: float) -> bool:
        """Extend a claim still held (after a slow reflection); False when it was lost."""
        with self.transaction():
            return self.conn.execute(
                "UPDATE jobs SET lease_until = ? WHERE id = ? AND status = 'running' AND worker_pid IS ?"
                " AND attempts = ?",
                (until, job["id"], job["worker_pid"], job["attempts"]),
            ).rowcount == 1

    def finish_job(self, job: Job, status: str, result: Mapping[str, Any] | None, reason: str | None,
                   now: float) -> bool:
        """Mark a claimed job done / skipped, inside the caller's transaction. False when the claim
        was lost (lease expired and another worker took it): the caller must roll back."""
        return self.conn.execute(
            "UPDATE jobs SET status = ?, result = ?, reason = ?, finished_at = ?, lease_until = NULL"
            " WHERE id = ? AND status = 'running' AND worker_pid IS ? AND attempts = ?",
            (status, json.dumps(result) if result is not None else None, reason, now, job["id"],
             job["worker_pid"], job["attempts"]),
        ).rowcount == 1

    def fail_job(self, job: Job, error: str, now: float, backoff_seconds: float) -> str:
        """Record a failed attempt: queued again after an exponential backoff, or failed for good
        when out of attempts. Returns the new status."""
        out_of_attempts = job["attempts"] >= job["max_attempts"]
        status = "failed" if out_of_attempts else "queued"
        delay = backoff_seconds * (2 ** max(0, job["attempts"] - 1))
        with self.transaction():
            self.conn.execute(
                "UPDATE jobs SET status = ?, last_error = ?, not_before = ?, lease_until = NULL, finished_at = ?"
                " WHERE id = ? AND status = 'running' AND worker_pid IS ? AND attempts = ?",
                (status, error[:4000], now + delay, now if out_of_attempts else None, job["id"],
                 job["worker_pid"], job["attempts"]),
            )
        return status

    def retry_job(self, job_id: int, now: float) -> bool:
        """Queue a failed (or skipped) job again with fresh attempts."""
        with self.transaction():
            return self.conn.execute(
                "UPDATE jobs SET status = 'queued', attempts = 0, not_before = ?, lease_until = NULL,"
                " finished_at = NULL WHERE id = ? AND status IN ('failed', 'skipped') AND kind = 'session'",
                (now, job_id),
            ).rowcount == 1

    def runnable_jobs(self, project_id: int | None, now: float, *, ignore_backoff: bool = False) -> int:
        due = "1" if ignore_backoff else "not_before <= ?"
        due_args: tuple[float, ...] = () if ignore_backoff else (now,)
        return int(self.conn.execute(
            f"SELECT COUNT(*) FROM jobs WHERE project_id IS ? AND ((status = 'queued' AND {due})"
            " OR (status = 'running' AND lease_until < ?))", (project_id, *due_args, now),
        ).fetchone()[0])

    def next_due(self, project_id: int | None) -> float | None:
        """When the earliest queued job of the project becomes due (backoff), or None."""
        due: float | None = self.conn.execute(
            "SELECT MIN(not_before) FROM jobs WHERE project_id IS ? AND status = 'queued'", (project_id,)
        ).fetchone()[0]
        return due

    def get_job(self, job_id: int) -> Job | None:
        return self._job_row("SELECT * FROM jobs WHERE id = ?", (job_id,))

    def list_jobs(self, project_id: int | None = None, *, all_projects: bool = False,
                  statuses: Sequence[str] = (), session_id: str | None = None, limit: int = 50) -> list[Job]:
        clauses: list[str] = []
        params: list[int | str | None] = []
        if not all_projects:
            clauses.append("j.project_id IS ?")
            params.append(project_id)
        if statuses:
            clauses.append(f"j.status IN ({','.join('?' * len(statuses))})")
            params.extend(statuses)
        if session_id:
            clauses.append("j.session_id = ?")
            params.append(session_id)
        where = ("WHERE " + " AND ".join(clauses)) if clauses else ""
        rows = self._rows(
            f"SELECT j.*, p.name AS project FROM jobs j LEFT JOIN projects p ON p.id = j.project_id {where}"
            f" ORDER BY j.id DESC LIMIT ?", (*params, limit),
        )
        for row in rows:
            _decode_job(row)
        return rows

    def job_counts(self, project_id: int | None = None, *, all_projects: bool = False) -> dict[str, int]:
        where, params = ("", ()) if all_projects else ("WHERE project_id IS ?", (project_id,))
        return dict(self.conn.execute(f"SELECT status, COUNT(*) FROM jobs {where} GROUP BY status", params))

    # -- learning statistics ---------------------------------------------------------------------------

    def record_learning_run(self, run: Mapping[str, Any]) -> int:
        columns = ("job_id", "project_id", "session_id", "agent_id", "source", "reflector", "task", "outcome",
                   "learned", "gate_reason", "steps", "candidates", "created", "updated", "merged", "pruned",
                   "quarantined", "rejected", "helpful", "harmful", "average_confidence", "duration_ms",
                   "detail", "created_at")
        values = [json.dumps(run.get(c), ensure_ascii=False) if c == "detail" and run.get(c) is not None
                  else run.get(c, 0 if c in ("steps", "candidates", "created", "updated", "merged", "pruned",
                                             "quarantined", "rejected", "helpful", "harmful") else None)
                  for c in columns]
        values[columns.index("learned")] = 1 if run.get("learned") else 0
        return self._inserted(self.conn.execute(
            f"INSERT INTO learning_runs({', '.join(columns)}) VALUES ({', '.join('?' * len(columns))})", values))

    def learning_runs(self, project_id: int | None = None, *, all_projects: bool = False,
                      limit: int = 20) -> list[LearningRunRow]:
        where, params = ("", ()) if all_projects else ("WHERE r.project_id IS ?", (project_id,))
        rows = self._rows(
            f"SELECT r.*, p.name AS project FROM learning_runs r LEFT JOIN projects p ON p.id = r.project_id"
            f" {where} ORDER BY r.id DESC LIMIT ?", (*params, limit),
        )
        for row in rows:
            row["learned"] = bool(row["learned"])
            row["detail"] = json.loads(row["detail"]) if row["detail"] else None
        return rows

    def learning_totals(self, project_id: int | None = None, *, all_projects: bool = False) -> LearningTotals:
        where, params = ("", ()) if all_projects else ("WHERE project_id IS ?", (project_id,))
        row = self._rows(
            "SELECT COUNT(*) AS tasks, COALESCE(SUM(learned), 0) AS learned,"
            " COALESCE(SUM(created), 0) AS created, COALESCE(SUM(updated), 0) AS updated,"
            " COALESCE(SUM(merged), 0) AS merged, COALESCE(SUM(pruned), 0) AS pruned,"
            " COALESCE(SUM(quarantined), 0) AS quarantined, COALESCE(SUM(rejected), 0) AS rejected,"
            " COALESCE(SUM(helpful), 0) AS helpful, COALESCE(SUM(harmful), 0) AS harmful,"
            " AVG(average_confidence) AS average_confidence, AVG(duration_ms) AS average_ms"
            f" FROM learning_runs {where}", params,
        )[0]
        return row

    # -- history mined by the heuristics ---------------------------------------------------------------

    def record_file_edits(self, project_id: int | None, session_id: str, paths: Iterable[str], now: float) -> None:
        if project_id is None or not session_id:
            return
        self.conn.executemany(
            "INSERT OR IGNORE INTO file_edits(project_id, session_id, path, created_at) VALUES (?,?,?,?)",
            [(project_id, session_id, p, now) for p in paths],
        )

    def co_edit_counts(self, project_id: int | None, paths: Sequence[str],
                       exclude_session: str | None) -> list[CoEdit]:
        """For pairs of `paths`: in how many other sessions both were edited."""
        if project_id is None or len(paths) < 2:
            return []
        paths = paths[:50]
        marks = ",".join("?" * len(paths))
        return self._rows(
            "SELECT a.path AS a, b.path AS b, COUNT(*) AS sessions FROM file_edits a JOIN file_edits b"
            " ON b.project_id = a.project_id AND b.session_id = a.session_id AND a.path < b.path"
            f" WHERE a.project_id = ? AND a.path IN ({marks}) AND b.path IN ({marks}) AND a.session_id IS NOT ?"
            " GROUP BY a.path, b.path",
            (project_id, *paths, *paths, exclude_session),
        )

    def record_command_runs(self, project_id: int | None, session_id: str | None, runs: Iterable[CommandRun],
                            now: float) -> None:
        """`runs`: [{command, kind, runs, failures, error}] aggregated for one task."""
        if project_id is None:
            return
        for run in runs:
            failed = run["failures"] > 0
            self.conn.execute(
                "INSERT INTO command_stats(project_id, command, kind, runs, failures, sessions_failed, last_error,"
                " last_session, last_ok_at, last_fail_at) VALUES (?,?,?,?,?,?,?,?,?,?)"
                " ON CONFLICT(project_id, command) DO UPDATE SET runs = runs + excluded.runs,"
                " failures = failures + excluded.failures,"
                " sessions_failed = sessions_failed + (CASE WHEN excluded.failures > 0 AND"
                "   last_session IS NOT excluded.last_session THEN 1 ELSE 0 END),"
                " last_error = COALESCE(excluded.last_error, last_error),"
                " last_session = CASE WHEN excluded.failures > 0 THEN excluded.last_session ELSE last_session END,"
                " last_ok_at = COALESCE(excluded.last_ok_at, last_ok_at),"
                " last_fail_at = COALESCE(excluded.last_fail_at, last_fail_at)",
                (project_id, run["command"], run.get("kind"), run["runs"], run["failures"], 1 if failed else 0,
                 run.get("error") if failed else None, session_id if failed else None,
                 now if run["runs"] > run["failures"] else None, now if failed else None),
            )

    def command_history(self, project_id: int | None, commands: Sequence[str]) -> dict[str, CommandStats]:
        if project_id is None or not commands:
            return {}
        commands = commands[:100]
        rows = self._rows(
            f"SELECT * FROM command_stats WHERE project_id = ? AND command IN ({','.join('?' * len(commands))})",
            (project_id, *commands),
        )
        return {r["command"]: r for r in rows}

    # -- code patterns -------------------------------------------------------------------------------

    def record_pattern_hit(self, project_id: int | None, pattern_id: str, session_id: str, file: str | None,
                           now: float) -> None:
        self.conn.execute(
            "INSERT OR IGNORE INTO code_pattern_hits(project_id, pattern_id, session_id, file, created_at)"
            " VALUES (?,?,?,?,?)", (project_id or 0, pattern_id, session_id, file, now))

    def pattern_sessions(self, project_id: int | None, pattern_id: str) -> int:
        """In how many sessions the agent wrote this pattern into the project's code."""
        return int(self.conn.execute(
            "SELECT COUNT(*) FROM code_pattern_hits WHERE project_id = ? AND pattern_id = ?",
            (project_id or 0, pattern_id)).fetchone()[0])

    # -- helpers ---------------------------------------------------------------------------------------

    def _job_row(self, sql: str, params: Params = ()) -> Job | None:
        row = self._one(sql, params)
        return None if row is None else _decode_job(row)


def _decode_job(row: Any) -> Job:  # a `jobs` row (a dict), its JSON columns decoded
    for key in ("result", "payload"):
        if isinstance(row.get(key), str):
            try:
                row[key] = json.loads(row[key])
            except ValueError:
                pass
    return row


def _lapsed(job: Job) -> str:
    earlier = (job.get("last_error") or "").split("\n", 1)[0][:300]
    return (f"worker {job.get('worker_pid')} stopped during attempt {job['attempts']} (lease expired or process gone)"
            + (f"; earlier: {earlier}" if earlier and not earlier.startswith("worker ") else ""))
