"""A scripted Anthropic Messages API server for driving the real Claude Code CLI offline.

The server listens on 127.0.0.1 (random free port) and answers ``POST /v1/messages`` with
SSE streams built from a *script*: a list of steps, each either a list of tool calls
(``[{"name": "Bash", "input": {"command": "echo hi"}}]``) or a final text (``"Done."``).

Which step answers a request is derived from the request itself, not from a global counter:
the step index is the number of assistant turns that follow the last real user prompt in
``messages``.  Retries therefore get the same answer again, and side requests never consume
steps.

Side requests (everything that is not the main agent loop) are recognised by their shape —
see :func:`classify_request`, which documents what Claude Code 2.1.197 actually sends.
"""

from __future__ import annotations

import itertools
import json
import re
import threading
import uuid
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import urlsplit

Step = "str | list[dict[str, Any]]"

MAIN = "main"
COMPACT = "compact"
SIDE = "side"
COUNT_TOKENS = "count_tokens"
OTHER = "other"

DEFAULT_FINAL_TEXT = "Done."
COMPACT_SUMMARY = (
    "<analysis>Scripted analysis.</analysis>\n"
    "<summary>\n1. Primary Request and Intent: scripted e2e session.\n"
    "2. Pending Tasks: none.\n</summary>"
)
SIDE_TEXT = "Scripted side answer"


@dataclass
class RecordedRequest:
    method: str
    path: str
    headers: dict[str, str]
    body: Any  # parsed JSON (dict) or raw text / None
    kind: str = OTHER
    step: int | None = None  # script step answered (main requests only)
    reply: Any = None  # the step / text that was sent back

    @property
    def query(self) -> str:
        return urlsplit(self.path).query


# ---------------------------------------------------------------------------------------------
# request inspection helpers


def _content_blocks(message: dict[str, Any]) -> list[dict[str, Any]]:
    content = message.get("content")
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    if isinstance(content, list):
        return [b for b in content if isinstance(b, dict)]
    return []


def message_text(message: dict[str, Any]) -> str:
    return "\n".join(b.get("text", "") for b in _content_blocks(message) if b.get("type") == "text")


def system_text(body: dict[str, Any]) -> str:
    system = body.get("system")
    if isinstance(system, str):
        return system
    if isinstance(system, list):
        return "\n".join(b.get("text", "") for b in system if isinstance(b, dict))
    return ""


def is_tool_result_turn(message: dict[str, Any]) -> bool:
    return message.get("role") == "user" and any(
        b.get("type") == "tool_result" for b in _content_blocks(message)
    )


def assistant_turns_since_prompt(messages: list[dict[str, Any]]) -> int:
    """Number of assistant turns after the last user message that is a real prompt.

    A "real prompt" is a user message without ``tool_result`` blocks.  Consecutive assistant
    messages count as one turn (Claude Code may split one model answer into several messages).
    ``role: "system"`` entries are ignored.
    """
    start = 0
    for i, m in enumerate(messages):
        if m.get("role") == "user" and not is_tool_result_turn(m):
            start = i + 1
    turns = 0
    prev_role = None
    for m in messages[start:]:
        role = m.get("role")
        if role == "assistant" and prev_role != "assistant":
            turns += 1
        if role in ("user", "assistant"):
            prev_role = role
    return turns


_COMPACT_RE = re.compile(
    r"(create a detailed summary of the conversation|summary of the conversation so far|"
    r"your task is to create a detailed summary)",
    re.IGNORECASE,
)


