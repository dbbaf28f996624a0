"""`ace learn --transcript` and `--all-transcripts` on Codex CLI's rollouts and Gemini CLI's chats
(issue 25): the format told from the content, the same skips and explanations as for Claude Code,
lessons and summaries that say which agent they came from. The session files are written by
`agent_sessions` in the formats Codex's and Gemini's source define (no real CLI made them)."""

import json
import subprocess

import pytest

from ace_engine.observe import codex_rollout, gemini_chat, transcript_formats
from agent_sessions import CodexRollout, codex_fix_session, codex_path, gemini_fix_session, gemini_project_dir
from conftest import ace as run_ace
from learnutil import bullets, rows


def ace(*args, cwd=None, env=None):
    proc = run_ace(*args, cwd=cwd, env=env, process=True)
    return proc.returncode, proc.stdout, proc.stderr


@pytest.fixture
def calc(tmp_path):
    root = tmp_path / "calc"
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    (root / "calc.py").write_text("def div(a, b):\n    return a / b\n")
    return root


def commands(parsed):
    return [(e["tool_name"], json.loads(e["input"]).get("command") or json.loads(e["input"]).get("file_path"),
             e["success"], e["exit_code"]) for e in parsed["agents"][0]["events"]]


# -- reading ------------------------------------------------------------------------------------------------

def test_the_format_is_told_from_the_content_not_the_name(tmp_path, calc):
    codex = codex_fix_session(calc).write(tmp_path / "session.jsonl")  # a name Claude Code would use
    gemini = gemini_fix_session(calc).write(tmp_path / "rollout-2026-11-20T09-00-00-x.jsonl")  # Codex's name
    assert transcript_formats.detect(str(codex)) == "codex"
    assert transcript_formats.detect(str(gemini)) == "gemini"
    legacy = tmp_path / "session-old.json"  # Gemini before 0.20: one pretty-printed document
    chat = gemini_fix_session(calc)
    legacy.write_text(json.dumps({**chat.records[0], "messages": chat.records[1:]}, indent=2))
    assert transcript_formats.detect(str(legacy)) == "gemini"
    assert commands(transcript_formats.parse_file(str(legacy)))[0] == ("Bash", "python -m pytest -q", False, 1)


def test_a_codex_rollout_becomes_our_tools_with_exit_codes_and_prompts(tmp_path, calc):
    r = codex_fix_session(calc, "019a-codex")
    r.shell("call_4", "git status --short", " M calc.py", 0, tool="exec_command")
    parsed = transcript_formats.parse_file(str(r.write(tmp_path / "r.jsonl")))
    assert (parsed["agent"], parsed["kind"], parsed["session_id"], parsed["cwd"], parsed["git_branch"]) == \
        ("codex", "session", "019a-codex", str(calc), "main")
    assert commands(parsed) == [
        ("Bash", "python -m pytest -q", False, 1),  # shell's argv ["bash", "-lc", …]; {"metadata": {exit_code}}
        ("Edit", "calc.py", True, None),  # apply_patch, one Edit per hunk
        ("Bash", "python -m pytest -q", True, 0),  # shell_command's "Exit code: 0"
        ("Bash", "git status --short", True, 0),  # exec_command's `cmd`, "Process exited with code 0"
    ]
    edit = json.loads(parsed["agents"][0]["events"][1]["input"])
    assert (edit["old_string"], edit["new_string"]) == ("    return a / b", "    return a / b if b else 0")
    messages = [(m["role"], m["text"], m.get("by")) for m in parsed["agents"][0]["messages"]]
    assert messages == [("user", "fix the division test", "user"),
                        ("assistant", "Fixed: division by zero now returns 0.", None)]
    assert parsed["skips"] == {"injected_context": 1}, "<environment_context> is Codex's, not the user's"


def test_codex_skips_compactions_rollbacks_aborts_and_unanswered_calls(tmp_path, calc):
    r = CodexRollout(calc, "019a-skips")
    r.prompt("first task")
    r.shell("c1", "make", "ok", 0, tool="shell_command")
    r.add("compacted", {"message": "Summary of the conversation so far: …"})
    r.prompt("a task the user took back")
    r.shell("c2", "rm -rf build", "", 0, tool="shell_command")
    r.add("event_msg", {"type": "thread_rolled_back", "num_turns": 1})
    r.prompt("run the slow suite")
    r.add("response_item", {"type": "function_call", "name": "shell_command", "call_id": "c3",
                            "arguments": json.dumps({"command": "pytest -m slow"})})
    r.add("event_msg", {"type": "turn_aborted", "reason": "interrupted"})
    r.add("response_item", {"type": "message", "role": "developer", "content": []})
    path = r.write(tmp_path / "r.jsonl")
    with path.open("a") as fh:
        fh.write('{"timestamp": "2026-11-20T09:09:09Z", "type": "respo')  # torn while Codex wrote
    parsed = transcript_formats.parse_file(str(path))
    assert [m["text"] for m in parsed["agents"][0]["messages"]] == ["first task", "run the slow suite"]
    assert commands(parsed) == [("Bash", "make", True, 0), ("Bash", "pytest -m slow", False, None)]
    assert parsed["agents"][0]["events"][1]["is_interrupt"]
    assert parsed["skips"] == {"injected_context": 2, "compaction_summary": 1, "abandoned_branch": 3,
                               "interruption_notice": 1, "unreadable_line": 1}


