"""The real-home guard (tests/conftest.py) fails the very test that touched the user's real data and
names it; the tests after it are judged on their own; the run fails.

Runs a small suite in a child pytest with this conftest, whose "real home" is a temporary directory:
one test writes the real data directory's `ace.db` (what issue 21 saw happen, unnamed), one writes
only its private home, one touches `~/.claude/settings.json`.
"""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent

SUITE = '''
import os
from pathlib import Path

import conftest


def test_a_private_write():
    data = Path(os.environ["XDG_DATA_HOME"]) / "ace-engine"
    data.mkdir(parents=True)
    (data / "ace.db").write_bytes(b"private")


def test_b_writes_the_real_store():
    real = conftest.REAL_USER_PLACES[0]
    real.mkdir(parents=True)
    (real / "ace.db").write_bytes(b"leaked")


def test_c_innocent_after_it():
    assert os.environ["HOME"] != str(conftest._REAL_HOME)


def test_d_touches_claude_settings():
    (conftest._REAL_HOME / ".claude").mkdir(exist_ok=True)
    (conftest._REAL_HOME / ".claude" / "settings.json").write_text("{}")
'''


@pytest.mark.slow  # a whole pytest session in a subprocess (18 s in a loaded 2-core run)
def test_the_guard_names_the_test_that_touched_the_real_home(tmp_path):
    suite = tmp_path / "suite"
    suite.mkdir()
    for name in ("conftest.py", "throwaway_pg.py", "extras.py"):
        shutil.copy(HERE / name, suite / name)
    (suite / "test_leaky.py").write_text(SUITE)
    real_home = tmp_path / "real-home"
    real_home.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("XDG_", "ACE_", "PYTEST_"))}
    env.update(HOME=str(real_home), ACE_TEST_PG="postgresql://postgres@db.example.invalid:5432/test",
               ACE_TEST_CACHE=str(tmp_path / "cache"))
    run = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:xdist",
                          "--rootdir", str(suite), str(suite / "test_leaky.py")],
                         cwd=suite, env=env, capture_output=True, text=True, timeout=300)
    out = run.stdout + run.stderr
    assert run.returncode != 0, out
    assert "test_leaky.py::test_b_writes_the_real_store touched the user's real data" in out, out
    assert str(real_home / ".local" / "share" / "ace-engine" / "ace.db") in out, out
    assert "test_leaky.py::test_d_touches_claude_settings touched the user's real data" in out, out
    assert "ERROR at teardown of test_b_writes_the_real_store" in out, out
    assert "test_a_private_write touched" not in out and "test_c_innocent_after_it touched" not in out, out
    assert "4 passed, 2 errors" in out, out
