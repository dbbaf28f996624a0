"""Codex CLI and Gemini CLI at the hook boundary: their payloads in, their answers out.

A hook installed for another agent runs `launch.py AGENT EVENT` with the agent's own event name
(`codex PostToolUse`, `gemini AfterTool`). The engine asks `event_for` which of our events it is
handled as, `adapt` turns the agent's payload into the payload Claude Code would have sent for
it — tool names and input fields through the one table of tools (`capture.tools.to_canonical`),
tool results normalized (`{"output": text, "exitCode": n}`), a failed call as
PostToolUseFailure — so `HookInput.parse`, capture, redaction, learning, injection and
continuity run unchanged. `answer` rewrites the handler's Claude-shaped answer into the shape the
agent accepts for that event (both reject fields they do not know), or None.

What each agent lacks is said once, in `LOST` (`ace doctor`, `ace install`, the README read it).

Facts, from the agents' source and their hook runs (Codex 0.169, Gemini CLI 0.61):
* Codex sends Claude Code's event names and fields, reports its shell as `Bash` with `command`,
  and gives PostToolUse only the output text: the exit code is read from the session's rollout
  file (`transcript_path`), whose `CommandExecution` item for the call is written before the hook
  runs. Answers: Claude Code's shape, strictly validated; timeouts in seconds.
* Gemini's events used are SessionStart, BeforeAgent (the prompt), AfterTool, AfterAgent (the
  turn's end, `prompt_response`), SessionEnd (PreCompress is not: it fires on every compression
  check, before each model call, whether or not anything is compressed); a tool result is `{llmContent,
  returnDisplay, error}`, and its shell reports a failure as an `Exit Code: N` line. Context is
  taken as `hookSpecificOutput.additionalContext` on SessionStart, BeforeAgent and AfterTool (it
  escapes `<` and `>`); exit code 0 with JSON or nothing; timeouts in milliseconds.

Cost: imported only by a hook started for one of these agents; stdlib only; a Codex PostToolUse
of a shell call reads at most the last 256 KB of the rollout file.
"""

import json
import os
import re
import stat  # already loaded by `os`

from ..capture.parts import text_of
from ..capture.tools import to_canonical

TYPE_CHECKING = False  # not `typing.TYPE_CHECKING`: the hooks must not import `typing`
if TYPE_CHECKING:
    from typing import Any

# The agent's event → the event ace-engine handles it as. Events not listed are not installed.
EVENTS_BY_AGENT: dict[str, dict[str, str]] = {
    "codex": {
        "SessionStart": "SessionStart", "UserPromptSubmit": "UserPromptSubmit", "PreToolUse": "PreToolUse",
        "PermissionRequest": "PermissionRequest", "PostToolUse": "PostToolUse", "PreCompact": "PreCompact",
        "Stop": "Stop", "SubagentStop": "SubagentStop", "SessionEnd": "SessionEnd",
    },
    "gemini": {
        "SessionStart": "SessionStart", "BeforeAgent": "UserPromptSubmit", "AfterTool": "PostToolUse",
        "AfterAgent": "Stop", "SessionEnd": "SessionEnd",
    },
}
# The agent's events whose answer may carry `hookSpecificOutput.additionalContext`.
CONTEXT_EVENTS: dict[str, frozenset[str]] = {
    "codex": frozenset({"SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse"}),
    "gemini": frozenset({"SessionStart", "BeforeAgent", "AfterTool"}),
}
# What ace-engine does for Claude Code that an agent gives no way to do: our event → what is lost.
LOST: dict[str, dict[str, str]] = {
    "codex": {
        "PostToolUseFailure": "no event of its own: a failed shell call is recognised by the exit code in "
                              "Codex's rollout file",
    },
    "gemini": {
        "PreToolUse": "BeforeTool takes no added context, so lessons for a file in another domain come "
                      "with that tool's result (AfterTool) instead of before the tool runs",
        "PermissionRequest": "no permission hook: Gemini asks you itself before `ace` commands run",
        "SubagentStop": "no subagent event: a subagent's work is learned with its parent's turn",
        "PreCompact": "PreCompress fires on every compression check (before each model call), not only when "
                      "the history is compressed, and no event follows a compression: lessons are not pinned "
                      "across it; the next prompt's injection carries the relevant ones",
    },
}
_CODEX_TAIL = 256 * 1024
_EXIT_LINE = re.compile(r"(?:Exit Code|Process exited with code):? (-?\d+)", re.IGNORECASE)


def event_for(agent: str, native: str) -> str:
    """Our event for the agent's `native` event; "" when we do not handle it."""
    return EVENTS_BY_AGENT.get(agent, {}).get(native, "")


