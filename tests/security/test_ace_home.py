"""Attacks on where ace-engine keeps its data: a shared or foreign `ACE_HOME`, and symlinks
planted inside it. Real hook processes, the real CLI, real files; each test fails at 2f8a758.

- a world-writable shared directory (like /tmp) as ACE_HOME was chmodded 0700 and used;
- an ACE_HOME owned by another user was used silently;
- `ace.db`, its `-wal`, the log file and the `logs/` directory were followed through symlinks,
  so whoever could plant a link made ace-engine write into a file of their choice.
"""

import os
import subprocess

import pytest

from conftest import ace as run_ace
from hookutil import check_answer, payload, run_hook


def ace(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return run_ace(*args, env=env, process=True, timeout=60)


def _tool(cwd: str, n: int) -> dict:
    return payload("PostToolUse", cwd, session_id="s-home", tool_name="Bash", tool_use_id=f"h-{n}",
                   tool_input={"command": f"echo {n}"}, tool_response={"stdout": str(n), "stderr": ""})


def test_shared_world_writable_home_is_not_chmodded_and_is_refused(tmp_path, monkeypatch):
    shared = tmp_path / "shared-tmp"
    shared.mkdir()
    os.chmod(shared, 0o1777)  # what /tmp looks like
    monkeypatch.setenv("ACE_HOME", str(shared))
    code, out, _, _ = run_hook("SessionStart", payload("SessionStart", str(tmp_path), source="startup"))
    assert code == 0
    answer = check_answer("SessionStart", out)
    assert os.stat(shared).st_mode & 0o7777 == 0o1777, "a directory ace-engine did not create was chmodded"
    assert not (shared / "ace.db").exists(), "data was kept in a directory others can write to"
    assert answer and "unsafe" in answer["systemMessage"], "the hook degrades and says why"
    proc = ace("sessions")
    assert proc.returncode != 0
    assert "ACE_HOME" in proc.stdout + proc.stderr, "the CLI fails naming the fix"
    assert os.stat(shared).st_mode & 0o7777 == 0o1777


def test_home_owned_by_another_user_is_refused(tmp_path, monkeypatch):
    if os.geteuid() != 0:
        pytest.skip("needs root to chown a directory to another user")
    foreign = tmp_path / "someone-else"
    foreign.mkdir(mode=0o700)
    os.chown(foreign, 65534, 65534)  # nobody
    monkeypatch.setenv("ACE_HOME", str(foreign))
    code, out, _, _ = run_hook("PostToolUse", _tool(str(tmp_path), 1))
    assert (code, out) == (0, "")
    assert not (foreign / "ace.db").exists(), "another user's directory was used"
    proc = ace("sessions")
    assert proc.returncode != 0 and "not by you" in proc.stdout + proc.stderr


def test_symlinked_store_file_is_not_followed(tmp_path, monkeypatch):
    # (SQLite itself already refuses a symlinked -wal or -shm; the database file it follows.)
    name = "ace.db"
    home = tmp_path / "home"
    home.mkdir(mode=0o700)
    monkeypatch.setenv("ACE_HOME", str(home))
    victim = tmp_path / "victim"
    victim.write_bytes(b"")
    os.symlink(victim, home / name)
    code, out, _, _ = run_hook("PostToolUse", _tool(str(tmp_path), 1))
    assert (code, out) == (0, "")
    assert victim.read_bytes() == b"", f"ace-engine wrote through the {name} symlink"
    assert os.path.islink(home / name)
    proc = ace("sessions")
    assert proc.returncode != 0 and "symlink" in proc.stdout + proc.stderr


def test_symlinked_log_file_is_not_followed(tmp_path, monkeypatch):
    home = tmp_path / "home"
    (home / "logs").mkdir(parents=True, mode=0o700)
    os.chmod(home, 0o700)
    monkeypatch.setenv("ACE_HOME", str(home))
    victim = tmp_path / "victim.txt"
    victim.write_text("precious\n")
    os.symlink(victim, home / "logs" / "ace.log")
    run_hook("PostToolUse", b"{not json")  # logs a warning
    assert victim.read_text() == "precious\n", "the log was written through a symlink"


def test_symlinked_directory_inside_home_is_not_followed(tmp_path, monkeypatch):
    home = tmp_path / "home"
    home.mkdir(mode=0o700)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    os.symlink(elsewhere, home / "logs")
    monkeypatch.setenv("ACE_HOME", str(home))
    run_hook("PostToolUse", b"{not json")
    assert os.listdir(elsewhere) == [], "ace-engine followed a symlinked directory inside ACE_HOME"


@pytest.mark.parametrize("where", ["home", "below"])
def test_a_file_given_as_ace_home_is_named_with_the_right_fix(tmp_path, monkeypatch, where):
    """`ACE_HOME=/etc/passwd` (issue 21) was told to "remove it": a regular file is the user's
    (or the system's), never ours to remove. Say it is a file and how to point ace-engine elsewhere."""
    passwd = tmp_path / "passwd"
    passwd.write_text("root:x:0:0:root:/root:/bin/bash\n")
    monkeypatch.setenv("ACE_HOME", str(passwd if where == "home" else passwd / "data"))
    proc = ace("sessions")
    text = proc.stdout + proc.stderr
    assert proc.returncode == 1 and text.count("\n") == 1, text
    assert "Traceback" not in text and "symlink" not in text and "Remove it" not in text, text
    assert "Set ACE_HOME to a directory you own" in text
    assert ("is a file, not a directory" if where == "home" else "a part of its path is a file") in text
    assert passwd.read_text() == "root:x:0:0:root:/root:/bin/bash\n"


def test_a_file_where_a_directory_inside_ace_home_belongs_is_kept(tmp_path, monkeypatch):
    from ace_engine.core import paths

    home = tmp_path / "home"
    home.mkdir(mode=0o700)
    (home / "logs").write_text("my notes\n")
    monkeypatch.setenv("ACE_HOME", str(home))
    with pytest.raises(paths.UnsafeDirError) as err:
        paths.ensure_private_dir(str(home / "logs"))
    assert "is a file, not a directory" in str(err.value) and "Move that file elsewhere" in str(err.value)
    assert "symlink" not in str(err.value)
    assert (home / "logs").read_text() == "my notes\n"
