import json
import os
import subprocess

import pytest

from ace_engine.core.project import identify, normalize_remote
from ace_engine.hooks.engine import resolve_cwd


@pytest.mark.parametrize("url,expected", [
    ("git@github.com:Acme/Widget.git", "github.com/Acme/Widget"),
    ("https://github.com/Acme/Widget.git", "github.com/Acme/Widget"),
    ("https://user:s3cret@GitHub.com/Acme/Widget/", "github.com/Acme/Widget"),
    ("ssh://git@gitlab.example.com:2222/group/sub/repo.git", "gitlab.example.com/group/sub/repo"),
    ("/srv/git/repo.git", "/srv/git/repo"),
])
def test_normalize_remote(url, expected):
    assert normalize_remote(url) == expected


def test_identify_git_project_from_subdir(git_project):
    sub = git_project / "a" / "b"
    sub.mkdir(parents=True)
    project = identify(str(sub))
    assert project.root == str(git_project)
    assert project.remote == "github.com/Acme/Widget"
    assert project.key == "git:github.com/Acme/Widget" and project.name == "Widget"


def test_identify_worktree_shares_the_main_repos_remote(git_project, tmp_path):
    subprocess.run(["git", "-C", str(git_project), "-c", "user.email=a@b", "-c", "user.name=a",
                    "commit", "-q", "--allow-empty", "-m", "init"], check=True)
    worktree = tmp_path / "wt"
    subprocess.run(["git", "-C", str(git_project), "worktree", "add", "-q", str(worktree)], check=True)
    project = identify(str(worktree))
    assert project.root == str(worktree) and project.remote == "github.com/Acme/Widget"


def test_identify_plain_directory(tmp_path):
    project = identify(str(tmp_path))
    assert project.remote is None and project.key == f"path:{tmp_path}"


def test_cwd_resolution_order(tmp_path, monkeypatch):
    real = tmp_path / "real"
    real.mkdir()
    transcript = tmp_path / "t.jsonl"
    transcript.write_text(json.dumps({"type": "summary"}) + "\n" + json.dumps({"type": "user", "cwd": str(real)}) + "\n")
    assert resolve_cwd(str(real), None) == str(real)
    assert resolve_cwd("/no/such/dir", str(transcript)) == str(real)
    monkeypatch.setenv("CLAUDE_PROJECT_DIR", str(tmp_path))
    assert resolve_cwd(None, str(tmp_path / "missing.jsonl")) == str(tmp_path)
    monkeypatch.delenv("CLAUDE_PROJECT_DIR")
    monkeypatch.chdir(real)
    assert resolve_cwd(None, None) == os.getcwd()


def test_a_deleted_worktree_still_files_under_its_main_worktree(ace_home, tmp_path):
    """A project rebuilt from its stored row keeps the stored key, even when the linked worktree
    it was recorded from is gone (its `.git` file no longer says where the main worktree is)."""
    from ace_engine.learning.pipeline import project_for
    from ace_engine.store.sqlite import SQLiteStore

    main, gone = tmp_path / "repo", tmp_path / "repo-wt"
    with SQLiteStore() as store:
        pid = store.ensure_project(f"path:{main}", str(gone), None, "repo", 1.0)
        project = project_for(store, pid)
    assert project is not None and project.key == f"path:{main}" and project.root == str(gone)
    assert project.name == "repo" and project.main_root == str(main)
