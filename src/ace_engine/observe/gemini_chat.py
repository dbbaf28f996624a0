"""Gemini CLI's saved sessions → the tool events and messages `ace learn --transcript` learns
from, as `transcript.parse_file` gives them for Claude Code (same keys, plus `agent: "gemini"`
and `project_hash`).

Two formats, from Gemini CLI's source:
- The chat recording (`packages/core/src/services/chatRecordingService.ts`, types in
  `chatRecordingTypes.ts`): `~/.gemini/tmp/<project>/chats/session-<time>-<id>.jsonl` — a metadata
  record `{sessionId, projectHash, startTime, kind?, directories?}`, then message records
  `{id, timestamp, type: user | gemini | info | error | warning, content, toolCalls?}` (a message
  is appended again whenever it changes: the last record of an id wins, in first-seen order),
  `{$rewindTo: id}` (a rewind: that message and every later one are gone) and `{$set: {...}}`
  (metadata; with `messages`, a checkpoint that replaces them all). Before 0.20 the same record was
  one pretty-printed JSON document (`session-….json`). A subagent's chat sits in
  `chats/<parent session id>/<id>.jsonl` with `kind: "subagent"`.
- A saved chat (`/chat save TAG`, `packages/core/src/core/logger.ts`): `checkpoint-TAG.json`,
  `{history: Content[]}` (older: the bare list) of `{role: user | model, parts: [{text} |
  {functionCall: {id, name, args}} | {functionResponse: {id, name, response}}]}`, no timestamps
  (the file's time is used, in order).

What is read and skipped (reasons as `transcript_learn.SKIP_LABELS`): a user message Gemini
itself ignores on resume (`isIgnoredUserContent`: `/` and `?` commands → `local_command`,
`<session_context>` / `<hook_context>` → `injected_context`); info / error / warning records are
the CLI's own notices (`cli_notice`); rewound messages are an abandoned branch. A tool call
(`ToolCallRecord {id, name, args, result, status}`) is mapped through the one table
(`agents.tools.to_canonical`, as the hook adapters do); it failed when its status is `error` or `cancelled`
(interrupted), or its output states a non-zero `Exit Code: N` (run_shell_command).

Where the session ran: Gemini records only `projectHash` (sha256 of the project root); the
project's folder under `~/.gemini/tmp` holds `.project_root` (the root, as text) since 0.30, which
gives `cwd`; else a subagent's `directories`; else none (`choose_project` then needs the repository
`ace learn` runs in, or --project).

Cost: one pass over the records, after `session_files.read_records`.
"""

from __future__ import annotations

import os
from collections import Counter
from typing import TYPE_CHECKING, Any

from ..agents.tools import to_canonical
from ..capture.parts import text_of
from ..core import config as config_mod
from .session_files import Builder, command_output, exit_code_in, read_records, regular_file
from .session_io import TranscriptError, epoch

if TYPE_CHECKING:
    from ..core.config import Config

AGENT = "gemini"
HINT = "give a Gemini CLI chat (~/.gemini/tmp/<project>/chats/session-….jsonl) or a saved checkpoint-<tag>.json"
NAMED = "a Gemini CLI chat (~/.gemini/tmp/<project>/chats/session-….jsonl)"  # in another reader's error
MESSAGE_TYPES = ("user", "gemini", "info", "error", "warning")
_INJECTED = ("<session_context>", "<hook_context>")


def looks_like(record: dict[str, Any]) -> bool:
    """A record of Gemini's chat recording: its metadata, a message, a rewind or an update."""
    return ("sessionId" in record and "projectHash" in record) or "$rewindTo" in record or "$set" in record \
        or (isinstance(record.get("id"), str) and record.get("type") in MESSAGE_TYPES and "content" in record) \
        or (isinstance(record.get("history"), list) and all(isinstance(c, dict) and "parts" in c
                                                           for c in record["history"][:5]))


def _text(content: object) -> str:
    """A PartListUnion's text (thought parts left out)."""
    if isinstance(content, str):
        return content
    if isinstance(content, dict):
        content = [content]
    if not isinstance(content, list):
        return ""
    return "\n".join(p if isinstance(p, str) else str(p.get("text") or "") for p in content
                     if isinstance(p, str) or (isinstance(p, dict) and isinstance(p.get("text"), str)
                                               and not p.get("thought")))


