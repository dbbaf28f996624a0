"""Issue 21's "also seen" list, each with the behaviour a new user expects: a clear line, not a
silent surprise or a traceback. (Deeply nested `ace import`: tests/test_transfer.py; a file as
ACE_HOME: tests/security/test_ace_home.py.)"""

import pytest

from ace_engine.retrieval import semantic
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
