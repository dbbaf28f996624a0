"""The learning worker: a detached process per project that runs queued jobs until none is left.

Started by a hook (`queue.start_worker`) holding the project's lock, or run in the foreground by
`ace learn`. On start it requeues the project's `running` jobs — whoever ran them is dead, since
we hold the lock — then claims jobs one by one (lease, attempt count), learns each
(`pipeline.learn_job`), and on an error records the attempt: retried after an exponential
backoff, failed for good after `learning.max_attempts`. After each job of a captured session it
rewrites that session's continuity summary (`summarize_session`; a failure there is only logged).
A job due within `learning.linger_seconds` is waited for; otherwise the worker releases the lock,
looks at the queue once more (a hook that saw the lock held did not start anyone), and exits.

Before any job it re-screens the stored lessons if they were screened under an older safety
policy (`playbook.rescreen.ensure_screened`: one query when they were not), so lessons an older
version let through are quarantined before learning builds on them or a hook could show them.

Waiting for a worker to be gone (`wait_for_lock`, `wait_idle`) is here too, the one way the CLI,
the demo and the tests do it: the worker holds its project's lock for as long as it runs, so
"the lock is free" is "no worker runs". Cost: polling a flock every 50 ms while one does.
"""

from __future__ import annotations

import os
import time
from typing import TYPE_CHECKING, Any

from ..core import config as config_mod
from ..core import log, paths
from ..core.background import ProcessLock
from ..learning import pipeline
from ..store.detached import run_detached
from ..store.sqlite import SQLiteStore
from .queue import lock_path

if TYPE_CHECKING:
    from collections.abc import Callable

    from ..core._types import JobRow
    from ..core.config import Config
    from ..learning.reflector import Reflector
    from ..store.interfaces import Store

POLL_SECONDS = 0.05


def wait_for_lock(project_key: str, timeout: float) -> ProcessLock | None:
    """Take the project's worker lock, waiting up to `timeout` seconds for a running worker to
    exit; the held lock (the caller releases it), or None when the worker is still running."""
    lock = ProcessLock(lock_path(project_key))
    deadline = time.monotonic() + max(0.0, timeout)
    while not lock.acquire():
        if time.monotonic() >= deadline:
            return None
        time.sleep(POLL_SECONDS)
    return lock


def wait_idle(project_key: str | None = None, timeout: float = 60.0) -> bool:
    """Wait until no learning worker runs for the project (None: for any project — every
    `learn-*.lock` that `queue.lock_path` names); True when none does, False when one still ran
    after `timeout` seconds."""
    if project_key is not None:
        lock = wait_for_lock(project_key, timeout)
        if lock is None:
            return False
        lock.release()
        return True
    deadline = time.monotonic() + max(0.0, timeout)
    state = paths.state_dir()
    while True:
        names = [n for n in os.listdir(state) if n.startswith("learn-") and n.endswith(".lock")] \
            if os.path.isdir(state) else []
        if not any(ProcessLock(os.path.join(state, n)).held_elsewhere() for n in names):
            return True
        if time.monotonic() >= deadline:
            return False
        time.sleep(POLL_SECONDS)


def run_one(store: Store, job: JobRow, cfg: Config, *, reflector: Reflector | None = None) -> dict[str, Any]:
    """Learn one claimed job; on failure record the attempt. Returns {job, status, summary|error}."""
    try:
        summary = pipeline.learn_job(store, job, reflector=reflector)
    except pipeline.ClaimLost as exc:
        log.warning("learning", str(exc))
        return {"job": job["id"], "status": "lost", "error": str(exc)}
    except Exception as exc:  # noqa: BLE001 — recorded on the job, retried with backoff
        import traceback  # only on failure: it costs a detached worker 20 ms to import

        error = f"{type(exc).__name__}: {exc}\n" + "".join(traceback.format_exc().splitlines(True)[-6:])
        status = store.fail_job(job, error, time.time(), cfg["learning.backoff_seconds"])
        log.error("learning",
                  f"job {job['id']} attempt {job['attempts']} failed ({status}): {type(exc).__name__}: {exc}")
        summarize_session(store, job, cfg)
        return {"job": job["id"], "status": status, "error": error}
    final = store.get_job(job["id"])
    summarize_session(store, job, cfg)
    return {"job": job["id"], "status": final["status"] if final else "done", "summary": summary}


