"""Claude Code transcripts (JSONL, one object a line) → the same tool events and messages the hooks
capture, so `ace learn --transcript FILE` learns from sessions the hooks never saw.

A tool call is an assistant `tool_use` block paired, by id, with the `tool_result` block of a
later user entry (whose `toolUseResult` holds the structured response: Bash stdout / stderr, an
edit's patch…). A user entry whose content is text is a prompt — unless it is meta, a
slash-command wrapper or an interruption notice. Subagents live in
`<session_id>/subagents/agent-<id>.jsonl` beside the main file and are learned with their own
agent id. Everything read goes through the capture sanitizer: private spans dropped, secrets
redacted, sizes capped — a transcript holds what the user typed, verbatim.
"""

from __future__ import annotations

import glob
import json
import os
import re
from collections.abc import Iterable
from datetime import datetime
from typing import TYPE_CHECKING, Any

from .. import config as config_mod
from ..capture.records import sanitize_value
from ..capture.text import sanitize

if TYPE_CHECKING:
    from ..config import Config

_INTERNAL = ("<command-name>", "<command-message>", "<local-command", "<command-args>", "Caveat:",
             "[Request interrupted", "<system-reminder>", "<bash-input>", "<bash-stdout>", "<user-memory-input>")
_EXIT = re.compile(r"exit code:?\s*(-?\d+)", re.IGNORECASE)


def _epoch(stamp: object) -> float | None:
    if not isinstance(stamp, str):
        return None
    try:
        return datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None


def _text_of(content: object) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(c.get("text", "") for c in content if isinstance(c, dict) and c.get("type") == "text")
    return ""


def parse_lines(lines: Iterable[str], *, agent_id: str = "", cfg: Config | None = None,
                include_sidechain: bool = False) -> dict[str, Any]:
    """Parse one transcript's lines into {events, messages, session_id, cwd, git_branch, bad_lines}."""
    cfg = cfg or config_mod.load(None)
    cap_in, cap_out = cfg["capture.max_input_chars"], cfg["capture.max_response_chars"]
    cap_msg = cfg["capture.max_message_chars"]
    skip_tools = set(cfg["capture.skip_tools"])
    events: list[dict[str, Any]] = []
    messages: list[dict[str, Any]] = []
    bad_lines = 0
    out: dict[str, Any] = {"events": events, "messages": messages, "session_id": None, "cwd": None, "git_branch": None,
                           "bad_lines": 0, "agent_id": agent_id, "agent_type": None}
    pending: dict[str, dict[str, Any]] = {}
    seq = 0
    last_at = None
    for raw in lines:
        raw = raw.strip()
        if not raw:
            continue
        try:
            entry = json.loads(raw)
        except ValueError:
            bad_lines += 1
            continue
        if not isinstance(entry, dict):
            continue
        out["session_id"] = out["session_id"] or entry.get("sessionId")
        out["cwd"] = out["cwd"] or entry.get("cwd")
        out["git_branch"] = out["git_branch"] or entry.get("gitBranch")
        out["agent_type"] = out["agent_type"] or entry.get("agentType") or entry.get("subagent_type")
        kind = entry.get("type")
        if kind not in ("user", "assistant") or entry.get("isMeta"):
            continue
        if entry.get("isSidechain") and not include_sidechain:
            continue
        at = _epoch(entry.get("timestamp")) or last_at or 0.0
        last_at = at
        message: dict[str, Any] = entry["message"] if isinstance(entry.get("message"), dict) else {}
        content = message.get("content")
        seq += 1
        if kind == "assistant":
            for block in content if isinstance(content, list) else []:
                if not isinstance(block, dict):
                    continue
                if block.get("type") == "tool_use" and block.get("id"):
                    pending[block["id"]] = {"name": block.get("name") or "unknown", "input": block.get("input"),
                                            "at": at}
                elif block.get("type") == "text" and block.get("text", "").strip():
                    text = sanitize(block["text"], cap_msg)
                    if text.strip():
                        messages.append({"id": seq, "role": "assistant", "text": text, "created_at": at,
                                                "uuid": entry.get("uuid")})
            continue
        results = [b for b in content if isinstance(b, dict) and b.get("type") == "tool_result"] \
            if isinstance(content, list) else []
        if results:
            for block in results:
                use = pending.pop(str(block.get("tool_use_id")), None)
                if use is None or use["name"] in skip_tools:
                    continue
                seq += 1
                body = _text_of(block.get("content"))
                structured = entry.get("toolUseResult") if len(results) == 1 else None
                failed = bool(block.get("is_error"))
                exit_match = _EXIT.search(body[:200]) if failed else None
                response = structured if isinstance(structured, (dict, list)) else body
                if isinstance(response, dict) and isinstance(response.get("exitCode"), int):
                    failed = failed or response["exitCode"] != 0
                events.append({
                    "id": seq, "tool_use_id": block.get("tool_use_id"), "tool_name": use["name"],
                    "input": sanitize_value(use["input"], cap_in),
                    "response": None if failed else sanitize_value(response, cap_out),
                    "success": not failed,
                    "error": sanitize(body, cap_out) if failed else None,
                    "exit_code": int(exit_match.group(1)) if exit_match
                    else (0 if use["name"] == "Bash" and not failed else None),
                    "is_interrupt": bool(isinstance(structured, dict) and structured.get("interrupted")),
                    "duration_ms": round((at - use["at"]) * 1000, 1) if at and use["at"] else None,
                    "created_at": at,
                })
            continue
        text = _text_of(content)
        if not text.strip() or text.lstrip().startswith(_INTERNAL):
            continue
        clean = sanitize(text, cap_msg)
        if clean.strip():
            messages.append({"id": seq, "role": "user", "text": clean, "created_at": at, "uuid": entry.get("uuid")})
    for use_id, use in pending.items():  # asked but never answered: the turn was interrupted
        if use["name"] in skip_tools:
            continue
        seq += 1
        events.append({"id": seq, "tool_use_id": use_id, "tool_name": use["name"],
                              "input": sanitize_value(use["input"], cap_in), "response": None, "success": False,
                              "error": "interrupted (no result)", "exit_code": None, "is_interrupt": True,
                              "duration_ms": None, "created_at": use["at"]})
    events.sort(key=lambda e: (e["created_at"], e["id"]))
    out["bad_lines"] = bad_lines
    return out


def parse_file(path: str, cfg: Config | None = None) -> dict[str, Any]:
    """The main transcript and its subagents' transcripts: {session_id, cwd, git_branch, agents: [...]}."""
    with open(path, encoding="utf-8", errors="replace") as fh:
        main = parse_lines(fh, cfg=cfg)
    agents = [main]
    folder = os.path.join(os.path.dirname(path), os.path.splitext(os.path.basename(path))[0], "subagents")
    for sub in sorted(glob.glob(os.path.join(folder, "agent-*.jsonl"))):
        agent_id = os.path.splitext(os.path.basename(sub))[0][len("agent-"):]
        with open(sub, encoding="utf-8", errors="replace") as fh:
            agents.append(parse_lines(fh, agent_id=agent_id, cfg=cfg, include_sidechain=True))
    return {"session_id": main["session_id"] or os.path.splitext(os.path.basename(path))[0], "cwd": main["cwd"],
            "git_branch": main["git_branch"], "agents": agents,
            "bad_lines": sum(a["bad_lines"] for a in agents)}
