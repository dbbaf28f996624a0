"""What the readers of Codex CLI's and Gemini CLI's session files share: reading a file of JSON
records safely, and building the tool events and messages `ace learn --transcript` learns from in
the shape the Claude Code reader (`observe.transcript`) gives them.

Contract: `read_records` never raises on content — a torn or non-object line is counted
(`unreadable_line`), one nested past `session_io.MAX_DEPTH` too (`too_deep`) — and raises
`TranscriptError`, naming the fix, only for a file that cannot be read at all or holds nothing.
A whole-file JSON document (Gemini's chats before 0.20 were one pretty-printed object) is read as
one record. Every text kept goes through the capture sanitizer (private spans, secrets, caps).

Cost: the file is read once, into memory (a session file; strings longer than the capture caps
are cut on reading, as the Claude Code reader does).
"""

from __future__ import annotations

import json
import os
import re
import stat
from typing import TYPE_CHECKING, Any

from ..redact.sanitize import sanitize, sanitize_value
from .session_io import MAX_DEPTH, TranscriptError, opened, shrink, too_deep

if TYPE_CHECKING:
    from ..core.config import Config

WHOLE_FILE_LIMIT = 256 * 1024 * 1024  # a legacy one-document chat above this is not read whole
_EXIT = re.compile(r"^(?:Exit code|Shell exit code|Exit Code):\s*(-?\d+)\s*$|Process exited with code (-?\d+)",
                   re.MULTILINE)


def exit_code_in(text: str) -> int | None:
    """The exit code a tool's output states (Codex: `Exit code: 1`, `Process exited with code 1`;
    Gemini: `Exit Code: 1`), read in its first and last 2,000 characters."""
    for part in (text[:2000], text[-2000:]):
        match = _EXIT.search(part)
        if match:
            return int(match.group(1) or match.group(2))
    return None


_HEADER = re.compile(r"^(?:Exit code|Shell exit code|Execution outcome|Wall time|Total output lines|Chunk ID|"
                     r"Process exited with code|Process running with session ID|Original token count)\b[^\n]*\n",
                     re.MULTILINE)
_TRAILER = re.compile(r"\n(?:Error|Exit Code|Signal|Background PIDs|Process Group PGID): [^\n]*$")


def command_output(text: str) -> str:
    """What a command printed, without the frame the agent's shell tool puts around it: Codex's
    header lines up to `Output:` (`Exit code: 1`, `Wall time: …`), Gemini's `Output: ` prefix, its
    `<untrusted_context>` wrapper and its trailing `Exit Code: N` / `Error: …` / `Signal: …` lines.
    The exit code is read before (`exit_code_in`); text in no such frame comes back as it was."""
    body = text.strip("\n")
    if body.startswith("<untrusted_context>") and body.endswith("</untrusted_context>"):
        body = body[len("<untrusted_context>"):-len("</untrusted_context>")].strip("\n")
    framed = False
    while (match := _HEADER.match(body)) is not None:
        body, framed = body[match.end():], True
    if framed and body.startswith("Output:"):
        body = body[len("Output:"):].lstrip("\n")
    elif body.startswith("Output: "):
        body = body[len("Output: "):]
        while (trailer := _TRAILER.search(body)) is not None:
            body = body[:trailer.start()]
        body = "" if body == "(empty)" else body
    return body


def read_records(path: str, hint: str) -> tuple[list[dict[str, Any]], dict[str, int]]:
    """(the file's JSON objects in order, {unreadable_line, too_deep} counts)."""
    with opened(path, hint) as fh:
        head = fh.read(1)
        fh.seek(0)
        lines = [raw for raw in fh if raw.strip()]
    if not lines:
        raise TranscriptError(f"{path} is empty; {hint}")
    counts = {"unreadable_line": 0, "too_deep": 0}
    records: list[dict[str, Any]] = []
    whole = whole_document(path) if head in "{[" and not _is_json(lines[0]) or head == "[" else None
    for raw in [whole] if whole is not None else lines:
        try:
            record = json.loads(raw) if isinstance(raw, str) else raw
        except ValueError:
            counts["unreadable_line"] += 1
            continue
        except RecursionError:
            counts["too_deep"] += 1
            continue
        if not isinstance(record, dict):
            counts["unreadable_line"] += 1
        elif too_deep(record):
            counts["too_deep"] += 1
        else:
            records.append(shrink(record))
    if not records:
        what = f"JSON nested too deeply to read (over {MAX_DEPTH} levels)" if counts["too_deep"] else "no JSON object"
        raise TranscriptError(f"{path} holds {what}; {hint}")
    return records, counts


