"""`ace` commands on inputs a new user meets (a search with no vectors, a transcript learned from,
a server that does not answer, an unreadable import, a FIFO): each ends with a clear line, not a
silent surprise or a traceback. (Deeply nested `ace import`: tests/test_transfer.py; a file as
ACE_HOME: tests/security/test_ace_home.py.)"""

import json
from pathlib import Path

import pytest

from ace_engine.embed import semantic
from conftest import ace


def test_semantic_search_says_when_lessons_have_no_vector_for_the_chosen_embedder(ace_home, git_project):
    if not semantic.available():
        pytest.skip("the semantic extra (numpy and the MiniLM package) is not installed")
    assert ace("add", "Run pytest from the repository root so conftest.py is found", "--section", "strategies",
               cwd=git_project).exit_code == 0
    assert ace("config", "set", "retrieval.embedder", "minilm", cwd=git_project).exit_code == 0
    before = ace("search", "pytest root", "--mode", "semantic", cwd=git_project)
    assert before.exit_code == 0
    assert "1 lesson has no vector yet for minilm" in before.stderr and "run `ace embed`" in before.stderr
    quiet = ace("search", "pytest root", "--mode", "semantic", "--json", cwd=git_project)
    assert quiet.stderr == "", "--json keeps stderr clean for tools"
    assert ace("embed", cwd=git_project).exit_code == 0
    after = ace("search", "pytest root", "--mode", "semantic", cwd=git_project)
    assert after.exit_code == 0 and "no vector" not in after.stderr and "cosine" in after.stdout


TRANSCRIPT = Path(__file__).parent / "fixtures" / "transcripts" / "5b2f6c1e-3d4a-4b8e-9f10-2a3b4c5d6e7f.jsonl"


def test_a_session_learned_from_its_transcript_is_one_of_the_projects_sessions_everywhere(ace_home, git_project):
    from ace_engine.mcp_server import tools
    from ace_engine.mcp_server.workspace import Workspace

    learned = ace("learn", "--transcript", TRANSCRIPT, "--project", git_project, "--json", cwd=git_project)
    assert learned.exit_code == 0, learned.output
    sid = "5b2f6c1e-3d4a-4b8e-9f10-2a3b4c5d6e7f"
    listed = json.loads(ace("sessions", "--project", git_project, "--json").output)["sessions"]
    assert [(s["session_id"], s["origin"], s["status"]) for s in listed] == [(sid, "transcript", "learned from transcript")]
    assert listed[0]["tool_events"] > 0 and listed[0]["messages"] > 0  # from its summary
    table = ace("sessions", "--project", git_project)
    assert sid in table.output and "learned from transcript" in table.output
    assert sid in ace("sessions").output  # every project's
    recent = json.loads(ace("recent", "--project", git_project, "--json").output)["sessions"]
    assert [s["session_id"] for s in recent] == [sid]
    ws = Workspace(str(git_project))
    try:
        found = tools.call(ws, "search_history", {"query": "slugify"})
        recent_any = tools.call(ws, "search_history", {"query": ""})
        missing = tools.call(ws, "search_history", {"query": "kubernetes"})
        failures = tools.call(ws, "recent_failures", {})
    finally:
        ws.close()
    for answer in (found, recent_any):
        assert f"session {sid[:8]} · learned from its transcript" in answer and "slugify" in answer, answer
        assert "1 session learned from a transcript" in answer
    assert missing.startswith("Nothing in this project's captured sessions matches")
    assert "pytest" in failures  # it always showed them: the two now agree


def test_remote_set_to_a_server_that_does_not_answer_says_nothing_was_bound(ace_home, git_project):
    import socket

    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    result = ace("remote", "set", f"http://127.0.0.1:{port}", "--token", "t" * 40, "--dir", git_project)
    assert result.exit_code == 1
    assert f"cannot reach http://127.0.0.1:{port} (the health check" in result.stderr
    assert "`ace remote set` changed nothing" in result.stderr
    assert "wait for the next push" not in result.stderr, "nothing was bound, so nothing waits for a push"
    assert result.stderr.count("\n") == 1
    status = ace("remote", "status", "--offline", "--dir", git_project)
    assert "ace remote set" in status.output + status.stderr  # still not bound


def test_an_import_with_an_integer_too_long_to_read_is_one_line(ace_home, git_project, tmp_path):
    doc = tmp_path / "big.json"
    doc.write_text('[{"content": "Run make test", "section": "strategies", "helpful": ' + "9" * 5000 + "}]")
    out = ace("import", doc, cwd=git_project)
    assert out.exit_code == 1 and "Traceback" not in out.output, out.output
    assert "not readable as JSON" in out.output and "nothing was imported" in out.output


def test_learning_from_a_fifo_is_refused_not_a_hang(ace_home, git_project, tmp_path):
    import os

    fifo = tmp_path / "session.jsonl"
    os.mkfifo(fifo)
    out = ace("learn", "--transcript", fifo, "--project", git_project, cwd=git_project)
    assert out.exit_code == 1 and "not a regular file" in out.output, out.output