def adapt(agent: str, native: str, event: str, payload: "dict[str, Any]") -> "tuple[str, dict[str, Any]]":
    """(our event, a Claude-Code-shaped payload) for the agent's `payload` of `native`."""
    out = dict(payload)
    out["hook_event_name"] = event
    if "tool_name" in out:
        out["tool_name"], out["tool_input"] = to_canonical(agent, out.get("tool_name"), out.get("tool_input"))
    if agent == "gemini":
        if native == "AfterAgent":
            out["last_assistant_message"] = payload.get("prompt_response")
        if native == "AfterTool":
            return _gemini_result(out)
    elif agent == "codex" and event == "PostToolUse":
        return _codex_result(out)
    return event, out


def _gemini_result(out: "dict[str, Any]") -> "tuple[str, dict[str, Any]]":
    response = out.get("tool_response")
    if not isinstance(response, dict):
        return "PostToolUse", out
    text = text_of(response.get("llmContent"))  # every part, a functionResponse's whole (capture/parts.py)
    error = response.get("error")
    normalized: dict[str, Any] = {"output": text}
    if out.get("tool_name") == "Bash":
        m = _EXIT_LINE.search(text)
        normalized["exitCode"] = int(m.group(1)) if m else 0
    out["tool_response"] = normalized
    if error:
        message = error.get("message") if isinstance(error, dict) else error
        out["error"] = message if isinstance(message, str) and message else (text or "tool failed")
        return "PostToolUseFailure", out
    return "PostToolUse", out


def _codex_result(out: "dict[str, Any]") -> "tuple[str, dict[str, Any]]":
    response = out.get("tool_response")
    if isinstance(response, str):
        response = {"output": response}
    if isinstance(response, dict) and not isinstance(response.get("exitCode"), int):
        # A shell call's code is in the rollout file (its output is the command's own text);
        # apply_patch's output opens with "Exit code: N".
        code = None
        if out.get("tool_name") == "Bash":
            code = codex_exit_code(out.get("transcript_path"), out.get("tool_use_id"))
        elif isinstance(response.get("output"), str) and (m := _EXIT_LINE.match(response["output"][:200])):
            code = int(m.group(1))
        if code is not None:
            response = {**response, "exitCode": code}
    out["tool_response"] = response
    return "PostToolUse", out


def codex_exit_code(transcript_path: object, call_id: object) -> int | None:
    """The exit code Codex recorded for shell call `call_id` in its rollout file (the last
    256 KB are read), or None. The file is only read, as untrusted data."""
    if not isinstance(transcript_path, str) or not isinstance(call_id, str) or not call_id:
        return None
    try:
        # Non-blocking open and a regular-file check: a FIFO named here would otherwise hang the hook.
        fd = os.open(transcript_path, os.O_RDONLY | os.O_NONBLOCK)
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            os.close(fd)
            return None
        with open(fd, "rb") as fh:
            size = fh.seek(0, os.SEEK_END)
            fh.seek(max(0, size - _CODEX_TAIL))
            tail = fh.read(_CODEX_TAIL)
    except OSError:
        return None
    needle = call_id.encode("utf-8", "replace")
    found = None
    end = len(tail)
    while (at := tail.rfind(needle, 0, end)) >= 0:  # only the lines naming the call are parsed
        start, stop = tail.rfind(b"\n", 0, at) + 1, tail.find(b"\n", at)
        end = start
        try:
            entry = json.loads(tail[start:stop if stop >= 0 else len(tail)])
        except ValueError:
            continue
        payload = entry.get("payload") if isinstance(entry, dict) else None
        item = payload.get("item") if isinstance(payload, dict) else None
        if isinstance(item, dict) and item.get("id") == call_id and isinstance(item.get("exit_code"), int):
            return item["exit_code"]
        if isinstance(payload, dict) and payload.get("call_id") == call_id and isinstance(payload.get("output"), str):
            m = _EXIT_LINE.search(payload["output"][:400])
            found = int(m.group(1)) if m and found is None else found
        if end == 0:
            break
    return found


def answer(agent: str, native: str, obj: "dict[str, Any] | None") -> "dict[str, Any] | None":
    """The handler's answer as the agent accepts it for `native`; None when nothing is left."""
    if not obj:
        return None
    out: dict[str, Any] = {}
    if isinstance(obj.get("systemMessage"), str):
        out["systemMessage"] = obj["systemMessage"]
    specific = obj.get("hookSpecificOutput")
    if isinstance(specific, dict):
        context = specific.get("additionalContext")
        if isinstance(context, str) and context and native in CONTEXT_EVENTS.get(agent, frozenset()):
            out["hookSpecificOutput"] = {"hookEventName": native, "additionalContext": context}
        elif agent == "codex" and native == "PermissionRequest" and isinstance(specific.get("decision"), dict):
            out["hookSpecificOutput"] = {"hookEventName": native, "decision": specific["decision"]}
    return out or None
