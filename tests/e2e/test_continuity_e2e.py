"""Continuity, end to end, inside the real Claude Code CLI: session 2 knows where session 1 left off.

One temporary git project holds a tiny Python package whose tests fail.  In session 1 the scripted model
runs ``python -m pytest -q`` for real (two tests fail), reads ``calc.py``, fixes ``add()`` with a real
Edit, writes ``NOTES.md``, runs the tests again — ``test_sub`` still fails, ``sub()`` is not written —
and says so.  Claude Code's Stop hook queues the learning job; the detached worker learns and writes the
session's summary (the test only waits for it).  Session 2 is a new session: its very first model
request must carry ``<ace-recent-context>`` naming session 1's request, the failing test and the files
it touched.  Resuming session 1, and resuming session 2, must not send the block again: the hook's own
output during those runs (Claude Code's transcript attachments) holds none, nor do the new turns.  After
``/compact`` in session 2 the block comes back (with the pinned lessons), for the same sessions.
"""

from __future__ import annotations

import json
import os
import sqlite3
import sys
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from .claude_cli import ClaudeResult, hook_attachments, run_claude
from .conftest import make_git_project
from .model_server import MAIN, ScriptedModelServer
from .test_capture_e2e import ace_env, ace_json, ace_log_errors, assert_clean_run
from .test_injection_e2e import describe_blocks, new_turn_blocks, request_blocks
from .test_learning_e2e import UNFINISHED, wait_until, worker_processes

pytestmark = pytest.mark.e2e

PROJECT_FILES = {
    "README.md": "# calc\n",
    "calc.py": "def add(a, b):\n    return a - b\n",
    "test_calc.py": ("import calc\n\n\ndef test_add():\n    assert calc.add(2, 3) == 5\n\n\n"
                     "def test_sub():\n    assert calc.sub(5, 3) == 2\n"),
}
TEST_COMMAND = "python -m pytest -q"
REQUEST = "The calc tests fail: fix add() in calc.py and add the missing sub() function"
FIRST_FINAL = "Fixed add(); test_sub still fails because sub() is not written yet. Next I need to add sub() to calc.py."
SECOND_PROMPT = "where were we?"
SECOND_FINAL = "We were fixing calc.py."
RESUME_FINAL = "Back on it."
SUMMARY_TIMEOUT = 60.0
USER_LESSON = "calc.py keeps one function per arithmetic operation; tests live in test_calc.py."


def first_session_script(project: Path) -> list:
    calc = str(project / "calc.py")
    return [
        [{"name": "Bash", "input": {"command": TEST_COMMAND, "description": "Run the tests"}}],
        [{"name": "Read", "input": {"file_path": calc}}],
        [{"name": "Edit", "input": {"file_path": calc, "old_string": "return a - b", "new_string": "return a + b"}}],
        [{"name": "Write", "input": {"file_path": str(project / "NOTES.md"), "content": "add() fixed; sub() next\n"}}],
        [{"name": "Bash", "input": {"command": TEST_COMMAND, "description": "Run the tests again"}}],
        FIRST_FINAL,
    ]


@dataclass
class Story:
    project: Path
    home: Path
    env: dict[str, str]
    ace_home: Path
    runs: dict[str, ClaudeResult] = field(default_factory=dict)
    summary: dict | None = None
    summary_seconds: float | None = None
    server_errors: list[str] = field(default_factory=list)

    def first_request(self, run: str) -> dict:
        return next(r for r in self.runs[run].server_requests if r.kind == MAIN).body

    def stored_summary(self) -> dict | None:
        db = self.ace_home / "ace.db"
        if not db.exists():
            return None
        con = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=10)
        try:
            con.row_factory = sqlite3.Row
            row = con.execute("SELECT * FROM session_summaries WHERE session_id = ?",
                              (self.runs["first"].session_id,)).fetchone()
        except sqlite3.OperationalError:  # not migrated yet
            return None
        finally:
            con.close()
        return dict(row) if row else None

    def diagnostics(self) -> str:
        log = self.ace_home / "logs" / "ace.log"
        jobs = ace_json(self.env, self.home, "jobs", "--project", str(self.project))
        return (f"summary after {self.summary_seconds}s: {json.dumps(self.summary, indent=1, default=str)[:3000]}\n"
                f"jobs: {json.dumps(jobs, indent=1)[:3000]}\n"
                f"ace.log tail:\n{log.read_text(errors='replace')[-3000:] if log.exists() else '<none>'}")