def classify_request(method: str, path: str, body: Any) -> str:
    """Tell the main agent loop from everything else Claude Code sends.

    Observed with Claude Code 2.1.197 in ``-p`` mode (see tests/e2e/test_harness.py):

    * main loop: ``POST /v1/messages?beta=true``, ``stream: true``, a non-empty ``tools`` list
      and the big "You are Claude Code …" system prompt;
    * compaction (``/compact``): the whole conversation followed by a user message asking to
      "create a detailed summary of the conversation", sent without tools;
    * side requests (title/topic generation, quota probe, …): no ``tools`` and/or a tiny
      ``max_tokens``; they are answered with a short text and never consume script steps;
    * ``/v1/messages/count_tokens`` — answered with a token count.
    """
    if method != "POST":
        return OTHER
    route = urlsplit(path).path.rstrip("/")
    if route.endswith("/count_tokens"):
        return COUNT_TOKENS
    if not route.endswith("/v1/messages") or not isinstance(body, dict):
        return OTHER
    messages = body.get("messages") or []
    last_user = next((m for m in reversed(messages) if m.get("role") == "user"), None)
    if last_user is not None and _COMPACT_RE.search(message_text(last_user)):
        return COMPACT
    max_tokens = body.get("max_tokens") or 0
    if not body.get("tools") or max_tokens <= 1:
        return SIDE
    return MAIN


# ---------------------------------------------------------------------------------------------
# response builders

_ids = itertools.count(1)


def _new_id(prefix: str) -> str:
    return f"{prefix}_{uuid.uuid4().hex[:24]}"


def tool_blocks(calls: list[dict[str, Any]]) -> list[dict[str, Any]]:
    blocks = []
    for call in calls:
        blocks.append(
            {
                "type": "tool_use",
                "id": call.get("id") or _new_id("toolu"),
                "name": call["name"],
                "input": call.get("input", {}),
            }
        )
    return blocks


def build_message(model: str, blocks: list[dict[str, Any]], stop_reason: str) -> dict[str, Any]:
    return {
        "id": _new_id("msg"),
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": blocks,
        "stop_reason": stop_reason,
        "stop_sequence": None,
        "usage": {"input_tokens": 100, "output_tokens": 20},
    }


def sse_events(message: dict[str, Any]) -> bytes:
    def ev(name: str, data: dict[str, Any]) -> str:
        return f"event: {name}\ndata: {json.dumps(data)}\n\n"

    start = dict(message, content=[], stop_reason=None, stop_sequence=None)
    start["usage"] = {
        "input_tokens": message["usage"]["input_tokens"],
        "output_tokens": 1,
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": 0,
    }
    out = [ev("message_start", {"type": "message_start", "message": start})]
    for index, block in enumerate(message["content"]):
        if block["type"] == "text":
            out.append(
                ev(
                    "content_block_start",
                    {"type": "content_block_start", "index": index,
                     "content_block": {"type": "text", "text": ""}},
                )
            )
            out.append(
                ev(
                    "content_block_delta",
                    {"type": "content_block_delta", "index": index,
                     "delta": {"type": "text_delta", "text": block["text"]}},
                )
            )
        elif block["type"] == "tool_use":
            out.append(
                ev(
                    "content_block_start",
                    {"type": "content_block_start", "index": index,
                     "content_block": {"type": "tool_use", "id": block["id"],
                                       "name": block["name"], "input": {}}},
                )
            )
            out.append(
                ev(
                    "content_block_delta",
                    {"type": "content_block_delta", "index": index,
                     "delta": {"type": "input_json_delta",
                               "partial_json": json.dumps(block["input"])}},
                )
            )
        out.append(ev("content_block_stop", {"type": "content_block_stop", "index": index}))
    out.append(
        ev(
            "message_delta",
            {"type": "message_delta",
             "delta": {"stop_reason": message["stop_reason"], "stop_sequence": None},
             "usage": {"output_tokens": message["usage"]["output_tokens"]}},
        )
    )
    out.append(ev("message_stop", {"type": "message_stop"}))
    return "".join(out).encode()


# ---------------------------------------------------------------------------------------------
# the server


