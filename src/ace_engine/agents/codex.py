"""Codex CLI: its hook events and answers, its tools, its installer and its rollout reader.

Facts, from Codex's source and its hook runs (Codex 0.169): Codex sends Claude Code's event names
and fields, reports its shell as `Bash` with `command`, and gives PostToolUse only the output
text: the exit code is read from the session's rollout file (`transcript_path`), whose
`CommandExecution` item for the call is written before the hook runs. Answers: Claude Code's
shape, strictly validated; timeouts in seconds. Tools and their fields from
`codex-rs/core/src/tools/spec.rs` (shell's `command` is an argv list; `shell_command` a string;
unified exec's `exec_command` a `cmd`); `apply_patch` is no single tool here:
`capture.patch.patch_call` makes it the Edit / Write it is.

Cost: stdlib only; a PostToolUse of a shell call reads at most the last 256 KB of the rollout file.
"""

import json
import os
import re
import stat  # already loaded by `os`

from .base import Agent

TYPE_CHECKING = False  # not `typing.TYPE_CHECKING`: the hooks must not import `typing`
if TYPE_CHECKING:
    from typing import Any

_TAIL = 256 * 1024
_EXIT_LINE = re.compile(r"(?:Exit Code|Process exited with code):? (-?\d+)", re.IGNORECASE)


class Codex(Agent):
    __slots__ = ()

    def adapt(self, native: str, event: str, payload: "dict[str, Any]") -> "tuple[str, dict[str, Any]]":
        event, out = super().adapt(native, event, payload)
        if event != "PostToolUse":
            return event, out
        response = out.get("tool_response")
        if isinstance(response, str):
            response = {"output": response}
        if isinstance(response, dict) and not isinstance(response.get("exitCode"), int):
            # A shell call's code is in the rollout file (its output is the command's own text);
            # apply_patch's output opens with "Exit code: N".
            code = None
            if out.get("tool_name") == "Bash":
                code = exit_code(out.get("transcript_path"), out.get("tool_use_id"))
            elif isinstance(response.get("output"), str) and (m := _EXIT_LINE.match(response["output"][:200])):
                code = int(m.group(1))
            if code is not None:
                response = {**response, "exitCode": code}
        out["tool_response"] = response
        return "PostToolUse", out

    def answer_specific(self, native: str, specific: "dict[str, Any]") -> "dict[str, Any] | None":
        if native == "PermissionRequest" and isinstance(specific.get("decision"), dict):
            return {"hookEventName": native, "decision": specific["decision"]}
        return None


def exit_code(transcript_path: object, call_id: object) -> int | None:
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
            fh.seek(max(0, size - _TAIL))
            tail = fh.read(_TAIL)
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


AGENT = Codex(
    "codex",
    events={"SessionStart": "SessionStart", "UserPromptSubmit": "UserPromptSubmit", "PreToolUse": "PreToolUse",
            "PermissionRequest": "PermissionRequest", "PostToolUse": "PostToolUse", "PreCompact": "PreCompact",
            "Stop": "Stop", "SubagentStop": "SubagentStop", "SessionEnd": "SessionEnd"},
    context_events=frozenset({"SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse"}),
    lost={"PostToolUseFailure": "no event of its own: a failed shell call is recognised by the exit code in "
                                "Codex's rollout file"},
    tools={
        "shell": ("Bash", {"command": "command"}),
        "container.exec": ("Bash", {"command": "command"}),
        "local_shell": ("Bash", {"command": "command"}),
        "shell_command": ("Bash", {"command": "command"}),
        "exec_command": ("Bash", {"command": "cmd"}),
        "read_file": ("Read", {"file_path": "file_path"}),
        "list_dir": ("LS", {"path": "dir_path"}),
        "grep_files": ("Grep", {"pattern": "pattern", "path": "path"}),
        "view_image": ("Read", {"file_path": "path"}),
        "web_search": ("WebSearch", {"query": "query"}),
    },
    patch_tools=frozenset({"apply_patch", "applypatch"}),
    timeout_scale=1,
    # Codex edits files with apply_patch (a domain may shift) and runs commands as `Bash`.
    matchers={"PreToolUse": "apply_patch", "PermissionRequest": "Bash"},
    installer="codex_config",
    readers=("codex_rollout",),
    trust=("Codex runs a hook only after you have reviewed it: start `codex` and approve the ace-engine hooks in "
           "/hooks", " (and trust this project when Codex asks: it reads .codex/ only in trusted projects)",
           "approve them in Codex's /hooks if you have not"),
    hooks_off_fix="set [features] hooks = true",
    probe=("PermissionRequest", {"hook_event_name": "PermissionRequest", "tool_name": "Bash",
                                 "tool_input": {"command": "ace clear --confirm"}}, "denies"),
)
