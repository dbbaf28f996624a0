"""Antigravity CLI (`agy`, Gemini CLI's successor): its hook events and answers, its tools, its
installer. No binary could be run here (it is on no package index): everything below is from its
documented contract — Gemini CLI's `docs/resources/migrating-to-antigravity-cli.md` and the
Antigravity hooks page — and what others measured against agy 1.0–1.5, never from a run of ours.

The contract: hooks live in a standalone `hooks.json` (`.agents/hooks.json` of a workspace,
`~/.gemini/antigravity-cli/hooks.json` for the user; `integrations.antigravity_config`), grouped by
a hook *name*; timeouts in whole seconds. Events: PreToolUse, PostToolUse (matcher groups),
PreInvocation / PostInvocation (before / after *every* model call), Stop (the agent finished) and,
from agy 1.1, SessionStart; there is no SessionEnd, no prompt event, no subagent event. The payload
is camelCase — `conversationId`, `stepIdx`, `toolCall: {name, args}`, `transcriptPath`,
`workspacePaths`, `artifactDirectoryPath`; PostToolUse adds `error` (and may carry no `toolCall`).
Tools are agy's own (`run_command`, `view_file`, `write_to_file`, `replace_file_content`, …) with
PascalCase arguments. No answer field adds context; PreToolUse must answer a decision (its
`allowTool` / `decision`), which would override the user's own permission choice, so it is not
installed. Lessons reach agy through the MCP server (`mcp_config.json`) and `ace sync`'s AGENTS.md,
which agy reads as Gemini CLI did. Every answer is a JSON object (`{}` when there is nothing to
say): a neutral object is what the hooks others publish for agy print.

Cost: stdlib only; adapting a payload is a few dict lookups and one CRC-32 of the call (its JSON
text; a JSON-encoded `args` is decoded once): ~15 µs for an edit call.
"""

import json

from .base import Agent

TYPE_CHECKING = False  # not `typing.TYPE_CHECKING`: the hooks must not import `typing`
if TYPE_CHECKING:
    from typing import Any


def _args(call: object) -> "dict[str, Any]":
    """A tool call's arguments as a dict: agy may send them as an object or as its JSON text."""
    args = call.get("args") if isinstance(call, dict) else None
    if isinstance(args, str) and args[:1] == "{":
        try:
            args = json.loads(args)
        except ValueError:
            return {}
    return args if isinstance(args, dict) else {}


def _edits(chunks: object) -> "list[dict[str, Any]]":
    """multi_replace_file_content's `ReplacementChunks` as MultiEdit's `edits`."""
    if isinstance(chunks, str):
        try:
            chunks = json.loads(chunks)
        except ValueError:
            return []
    out = []
    for chunk in chunks if isinstance(chunks, list) else []:
        if isinstance(chunk, dict):
            out.append({"old_string": chunk.get("TargetContent"), "new_string": chunk.get("ReplacementContent")})
    return out


def _message(error: object) -> str | None:
    """The text of PostToolUse's `error` (a string, or an object with a message); None for none."""
    if isinstance(error, dict):
        error = error.get("message") or error.get("error")
    return error if isinstance(error, str) and error.strip() else None


