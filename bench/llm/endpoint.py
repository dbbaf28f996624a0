"""An OpenAI-compatible endpoint that records every prompt it is sent and replays recorded answers.

    python bench/llm/endpoint.py --port N [--answers DIR] [--pending DIR] [--record DIR] [--loose] [--collect]

Contract. `POST /v1/chat/completions`: the system and user messages are joined into one prompt whose
key is the first 24 hex digits of sha256(system + NUL + user) (`key_of`). When `ANSWERS/<key>.json`
exists, its text is the reply (200, a chat completion; `usage` counts the prompt and the reply in
tokens ≈ characters / 4, the same estimate for every run). Otherwise the prompt is written once to
`PENDING/<key>.json` as {key, system, user} and the call gets 503, so the learner falls back to its
offline reflector for that task, as it would when a model is down. `served.jsonl` in PENDING's parent
gets one line per call: {key, answered, prompt_chars, reply_chars}. `GET /v1/models` answers, for clients
that probe. `--record DIR` writes every prompt, answered or not, to `DIR/<key>.json` the same way
(to read what a recorded answer was written from; outside the repository, like PENDING). `--collect`
answers an unanswered prompt with an empty reflection instead of 503 (it is still written to PENDING):
to gather a new prompt version's prompts without each task falling back to the slower offline learner.

ANSWERS defaults to `bench/data/llm-answers/<PROMPT_VERSION>/` (the reflector's prompt version: an
answer is valid only for the prompt text it was written for; a new version starts an empty folder);
its subfolders are read too (`heldout/`: the held-out split's answers, never read by a person).
Answers are written by a model from the pending file alone, under `bench/llm/ANSWERING.md`.
`--loose` reads a prompt's `<bullets_shown>` block as `(none)` when computing its key (replays in
order, where earlier sessions' lessons are shown, reuse the answer written without them).

Standard library only; one thread per request; binds 127.0.0.1 only.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
_SHOWN = re.compile(r"<bullets_shown>.*?</bullets_shown>", re.S)


def prompt_version() -> str:
    """The reflector's prompt version, read from its source (no import of the package needed)."""
    src = os.path.join(ROOT, "src", "ace_engine", "learning", "llm_prompt_text.py")
    with open(src, encoding="utf-8") as fh:
        match = re.search(r'^PROMPT_VERSION = "([^"]+)"', fh.read(), re.M)
    if not match:
        sys.exit(f"no PROMPT_VERSION in {src}")
    return match.group(1)


def key_of(system: str, user: str, loose: bool = False) -> str:
    """The key a prompt is recorded under."""
    if loose:
        user = _SHOWN.sub("<bullets_shown>\n(none)\n</bullets_shown>", user)
    return hashlib.sha256((system + "\x00" + user).encode("utf-8")).hexdigest()[:24]


def messages_text(body: dict, role: str) -> str:
    parts = []
    for message in body.get("messages") or []:
        if isinstance(message, dict) and message.get("role") == role:
            content = message.get("content")
            if isinstance(content, list):  # content parts
                content = "".join(str(p.get("text") or "") for p in content if isinstance(p, dict))
            parts.append(str(content or ""))
    return "\n".join(parts)


def answer_dirs(answers: str) -> list[str]:
    """ANSWERS and its subfolders (`heldout/`: the held-out split's answers, kept apart)."""
    subs = sorted(os.path.join(answers, d) for d in os.listdir(answers) if os.path.isdir(os.path.join(answers, d)))
    return [answers, *subs]


def _write_once(folder: str, key: str, system: str, user: str) -> None:
    """`folder/<key>.json` as {key, system, user}, written whole (a temporary file, then a rename)."""
    path = os.path.join(folder, key + ".json")
    if not os.path.exists(path):
        with open(path + ".tmp", "w", encoding="utf-8") as fh:
            json.dump({"key": key, "system": system, "user": user}, fh, ensure_ascii=False)
        os.replace(path + ".tmp", path)


EMPTY_REFLECTION = json.dumps({"reasoning": "(collecting prompts: no answer yet)", "candidates": [], "tags": []})


def make_handler(answers: str, pending: str, log_path: str, loose: bool,
                 record: str | None = None, collect: bool = False) -> type[BaseHTTPRequestHandler]:
    lock = threading.Lock()

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: object) -> None:  # quiet: the served log says what happened
            pass

        def _send(self, code: int, obj: dict) -> None:
            data = json.dumps(obj).encode("utf-8")
            self.send_response(code)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self) -> None:  # noqa: N802 — http.server's name
            self._send(200, {"object": "list", "data": [{"id": "replay", "object": "model"}]})

        def do_POST(self) -> None:  # noqa: N802
            try:
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)) or b"{}")
            except ValueError:
                self._send(400, {"error": {"message": "body is not JSON", "type": "invalid_request_error"}})
                return
            system, user = messages_text(body, "system"), messages_text(body, "user")
            key = key_of(system, user, loose)
            path = next((p for p in (os.path.join(d, key + ".json") for d in answer_dirs(answers))
                         if os.path.exists(p)), "")
            answered = bool(path)
            reply = ""
            if answered:
                with open(path, encoding="utf-8") as fh:
                    reply = fh.read()
            with lock:
                for folder in ([] if answered else [pending]) + ([record] if record else []):
                    _write_once(folder, key, system, user)
            with lock, open(log_path, "a", encoding="utf-8") as fh:
                fh.write(json.dumps({"key": key, "answered": answered, "prompt_chars": len(system) + len(user),
                                     "reply_chars": len(reply), "at": time.time()}) + "\n")
            if not answered and collect:
                reply = EMPTY_REFLECTION
            elif not answered:
                self._send(503, {"error": {"message": "no recorded answer for this prompt", "type": "unavailable"}})
                return
            prompt_tokens, reply_tokens = (len(system) + len(user)) // 4, len(reply) // 4
            self._send(200, {"id": "replay-" + key, "object": "chat.completion", "created": int(time.time()),
                             "model": "replay", "choices": [{"index": 0, "finish_reason": "stop",
                                                             "message": {"role": "assistant", "content": reply}}],
                             "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": reply_tokens,
                                       "total_tokens": prompt_tokens + reply_tokens}})

    return Handler


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--answers", help="recorded answers (default: bench/data/llm-answers/<prompt version>/)")
    ap.add_argument("--pending", help="where unanswered prompts and served.jsonl are written (outside the "
                                      "repository: prompts hold session text)",
                    default=os.path.join(os.environ.get("TMPDIR", "/tmp"), "ace-llm-pending"))
    ap.add_argument("--record", help="also write every prompt, answered or not, here (outside the repository)")
    ap.add_argument("--collect", action="store_true",
                    help="answer unanswered prompts with an empty reflection (gathering prompts), not 503")
    ap.add_argument("--loose", action="store_true", help="key prompts with <bullets_shown> read as (none)")
    args = ap.parse_args(argv)
    answers = args.answers or os.path.join(ROOT, "bench", "data", "llm-answers", prompt_version())
    os.makedirs(answers, exist_ok=True)
    for folder in (args.pending, args.record):
        if folder:
            os.makedirs(folder, exist_ok=True)
    log_path = os.path.join(args.pending, "served.jsonl")
    server = ThreadingHTTPServer(("127.0.0.1", args.port), make_handler(answers, args.pending, log_path, args.loose,
                                                                        args.record, args.collect))
    print(f"replaying {answers} on 127.0.0.1:{args.port}; unanswered prompts go to {args.pending}", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
