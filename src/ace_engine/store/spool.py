"""The spool: hook records the store could not take (locked too long, read-only, full, corrupt,
refused), kept as JSON lines until the store works again, then replayed into it.

Contract:
- `append` keeps a record in `$ACE_HOME/spool`, else in the private fallback directory outside
  `$ACE_HOME` (`paths.fallback_dir`), and says where — or None when it could be kept nowhere
  (the caller reports it lost; it is never called spooled). Files are opened without following
  symlinks, owner-only.
- Each directory holds at most `MAX_BYTES`; past it the oldest day's file is dropped (with a
  note in the log of how many records of which day), and when today's records alone fill it, the
  next directory is tried.
- One file per day; appenders hold a shared `flock` while writing and check the file is still the
  one named, and a replayer claims a file by an atomic rename and then takes the lock
  exclusively — so a line is never appended to a file already read, and two replayers never
  apply the same file. Progress is recorded after each committed chunk, so a replayer that dies
  half-way does not apply the first chunks twice.
- A hook replays only a small spool inline (`replay_or_defer`); a large one is replayed by a
  detached background process, outside any hook's time budget.

Cost: `append` is one small write plus a directory listing and a few `lstat`s (the size bound);
imported only by a hook that could not write the store, or by SessionStart when files wait.
"""

from __future__ import annotations

import json
import os
import time

from ..core import log, paths
from ..core.files import atomic_write

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows: no lock, the rename claim still holds
    fcntl = None  # type: ignore[assignment]  # tested as `if fcntl` before each use

TYPE_CHECKING = False  # not `typing.TYPE_CHECKING`: the hooks must not import `typing` (~3 ms)
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

    from ..core.background import ProcessLock
    from .interfaces import EventsStore
    from .sqlite import SQLiteStore

CLAIM_STALE_SECONDS = 600
MAX_BYTES = 64 * 1024 * 1024
INLINE_REPLAY_BYTES = 256 * 1024  # what a SessionStart may replay itself (a few hundred records)
CHUNK_RECORDS = 500  # records per write transaction when replaying: hooks get the lock between


def _lock(fd: int, kind: int) -> None:
    if fcntl is not None:
        fcntl.flock(fd, kind)


def _spool_files(directory: str) -> list[tuple[str, int]]:
    """(name, size) of the record files in `directory`, claimed ones included, oldest day first."""
    found = []
    try:
        names = os.listdir(directory)
    except OSError:
        return []
    for name in names:
        if name.endswith(".progress") or not (name.endswith(".jsonl") or ".claimed-" in name):
            continue
        try:
            found.append((name, os.lstat(os.path.join(directory, name)).st_size))
        except OSError:
            pass
    return sorted(found)


def _count_lines(path: str) -> int:
    try:
        fd = paths.open_nofollow(path, os.O_RDONLY)
    except OSError:
        return 0
    with open(fd, "rb") as fh:
        return sum(chunk.count(b"\n") for chunk in iter(lambda: fh.read(1 << 20), b""))


def _make_room(directory: str, need: int, today: str) -> bool:
    """Drop the oldest days' files until `need` more bytes fit under MAX_BYTES; False if even
    then they don't (today's records alone fill the directory)."""
    files = _spool_files(directory)
    total = sum(size for _, size in files)
    for name, size in files:
        if total + need <= MAX_BYTES:
            return True
        if name.startswith(today) or ".claimed-" in name:
            continue  # never today's (being written) nor one being replayed
        path = os.path.join(directory, name)
        lines = _count_lines(path)
        try:
            os.unlink(path)
        except OSError:
            continue
        total -= size
        log.error("spool", f"spool {directory} is full ({MAX_BYTES // (1024 * 1024)} MB): dropped the "
                           f"oldest day's file {name} with {lines} records to keep newer ones")
    return total + need <= MAX_BYTES


