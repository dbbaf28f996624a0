"""The tests' PostgreSQL setting, as scripts/test.sh documents it: `ACE_TEST_PG` is a URL or the short
form host:port[/database]; a value that is neither stops the run with one error naming it and the
forms, instead of every PostgreSQL test skipping as "unreachable"."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

import throwaway_pg

TESTS = Path(__file__).resolve().parent


@pytest.mark.parametrize(("value", "url"), [
    ("127.0.0.1:5432", "postgresql://postgres@127.0.0.1:5432/test"),
    ("localhost", "postgresql://postgres@localhost:5432/test"),
    ("db.internal:6543/ace", "postgresql://postgres@db.internal:6543/ace"),
    ("[::1]:5433", "postgresql://postgres@[::1]:5433/test"),
    ("postgresql://me@127.0.0.1:5432/test", "postgresql://me@127.0.0.1:5432/test"),
    ("postgres://me:pw@h/db?sslmode=disable", "postgres://me:pw@h/db?sslmode=disable"),
])
def test_a_url_or_host_port_is_a_url(value, url):
    assert throwaway_pg.as_url(value) == url


@pytest.mark.parametrize("value", ["127.0.0.1:99999", "host:port", "mysql://h/db", "two words", "postgresql://"])
def test_anything_else_is_refused_naming_the_value_and_the_forms(value):
    with pytest.raises(throwaway_pg.BadSetting) as err:
        throwaway_pg.as_url(value)
    assert repr(value.strip()) in str(err.value) and "host:port" in str(err.value)


def test_an_unparsable_setting_stops_the_run_with_that_error(tmp_path):
    (tmp_path / "test_nothing.py").write_text("def test_nothing():\n    pass\n")
    env = {**os.environ, "ACE_TEST_PG": "host:port"}
    run = subprocess.run([sys.executable, "-m", "pytest", "-q", "-n", "0", "-p", "no:cacheprovider",
                          "--rootdir", str(TESTS), "-c", str(TESTS.parent / "pyproject.toml"),
                          "--confcutdir", str(TESTS), str(TESTS / "test_test_pg_setting.py::test_a_url_or_host_port_is_a_url")],
                         cwd=TESTS.parent, env=env, capture_output=True, text=True, timeout=300)
    assert run.returncode != 0
    assert "ACE_TEST_PG='host:port' could not be parsed" in run.stdout + run.stderr, run.stdout + run.stderr
