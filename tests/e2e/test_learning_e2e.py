"""The learning loop, end to end, inside the real Claude Code CLI: capture → learn → inject.

Two sessions (no resume) in one temporary git project holding a tiny Python package with a real
bug.  In the first, the scripted model runs ``python -m pytest -q`` for real (it fails with a
specific assertion), reads ``slug.py``, fixes it with a real Edit, runs the tests again (they
pass) and answers.  Claude Code's Stop hook queues a learning job and spawns the detached worker;
the test only *waits* for it (``ace jobs --json``) — it never calls ``ace learn`` — and then finds
the lesson with ``ace patterns --json``.  The bug comes back, and in the second session a related
prompt must bring that lesson into the very request the model receives.  With so small a playbook
the session digest (`<ace-playbook>`) already holds it, so two more new sessions run with the digest
switched off (``ACE_INJECT_SESSION_START_TOKENS=0``): the related prompt must bring it in an
`<ace-patterns>` block, an unrelated prompt (the control) must not.

``ACE_LEARNING_LINGER_SECONDS=0`` lets the worker exit as soon as its queue is empty, so the test
can also check that no worker is left behind (processes found through ``/proc``, scoped to this
test's ``ACE_HOME``).
"""

from __future__ import annotations

import json
import os
import re
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from .claude_cli import ClaudeResult, run_claude
from .conftest import make_git_project
from .model_server import MAIN, ScriptedModelServer
from .test_capture_e2e import ace_env, ace_json, ace_log_errors, assert_clean_run
from .test_injection_e2e import describe_blocks, request_blocks

pytestmark = pytest.mark.e2e

BUGGY = "def slug(text):\n    return text.lower().replace(' ', '-')\n"
# The fix states how the code must work (accents folded before the slug is made): a rule a later task can
# use, so a lesson; a fix that only puts a wrong value right (`a - b` -> `a + b`) would be none.
FIX_LINE = "text = unicodedata.normalize('NFKD', text).encode('ascii', 'ignore').decode()"
FIXED = f"import unicodedata\n\n\ndef slug(text):\n    {FIX_LINE}\n    return text.lower().replace(' ', '-')\n"
PROJECT_FILES = {
    "README.md": "# slugs\n",
    "slug.py": BUGGY,
    "test_slug.py": "from slug import slug\n\n\ndef test_accents():\n    assert slug('Crème Brûlée') == 'creme-brulee'\n",
}
TEST_COMMAND = "python -m pytest -q"
FIRST_PROMPT = "The slug tests are failing, please fix slug.py so that they pass."
FIRST_FINAL = "Fixed: slug() now folds accents first; the slug tests pass now."
SECOND_PROMPT = "the slug tests fail again after my change, fix them"
SECOND_FINAL = "slug() in slug.py lost the accent folding again; same fix as last time."
UNRELATED_PROMPT = "Add a LICENSE file with the MIT license text"  # control: must not bring the lesson
EXTRA_FINAL = "On it."

LEARN_TIMEOUT = 60.0  # the brief: the detached worker learns within this
WORKER_GONE_TIMEOUT = 30.0


def first_session_script(project: Path) -> list:
    slug = str(project / "slug.py")
    return [
        [{"name": "Bash", "input": {"command": TEST_COMMAND, "description": "Run the tests"}}],
        [{"name": "Read", "input": {"file_path": slug}}],  # Claude Code refuses to Edit an unread file
        [{"name": "Edit", "input": {"file_path": slug, "old_string": BUGGY.rstrip("\n"),
                                    "new_string": FIXED.rstrip("\n")}}],
        [{"name": "Bash", "input": {"command": TEST_COMMAND, "description": "Run the tests again"}}],
        FIRST_FINAL,
    ]


# ---------------------------------------------------------------------------------------------
# processes, jobs


def worker_processes(ace_home: Path) -> list[tuple[int, str]]:
    """(pid, cmdline) of live learning workers whose environment has *this* ACE_HOME."""
    marker = f"ACE_HOME={ace_home}".encode()
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes()
            if b"ace_engine" not in cmdline:
                continue
            environ = (entry / "environ").read_bytes().split(b"\0")
            status = (entry / "status").read_text()
        except OSError:  # gone meanwhile, or not ours to read
            continue
        if marker in environ and "\nState:\tZ" not in status:
            found.append((int(entry.name), cmdline.replace(b"\0", b" ").decode(errors="replace")))
    return found


