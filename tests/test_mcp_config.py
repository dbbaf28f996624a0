"""`integrations.mcp_config`: what `ace install --mcp` writes — the project's `.mcp.json` and the
approval in a Claude Code settings file — merged, idempotent, refused untouched when unreadable,
and undone exactly by `uninstall`. The entry it writes starts a working server."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from ace_engine.core.errors import SettingsError
from ace_engine.integrations import mcp_config

OTHER_SERVER = {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-memory"]}


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "shop"
    root.mkdir()
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    return root


def settings_of(project: Path) -> Path:
    return project / ".claude" / "settings.local.json"


def read(path: Path) -> dict:
    return json.loads(path.read_text())


def test_install_registers_approves_and_allows_the_read_tools(project):
    result = mcp_config.install(str(project), str(settings_of(project)), python="/opt/py/bin/python3")
    assert result["changed"] and result["mcp_changed"] and result["settings_changed"] and result["backups"] == []
    assert read(project / ".mcp.json") == {"mcpServers": {"ace": {
        "type": "stdio", "command": "/opt/py/bin/python3", "args": ["-I", "-m", "ace_engine.mcp_server"]}}}
    assert read(settings_of(project)) == {
        "enabledMcpjsonServers": ["ace"],
        "permissions": {"allow": ["mcp__ace__search_lessons", "mcp__ace__get_lesson", "mcp__ace__search_history",
                                  "mcp__ace__recent_failures"]}}
    again = mcp_config.install(str(project), str(settings_of(project)), python="/opt/py/bin/python3")
    assert not again["changed"] and again["backups"] == []


def test_install_merges_keeps_everything_else_and_undoes_exactly(project):
    mcp_json, settings = project / ".mcp.json", settings_of(project)
    settings.parent.mkdir()
    mcp_before = {"mcpServers": {"memory": OTHER_SERVER}, "note": "team servers"}
    settings_before = {"hooks": {"Stop": []}, "enabledMcpjsonServers": ["memory"], "disabledMcpjsonServers": ["ace", "x"],
                       "permissions": {"allow": ["Bash(npm test:*)"], "deny": ["Read(.env)"]}}
    mcp_json.write_text(json.dumps(mcp_before))
    settings.write_text(json.dumps(settings_before))

    result = mcp_config.install(str(project), str(settings), allow_writes=True)
    assert sorted(result["backups"]) == sorted([f"{mcp_json}.ace-backup", f"{settings}.ace-backup"])
    assert read(Path(f"{mcp_json}.ace-backup")) == mcp_before
    data = read(mcp_json)
    assert data["note"] == "team servers" and data["mcpServers"]["memory"] == OTHER_SERVER
    assert data["mcpServers"]["ace"]["args"] == ["-I", "-m", "ace_engine.mcp_server", "--allow-writes"]
    assert data["mcpServers"]["ace"]["command"] == sys.executable
    new = read(settings)
    assert new["hooks"] == {"Stop": []} and new["permissions"]["deny"] == ["Read(.env)"]
    assert new["enabledMcpjsonServers"] == ["memory", "ace"]
    assert new["disabledMcpjsonServers"] == ["x"]  # installing is the user's approval
    assert new["permissions"]["allow"][0] == "Bash(npm test:*)" and len(new["permissions"]["allow"]) == 5

    # Switching writes off again rewrites only our entry.
    mcp_config.install(str(project), str(settings))
    assert read(mcp_json)["mcpServers"]["ace"]["args"] == ["-I", "-m", "ace_engine.mcp_server"]

    undone = mcp_config.uninstall(str(project), str(settings))
    assert undone["mcp_changed"] and undone["settings_changed"]
    assert read(mcp_json) == mcp_before
    assert read(settings) == {**settings_before, "disabledMcpjsonServers": ["x"]}
    assert not mcp_config.uninstall(str(project), str(settings))["changed"]


def test_uninstall_removes_files_that_held_only_ours(project):
    mcp_config.install(str(project), str(settings_of(project)))
    mcp_config.uninstall(str(project), str(settings_of(project)))
    assert not (project / ".mcp.json").exists() and not settings_of(project).exists()
    assert not list(project.rglob("*.ace-backup"))


@pytest.mark.parametrize("where, content, message", [
    ("mcp", "{not json", "not valid JSON"),
    ("mcp", "[1, 2]", "the top level must be a JSON object"),
    ("mcp", '{"mcpServers": []}', '"mcpServers" must be a JSON object'),
    ("mcp", json.dumps({"mcpServers": {"ace": OTHER_SERVER}}), "an MCP server named `ace` that is not ace-engine's"),
    ("settings", '{"enabledMcpjsonServers": "ace"}', '"enabledMcpjsonServers" must be a JSON list'),
    ("settings", '{"permissions": {"allow": "all"}}', '"permissions.allow" must be a list'),
])
def test_unusable_files_are_refused_and_nothing_is_written(project, where, content, message):
    settings = settings_of(project)
    settings.parent.mkdir()
    mcp_json = project / ".mcp.json"
    files = {"mcp": mcp_json, "settings": settings}
    files[where].write_text(content)
    before = {p: p.read_text() if p.exists() else None for p in files.values()}
    with pytest.raises(SettingsError, match=message):
        mcp_config.install(str(project), str(settings))
    assert {p: p.read_text() if p.exists() else None for p in files.values()} == before
    assert not list(project.rglob("*.ace-backup"))


def test_is_ours_knows_every_way_the_server_is_started():
    assert mcp_config.is_ours(mcp_config.server_entry())
    assert mcp_config.is_ours({"command": "/usr/local/bin/ace", "args": ["mcp", "--allow-writes"]})
    assert mcp_config.is_ours({"command": "${ACE_PYTHON:-python3}", "args": ["-I", "${CLAUDE_PLUGIN_ROOT}/bin/ace_mcp.py"]})
    assert not mcp_config.is_ours(OTHER_SERVER)
    assert not mcp_config.is_ours("ace")


def test_the_written_entry_starts_a_working_server(project, ace_home):
    """The exact command line of `.mcp.json` (isolated interpreter, `-m ace_engine.mcp_server`)
    speaks MCP from the project directory, with PYTHONPATH pointing at a trap."""
    pytest.importorskip("mcp", reason="the MCP server needs the `mcp` package")
    import anyio
    from mcp import ClientSession, StdioServerParameters, stdio_client

    mcp_config.install(str(project), str(settings_of(project)))
    entry = read(project / ".mcp.json")["mcpServers"]["ace"]
    trap = project / "trap"
    (trap / "ace_engine").mkdir(parents=True)
    (trap / "ace_engine" / "__init__.py").write_text("raise SystemExit('the project environment reached the server')")

    async def go() -> list[str]:
        params = StdioServerParameters(command=entry["command"], args=entry["args"], cwd=str(project),
                                       env={**os.environ, "PYTHONPATH": str(trap)})
        async with stdio_client(params) as (r, w), ClientSession(r, w) as client:
            await client.initialize()
            return [t.name for t in (await client.list_tools()).tools]

    assert anyio.run(go) == list(mcp_config.READ_TOOLS)


def test_statusline_command_runs_the_status_line(tmp_path, ace_home):
    command = mcp_config.statusline_command()["command"]
    proc = subprocess.run(command, shell=True, input=json.dumps({"session_id": "s1", "cwd": str(tmp_path)}),
                          capture_output=True, text=True, timeout=30, cwd=tmp_path)
    assert proc.returncode == 0 and proc.stdout == "ace · nothing captured yet\n", proc


REPO = Path(__file__).resolve().parents[1]
LAUNCHER = REPO / "bin" / "ace_mcp.py"


def test_the_plugin_registers_its_launcher():
    plugin = json.loads((REPO / ".claude-plugin" / "plugin.json").read_text())
    entry = plugin["mcpServers"]["ace"]
    assert entry == {"command": "${ACE_PYTHON:-python3}", "args": ["-I", "${CLAUDE_PLUGIN_ROOT}/bin/ace_mcp.py"]}
    assert mcp_config.is_ours(entry) and LAUNCHER.is_file()


def test_plugin_launcher_without_the_sdk_falls_back_to_ace_or_says_what_to_install(tmp_path):
    # `-S`: no site-packages, so no `mcp` — a bare system Python as the plugin may find it.
    proc = subprocess.run([sys.executable, "-I", "-S", str(LAUNCHER), "--allow-writes"], capture_output=True, text=True,
                          env={"PATH": str(tmp_path)}, timeout=30)
    assert proc.returncode == 1 and proc.stdout == ""
    assert "pip install 'mcp>=2.3,<3'" in proc.stderr and "ACE_PYTHON" in proc.stderr
    fake = tmp_path / "ace"
    fake.write_text("#!/bin/sh\necho \"installed ace: $*\"\n")
    fake.chmod(0o755)
    proc = subprocess.run([sys.executable, "-I", "-S", str(LAUNCHER), "--allow-writes"], capture_output=True, text=True,
                          env={"PATH": str(tmp_path)}, timeout=30)
    assert proc.returncode == 0 and proc.stdout == "installed ace: mcp --allow-writes\n", proc


def test_statusline_is_set_unless_the_user_has_one(project):
    settings = settings_of(project)
    first = mcp_config.install_statusline(str(settings), python="/opt/py/bin/python3")
    assert first["changed"] and read(settings) == {"statusLine": {
        "type": "command", "command": "/opt/py/bin/python3 -I -m ace_engine.integrations.statusline"}}
    assert not mcp_config.install_statusline(str(settings), python="/opt/py/bin/python3")["changed"]
    assert mcp_config.uninstall_statusline(str(settings))["changed"] and not settings.exists()

    own = {"type": "command", "command": "~/.claude/my-status.sh"}
    settings.parent.mkdir(exist_ok=True)
    settings.write_text(json.dumps({"statusLine": own, "model": "opus"}))
    kept = mcp_config.install_statusline(str(settings))
    assert not kept["changed"] and kept["kept"] == own and read(settings)["statusLine"] == own
    assert not mcp_config.uninstall_statusline(str(settings))["changed"]
    assert read(settings) == {"statusLine": own, "model": "opus"}


# -- through the CLI: no server that cannot start; uninstall leaves no approval behind ------------


def _ace(*args, cwd, env=None):
    from conftest import ace

    return ace(*args, cwd=cwd, env=env, process=True)


def test_install_mcp_refuses_an_interpreter_without_the_sdk_and_writes_nothing(project, ace_home, tmp_path):
    bare = tmp_path / "bare-venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(bare)], check=True)
    python = str(bare / "bin" / "python")
    result = _ace("install", "--mcp", "--python", python, cwd=project)
    assert result.returncode == 1
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "`mcp` package is not installed" in lines[0], result.stderr
    assert f"uv pip install --python {python} 'mcp" in lines[0] and "nothing was changed" in lines[0]  # no pip there
    assert not (project / ".mcp.json").exists() and not (project / ".claude").exists()
    assert mcp_config.sdk_problem(python) == "the `mcp` package is not installed"


def test_sdk_problem_is_none_where_the_sdk_is_installed():
    pytest.importorskip("mcp")
    assert mcp_config.sdk_problem() is None and mcp_config.sdk_problem(sys.executable) is None


@pytest.mark.parametrize("installed_in, removed_with", [([], ["--local"]), (["--local"], []), ([], [])])
def test_uninstall_takes_the_approval_out_of_every_project_settings_file(project, ace_home, installed_in,
                                                                          removed_with):
    """`ace install --mcp` in one scope, `ace uninstall` in another (the issue: `--local` removed the
    server from .mcp.json while .claude/settings.json still approved it): no file approves a server
    that is gone, other keys stay, and doctor has nothing to say about MCP."""
    pytest.importorskip("mcp")
    shared = project / ".claude" / "settings.json"
    shared.parent.mkdir()
    shared.write_text(json.dumps({"model": "opus", "enabledMcpjsonServers": ["memory"]}))
    assert _ace("install", "--mcp", *installed_in, cwd=project).returncode == 0
    assert _ace("install", *removed_with, cwd=project).returncode == 0
    result = _ace("uninstall", *removed_with, "--json", cwd=project)
    assert result.returncode == 0, result.stderr
    assert not (project / ".mcp.json").exists()
    for path in (shared, project / ".claude" / "settings.local.json"):
        if path.exists():
            data = read(path)
            assert "ace" not in data.get("enabledMcpjsonServers", []), path
            assert not any(rule in mcp_config.ALLOW for rule in data.get("permissions", {}).get("allow", [])), path
    assert read(shared)["model"] == "opus" and read(shared)["enabledMcpjsonServers"] == ["memory"]
    report = json.loads(_ace("doctor", "--json", cwd=project).stdout)
    assert not [c for c in report["checks"] if c["check"].startswith("mcp")], report


def test_doctor_checks_the_registered_server(project, ace_home):
    pytest.importorskip("mcp")
    assert _ace("install", "--mcp", cwd=project).returncode == 0
    checks = {c["check"]: c for c in json.loads(_ace("doctor", "--json", cwd=project).stdout)["checks"]}
    assert checks["mcp"]["status"] == "ok" and sys.executable in checks["mcp"]["detail"]
    # Disabled in the local settings: a warning naming the way to approve it again.
    (project / ".claude" / "settings.local.json").write_text(json.dumps({"disabledMcpjsonServers": ["ace"]}))
    checks = {c["check"]: c for c in json.loads(_ace("doctor", "--json", cwd=project).stdout)["checks"]}
    assert checks["mcp approval"]["status"] == "warn" and "`ace install --mcp --local`" in checks["mcp approval"]["fix"]
    assert _ace("install", "--mcp", "--local", cwd=project).returncode == 0
    checks = {c["check"]: c for c in json.loads(_ace("doctor", "--json", cwd=project).stdout)["checks"]}
    assert "mcp approval" not in checks


def test_a_foreign_ace_server_in_mcp_json_is_never_started_by_doctor(project, ace_home, tmp_path):
    marker = tmp_path / "ran"
    (project / ".mcp.json").write_text(json.dumps({"mcpServers": {"ace": {
        "command": "/bin/sh", "args": ["-c", f"touch {marker}", "-m", "ace_engine.mcp_server"]}}}))
    checks = {c["check"]: c for c in json.loads(_ace("doctor", "--json", cwd=project).stdout)["checks"]}
    assert checks["mcp"]["status"] == "warn" and "not checked" in checks["mcp"]["detail"]
    assert not marker.exists()