def _append_to(directory: str, line: bytes) -> None:
    today = time.strftime("%Y%m%d", time.gmtime())
    if not _make_room(directory, len(line), today):
        raise OSError(f"spool {directory} is full ({MAX_BYTES // (1024 * 1024)} MB of today's records)")
    path = os.path.join(directory, f"{today}.jsonl")
    for _ in range(5):
        fd = paths.open_nofollow(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        try:
            _lock(fd, fcntl.LOCK_SH if fcntl else 0)
            try:  # a replayer may have claimed (renamed) it between our open and our lock
                same = os.fstat(fd).st_ino == os.lstat(path).st_ino
            except FileNotFoundError:
                same = False
            if same:
                written = os.write(fd, line)  # one write of one line: appenders don't interleave
                if written != len(line):
                    raise OSError(f"short write to {path} ({written} of {len(line)} bytes)")
                return
        finally:
            os.close(fd)  # also releases the lock
    raise OSError(f"{path} kept being claimed by replayers")


def append(record: Mapping[str, Any]) -> str | None:
    """Keep one record; returns the directory it is kept in, or None when it could be kept
    nowhere (logged; the caller must report it as lost)."""
    try:
        line = (json.dumps(record, ensure_ascii=True, separators=(",", ":")) + "\n").encode()
    except (ValueError, TypeError, RecursionError) as exc:
        log.error("spool", f"a {record.get('event')} record cannot be serialized and is lost: {exc}")
        return None
    problems = []
    for where in ("home", "fallback"):
        try:
            directory = paths.ensure_private_dir(paths.spool_dir()) if where == "home" else paths.fallback_dir()
            if directory is None:
                problems.append("no private fallback directory could be had outside ACE_HOME")
                continue
            _append_to(directory, line)
            return directory
        except OSError as exc:
            problems.append(str(exc))
    log.error("spool", f"a {record.get('event')} record could be kept nowhere and is lost: "
                       + "; ".join(problems))
    return None


def spool_dirs() -> list[str]:
    """Every directory that may hold spooled records for this `$ACE_HOME` (creates nothing)."""
    return [paths.spool_dir()] + paths.existing_fallback_dirs()


def pending_files() -> list[str]:
    now = time.time()
    found = []
    for directory in spool_dirs():
        for name, _ in _spool_files(directory):
            path = os.path.join(directory, name)
            if ".claimed-" in name:
                try:  # a replayer that died mid-way leaves its claim; take it over when stale
                    if now - os.lstat(path).st_mtime <= CLAIM_STALE_SECONDS:
                        continue
                except OSError:
                    continue
            found.append(path)
    return found


def pending_bytes() -> int:
    return sum(size for d in spool_dirs() for _, size in _spool_files(d))


def count_pending() -> int:
    return sum(_count_lines(path) for path in pending_files())


def _claim(path: str) -> str | None:
    """Rename `path` to a name only we use; None when another replayer was faster."""
    original = path.split(".claimed-")[0]
    claimed = f"{original}.claimed-{os.getpid()}-{time.time_ns()}"
    try:
        os.replace(path, claimed)
    except OSError:
        return None
    if path != original:  # a stale claim taken over: its progress comes along
        try:
            os.replace(path + ".progress", claimed + ".progress")
        except OSError:
            pass
    return claimed


def _read_claimed(claimed: str) -> tuple[list[tuple[int, dict[str, Any]]], int]:
    """(end offset, record) pairs after the recorded progress, and that starting offset."""
    start = 0
    try:
        with open(claimed + ".progress", encoding="ascii") as fh:
            start = int(fh.read().strip() or 0)
    except (OSError, ValueError):
        pass
    fd = paths.open_nofollow(claimed, os.O_RDONLY)
    with open(fd, "rb") as fh:
        _lock(fh.fileno(), fcntl.LOCK_EX if fcntl else 0)  # waits for an appender mid-write
        fh.seek(start)
        data = fh.read()
    out = []
    offset = start
    for number, raw in enumerate(data.splitlines(keepends=True), 1):
        offset += len(raw)
        try:
            record = json.loads(raw)
            if isinstance(record, dict) and "event" in record and "at" in record:
                out.append((offset, record))
                continue
        except ValueError:
            pass
        log.warning("spool", f"{claimed}: unreadable record (line {number} after offset {start}) skipped")
    return out, start


def _save_progress(claimed: str, offset: int) -> None:
    # The rename alone keeps the offset across a replayer that dies; no fsync: replay may run in a hook.
    atomic_write(claimed + ".progress", str(offset), mode=0o600, fsync=False)
    os.utime(claimed, None)  # still alive: not stale for other replayers


def _apply_chunk(store: EventsStore, chunk: list[dict[str, Any]]) -> int:
    """Apply a chunk in one transaction; if a record is unstorable (not a store failure), apply
    one by one and log the ones that can't be stored at all."""
    from ._base import StoreError

    try:
        store.apply_many(chunk)
        return len(chunk)
    except StoreError:
        raise
    except Exception:  # noqa: BLE001 — some record's data; isolate it
        applied = 0
        for record in chunk:
            try:
                store.apply_many([record])
                applied += 1
            except StoreError:
                raise
            except Exception as exc:  # noqa: BLE001
                log.error("spool", f"a spooled {record.get('event')} record cannot be stored and is "
                                   f"dropped: {type(exc).__name__}: {exc}")
        return applied


def replay(store: EventsStore, *, pause: float = 0.0) -> int:
    """Apply every spooled record to `store`; returns how many were applied. On a store failure
    the unapplied rest stays spooled and the StoreError propagates."""
    applied = 0
    for path in pending_files():
        claimed = _claim(path)
        if claimed is None:
            continue  # another process claimed it first
        try:
            records, _ = _read_claimed(claimed)
            for start in range(0, len(records), CHUNK_RECORDS):
                chunk = records[start:start + CHUNK_RECORDS]
                applied += _apply_chunk(store, [r for _, r in chunk])
                if start + CHUNK_RECORDS < len(records):
                    _save_progress(claimed, chunk[-1][0])
                    if pause:
                        time.sleep(pause)  # let hooks take the write lock between chunks
        except Exception as exc:
            log.error("spool", f"replay of {claimed} stopped, the rest is kept for later: {exc}")
            try:  # stale at once: the next replay takes it over and resumes after its progress
                os.utime(claimed, (0, 0))
            except OSError:
                pass
            raise
        for leftover in (claimed, claimed + ".progress"):
            try:
                os.unlink(leftover)
            except FileNotFoundError:
                pass
    return applied


def replay_or_defer(store: EventsStore) -> tuple[int, bool]:
    """For a hook: replay a small spool now; start a background replay for a large one.
    Returns (records applied now, whether a background replay is running or was started)."""
    if pending_bytes() <= INLINE_REPLAY_BYTES:
        return replay(store), False
    return 0, start_background_replay()


def _replay_lock() -> ProcessLock:
    from ..core.background import named_lock

    return named_lock("replay")


def start_background_replay() -> bool:
    """Start a detached replay unless one runs; True when one is running now."""
    from ..core.background import spawn_holding

    try:
        code = "from ace_engine.store.spool import background_main\nbackground_main(LOCK_FD)\n"
        if spawn_holding(_replay_lock(), code) is None:
            return True  # one is already at it
    except OSError as exc:
        log.error("spool", f"could not start the background replay: {exc}")
        return False
    log.write("INFO", "spool", f"{pending_bytes()} bytes of spooled records: background replay started")
    return True


def background_main(lock_fd: int | None = None) -> None:
    """Entry point of the detached replay (also usable from the learning worker)."""
    from .detached import run_detached

    def work(store: SQLiteStore) -> None:
        applied = replay(store, pause=0.01)
        log.write("INFO", "spool", f"background replay wrote {applied} spooled records")

    run_detached(_replay_lock(), lock_fd, work, area="spool", failure="background replay stopped", nice=False)
