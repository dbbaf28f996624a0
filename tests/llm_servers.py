"""A scripted chat-model server for the LLM provider tests: real HTTP on 127.0.0.1, stdlib only.

Answers OpenAI's `POST /v1/chat/completions` and Anthropic's `POST /v1/messages` (JSON, or SSE
when the request asks to stream) with the next reply of its script. A reply is a string (the
assistant text) or `(status, body)` for an HTTP error. The last reply repeats. `delay` holds
every answer back (for timeouts); `stop()` releases held answers at once.
"""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from e2e.model_server import build_message, sse_events


class ScriptedChatServer:
    def __init__(self, replies: list, delay: float = 0.0):
        self.replies = list(replies)
        self.delay = delay
        self.requests: list[dict] = []
        self._lock = threading.Lock()
        self._released = threading.Event()
        self._httpd: ThreadingHTTPServer | None = None

    # -- lifecycle ---------------------------------------------------------------------------
    def start(self) -> ScriptedChatServer:
        owner = self

        class Handler(_Handler):
            server_owner = owner

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
        return self

    def stop(self) -> None:
        self._released.set()
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()

    @property
    def url(self) -> str:
        assert self._httpd is not None
        return f"http://127.0.0.1:{self._httpd.server_address[1]}"

    # -- script ------------------------------------------------------------------------------
    def next_reply(self, body: dict):
        with self._lock:
            index = len([r for r in self.requests if r["kind"] != "other"]) - 1
            return self.replies[min(index, len(self.replies) - 1)]

    def record(self, path: str, headers: dict, body) -> dict:
        kind = "openai" if path.rstrip("/").endswith("/chat/completions") else (
            "anthropic" if path.split("?")[0].rstrip("/").endswith("/messages") else "other")
        entry = {"path": path, "headers": headers, "body": body, "kind": kind, "at": time.monotonic()}
        with self._lock:
            self.requests.append(entry)
        return entry


class _Handler(BaseHTTPRequestHandler):
    server_owner: ScriptedChatServer
    protocol_version = "HTTP/1.1"

    def log_message(self, format, *args):  # noqa: A002 - keep test output clean
        pass

    def _send(self, status: int, payload: bytes, content_type: str) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        try:
            self.wfile.write(payload)
            self.wfile.flush()
        except OSError:
            pass  # the client gave up (timeout tests)

    def do_POST(self):  # noqa: N802
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            body = json.loads(raw) if raw else None
        except ValueError:
            body = raw.decode("utf-8", "replace")
        owner = self.server_owner
        entry = owner.record(self.path, {k.lower(): v for k, v in self.headers.items()}, body)
        if entry["kind"] == "other":
            return self._send(404, b'{"error": "not found"}', "application/json")
        reply = owner.next_reply(body)
        if owner.delay:
            owner._released.wait(owner.delay)
        if isinstance(reply, tuple):
            status, payload = reply
            return self._send(status, json.dumps(payload).encode(), "application/json")
        model = (body or {}).get("model", "scripted")
        if entry["kind"] == "openai":
            message = {
                "id": "chatcmpl-scripted", "object": "chat.completion", "created": int(time.time()), "model": model,
                "choices": [{"index": 0, "finish_reason": "stop",
                             "message": {"role": "assistant", "content": reply}}],
                "usage": {"prompt_tokens": 321, "completion_tokens": 45, "total_tokens": 366},
            }
            return self._send(200, json.dumps(message).encode(), "application/json")
        message = build_message(model, [{"type": "text", "text": reply}], "end_turn")
        if (body or {}).get("stream"):
            return self._send(200, sse_events(message), "text/event-stream")
        return self._send(200, json.dumps(message).encode(), "application/json")

    def do_HEAD(self):  # noqa: N802
        self._send(200, b"{}", "application/json")