def wait_until(predicate, timeout: float, interval: float = 0.25):
    """Poll ``predicate()`` until it returns something truthy; (value, seconds waited)."""
    started = time.monotonic()
    while True:
        value = predicate()
        if value or time.monotonic() - started > timeout:
            return value, time.monotonic() - started
        time.sleep(interval)


UNFINISHED = ("queued", "running")


def first_main_request(result: ClaudeResult) -> dict:
    return next(r for r in result.server_requests if r.kind == MAIN).body


@dataclass
class Loop:
    project: Path
    home: Path
    env: dict[str, str]
    ace_home: Path
    first: ClaudeResult | None = None
    second: ClaudeResult | None = None
    extra: dict[str, ClaudeResult] = field(default_factory=dict)  # digest off: "prompt_only", "unrelated"
    jobs_after_first: dict = field(default_factory=dict)
    learn_seconds: float | None = None  # first session's exit → its jobs all finished
    workers_after_first: list = field(default_factory=list)
    patterns_after_first: dict = field(default_factory=dict)
    jobs_at_end: dict = field(default_factory=dict)
    workers_at_end: list = field(default_factory=list)
    worker_gone_seconds: float | None = None
    slug_after_first: str = ""  # slug.py after the first session
    server_errors: list[str] = field(default_factory=list)

    def jobs(self) -> dict:
        return ace_json(self.env, self.home, "jobs", "--project", str(self.project))

    def session_jobs(self, data: dict, session_id: str | None) -> list[dict]:
        return [j for j in data["jobs"] if j["session_id"] == session_id]

    def lesson(self) -> dict | None:
        """The error → fix lesson of the first session, if the worker wrote it."""
        for bullet in self.patterns_after_first.get("patterns", []):
            text = bullet["content"]
            if TEST_COMMAND in text and "slug.py" in text and "test_accents" in text:
                return bullet
        return None

    def diagnostics(self) -> str:
        log = self.ace_home / "logs" / "ace.log"
        tail = log.read_text(errors="replace")[-4000:] if log.exists() else "<no ace.log>"
        return (f"jobs after the first session ({self.learn_seconds}s):\n"
                f"{json.dumps(self.jobs_after_first, indent=1)[:6000]}\n"
                f"patterns:\n{json.dumps(self.patterns_after_first, indent=1)[:4000]}\n"
                f"ace.log tail:\n{tail}")


