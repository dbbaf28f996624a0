"""Codex CLI and Gemini CLI at the hook boundary: their tools mapped through the one table, their
payloads adapted into the same parsed input, their answers in the shape each accepts.

The payloads are the ones the real CLIs sent (`fixtures/agents/hook_payloads.json`: Codex 0.169.0
and Gemini CLI 0.61.0, captured from runs against a scripted local model); each test runs the real
hook launcher in a process and reads the real SQLite store it wrote.
"""

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ace_engine.agents import codex, registry
from ace_engine.agents.tools import to_canonical
from ace_engine.capture.patch import patch_call
from ace_engine.capture.tools import command_of, edit_pairs, path_of
from ace_engine.hooks import agents
from ace_engine.hooks.hook_input import HookInput
from ace_engine.hooks.launch import __file__ as LAUNCHER
from conftest import examples

FIXTURES = json.loads((Path(__file__).parent / "fixtures" / "agents" / "hook_payloads.json").read_text())["payloads"]
CODEX, GEMINI = FIXTURES["codex-0.169.0"], FIXTURES["gemini-cli-0.61.0"]


def real(sample: dict, cwd: Path, home: Path | None = None, **override) -> dict:
    text = json.dumps(sample).replace("{cwd}", str(cwd)).replace("{home}", str(home or cwd / "home"))
    return {**json.loads(text), **override}


def run(agent: str, event: str, data, cwd: Path, env: dict | None = None):
    raw = data if isinstance(data, bytes) else json.dumps(data).encode()
    proc = subprocess.run([sys.executable, "-I", LAUNCHER, agent, event], input=raw, capture_output=True, timeout=60,
                          cwd=cwd, env={**os.environ, **(env or {})})
    return proc.returncode, proc.stdout.decode(), proc.stderr.decode()


def rows(ace_home, sql):
    con = sqlite3.connect(ace_home / "ace.db")
    con.row_factory = sqlite3.Row
    try:
        return [dict(r) for r in con.execute(sql)]
    finally:
        con.close()


# -- the table of tools ---------------------------------------------------------------------------


def test_gemini_tools_become_claude_codes():
    name, data = to_canonical("gemini", "replace", {"file_path": "a.py", "old_string": "x", "new_string": "y",
                                                    "instruction": "fix"})
    assert name == "Edit" and edit_pairs(name, data) == [("x", "y")] and path_of(name, data) == "a.py"
    assert data["_agent_tool"] == "replace" and data["instruction"] == "fix", "other fields are kept"
    name, data = to_canonical("gemini", "run_shell_command", {"command": "pytest -q"})
    assert (name, command_of(name, data)) == ("Bash", "pytest -q")
    name, data = to_canonical("gemini", "grep_search", {"pattern": "TODO", "dir_path": "src"})
    assert name == "Grep" and data["path"] == "src" and data["pattern"] == "TODO"
    name, data = to_canonical("gemini", "write_file", {"file_path": "n.py", "content": "print(1)\n"})
    assert name == "Write" and edit_pairs(name, data) == [("", "print(1)\n")]


def test_codex_tools_become_claude_codes():
    assert to_canonical("codex", "Bash", {"command": "ls"}) == ("Bash", {"command": "ls"}), "Codex already says Bash"
    name, data = to_canonical("codex", "exec_command", {"cmd": "make test", "workdir": "/w"})
    assert (name, command_of(name, data), data["workdir"]) == ("Bash", "make test", "/w")
    name, data = to_canonical("codex", "shell", {"command": ["bash", "-lc", "npm test"]})
    assert command_of(name, data) == "npm test", "an argv list becomes its script"


def test_unknown_tools_and_odd_inputs_pass_unchanged():
    assert to_canonical("gemini", "mcp_ace_search_lessons", {"query": "x"}) == ("mcp_ace_search_lessons", {"query": "x"})
    assert to_canonical("gemini", "replace", "not a dict") == ("replace", "not a dict")
    assert to_canonical("gemini", None, {"a": 1}) == (None, {"a": 1})
    assert to_canonical("claude", "replace", {}) == ("replace", {}), "only the named agent's table applies"


PATCH_ONE = "*** Begin Patch\n*** Update File: app.py\n@@ def f():\n-    return 1\n+    return 2\n*** End Patch\n"


