"""Lessons that don't pay are retired (issue 37): shown in many sessions, their failure comes back as
often with them as in the holdout without them. The curator's prune step archives them with that
reason in their history; a lesson that pays stays. Real store, real curator, sessions written
through the capture path."""

import time

from ace_engine.core import config
from ace_engine.core.project import identify
from ace_engine.experiment import retire
from ace_engine.experiment.arms import INJECT
from ace_engine.learning.curator import Curator
from ace_engine.playbook.playbook import Playbook
from ace_engine.store.sqlite import SQLiteStore
from test_experiment_report import SIGNATURE, _write_sessions

OTHER = "TypeError: unsupported operand type(s) for +: 'int' and 'str'"


def _row(shown=12, n_with=12, k_with=6, n_without=12, k_without=6):
    return {"id": "ctx-a", "shown": shown, "n_with": n_with, "recurred_with": k_with, "n_without": n_without,
            "recurred_without": k_without}


def test_only_a_lesson_shown_often_whose_failure_comes_back_as_often_is_unpaid():
    [(lesson_id, reason)] = retire.unpaid([_row()])
    assert lesson_id == "ctx-a" and "6 of 12 sessions with it and 6 of 12 held out" in reason
    assert retire.unpaid([_row(k_with=2, k_without=8)]) == [], "it pays"
    assert retire.unpaid([_row(shown=4)]) == [], "not shown often enough to tell"
    assert retire.unpaid([_row(n_without=5, k_without=2)]) == [], "too few held-out sessions"
    assert retire.unpaid([_row(k_with=0, k_without=0)]) == [], "a failure that never happens says nothing"


def test_the_curator_retires_what_does_not_pay_and_keeps_what_does(ace_home, git_project):
    with SQLiteStore() as store:
        pb = Playbook(store, identify(str(git_project)))
        pays, _ = pb.add(f"Run `pip install -e .` before `python -m pytest -q`: without it, {SIGNATURE}.",
                         "strategies_and_hard_rules")
        idle, _ = pb.add(f"Cast the count with int() before adding it to a string: {OTHER}.",
                         "troubleshooting_and_pitfalls")

    def recur(k, arm):  # session k of its arm: the first covered 2 of 12 with vs 10 of 12 without, the other 6 and 6
        n = k // 2
        return ([SIGNATURE] if n < (2 if arm == INJECT else 10) else []) + ([OTHER] if n % 2 else [])

    _write_sessions(str(git_project), [INJECT, "holdout"] * 12, recur, shown=[pays["id"], idle["id"]])
    with SQLiteStore() as store:
        pb = Playbook(store, identify(str(git_project)))
        stats = Curator(pb, config.DEFAULTS).curate({"candidates": [], "tags": []}, {"task": "t", "trajectory": []})
        assert stats["pruned"] == 1
        assert store.get_bullet(idle["id"])["status"] == "archived"
        assert store.get_bullet(pays["id"])["status"] == "active"
        [change] = [c for c in store.changes(idle["id"]) if c["op"] == "REMOVE"]
        assert change["reason"].startswith("does not pay: shown in 12 sessions") and "6 of 12" in change["reason"]
        # Checked once a day: the next curation does not read every session again.
        assert retire.check(store, pb.project_id, time.time()) == []
