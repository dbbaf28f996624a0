"""Drive realistic Claude Code sessions through the real hook engine (in-process: the real
handlers, store and spool, without a process per event), and wait for learning workers."""

import io
import json
import os
import sqlite3
import time

from ace_engine.hooks import engine


class Session:
    """One Claude Code session in `cwd`: each method fires the hooks Claude Code would."""

    def __init__(self, cwd, session_id="sess-1", transcript=None):
        self.cwd = str(cwd)
        self.session_id = session_id
        self.transcript = transcript or os.path.join(self.cwd, ".transcript.jsonl")
        self.n = 0

    def fire(self, event: str, agent_id=None, agent_type=None, **fields) -> dict | None:
        data = {"session_id": self.session_id, "transcript_path": self.transcript, "cwd": self.cwd,
                "hook_event_name": event, "permission_mode": "default", **fields}
        if agent_id:
            data.update(agent_id=agent_id, agent_type=agent_type or "general-purpose")
        out = io.StringIO()
        try:
            engine.main([event], stdin=io.BytesIO(json.dumps(data).encode()), stdout=out)
        except SystemExit as exc:
            assert exc.code == 0
        text = out.getvalue()
        return json.loads(text) if text.strip() else None

    def start(self, source="startup"):
        return self.fire("SessionStart", source=source)

    def prompt(self, text):
        return self.fire("UserPromptSubmit", prompt=text)

    def _id(self):
        self.n += 1
        return f"toolu_{self.session_id}_{self.n:04d}"

    def bash(self, command, stdout="", *, error=None, exit_code=None, duration_ms=900, agent_id=None):
        """A Bash call: `error` (e.g. "Exit code 1\\n…") makes it a PostToolUseFailure."""
        tool_input = {"command": command, "description": "run"}
        if error is not None:
            return self.fire("PostToolUseFailure", agent_id=agent_id, tool_name="Bash", tool_use_id=self._id(),
                             tool_input=tool_input, error=error, is_interrupt=False, duration_ms=duration_ms)
        response = {"stdout": stdout, "stderr": "", "interrupted": False, "isImage": False}
        if exit_code is not None:
            response["exitCode"] = exit_code
        return self.fire("PostToolUse", agent_id=agent_id, tool_name="Bash", tool_use_id=self._id(),
                         tool_input=tool_input, tool_response=response, duration_ms=duration_ms)

    def edit(self, path, old, new, *, agent_id=None, error=None):
        tool_input = {"file_path": os.path.join(self.cwd, path), "old_string": old, "new_string": new}
        if error is not None:
            return self.fire("PostToolUseFailure", agent_id=agent_id, tool_name="Edit", tool_use_id=self._id(),
                             tool_input=tool_input, error=error, is_interrupt=False, duration_ms=5)
        return self.fire("PostToolUse", agent_id=agent_id, tool_name="Edit", tool_use_id=self._id(),
                         tool_input=tool_input, tool_response={"filePath": tool_input["file_path"]}, duration_ms=5)

    def write(self, path, content, *, agent_id=None):
        tool_input = {"file_path": os.path.join(self.cwd, path), "content": content}
        return self.fire("PostToolUse", agent_id=agent_id, tool_name="Write", tool_use_id=self._id(),
                         tool_input=tool_input, tool_response={"filePath": tool_input["file_path"]}, duration_ms=5)

    def read(self, path, lines=10, *, agent_id=None):
        full = os.path.join(self.cwd, path)
        return self.fire("PostToolUse", agent_id=agent_id, tool_name="Read", tool_use_id=self._id(),
                         tool_input={"file_path": full},
                         tool_response={"type": "text", "file": {"filePath": full, "content": "x", "numLines": lines}},
                         duration_ms=2)

    def stop(self, message="Done."):
        return self.fire("Stop", stop_hook_active=False, last_assistant_message=message)

    def subagent_stop(self, agent_id, agent_type="general-purpose", message="Done."):
        return self.fire("SubagentStop", agent_id=agent_id, agent_type=agent_type, stop_hook_active=False,
                         last_assistant_message=message)

    def end(self, reason="prompt_input_exit"):
        return self.fire("SessionEnd", reason=reason)


def db(ace_home) -> sqlite3.Connection:
    con = sqlite3.connect(os.path.join(str(ace_home), "ace.db"), timeout=30)
    con.row_factory = sqlite3.Row
    return con


def rows(ace_home, sql, params=()) -> list[dict]:
    con = db(ace_home)
    try:
        return [dict(r) for r in con.execute(sql, params)]
    finally:
        con.close()


def wait_for_learning(ace_home, timeout=60.0) -> list[dict]:
    """Wait until no job is queued or running and no worker holds a lock; return the jobs."""
    from ace_engine.jobs.worker import wait_idle

    deadline = time.monotonic() + timeout
    while True:
        jobs = rows(ace_home, "SELECT * FROM jobs ORDER BY id")
        busy = [j for j in jobs if j["status"] in ("queued", "running")]
        held = not wait_idle(None, timeout=0)
        if not busy and not held:
            return jobs
        if time.monotonic() > deadline:
            raise AssertionError(f"learning did not finish in {timeout}s: {busy}, lock held: {held}")
        time.sleep(0.05)


def bullets(ace_home, status=None) -> list[dict]:
    sql = "SELECT * FROM bullets" + (" WHERE status = ?" if status else "") + " ORDER BY created_at, id"
    return rows(ace_home, sql, (status,) if status else ())


def fix_session(s: Session, *, test_cmd="python -m pytest -q"):
    """The canonical error → fix → pass task: a unicode test fails, slugify is fixed, tests pass."""
    s.prompt("test_unicode fails for accented input; fix slugify so the tests pass")
    s.read("src/textutil.py")
    s.bash(test_cmd, error="Exit code 1\nF                                       [100%]\n"
                            "FAILED tests/test_textutil.py::test_unicode - AssertionError: assert 'cr-me-br-l-e' == 'creme-brulee'\n"
                            "1 failed in 0.04s", duration_ms=912)
    s.edit("src/textutil.py", "    text = text.lower()",
           "    text = unicodedata.normalize('NFKD', text).encode('ascii', 'ignore').decode().lower()")
    s.edit("src/textutil.py", "import re\n", "import re\nimport unicodedata\n")
    s.bash(test_cmd, stdout=".                                       [100%]\n1 passed in 0.02s", duration_ms=804)
    s.stop("Fixed slugify: accents are stripped with unicodedata.normalize. Tests pass (1 passed).")