@dataclass
class ScriptedModelServer:
    """Start with :meth:`start`, stop with :meth:`stop`; set the script with :meth:`set_script`."""

    script: list[Any] = field(default_factory=list)
    compact_summary: str = COMPACT_SUMMARY
    side_text: str = SIDE_TEXT
    host: str = "127.0.0.1"
    requests: list[RecordedRequest] = field(default_factory=list)

    def __post_init__(self) -> None:
        self._lock = threading.Lock()
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle ------------------------------------------------------------------------
    def start(self) -> "ScriptedModelServer":
        server = self

        class Handler(_Handler):
            owner = server

        self._httpd = ThreadingHTTPServer((self.host, 0), Handler)
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None

    def __enter__(self) -> "ScriptedModelServer":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def port(self) -> int:
        assert self._httpd is not None, "server not started"
        return self._httpd.server_address[1]

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    # -- script & records -----------------------------------------------------------------
    def set_script(self, steps: list[Any]) -> None:
        """Replace the script (typically once per ``claude`` run) and forget nothing else."""
        with self._lock:
            self.script = list(steps)

    def reset(self) -> None:
        with self._lock:
            self.requests.clear()

    def of_kind(self, kind: str) -> list[RecordedRequest]:
        with self._lock:
            return [r for r in self.requests if r.kind == kind]

    @property
    def main_requests(self) -> list[RecordedRequest]:
        return self.of_kind(MAIN)

    def _record(self, req: RecordedRequest) -> None:
        with self._lock:
            self.requests.append(req)

    def step_for(self, body: dict[str, Any]) -> tuple[int, Any]:
        index = assistant_turns_since_prompt(body.get("messages") or [])
        with self._lock:
            script = list(self.script)
        if index < len(script):
            return index, script[index]
        # Past the end of the script: repeat the final text if there is one.
        final = script[-1] if script and isinstance(script[-1], str) else DEFAULT_FINAL_TEXT
        return index, final


class _Handler(BaseHTTPRequestHandler):
    owner: ScriptedModelServer
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - silence stderr
        pass

    # -- plumbing ----------------------------------------------------------------------------
    def _read_body(self) -> Any:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        if not raw:
            return None
        try:
            return json.loads(raw)
        except ValueError:
            return raw.decode("utf-8", "replace")

    def _send(self, status: int, payload: bytes, content_type: str) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(payload)))
        self.send_header("request-id", _new_id("req"))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(payload)
            self.wfile.flush()

    def _json(self, status: int, obj: Any) -> None:
        self._send(status, json.dumps(obj).encode(), "application/json")

    def _record(self, body: Any, kind: str) -> RecordedRequest:
        rec = RecordedRequest(
            method=self.command, path=self.path, headers=dict(self.headers.items()),
            body=body, kind=kind,
        )
        self.owner._record(rec)
        return rec

    # -- verbs -------------------------------------------------------------------------------
    def do_GET(self) -> None:  # noqa: N802
        self._record(None, OTHER)
        self._json(200, {})

    def do_HEAD(self) -> None:  # noqa: N802
        self._record(None, OTHER)
        self._json(200, {})

    def do_POST(self) -> None:  # noqa: N802
        body = self._read_body()
        kind = classify_request("POST", self.path, body)
        rec = self._record(body, kind)
        if kind == COUNT_TOKENS:
            self._json(200, {"input_tokens": 100})
            return
        if kind == OTHER:
            self._json(200, {})
            return
        model = body.get("model", "claude-scripted")
        if kind == MAIN:
            rec.step, step = self.owner.step_for(body)
            rec.reply = step
            if isinstance(step, str):
                message = build_message(model, [{"type": "text", "text": step}], "end_turn")
            else:
                message = build_message(model, tool_blocks(step), "tool_use")
        elif kind == COMPACT:
            rec.reply = self.owner.compact_summary
            message = build_message(
                model, [{"type": "text", "text": self.owner.compact_summary}], "end_turn"
            )
        else:
            rec.reply = self.owner.side_text
            message = build_message(model, [{"type": "text", "text": self.owner.side_text}],
                                    "end_turn")
        if body.get("stream"):
            self._send(200, sse_events(message), "text/event-stream")
        else:
            self._json(200, message)
