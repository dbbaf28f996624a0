"""Turn a parsed hook input (`hooks.hook_input.HookInput`) into the one record the store writes
(or the spool keeps): a `CaptureRecord` (`_types`).

Contract: every string of a record — content, ids, names, paths, the event detail — has been
through `text.sanitize`/`redact_value`/`short_text`: UTF-8 repaired, `<private>` spans dropped,
secrets redacted, size capped. Raw payload text never leaves here, so a record that ends up in
the spool (store unavailable) is as clean as one in the store. Nothing is dropped for its
shape: nesting deeper than `MAX_DEPTH`, more than a bounded number of items, integers SQLite
cannot hold — each is cut or replaced, with an `[ace: …]` marker saying so (`CUT_MARKS`). A call
whose payload the hook could not keep (over the stdin cap, out of budget: `HookInput.dropped`) is
still recorded, as a drop (`DROPPED`), so what is learned from the session knows its evidence is
incomplete.

Cost: one walk of the payload's values (bounded by the item budget) plus the redactor.
"""

import json
import os
import re

from .redact import mark_clean, redact, redact_value
from .text import cap, is_blank, repair_utf8, sanitize, strip_private
from .tools import SHELL_TOOLS

TYPE_CHECKING = False  # not `typing.TYPE_CHECKING`: the hooks must not import `typing` (~3 ms)
if TYPE_CHECKING:
    from typing import Literal

    from ..core._types import CapturedMessage, CaptureRecord, ToolEvent
    from ..core.config import Config
    from ..core.project import Project
    from ..hooks.hook_input import HookInput  # the type only: capture imports nothing from hooks

_EXIT_CODE = re.compile(r"exit code:?\s*(-?\d+)", re.IGNORECASE)
# What a tool event's response is when the hook could not keep the call's record (issue 35, "fail
# closed"): the session's evidence is incomplete from here, and `observe/origins.py` treats every
# risky part learned from it as someone else's. The other marks say part of a value was cut.
DROPPED = "[ace: record dropped"
CUT_MARKS = ("chars cut]", "more items cut]", "levels, cut]", DROPPED)
MAX_DEPTH = 64  # deeper structure is replaced by a marker (json/recursion would fail near 1000)
_INT64 = (-(1 << 63), (1 << 63) - 1)
ID_CHARS = 200  # ids and names
PATH_CHARS = 4096


def _deep_marker(depth: int) -> str:
    return f"[ace: nested deeper than {depth} levels, cut]"


def _clean_leaves(value: object, limit: int, depth: int = 0, budget: list[int] | None = None) -> object:
    """Repair, de-privatize and pre-cap every string leaf (keys too: redacted) before redaction;
    cut what is nested deeper than MAX_DEPTH or lies beyond the item budget, with a marker."""
    if budget is None:
        budget = [max(1000, limit // 2)]  # each item costs ≥ 2 chars of JSON: more can't be kept
    if isinstance(value, str):
        return cap(strip_private(repair_utf8(value)), limit)
    if isinstance(value, bool) or value is None or isinstance(value, float):
        return value
    if isinstance(value, int):
        return value if _INT64[0] <= value <= _INT64[1] else _big_int(value)
    if not isinstance(value, (dict, list, tuple)):
        return cap(repair_utf8(str(value)), limit)
    if depth >= MAX_DEPTH:
        return _deep_marker(MAX_DEPTH)
    items = value.items() if isinstance(value, dict) else enumerate(value)
    out_d: dict[str, object] = {}
    out_l: list[object] = []
    for n, (k, v) in enumerate(items):
        budget[0] -= 1
        if budget[0] < 0:
            left = len(value) - n
            note = f"[ace: {left} more items cut]"
            if isinstance(value, dict):
                out_d["…"] = note
            else:
                out_l.append(note)
            break
        clean = _clean_leaves(v, limit, depth + 1, budget)
        if isinstance(value, dict):
            out_d[redact(cap(repair_utf8(str(k)), ID_CHARS))] = clean
        else:
            out_l.append(clean)
    return out_d if isinstance(value, dict) else out_l


def _big_int(value: int) -> str:
    digits = str(value) if value.bit_length() < 4000 else f"a {value.bit_length()}-bit integer"
    return f"{digits[:60]} [ace: integer too large to store as a number]"


def sanitize_value(value: object, limit: int) -> str | None:
    """A JSON-able value → redacted, capped text (JSON when it fits within `limit`)."""
    if value is None:
        return None
    if isinstance(value, str):
        return sanitize(value, limit)
    clean = redact_value(_clean_leaves(value, limit))
    text = json.dumps(clean, ensure_ascii=False, separators=(",", ":"), default=str)
    return mark_clean(cap(text, limit))  # joined from redacted leaves: the store won't rescan it


def short_text(value: object, limit: int = ID_CHARS) -> str | None:
    """An id, name, path or detail: repaired, redacted, capped; None for non-strings."""
    if not isinstance(value, str):
        return None
    return cap(redact(strip_private(repair_utf8(value))), limit)


def _text(value: object) -> str | None:
    return short_text(value, PATH_CHARS)


def _number(value: object) -> int | float | None:
    """A number SQLite can hold, or None (bools, huge ints and non-numbers are not durations)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    if isinstance(value, int) and not _INT64[0] <= value <= _INT64[1]:
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
        error = error or f"[ace: exit code {_big_int(exit_code)}]"
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
