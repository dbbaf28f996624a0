"""`ace install / uninstall --agent codex|gemini`: merged into the agent's own files, idempotent,
malformed files refused untouched, exactly what was added taken out again; `ace status` and
`ace doctor` say which agents are on."""

import json
import tomllib

from ace_engine.agents import registry
from conftest import ace

USER_TOML = '# my settings\nmodel = "o3"\n\n[features]\nweb_search = true\n\n[mcp_servers.docs]\ncommand = "docs-mcp"\n'


def test_codex_install_merges_and_uninstall_restores_byte_for_byte(ace_home, git_project, tmp_path, monkeypatch):
    monkeypatch.setenv("CODEX_HOME", str(tmp_path / "codex-home"))
    user_toml = tmp_path / "codex-home" / "config.toml"
    user_toml.parent.mkdir()
    user_toml.write_text('model = "o3"\n')
    codex = git_project / ".codex"
    codex.mkdir()
    (codex / "config.toml").write_text(USER_TOML)
    (codex / "hooks.json").write_text(json.dumps({"hooks": {"Stop": [{"hooks": [{"type": "command",
                                                                                  "command": "notify-me"}]}]}}))
    before_hooks = (codex / "hooks.json").read_text()
    result = ace("install", "--agent", "codex", "--project", git_project, "--json")
    assert result.exit_code == 0, result.output
    config = tomllib.loads((codex / "config.toml").read_text())
    assert config["features"] == {"hooks": True, "web_search": True}
    assert config["mcp_servers"] == {"docs": {"command": "docs-mcp"}} and config["model"] == "o3"
    user = tomllib.loads(user_toml.read_text())  # Codex starts MCP servers from the user's file only
    assert user["mcp_servers"]["ace"]["args"] == ["-I", "-m", "ace_engine.mcp_server"] and user["model"] == "o3"
    hooks = json.loads((codex / "hooks.json").read_text())["hooks"]
    assert set(hooks) == set(registry.get("codex").events)
    assert hooks["Stop"][0]["hooks"][0]["command"] == "notify-me", "the user's own hook is kept, first"
    ours = hooks["PostToolUse"][0]["hooks"][0]
    assert ours["command"].endswith("launch.py codex PostToolUse") and ours["timeout"] == 10
    assert hooks["PermissionRequest"][0]["matcher"] == "Bash"

    again = ace("install", "--agent", "codex", "--project", git_project, "--json")
    assert json.loads(again.output)["changed"] is False, "idempotent"

    ace("uninstall", "--agent", "codex", "--project", git_project)
    assert (codex / "config.toml").read_text() == USER_TOML
    assert user_toml.read_text() == 'model = "o3"\n'
    assert json.loads((codex / "hooks.json").read_text()) == json.loads(before_hooks)


def test_codex_install_on_nothing_leaves_nothing_after_uninstall(ace_home, git_project):
    ace("install", "--agent", "codex", "--project", git_project)
    text = (git_project / ".codex" / "config.toml").read_text()
    assert tomllib.loads(text)["features"]["hooks"] is True
    ace("uninstall", "--agent", "codex", "--project", git_project)
    leftovers = sorted(p.name for p in (git_project / ".codex").iterdir()) if (git_project / ".codex").exists() else []
    assert all(name.endswith(".ace-backup") for name in leftovers), leftovers


def test_codex_keeps_a_users_switched_off_feature_and_foreign_server(ace_home, git_project, tmp_path,
                                                                    monkeypatch):
    monkeypatch.setenv("CODEX_HOME", str(tmp_path / "codex-home"))
    (tmp_path / "codex-home").mkdir()
    foreign = '[mcp_servers.ace]\ncommand = "someone-elses"\n'
    (tmp_path / "codex-home" / "config.toml").write_text(foreign)
    codex = git_project / ".codex"
    codex.mkdir()
    text = '[features]\nhooks = false\n'
    (codex / "config.toml").write_text(text)
    out = json.loads(ace("install", "--agent", "codex", "--project", git_project, "--json").output)
    assert (codex / "config.toml").read_text() == text
    assert (tmp_path / "codex-home" / "config.toml").read_text() == foreign
    assert len(out["notes"]) == 2 and "false" in out["notes"][0]
    doctor = json.loads(ace("doctor", "--project", git_project, "--json", catch_exceptions=True).output)
    codex_check = next(c for c in doctor["checks"] if c["check"] == "codex (project)")
    assert codex_check["status"] == "fail" and "switched off" in codex_check["detail"]