@pytest.fixture(scope="module")
def story(claude_bin, tmp_path_factory) -> Story:
    tmp = tmp_path_factory.mktemp("continuity")
    env = ace_env(tmp)
    env["ACE_LEARNING_LINGER_SECONDS"] = "0"
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")])
    project = make_git_project(tmp / "project", PROJECT_FILES)
    home = tmp / "home"
    home.mkdir()
    scn = Story(project, home, env, Path(env["ACE_HOME"]))
    installed = ace_json(env, home, "install", "--project", str(project))
    assert {"SessionStart", "Stop"} <= set(installed["events"]), installed

    server = ScriptedModelServer().start()
    try:
        scn.runs["first"] = run_claude(claude_bin, project, home, server, REQUEST,
                                       script=first_session_script(project), env=env).check()

        def summarised():
            jobs = ace_json(env, home, "jobs", "--project", str(project))["jobs"]
            if not jobs or any(j["status"] in UNFINISHED for j in jobs):
                return None
            return scn.stored_summary()

        scn.summary, scn.summary_seconds = wait_until(summarised, SUMMARY_TIMEOUT)
        wait_until(lambda: not worker_processes(scn.ace_home), 10.0)
        scn.runs["second"] = run_claude(claude_bin, project, home, server, SECOND_PROMPT,
                                        script=[SECOND_FINAL], env=env).check()
        # A lesson of the user's, added since session 1: its resume has a digest to give (the learner's
        # lessons of session 1 — a command that merely ran, a failure left open — are not digest material).
        added = ace_json(env, home, "add", USER_LESSON, "--section", "rules", "--project", str(project))
        assert added.get("id"), added
        scn.runs["resume_first"] = run_claude(claude_bin, project, home, server, "continue",
                                              resume=scn.runs["first"].session_id, script=[RESUME_FINAL],
                                              env=env).check()
        scn.runs["resume_second"] = run_claude(claude_bin, project, home, server, "continue",
                                               resume=scn.runs["second"].session_id, script=[RESUME_FINAL],
                                               env=env).check()
        # Compaction wipes the block from session 2's context: it comes back with the pins.
        scn.runs["compact"] = run_claude(claude_bin, project, home, server, "/compact",
                                         resume=scn.runs["second"].session_id,
                                         script=["unused: /compact is answered with the summary"], env=env).check()
        scn.runs["after_compact"] = run_claude(claude_bin, project, home, server, "and now?",
                                               resume=scn.runs["second"].session_id, script=[RESUME_FINAL],
                                               env=env).check()
        scn.server_errors = list(server.errors)
    finally:
        server.stop()
    wait_until(lambda: not worker_processes(scn.ace_home), 30.0)
    return scn


def test_first_session_really_leaves_a_test_failing(story):
    assert_clean_run(story.runs["first"], FIRST_FINAL)
    assert (story.project / "calc.py").read_text() == "def add(a, b):\n    return a + b\n"
    assert (story.project / "NOTES.md").exists()
    mains = [r for r in story.runs["first"].server_requests if r.kind == MAIN]
    last = json.dumps(mains[-1].body["messages"][-1])
    assert "test_sub" in last and "1 failed, 1 passed" in last, last[-2000:]