@pytest.fixture(scope="module")
def loop(claude_bin, tmp_path_factory) -> Loop:
    """Install ace-engine, run both sessions, and record what happened in between."""
    tmp = tmp_path_factory.mktemp("learning")
    env = ace_env(tmp)
    env["ACE_LEARNING_LINGER_SECONDS"] = "0"  # the worker exits as soon as its queue is empty
    # (learning.reflector stays `auto`: no llm.provider in this private config → the heuristics)
    # `python` in the Bash tool = this interpreter, which has pytest.
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")])
    project = make_git_project(tmp / "project", PROJECT_FILES)
    home = tmp / "home"
    home.mkdir()
    scn = Loop(project, home, env, Path(env["ACE_HOME"]))
    installed = ace_json(env, home, "install", "--project", str(project))
    assert {"Stop", "SessionEnd", "UserPromptSubmit", "SessionStart"} <= set(installed["events"]), installed

    server = ScriptedModelServer().start()
    try:
        # ---- session 1: fail, fix, pass -------------------------------------------------------
        scn.first = run_claude(claude_bin, project, home, server, FIRST_PROMPT,
                               script=first_session_script(project), env=env)
        scn.first.check()
        scn.slug_after_first = (project / "slug.py").read_text()
        sid = scn.first.session_id

        def learned():
            data = scn.jobs()
            mine = scn.session_jobs(data, sid)
            return data if mine and not any(j["status"] in UNFINISHED for j in mine) else None

        data, scn.learn_seconds = wait_until(learned, LEARN_TIMEOUT)
        scn.jobs_after_first = data or scn.jobs()
        wait_until(lambda: not worker_processes(scn.ace_home), 10.0)
        scn.workers_after_first = worker_processes(scn.ace_home)
        scn.patterns_after_first = ace_json(env, home, "patterns", "--project", str(project))

        # ---- the bug comes back; session 2 (a new session, no resume) --------------------------
        (project / "slug.py").write_text(BUGGY)
        scn.second = run_claude(claude_bin, project, home, server, SECOND_PROMPT,
                                script=[SECOND_FINAL], env=env)
        scn.second.check()
        # The same with the session digest switched off: the lesson must come with the prompt.
        no_digest = dict(env, ACE_INJECT_SESSION_START_TOKENS="0")
        for name, prompt in (("prompt_only", SECOND_PROMPT), ("unrelated", UNRELATED_PROMPT)):
            scn.extra[name] = run_claude(claude_bin, project, home, server, prompt,
                                         script=[EXTRA_FINAL], env=no_digest)
            scn.extra[name].check()
        scn.server_errors = list(server.errors)
    finally:
        server.stop()

    def settled():
        data = scn.jobs()
        return not any(j["status"] in UNFINISHED for j in data["jobs"]) and not worker_processes(scn.ace_home)

    _, scn.worker_gone_seconds = wait_until(settled, WORKER_GONE_TIMEOUT)
    scn.jobs_at_end = scn.jobs()
    scn.workers_at_end = worker_processes(scn.ace_home)
    return scn


# ---------------------------------------------------------------------------------------------
# session 1: real failure, real fix, real pass


def test_first_session_really_fails_fixes_and_passes(loop):
    assert_clean_run(loop.first, FIRST_FINAL)
    assert loop.slug_after_first == FIXED
    mains = [r for r in loop.first.server_requests if r.kind == MAIN]
    assert [r.step for r in mains] == [0, 1, 2, 3, 4], loop.first.describe()

    def tool_result(step: int) -> dict:
        # The request answered with step N+1 carries the result of step N's tool call.
        tool_id = mains[step].reply[0]["id"]
        for message in mains[step + 1].body["messages"]:
            for block in message.get("content") or []:
                if isinstance(block, dict) and block.get("tool_use_id") == tool_id:
                    return block
        raise AssertionError(f"no tool_result for step {step}")

    failed, passed = tool_result(0), tool_result(3)
    failed_text, passed_text = json.dumps(failed), json.dumps(passed)
    assert failed.get("is_error") is True, failed_text
    assert "FAILED test_slug.py::test_accents" in failed_text and "creme-brulee" in failed_text, failed_text
    assert not passed.get("is_error"), passed_text
    assert "1 passed" in passed_text, passed_text


# ---------------------------------------------------------------------------------------------
# between the sessions: the detached worker learns, unprompted


def test_stop_queued_a_job_that_the_detached_worker_finished(loop):
    mine = loop.session_jobs(loop.jobs_after_first, loop.first.session_id)
    assert mine, f"Stop queued no learning job for the session\n{loop.diagnostics()}"
    statuses = {j["status"] for j in mine}
    # Finished within the fixture's wait (None when it gave up): how fast is learning_bench.py's to judge.
    assert loop.learn_seconds is not None, loop.diagnostics()
    assert statuses <= {"done", "skipped"} and "done" in statuses, (
        f"job statuses {statuses} after {loop.learn_seconds:.1f}s\n{loop.diagnostics()}")
    stop_jobs = [j for j in mine if j["trigger"] == "Stop"]
    assert stop_jobs and stop_jobs[-1]["status"] == "done", loop.diagnostics()
    assert loop.workers_after_first == [], loop.workers_after_first


def test_worker_learned_the_error_fix_lesson(loop):
    lesson = loop.lesson()
    assert lesson is not None, f"no lesson naming the command, the failure and the file\n{loop.diagnostics()}"
    content = lesson["content"]
    # "When `python -m pytest -q` fails with `test_slug.py::test_accents - AssertionError: …`: look in
    #  slug.py; the fix: writing `…unicodedata…`."
    assert "test_accents" in content, content
    assert "unicodedata" in content, content
    assert re.match(r"^ctx-[0-9a-z]+$", lesson["id"]), lesson


