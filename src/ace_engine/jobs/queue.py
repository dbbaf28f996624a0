"""The hook side of learning: queue a job for what was just captured, start a worker, return.

Called by Stop / SubagentStop (a job for the session's main agent, or for the finished subagent
under its own agent id) and SessionEnd (leftovers: a job per agent for events no job covers —
e.g. a turn interrupted with Esc, which never fires Stop). Hook-safe: stdlib, the store and
`background` only — no subprocess, no learning code; about a millisecond of SQL plus a
posix_spawn when no worker is running for the project. The worker is started isolated
(`background.spawn_python`: `python -I`, neutral working directory, the installed package only),
never from the repository the hook runs in.

SessionEnd: Claude Code gives all SessionEnd hooks 1.5 s together. Queueing is a few indexed
queries and starting the worker a ~1 ms posix_spawn, so SessionEnd starts the worker too (the
worker runs in its own session and outlives Claude Code); a leftover that somehow isn't learned
then waits in the queue for the next Stop or `ace learn`.
"""

import os

from .. import log, paths
from ..background import ProcessLock, spawn_holding


def lock_path(project_key: str) -> str:
    """One lock file per project: at most one learning worker runs for it."""
    safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in project_key)[:80]
    digest = 0xCBF29CE484222325  # FNV-1a: keys that read alike stay apart (zlib would cost a hook 0.4 ms)
    for byte in project_key.encode("utf-8", "replace"):
        digest = ((digest ^ byte) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return os.path.join(paths.ensure_private_dir(paths.state_dir()), f"learn-{safe}-{digest:016x}.lock")


def start_worker(project_key: str) -> int | None:
    """Start a detached worker for the project unless one is running; its pid, or None.

    The lock is taken here and inherited by the worker (flock: it lives as long as the worker's
    descriptor), so a second hook sees it held and starts nothing; a killed worker's lock is
    released by the kernel and the next hook starts a new worker.
    """
    code = f"from ace_engine.jobs.worker import main\nmain({project_key!r}, lock_fd=LOCK_FD)\n"
    try:
        # None: a worker is running; it re-checks the queue before it exits.
        return spawn_holding(ProcessLock(lock_path(project_key)), code)
    except OSError as exc:
        log.error("learning", f"could not start the learning worker: {exc}")
        return None


def enqueue_from_hook(hook) -> list[int]:
    """Queue this hook's learning job(s) and make sure a worker will run them. Never raises."""
    try:
        session_id = hook.session_id
        if not session_id or hook.store_error is not None or not hook.cfg["learning.enabled"]:
            return []
        store = hook.store()
        if store is None:
            return []
        attempts = int(hook.cfg["learning.max_attempts"])
        if hook.event == "SessionEnd":
            jobs = store.enqueue_leftovers(session_id, "SessionEnd", hook.now, attempts)
        else:
            agent_id = hook.payload.get("agent_id") if hook.event == "SubagentStop" else None
            agent_type = hook.payload.get("agent_type") if hook.event == "SubagentStop" else None
            job = store.enqueue_job(session_id, agent_id if isinstance(agent_id, str) else None,
                                    agent_type if isinstance(agent_type, str) else None, hook.event, hook.now, attempts)
            jobs = [job] if job else []
        if jobs:
            start_worker(hook.project.key)
        return jobs
    except Exception as exc:  # noqa: BLE001 — learning must never break a hook
        log.error(hook.event, f"queueing the learning job failed: {type(exc).__name__}: {exc}")
        return []
