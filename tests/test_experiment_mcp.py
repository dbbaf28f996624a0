"""The holdout reaches the MCP server too (issue 37): in a held-out session the agent cannot fetch a
lesson by asking (search_lessons, get_lesson), while its history stays searchable. The real server
process over the real store, as test_mcp_server.py runs it."""

import sqlite3

from ace_engine.experiment.arms import HOLDOUT
from test_mcp_server import run_calls, world  # noqa: F401  (world: the fixture)


def test_a_held_out_session_gets_no_lesson_from_the_mcp_server(world, monkeypatch):  # noqa: F811
    calls = [("search_lessons", {"query": "JWT 401 refresh"}), ("get_lesson", {"id": world["ids"]["jwt"]}),
             ("search_history", {"query": "pytest test_auth"})]
    _, free = run_calls(world["shop"], calls, session_id="mcp-free")
    assert [c.is_error for c in free] == [False, False, False] and world["ids"]["jwt"] in free[0].text
    monkeypatch.setenv("ACE_INJECT_HOLDOUT", "1")  # the user's setting: every session held out
    _, held = run_calls(world["shop"], calls, session_id="mcp-held")
    assert held[0].is_error and held[1].is_error and "held out" in held[0].text, held
    assert world["ids"]["jwt"] not in held[0].text + held[1].text
    assert not held[2].is_error, "the session's own history is not a lesson"
    con = sqlite3.connect(world["ace_home"] / "ace.db")
    try:
        assert con.execute("SELECT arm, hook FROM experiment_arms WHERE session_id='mcp-held'").fetchall() == [
            (HOLDOUT, "mcp")]
    finally:
        con.close()
