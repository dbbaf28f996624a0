"""Session files of Codex CLI and Gemini CLI, written in the formats their source defines (no real
CLI ran to make them): what `ace learn --transcript` reads for issue 25.

- `CodexRollout`: Codex's rollout JSONL (`codex-rs/protocol/src/protocol.rs` `RolloutLine {timestamp,
  type, payload}` / `RolloutItem`; `models.rs` `ResponseItem`: `message`, `function_call` with its
  `arguments` a JSON string, `function_call_output`, `custom_tool_call` (freeform `apply_patch`),
  `local_shell_call`; `event_msg` `user_message` / `exec_command_end` / `thread_rolled_back`; the
  shell tool's output `{"output", "metadata": {"exit_code", "duration_seconds"}}` from
  `format_exec_output_for_model_structured`, `Exit code: N` from `…_freeform`).
- `GeminiChat`: Gemini's chat recording (`packages/core/src/services/chatRecordingService.ts` and
  `chatRecordingTypes.ts`: a metadata record `{sessionId, projectHash, startTime, lastUpdated}`,
  `MessageRecord {id, timestamp, type, content, toolCalls?}`, a message appended again when it
  changes, `{$rewindTo}`; tool results as `functionResponse {id, name, response: {output}}` parts;
  `run_shell_command`'s output `Output: …\\nExit Code: N` from `packages/core/src/tools/shell.ts`).
"""

import hashlib
import json
import uuid
from datetime import UTC, datetime, timedelta

T0 = datetime(2026, 11, 20, 9, 0, 0, tzinfo=UTC)


def stamp(seconds: float) -> str:
    return (T0 + timedelta(seconds=seconds)).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


class CodexRollout:
    def __init__(self, cwd, session_id=None, source="cli", branch="main"):
        self.session_id = session_id or str(uuid.uuid4())
        self.t = 0.0
        self.lines: list[dict] = []
        meta = {"id": self.session_id, "timestamp": stamp(0), "cwd": str(cwd), "originator": "codex_cli_rs",
                "cli_version": "0.169.0", "source": source, "model_provider": "openai",
                "git": {"commit_hash": "0" * 40, "branch": branch, "repository_url": None}}
        self.add("session_meta", meta)
        self.add("response_item", {"type": "message", "role": "user", "content": [
            {"type": "input_text", "text": f"<environment_context>\n  <cwd>{cwd}</cwd>\n</environment_context>"}]})

    def add(self, kind, payload, dt=1.0):
        self.t += dt
        self.lines.append({"timestamp": stamp(self.t), "type": kind, "payload": payload})

    def prompt(self, text):
        self.add("response_item", {"type": "message", "role": "user",
                                   "content": [{"type": "input_text", "text": text}]})
        self.add("event_msg", {"type": "user_message", "message": text, "images": [], "kind": "plain"}, 0.0)
        self.add("turn_context", {"cwd": self.lines[0]["payload"]["cwd"], "approval_policy": "on-request",
                                  "sandbox_policy": {"mode": "workspace-write"}, "model": "gpt-5-codex",
                                  "summary": "auto"}, 0.0)

    def shell(self, call_id, argv, output, exit_code, *, tool="shell"):
        """The `shell` tool (argv), its structured output; `shell_command` (a string), freeform."""
        if tool == "shell":
            args = {"command": argv, "workdir": self.lines[0]["payload"]["cwd"], "timeout_ms": 120000}
            out = json.dumps({"output": output, "metadata": {"exit_code": exit_code, "duration_seconds": 0.4}})
        elif tool == "exec_command":
            args = {"cmd": argv, "workdir": self.lines[0]["payload"]["cwd"], "yield_time_ms": 10000}
            out = f"Chunk ID: 1\nWall time: 0.4 seconds\nProcess exited with code {exit_code}\nOutput:\n{output}"
        else:
            args = {"command": argv, "workdir": self.lines[0]["payload"]["cwd"]}
            out = f"Exit code: {exit_code}\nWall time: 0.4 seconds\nOutput:\n{output}"
        self.add("response_item", {"type": "function_call", "name": tool, "arguments": json.dumps(args),
                                   "call_id": call_id})
        self.add("response_item", {"type": "function_call_output", "call_id": call_id, "output": out})

    def patch(self, call_id, patch, ok=True):
        self.add("response_item", {"type": "custom_tool_call", "status": "completed", "call_id": call_id,
                                   "name": "apply_patch", "input": patch})
        self.add("event_msg", {"type": "patch_apply_end", "call_id": call_id, "stdout": "", "stderr": "",
                               "success": ok}, 0.1)
        text = "Success. Updated the following files:\nM calc.py\n" if ok else \
            "apply_patch verification failed: Failed to find expected lines"
        self.add("response_item", {"type": "custom_tool_call_output", "call_id": call_id,
                                   "output": f"Exit code: {0 if ok else 1}\nWall time: 0 seconds\nOutput:\n{text}"})

    def code_mode(self, call_id, script, parts=None, *, running=None):
        """Code mode (Codex Desktop): one freeform `exec` whose input is JavaScript calling the
        tools; its answer a header then one `input_text` per `text(…)` the script printed, or, while
        the script still runs, "Script running with cell ID N" alone (its end comes in a `wait`)."""
        self.add("response_item", {"type": "custom_tool_call", "status": "completed", "call_id": call_id,
                                   "name": "exec", "input": script})
        self.add("response_item", {"type": "custom_tool_call_output", "call_id": call_id,
                                    "output": self._cell_answer(parts, running)})

    def wait(self, call_id, cell, parts=None, *, running=False):
        self.add("response_item", {"type": "function_call", "name": "wait", "call_id": call_id,
                                   "arguments": json.dumps({"cell_id": cell, "yield_time_ms": 1000})})
        self.add("response_item", {"type": "function_call_output", "call_id": call_id,
                                   "output": self._cell_answer(parts, cell if running else None)})

    @staticmethod
    def _cell_answer(parts, running):
        if running is not None:
            return f"Script running with cell ID {running}\nWall time 10.0 seconds\nOutput:\n"
        return [{"type": "input_text", "text": "Script completed\nWall time 0.1 seconds\nOutput:\n"}] + \
            [{"type": "input_text", "text": p} for p in parts or []]

    def reply(self, text):
        self.add("response_item", {"type": "message", "role": "assistant",
                                   "content": [{"type": "output_text", "text": text}]})
        self.add("event_msg", {"type": "agent_message", "message": text}, 0.0)

    def write(self, path):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("".join(json.dumps(line) + "\n" for line in self.lines))
        return path