def _result(result: object) -> tuple[str, bool]:
    """(a tool result's text, whether it is an error) from its functionResponse parts, read whole: an
    MCP tool's `{content: [...]}`, a `{result}`, any key — not only `output` and `error`."""
    parts = result if isinstance(result, list) else [result] if result else []
    texts, error = [], False
    for part in parts:
        response = part.get("functionResponse", {}).get("response") if isinstance(part, dict) and \
            isinstance(part.get("functionResponse"), dict) else None
        if isinstance(response, dict):
            error = error or response.get("error") is not None
            texts.append(text_of(response, whole=True))  # every part the tool returned (capture/parts.py)
        elif isinstance(part, dict) and isinstance(part.get("text"), str):
            texts.append(part["text"])
        elif isinstance(part, str):
            texts.append(part)
    return "\n".join(texts), error


def _messages(records: list[dict[str, Any]], skips: Counter[str]) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """(metadata, the messages as Gemini's loader would resume them)."""
    meta: dict[str, Any] = {}
    messages: dict[str, dict[str, Any]] = {}
    for record in records:
        if isinstance(record.get("$rewindTo"), str):
            ids = list(messages)
            cut = ids.index(record["$rewindTo"]) if record["$rewindTo"] in ids else 0
            for gone in ids[cut:]:
                skips["abandoned_branch"] += 1
                del messages[gone]
        elif isinstance(record.get("$set"), dict):
            update = record["$set"]
            if isinstance(update.get("messages"), list):
                messages = {m["id"]: m for m in update["messages"]
                            if isinstance(m, dict) and isinstance(m.get("id"), str)}
            meta.update({k: v for k, v in update.items() if k != "messages"})
        elif isinstance(record.get("id"), str) and "sessionId" not in record:
            messages[record["id"]] = record
        elif isinstance(record.get("sessionId"), str):
            meta.update({k: v for k, v in record.items() if k != "messages"})
            for m in record.get("messages") or []:
                if isinstance(m, dict) and isinstance(m.get("id"), str):
                    messages[m["id"]] = m
    return meta, list(messages.values())


def _from_history(history: list[Any], at: float) -> list[dict[str, Any]]:
    """A saved checkpoint's Content list as chat-recording messages (calls paired with responses
    by id, else by name in order); times are `at` plus a millisecond per entry, in order."""
    out: list[dict[str, Any]] = []
    pending: dict[str, dict[str, Any]] = {}
    for n, content in enumerate(history):
        if not isinstance(content, dict) or not isinstance(content.get("parts"), list):
            continue
        stamp = at + n / 1000
        parts = [p for p in content["parts"] if isinstance(p, dict)]
        if content.get("role") == "model":
            calls = []
            for i, p in enumerate(parts):
                call = p.get("functionCall")
                if isinstance(call, dict):
                    call_id = str(call.get("id") or f"{call.get('name')}#{n}.{i}")
                    record: dict[str, Any] = {"id": call_id, "name": call.get("name"), "args": call.get("args"),
                                              "status": "cancelled", "result": None, "at": stamp}
                    pending[call_id] = record
                    pending.setdefault(f"name:{call.get('name')}", record)
                    calls.append(record)
            out.append({"id": f"h{n}", "type": "gemini", "content": [p for p in parts if "text" in p],
                        "toolCalls": calls, "at": stamp})
            continue
        responses = [p["functionResponse"] for p in parts if isinstance(p.get("functionResponse"), dict)]
        for response in responses:
            call = pending.pop(str(response.get("id")), None) or pending.pop(f"name:{response.get('name')}", None)
            if call is not None:
                call["result"], call["status"], call["done"] = [{"functionResponse": response}], "success", stamp
        if not responses:
            out.append({"id": f"h{n}", "type": "user", "content": [p for p in parts if "text" in p], "at": stamp})
    return out


