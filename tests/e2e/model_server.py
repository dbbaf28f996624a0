"""A scripted Anthropic Messages API server for driving the real Claude Code CLI offline.

The server listens on 127.0.0.1 (random free port) and answers ``POST /v1/messages`` with
SSE streams built from a *script*: a list of steps, each either a list of tool calls
(``[{"name": "Bash", "input": {"command": "echo hi"}}]``) or a final text (``"Done."``).

Which step answers a request is derived from the request itself, not from a global counter:
every step the server sends is remembered by its signature (the ``toolu_…`` ids it generated,
or the final text), and a main-loop request is answered with the step after the latest one
whose signature appears among the assistant turns of its ``messages``.  Retries therefore get
the same step again, side requests never consume steps, and a resumed session (whose history
holds the previous run's steps) starts the new script at step 0.  Call :meth:`set_script`
before each ``claude`` run.

Side requests (everything that is not the main agent loop) are recognised by their shape —
see :func:`classify_request`, which documents what Claude Code 2.1.197 actually sends.
"""

from __future__ import annotations

import json
import re
import threading
import uuid
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import urlsplit

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
    reply: Any = None  # the content blocks / text that were sent back
    error: str | None = None  # set when the server failed to answer

    @property
    def session_id(self) -> str | None:
        """Claude Code's ``X-Claude-Code-Session-Id`` header."""
        for key, value in self.headers.items():
            if key.lower() == "x-claude-code-session-id":
                return value
        return None

    @property
    def query(self) -> str:
        return urlsplit(self.path).query


# ---------------------------------------------------------------------------------------------
# request inspection helpers


def describe_request(r: RecordedRequest) -> str:
    line = f"{r.method} {r.path} kind={r.kind}"
    if isinstance(r.body, dict):
        line += (f" model={r.body.get('model')} max_tokens={r.body.get('max_tokens')}"
                 f" tools={len(r.body.get('tools') or [])}"
                 f" messages={len(r.body.get('messages') or [])}")
    if r.step is not None:
        line += f" step={r.step}"
    if r.error:
        line += f" ERROR={r.error}"
    return line


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


_COMPACT_RE = re.compile(
    r"(create a detailed summary of the conversation|summary of the conversation so far|"
    r"your task is to create a detailed summary)",
    re.IGNORECASE,
)