def codex_path(home, session_id):
    """Where Codex keeps a rollout: `$CODEX_HOME/sessions/YYYY/MM/DD/rollout-<time>-<id>.jsonl`."""
    return home / "sessions" / "2026" / "11" / "20" / f"rollout-2026-11-20T09-00-00-{session_id}.jsonl"


def codex_fix_session(cwd, session_id=None):
    """A Codex session that fails a test, patches the code and passes it: worth learning."""
    r = CodexRollout(cwd, session_id)
    r.prompt("fix the division test")
    r.shell("call_1", ["bash", "-lc", "python -m pytest -q"],
            "FAILED tests/test_calc.py::test_div - ZeroDivisionError: division by zero", 1)
    r.patch("call_2", "*** Begin Patch\n*** Update File: calc.py\n@@ def div(a, b):\n-    return a / b\n"
                      "+    return a / b if b else 0\n*** End Patch\n")
    r.shell("call_3", "python -m pytest -q", "3 passed in 0.02s", 0, tool="shell_command")
    r.reply("Fixed: division by zero now returns 0.")
    return r


class GeminiChat:
    def __init__(self, root, session_id=None, kind=None):
        self.session_id = session_id or str(uuid.uuid4())
        self.t = 0.0
        meta = {"sessionId": self.session_id, "projectHash": hashlib.sha256(str(root).encode()).hexdigest(),
                "startTime": stamp(0), "lastUpdated": stamp(0)}
        if kind:
            meta["kind"] = kind
        self.records: list[dict] = [meta]
        self.n = 0

    def _id(self):
        self.n += 1
        return f"{self.session_id[:8]}-{self.n}"

    def prompt(self, text):
        self.t += 1
        mid = self._id()
        self.records.append({"id": mid, "timestamp": stamp(self.t), "type": "user", "content": [{"text": text}]})
        return mid

    def notice(self, text, kind="info"):
        self.t += 1
        self.records.append({"id": self._id(), "timestamp": stamp(self.t), "type": kind, "content": text})

    def calls(self, *calls, text=""):
        """A model turn with tool calls: (id, name, args, output, status). Recorded as Gemini does:
        the message first with the calls scheduled, then again when they completed."""
        self.t += 1
        mid, at = self._id(), stamp(self.t)
        scheduled = [{"id": c[0], "name": c[1], "args": c[2], "status": "scheduled", "timestamp": at} for c in calls]
        self.records.append({"id": mid, "timestamp": at, "type": "gemini", "content": text, "toolCalls": scheduled,
                             "thoughts": [], "model": "gemini-2.5-pro"})
        self.t += 1
        done = [{"id": c[0], "name": c[1], "args": c[2], "status": c[4], "timestamp": stamp(self.t),
                 "result": [{"functionResponse": {"id": c[0], "name": c[1], "response": {"output": c[3]}}}],
                 "displayName": c[1], "description": "", "renderOutputAsMarkdown": False} for c in calls]
        self.records.append({"id": mid, "timestamp": at, "type": "gemini", "content": text, "toolCalls": done,
                             "thoughts": [], "model": "gemini-2.5-pro"})

    def reply(self, text):
        self.t += 1
        self.records.append({"id": self._id(), "timestamp": stamp(self.t), "type": "gemini",
                             "content": [{"text": text}], "model": "gemini-2.5-pro"})

    def rewind_to(self, message_id):
        self.records.append({"$rewindTo": message_id})

    def write(self, path):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("".join(json.dumps(r) + "\n" for r in self.records))
        return path


def gemini_fix_session(root, session_id=None):
    """A Gemini session that fails a test, edits the code and passes it: worth learning."""
    g = GeminiChat(root, session_id)
    g.prompt("fix the division test")
    g.calls(("c1", "run_shell_command", {"command": "python -m pytest -q", "description": "run the tests"},
             "Output: FAILED tests/test_calc.py::test_div - ZeroDivisionError: division by zero\nExit Code: 1",
             "success"))
    g.calls(("c2", "replace", {"file_path": f"{root}/calc.py", "old_string": "return a / b",
                               "new_string": "return a / b if b else 0", "instruction": "guard b == 0"},
             f"Successfully modified file: {root}/calc.py (1 replacements).", "success"))
    g.calls(("c3", "run_shell_command", {"command": "python -m pytest -q"}, "Output: 3 passed in 0.02s", "success"))
    g.reply("Fixed: division by zero now returns 0.")
    return g


def gemini_project_dir(home, root, slug="calc"):
    """Gemini's project folder `~/.gemini/tmp/<slug>/`, with the `.project_root` marker it writes."""
    folder = home / ".gemini" / "tmp" / slug
    folder.mkdir(parents=True, exist_ok=True)
    (folder / ".project_root").write_text(str(root))
    return folder
