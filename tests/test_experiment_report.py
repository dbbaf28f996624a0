"""`ace report` on synthetic sessions with a known effect: the statistics (checked against published
values), the outcomes read from captured events, and the with-vs-without verdicts — an interval
that excludes 0 for a big effect on enough sessions, "not enough sessions yet" on too few, no
verdict either way when there is no effect. Sessions are written through the store's capture
path (real SQLite), their arms as the hooks record them."""

import json
import os
import random
import time

import pytest

from ace_engine.core.project import identify
from ace_engine.experiment import report, stats
from ace_engine.experiment.arms import HOLDOUT, INJECT
from ace_engine.experiment.outcomes import session_outcomes
from ace_engine.playbook.playbook import Playbook
from ace_engine.store.sqlite import SQLiteStore
from conftest import ace

SIGNATURE = "ModuleNotFoundError: No module named 'textutil'"
LESSON = f"Run `pip install -e .` before `python -m pytest -q`: without it, {SIGNATURE}."


# -- the statistics --------------------------------------------------------------------------------


def test_wilson_and_newcombe_match_the_published_values():
    low, high = stats.wilson(0, 10)
    assert low == 0.0 and high == pytest.approx(0.2775, abs=1e-4)  # Wilson's interval for 0 of 10
    # Newcombe (1998), Statistics in Medicine 17:873, method 10 on 56/70 vs 48/80: 0.2000 (0.0524, 0.3339).
    diff, low, high = stats.newcombe(56, 70, 48, 80)
    assert (round(diff, 4), round(low, 4), round(high, 4)) == (0.2, 0.0524, 0.3339)


def test_the_bootstrap_interval_covers_the_difference_and_is_reproducible():
    rng = random.Random(1)
    a = [rng.gauss(5, 1) for _ in range(30)]
    b = [rng.gauss(2, 1) for _ in range(30)]
    diff, low, high = stats.bootstrap_diff(a, b)
    assert low < diff < high and low > 2.0 and high < 4.0
    assert stats.bootstrap_diff(a, b) == (diff, low, high), "seeded: the same data give the same interval"


# -- outcomes from captured events -----------------------------------------------------------------


def _event(at, command, ok, output, n):
    return {"tool_use_id": f"t{n}", "tool_name": "Bash", "input": json.dumps({"command": command}),
            "response": output if ok else None, "error": None if ok else f"Exit code 1\n{output}",
            "success": ok, "exit_code": 0 if ok else 1, "is_interrupt": False, "duration_ms": 10.0, "created_at": at}


def test_outcomes_of_one_session():
    lessons = [{"id": "ctx-old", "created_at": 0.0, "texts": [LESSON]},
               {"id": "ctx-new", "created_at": 500.0, "texts": [LESSON]}]  # written after the session began
    events = [_event(101, "python -m pytest -q", False, f"E   {SIGNATURE}", 1),
              _event(102, "ls", True, "a b", 2),
              _event(105, "python -m pytest -q", False, f"E   {SIGNATURE}", 3),
              _event(110, "python -m pytest -q", True, "3 passed in 0.2s", 4)]
    messages = [{"role": "user", "text": "fix the failing tests", "created_at": 100.0},
                {"role": "user", "text": "no, don't edit the tests, fix the code instead", "created_at": 106.0}]
    out = session_outcomes(events, messages, lessons, 99.0, 200.0, ended=True)
    assert out["repeat_failures"] == 2 and out["recurred"] and out["covered_ids"] == ["ctx-old"]
    assert (out["calls_to_pass"], out["seconds_to_pass"], out["passed"]) == (4, 10.0, True)
    assert out["failed_per_task"] == 1.0 and out["corrections"] == 1 and out["interruptions"] == 0
    assert out["complete"]
    running = session_outcomes(events[:1], messages[:1], lessons, 99.0, 102.0)
    assert not running["complete"] and not running["passed"] and running["calls_to_pass"] is None


# -- the report through the store and the CLI --------------------------------------------------------


