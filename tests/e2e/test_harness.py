"""The e2e harness itself, independent of ace-engine: real CLI + scripted server + plain hooks."""

from __future__ import annotations

import json
import shlex
import sys
import urllib.request
from pathlib import Path

import pytest

from .claude_cli import (
    debug_log_hook_problems,
    project_slug,
    read_jsonl,
    run_claude,
    transcript_hook_problems,
)
from .model_server import COMPACT, MAIN, SIDE, ScriptedModelServer

pytestmark = pytest.mark.e2e

RECORDER = """\
import json, sys
data = sys.stdin.read()
with open(sys.argv[1], "a", encoding="utf-8") as fh:
    fh.write(json.dumps(json.loads(data)) + "\\n")
"""

RECORDED_EVENTS = ["SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse",
                   "PostToolUseFailure", "Stop", "SubagentStop", "SessionEnd", "PreCompact"]


def write_recording_hooks(project: Path, out: Path, extra: dict | None = None) -> None:
    """Hooks in .claude/settings.local.json that append each hook's stdin JSON to ``out``."""
    recorder = project.parent / "record_hook.py"
    recorder.write_text(RECORDER)
    command = f"{shlex.quote(sys.executable)} {shlex.quote(str(recorder))} {shlex.quote(str(out))}"
    hooks = {
        event: [{"matcher": "*", "hooks": [{"type": "command", "command": command, "timeout": 30}]}]
        for event in RECORDED_EVENTS
    }
    for event, entries in (extra or {}).items():
        hooks.setdefault(event, []).extend(entries)
    settings = project / ".claude" / "settings.local.json"
    settings.parent.mkdir(parents=True, exist_ok=True)
    settings.write_text(json.dumps({"hooks": hooks}, indent=2))


def recorded(out: Path) -> list[dict]:
    return read_jsonl(out) if out.exists() else []


