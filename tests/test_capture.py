"""What the hooks capture, through the real entry points into a real SQLite file."""

import json
import sqlite3

from hookutil import check_answer, payload, run_hook


def rows(ace_home, sql, params=()):
    con = sqlite3.connect(ace_home / "ace.db")
    con.row_factory = sqlite3.Row
    try:
        return [dict(r) for r in con.execute(sql, params)]
    finally:
        con.close()


def test_tool_events_success_and_failure(ace_home, git_project):
    cwd = str(git_project)
    ok = payload("PostToolUse", cwd, tool_name="Bash", tool_use_id="t-ok", duration_ms=120,
                 tool_input={"command": "pytest -q"}, tool_response={"stdout": "3 passed", "stderr": "", "interrupted": False})
    bad = payload("PostToolUseFailure", cwd, tool_name="Bash", tool_use_id="t-bad", duration_ms=80, is_interrupt=False,
                  tool_input={"command": "pytest -q"}, error="Exit code 2\nERROR collecting tests")
    sub = payload("PostToolUse", cwd, tool_name="Read", tool_use_id="t-sub", agent_id="ag-1", agent_type="Explore",
                  tool_input={"file_path": "app.py"}, tool_response={"file": {"content": "print('hi')"}})
    for event, data in (("PostToolUse", ok), ("PostToolUseFailure", bad), ("PostToolUse", sub), ("PostToolUse", ok)):
        code, out, err, _ = run_hook(event, data)
        assert code == 0 and out == "", err
    events = {r["tool_use_id"]: r for r in rows(ace_home, "SELECT * FROM tool_events")}
    assert set(events) == {"t-ok", "t-bad", "t-sub"}, "a repeated tool_use_id is stored once"
    assert events["t-ok"]["success"] == 1 and events["t-ok"]["exit_code"] == 0 and events["t-ok"]["duration_ms"] == 120
    assert json.loads(events["t-ok"]["input"]) == {"command": "pytest -q"}
    assert "3 passed" in events["t-ok"]["response"]
    assert events["t-bad"]["success"] == 0 and events["t-bad"]["exit_code"] == 2
    assert "ERROR collecting" in events["t-bad"]["error"]
    assert (events["t-sub"]["agent_id"], events["t-sub"]["agent_type"]) == ("ag-1", "Explore")
    (project,) = rows(ace_home, "SELECT * FROM projects")
    assert project["key"] == "git:github.com/Acme/Widget" and project["root"] == cwd
    (session,) = rows(ace_home, "SELECT * FROM sessions")
    assert session["project_id"] == project["id"] and session["session_id"] == "sess-1"


def test_skip_list_is_configurable(ace_home, git_project, monkeypatch):
    cwd = str(git_project)
    todo = payload("PostToolUse", cwd, tool_name="TodoWrite", tool_use_id="t-todo", tool_input={"todos": []}, tool_response={})
    run_hook("PostToolUse", todo)
    assert not rows(ace_home, "SELECT * FROM tool_events")
    # The user's setting (a repository's .ace.toml may not hide tools from capture: issue 20).
    (git_project / ".ace.toml").write_text('[capture]\nskip_tools = ["Bash"]\n')
    monkeypatch.setenv("ACE_CAPTURE_SKIP_TOOLS", "Read")
    run_hook("PostToolUse", payload("PostToolUse", cwd, tool_name="Bash", tool_use_id="t-bash", tool_input={},
                                    tool_response={}))
    run_hook("PostToolUse", todo)
    run_hook("PostToolUse", payload("PostToolUse", cwd, tool_name="Read", tool_use_id="t-read", tool_input={}, tool_response={}))
    assert [r["tool_use_id"] for r in rows(ace_home, "SELECT * FROM tool_events")] == ["t-bash", "t-todo"]


def test_caps_keep_head_and_tail(ace_home, git_project, monkeypatch):
    monkeypatch.setenv("ACE_CAPTURE_MAX_RESPONSE_CHARS", "500")
    out = "HEAD-MARK " + "x" * 10_000 + " TAIL-MARK"
    run_hook("PostToolUse", payload("PostToolUse", str(git_project), tool_name="Bash", tool_use_id="t-cap",
                                    tool_input={"command": "big"}, tool_response=out))
    (row,) = rows(ace_home, "SELECT response FROM tool_events")
    assert len(row["response"]) <= 500 and row["response"].startswith("HEAD-MARK") and row["response"].endswith("TAIL-MARK")
    assert "cut" in row["response"]