def _write_sessions(project_root, arms, recur, *, prefix="s", start=None, shown=None, tokens=None):
    """One session per arm in `arms`; session k repeats the covered failure when `recur(k, arm)`;
    lesson `shown` is recorded as injected at the start of each session with lessons."""
    project = identify(project_root)
    base = {"v": 1, "agent_id": None, "agent_type": None,
            "project": {"key": project.key, "root": project.root, "remote": project.remote, "name": project.name},
            "session": {"cwd": project.root}}
    t0 = start or time.time() + 5
    records, ids = [], []
    for k, arm in enumerate(arms):
        sid, at = f"{prefix}-{k:03d}", t0 + 100 * k
        ids.append((sid, arm))
        session = dict(base["session"])
        if tokens:  # a transcript recording `tokens(arm)` tokens in one response
            path = os.path.join(tokens["dir"], f"{sid}.jsonl")
            with open(path, "w") as out:
                out.write(json.dumps({"type": "assistant", "requestId": "r", "message": {
                    "usage": {"input_tokens": tokens["count"](arm), "output_tokens": 0}}}) + "\n")
            session["transcript_path"] = path
        records.append({**base, "session": session, "at": at, "event": "SessionStart", "session_id": sid,
                        "detail": "startup"})
        records.append({**base, "at": at + 1, "event": "UserPromptSubmit", "session_id": sid, "detail": None,
                        "message": {"role": "user", "text": "make the test suite pass"}})
        fails = recur(k, arm)  # True: the signature; or a list of signatures
        fails = [SIGNATURE] if fails is True else (fails or [])
        steps = [(False, f"E   {sig}") for sig in fails] + [(True, "5 passed in 0.3s")]
        for n, (ok, output) in enumerate(steps):
            event = _event(at + 2 + n, "python -m pytest -q", ok, output, n)
            event.pop("created_at")
            event["tool_use_id"] = f"{sid}-{n}"
            records.append({**base, "at": at + 2 + n, "event": "PostToolUse" if ok else "PostToolUseFailure",
                            "session_id": sid, "detail": "Bash", "tool_event": event})
        records.append({**base, "at": at + 50, "event": "SessionEnd", "session_id": sid, "detail": "other"})
    with SQLiteStore() as store:
        store.apply_many(records)
        experiment = (store.running_experiment() or {}).get("id") or store.start_experiment(0.5, t0 - 1)
        pid = store.project_id(project.key)
        for (sid, arm), k in zip(ids, range(len(ids)), strict=True):
            store.set_session_arm(sid, experiment, pid, arm, t0 + 100 * k, "SessionStart")
            if shown and arm == INJECT:
                ids_shown = [shown] if isinstance(shown, str) else shown
                store.record_injections(sid, pid, "SessionStart", [(b, 0.5, r) for r, b in enumerate(ids_shown, 1)],
                                        t0 + 100 * k)
    return project


@pytest.fixture
def lesson(ace_home, git_project):
    with SQLiteStore() as store:
        bullet, _ = Playbook(store, identify(str(git_project))).add(LESSON, "strategies_and_hard_rules")
    return bullet["id"]


