"""One playbook per repository, shared across agents (issue 25): a lesson says which agent's
session taught it and which confirmed it (`ace show`, the dashboard), sessions and summaries say
which agent ran them, and every agent on the repository is given the lesson (nothing filters by
agent). Sessions come from `agent_sessions` (Codex's and Gemini's formats from their source) and
`claude_mem_db` (claude-mem's schema from its source)."""

import json
import os
import shutil
import subprocess

import pytest

from agent_sessions import codex_fix_session, gemini_fix_session
from claude_mem_db import ClaudeMemDB
from conftest import ace as run_ace
from learnutil import Session, bullets, rows


def fix_lesson(learned):
    """The lesson both sessions teach: the cause of the failing test and its fix."""
    (lesson,) = [b for c, b in learned.items() if "division by zero" in c]
    return lesson


def ace(*args, cwd=None, env=None):
    proc = run_ace(*args, cwd=cwd, env=env, process=True)
    return proc.returncode, proc.stdout, proc.stderr


@pytest.fixture
def calc(tmp_path):
    root = tmp_path / "calc"
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    return root


@pytest.fixture(scope="module")
def _learned_once(tmp_path_factory):
    """The two sessions learned once for the file (two `ace learn` processes, the costly part): the
    repository and the store they made. Each test gets its own copy of the store (`learned`)."""
    base = tmp_path_factory.mktemp("learned")
    root = base / "calc"
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    home = base / "ace-home"
    env = {key: None for key in os.environ if key.startswith("ACE_") and key not in ("ACE_TEST_CACHE", "ACE_PYTHON")}
    env |= {"ACE_HOME": str(home), "HOME": str(base / "home"), "XDG_CONFIG_HOME": str(base / "home" / ".config"),
            "XDG_DATA_HOME": str(base / "home" / ".local" / "share"), "XDG_CACHE_HOME": str(base / "home" / ".cache"),
            "XDG_STATE_HOME": str(base / "home" / ".local" / "state")}
    for session in (codex_fix_session(root, "019a-codex"), gemini_fix_session(root, "gem-next")):
        path = session.write(base / f"{session.session_id}.jsonl")
        code, out, err = ace("learn", "--transcript", path, "--heuristic", cwd=root, env=env)
        assert code == 0, err
    return root, home


@pytest.fixture
def learned_calc(_learned_once):
    """The repository the two sessions ran in (shared by the tests; they write only to their store)."""
    return _learned_once[0]


@pytest.fixture
def learned(_learned_once, ace_home):
    """A lesson learned in a Codex session, confirmed in a Gemini session the next morning: this
    test's own copy of the store, in its ACE_HOME."""
    shutil.copytree(_learned_once[1], ace_home)
    return {b["content"]: b for b in bullets(ace_home)}


def test_a_lesson_says_which_agent_taught_it_and_which_confirmed_it(learned, learned_calc):
    calc = learned_calc
    lesson = fix_lesson(learned)
    assert lesson["agent"] == "codex" and lesson["status"] == "active"
    assert json.loads(lesson["provenance"])["sessions"] == ["019a-codex", "gem-next"]
    code, out, err = ace("show", lesson["id"], "--json", cwd=calc)
    assert code == 0, err
    assert json.loads(out)["agents"] == ["codex", "gemini"]
    code, out, err = ace("show", lesson["id"], cwd=calc)
    assert "Codex CLI (also confirmed in: Gemini CLI)" in out
    assert not any("Output: " in content for content in learned), "the shell tool's frame is not the output"


def test_a_lesson_from_codex_reaches_a_claude_code_session(learned, learned_calc):
    calc = learned_calc
    # The fix lesson: the digest offers failures recent sessions met.
    lesson = fix_lesson(learned)
    assert lesson["agent"] == "codex"
    answer = Session(calc, session_id="claude-next").start()
    context = answer["hookSpecificOutput"]["additionalContext"]
    assert lesson["id"] in context and "division by zero" in context


def test_sessions_and_summaries_say_their_agent(ace_home, learned, learned_calc):
    calc = learned_calc
    summaries = rows(ace_home, "SELECT session_id, agent FROM session_summaries ORDER BY session_id")
    assert summaries == [{"session_id": "019a-codex", "agent": "codex"}, {"session_id": "gem-next", "agent": "gemini"}]
    code, out, err = ace("sessions", "--json", cwd=calc)
    assert code == 0, err
    assert {s["session_id"]: s["agent"] for s in json.loads(out)["sessions"]} == {
        "019a-codex": "codex", "gem-next": "gemini"}
    code, out, err = ace("sessions", cwd=calc)
    assert "Codex CLI" in out and "Gemini CLI" in out


def test_the_dashboard_shows_the_agent_of_a_lesson_and_of_a_session(ace_home, learned, learned_calc, tmp_path):
    calc = learned_calc
    pytest.importorskip("jinja2")
    import httpx

    from ace_engine.store.views_sql import ViewsSQLiteStore
    from ace_engine.ui.app import create_app
    from test_ui import TOKEN, serve, sign_in

    db = ClaudeMemDB(str(tmp_path / "claude-mem.db"))
    db.session("codex-imported", "mem-9", "calc", platform="codex", prompt="speed up the parser")
    db.close()
    assert ace("import", "--from", "claude-mem", tmp_path / "claude-mem.db", cwd=calc)[0] == 0
    project_id = rows(ace_home, "SELECT id FROM projects")[0]["id"]
    lesson = fix_lesson(learned)
    with serve(create_app(lambda: ViewsSQLiteStore(), token=TOKEN)) as (base, _), \
            httpx.Client(base_url=base, timeout=20) as client:
        sign_in(client)
        page = client.get(f"/lessons/{lesson['id']}").text
        assert "learned from Codex CLI (also confirmed in Gemini CLI)" in page
        listing = client.get(f"/sessions?project={project_id}").text
        assert "Codex CLI</span> (imported from claude-mem)" in listing
        assert "Codex CLI" in client.get("/sessions/codex-imported").text


@pytest.mark.parametrize("agent,key", [("codex", "codex-0.169.0"), ("gemini", "gemini-cli-0.61.0"),
                                       ("claude", None)])
def test_a_hook_captured_session_records_its_agent(ace_home, calc, agent, key):
    """The hook adapters (`hooks.agents`) say whose hook it is; the session row keeps it."""
    from test_agent_hooks import FIXTURES, real, run

    if key is None:
        Session(calc, session_id="claude-1").start()
        expected = [{"session_id": "claude-1", "agent": None}]  # NULL: Claude Code, as before agents were recorded
    else:
        sample = real(FIXTURES[key]["SessionStart"], calc)
        code, out, err = run(agent, "SessionStart", sample, calc)
        assert code == 0, err
        expected = [{"session_id": sample["session_id"], "agent": agent}]
    assert rows(ace_home, "SELECT session_id, agent FROM sessions") == expected