def classify_request(method: str, path: str, body: Any) -> str:
    """Tell the main agent loop from everything else Claude Code sends.

    What Claude Code 2.1.197 sends in ``-p`` mode against ``ANTHROPIC_BASE_URL`` (observed with
    this server; ``CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC`` set or not makes no difference):

    * ``HEAD /`` once at start-up (a connectivity probe) — answered ``200 {}``;
    * main loop: ``POST /v1/messages?beta=true``, ``stream: true``, ``max_tokens`` 64000, the full
      ``tools`` list (~24 tools) and ``messages`` that may contain ``role: "system"`` entries
      (e.g. "Available agent types …");
    * ``/compact`` (``-p "/compact" --resume ID``): the same shape, tools included, but the last
      user message carries "CRITICAL: Respond with TEXT ONLY … Your task is to create a
      detailed summary of the conversation so far …" — answered with an
      ``<analysis>…</analysis><summary>…</summary>`` text;
    * no title/topic, quota-probe (``max_tokens: 1``) or ``count_tokens`` requests were seen in
      ``-p`` mode.  Should a later version send them, they are recognised by shape (no
      ``tools``, or ``max_tokens`` ≤ 1, or the ``/count_tokens`` path), answered harmlessly and
      never consume script steps.
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
    errors: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        self._lock = threading.Lock()
        self._emitted_ids: dict[str, int] = {}
        self._emitted_texts: dict[str, int] = {}
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle ------------------------------------------------------------------------
    def start(self) -> ScriptedModelServer:
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

    def __enter__(self) -> ScriptedModelServer:
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
        """Replace the script (once per ``claude`` run).  Recorded requests are kept.

        Each step is either a final text (``str``, answered with ``stop_reason: end_turn``) or a
        list of tool calls ``{"name": ..., "input": {...}}`` (answered with ``tool_use``; ids
        are generated unless a call gives its own ``"id"``).
        """
        for step in steps:
            if not isinstance(step, str):
                for call in step:
                    if not isinstance(call, dict) or "name" not in call:
                        raise ValueError(f"bad tool call in script: {call!r}")
        with self._lock:
            self.script = list(steps)
            self._emitted_ids = {}
            self._emitted_texts = {}

    def reset(self) -> None:
        with self._lock:
            self.requests.clear()

    def of_kind(self, kind: str) -> list[RecordedRequest]:
        with self._lock:
            return [r for r in self.requests if r.kind == kind]

    @property
    def main_requests(self) -> list[RecordedRequest]:
        return self.of_kind(MAIN)

    def summary(self, requests: list[RecordedRequest] | None = None) -> str:
        """One line per recorded request, for assertion messages."""
        with self._lock:
            reqs = list(self.requests if requests is None else requests)
        return "\n".join(describe_request(r) for r in reqs)

    def _record(self, req: RecordedRequest) -> None:
        with self._lock:
            self.requests.append(req)

    def step_for(self, body: dict[str, Any]) -> tuple[int, Any]:
        """Return ``(index, step)`` for a main-loop request (see the module docstring)."""
        done = -1
        with self._lock:
            script = list(self.script)
            ids, texts = dict(self._emitted_ids), dict(self._emitted_texts)
        for message in body.get("messages") or []:
            if message.get("role") != "assistant":
                continue
            for block in _content_blocks(message):
                if block.get("type") == "tool_use" and block.get("id") in ids:
                    done = max(done, ids[block["id"]])
                elif block.get("type") == "text" and block.get("text") in texts:
                    done = max(done, texts[block["text"]])
        index = done + 1
        if index < len(script):
            return index, script[index]
        # Past the end of the script: repeat the final text if there is one.
        final = script[-1] if script and isinstance(script[-1], str) else DEFAULT_FINAL_TEXT
        return index, final

    def _remember(self, index: int, blocks: list[dict[str, Any]]) -> None:
        with self._lock:
            for block in blocks:
                if block["type"] == "tool_use":
                    self._emitted_ids[block["id"]] = index
                elif block["type"] == "text":
                    self._emitted_texts[block["text"]] = max(
                        index, self._emitted_texts.get(block["text"], -1)
                    )


class _Handler(BaseHTTPRequestHandler):
    owner: ScriptedModelServer
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - silence stderr
        pass

    # -- plumbing ----------------------------------------------------------------------------
    def _read_body(self) -> Any:
        if "chunked" in (self.headers.get("Transfer-Encoding") or "").lower():
            raw = b""
            while True:
                size = int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)
                if size == 0:
                    self.rfile.readline()
                    break
                raw += self.rfile.read(size)
                self.rfile.readline()
        else:
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
        try:
            self._answer(rec, body, kind)
        except Exception as exc:  # a bug here must show up in the test, not as a hang
            rec.error = f"{type(exc).__name__}: {exc}"
            self.owner.errors.append(rec.error)
            # 400 is not retried by the client, so a broken script fails fast.
            self._json(400, {"type": "error",
                             "error": {"type": "invalid_request_error", "message": rec.error}})

    def _answer(self, rec: RecordedRequest, body: Any, kind: str) -> None:
        if kind == COUNT_TOKENS:
            self._json(200, {"input_tokens": 100})
            return
        if kind == OTHER:
            self._json(200, {})
            return
        model = body.get("model", "claude-scripted")
        if kind == MAIN:
            rec.step, step = self.owner.step_for(body)
            if isinstance(step, str):
                message = build_message(model, [{"type": "text", "text": step}], "end_turn")
            else:
                message = build_message(model, tool_blocks(step), "tool_use")
            rec.reply = message["content"]
            self.owner._remember(rec.step, message["content"])
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
