"""Gemini CLI (legacy: it stopped serving requests on 2026-06-18; its successor is the
Antigravity CLI, `agents.antigravity`): its hook events and answers, its tools, its installer
and its chat reader.

Facts, from its source and its hook runs (Gemini CLI 0.61): the events used are SessionStart,
BeforeAgent (the prompt), AfterTool, AfterAgent (the turn's end, `prompt_response`), SessionEnd
(PreCompress is not: it fires on every compression check, before each model call, whether or not
anything is compressed); a tool result is `{llmContent, returnDisplay, error}`, and its shell
reports a failure as an `Exit Code: N` line. Context is taken as
`hookSpecificOutput.additionalContext` on SessionStart, BeforeAgent and AfterTool (it escapes `<`
and `>`); exit code 0 with JSON or nothing; timeouts in milliseconds. Tools and their fields from
`packages/core/src/tools/definitions/base-declarations.ts`.

Cost: stdlib only.
"""

import re

from ..capture.parts import text_of
from .base import Agent

TYPE_CHECKING = False  # not `typing.TYPE_CHECKING`: the hooks must not import `typing`
if TYPE_CHECKING:
    from typing import Any

EXIT_LINE = re.compile(r"(?:Exit Code|Process exited with code):? (-?\d+)", re.IGNORECASE)


class Gemini(Agent):
    __slots__ = ()

    def adapt(self, native: str, event: str, payload: "dict[str, Any]") -> "tuple[str, dict[str, Any]]":
        event, out = super().adapt(native, event, payload)
        if native == "AfterAgent":
            out["last_assistant_message"] = payload.get("prompt_response")
        if native == "AfterTool":
            return tool_result(out, out.get("tool_response"))
        return event, out


def tool_result(out: "dict[str, Any]", response: object) -> "tuple[str, dict[str, Any]]":
    """PostToolUse with `{output, exitCode?}`, or PostToolUseFailure with `error`, for a result
    `{llmContent, error}` (Gemini's shape; a shell's failure is an `Exit Code: N` line)."""
    if not isinstance(response, dict):
        return "PostToolUse", out
    text = text_of(response.get("llmContent"))  # every part, a functionResponse's whole (capture/parts.py)
    error = response.get("error")
    normalized: dict[str, Any] = {"output": text}
    if out.get("tool_name") == "Bash":
        m = EXIT_LINE.search(text)
        normalized["exitCode"] = int(m.group(1)) if m else 0
    out["tool_response"] = normalized
    if error:
        message = error.get("message") if isinstance(error, dict) else error
        out["error"] = message if isinstance(message, str) and message else (text or "tool failed")
        return "PostToolUseFailure", out
    return "PostToolUse", out


AGENT = Gemini(
    "gemini",
    events={"SessionStart": "SessionStart", "BeforeAgent": "UserPromptSubmit", "AfterTool": "PostToolUse",
            "AfterAgent": "Stop", "SessionEnd": "SessionEnd"},
    context_events=frozenset({"SessionStart", "BeforeAgent", "AfterTool"}),
    lost={
        "PreToolUse": "BeforeTool takes no added context, so lessons for a file in another domain come "
                      "with that tool's result (AfterTool) instead of before the tool runs",
        "PermissionRequest": "no permission hook: Gemini asks you itself before `ace` commands run",
        "SubagentStop": "no subagent event: a subagent's work is learned with its parent's turn",
        "PreCompact": "PreCompress fires on every compression check (before each model call), not only when "
                      "the history is compressed, and no event follows a compression: lessons are not pinned "
                      "across it; the next prompt's injection carries the relevant ones",
    },
    tools={
        "run_shell_command": ("Bash", {"command": "command", "description": "description"}),
        "read_file": ("Read", {"file_path": "file_path"}),
        "read_many_files": ("Glob", {"pattern": "include"}),
        "list_directory": ("LS", {"path": "dir_path"}),
        "glob": ("Glob", {"pattern": "pattern", "path": "dir_path"}),
        "grep_search": ("Grep", {"pattern": "pattern", "path": "dir_path"}),
        "search_file_content": ("Grep", {"pattern": "pattern", "path": "path"}),  # its name before 0.20
        "write_file": ("Write", {"file_path": "file_path", "content": "content"}),
        "replace": ("Edit", {"file_path": "file_path", "old_string": "old_string", "new_string": "new_string"}),
        "web_fetch": ("WebFetch", {"url": "prompt"}),
        "google_web_search": ("WebSearch", {"query": "query"}),
    },
    timeout_scale=1000,
    named_handlers=True,
    handlers={"AfterTool": "after_tool"},
    installer="gemini_config",
    readers=("gemini_chat",),
    trust=("Gemini CLI asks before it runs a project's hooks for the first time",
           ", and reads .gemini/ only in a folder you trust (when folder trust is on)",
           "Gemini asks before a project's hooks first run"),
    hooks_off_fix="set hooksConfig.enabled to true",
    probe=("BeforeAgent", {"hook_event_name": "BeforeAgent", "prompt": "how do I run the tests here?"}, "answers"),
    legacy="Gemini CLI stopped serving requests on 2026-06-18; its successor is the Antigravity CLI "
           "(`ace install --agent antigravity`)",
)
