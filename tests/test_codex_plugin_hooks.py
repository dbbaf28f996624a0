"""A Codex plugin that runs ace-engine's hooks, and Codex's `[features].plugin_hooks` (Codex 0.128+
runs a plugin's hooks only with it): `ace doctor` says when it is off, with the exact line to add.
A temporary CODEX_HOME holds the plugin cache as Codex lays it out
(`plugins/cache/<marketplace>/<plugin>/<version>/.codex-plugin/plugin.json` → `hooks/hooks.json`)."""

import json

import pytest

from ace_engine.integrations import codex_plugins
from conftest import ace

OUR_COMMAND = '"${ACE_PYTHON:-python3}" -I "${PLUGIN_ROOT}/hooks/ace_hook.py" PostToolUse'


@pytest.fixture
def codex_home(tmp_path, monkeypatch):
    home = tmp_path / "codex-home"
    home.mkdir()
    monkeypatch.setenv("CODEX_HOME", str(home))
    return home


def plugin(codex_home, name="ace-engine", market="team", command=OUR_COMMAND, hooks_field="./hooks/hooks.json"):
    root = codex_home / "plugins" / "cache" / market / name / "1.0.0"
    (root / ".codex-plugin").mkdir(parents=True)
    (root / ".codex-plugin" / "plugin.json").write_text(json.dumps({"name": name, "hooks": hooks_field}))
    (root / "hooks").mkdir()
    (root / "hooks" / "hooks.json").write_text(json.dumps(
        {"hooks": {"PostToolUse": [{"hooks": [{"type": "command", "command": command, "timeout": 10}]}]}}))
    return root


def check(project):
    result = ace("doctor", "--project", project, "--json", "--offline")
    found = [c for c in json.loads(result.output)["checks"] if c["check"] == "codex plugin"]
    return found[0] if found else None


def test_no_plugin_no_check(ace_home, git_project, codex_home):
    plugin(codex_home, name="other", command="./notify.sh")  # someone else's hooks
    assert check(git_project) is None


def test_plugin_hooks_unset_is_reported_with_the_line_to_add(ace_home, git_project, codex_home):
    plugin(codex_home)
    (codex_home / "config.toml").write_text('model = "o3"\n')
    found = check(git_project)
    assert found["status"] == "fail" and "ace-engine@team" in found["detail"] and "not set" in found["detail"]
    assert "add `plugin_hooks = true` under `[features]`" in found["fix"] and str(codex_home / "config.toml") in found["fix"]
    assert (codex_home / "config.toml").read_text() == 'model = "o3"\n', "doctor reports; it never writes"


def test_plugin_hooks_false_in_the_project_points_at_that_file(ace_home, git_project, codex_home):
    plugin(codex_home)
    (codex_home / "config.toml").write_text("[features]\nplugin_hooks = true\n")
    (git_project / ".codex").mkdir()
    (git_project / ".codex" / "config.toml").write_text("[features]\nplugin_hooks = false\n")
    found = check(git_project)
    assert found["status"] == "fail" and "set to false" in found["detail"]
    assert found["fix"].startswith("set `plugin_hooks = true`") and str(git_project / ".codex" / "config.toml") in found["fix"]


def test_plugin_hooks_on_is_ok(ace_home, git_project, codex_home):
    plugin(codex_home)
    (codex_home / "config.toml").write_text("[features]\nplugin_hooks = true\n")
    assert check(git_project)["status"] == "ok"


def test_plugin_and_hooks_json_together_run_every_event_twice(ace_home, git_project, codex_home):
    plugin(codex_home)
    ace("install", "--agent", "codex", "--project", git_project)
    with open(codex_home / "config.toml", "a") as fh:
        fh.write("\n[features]\nplugin_hooks = true\n")
    found = check(git_project)
    assert found["status"] == "warn" and "twice" in found["detail"] and "ace uninstall --agent codex" in found["fix"]


def test_a_switched_off_plugin_or_an_escaping_hooks_path_is_not_counted(ace_home, git_project, codex_home):
    plugin(codex_home)
    (codex_home / "config.toml").write_text('[plugins."ace-engine@team"]\nenabled = false\n')
    assert codex_plugins.ace_plugins() == []
    plugin(codex_home, name="sneaky", hooks_field="../../../../../../etc/hooks.json")
    assert codex_plugins.ace_plugins() == []


def test_plugin_files_that_are_not_json_are_skipped(ace_home, git_project, codex_home):
    root = plugin(codex_home)
    (root / "hooks" / "hooks.json").write_text("{broken")
    assert codex_plugins.ace_plugins() == []
    (root / ".codex-plugin" / "plugin.json").write_text("[]")
    assert codex_plugins.ace_plugins() == []
