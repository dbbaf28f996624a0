"""Antigravity CLI (`agy`) against its documented contract: no binary can be installed here (it is
on no package index), so the payloads are built from the documentation — Gemini CLI's
`docs/resources/migrating-to-antigravity-cli.md` and the Antigravity hooks page: named hooks in
`.agents/hooks.json`, timeouts in seconds, a camelCase payload (`conversationId`, `stepIdx`,
`toolCall: {name, args}`, `transcriptPath`, `workspacePaths`, `artifactDirectoryPath`; PostToolUse
adds `error`), agy's tools with PascalCase arguments. Each hook runs as the real launcher process
against a real SQLite store."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ace_engine.agents import registry
from ace_engine.agents.tools import to_canonical
from ace_engine.capture.tools import command_of, edit_pairs, path_of
from ace_engine.core.errors import SettingsError
from ace_engine.hooks import agents as hook_agents
from ace_engine.hooks.hook_input import HookInput
from ace_engine.hooks.launch import __file__ as LAUNCHER
from ace_engine.integrations import antigravity_config
from conftest import ace, examples
from test_agent_hooks import rows  # the store read as dicts, as the other agents' hook tests read it


def payload(project: Path, step: int = 1, **extra) -> dict:
    """A hook payload with the fields every agy event carries."""
    return {"conversationId": "conv-1", "stepIdx": step, "transcriptPath": str(project / "transcript.jsonl"),
            "workspacePaths": [str(project)], "artifactDirectoryPath": str(project / ".artifacts"), **extra}


def tool(project: Path, step: int, name: str, args: dict, **extra) -> dict:
    return payload(project, step, toolCall={"name": name, "args": args}, **extra)


def run(event: str, data, cwd: Path):
    raw = data if isinstance(data, bytes) else json.dumps(data).encode()
    proc = subprocess.run([sys.executable, "-I", LAUNCHER, "antigravity", event], input=raw, capture_output=True,
                          timeout=60, cwd=cwd, env=dict(os.environ))
    return proc.returncode, proc.stdout.decode(), proc.stderr.decode()


# -- install / uninstall --------------------------------------------------------------------------

USER_HOOKS = {"lint": {"PostToolUse": [{"matcher": "run_command", "hooks": [{"type": "command",
                                                                               "command": "./lint.sh", "timeout": 5}]}]},
              "safety-gate": {"enabled": False, "PreToolUse": [{"matcher": "", "hooks": [{"command": "./gate.sh"}]}]}}
USER_SERVERS = {"mcpServers": {"firebase": {"command": "npx", "args": ["-y", "firebase-tools@latest", "mcp"]}}}


def test_install_merges_and_uninstall_restores(ace_home, git_project):
    agents = git_project / ".agents"
    agents.mkdir()
    (agents / "hooks.json").write_text(json.dumps(USER_HOOKS, indent=2))
    (agents / "mcp_config.json").write_text(json.dumps(USER_SERVERS))
    result = ace("install", "--agent", "antigravity", "--project", git_project, "--json")
    assert result.exit_code == 0, result.output
    hooks = json.loads((agents / "hooks.json").read_text())
    assert list(hooks) == ["lint", "safety-gate", "ace-engine"], "the user's hooks kept, in their order"
    assert hooks["lint"] == USER_HOOKS["lint"] and hooks["safety-gate"] == USER_HOOKS["safety-gate"]
    ours = hooks["ace-engine"]
    assert set(ours) == {"SessionStart", "PostToolUse", "Stop"}, "no PreToolUse: its answer is a decision"
    group = ours["PostToolUse"][0]
    assert group["matcher"] == "" and group["hooks"][0]["command"].endswith("launch.py antigravity PostToolUse")
    assert group["hooks"][0]["timeout"] == 10 and isinstance(group["hooks"][0]["timeout"], int), "whole seconds"
    assert ours["Stop"][0] == {"type": "command", "command": ours["Stop"][0]["command"], "timeout": 10}, "a flat list"
    servers = json.loads((agents / "mcp_config.json").read_text())["mcpServers"]
    assert servers["firebase"] == USER_SERVERS["mcpServers"]["firebase"]
    assert servers["ace"]["args"] == ["-I", "-m", "ace_engine.mcp_server"]

    again = ace("install", "--agent", "antigravity", "--project", git_project, "--json")
    assert json.loads(again.output)["changed"] is False, "idempotent"

    out = ace("uninstall", "--agent", "antigravity", "--project", git_project, "--json")
    assert json.loads(out.output)["removed"] == ["mcpServers.ace"]
    assert json.loads((agents / "hooks.json").read_text()) == USER_HOOKS
    assert json.loads((agents / "mcp_config.json").read_text()) == USER_SERVERS


def test_install_on_nothing_leaves_nothing_after_uninstall(ace_home, git_project):
    ace("install", "--agent", "antigravity", "--project", git_project)
    assert (git_project / ".agents" / "hooks.json").is_file()
    ace("uninstall", "--agent", "antigravity", "--project", git_project)
    assert not (git_project / ".agents").exists()


def test_user_scope_goes_to_the_antigravity_cli_folder(ace_home, git_project):
    result = ace("install", "--agent", "antigravity", "--user", "--project", git_project, "--json")
    assert result.exit_code == 0, result.output
    folder = Path(os.path.expanduser("~")) / ".gemini" / "antigravity-cli"
    assert "ace-engine" in json.loads((folder / "hooks.json").read_text())
    assert "ace" in json.loads((folder / "mcp_config.json").read_text())["mcpServers"]
    assert not (Path(os.path.expanduser("~")) / ".gemini" / "settings.json").exists(), "not Gemini CLI's file"
    ace("uninstall", "--agent", "antigravity", "--user", "--project", git_project)
    assert not (folder / "hooks.json").exists()


@pytest.mark.parametrize("text", ['{"a": {}, }', '// mine\n{"a": {}}', '{"a": {"PostToolUse": [], "t": NaN}}', "[1]"])
def test_a_file_agy_would_not_load_is_refused_untouched(ace_home, git_project, text):
    agents = git_project / ".agents"
    agents.mkdir()
    (agents / "hooks.json").write_text(text)
    with pytest.raises(SettingsError):
        antigravity_config.install("project", str(git_project))
    assert (agents / "hooks.json").read_text() == text
    assert not (agents / "mcp_config.json").exists(), "nothing written when one file is refused"


def test_a_symlinked_config_is_refused(ace_home, git_project, tmp_path):
    target = tmp_path / "elsewhere.json"
    target.write_text("{}")
    agents = git_project / ".agents"
    agents.mkdir()
    (agents / "mcp_config.json").symlink_to(target)
    with pytest.raises(SettingsError, match="symbolic link"):
        antigravity_config.install("project", str(git_project))
    assert target.read_text() == "{}" and not (agents / "hooks.json").exists()


def test_a_switched_off_hook_stays_off_and_is_reported(ace_home, git_project):
    antigravity_config.install("project", str(git_project))
    path = git_project / ".agents" / "hooks.json"
    data = json.loads(path.read_text())
    data["ace-engine"]["enabled"] = False  # what agy's /hooks toggle writes
    path.write_text(json.dumps(data))
    result = antigravity_config.install("project", str(git_project))
    assert json.loads(path.read_text())["ace-engine"]["enabled"] is False
    assert any("switched off" in note for note in result["notes"])
    assert antigravity_config.status("project", str(git_project))["feature"] is False
    doctor = ace("doctor", "--project", git_project, "--json", "--offline")
    check = next(c for c in json.loads(doctor.output)["checks"] if c["check"] == "antigravity (project)")
    assert check["status"] == "fail" and '"enabled": true' in check["fix"]


def test_a_foreign_hook_and_server_named_like_ours_are_kept(ace_home, git_project):
    agents = git_project / ".agents"
    agents.mkdir()
    foreign = {"ace-engine": {"Stop": [{"type": "command", "command": "./someone-else.sh"}]}}
    (agents / "hooks.json").write_text(json.dumps(foreign))
    (agents / "mcp_config.json").write_text(json.dumps({"mcpServers": {"ace": {"command": "other"}}}))
    result = antigravity_config.install("project", str(git_project))
    assert json.loads((agents / "hooks.json").read_text()) == foreign
    assert len(result["notes"]) == 2 and result["changed"] is False
    antigravity_config.uninstall("project", str(git_project))
    assert json.loads((agents / "hooks.json").read_text()) == foreign, "uninstall takes only what is ours"


def test_status_lists_antigravity_and_marks_gemini_legacy(ace_home, git_project):
    ace("install", "--agent", "antigravity", "--project", git_project)
    ace("install", "--agent", "gemini", "--project", git_project)
    out = ace("status", "--project", git_project).output
    antigravity = next(line for line in out.splitlines() if "Antigravity CLI hooks" in line)
    gemini = next(line for line in out.splitlines() if "Gemini CLI hooks" in line)
    assert "legacy" not in antigravity and "legacy" in gemini
    doctor = json.loads(ace("doctor", "--project", git_project, "--json", "--offline").output)["checks"]
    ours = next(c for c in doctor if c["check"] == "antigravity (project)")
    assert ours["status"] == "ok", ours  # the installed hook was run for real and answered
    assert "legacy" in next(c for c in doctor if c["check"] == "gemini (project)")["detail"]


# -- the tools ------------------------------------------------------------------------------------


def test_agy_tools_become_claude_codes():
    name, data = to_canonical("antigravity", "run_command", {"CommandLine": "pytest -q", "Cwd": "/w"})
    assert (name, command_of(name, data), data["Cwd"]) == ("Bash", "pytest -q", "/w")
    name, data = to_canonical("antigravity", "view_file", {"AbsolutePath": "/w/a.py", "StartLine": 1})
    assert (name, path_of(name, data)) == ("Read", "/w/a.py")
    name, data = to_canonical("antigravity", "replace_file_content",
                              {"TargetFile": "/w/a.py", "TargetContent": "x", "ReplacementContent": "y"})
    assert (name, path_of(name, data), edit_pairs(name, data)) == ("Edit", "/w/a.py", [("x", "y")])
    name, data = to_canonical("antigravity", "write_to_file", {"TargetFile": "/w/n.py", "CodeContent": "print(1)\n"})
    assert (name, edit_pairs(name, data)) == ("Write", [("", "print(1)\n")])
    assert to_canonical("antigravity", "grep_search", {"Query": "TODO", "SearchPath": "src"})[0] == "Grep"
    assert to_canonical("antigravity", "browser_click", {"x": 1}) == ("browser_click", {"x": 1}), "unknown: as given"


# -- whole hook processes -------------------------------------------------------------------------

CALLS = [  # (agy tool, its args, our tool, what capture reads back)
    ("run_command", {"CommandLine": "python -m pytest -q", "Cwd": "{p}"}, "Bash", ("command", "python -m pytest -q")),
    ("view_file", {"AbsolutePath": "{p}/app.py"}, "Read", ("file_path", "{p}/app.py")),
    ("write_to_file", {"TargetFile": "{p}/new.py", "CodeContent": "x = 1\n"}, "Write", ("content", "x = 1\n")),
    ("replace_file_content", {"TargetFile": "{p}/app.py", "TargetContent": "print('hi')",
                              "ReplacementContent": "print('bye')"}, "Edit", ("new_string", "print('bye')")),
    ("multi_replace_file_content", {"TargetFile": "{p}/app.py", "ReplacementChunks": [
        {"TargetContent": "a", "ReplacementContent": "b"}]}, "MultiEdit", ("edits", [{"old_string": "a",
                                                                                       "new_string": "b"}])),
    ("grep_search", {"Query": "print", "SearchPath": "{p}"}, "Grep", ("pattern", "print")),
    ("codebase_search", {"Query": "where is the greeting"}, "Grep", ("pattern", "where is the greeting")),
    ("find_by_name", {"Pattern": "*.py", "SearchDirectory": "{p}"}, "Glob", ("pattern", "*.py")),
    ("list_dir", {"DirectoryPath": "{p}"}, "LS", ("path", "{p}")),
]


def test_a_session_is_captured_tool_by_tool(ace_home, git_project):
    p = str(git_project)
    sub = lambda v: json.loads(json.dumps(v).replace("{p}", p))  # noqa: E731
    code, out, err = run("SessionStart", payload(git_project, 0), git_project)
    assert (code, out) == (0, "{}"), err
    for step, (name, args, _, _) in enumerate(CALLS, start=1):
        code, out, err = run("PostToolUse", tool(git_project, step, name, sub(args)), git_project)
        assert (code, json.loads(out)) == (0, {}), err
    failing = tool(git_project, 50, "run_command", {"CommandLine": "python boom.py"}, error="exit status 3")
    assert run("PostToolUse", failing, git_project)[:2] == (0, "{}")
    assert run("Stop", payload(git_project, 51, fullyIdle=True, terminationReason="NO_TOOL_CALL"),
               git_project)[:2] == (0, "{}")

    events = {":".join(r["tool_use_id"].split(":")[:2]): r for r in rows(ace_home, "SELECT * FROM tool_events")}
    for step, (_, _, ours, (field, value)) in enumerate(CALLS, start=1):
        row = events[f"conv-1:{step}"]
        assert row["tool_name"] == ours and row["success"] == 1, row
        assert json.loads(row["input"])[field] == sub(value), (ours, row["input"])
    bad = events["conv-1:50"]
    assert (bad["tool_name"], bad["success"], bad["error"]) == ("Bash", 0, "exit status 3")
    assert [s["session_id"] for s in rows(ace_home, "SELECT session_id, agent FROM sessions")] == ["conv-1"]
    assert rows(ace_home, "SELECT agent FROM sessions")[0]["agent"] == "antigravity"
    hooks = [r["event"] for r in rows(ace_home, "SELECT event FROM hook_events ORDER BY id")]
    assert hooks[0] == "SessionStart" and hooks[-1] == "Stop"
    assert rows(ace_home, "SELECT count(*) AS n FROM jobs")[0]["n"] >= 1, "the turn is queued for learning at Stop"


def test_calls_of_one_step_are_kept_apart_and_a_resent_call_is_one(ace_home, git_project):
    for args in ({"AbsolutePath": "/a.py"}, {"AbsolutePath": "/b.py"}, {"AbsolutePath": "/a.py"}):
        assert run("PostToolUse", tool(git_project, 7, "view_file", args), git_project)[:2] == (0, "{}")
    paths = [json.loads(r["input"])["file_path"] for r in rows(ace_home, "SELECT input FROM tool_events ORDER BY id")]
    assert paths == ["/a.py", "/b.py"]


def test_a_post_tool_use_without_its_call_is_still_recorded(ace_home, git_project):
    code, out, _ = run("PostToolUse", payload(git_project, 4, toolCall=None), git_project)
    assert (code, out) == (0, "{}")
    assert [r["tool_name"] for r in rows(ace_home, "SELECT tool_name FROM tool_events")] == ["unknown"]


@pytest.mark.parametrize("data", [b"", b"{", b"[1]", json.dumps({"conversationId": 5, "stepIdx": "x",
                                                                  "toolCall": {"name": 3, "args": "{not json"},
                                                                  "workspacePaths": "nope", "error": {}}).encode()])
def test_every_event_answers_a_json_object_and_exits_0(ace_home, git_project, data):
    for event in [*registry.get("antigravity").events, "PreToolUse", "PreInvocation", "PostInvocation", "Nope", ""]:
        code, out, err = run(event, data, git_project)
        assert code == 0, err
        assert json.loads(out) == {}, (event, out)


JSON = st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=8),
                    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3),
                    max_leaves=8)
AGY_TOOLS = st.sampled_from(list(registry.get("antigravity").tools)) | st.text(max_size=8) | JSON


@settings(max_examples=examples(300), deadline=None)
@given(native=st.sampled_from([*registry.get("antigravity").events, "PreInvocation"]) | st.text(max_size=10),
       payload=st.fixed_dictionaries({}, optional={
           "conversationId": JSON, "stepIdx": JSON, "transcriptPath": JSON, "workspacePaths": JSON, "error": JSON,
           "toolCall": JSON | st.fixed_dictionaries({"name": AGY_TOOLS, "args": JSON | st.text(max_size=12)}),
           "output": JSON}))
def test_adapting_any_agy_payload_never_raises(native, payload):
    event = hook_agents.event_for("antigravity", native)
    if event:
        event, adapted = hook_agents.adapt("antigravity", native, event, payload)
        inp = HookInput.parse(event, adapted)
        assert event in ("SessionStart", "PostToolUse", "PostToolUseFailure", "Stop")
        assert inp.session_id is None or inp.session_id == payload.get("conversationId")
    assert hook_agents.answer("antigravity", native, {"systemMessage": "x"}) is None


def test_doctor_never_runs_a_repositorys_own_command_under_our_name(ace_home, git_project, tmp_path):
    """`.agents/hooks.json` is the repository's: a command posing as ours is reported, never started."""
    antigravity_config.install("project", str(git_project))
    path = git_project / ".agents" / "hooks.json"
    data = json.loads(path.read_text())
    marker = tmp_path / "ran"
    handler = data["ace-engine"]["PostToolUse"][0]["hooks"][0]
    handler["command"] = f"touch {marker}; {handler['command']}"
    path.write_text(json.dumps(data))
    doctor = json.loads(ace("doctor", "--project", git_project, "--json", "--offline").output)["checks"]
    check = next(c for c in doctor if c["check"] == "antigravity (project)")
    assert check["status"] == "warn" and "not run" in check["detail"] and not marker.exists()