def test_codex_patches_become_edits():
    name, data = patch_call({"command": PATCH_ONE})
    assert name == "Edit" and data["file_path"] == "app.py"
    assert edit_pairs(name, data) == [("    return 1", "    return 2")] and data["patch"] == PATCH_ONE
    two = ("*** Begin Patch\n*** Update File: a.py\n@@\n x = 1\n-y = 2\n+y = 3\n@@\n-z\n+w\n"
           "*** Add File: b.py\n+print('b')\n*** End Patch")
    name, data = patch_call({"input": two})
    assert name == "MultiEdit" and edit_pairs(name, data) == [("x = 1\ny = 2", "x = 1\ny = 3"), ("z", "w")]
    assert data["files"] == ["a.py", "b.py"], "the other files are listed, not lost"
    name, data = patch_call("*** Begin Patch\n*** Add File: new.py\n+print(1)\n*** End Patch")
    assert (name, data["content"]) == ("Write", "print(1)\n")
    delete = {"command": "*** Begin Patch\n*** Delete File: old.py\n*** End Patch"}
    assert patch_call(delete) == ("apply_patch", delete), "a deletion is no edit"
    assert patch_call({"command": "rm -rf /"}) == ("apply_patch", {"command": "rm -rf /"})
    assert to_canonical("codex", "apply_patch", {"command": PATCH_ONE})[0] == "Edit"


# -- answers ----------------------------------------------------------------------------------------


CLAUDE_CONTEXT = {"systemMessage": "note", "hookSpecificOutput": {"hookEventName": "UserPromptSubmit",
                                                                  "additionalContext": "<ace-playbook>x</ace-playbook>"}}


def test_answers_take_each_agents_shape():
    assert agents.answer("gemini", "BeforeAgent", CLAUDE_CONTEXT) == {
        "systemMessage": "note", "hookSpecificOutput": {"hookEventName": "BeforeAgent",
                                                        "additionalContext": "<ace-playbook>x</ace-playbook>"}}
    assert agents.answer("gemini", "AfterAgent", CLAUDE_CONTEXT) == {"systemMessage": "note"}, \
        "an event that takes no context gets none"
    assert agents.answer("codex", "UserPromptSubmit", CLAUDE_CONTEXT)["hookSpecificOutput"]["hookEventName"] \
        == "UserPromptSubmit"
    decision = {"hookSpecificOutput": {"hookEventName": "PermissionRequest", "decision": {"behavior": "allow"}}}
    assert agents.answer("codex", "PermissionRequest", decision) == decision
    assert agents.answer("gemini", "AfterTool", decision) is None
    assert agents.answer("codex", "Stop", None) is None


def test_every_installed_event_is_handled_and_lost_ones_are_said():
    from ace_engine.hooks.events import EVENTS

    for agent in registry.agents():
        assert agent.events and set(agent.events.values()) <= set(EVENTS), agent.name
        assert agent.context_events <= set(agent.events), agent.name
        assert set(agent.lost) <= set(EVENTS), agent.name
    assert "PreCompact" in registry.get("gemini").lost and "PreToolUse" in registry.get("gemini").lost
    assert set(registry.get("claude").events) == set(EVENTS), "Claude Code's events are ours"


# -- whole hook processes with the payloads the CLIs sent ---------------------------------------------


def _codex_rollout(path: Path, call_id: str, code: int) -> None:
    """The lines of a Codex 0.169 rollout file that carry a shell call's exit code (as it writes them)."""
    item = {"type": "CommandExecution", "id": call_id, "command": ["/bin/bash", "-lc", "echo boom; exit 3"],
            "status": "failed" if code else "completed", "aggregated_output": "boom\n", "exit_code": code}
    lines = [{"type": "session_meta", "payload": {"id": "s"}},
             {"type": "event_msg", "payload": {"type": "item_completed", "item": item}}]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))


