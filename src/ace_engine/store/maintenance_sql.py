"""Health checks and the size cap behind the store interface: write probe, integrity, sizes, gc.

Contract of `gc`: past the age cap, captured events go; over the size cap, only the oldest
finished sessions needed to get under `GC_TARGET_RATIO` of it go, one at a time, re-measured
after each (a running session — active, not ended, recent activity — never goes); then the
space is given back to the file system (`reclaim`), so the file is within the cap and the
automatic gc is not restarted. Cost: CLI and background only, never a hook.
"""

from __future__ import annotations

import os
import time

from ..core import paths
from ._base import StoreBase, sqlite3

TYPE_CHECKING = False  # not `typing.TYPE_CHECKING`: the hooks must not import `typing` (~3 ms)
if TYPE_CHECKING:
    from ..core._types import GcReport

# gc gets the store under this share of the cap, so the automatic gc is not restarted at once.
GC_TARGET_RATIO = 0.8
# An active, unended session with activity this recent is running: gc never removes it.
RUNNING_IDLE_SECONDS = 24 * 3600


class MaintenanceSQL(StoreBase):
    def check_writable(self) -> None:
        """Take and release the write lock, and write (then remove) a small probe file next to
        the store; raises StoreError when the store can't be written. The probe is what catches a
        read-only or full file system: an empty transaction writes nothing, so SQLite can't tell."""
        try:
            with self.transaction() as probe_lock:
                probe_lock.discard()
        except sqlite3.Error as exc:
            raise self._error(exc) from exc
        probe = os.path.join(os.path.dirname(self.path), f".write-probe-{os.getpid()}")
        try:
            fd = paths.open_nofollow(probe, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            try:
                os.write(fd, b"\0" * 65536)
                os.fsync(fd)
            finally:
                os.close(fd)
                os.unlink(probe)
        except OSError as exc:
            raise self._error(f"cannot write next to the store: {exc}") from exc

    def integrity(self) -> str:
        try:
            return str(self.conn.execute("PRAGMA quick_check").fetchone()[0])
        except sqlite3.Error as exc:
            return str(exc)

    def live_bytes(self) -> int:
        """Bytes in use inside the database (pages not on the free list)."""
        page_size = self.conn.execute("PRAGMA page_size").fetchone()[0]
        pages = self.conn.execute("PRAGMA page_count").fetchone()[0]
        free = self.conn.execute("PRAGMA freelist_count").fetchone()[0]
        return int((pages - free) * page_size)

    def file_bytes(self) -> int:
        """Bytes the store takes on disk (database + WAL), what the automatic gc compares."""
        total = 0
        for suffix in ("", "-wal"):
            try:
                total += os.lstat(self.path + suffix).st_size
            except OSError:
                pass
        return total

    def reclaim(self) -> None:
        """Give free pages back to the file system and fold the WAL in. `PRAGMA
        incremental_vacuum` frees one page per step, and `execute()` steps a statement without
        result columns only once — so it runs through `executescript`, which steps it to
        completion. A store without incremental auto-vacuum gets a full VACUUM instead."""
        conn = self.conn
        if conn.execute("PRAGMA freelist_count").fetchone()[0]:
            if conn.execute("PRAGMA auto_vacuum").fetchone()[0] == 2:
                conn.executescript("PRAGMA incremental_vacuum;")
            else:
                conn.execute("VACUUM")
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall()

    def _gc_candidates(self, now: float) -> list[str]:
        """Sessions the size cap may remove, oldest first: all but those still running (active,
        not ended, with activity in the last RUNNING_IDLE_SECONDS)."""
        recent = now - RUNNING_IDLE_SECONDS
        return [row[0] for row in self.conn.execute(
            "SELECT s.session_id FROM sessions s WHERE NOT (s.status = 'active' AND s.ended_at IS NULL"
            " AND COALESCE((SELECT MAX(h.created_at) FROM hook_events h WHERE h.session_id = s.session_id),"
            " s.started_at) >= ?) ORDER BY s.started_at, s.rowid", (recent,))]

    def gc(self, *, max_bytes: int, max_age_days: float, dry_run: bool = False, now: float | None = None,
           target_ratio: float = GC_TARGET_RATIO) -> GcReport:
        """Drop captured data older than `max_age_days`; then, if the live size is over
        `max_bytes`, remove the oldest finished sessions one at a time, only as many as needed to
        get under `target_ratio` × `max_bytes` (a running session is never removed); then give
        the space back. Returns what was (or, `dry_run`, would be) removed."""
        now = now or time.time()
        cutoff = now - max_age_days * 86400
        target = int(max_bytes * target_ratio)
        removed = {"tool_events": 0, "messages": 0, "hook_events": 0, "sessions": 0, "kept_running": 0}
        before, file_before = self.live_bytes(), self.file_bytes()
        conn = self.conn
        tables = ("tool_events", "messages", "hook_events")
        try:
            with self.transaction() as tx:
                for table in tables:
                    removed[table] += conn.execute(f"DELETE FROM {table} WHERE created_at < ?", (cutoff,)).rowcount
                removed["sessions"] += conn.execute(
                    "DELETE FROM sessions WHERE COALESCE(ended_at, started_at) < ?"
                    " AND session_id NOT IN (SELECT session_id FROM hook_events WHERE session_id IS NOT NULL)",
                    (cutoff,),
                ).rowcount
                # A summary goes with its session; one of a session never captured here (`ace learn
                # --transcript`) goes with age.
                conn.execute("DELETE FROM session_summaries WHERE last_at < ?"
                             " AND session_id NOT IN (SELECT session_id FROM sessions)", (cutoff,))
                conn.execute("DELETE FROM experiment_arms WHERE assigned_at < ?"  # an arm goes with its session
                             " AND session_id NOT IN (SELECT session_id FROM sessions)", (cutoff,))
                # A lesson's situations are copies of prompts: they age out like the prompts, and the
                # vector folded from them goes too (search then uses the lesson's own until refolded).
                conn.execute("DELETE FROM bullet_vectors WHERE model LIKE '%+situations' AND bullet_id IN"
                             " (SELECT bullet_id FROM lesson_situations WHERE last_seen_at < ?)", (cutoff,))
                conn.execute("DELETE FROM lesson_situations WHERE last_seen_at < ?", (cutoff,))
                if self.live_bytes() > max_bytes:
                    candidates = self._gc_candidates(now)
                    removed["kept_running"] = conn.execute("SELECT COUNT(*) FROM sessions").fetchone()[0] - len(
                        candidates)
                    for session_id in candidates:  # re-measured after each: never more than needed
                        if self.live_bytes() <= target:
                            break
                        for table in tables:
                            removed[table] += conn.execute(
                                f"DELETE FROM {table} WHERE session_id = ?", (session_id,)).rowcount
                        for table in ("injections", "pins", "session_state", "session_summaries", "experiment_arms"):
                            conn.execute(f"DELETE FROM {table} WHERE session_id = ?", (session_id,))
                        removed["sessions"] += conn.execute(
                            "DELETE FROM sessions WHERE session_id = ?", (session_id,)).rowcount
                after = self.live_bytes()
                if dry_run:
                    tx.discard()
            if not dry_run:
                self.reclaim()
        except sqlite3.Error as exc:
            raise self._error(exc) from exc
        return {"tool_events": removed["tool_events"], "messages": removed["messages"],
                "hook_events": removed["hook_events"], "sessions": removed["sessions"],
                "kept_running": removed["kept_running"], "bytes_before": before,
                "bytes_after": before if dry_run else after, "file_bytes_before": file_before,
                "file_bytes_after": file_before if dry_run else self.file_bytes(), "target_bytes": target}