def test_session_hooks_tools_and_compact(claude_bin, model_server, claude_home, project_dir):
    out = project_dir.parent / "hooks.jsonl"
    write_recording_hooks(project_dir, out)
    app = project_dir / "app.py"
    final = "Scripted final answer: all steps done."
    script = [
        [{"name": "Read", "input": {"file_path": str(app)}}],
        [{"name": "Edit", "input": {"file_path": str(app), "old_string": "return 'hello'",
                                    "new_string": "return 'hi'"}}],
        [{"name": "Bash", "input": {"command": "echo hello", "description": "Say hello"}}],
        [{"name": "Bash", "input": {"command": "ls /nonexistent-dir-xyz",
                                    "description": "List a missing dir"}}],
        final,
    ]
    res = run_claude(claude_bin, project_dir, claude_home, model_server,
                     "Please tidy up app.py", script=script).check()

    # The session ran exactly as scripted.
    assert res.result_text == final
    assert res.json["num_turns"] == 5
    assert res.json["permission_denials"] == []
    assert app.read_text() == "def greet():\n    return 'hi'\n"
    assert res.transcript_path == (claude_home / ".claude" / "projects"
                                   / project_slug(project_dir) / f"{res.session_id}.jsonl")
    assert res.transcript_path.exists()
    assert res.hook_problems() == []
    assert model_server.errors == []

    # The server saw one main-loop request per step, in order, each with the previous results.
    mains = [r for r in res.server_requests if r.kind == MAIN]
    assert [r.step for r in mains] == [0, 1, 2, 3, 4]
    assert all(r.session_id == res.session_id for r in mains)
    first_user = mains[0].body["messages"][0]
    assert "Please tidy up app.py" in json.dumps(first_user)
    last_results = [b for m in mains[-1].body["messages"] if m["role"] == "user"
                    and isinstance(m["content"], list) for b in m["content"]
                    if b.get("type") == "tool_result"]
    assert len(last_results) == 4
    assert last_results[2]["content"] == "hello" and not last_results[2].get("is_error")
    assert last_results[3]["is_error"] is True

    # Hooks fired with the expected payloads.
    events = recorded(out)
    names = [e["hook_event_name"] for e in events]
    assert names[0] == "SessionStart" and events[0]["source"] == "startup"
    assert names[1] == "UserPromptSubmit" and events[1]["prompt"] == "Please tidy up app.py"
    assert names.count("PreToolUse") == 4
    assert names[-2:] == ["Stop", "SessionEnd"]
    assert events[-2]["last_assistant_message"] == final
    assert all(e["session_id"] == res.session_id for e in events)
    post = [e for e in events if e["hook_event_name"] == "PostToolUse"]
    assert [p["tool_name"] for p in post] == ["Read", "Edit", "Bash"]
    assert post[2]["tool_input"]["command"] == "echo hello"
    assert post[2]["tool_response"]["stdout"] == "hello"
    failures = [e for e in events if e["hook_event_name"] == "PostToolUseFailure"]
    assert len(failures) == 1
    assert failures[0]["tool_input"]["command"] == "ls /nonexistent-dir-xyz"
    assert failures[0]["error"].splitlines()[0] == "Exit code 2"
    pre_ids = [e["tool_use_id"] for e in events if e["hook_event_name"] == "PreToolUse"]
    assert pre_ids == [p["tool_use_id"] for p in post[:3]] + [failures[0]["tool_use_id"]]

    # /compact on the same session: PreCompact then SessionStart(compact).
    out.write_text("")
    compacted = run_claude(claude_bin, project_dir, claude_home, model_server, "/compact",
                           resume=res.session_id, script=["unused"]).check()
    assert compacted.session_id == res.session_id
    assert compacted.hook_problems() == []
    kinds = [r.kind for r in compacted.server_requests if r.method == "POST"]
    assert kinds == [COMPACT]
    # Observed with 2.1.197: the summary is produced by a subagent, so SubagentStop fires too
    # (agent_type "", last_assistant_message = the summary), and no UserPromptSubmit/Stop.
    events = recorded(out)
    assert [(e["hook_event_name"], e.get("source") or e.get("trigger") or e.get("reason"))
            for e in events] == [("SessionStart", "resume"), ("PreCompact", "manual"),
                                 ("SubagentStop", None), ("SessionStart", "compact"),
                                 ("SessionEnd", "other")]
    subagent_stop = events[2]
    assert subagent_stop["agent_id"] and subagent_stop["agent_type"] == ""
    assert subagent_stop["last_assistant_message"] == model_server.compact_summary
    boundary = [e for e in compacted.transcript() if e.get("subtype") == "compact_boundary"]
    assert boundary, "no compact_boundary in the transcript"

    # A later prompt on the compacted session starts the new script at step 0.
    after = run_claude(claude_bin, project_dir, claude_home, model_server, "And now?",
                       resume=res.session_id, script=["After compaction."]).check()
    assert after.result_text == "After compaction."
    assert [r.step for r in after.server_requests if r.kind == MAIN] == [0]


def test_hook_problems_are_detected(claude_bin, model_server, claude_home, project_dir):
    """The "no hook problems" assertions are only worth something if failures are seen."""
    out = project_dir.parent / "hooks.jsonl"
    failing = {
        "PostToolUse": [{"matcher": "Bash", "hooks": [
            {"type": "command", "command": "cat >/dev/null; echo boom >&2; exit 1"}]}],
        "Stop": [{"hooks": [{"type": "command", "command": "cat >/dev/null; echo '{not json'"}]}],
        "SessionEnd": [{"hooks": [{"type": "command", "command": "cat >/dev/null; exit 3"}]}],
    }
    write_recording_hooks(project_dir, out, extra=failing)
    res = run_claude(claude_bin, project_dir, claude_home, model_server, "go",
                     script=[[{"name": "Bash", "input": {"command": "true"}}], "ok"]).check()
    assert res.result_text == "ok"  # non-blocking hook errors do not disturb the session

    problems = transcript_hook_problems(res.transcript_path)
    kinds = {(p["type"], p.get("hookEvent")) for p in problems}
    assert ("hook_non_blocking_error", "PostToolUse") in kinds
    assert ("hook_success_invalid_json", "Stop") in kinds

    debug = debug_log_hook_problems(res.debug_log)
    assert any("SessionEnd:" in line and "status 3" in line for line in debug), debug
    assert any("Failed to parse hook output as JSON" in line for line in debug), debug