# ---------------------------------------------------------------------------------------------
# session 2: the lesson reaches the model


def test_second_session_request_carries_the_lesson(loop):
    lesson = loop.lesson()
    assert lesson is not None, loop.diagnostics()
    assert loop.second.session_id != loop.first.session_id
    first_request = first_main_request(loop.second)
    blocks = request_blocks(first_request, "ace-patterns") + request_blocks(first_request, "ace-playbook")
    carrying = [b for b in blocks if lesson["id"] in b.ids]
    assert carrying, (f"lesson {lesson['id']} is not in the request of the second session; blocks:\n"
                      f"{describe_blocks(request_blocks(first_request))}\n{loop.diagnostics()}")
    line = next(line for b in carrying for line in b.lines if lesson["id"] in line)
    assert line.endswith(lesson["content"]), line
    # ace recorded showing it in that session.
    recall = ace_json(loop.env, loop.home, "recall", "--session", loop.second.session_id)
    assert lesson["id"] in {row["bullet_id"] for row in recall["injections"]}, recall


def test_the_related_prompt_alone_brings_the_lesson(loop):
    """With the digest off, prompt-time retrieval finds the lesson: an `<ace-patterns>` block."""
    lesson = loop.lesson()
    assert lesson is not None, loop.diagnostics()
    body = first_main_request(loop.extra["prompt_only"])
    assert request_blocks(body, "ace-playbook") == [], "the digest was switched off"
    patterns = request_blocks(body, "ace-patterns")
    assert len(patterns) == 1 and patterns[0].prefix == "UserPromptSubmit hook additional context: ", \
        describe_blocks(request_blocks(body))
    assert lesson["id"] in patterns[0].ids, f"{patterns[0].body}\n{loop.diagnostics()}"


def test_an_unrelated_prompt_does_not_bring_the_lesson(loop):
    """Control for the test above: the lesson is not injected whatever the prompt."""
    lesson = loop.lesson()
    assert lesson is not None, loop.diagnostics()
    body = first_main_request(loop.extra["unrelated"])
    shown = {i for b in request_blocks(body) for i in b.ids}
    assert lesson["id"] not in shown, describe_blocks(request_blocks(body))


# ---------------------------------------------------------------------------------------------
# hygiene


def test_runs_are_clean_and_answers_unaffected(loop):
    assert_clean_run(loop.first, FIRST_FINAL)
    assert_clean_run(loop.second, SECOND_FINAL)
    for result in loop.extra.values():
        assert_clean_run(result, EXTRA_FINAL)
    assert loop.server_errors == []
    assert ace_log_errors(loop.ace_home) == []


def test_no_worker_left_running(loop):
    assert loop.workers_at_end == [], (
        f"learning workers still alive {loop.worker_gone_seconds:.1f}s after the last session: "
        f"{loop.workers_at_end}\n{loop.diagnostics()}")
    unfinished = [j for j in loop.jobs_at_end["jobs"] if j["status"] in UNFINISHED]
    assert unfinished == [], json.dumps(loop.jobs_at_end, indent=1)[:4000]
    failed = [j for j in loop.jobs_at_end["jobs"] if j["status"] == "failed"]
    assert failed == [], json.dumps(failed, indent=1)[:4000]


def test_worker_detection_sees_a_live_worker(loop, tmp_path):
    """Control for the test above: a process like the worker, with this ACE_HOME, is found."""
    import subprocess

    env = dict(os.environ, ACE_HOME=str(loop.ace_home))
    proc = subprocess.Popen([sys.executable, "-c", "import time  # ace_engine.jobs.worker\ntime.sleep(30)"],
                            env=env)
    try:
        found, _ = wait_until(lambda: worker_processes(loop.ace_home), 5.0, 0.05)
        assert [pid for pid, _ in found] == [proc.pid], found
    finally:
        proc.kill()
        proc.wait()
    assert worker_processes(loop.ace_home) == []