def _project_root(path: str, meta: dict[str, Any]) -> str | None:
    """The session's project root: the `.project_root` marker of its project folder, else a
    subagent's first workspace directory."""
    folder = os.path.dirname(os.path.abspath(path))
    for _ in range(3):  # checkpoint: <project>/; chat: <project>/chats/; subagent: <project>/chats/<parent>/
        marker = os.path.join(folder, ".project_root")
        try:
            if not regular_file(marker):
                raise OSError(marker)
            with open(marker, encoding="utf-8") as fh:
                root = fh.read(4096).strip()
            if root:
                return root
        except OSError:
            pass
        folder = os.path.dirname(folder)
    dirs = meta.get("directories")
    return dirs[0] if isinstance(dirs, list) and dirs and isinstance(dirs[0], str) else None


def parse_file(path: str, cfg: Config | None = None) -> dict[str, Any]:
    """A Gemini chat or saved checkpoint → {kind, session_id, cwd, git_branch, agent, project_hash,
    agents: [one], bad_lines, skips, notes} (the shape of `transcript.parse_file`)."""
    cfg = cfg or config_mod.load(None)
    records, counts = read_records(path, HINT)
    if not any(looks_like(r) for r in records):
        raise TranscriptError(f"{path} holds JSON but no Gemini CLI chat records; {HINT}")
    skips: Counter[str] = Counter(counts)
    checkpoint = next((r["history"] for r in records if isinstance(r.get("history"), list)), None)
    stem = os.path.splitext(os.path.basename(path))[0]
    if checkpoint is not None:
        try:
            mtime = os.path.getmtime(path)
        except OSError:
            mtime = 0.0
        meta: dict[str, Any] = {"sessionId": f"gemini-{stem}"}
        messages = _from_history(checkpoint, mtime)
    else:
        meta, messages = _messages(records, skips)
    sub = meta.get("kind") == "subagent"
    own = str(meta.get("sessionId") or stem)
    parent = os.path.basename(os.path.dirname(os.path.abspath(path))) if sub else None
    builder = Builder(cfg, agent_id=own if sub else "", agent_type="subagent" if sub else None)
    for message in messages:
        _message(builder, message, skips, by="agent" if sub else "user")
    return {"kind": "subagent" if sub else "session", "agent": AGENT, "session_id": parent or own,
            "cwd": _project_root(path, meta), "git_branch": None, "project_hash": meta.get("projectHash"),
            "agents": [builder.agent({})], "notes": [], "bad_lines": skips["unreadable_line"],
            "skips": {k: v for k, v in skips.items() if v}}


def _message(builder: Builder, message: dict[str, Any], skips: Counter[str], *, by: str) -> None:
    at = message.get("at") or epoch(message.get("timestamp")) or 0.0
    kind = message.get("type")
    text = _text(message.get("content"))
    if kind == "user":
        head = text.strip()
        why = None if head else "empty"
        if head.startswith(("/", "?")):
            why = "local_command"
        elif head.startswith(_INJECTED):
            why = "injected_context"
        if why is None:
            builder.prompt(text, at, f"gemini:{message.get('id')}", by=by)
        elif why != "empty":
            skips[why] += 1
            builder.skipped_text(text, at)
        return
    if kind in ("info", "error", "warning"):
        skips["cli_notice"] += 1
        return
    if kind != "gemini":
        return
    builder.reply(text, at, f"gemini:{message.get('id')}")
    for call in message.get("toolCalls") or []:
        if not isinstance(call, dict) or not call.get("name"):
            continue
        mapped, tool_input = to_canonical(AGENT, str(call["name"]), call.get("args"))
        tool = str(mapped)
        output, error = _result(call.get("result"))
        status = call.get("status")
        code = exit_code_in(output) if tool == "Bash" else None
        output = command_output(output) if tool == "Bash" else output
        failed = error or status in ("error", "cancelled") or bool(code)
        done = call.get("done") or epoch(call.get("timestamp")) or at
        builder.call(str(call.get("id") or f"{message.get('id')}:{call['name']}"), tool, tool_input,
                     output=output if output or not failed else None, failed=failed,
                     exit_code=code if code is not None else (0 if tool == "Bash" and not failed else None),
                     at=max(done, at), started=at, interrupted=status == "cancelled")