def test_codex_subagents_and_its_own_agents(tmp_path, calc):
    spawn = {"subagent": {"thread_spawn": {"parent_thread_id": "019a-parent", "depth": 1, "agent_role": "explorer"}}}
    sub = codex_fix_session(calc)
    sub.lines[0]["payload"].update(source=spawn, agent_role="explorer", id="019a-child")
    parsed = codex_rollout.parse_file(str(sub.write(tmp_path / "sub.jsonl")))
    assert (parsed["kind"], parsed["session_id"], parsed["agents"][0]["agent_id"],
            parsed["agents"][0]["agent_type"]) == ("subagent", "019a-parent", "019a-child", "explorer")
    assert {m.get("by") for m in parsed["agents"][0]["messages"] if m["role"] == "user"} == {"agent"}
    compact = codex_fix_session(calc)
    compact.lines[0]["payload"]["source"] = {"subagent": "compact"}
    parsed = codex_rollout.parse_file(str(compact.write(tmp_path / "compact.jsonl")))
    assert parsed["kind"] == "internal" and parsed["agents"] == [] and "compaction agent" in parsed["notes"][0]


def test_a_gemini_chat_keeps_the_last_record_of_each_message_and_drops_what_was_rewound(tmp_path, calc):
    g = gemini_fix_session(calc, "gem-1")
    g.prompt("/stats")
    g.notice("Session statistics …")
    gone = g.prompt("also delete the tests")
    g.calls(("c9", "run_shell_command", {"command": "rm -rf tests"}, "Output: (empty)", "success"))
    g.rewind_to(gone)
    g.prompt("<session_context>workspace: calc</session_context>")
    g.calls(("c10", "write_file", {"file_path": f"{calc}/NOTES.md", "content": "notes"}, "", "cancelled"))
    folder = gemini_project_dir(tmp_path / "home", calc)
    parsed = gemini_chat.parse_file(str(g.write(folder / "chats" / "session-2026-11-20T09-00-gem1.jsonl")))
    assert (parsed["agent"], parsed["session_id"], parsed["cwd"]) == ("gemini", "gem-1", str(calc))
    assert commands(parsed) == [("Bash", "python -m pytest -q", False, 1), ("Edit", f"{calc}/calc.py", True, None),
                                ("Bash", "python -m pytest -q", True, 0), ("Write", f"{calc}/NOTES.md", False, None)]
    assert parsed["agents"][0]["events"][-1]["is_interrupt"], "a cancelled call was interrupted"
    assert [m["text"] for m in parsed["agents"][0]["messages"] if m["role"] == "user"] == ["fix the division test"]
    assert parsed["skips"] == {"local_command": 1, "cli_notice": 1, "abandoned_branch": 2, "injected_context": 1}


def test_a_saved_gemini_checkpoint_is_read_too(tmp_path, calc):
    history = [
        {"role": "user", "parts": [{"text": "fix the division test"}]},
        {"role": "model", "parts": [{"functionCall": {"id": "f1", "name": "run_shell_command",
                                                      "args": {"command": "pytest -q"}}}]},
        {"role": "user", "parts": [{"functionResponse": {"id": "f1", "name": "run_shell_command",
                                                         "response": {"output": "Output: 1 failed\nExit Code: 1"}}}]},
        {"role": "model", "parts": [{"text": "The test fails on b == 0."}]},
    ]
    path = tmp_path / "checkpoint-before-fix.json"
    path.write_text(json.dumps({"history": history}, indent=2))
    parsed = transcript_formats.parse_file(str(path))
    assert parsed["agent"] == "gemini" and commands(parsed) == [("Bash", "pytest -q", False, 1)]
    path.write_text(json.dumps(history, indent=2))  # the older format: the bare list
    assert commands(transcript_formats.parse_file(str(path))) == [("Bash", "pytest -q", False, 1)]


