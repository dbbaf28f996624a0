"""Outside a git repository: the project is the directory the session was started in, not whichever
subdirectory the agent moved to, and `ace install` says which directory that is."""

import os

from ace_engine.core.project import identify
from conftest import ace


def test_a_session_that_moves_below_its_start_stays_one_project(tmp_path, monkeypatch):
    top = tmp_path / "notes"
    (top / "sub" / "deeper").mkdir(parents=True)
    monkeypatch.setenv("CLAUDE_PROJECT_DIR", str(top))
    assert identify(str(top / "sub" / "deeper")).root == str(top)
    assert identify(str(top / "sub")).key == identify(str(top)).key


def test_a_directory_outside_the_session_start_is_its_own_project(tmp_path, monkeypatch):
    (tmp_path / "a").mkdir()
    (tmp_path / "ab").mkdir()  # a name that merely starts like the session's directory is not inside it
    monkeypatch.setenv("CLAUDE_PROJECT_DIR", str(tmp_path / "a"))
    assert identify(str(tmp_path / "ab")).root == str(tmp_path / "ab")
    monkeypatch.delenv("CLAUDE_PROJECT_DIR")
    assert identify(str(tmp_path / "a")).root == str(tmp_path / "a")


def test_install_outside_git_says_which_directory_is_the_project(ace_home, tmp_path, monkeypatch):
    plain = tmp_path / "plain"
    plain.mkdir()
    monkeypatch.delenv("CLAUDE_PROJECT_DIR", raising=False)
    result = ace("install", "--project", str(plain), "--learn-with", "none", cwd=str(plain))
    text = " ".join(result.output.split())
    assert "is not in a git repository" in text and "start Claude Code here" in text, result.output
    assert str(plain) in result.output.replace("\n", "")
    assert os.path.isfile(plain / ".claude" / "settings.json")
