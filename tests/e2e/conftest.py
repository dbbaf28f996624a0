"""Fixtures for the end-to-end tests (real Claude Code CLI, scripted model server)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from .claude_cli import ClaudeCliUnavailable, ensure_claude_cli
from .model_server import ScriptedModelServer

_E2E_DIR = Path(__file__).parent.resolve()


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if _E2E_DIR in Path(str(item.fspath)).resolve().parents:
            item.add_marker(pytest.mark.e2e)


@pytest.fixture(scope="session")
def claude_bin() -> Path:
    """The pinned Claude Code binary; installs it on first use.  Fails (never skips) if absent."""
    try:
        return ensure_claude_cli()
    except ClaudeCliUnavailable as exc:
        problem = str(exc)
    pytest.fail(f"Claude Code CLI unavailable for the e2e tests:\n{problem}", pytrace=False)


@pytest.fixture
def model_server():
    """A started :class:`ScriptedModelServer` on 127.0.0.1 (stopped after the test)."""
    server = ScriptedModelServer().start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def claude_home(tmp_path: Path) -> Path:
    """A throw-away HOME for Claude Code (workspace trust is written by run_claude)."""
    home = tmp_path / "home"
    home.mkdir()
    return home


def make_git_project(path: Path, files: dict[str, str] | None = None) -> Path:
    """Create a small git repository with one commit (git identity set locally)."""
    path.mkdir(parents=True, exist_ok=True)
    for name, content in (files or {"README.md": "# demo project\n"}).items():
        target = path / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(content)
    git = ["git", "-C", str(path), "-c", "user.name=e2e", "-c", "user.email=e2e@example.invalid",
           "-c", "init.defaultBranch=main", "-c", "commit.gpgsign=false"]
    subprocess.run([*git, "init", "-q"], check=True, capture_output=True)
    subprocess.run([*git, "add", "-A"], check=True, capture_output=True)
    subprocess.run([*git, "commit", "-q", "-m", "initial"], check=True, capture_output=True)
    return path.resolve()


@pytest.fixture
def project_dir(tmp_path: Path) -> Path:
    """A fresh git project with a README and a small source file."""
    return make_git_project(
        tmp_path / "project",
        {"README.md": "# demo project\n", "app.py": "def greet():\n    return 'hello'\n"},
    )