def test_malformed_files_are_refused_untouched(ace_home, git_project):
    codex = git_project / ".codex"
    codex.mkdir()
    (codex / "config.toml").write_text("[features\nhooks = ")
    result = ace("install", "--agent", "codex", "--project", git_project, catch_exceptions=True)
    assert result.exit_code != 0 and "not valid TOML" in result.output
    assert (codex / "config.toml").read_text() == "[features\nhooks = " and not (codex / "hooks.json").exists()
    gemini = git_project / ".gemini"
    gemini.mkdir()
    (gemini / "settings.json").write_text('{"theme": "x", // a comment\n}')
    result = ace("install", "--agent", "gemini", "--project", git_project, catch_exceptions=True)
    assert result.exit_code != 0 and "not valid JSON" in result.output
    assert (gemini / "settings.json").read_text() == '{"theme": "x", // a comment\n}'


def test_gemini_install_and_uninstall(ace_home, git_project, tmp_path, monkeypatch):
    settings = git_project / ".gemini" / "settings.json"
    settings.parent.mkdir()
    mine = {"theme": "Dracula", "mcpServers": {"docs": {"command": "docs-mcp"}},
            "hooks": {"AfterTool": [{"matcher": "write_file", "hooks": [{"type": "command", "command": "fmt"}]}]}}
    settings.write_text(json.dumps(mine))
    assert ace("install", "--agent", "gemini", "--project", git_project).exit_code == 0
    data = json.loads(settings.read_text())
    assert set(data["hooks"]) == set(registry.get("gemini").events) and "PreCompress" not in data["hooks"]
    after_tool = data["hooks"]["AfterTool"]
    assert after_tool[0] == mine["hooks"]["AfterTool"][0] and after_tool[1]["hooks"][0]["timeout"] == 10_000
    assert data["mcpServers"]["docs"] == {"command": "docs-mcp"} and data["mcpServers"]["ace"]["args"][-1] == \
        "ace_engine.mcp_server"
    status = json.loads(ace("status", "--project", git_project, "--json").output)
    assert status["enabled"] and [a["agent"] for a in status["agents"]] == ["gemini"]
    ace("uninstall", "--agent", "gemini", "--project", git_project)
    assert json.loads(settings.read_text()) == mine


def test_user_scope_and_local_refused(ace_home, git_project, tmp_path, monkeypatch):
    monkeypatch.setenv("CODEX_HOME", str(tmp_path / "codex-home"))
    assert ace("install", "--agent", "codex", "--user", "--project", git_project).exit_code == 0
    assert (tmp_path / "codex-home" / "hooks.json").exists()
    assert not (git_project / ".codex").exists()
    result = ace("install", "--agent", "gemini", "--local", "--project", git_project, catch_exceptions=True)
    assert result.exit_code == 2
    ace("uninstall", "--agent", "codex", "--user", "--project", git_project)
    assert not (tmp_path / "codex-home" / "hooks.json").exists()


def _doctor_check(git_project, name):
    doctor = json.loads(ace("doctor", "--project", git_project, "--json", catch_exceptions=True).output)
    return next(c for c in doctor["checks"] if c["check"] == name)


def test_doctor_runs_the_agents_hooks_for_real(ace_home, git_project, tmp_path, monkeypatch):
    monkeypatch.setenv("CODEX_HOME", str(tmp_path / "codex-home"))
    for agent in ("codex", "gemini"):
        assert ace("install", "--agent", agent, "--project", git_project).exit_code == 0
    codex, gemini = _doctor_check(git_project, "codex (project)"), _doctor_check(git_project, "gemini (project)")
    assert codex["status"] == "ok" and gemini["status"] == "ok", (codex, gemini)
    # The Codex hook is asked a permission it must refuse; switched off, it answers nothing, and
    # the doctor says so: what it judged was the installed hook's own answer.
    monkeypatch.setenv("ACE_DISABLED", "1")
    codex = _doctor_check(git_project, "codex (project)")
    assert codex["status"] == "fail" and "answered wrongly (exit 0)" in codex["detail"]
    assert "reinstall ace-engine" in codex["fix"]


def test_doctor_never_runs_an_agent_hook_command_it_did_not_write(ace_home, git_project, tmp_path):
    marker = tmp_path / "ran"
    fake = tmp_path / "python"
    fake.write_text(f"#!/bin/sh\ntouch {marker}\n")
    fake.chmod(0o755)
    assert ace("install", "--agent", "gemini", "--project", git_project, "--python", str(fake)).exit_code == 0
    marker.unlink(missing_ok=True)  # `ace install --python X` asks X for the MCP server's package: the user named it
    gemini = _doctor_check(git_project, "gemini (project)")
    assert gemini["status"] == "warn" and "not ace-engine's for this installation, not run" in gemini["detail"]
    assert "ace install --agent gemini" in gemini["fix"]
    assert not marker.exists()  # a repository's .gemini/settings.json names what it likes: never started
