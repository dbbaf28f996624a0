"""Work a hook may start but must not wait for: the automatic size cap of the store, and the
re-screen of stored lessons under a newer safety policy.

SessionStart checks the store's size on disk (two `stat` calls); past the configured cap it
starts a detached, isolated `ace gc` (`background.spawn_python`) and returns at once. One gc at a
time: the hook takes `state/gc.lock` (`background.ProcessLock`, flock) and hands it to the gc,
so the lock lives exactly as long as that process — the same mechanism as the learning worker,
never stale after a crash, never held by a finished gc.

An injecting hook that finds the store's lessons screened under an older safety policy
(`inject.screened`) starts `playbook.rescreen` the same way, under `state/rescreen.lock`, and
injects nothing until it has run. Starting it imports nothing of the policy: the child does.
"""

import os

from ..core import log, paths
from ..core.background import named_lock, spawn_holding


def store_bytes() -> int:
    total = 0
    for suffix in ("", "-wal"):
        try:
            total += os.path.getsize(paths.db_path() + suffix)
        except OSError:
            pass
    return total


def maybe_start_gc(max_db_mb: float) -> bool:
    """Start a background gc when the store is over its cap; True when one was started."""
    if store_bytes() <= max_db_mb * 1024 * 1024:
        return False
    # The gc inherits the locked descriptor; `ace gc` itself knows nothing of it, and the kernel
    # releases the lock when the process exits, however it ends.
    try:
        if spawn_holding(named_lock("gc"), "from ace_engine.cli import main\nmain(['gc', '--json'])\n") is None:
            return False  # a gc is running
    except OSError as exc:
        log.error("gc", f"could not start the automatic gc: {exc}")
        return False
    log.write("INFO", "gc", f"store over {max_db_mb} MB: automatic gc started")
    return True


def maybe_start_rescreen() -> bool:
    """Start a detached re-screen of the stored lessons unless one is running; True when started."""
    try:
        code = "from ace_engine.playbook.rescreen import main\nmain(lock_fd=LOCK_FD)\n"
        if spawn_holding(named_lock("rescreen"), code) is None:
            return False  # one is running: the next hook injects again once it recorded the version
    except OSError as exc:
        log.error("rescreen", f"could not start the re-screen of stored lessons: {exc}")
        return False
    log.write("INFO", "rescreen", "lessons stored under an older safety policy: re-screen started, "
                                  "nothing injected until it is done")
    return True
