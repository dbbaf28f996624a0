"""The hook's records: a parsed hook input (`hook_input.HookInput`) turned into the one record the
store writes (or the spool keeps), a `CaptureRecord` (`core/_types`).

Contract: every string of a record — content, ids, names, paths, the event detail — has been
through `redact.sanitize` (`sanitize`, `sanitize_value`, `short_text`): UTF-8 repaired, `<private>`
spans dropped, secrets redacted, size capped. Raw payload text never leaves here, so a record that
ends up in the spool (store unavailable) is as clean as one in the store. Nothing is dropped for
its shape (`sanitize_value` cuts with a marker). A call whose payload the hook could not keep (over
the stdin cap, out of budget: `HookInput.dropped`) is still recorded, as a drop (`DROPPED`), so what
is learned from the session knows its evidence is incomplete.

Cost: one walk of the payload's values (bounded by the item budget) plus the redactor; stdlib and
`redact` only, no `typing` at run time (the hook imports this module).
"""

import os
import re

from ..capture.tools import SHELL_TOOLS
from ..redact.sanitize import DROPPED, INT64, PATH_CHARS, big_int, is_blank, sanitize, sanitize_value, short_text

TYPE_CHECKING = False  # not `typing.TYPE_CHECKING`: the hooks must not import `typing` (~3 ms)
if TYPE_CHECKING:
    from typing import Literal

    from ..core._types import CapturedMessage, CaptureRecord, ToolEvent
    from ..core.config import Config
    from ..core.project import Project
    from .hook_input import HookInput

_EXIT_CODE = re.compile(r"exit code:?\s*(-?\d+)", re.IGNORECASE)


def _text(value: object) -> str | None:
    return short_text(value, PATH_CHARS)


def _number(value: object) -> int | float | None:
    """A number SQLite can hold, or None (bools, huge ints and non-numbers are not durations)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    if isinstance(value, int) and not INT64[0] <= value <= INT64[1]:
        return None
    return value


def base_record(inp: "HookInput", at: float, project: "Project | None") -> "CaptureRecord":
    """The fields every event's record has; the handler adds `detail`, `message` or `tool_event`."""
    record: CaptureRecord = {
        "v": 1,
        "at": at,
        "event": inp.event,
        "session_id": _text(inp.session_id),
        "agent_id": _text(inp.agent_id),
        "agent_type": _text(inp.agent_type),
        "detail": None,
        "project": None,
        "session": {
            "cwd": _text(inp.cwd),
            "transcript_path": _text(inp.transcript_path),
            "permission_mode": _text(inp.permission_mode),
            "agent_type": _text(inp.agent_type),
        },
    }
    if project is not None:
        record["project"] = {
            "key": short_text(project.key, PATH_CHARS),
            "root": short_text(project.root, PATH_CHARS),
            "remote": short_text(project.remote, PATH_CHARS),
            "name": short_text(project.name, PATH_CHARS),
        }
    return record


def tool_event(inp: "HookInput", cfg: "Config") -> "ToolEvent | None":
    """The `tool_event` part of a PostToolUse / PostToolUseFailure record; None when skipped."""
    if inp.tool_name is not None and inp.tool_name in cfg["capture.skip_tools"]:
        return None
    tool_name = short_text(inp.tool_name) or "unknown"
    tool_use_id = short_text(inp.tool_use_id) or f"ace-noid-{os.urandom(8).hex()}"
    if inp.dropped:  # the payload could not be kept: record that it was dropped, and nothing of it
        return {"tool_use_id": tool_use_id, "tool_name": tool_name, "input": None,
                "response": f"{DROPPED}: {short_text(inp.dropped)}; what the tool returned is unknown]",
                "success": inp.event != "PostToolUseFailure", "exit_code": None, "error": None,
                "is_interrupt": inp.is_interrupt, "duration_ms": _number(inp.duration_ms)}
    response = inp.tool_response
    failed = inp.event == "PostToolUseFailure"
    error = None
    exit_code: int | None = None
    if failed:
        raw_error = inp.error
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
        elif tool_name in SHELL_TOOLS and not failed:
            exit_code = 0  # a shell call whose response carries no code ran without error
    if exit_code is not None and _number(exit_code) is None:
        # The response text keeps the number; the column can't, and the record must not be lost.
        error = error or f"[ace: exit code {big_int(exit_code)}]"
        exit_code = None
    return {
        "tool_use_id": tool_use_id,
        "tool_name": tool_name,
        "input": sanitize_value(inp.tool_input, cfg["capture.max_input_chars"]),
        "response": sanitize_value(response, cfg["capture.max_response_chars"]),
        "success": not failed,
        "exit_code": exit_code,
        "error": error,
        "is_interrupt": inp.is_interrupt,
        "duration_ms": _number(inp.duration_ms),
    }


def message(role: "Literal['user', 'assistant']", text: str | None, cfg: "Config") -> "CapturedMessage | None":
    """A prompt or final assistant message; None when nothing is left (e.g. wholly private)."""
    if not isinstance(text, str):
        return None
    clean = sanitize(text, cfg["capture.max_message_chars"])
    if is_blank(clean):
        return None
    return {"role": role, "text": clean}