def regular_file(path: str) -> bool:
    """Is `path` a regular file? A FIFO, socket or device named like a session file would block
    or never end a read: nothing here opens one."""
    try:
        return stat.S_ISREG(os.stat(path).st_mode)
    except OSError:
        return False


def _is_json(raw: str) -> bool:
    try:
        json.loads(raw)
    except (ValueError, RecursionError):
        return False
    return True


def whole_document(path: str) -> dict[str, Any] | None:
    """The file as one JSON object, when it is one (a pretty-printed document; a list, such as
    Gemini's saved `/chat save` checkpoints before they were `{history}`, comes as `{history: …}`);
    else None."""
    try:
        if not regular_file(path) or os.path.getsize(path) > WHOLE_FILE_LIMIT:
            return None
        with open(path, encoding="utf-8", errors="replace") as fh:
            value = json.load(fh)
    except (OSError, ValueError, RecursionError):
        return None
    if isinstance(value, list):
        return {"history": value}
    return value if isinstance(value, dict) else None


class Builder:
    """Collects one agent's events and messages, sanitized and numbered as the Claude Code reader
    numbers them (`id` in reading order, `created_at` epoch seconds)."""

    def __init__(self, cfg: Config, agent_id: str = "", agent_type: str | None = None):
        self.cap_in = cfg["capture.max_input_chars"]
        self.cap_out = cfg["capture.max_response_chars"]
        self.cap_msg = cfg["capture.max_message_chars"]
        self.skip_tools = set(cfg["capture.skip_tools"])
        self.agent_id, self.agent_type = agent_id, agent_type
        self.events: list[dict[str, Any]] = []
        self.messages: list[dict[str, Any]] = []
        self.foreign: list[dict[str, Any]] = []
        self.seq = 0

    def _next(self) -> int:
        self.seq += 1
        return self.seq

    def prompt(self, text: str, at: float, uuid: str, by: str = "user") -> None:
        clean = sanitize(text, self.cap_msg)
        if clean.strip():
            self.messages.append({"id": self._next(), "role": "user", "text": clean, "created_at": at,
                                  "uuid": uuid, "by": by})

    def reply(self, text: str, at: float, uuid: str | None = None) -> None:
        clean = sanitize(text, self.cap_msg)
        if clean.strip():
            self.messages.append({"id": self._next(), "role": "assistant", "text": clean, "created_at": at,
                                  "uuid": uuid})

    def skipped_text(self, text: str, at: float) -> None:
        if len(self.foreign) < 200:
            self.foreign.append({"text": sanitize(text, self.cap_msg), "at": at})

    def call(self, use_id: str, name: str, tool_input: object, *, output: object, failed: bool,
             exit_code: int | None, at: float, started: float | None, interrupted: bool = False) -> None:
        """One finished (or interrupted: `output` None) call, already mapped to our tool name."""
        if name in self.skip_tools:
            return
        body = output if isinstance(output, str) else json.dumps(output, ensure_ascii=False) if output else ""
        self.events.append({
            "id": self._next(), "tool_use_id": use_id, "tool_name": name,
            "input": sanitize_value(tool_input, self.cap_in),
            "response": None if failed else sanitize_value(output, self.cap_out),
            "success": not failed,
            "error": (sanitize(body, self.cap_out) if body else "interrupted (no result)" if interrupted
                      else "failed") if failed else None,
            "exit_code": exit_code, "is_interrupt": interrupted,
            "duration_ms": round((at - started) * 1000, 1) if at and started and at >= started else None,
            "created_at": at,
        })

    def agent(self, skips: dict[str, int]) -> dict[str, Any]:
        self.events.sort(key=lambda e: (e["created_at"], e["id"]))
        return {"events": self.events, "messages": self.messages, "agent_id": self.agent_id,
                "agent_type": self.agent_type, "skips": {k: v for k, v in skips.items() if v},
                "foreign": self.foreign}