def _post(url: str, body: dict) -> tuple[int, bytes]:
    req = urllib.request.Request(url, data=json.dumps(body).encode(), method="POST",
                                 headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=10) as resp:
        return resp.status, resp.read()


def _sse_message(raw: bytes) -> dict:
    """Reassemble an SSE stream from the server into a message dict."""
    message: dict = {}
    blocks: list[dict] = []
    partial: dict[int, str] = {}
    for chunk in raw.decode().split("\n\n"):
        data = [line[6:] for line in chunk.splitlines() if line.startswith("data: ")]
        if not data:
            continue
        event = json.loads(data[0])
        if event["type"] == "message_start":
            message = event["message"]
        elif event["type"] == "content_block_start":
            blocks.append(dict(event["content_block"]))
        elif event["type"] == "content_block_delta":
            delta = event["delta"]
            if delta["type"] == "text_delta":
                blocks[event["index"]]["text"] += delta["text"]
            else:
                partial[event["index"]] = partial.get(event["index"], "") + delta["partial_json"]
        elif event["type"] == "message_delta":
            message["stop_reason"] = event["delta"]["stop_reason"]
    for index, text in partial.items():
        blocks[index]["input"] = json.loads(text)
    message["content"] = blocks
    return message


def test_server_steps_follow_the_conversation_not_a_counter():
    with ScriptedModelServer() as server:
        server.set_script([[{"name": "Bash", "input": {"command": "echo 1"}}], "final"])
        url = server.url + "/v1/messages?beta=true"
        tools = [{"name": "Bash", "input_schema": {"type": "object"}}]
        prompt = {"role": "user", "content": [{"type": "text", "text": "hi"}]}
        base = {"model": "m", "max_tokens": 64000, "stream": True, "tools": tools}

        first = _sse_message(_post(url, dict(base, messages=[prompt]))[1])
        assert first["stop_reason"] == "tool_use"
        tool_use = first["content"][0]
        assert tool_use["id"].startswith("toolu_") and tool_use["input"] == {"command": "echo 1"}

        # A retry of the same request and side requests do not advance the script.
        retry = _sse_message(_post(url, dict(base, messages=[prompt]))[1])
        assert retry["content"][0]["type"] == "tool_use"
        side = _sse_message(_post(url, {"model": "haiku", "max_tokens": 1, "stream": True,
                                        "messages": [prompt]})[1])
        assert side["content"][0]["type"] == "text"
        _post(server.url + "/v1/messages/count_tokens", {"messages": [prompt]})

        # The request that carries the tool result gets the next step.
        history = [
            prompt,
            {"role": "system", "content": "a mid-conversation system entry"},
            {"role": "assistant", "content": [tool_use]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": tool_use["id"],
                                          "content": "1"}]},
        ]
        second = _sse_message(_post(url, dict(base, messages=history))[1])
        assert second["stop_reason"] == "end_turn"
        assert second["content"] == [{"type": "text", "text": "final"}]

        # Non-streaming requests get a plain JSON message.
        status, raw = _post(url, dict(base, stream=False, messages=history))
        assert status == 200 and json.loads(raw)["content"][0]["text"] == "final"

        assert [r.kind for r in server.requests] == [MAIN, MAIN, SIDE, "count_tokens", MAIN, MAIN]
        assert [r.step for r in server.requests if r.kind == MAIN] == [0, 0, 1, 1]
        assert server.errors == []
