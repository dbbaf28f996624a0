"""Scripted local model endpoints for driving the real Codex CLI and Gemini CLI offline.

* :class:`ScriptedResponsesServer` speaks OpenAI's Responses API (``POST /v1/responses``, SSE),
  which Codex 0.169 uses for a custom provider (``[model_providers.X] base_url = …,
  wire_api = "responses"``).
* :class:`ScriptedGeminiServer` speaks the Gemini API (``POST /v1beta/models/M:streamGenerateContent
  ?alt=sse`` and ``:generateContent``), which Gemini CLI 0.61 calls at ``GOOGLE_GEMINI_BASE_URL``.

A script is a list of steps: a list of tool calls (``[{"name": "exec_command", "args": {...}}]``)
or a final text. The step that answers a main request is the number of tool results already in
the request's history (so a retry gets the same step); requests that are not the agent's main loop
(Gemini's routing and next-speaker checks: no tools in them) get a short JSON text. Every request
is recorded (``requests``), main ones marked ``main=True``.
"""

from __future__ import annotations

import json
import threading
import uuid
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

SIDE_TEXT = '{"reasoning": "scripted", "next_speaker": "user", "model_choice": "flash"}'


@dataclass
class Recorded:
    path: str
    body: Any
    main: bool = False
    step: int | None = None

    def text(self) -> str:
        return json.dumps(self.body, ensure_ascii=False)


class _Base:
    def __init__(self) -> None:
        self.script: list[Any] = ["Done."]
        self.requests: list[Recorded] = []
        self.errors: list[str] = []
        self._lock = threading.Lock()
        self._server: ThreadingHTTPServer | None = None

    def set_script(self, steps: list[Any]) -> None:
        with self._lock:
            self.script = list(steps)

    def main_requests(self) -> list[Recorded]:
        return [r for r in self.requests if r.main]

    @property
    def url(self) -> str:
        assert self._server is not None
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def start(self):
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - silence stderr
                pass

            def do_GET(self) -> None:  # noqa: N802
                owner.requests.append(Recorded(self.path, None))
                self.send_response(404)
                self.send_header("content-length", "0")
                self.end_headers()

            def do_POST(self) -> None:  # noqa: N802
                raw = self.rfile.read(int(self.headers.get("content-length") or 0))
                try:
                    body = json.loads(raw)
                except ValueError:
                    body = raw.decode("utf-8", "replace")
                rec = Recorded(self.path, body)
                owner.requests.append(rec)
                try:
                    status, ctype, data = owner.answer(rec)
                except Exception as exc:  # noqa: BLE001 - reported through `errors`
                    owner.errors.append(f"{type(exc).__name__}: {exc}")
                    status, ctype, data = 500, "application/json", b'{"error": "scripted server failed"}'
                self.send_response(status)
                self.send_header("content-type", ctype)
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()

    def step(self, done: int) -> Any:
        with self._lock:
            return self.script[min(done, len(self.script) - 1)]

    def answer(self, rec: Recorded) -> tuple[int, str, bytes]:
        raise NotImplementedError


class ScriptedResponsesServer(_Base):
    """OpenAI Responses API, as Codex calls it: one SSE stream per request."""

    def answer(self, rec: Recorded) -> tuple[int, str, bytes]:
        body = rec.body if isinstance(rec.body, dict) else {}
        if not rec.path.endswith("/responses"):
            return 404, "application/json", b"{}"
        items = body.get("input") or []
        done = sum(1 for i in items if isinstance(i, dict)
                   and i.get("type") in ("function_call_output", "custom_tool_call_output"))
        rec.main, rec.step = True, done
        step = self.step(done)
        output = []
        if isinstance(step, str):
            output.append({"type": "message", "role": "assistant", "id": f"msg_{uuid.uuid4().hex}",
                           "content": [{"type": "output_text", "text": step, "annotations": []}]})
        else:
            for call in step:
                call_id = f"call_{uuid.uuid4().hex}"
                if call["name"] == "apply_patch":  # Codex's freeform tool: the patch is the raw input
                    output.append({"type": "custom_tool_call", "id": f"ctc_{uuid.uuid4().hex}", "call_id": call_id,
                                   "name": "apply_patch", "input": call["args"]["input"]})
                else:
                    item = {"type": "function_call", "id": f"fc_{uuid.uuid4().hex}", "call_id": call_id,
                            "name": call["name"], "arguments": json.dumps(call["args"])}
                    if call.get("namespace"):  # a tool of a namespace (Codex lists MCP servers' tools so)
                        item["namespace"] = call["namespace"]
                    output.append(item)
        rid = f"resp_{uuid.uuid4().hex}"
        usage = {"input_tokens": 10, "output_tokens": 5, "total_tokens": 15,
                 "input_tokens_details": {"cached_tokens": 0}, "output_tokens_details": {"reasoning_tokens": 0}}
        events = [{"type": "response.created", "response": {"id": rid}}]
        events += [{"type": "response.output_item.done", "item": item} for item in output]
        events.append({"type": "response.completed", "response": {"id": rid, "usage": usage}})
        data = "".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in events)
        return 200, "text/event-stream", data.encode()


class ScriptedGeminiServer(_Base):
    """The Gemini API, as Gemini CLI calls it: SSE for streamGenerateContent, JSON otherwise."""

    def answer(self, rec: Recorded) -> tuple[int, str, bytes]:
        body = rec.body if isinstance(rec.body, dict) else {}
        if ":countTokens" in rec.path:
            return 200, "application/json", json.dumps({"totalTokens": 10}).encode()
        if body.get("tools"):
            contents = body.get("contents") or []
            done = sum(1 for c in contents if isinstance(c, dict)
                       for p in c.get("parts") or [] if isinstance(p, dict) and "functionResponse" in p)
            rec.main, rec.step = True, done
            step = self.step(done)
            parts = [{"text": step}] if isinstance(step, str) else \
                [{"functionCall": {"name": c["name"], "args": c["args"]}} for c in step]
        else:
            parts = [{"text": SIDE_TEXT}]
        chunk = {"candidates": [{"content": {"role": "model", "parts": parts}, "finishReason": "STOP", "index": 0}],
                 "usageMetadata": {"promptTokenCount": 10, "candidatesTokenCount": 5, "totalTokenCount": 15}}
        if "alt=sse" in rec.path:
            return 200, "text/event-stream", f"data: {json.dumps(chunk)}\r\n\r\n".encode()
        return 200, "application/json", json.dumps(chunk).encode()
