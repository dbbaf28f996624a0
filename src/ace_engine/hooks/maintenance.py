"""Work a hook may start but must not wait for: the automatic size cap of the store.

SessionStart checks the store's size on disk (two `stat` calls); past the configured cap it
starts a detached `ace gc` (`background.spawn_python`) and returns at once. A lock file keeps it
to one gc at a time.
"""

import os
import time

from .. import log, paths
from ..background import spawn_python

LOCK_STALE_SECONDS = 900


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
    lock = os.path.join(paths.ensure_private_dir(paths.state_dir()), "gc.lock")
    try:
        if time.time() - os.path.getmtime(lock) < LOCK_STALE_SECONDS:
            return False  # one is running (or ran moments ago)
        os.unlink(lock)
    except OSError:
        pass
    try:
        os.close(os.open(lock, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600))
    except OSError:
        return False  # another hook won the race
    code = (
        "import os, sys\n"
        "from ace_engine.cli import main\n"
        "try:\n"
        "    main(['gc', '--json'])\n"
        "finally:\n"
        f"    os.unlink({lock!r})\n"
    )
    try:
        spawn_python(code)
    except OSError as exc:
        log.error("gc", f"could not start the automatic gc: {exc}")
        os.unlink(lock)
        return False
    log.write("INFO", "gc", f"store over {max_db_mb} MB: automatic gc started")
    return True
