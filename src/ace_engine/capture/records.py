"""Turn a validated hook payload into the one record the store writes (or the spool keeps).

Everything that reaches a record has been through `text.sanitize`/`redact_value`: UTF-8 repaired,
`<private>` spans dropped, secrets redacted, size capped. Raw payload text never leaves here.
"""

import json
import os
import re

from .redact import redact_value
from .text import cap, is_blank, repair_utf8, sanitize, strip_private

_EXIT_CODE = re.compile(r"exit code:?\s*(-?\d+)", re.IGNORECASE)


def _clean_leaves(value, limit: int):
    """Repair, de-privatize and pre-cap every string leaf (keys too) before redaction."""
    if isinstance(value, str):
        return cap(strip_private(repair_utf8(value)), limit)
    if isinstance(value, dict):
        return {repair_utf8(str(k)): _clean_leaves(v, limit) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_clean_leaves(v, limit) for v in value]
    return value


def sanitize_value(value, limit: int) -> str | None:
    """A JSON-able value → redacted, capped text (JSON when it fits within `limit`)."""
    if value is None:
        return None
    if isinstance(value, str):
        return sanitize(value, limit)
    clean = redact_value(_clean_leaves(value, limit))
    text = json.dumps(clean, ensure_ascii=False, separators=(",", ":"), default=str)
    return cap(text, limit)


def _text(value) -> str | None:
    return value if isinstance(value, str) else None


def base_record(event: str, payload: dict, at: float, project) -> dict:
    record = {
        "v": 1,
        "at": at,
        "event": event,
        "session_id": _text(payload.get("session_id")),
        "agent_id": _text(payload.get("agent_id")),
        "agent_type": _text(payload.get("agent_type")),
        "detail": None,
        "project": None,
        "session": {
            "cwd": _text(payload.get("cwd")),
            "transcript_path": _text(payload.get("transcript_path")),
            "permission_mode": _text(payload.get("permission_mode")),
            "agent_type": _text(payload.get("agent_type")),
        },
    }
    if project is not None:
        record["project"] = {
            "key": project.key,
            "root": project.root,
            "remote": project.remote,
            "name": project.name,
        }
    return record


def tool_event(event: str, payload: dict, cfg) -> dict | None:
    """The `tool_event` part of a PostToolUse / PostToolUseFailure record; None when skipped."""
    tool_name = _text(payload.get("tool_name")) or "unknown"
    if tool_name in cfg["capture.skip_tools"]:
        return None
    tool_use_id = _text(payload.get("tool_use_id")) or f"ace-noid-{os.urandom(8).hex()}"
    response = payload.get("tool_response")
    failed = event == "PostToolUseFailure"
    error = None
    exit_code = None
    if failed:
        raw_error = payload.get("error")
        error = sanitize_value(raw_error, cfg["capture.max_response_chars"])
        m = _EXIT_CODE.search(raw_error[:200]) if isinstance(raw_error, str) else None
        exit_code = int(m.group(1)) if m else None
    elif isinstance(response, dict):
        if response.get("interrupted") or response.get("is_error"):
            failed = True
        code = response.get("exitCode", response.get("exit_code"))
        if isinstance(code, int) and not isinstance(code, bool):
            exit_code = code
            failed = failed or code != 0
        elif tool_name == "Bash" and not failed:
            exit_code = 0
    duration = payload.get("duration_ms")
    return {
        "tool_use_id": tool_use_id[:200],
        "tool_name": tool_name[:200],
        "input": sanitize_value(payload.get("tool_input"), cfg["capture.max_input_chars"]),
        "response": sanitize_value(response, cfg["capture.max_response_chars"]),
        "success": not failed,
        "exit_code": exit_code,
        "error": error,
        "is_interrupt": bool(payload.get("is_interrupt")),
        "duration_ms": duration if isinstance(duration, (int, float)) and not isinstance(duration, bool) else None,
    }


def message(role: str, text, cfg) -> dict | None:
    """A prompt or final assistant message; None when nothing is left (e.g. wholly private)."""
    if not isinstance(text, str):
        return None
    clean = sanitize(text, cfg["capture.max_message_chars"])
    if is_blank(clean):
        return None
    return {"role": role, "text": clean}
