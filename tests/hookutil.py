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