def summarize_session(store: Store, job: JobRow, cfg: Config) -> None:
    """After a job of a captured session, (re)write the session's continuity summary
    (`continuity/update.py`) — whether learning succeeded or not: what the session did and left
    open doesn't depend on what was learned from it. A failure is logged, never raised: the
    summary can't fail the job. The narrative (an LLM call, when configured) only after the
    main agent's jobs."""
    session_id = job.get("session_id")
    if job.get("kind", "session") != "session" or not session_id:
        return
    try:
        from ..continuity import update

        update.update_session(store, session_id, cfg, time.time(), with_narrative=not job.get("agent_id"))
    except Exception as exc:  # noqa: BLE001 — continuity must never cost a learning job
        log.error("continuity", f"summary of session {session_id} failed: {type(exc).__name__}: {exc}")


def drain(store: Store, project_id: int | None, lock: ProcessLock, cfg: Config, *, linger: float | None = None,
          ignore_backoff: bool = False, on_job: Callable[[dict[str, Any]], object] | None = None,
          reflector: Reflector | None = None) -> list[dict[str, Any]]:
    """Run the project's jobs until the queue is empty (the caller holds `lock`)."""
    pid = os.getpid()
    lease = cfg["learning.lease_seconds"]
    linger = cfg["learning.linger_seconds"] if linger is None else linger
    store.requeue_orphans(project_id, time.time())
    done = []
    while True:
        now = time.time()
        job = store.claim_job(project_id, pid, now, lease, ignore_backoff=ignore_backoff)
        if job is not None:
            result = run_one(store, job, cfg, reflector=reflector)
            done.append(result)
            if on_job:
                on_job(result)
            continue
        due = store.next_due(project_id)
        if due is not None and due - now <= linger:
            time.sleep(max(0.05, min(due - now, linger)))
            continue
        # Release, then look once more: a hook that found the lock held started no worker.
        lock.release()
        if store.runnable_jobs(project_id, time.time(), ignore_backoff=ignore_backoff) and lock.acquire():
            store.requeue_orphans(project_id, time.time())
            continue
        return done


def _replay_spool(store: SQLiteStore) -> None:
    """Records the hooks spooled are written first: among them may be the record of a call a hook
    dropped (`redact.sanitize.DROPPED`), which says the session's evidence is incomplete — learning
    the session without it would trust what came after (it fails closed)."""
    from ..store import spool

    try:
        if spool.pending_files():
            spool.replay(store)
    except Exception as exc:  # noqa: BLE001 — kept in the spool; the next SessionStart retries
        log.error("spool", f"replay before learning failed: {type(exc).__name__}: {exc}")


def _rescreen_first(store: Store) -> None:
    """Lessons stored under an older safety policy are re-screened before any job; a failure is
    logged and learning goes on (the hooks inject nothing until a re-screen succeeds)."""
    from ..playbook.rescreen import ensure_screened

    try:
        ensure_screened(store)
    except Exception as exc:  # noqa: BLE001 — learning new lessons screens them anyway
        log.error("rescreen", f"re-screen before learning failed: {type(exc).__name__}: {exc}")


def main(project_key: str, lock_fd: int | None = None) -> None:
    """Entry point of the detached worker (see `queue.start_worker`)."""
    lock = ProcessLock(lock_path(project_key))

    def work(store: SQLiteStore) -> None:
        project_id = store.project_id(project_key)
        row = store.project_row(project_id) if project_id is not None else None
        cfg = config_mod.load(row["root"] if row else None)
        _replay_spool(store)
        _rescreen_first(store)
        results = drain(store, project_id, lock, cfg)
        if results:
            log.write("INFO", "learning", f"worker {os.getpid()} for {project_key}: " + ", ".join(
                f"job {r['job']} {r['status']}" for r in results))
            # With `retrieval.write_time`, the lessons just learned get the full model's vectors here, off
            # the hook path; without the `semantic` extra this is one query and nothing else.
            # Never raises. A store from before fills in over a few runs (`ace embed` does all at once).
            if cfg["retrieval.write_time"]:
                from ..embed import write_time

                write_time.refresh(store, limit=write_time.WORKER_LIMIT)
        # Team sync, when this project is bound to a server (`ace remote set`): push what was just
        # learned, pull at most every `remote.pull_minutes`. `drain` has released the lock, and both
        # are idempotent. Never raises; offline is normal.
        from .. import team_client  # no remote: one small file read; httpx loads only when a server is called

        team_client.after_learning(store, project_key, cfg, time.time())

    run_detached(lock, lock_fd, work, area="learning", failure=f"worker for {project_key} stopped")
