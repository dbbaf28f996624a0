"""Degraded-mode bookkeeping: a hook that could not write the store marks the engine degraded;
the next SessionStart tells the user once (per session) through `systemMessage`.

Contract: the notice names the TRUE cause (`diagnose`: read-only, disk full, corrupt, locked,
permission, unsafe data directory) and says where records are kept; it never claims nothing is
lost — a record that could be kept nowhere is counted and reported as lost. The state lives in
`$ACE_HOME/state`, or in the private fallback directory outside `$ACE_HOME` when that cannot be
written. Counters are append-only files (one byte per record), so concurrent hooks never
overwrite each other's counts.

Cost: stdlib-only; a few small file operations, and only on the degraded path or at SessionStart.
"""

import json
import os
import time

from ..core import paths
from ..core.files import atomic_write

STATE_NAME = "degraded.json"
LOST_NAME = "lost.count"
SPOOLED_NAME = "spooled.count"

# Records this process could not count in any file (everything full): still reported.
_uncounted = {"lost": 0}


def _state_dirs() -> list[str]:
    return [paths.state_dir()] + paths.existing_fallback_dirs()


def _writable_dir() -> str | None:
    try:
        return paths.ensure_private_dir(paths.state_dir())
    except OSError:
        return paths.fallback_dir()


def _read_json(path: str) -> dict | None:
    try:
        fd = paths.open_nofollow(path, os.O_RDONLY)
        with open(fd, encoding="utf-8") as fh:
            data = json.load(fh)
        return data if isinstance(data, dict) else None
    except (OSError, ValueError):
        return None


def _count(name: str) -> int:
    total = 0
    for directory in _state_dirs():
        try:
            total += os.lstat(os.path.join(directory, name)).st_size
        except OSError:
            pass
    return total


def read() -> dict | None:
    """The degraded state (merged across `$ACE_HOME` and the fallback), with `lost` and
    `spooled` counts; None when the engine is healthy."""
    merged: dict | None = None
    for directory in _state_dirs():
        data = _read_json(os.path.join(directory, STATE_NAME))
        if data is None:
            continue
        if merged is None or data.get("last", 0) > merged.get("last", 0):
            told = (merged or {}).get("told") or []
            merged = {**data, "told": list(dict.fromkeys(told + (data.get("told") or [])))}
        else:
            merged["told"] = list(dict.fromkeys((merged.get("told") or []) + (data.get("told") or [])))
    lost = _count(LOST_NAME) + _uncounted["lost"]
    spooled = _count(SPOOLED_NAME)
    if merged is None and not lost and not spooled:
        return None
    merged = merged or {"since": time.time(), "reason": "unknown problem", "told": []}
    merged["lost"], merged["spooled"] = lost, spooled
    return merged


def _write(data: dict) -> None:
    directory = _writable_dir()
    if directory is None:
        return
    path = os.path.join(directory, STATE_NAME)
    try:  # advisory state written on a hook's path: no fsync
        atomic_write(path, json.dumps({k: v for k, v in data.items() if k not in ("lost", "spooled")}),
                     mode=0o600, fsync=False)
    except OSError:
        pass


def _bump(name: str) -> bool:
    for directory in (d for d in (_writable_dir(),) if d):
        try:
            fd = paths.open_nofollow(os.path.join(directory, name), os.O_WRONLY | os.O_APPEND | os.O_CREAT)
            try:
                return os.write(fd, b".") == 1
            finally:
                os.close(fd)
        except OSError:
            pass
    return False


def mark_degraded(reason: str, kept: str | bool | None = True) -> None:
    """Record a failed store write; `kept` is where the record was spooled (truthy), or falsy
    when it could be kept nowhere."""
    if kept:
        _bump(SPOOLED_NAME)
    elif not _bump(LOST_NAME):
        _uncounted["lost"] += 1
    current = read() or {"since": time.time(), "told": []}
    current["reason"] = str(reason)[:500]
    current["cause"] = diagnose(current["reason"])
    current["last"] = time.time()
    if isinstance(kept, str):
        current["where"] = kept
    _write(current)


def clear() -> None:
    _uncounted["lost"] = 0
    for directory in _state_dirs():
        for name in (STATE_NAME, LOST_NAME, SPOOLED_NAME):
            try:
                os.unlink(os.path.join(directory, name))
            except OSError:
                pass