def test_the_worker_wrote_the_summary_in_the_background(story):
    summary = story.summary
    assert summary is not None, story.diagnostics()
    assert summary["carry"] == 1 and summary["branch"] == "main" and summary["open_ends"] >= 2, story.diagnostics()
    facts = json.loads(summary["summary"])
    assert facts["main_request"] == REQUEST
    assert facts["checks"]["test"]["passed"] is False and "test_sub" in facts["checks"]["test"]["result"]
    assert {f["path"]: f["change"] for f in facts["files"]} == {"calc.py": "edited", "NOTES.md": "created"}
    assert set(facts["uncommitted"]) == {"calc.py", "NOTES.md"}  # git status when the worker ran


def test_second_session_first_request_carries_the_recent_context(story):
    body = story.first_request("second")
    blocks = request_blocks(body, "ace-recent-context")
    assert len(blocks) == 1, f"{describe_blocks(request_blocks(body))}\n{story.diagnostics()}"
    block = blocks[0]
    assert block.where == "system-message" and block.prefix == "SessionStart hook additional context: ", \
        describe_blocks(blocks)
    text = block.body
    assert f"Asked: {REQUEST}" in text, text
    assert "Left failing: tests `python -m pytest -q`" in text and "test_sub" in text, text
    assert "calc.py (edited)" in text and "NOTES.md (created)" in text, text
    assert f"session {story.runs['first'].session_id[:8]}" in text and "branch main" in text, text
    # next to the lesson digest, in the same hook answer
    assert request_blocks(body, "ace-playbook") == [] or all(
        b.where == "system-message" for b in request_blocks(body, "ace-playbook"))


@pytest.mark.parametrize("run,shown_before", [("resume_first", 0), ("resume_second", 1)])
def test_resuming_does_not_repeat_it(story, run, shown_before):
    body = story.first_request(run)
    added = [b for b in new_turn_blocks(body) if b.tag == "ace-recent-context"]
    assert added == [], describe_blocks(added)
    # The conversation holds what it was shown at its start, once; nothing more.
    assert len(request_blocks(body, "ace-recent-context")) == shown_before, describe_blocks(request_blocks(body))
    # And the hook itself sent nothing of the kind on resume (Claude Code might hide a duplicate):
    # its SessionStart:resume answers, as the transcript records them.
    answers = [a for a in hook_attachments(story.runs[run].transcript_path)
               if a.get("type") == "hook_success" and a.get("hookName") == "SessionStart:resume"]
    assert not any("ace-recent-context" in str(a.get("stdout")) for a in answers), answers
    if run == "resume_first":  # control: that hook did answer on resume (with the lesson added since)
        assert any("<ace-playbook>" in str(a.get("stdout")) for a in answers), answers


def test_after_compaction_the_block_comes_back(story):
    body = story.first_request("after_compact")
    blocks = request_blocks(body, "ace-recent-context")
    assert len(blocks) == 1, describe_blocks(request_blocks(body))
    block = blocks[0]
    assert block.where == "system-message" and block.prefix == "SessionStart hook additional context: "
    assert f"Asked: {REQUEST}" in block.body and "test_sub" in block.body, block.body
    before = request_blocks(story.first_request("second"), "ace-recent-context")[0].body
    # The same sessions (their summaries may have been rewritten since: session 1 was resumed, so its
    # time may be a minute later): each header without its time, `## today 20:43 · branch … · session …`.
    def sessions(text):
        return [ln.split(" · ", 1)[-1] for ln in text.splitlines() if ln.startswith("## ")]
    assert sessions(block.body) == sessions(before), (block.body, before)
    assert 'Left to do (agent said): "Next I need to add sub() to calc.py."' in block.body, block.body


def test_runs_are_clean(story):
    assert_clean_run(story.runs["second"], SECOND_FINAL)
    assert_clean_run(story.runs["resume_first"], RESUME_FINAL)
    assert_clean_run(story.runs["resume_second"], RESUME_FINAL)
    assert_clean_run(story.runs["after_compact"], RESUME_FINAL)
    assert story.server_errors == []
    assert ace_log_errors(story.ace_home) == []

