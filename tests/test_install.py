"""`ace install` / `ace uninstall` merge into Claude Code settings without disturbing anything else."""

import json
import os
import shlex
import subprocess
import sys

import pytest

from ace_engine.hooks.events import EVENTS, MATCHERS
from ace_engine.integrations import claude_settings
from conftest import ace as run_ace

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def ace(*args, cwd=None, env=None):
    return run_ace(*args, cwd=cwd, env=env, process=True)


EXISTING = {
    "permissions": {"allow": ["Bash(npm test)"]},
    "model": "opus",
    "hooks": {
        "PostToolUse": [{"matcher": "Edit|Write", "hooks": [{"type": "command", "command": "prettier --write", "timeout": 30}]}],
        "Notification": [{"hooks": [{"type": "command", "command": "notify-send claude"}]}],
    },
}


def test_install_merges_and_is_idempotent(ace_home, git_project):
    settings = git_project / ".claude" / "settings.json"
    settings.parent.mkdir()
    original = json.dumps(EXISTING, indent=4)
    settings.write_text(original)

    first = ace("install", "--json", cwd=git_project)
    assert first.returncode == 0, first.stderr
    result = json.loads(first.stdout)
    assert result["changed"] and sorted(result["events"]) == sorted(EVENTS)
    assert (git_project / ".claude" / "settings.json.ace-backup").read_text() == original

    data = json.loads(settings.read_text())
    assert data["permissions"] == EXISTING["permissions"] and data["model"] == "opus"
    assert data["hooks"]["Notification"] == EXISTING["hooks"]["Notification"]
    assert data["hooks"]["PostToolUse"][0] == EXISTING["hooks"]["PostToolUse"][0]
    for event, spec in EVENTS.items():
        ours = [h for g in data["hooks"][event] for h in g["hooks"] if claude_settings.is_ours(h)]
        assert len(ours) == 1
        assert ours[0]["timeout"] == spec["timeout"]
        python = ours[0]["command"].split()[0].strip("'")
        assert os.path.isabs(python) and os.path.exists(python)
        assert ours[0]["command"].endswith(f"/ace_engine/hooks/launch.py {event}")
        group = next(g for g in data["hooks"][event] if ours[0] in g["hooks"])
        assert group.get("matcher") == MATCHERS.get(event)

    before = settings.read_text()
    again = json.loads(ace("install", "--json", cwd=git_project).stdout)
    assert again["changed"] is False and settings.read_text() == before

    removed = ace("uninstall", "--json", cwd=git_project)
    assert removed.returncode == 0 and json.loads(removed.stdout)["changed"]
    assert json.loads(settings.read_text()) == EXISTING


def test_install_from_subdirectory_targets_repo_root(ace_home, git_project):
    sub = git_project / "pkg" / "deep"
    sub.mkdir(parents=True)
    assert ace("install", cwd=sub).returncode == 0
    assert (git_project / ".claude" / "settings.json").exists()
    assert not (sub / ".claude").exists()


def test_uninstall_of_a_file_we_created_leaves_nothing(ace_home, git_project):
    assert ace("install", cwd=git_project).returncode == 0
    assert ace("uninstall", cwd=git_project).returncode == 0
    assert not (git_project / ".claude").exists(), "no file, backup or empty folder left behind"


@pytest.mark.parametrize("content", ['{"hooks": {', "[1, 2]", '{"hooks": []}', '{"hooks": {"Stop": {}}}', "\xff\xfe"])
def test_malformed_settings_refused_untouched(ace_home, git_project, content):
    settings = git_project / ".claude" / "settings.json"
    settings.parent.mkdir()
    settings.write_bytes(content.encode("latin-1"))
    result = ace("install", cwd=git_project)
    assert result.returncode != 0
    assert "settings.json" in result.stderr and ("fix" in result.stderr.lower() or "nothing was changed" in result.stderr)
    assert settings.read_bytes() == content.encode("latin-1")
    assert not (git_project / ".claude" / "settings.json.ace-backup").exists()


def test_scopes(ace_home, git_project, tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    env = {"HOME": str(home)}
    assert ace("install", "--local", cwd=git_project, env=env).returncode == 0
    assert claude_settings.installed_events(str(git_project / ".claude" / "settings.local.json"))
    assert ace("install", "--user", cwd=git_project, env=env).returncode == 0
    assert claude_settings.installed_events(str(home / ".claude" / "settings.json"))
    status = json.loads(ace("status", "--json", cwd=git_project, env=env).stdout)
    assert status["enabled"] and {i["scope"] for i in status["installs"]} == {"local", "user"}
    assert ace("uninstall", "--user", cwd=git_project, env=env).returncode == 0
    assert not (home / ".claude" / "settings.json").exists()


def test_install_with_custom_interpreter_path_with_spaces(ace_home, tmp_path):
    path = str(tmp_path / "settings.json")
    claude_settings.install(path, python="/opt/my python/bin/python3")
    events = claude_settings.installed_events(path)
    assert shlex.split(events["Stop"])[0] == "/opt/my python/bin/python3"


def test_plugin_files_match_the_generator():
    with open(os.path.join(REPO, "hooks", "hooks.json")) as fh:
        assert json.load(fh) == claude_settings.plugin_hooks_json(), "regenerate hooks/hooks.json"
    with open(os.path.join(REPO, ".claude-plugin", "plugin.json")) as fh:
        plugin = json.load(fh)
    with open(os.path.join(REPO, ".claude-plugin", "marketplace.json")) as fh:
        market = json.load(fh)
    assert plugin["name"] == "ace-engine"
    assert market["plugins"][0]["name"] == plugin["name"] and market["owner"]["name"]
    import ace_engine

    assert plugin["version"] == market["plugins"][0]["version"] == ace_engine.__version__


def test_plugin_launcher_runs_from_source_tree(ace_home, tmp_path):
    launcher = os.path.join(REPO, "hooks", "ace_hook.py")
    data = {"session_id": "p-1", "cwd": str(tmp_path), "hook_event_name": "PermissionRequest",
            "tool_name": "Bash", "tool_input": {"command": "ace clear"}}
    proc = subprocess.run([sys.executable, "-S", launcher, "PermissionRequest"], input=json.dumps(data),
                          capture_output=True, text=True)
    assert proc.returncode == 0
    assert json.loads(proc.stdout)["hookSpecificOutput"]["decision"]["behavior"] == "deny"