class Antigravity(Agent):
    __slots__ = ()

    def adapt(self, native: str, event: str, payload: "dict[str, Any]") -> "tuple[str, dict[str, Any]]":
        conversation = payload.get("conversationId")
        workspaces = payload.get("workspacePaths")
        out: dict[str, Any] = {"hook_event_name": event, "session_id": conversation,
                               "transcript_path": payload.get("transcriptPath")}
        if isinstance(workspaces, list) and workspaces and isinstance(workspaces[0], str):
            out["cwd"] = workspaces[0]  # the first workspace is the project the session works in
        if native != "PostToolUse":
            return event, out
        from .tools import to_canonical

        call = payload.get("toolCall")
        name = call.get("name") if isinstance(call, dict) else None
        args = _args(call)
        if name == "multi_replace_file_content":
            args = {**args, "edits": _edits(args.get("ReplacementChunks"))}
        out["tool_name"], out["tool_input"] = to_canonical(self.name, name, args)
        step = payload.get("stepIdx")
        if isinstance(conversation, str) and isinstance(step, int) and not isinstance(step, bool):
            # The step, and the call itself: a step may hold several calls (the id is unique in the
            # store), while the same call sent twice stays one record.
            from zlib import crc32

            digest = crc32(json.dumps([name, args], sort_keys=True, default=str).encode("utf-8", "replace"))
            out["tool_use_id"] = f"{conversation}:{step}:{digest:08x}"
        for key in ("output", "result"):  # not in the documented payload; kept when a version sends one
            if payload.get(key) is not None:
                out["tool_response"] = {"output": payload[key]}
                break
        error = _message(payload.get("error"))
        if error is not None:
            out["error"] = error
            return "PostToolUseFailure", out
        return event, out

    def answer(self, native: str, obj: "dict[str, Any] | None") -> "dict[str, Any] | None":
        return None  # no field agy documents takes context or a message: the engine prints `{}`


AGENT = Antigravity(
    "antigravity",
    events={"SessionStart": "SessionStart", "PostToolUse": "PostToolUse", "Stop": "Stop"},
    lost={
        "UserPromptSubmit": "no prompt event (PreInvocation fires before every model call): lessons come through "
                            "the MCP server's tools and the AGENTS.md `ace sync` writes, not with each prompt",
        "PreToolUse": "its answer is a permission decision, which would override yours: not installed, so "
                      "lessons for a file in another domain are not added before the tool runs",
        "PermissionRequest": "no permission hook: agy asks you itself before `ace` commands run",
        "PreCompact": "no compaction event: lessons are not pinned across it",
        "SubagentStop": "no subagent event: a subagent is its own conversation, learned as its own session",
        "SessionEnd": "no session-end event: each turn is learned at its Stop; a turn interrupted before it "
                      "waits for `ace learn`",
    },
    tools={
        "run_command": ("Bash", {"command": "CommandLine"}),
        "view_file": ("Read", {"file_path": "AbsolutePath"}),
        "write_to_file": ("Write", {"file_path": "TargetFile", "content": "CodeContent"}),
        "replace_file_content": ("Edit", {"file_path": "TargetFile", "old_string": "TargetContent",
                                          "new_string": "ReplacementContent"}),
        "multi_replace_file_content": ("MultiEdit", {"file_path": "TargetFile", "edits": "edits"}),
        "grep_search": ("Grep", {"pattern": "Query", "path": "SearchPath"}),
        "codebase_search": ("Grep", {"pattern": "Query"}),
        "find_by_name": ("Glob", {"pattern": "Pattern", "path": "SearchDirectory"}),
        "list_dir": ("LS", {"path": "DirectoryPath"}),
        "read_url_content": ("WebFetch", {"url": "Url"}),
        "search_web": ("WebSearch", {"query": "query"}),
    },
    timeout_scale=1,
    installer="antigravity_config",
    readers=(),  # its transcript's format is not documented (see docs/agents.md): none is read
    trust=("Antigravity loads hooks.json when a session starts (`/hooks` in agy lists the ace-engine hook and "
           "switches it). No agy hook takes added context: lessons reach it through `ace mcp` and AGENTS.md, which "
           "`ace sync` writes (re-run it as lessons come)", "",
           "`/hooks` in agy shows whether the ace-engine hook is enabled; `ace sync` puts the lessons in AGENTS.md"),
    hooks_off_fix='set "enabled": true on the "ace-engine" hook of that hooks.json (or press e on it in agy\'s /hooks)',
    probe=("PostToolUse", {"conversationId": "ace-doctor", "stepIdx": 1,
                           "toolCall": {"name": "view_file", "args": {"AbsolutePath": "README.md"}}}, "answers"),
    empty_answer="{}",
)