def test_a_big_effect_on_enough_sessions_is_told_with_an_interval_that_excludes_zero(lesson, git_project):
    arms = [INJECT, HOLDOUT] * 15
    # With the lesson the failure comes back in 2 of 15 sessions, without it in 12 of 15.
    _write_sessions(str(git_project), arms, lambda k, arm: (k // 2) % 15 < (2 if arm == INJECT else 12), shown=lesson)
    result = ace("report", "--json", cwd=str(git_project))
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert (data["sessions_with"], data["sessions_without"], data["enough"]) == (15, 15, True)
    rows = {r["outcome"]: r for r in data["outcomes"]}
    recurred = rows["recurred"]
    assert (recurred["with"], recurred["without"]) == (pytest.approx(2 / 15, abs=1e-4), pytest.approx(0.8))
    assert recurred["high"] < 0 < 0.8 - 2 / 15 and recurred["verdict"] == "helps"
    assert rows["repeat_failures"]["verdict"] == "helps" and rows["repeat_failures"]["high"] < 0
    assert rows["calls_to_pass"]["verdict"] == "helps"  # a failed run first costs a call
    assert rows["corrections"]["verdict"] == "no clear difference", "no effect there: no verdict"
    assert rows["tokens"]["n_with"] == 0 and rows["tokens"]["verdict"] == report.NOT_ENOUGH, "no transcript: no tokens"
    [per_lesson] = data["lessons"]
    assert per_lesson["id"] == lesson and per_lesson["shown"] == 15
    assert (per_lesson["recurred_with"], per_lesson["n_with"], per_lesson["recurred_without"],
            per_lesson["n_without"]) == (2, 15, 12, 15) and per_lesson["verdict"] == "helps"
    text = ace("report", cwd=str(git_project)).output
    assert "15 sessions with lessons, 15 without" in text and "helps" in text
    # Asked for more sessions than there are, it says so instead of a difference.
    strict = json.loads(ace("report", "--json", "--min-sessions", "20", cwd=str(git_project)).output)
    assert all(r["verdict"] == report.NOT_ENOUGH and r["diff"] is None for r in strict["outcomes"])


def test_too_few_sessions_say_not_enough_whatever_the_difference(lesson, git_project):
    _write_sessions(str(git_project), [INJECT, HOLDOUT] * 4, lambda k, arm: arm == HOLDOUT,
                    tokens={"dir": str(git_project.parent), "count": lambda arm: 1000 if arm == INJECT else 3000})
    data = json.loads(ace("report", "--json", cwd=str(git_project)).output)
    assert (data["sessions_with"], data["sessions_without"], data["enough"]) == (4, 4, False)
    assert {r["verdict"] for r in data["outcomes"]} == {report.NOT_ENOUGH}
    rows = {r["outcome"]: r for r in data["outcomes"]}
    assert (rows["recurred"]["with"], rows["recurred"]["without"]) == (0.0, 1.0), "the values are still shown"
    assert (rows["tokens"]["with"], rows["tokens"]["without"]) == (1000, 3000), "read from each transcript"
    assert "Not enough sessions yet" in ace("report", cwd=str(git_project)).output


def test_no_effect_gives_no_verdict():
    """Both arms hold the very same sessions' outcomes (in another order): no effect by construction,
    so every interval covers 0 whatever the bootstrap draws."""
    rng = random.Random(7)
    outcomes = [{"recurred": rng.random() < 0.4, "repeat_failures": rng.randint(0, 2), "covered_ids": [],
                 "calls_to_pass": rng.randint(3, 9), "seconds_to_pass": rng.uniform(10, 60),
                 "failed_per_task": rng.uniform(0, 2), "corrections": rng.randint(0, 1), "interruptions": 0,
                 "tokens": rng.randint(10_000, 90_000)} for _ in range(20)]
    shuffled = rng.sample(outcomes, len(outcomes))
    sessions = [{"arm": arm, "project": "p", "shown": [], "available": [], "outcomes": o}
                for arm, group in ((INJECT, outcomes), (HOLDOUT, shuffled)) for o in group]
    data = report.compare(sessions)
    assert data["enough"] and {r["verdict"] for r in data["outcomes"]} == {"no clear difference"}
    assert all(r["low"] <= 0 <= r["high"] and r["diff"] == 0 for r in data["outcomes"])


def test_sessions_begun_before_the_experiment_are_left_out(lesson, git_project):
    with SQLiteStore() as store:
        store.start_experiment(0.5, time.time() + 10_000)
    _write_sessions(str(git_project), [INJECT, HOLDOUT] * 3, lambda k, arm: True)
    data = json.loads(ace("report", "--json", cwd=str(git_project)).output)
    assert (data["sessions_with"], data["sessions_without"]) == (0, 0)


def test_tokens_are_read_from_the_transcript_once_per_response(tmp_path):
    from ace_engine.experiment.tokens import transcript_tokens

    claude = tmp_path / "claude.jsonl"
    usage = {"input_tokens": 10, "cache_read_input_tokens": 1000, "cache_creation_input_tokens": 5, "output_tokens": 7}
    lines = [{"type": "assistant", "requestId": "req-1", "message": {"id": "m1", "usage": usage}},
             {"type": "assistant", "requestId": "req-1", "message": {"id": "m1", "usage": usage}},  # same response
             {"type": "assistant", "requestId": "req-2", "message": {"id": "m2", "usage": {"input_tokens": 3,
                                                                                          "output_tokens": -9}}},
             {"type": "user", "message": {"content": "hi"}}]
    claude.write_text("\n".join(json.dumps(line) for line in lines) + "\nnot json\n[1, 2]\n")
    assert transcript_tokens(str(claude)) == 1022 + 3, "a negative count is junk, not a credit"
    codex = tmp_path / "rollout.jsonl"
    codex.write_text("\n".join(json.dumps({"type": "event_msg", "payload": {"type": "token_count", "info": {
        "total_token_usage": {"total_tokens": total}}}}) for total in (500, 1800)) + "\n")
    assert transcript_tokens(str(codex)) == 1800, "the last running total"
    link = tmp_path / "link.jsonl"
    link.symlink_to(claude)
    assert transcript_tokens(str(link)) is None, "a symlink is not followed"
    assert transcript_tokens(str(tmp_path)) is None and transcript_tokens(str(tmp_path / "gone")) is None
    assert transcript_tokens(None) is None
