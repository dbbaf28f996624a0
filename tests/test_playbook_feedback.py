"""Explicit feedback in prompts: the parser the UserPromptSubmit hook calls, and applying it."""

import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ace_engine.core.project import identify
from ace_engine.playbook.feedback import apply_feedback, parse_feedback
from ace_engine.playbook.playbook import Playbook
from ace_engine.store.sqlite import SQLiteStore
from conftest import examples


@pytest.mark.parametrize("prompt, marks", [
    ("ace: ctx-00012 was wrong", [("ctx-00012", "harmful")]),
    ("ctx-01abc helped", [("ctx-01abc", "helpful")]),
    ("that tip helped", [(None, "helpful")]),
    ("The tip was not helpful, try again", [(None, "harmful")]),
    ("this pattern didn't work", [(None, "harmful")]),
    ("ace: that was useful", [(None, "helpful")]),
    ("ctx-01abc helped but ctx-02def was misleading", [("ctx-01abc", "helpful"), ("ctx-02def", "harmful")]),
    ("ctx-01abc, ctx-02def: both wrong", [("ctx-01abc", "harmful"), ("ctx-02def", "harmful")]),
    ("CTX-01ABCD is outdated. Now fix the login bug.", [("ctx-01abcd", "harmful")]),
    ("That tip about pytest was spot on 👍", [(None, "helpful")]),
    # Not feedback:
    ("fix the test in ctx_utils.py", []),
    ("that helped, now run the tests", []),  # about Claude's work, not a tip
    ("the login test is wrong, fix it", []),
    ("ctx-0abc is not wrong", []),  # a negated negative says too little
    ("add a tip of the day to the homepage", []),
    ("what is ctx-01abc about?", []),
])
def test_parse_feedback(prompt, marks):
    assert parse_feedback(prompt) == marks


@settings(max_examples=examples(500), deadline=None)
@given(st.text(max_size=2000))
def test_the_parser_never_raises(text):
    for mark in parse_feedback(text + " ctx-01abc that tip helped"):  # its time: bench/budgets_bench.py
        assert mark[1] in ("helpful", "harmful")
        assert mark[0] is None or mark[0].startswith("ctx-")


def test_apply_feedback_tags_the_named_and_the_last_shown_bullets_explicitly(ace_home, git_project):
    project = identify(str(git_project))
    with SQLiteStore() as store:
        pb = Playbook(store, project)
        a, _ = pb.add("Run the tests with `python -m pytest -q`.", "strategies")
        b, _ = pb.add("Migrations go in `db/migrations`; generate them with `alembic revision`.", "strategies")
        c, _ = pb.add("The `legacy/` folder is dead code.", "strategies", now=time.time() - 100)
        now = time.time()
        store.record_injections("s-1", pb.project_id, "SessionStart", [(c["id"], 1.0, 1)], now - 10)
        store.record_injections("s-1", pb.project_id, "UserPromptSubmit", [(a["id"], 0.9, 1), (b["id"], 0.7, 2)], now)
        done = apply_feedback(store, project, "s-1", "that tip helped!")
        assert [(d["bullet_id"], d["tag"]) for d in done] == [(a["id"], "helpful"), (b["id"], "helpful")]
        assert store.get_bullet(a["id"])["helpful_explicit"] == 1 and store.get_bullet(c["id"])["helpful_explicit"] == 0
        assert done[0]["confidence"] == 0.7143, "an explicit mark weighs 3: (3 + 2) / (3 + 4)"
        done = apply_feedback(store, project, "s-1", f"ace: {c['id'][:14]} was wrong, and ctx-zzzzzzzz helped")
        assert [(d["bullet_id"], d["tag"]) for d in done] == [(c["id"], "harmful")], "unknown ids are ignored"
        (change,) = [x for x in store.changes(bullet_id=c["id"]) if x["op"] == "TAG"]
        assert change["source"] == "feedback" and change["detail"]["explicit"] is True and change["session_id"] == "s-1"
        assert apply_feedback(store, project, "s-2", "that tip helped") == [], "nothing was shown in s-2"