def test_codex_failing_then_passing_shell_calls_are_captured_with_exit_codes(ace_home, git_project):
    failing, passing = CODEX["PostToolUse:Bash:fail"], CODEX["PostToolUse:Bash:ok"]
    rollout = git_project / "rollout.jsonl"
    _codex_rollout(rollout, failing["tool_use_id"], 3)
    for sample in (CODEX["SessionStart"], CODEX["UserPromptSubmit"], failing, passing):
        code, out, err = run("codex", sample["hook_event_name"], real(sample, git_project,
                                                                     transcript_path=str(rollout)), git_project)
        assert code == 0, err
        if out:
            answer = json.loads(out)
            assert set(answer) <= {"systemMessage", "hookSpecificOutput"}
    events = {r["tool_use_id"]: r for r in rows(ace_home, "SELECT * FROM tool_events")}
    bad, good = events[failing["tool_use_id"]], events[passing["tool_use_id"]]
    assert (bad["tool_name"], bad["success"], bad["exit_code"]) == ("Bash", 0, 3)
    assert json.loads(bad["input"]) == {"command": "echo boom; exit 3"}
    assert (good["success"], good["exit_code"]) == (1, 0), "a shell call without a recorded code ran, as for Claude Code"
    sessions = rows(ace_home, "SELECT session_id FROM sessions")
    assert [s["session_id"] for s in sessions] == [failing["session_id"]]


def test_gemini_session_is_captured_like_claude_codes(ace_home, git_project):
    for key in ("SessionStart", "BeforeAgent", "AfterTool:run_shell_command:fail", "AfterTool:replace:ok",
                "AfterTool:run_shell_command:ok", "AfterAgent", "SessionEnd"):
        sample = real(GEMINI[key], git_project)
        code, out, err = run("gemini", sample["hook_event_name"], sample, git_project)
        assert code == 0, err
        if out:
            answer = json.loads(out)
            assert set(answer) <= {"systemMessage", "hookSpecificOutput"}, answer
            assert answer.get("hookSpecificOutput", {}).get("hookEventName", key.split(":")[0]) == key.split(":")[0]
    tools = rows(ace_home, "SELECT tool_name, success, exit_code, input, error FROM tool_events ORDER BY id")
    assert [(t["tool_name"], t["success"], t["exit_code"]) for t in tools] == [
        ("Bash", 0, 3), ("Edit", 1, None), ("Bash", 1, 0)]
    assert json.loads(tools[1]["input"])["old_string"] == "print('hi')"
    messages = rows(ace_home, "SELECT role, text FROM messages ORDER BY id")
    assert [(m["role"], m["text"]) for m in messages] == [("user", "run the failing script"), ("assistant", "Done.")]
    hooks = [r["event"] for r in rows(ace_home, "SELECT event FROM hook_events ORDER BY id")]
    assert hooks[0] == "SessionStart" and "Stop" in hooks and hooks[-1] == "SessionEnd"


@pytest.mark.parametrize("agent", ["codex", "gemini"])
@pytest.mark.parametrize("data", [b"", b"{", b"[1,2]", json.dumps({"tool_name": 5, "tool_input": [1],
                                                                    "tool_response": {"llmContent": [{"x": 1}],
                                                                                      "error": {"message": 7}}}).encode()])
def test_never_breaks_the_agent(ace_home, git_project, agent, data):
    for native in list(registry.get(agent).events) + ["NoSuchEvent", ""]:
        code, out, err = run(agent, native, data, git_project)
        assert code == 0, err
        assert out == "" or isinstance(json.loads(out), dict)