def _fs_probe(path: str) -> str | None:
    """'read-only' or 'disk full' when the file system holding `path` is so; else None."""
    while path and not os.path.exists(path):
        parent = os.path.dirname(path)
        if parent == path:
            break
        path = parent
    try:
        st = os.statvfs(path)
    except (OSError, AttributeError):
        return None
    if st.f_flag & getattr(os, "ST_RDONLY", 1):
        return "read-only"
    free = st.f_bfree if hasattr(os, "geteuid") and os.geteuid() == 0 else st.f_bavail
    if free * st.f_frsize < 64 * 1024:
        return "disk full"
    return None


def diagnose(reason: str | None) -> str:
    """The true cause of a store failure, as a short phrase: `unsafe data directory`,
    `corrupt`, `locked`, `read-only`, `disk full`, `permission denied`, else `unavailable`."""
    text = (reason or "").lower()
    if "not by you" in text or "accessible to group" in text or "symlink" in text:
        return "unsafe data directory"
    if "not a database" in text or "malformed" in text or "integrity" in text or "corrupt" in text:
        return "corrupt"
    if "locked" in text or "busy" in text:
        return "locked"
    probed = _fs_probe(paths.ace_home())
    if probed:
        return probed
    if "readonly" in text or "read-only" in text:
        return "read-only"
    if "disk is full" in text or "no space" in text or "is full" in text:
        return "disk full"
    if "permission denied" in text or "unable to open" in text or "not permitted" in text:
        return "permission denied"
    return "unavailable"


CAUSE_TEXT = {
    "unsafe data directory": "its data directory was refused as unsafe",
    "corrupt": "the store file is corrupt",
    "locked": "the store stayed locked by another process",
    "read-only": "the store's file system is read-only",
    "disk full": "the disk holding the store is full",
    "permission denied": "the store cannot be opened (permission denied)",
    "unavailable": "the store cannot be used",
}


def _where(state: dict) -> str:
    where = state.get("where")
    if not where:
        return "the spool"
    return "the spool in ACE_HOME" if where == paths.spool_dir() else f"{where} (outside ACE_HOME)"


def _counts_text(state: dict) -> str:
    lost, spooled = state.get("lost") or 0, state.get("spooled") or 0
    parts = []
    if spooled:
        parts.append(f"{spooled} record{'s' if spooled != 1 else ''} kept in {_where(state)}")
    if lost:
        parts.append(f"{lost} record{'s' if lost != 1 else ''} could not be kept anywhere and "
                     f"{'are' if lost != 1 else 'is'} lost")
    return "; ".join(parts)


def notice_for(session_id: str | None, live_error: str | None, *, deferred: bool = False) -> str | None:
    """The one-time message for this session, or None. A live store error always counts; a past
    one is reported once and then cleared when the store works again (`deferred`: its spooled
    records are being written by a background replay)."""
    state = read()
    if live_error is None and state is None:
        return None
    told = (state or {}).get("told") or []
    if session_id and session_id in told:
        return None
    if live_error:
        state = state or {"since": time.time(), "told": []}
        cause = diagnose(live_error)
        counts = _counts_text(state)
        text = (f"ace-engine is degraded: {CAUSE_TEXT[cause]} ({live_error[:200]}). "
                + (f"So far {counts}. " if counts else "")
                + ("Records that can be kept are written to the store once it works again; "
                   "run `ace doctor` for the cause and the fix."))
        state["reason"] = live_error[:500]
        state["told"] = (told + [session_id])[-50:] if session_id else told
        _write(state)
        return text
    if state is None:
        return None  # (a live error of "" names nothing: no notice)
    cause = state.get("cause") or diagnose(state.get("reason"))
    lost = state.get("lost") or 0
    spooled_text = ("spooled records are being written in the background" if deferred
                    else "spooled records were written")
    text = (f"ace-engine recovered from an earlier problem ({CAUSE_TEXT.get(cause, cause)}: "
            f"{str(state.get('reason'))[:200]}); {spooled_text}"
            + (f", but {lost} record{'s' if lost != 1 else ''} could not be kept and "
               f"{'are' if lost != 1 else 'is'} lost" if lost else "")
            + ". `ace doctor` shows the details.")
    clear()
    return text
