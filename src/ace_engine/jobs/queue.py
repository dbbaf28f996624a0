"""The hook side of learning: queue a job for what was just captured, start a worker, return.

The hook handlers decide per event and call the narrow functions here: Stop / SubagentStop
`enqueue_turn` (a job for the session's main agent, or for the finished subagent under its own
agent id), SessionEnd `enqueue_leftovers` (a job per agent for events no job covers — e.g. a turn
interrupted with Esc, which never fires Stop), then `start_worker` when a job was queued. Nothing
here knows hooks or their payload. Hook-safe: stdlib, the store and
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

from ..core import log, paths
from ..core.background import ProcessLock, spawn_holding

TYPE_CHECKING = False  # not `typing.TYPE_CHECKING`: the hooks must not import `typing` (~3 ms)
if TYPE_CHECKING:
    from ..store.interfaces import JobsStore


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


def enqueue_turn(store: "JobsStore", session_id: str, agent_id: str | None, agent_type: str | None, event: str,
                 now: float, attempts: int) -> list[int]:
    """Queue the job of the turn that just ended (`event`: Stop or SubagentStop, stored as its
    trigger) for `agent_id` (None: the main agent); [] when it has no new events."""
    job = store.enqueue_job(session_id, agent_id, agent_type, event, now, attempts)
    return [job] if job else []


def enqueue_leftovers(store: "JobsStore", session_id: str, event: str, now: float, attempts: int) -> list[int]:
    """Queue one job per agent of the session for the events no job covers yet (`event`, e.g.
    SessionEnd or cli, is stored as the jobs' trigger)."""
    return store.enqueue_leftovers(session_id, event, now, attempts)
