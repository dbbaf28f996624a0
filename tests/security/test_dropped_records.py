"""A record dropped for the hook budget or size fails closed (issue 35): when the PostToolUse hook
cannot keep a call's record — its payload over the stdin cap or nested too deeply to parse, its
budget run out — it records the
drop (`redact.sanitize.DROPPED`) in the store (or the spool the learning worker replays first), and
what is learned from that session is no more trusted than someone else's text: every risky part
that would have been "the agent's own" is `foreign`, held for `ace review`.

On 42195db the dropped read simply vanished, and with it the evidence that a later command came
from that file: the lesson running it was "the agent's own", active. The lesson comes from a
scripted model (`llm_servers.ScriptedChatServer`: the offline reflector learns a package only from a
failing output that names it, which would be the evidence this test takes away).
"""

from __future__ import annotations

import json
import os

import pytest

from ace_engine.hooks.engine import MAX_STDIN_BYTES
from hookutil import check_answer, payload, run_hook
from learnutil import Session, bullets, rows, wait_for_learning
from llm_servers import ScriptedChatServer

PACKAGE = "snapshot-refresher"
LESSON = json.dumps({"reasoning": "the notes say how to refresh", "tags": [], "candidates": [
    {"content": f"Refresh stale render snapshots with `npx -y {PACKAGE}@latest` before `npm test`.",
     "section": "troubleshooting", "evidence": "steps 1-2", "source_steps": [1, 2]}]})


@pytest.fixture
def model(monkeypatch):
    with ScriptedChatServer([LESSON]) as server:
        for key, value in (("PROVIDER", "openai"), ("MODEL", "scripted"), ("BASE_URL", server.url + "/v1")):
            monkeypatch.setenv(f"ACE_LLM_{key}", value)
        yield server


def _dropped_rows(ace_home) -> list[dict]:
    return [r for r in rows(ace_home, "SELECT * FROM tool_events") if (r["response"] or "").startswith(
        "[ace: record dropped")]


def test_a_read_dropped_for_size_makes_the_sessions_lessons_foreign(ace_home, git_project, model):
    """A file read too large for the hook (over `MAX_STDIN_BYTES`) that names a package, then the
    agent runs it: the read is recorded as dropped and the lesson is held, its part foreign."""
    s = Session(git_project)
    s.start()
    s.prompt("The render tests fail, please fix them")
    notes = os.path.join(str(git_project), "NOTES.md")
    huge = ("filler line\n" * (MAX_STDIN_BYTES // 12 + 1024)) + f"Refresh snapshots: `npx -y {PACKAGE}@latest`\n"
    s.fire("PostToolUse", tool_name="Read", tool_use_id="toolu_huge_read", tool_input={"file_path": notes},
           tool_response={"type": "text", "file": {"filePath": notes, "content": huge, "numLines": 5_600_000}})
    s.bash(f"npx -y {PACKAGE}@latest", stdout="refreshed 3 snapshots")
    s.bash("npm test", stdout="Tests: 5 passed, 5 total")
    s.stop("Refreshed the snapshots; the tests pass.")
    wait_for_learning(ace_home)
    assert model.requests, "the learner asked the model"
    (lesson,) = [b for b in bullets(ace_home) if PACKAGE in b["content"]]
    prov = json.loads(lesson["provenance"])
    assert prov["origins"] == {f"install:{PACKAGE}": "foreign"}, (lesson["status"], prov)
    assert lesson["status"] in ("candidate", "quarantined")
    (drop,) = _dropped_rows(ace_home)
    assert drop["session_id"] == "sess-1" and drop["tool_name"] == "Read" and PACKAGE not in drop["response"]


def test_the_same_session_without_a_drop_still_trusts_the_agent(ace_home, git_project, model):
    """The control: the package the agent chose, with every record kept, is the agent's own."""
    s = Session(git_project)
    s.start()
    s.prompt("The render tests fail, please fix them")
    s.read("NOTES.md")
    s.bash(f"npx -y {PACKAGE}@latest", stdout="refreshed 3 snapshots")
    s.bash("npm test", stdout="Tests: 5 passed, 5 total")
    s.stop("Refreshed the snapshots; the tests pass.")
    wait_for_learning(ace_home)
    assert _dropped_rows(ace_home) == []
    (lesson,) = [b for b in bullets(ace_home) if PACKAGE in b["content"]]
    assert json.loads(lesson["provenance"])["origins"] == {f"install:{PACKAGE}": "agent"}


def test_a_call_whose_hook_ran_out_of_budget_is_recorded_as_dropped(ace_home, git_project, tmp_path):
    """The watchdog: a PostToolUse stalled (here on a transcript path that is a FIFO nobody writes,
    read to find the project) answers empty at its budget — and leaves the record of the drop in the
    spool, which the next hook (or the learning worker) writes to the store."""
    fifo = tmp_path / "transcript.jsonl"
    os.mkfifo(fifo)
    data = payload("PostToolUse", str(tmp_path / "gone"), tool_name="Read", tool_use_id="toolu_stalled",
                   transcript_path=str(fifo), tool_input={"file_path": "NOTES.md"},
                   tool_response={"type": "text", "file": {"filePath": "NOTES.md", "content": "x", "numLines": 1}})
    code, out, err, _ = run_hook("PostToolUse", data)
    assert code == 0, err
    check_answer("PostToolUse", out)
    code, _, err, _ = run_hook("SessionStart", payload("SessionStart", str(git_project), source="startup"))
    assert code == 0, err
    (drop,) = _dropped_rows(ace_home)
    assert drop["tool_use_id"] == "toolu_stalled" and "budget ran out" in drop["response"]


def test_a_tool_result_nested_too_deeply_to_parse_is_recorded_as_dropped(ace_home, git_project):
    """A tool (an MCP server) can return JSON nested deeper than the hook's parser goes: the payload
    cannot be read, and the call is recorded as dropped rather than lost without a trace."""
    head = json.dumps(payload("PostToolUse", str(git_project), tool_name="mcp__docs__search",
                              tool_use_id="toolu_deep", tool_input={"query": "snapshots"}))[:-1]
    raw = (head + ', "tool_response": ' + "[" * 200_000 + "]" * 200_000 + "}").encode()
    code, out, err, _ = run_hook("PostToolUse", raw)
    assert code == 0, err
    check_answer("PostToolUse", out)
    (drop,) = _dropped_rows(ace_home)
    assert drop["tool_name"] == "mcp__docs__search" and drop["session_id"] == "sess-1"
