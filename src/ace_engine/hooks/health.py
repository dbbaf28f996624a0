"""Degraded-mode bookkeeping: a hook that could not write the store marks the engine degraded;
the next SessionStart tells the user once (per session) through `systemMessage`."""

import json
import os
import time

from .. import paths


def _path() -> str:
    return os.path.join(paths.state_dir(), "degraded.json")


def read() -> dict | None:
    try:
        with open(_path(), encoding="utf-8") as fh:
            data = json.load(fh)
        return data if isinstance(data, dict) else None
    except (OSError, ValueError):
        return None


def _write(data: dict) -> None:
    try:
        paths.ensure_private_dir(paths.state_dir())
        tmp = f"{_path()}.{os.getpid()}.tmp"
        with open(tmp, "w", encoding="utf-8") as fh:
            json.dump(data, fh)
        os.replace(tmp, _path())
    except OSError:
        pass  # a full disk: the log line (if any) is all we can do


def mark_degraded(reason: str) -> None:
    current = read() or {"since": time.time(), "told": []}
    current["reason"] = reason[:500]
    current["last"] = time.time()
    _write(current)


def clear() -> None:
    try:
        os.unlink(_path())
    except OSError:
        pass


def notice_for(session_id: str | None, live_error: str | None) -> str | None:
    """The one-time message for this session, or None. A live store error always counts; a past
    one is reported once and then cleared when the store works again."""
    state = read()
    if live_error is None and state is None:
        return None
    told = (state or {}).get("told") or []
    if session_id and session_id in told:
        return None
    reason = live_error or (state or {}).get("reason") or "unknown problem"
    if live_error:
        text = (
            f"ace-engine is degraded: {reason}. Tool calls are spooled and nothing is lost; "
            "run `ace doctor` for the fix."
        )
        state = state or {"since": time.time(), "reason": reason}
        state["told"] = (told + [session_id])[-50:] if session_id else told
        _write(state)
    else:
        text = (
            f"ace-engine recovered from an earlier problem ({reason}); spooled records were "
            "written. `ace doctor` shows the details."
        )
        clear()
    return text