@pytest.mark.parametrize("content,problem", [
    ('{"sessionId": "x", "payload": {}}\n', "no Claude Code entries"),
    ('{"hello": "world"}\n', "no Claude Code entries"),
])
def test_a_file_of_no_known_agent_names_all_three(ace_home, calc, tmp_path, content, problem):
    path = tmp_path / "t.jsonl"
    path.write_text(content)
    code, out, err = ace("learn", "--transcript", path, cwd=calc)
    assert code == 1 and problem in err and "Traceback" not in err
    assert "~/.claude/projects/" in err and "~/.codex/sessions/" in err and "~/.gemini/tmp/" in err


# -- learning, one playbook ----------------------------------------------------------------------------------

def test_a_codex_session_teaches_a_lesson_that_says_codex(ace_home, calc, tmp_path):
    path = codex_fix_session(calc, "019a-learn").write(tmp_path / "whatever.log")
    code, out, err = ace("learn", "--transcript", path, "--json", "--heuristic", cwd=calc)
    assert code == 0, err
    result = json.loads(out)
    assert result["agent"] == "codex" and [t["status"] for t in result["turns"]] == ["done"]
    learned = bullets(ace_home)
    assert learned and {b["agent"] for b in learned} == {"codex"}
    assert any("ZeroDivisionError" in b["content"] or "calc.py" in b["content"] for b in learned), learned
    assert rows(ace_home, "SELECT agent FROM session_summaries") == [{"agent": "codex"}]
    code, out, err = ace("learn", "--transcript", path, "--json", "--heuristic", cwd=calc)
    assert all(t["already_learned"] for t in json.loads(out)["turns"]), "learned once"


def test_a_gemini_session_teaches_a_lesson_that_says_gemini(ace_home, calc, tmp_path):
    path = gemini_fix_session(calc, "gem-learn").write(tmp_path / "chat.jsonl")
    code, out, err = ace("learn", "--transcript", path, "--heuristic", cwd=calc)
    assert code == 0, err
    assert "Project: calc (" in out
    assert {b["agent"] for b in bullets(ace_home)} == {"gemini"}


def test_all_transcripts_backfills_codex_and_gemini_sessions_of_this_project(ace_home, calc, tmp_path,
                                                                             _private_environment):
    home = _private_environment
    other = tmp_path / "other"
    subprocess.run(["git", "init", "-q", str(other)], check=True)
    codex_home = tmp_path / "codex-home"
    codex_fix_session(calc, "019a-mine").write(codex_path(codex_home, "019a-mine"))
    codex_fix_session(other, "019a-theirs").write(codex_path(codex_home, "019a-theirs"))
    gemini_fix_session(calc, "gem-mine").write(gemini_project_dir(home, calc) / "chats" / "session-a-gem1.jsonl")
    gemini_fix_session(other, "gem-theirs").write(gemini_project_dir(home, other, "other") / "chats" /
                                                  "session-b-gem2.jsonl")
    # An older Gemini: the folder is the sha256 of the root, no `.project_root` marker.
    import hashlib
    hashed = home / ".gemini" / "tmp" / hashlib.sha256(str(calc).encode()).hexdigest() / "chats"
    gemini_fix_session(calc, "gem-old").write(hashed / "session-c-gem3.jsonl")
    code, out, err = ace("learn", "--all-transcripts", "--json", "--heuristic", cwd=calc,
                         env={"CODEX_HOME": str(codex_home)})
    assert code == 0, err
    result = json.loads(out)
    assert sorted((f["session_id"], f["learned"]) for f in result["files"]) == [
        ("019a-mine", 1), ("gem-mine", 1), ("gem-old", 1)]
    assert {r["agent"] for r in rows(ace_home, "SELECT agent FROM session_summaries")} == {"codex", "gemini"}
    code, out, err = ace("learn", "--all-transcripts", "--heuristic", cwd=calc, env={"CODEX_HOME": str(codex_home)})
    assert code == 0, err
    assert "3 turns: 0 learned, 0 not worth learning, 3 learned before" in out
    assert str(codex_home / "sessions") in out and str(home / ".gemini" / "tmp") in out


def test_a_fifo_where_sessions_are_looked_for_is_passed_over_not_a_hang(ace_home, calc, tmp_path,
                                                                       _private_environment):
    import os

    codex_home = tmp_path / "codex-home"
    rollout = codex_path(codex_home, "019a-fifo")
    rollout.parent.mkdir(parents=True)
    os.mkfifo(rollout)
    folder = _private_environment / ".gemini" / "tmp" / "calc"
    (folder / "chats").mkdir(parents=True)
    os.mkfifo(folder / ".project_root")
    os.mkfifo(folder / "chats" / "session-x-fifo.jsonl")
    proc = run_ace("learn", "--all-transcripts", "--json", cwd=calc, env={"CODEX_HOME": str(codex_home)},
                   process=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["files"] == []
    proc = run_ace("learn", "--transcript", rollout, cwd=calc, process=True, timeout=60)
    assert proc.returncode == 1 and "not a regular file" in proc.stderr