def test_codex_exit_code_reader_is_bounded_and_tolerant(tmp_path):
    path = tmp_path / "r.jsonl"
    path.write_bytes(b"x" * (300 * 1024) + b"\nnot json call-1\n")
    assert codex.exit_code(str(path), "call-1") is None
    with path.open("a") as fh:
        fh.write(json.dumps({"type": "response_item", "payload": {
            "type": "function_call_output", "call_id": "call-1",
            "output": "Chunk ID: 1\nProcess exited with code 2\nOutput:\n"}}) + "\n")
    assert codex.exit_code(str(path), "call-1") == 2
    assert codex.exit_code(str(tmp_path / "missing"), "call-1") is None
    assert codex.exit_code(None, "call-1") is None
    # A FIFO (or any non-file) named as the rollout: nothing is read and nothing waits for a writer.
    fifo = tmp_path / "rollout.fifo"
    os.mkfifo(fifo)
    done = subprocess.run([sys.executable, "-c", "import sys; from ace_engine.agents import codex; "
                           "print(codex.exit_code(sys.argv[1], 'call-1'))", str(fifo)],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and done.stdout.strip() == "None", done.stderr
    assert codex.exit_code(str(tmp_path), "call-1") is None  # a directory


def test_codex_apply_patch_is_captured_as_the_edit_it_made(ace_home, git_project):
    sample = real(CODEX["PostToolUse:apply_patch:ok"], git_project)
    code, out, err = run("codex", "PostToolUse", sample, git_project)
    assert code == 0 and out == "", err
    (event,) = rows(ace_home, "SELECT tool_name, success, exit_code, input FROM tool_events")
    data = json.loads(event["input"])
    assert (event["tool_name"], event["success"], event["exit_code"]) == ("Edit", 1, 0)
    assert (data["file_path"], data["old_string"], data["new_string"]) == ("app.py", "print('hi')", "print('hello')")
    failed = dict(sample, tool_use_id="call-x", tool_response="Exit code: 1\nWall time: 0 seconds\nOutput:\nverification failed")
    run("codex", "PostToolUse", failed, git_project)
    bad = rows(ace_home, "SELECT success, exit_code FROM tool_events WHERE tool_use_id = 'call-x'")
    assert bad == [{"success": 0, "exit_code": 1}]


JSON = st.recursive(st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False), st.text(max_size=40)),
                    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=8), inner,
                                                                                         max_size=4)), max_leaves=20)
TOOL_NAMES = st.one_of(st.sampled_from(["Bash", "apply_patch", "exec_command", "shell", "run_shell_command", "replace",
                                        "write_file", "grep_search", "read_file", "glob", "mcp_ace_search_lessons"]),
                       st.text(max_size=12), st.integers(), st.none())


@settings(max_examples=examples(300), deadline=None)
@given(agent=st.sampled_from(["codex", "gemini"]), native=st.text(max_size=14) | st.sampled_from(
    ["SessionStart", "BeforeAgent", "AfterTool", "AfterAgent", "PostToolUse", "PreToolUse", "Stop"]),
    payload=st.fixed_dictionaries({"tool_name": TOOL_NAMES, "tool_input": JSON, "tool_response": JSON,
                                   "transcript_path": JSON, "tool_use_id": JSON, "prompt_response": JSON}, optional={
                                       "error": JSON, "prompt": JSON}),
    answer=st.one_of(st.none(), st.dictionaries(st.sampled_from(["systemMessage", "hookSpecificOutput", "decision"]),
                                                JSON, max_size=3)))
def test_adapting_any_payload_and_answer_never_raises(agent, native, payload, answer):
    event = agents.event_for(agent, native)
    if event:
        event, adapted = agents.adapt(agent, native, event, payload)
        HookInput.parse(event, adapted)
    out = agents.answer(agent, native, answer)
    assert out is None or (isinstance(out, dict) and set(out) <= {"systemMessage", "hookSpecificOutput"})


def test_gemini_gets_the_domain_shift_lessons_with_the_tools_result(ace_home, git_project):
    """BeforeTool takes no context: the lessons PreToolUse brings for a file in a new domain come in
    AfterTool's additionalContext (appended to the tool's result) instead."""
    from ace_engine.core.project import identify
    from ace_engine.playbook.playbook import Playbook
    from ace_engine.store.sqlite import SQLiteStore
    from test_inject import BULLETS

    with SQLiteStore() as store:
        playbook = Playbook(store, identify(str(git_project)))
        ids = {domains[0]: playbook.add(content, section, domains=domains)[0]["id"]
               for content, section, domains in BULLETS}
    sample = real(GEMINI["AfterTool:replace:ok"], git_project)
    sample["tool_input"] = dict(sample["tool_input"], file_path=str(git_project / "src/db/migrations/env.py"))
    code, out, err = run("gemini", "AfterTool", sample, git_project)
    assert code == 0, err
    answer = json.loads(out)
    assert answer["hookSpecificOutput"]["hookEventName"] == "AfterTool"
    context = answer["hookSpecificOutput"]["additionalContext"]
    assert '<ace-patterns-domain-shift domain="database"' in context and ids["database"] in context
    assert run("gemini", "AfterTool", sample, git_project)[1] == "", "same domain: nothing more to say"
    tools = rows(ace_home, "SELECT tool_name FROM tool_events")
    assert [t["tool_name"] for t in tools] == ["Edit", "Edit"], "and each call is captured"
