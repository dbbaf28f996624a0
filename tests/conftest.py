import os
import subprocess
import sys

import pytest

sys.path.insert(0, os.path.dirname(__file__))


@pytest.fixture
def ace_home(tmp_path, monkeypatch):
    """A private ACE_HOME and config dir for one test; the real user's data is never touched."""
    home = tmp_path / "ace-home"
    monkeypatch.setenv("ACE_HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg-config"))
    monkeypatch.delenv("ACE_CONFIG", raising=False)
    for key in list(os.environ):
        if key.startswith("ACE_") and key not in ("ACE_HOME", "ACE_TEST_CACHE", "ACE_PYTHON"):
            monkeypatch.delenv(key)
    return home


@pytest.fixture
def git_project(tmp_path):
    """A small git repository with an origin remote."""
    root = tmp_path / "proj"
    root.mkdir()
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    subprocess.run(["git", "-C", str(root), "remote", "add", "origin", "git@github.com:Acme/Widget.git"], check=True)
    (root / "app.py").write_text("print('hi')\n")
    return root