def test_prompts_and_final_messages(ace_home, git_project):
    cwd = str(git_project)
    run_hook("UserPromptSubmit", payload("UserPromptSubmit", cwd, prompt="fix the build <private>my pin is 4411</private> please"))
    run_hook("UserPromptSubmit", payload("UserPromptSubmit", cwd, prompt="<private>entirely secret</private>"))
    run_hook("Stop", payload("Stop", cwd, stop_hook_active=False, last_assistant_message="Build fixed."))
    run_hook("Stop", payload("Stop", cwd, stop_hook_active=True, last_assistant_message="again"))
    run_hook("SubagentStop", payload("SubagentStop", cwd, agent_id="ag-9", agent_type="Plan",
                                     stop_hook_active=False, last_assistant_message="Plan ready."))
    run_hook("SubagentStop", payload("SubagentStop", cwd, agent_id="compactor", agent_type="",
                                     stop_hook_active=False, last_assistant_message="<summary>all of it</summary>"))
    messages = rows(ace_home, "SELECT role, text, agent_id FROM messages ORDER BY id")
    assert [m["role"] for m in messages] == ["user", "assistant", "assistant"]
    assert "4411" not in messages[0]["text"] and "fix the build" in messages[0]["text"]
    assert messages[1]["text"] == "Build fixed." and messages[2]["agent_id"] == "ag-9"
    events = [r["event"] for r in rows(ace_home, "SELECT event FROM hook_events ORDER BY id")]
    assert events.count("Stop") == 1, "stop_hook_active returns at once without recording"
    details = rows(ace_home, "SELECT detail FROM hook_events WHERE agent_id='compactor'")
    assert details == [{"detail": "compaction"}], "the compaction summarizer is recorded, its summary is not"


def test_secrets_never_reach_the_database_file(ace_home, git_project):
    key = "sk-ant-api03-" + "Q" * 90
    aws = "AKIA" + "ABCDEFGHIJKLMNOP"
    cwd = str(git_project)
    run_hook("UserPromptSubmit", payload("UserPromptSubmit", cwd, prompt=f"use ANTHROPIC_API_KEY={key}"))
    run_hook("PostToolUse", payload("PostToolUse", cwd, tool_name="Bash", tool_use_id="t-sec",
                                    tool_input={"command": f"export AWS_ACCESS_KEY_ID={aws}"},
                                    tool_response={"stdout": f"key is {key}", "stderr": ""}))
    run_hook("Stop", payload("Stop", cwd, last_assistant_message=f"I used {key}"))
    blob = b"".join(p.read_bytes() for p in ace_home.iterdir() if p.is_file())
    assert key.encode() not in blob and aws.encode() not in blob
    assert b"REDACTED" in blob


def test_session_lifecycle(ace_home, git_project):
    cwd = str(git_project)
    for event, extra in [("SessionStart", {"source": "startup"}), ("PreCompact", {"trigger": "manual", "custom_instructions": None}),
                         ("SessionStart", {"source": "compact"}), ("SessionEnd", {"reason": "prompt_input_exit"})]:
        code, out, _, _ = run_hook(event, payload(event, cwd, **extra))
        assert code == 0
        check_answer(event, out)
    (session,) = rows(ace_home, "SELECT * FROM sessions")
    assert session["source"] == "startup" and session["compactions"] == 1
    assert session["status"] == "ended" and session["end_reason"] == "prompt_input_exit"
    details = [(r["event"], r["detail"]) for r in rows(ace_home, "SELECT event, detail FROM hook_events ORDER BY id")]
    assert details == [("SessionStart", "startup"), ("PreCompact", "manual"), ("SessionStart", "compact"),
                       ("SessionEnd", "prompt_input_exit")]


def test_store_connection_redacts_every_write(ace_home):
    """The choke point: any INSERT/UPDATE through the store's connection (execute, executemany,
    a cursor) is redacted, ids included; an integer SQLite can't hold is kept as marked text."""
    from ace_engine.store.sqlite import SQLiteStore

    secret = "npm" + "_" + "a1B2c3D4e5F6g7H8j9K0" * 2
    with SQLiteStore() as store:
        store.conn.execute("INSERT INTO projects(key, root, name, created_at, last_seen_at) VALUES (?,?,?,?,?)",
                           (f"path:/{secret}", "/r", secret, 1.0, 1.0))
        store.conn.executemany("INSERT INTO hook_events(session_id, event, detail, created_at) VALUES (?,?,?,?)",
                               [(secret, "Stop", f"--token {secret}", 2.0)])
        store.conn.cursor().execute("UPDATE projects SET remote=? WHERE name=?", (secret, secret))
        store.conn.execute("INSERT INTO hook_events(session_id, event, duration_ms, created_at) VALUES (?,?,?,?)",
                           ("s-big", "Stop", 2**70, 3.0))
        name, remote = store.conn.execute("SELECT name, remote FROM projects").fetchone()
        assert name == remote == "[REDACTED:npm-token]", "an UPDATE's WHERE finds the redacted row"
        (big,) = store.conn.execute("SELECT duration_ms FROM hook_events WHERE session_id='s-big'").fetchone()
        assert str(2**70) in big and "[ace:" in big
    raw = b"".join(p.read_bytes() for p in ace_home.iterdir() if p.name.startswith("ace.db"))
    assert secret.encode() not in raw
