"""Run the real hook entry point as Claude Code does, and check its answer against the contract."""

import json
import os
import subprocess
import sys
import time

from ace_engine.hooks.events import EVENTS

COMMON_KEYS = {"continue", "stopReason", "suppressOutput", "systemMessage", "decision", "reason", "hookSpecificOutput"}


def payload(event: str, cwd: str, session_id: str = "sess-1", **fields) -> dict:
    base = {
        "session_id": session_id,
        "transcript_path": os.path.join(cwd, "transcript.jsonl"),
        "cwd": cwd,
        "hook_event_name": event,
        "permission_mode": "default",
    }
    base.update(fields)
    return base


def run_hook(event: str, data, env: dict | None = None, cwd: str | None = None, timeout: float = 30):
    """(returncode, stdout text, stderr text, seconds) for one hook process."""
    raw = data if isinstance(data, bytes) else json.dumps(data).encode()
    started = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-m", "ace_engine.hooks", event],
        input=raw, capture_output=True, timeout=timeout, cwd=cwd,
        env={**os.environ, **(env or {})},
    )
    return proc.returncode, proc.stdout.decode("utf-8"), proc.stderr.decode("utf-8", "replace"), time.perf_counter() - started


# Runs each (event, payload) of stdin's JSON lines through the real hook engine, in order, in this
# one process (`engine.main`: the same handling as a hook process, closing the store after each).
_SERIES = r"""
import io, json, sys
from ace_engine.hooks import engine
answers = []
for line in sys.stdin.buffer:
    event, data = json.loads(line)
    out = io.StringIO()
    code = 0
    try:
        engine.main([event], stdin=io.BytesIO(json.dumps(data).encode()), stdout=out)
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 1
    answers.append([code, out.getvalue()])
sys.stdout.write(json.dumps(answers))
"""


def run_hooks(events, env: dict | None = None, cwd: str | None = None, timeout: float = 300):
    """[(returncode, stdout text)] for many hook events ([(event, payload)]) run in ONE process by
    the real hook engine, one after the other: a session's worth of events without paying an
    interpreter start per event (what `run_hook` costs is ~0.5-4 s each on a loaded machine)."""
    raw = b"".join(json.dumps([event, data]).encode() + b"\n" for event, data in events)
    proc = subprocess.run([sys.executable, "-c", _SERIES], input=raw, capture_output=True, timeout=timeout,
                          cwd=cwd, env={**os.environ, **(env or {})})
    assert proc.returncode == 0, proc.stderr.decode("utf-8", "replace")[-2000:]
    return [tuple(a) for a in json.loads(proc.stdout.decode("utf-8"))]


def check_answer(event: str, stdout: str) -> dict | None:
    """Assert `stdout` is empty or one JSON object Claude Code accepts for `event`."""
    if not stdout.strip():
        return None
    answer = json.loads(stdout)  # exactly one JSON value, nothing else on stdout
    assert isinstance(answer, dict), stdout
    assert set(answer) <= COMMON_KEYS, answer
    assert answer.get("continue", True) is True, "a hook must never stop Claude"
    specific = answer.get("hookSpecificOutput")
    if specific is not None:
        assert specific["hookEventName"] == event, answer
        if "additionalContext" in specific:
            assert EVENTS[event]["context"], f"{event} takes no additionalContext"
            assert len(specific["additionalContext"]) <= 10_000
        if event == "PermissionRequest":
            assert set(specific) <= {"hookEventName", "decision"}
            assert specific["decision"]["behavior"] in ("allow", "deny")
        else:
            assert "decision" not in specific
    for value in (answer.get("systemMessage"), answer.get("reason")):
        assert value is None or (isinstance(value, str) and len(value) <= 10_000)
    return answer
