"""Trajectories from captured events (steps, outcome, turns), payload steps, and git context from
real repositories."""

import os
import subprocess
import time

from hypothesis import given, settings
from hypothesis import strategies as st

from ace_engine.learning.gates import skip_reason
from ace_engine.observe import git_context, trajectory
from ace_engine.store.sqlite import SQLiteStore
from conftest import examples
from learnutil import Session, fix_session


def _steps(git_project):
    with SQLiteStore() as store:
        (job,) = store.list_jobs(all_projects=True)
        events = store.job_tool_events(job)
    return [trajectory.step_from_event(e, i, str(git_project)) for i, e in enumerate(events, 1)]


def test_captured_events_become_short_steps_with_their_facts(ace_home, git_project, monkeypatch):
    monkeypatch.setattr("ace_engine.jobs.queue.start_worker", lambda key: None)
    s = Session(git_project)
    s.start()
    fix_session(s)
    read, fail, edit1, edit2, ok = _steps(git_project)
    assert (read["action"], read["result"], read["kind"], read["files"]) == (
        "read src/textutil.py", "10 lines", "read", ["src/textutil.py"])
    assert fail["action"] == "$ python -m pytest -q" and fail["kind"] == "test" and not fail["success"]
    assert fail["error"] == "tests/test_textutil.py::test_unicode - AssertionError: assert 'cr-me-br-l-e' == 'creme-brulee'"
    assert fail["result"].startswith("failed: tests/test_textutil.py::test_unicode") and fail["exit_code"] == 1
    assert edit1["kind"] == "edit" and edit1["files"] == ["src/textutil.py"]
    assert edit1["action"] == "edit src/textutil.py: `text = text.lower()` → `text = unicodedata.normalize('NFKD', text).encode…`"
    assert edit1["change"]["new"].startswith("text = unicodedata.normalize")
    assert ok["success"] and ok["result"] == "1 passed in 0.02s" and ok["duration_ms"] == 804
    assert all(s["tool_event_id"] for s in (read, fail, edit1, edit2, ok))


def test_outcome_is_decided_by_the_last_run_of_each_check():
    def bash(cmd, ok, result="ok"):
        return {"tool": "Bash", "command": cmd, "kind": "test" if "pytest" in cmd else ("lint" if "ruff" in cmd else "other"),
                "success": ok, "result": result}

    edit = {"tool": "Edit", "kind": "edit", "success": True, "files": ["a.py"]}
    assert trajectory.outcome([bash("pytest -q", False), edit, bash("pytest -q", True, "3 passed")], "done")["success"]
    out = trajectory.outcome([bash("pytest -q", True), edit, bash("ruff check .", False)], "All fixed!")
    assert out["success"] is False and "lint `ruff check .` failed" in out["summary"]
    assert trajectory.outcome([edit], "I couldn't find where the token is refreshed.")["success"] is False
    assert trajectory.outcome([edit, bash("make", False)], "done")["success"] is False
    assert trajectory.outcome([edit], "Renamed it.")["success"] is True
    assert trajectory.outcome([edit], "Renamed it.", interrupted=True)["success"] is False
    assert trajectory.outcome([], None)["success"] is None


def test_plugin_payload_steps_are_enriched():
    traj = trajectory.from_payload({
        "task": "make the build pass", "playbook_used": ["ctx-01abc", {"id": "ctx-02def"}],
        "trajectory": [{"step": 1, "tool": "Bash", "action": "npm run build", "result": "error TS2322: Type 'string' is not assignable to type 'number'."},
                       {"step": 2, "tool": "Edit", "action": "edit src/price.ts", "result": "ok"},
                       {"step": 3, "tool": "Bash", "action": "npm run build", "result": "built in 2.1s"}],
        "result": {"success": True, "output": "Build fixed", "summary": ""}})
    fail, edit, ok = traj["trajectory"]
    assert (fail["kind"], fail["success"], fail["error"]) == ("build", False, "error TS2322: Type 'string' is not assignable to type 'number'.")
    assert edit["files"] == ["src/price.ts"] and ok["success"]
    assert traj["playbook_used"] == ["ctx-01abc", "ctx-02def"] and traj["result"]["success"] is True
    assert traj["files"] == ["src/price.ts"]


def test_gates_skip_questions_listings_greetings_and_ace_commands():
    read = {"tool": "Read", "kind": "read", "success": True, "files": ["a.py"]}
    ls = {"tool": "Bash", "command": "ls -la && git status", "kind": "readonly", "success": True}
    test = {"tool": "Bash", "command": "pytest -q", "kind": "test", "success": True}
    edit = {"tool": "Edit", "kind": "edit", "success": True, "files": ["a.py"]}
    assert "greeting" in skip_reason({"task": "thanks!", "trajectory": []})
    assert "no tool use" in skip_reason({"task": "what does the retry decorator do?", "trajectory": []})
    assert "no substantial work" in skip_reason({"task": "where is the retry decorator defined?", "trajectory": [read]})
    assert "listing / status check" in skip_reason({"task": "what changed?", "trajectory": [ls]})
    assert skip_reason({"task": "ace status", "trajectory": [ls]}) == "ace or slash command"
    assert skip_reason({"task": "run the tests", "trajectory": [test]}) is None
    assert skip_reason({"task": "rename x", "trajectory": [read, edit]}) is None
    # A rule the user states is learned whatever the turn did; a subagent's prompt states none.
    rule = "yes. keep in mind, for tests you need to run `test:env` to have the env locally"
    assert skip_reason({"task": rule, "prompts": [rule], "trajectory": [ls]}) is None
    assert skip_reason({"task": rule, "prompts": [rule], "trajectory": []}) is None
    assert skip_reason({"task": rule, "prompts": [rule], "trajectory": [ls], "agent_id": "a1"}) is not None


def _event(n, at):
    return {"id": n, "tool_name": "Bash", "created_at": at}


@settings(max_examples=examples(200), deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["user", "assistant", "event"]), st.integers(0, 50)), max_size=40))
def test_turn_split_keeps_every_item_exactly_once_in_time_order(items):
    messages, events = [], []
    for n, (what, at) in enumerate(items, 1):
        if what == "event":
            events.append(_event(n, float(at)))
        else:
            messages.append({"id": n, "role": what, "text": f"m{n}", "created_at": float(at)})
    turns = trajectory.split_turns(sorted(events, key=lambda e: e["id"]), sorted(messages, key=lambda m: m["id"]))
    seen = [x["id"] for t in turns for x in t["prompts"] + t["events"] + t["assistant"]]
    assert sorted(seen) == sorted(n for n in range(1, len(items) + 1))
    for turn in turns[1:]:
        assert turn["prompts"], "every turn but the first starts with a prompt"
    starts = [t["start"] for t in turns if t["start"] is not None]
    assert starts == sorted(starts)


def _git(root, *args, date=None):
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.invalid",
           "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.invalid"}
    if date:
        env.update(GIT_AUTHOR_DATE=date, GIT_COMMITTER_DATE=date)
    subprocess.run(["git", "-C", str(root), "-c", "commit.gpgsign=false", *args], check=True, capture_output=True, env=env)


def test_git_context_reports_branch_session_commits_and_changed_lines(git_project):
    root = git_project
    _git(root, "checkout", "-q", "-b", "fix/slugify")
    (root / "old.py").write_text("a\nb\nc\n")
    _git(root, "add", "-A")
    _git(root, "commit", "-q", "-m", "before the session", date="2020-01-01T00:00:00+0000")
    since = time.time() - 5
    (root / "app.py").write_text("print('hi')\nprint('there')\n")  # +1 line
    _git(root, "commit", "-q", "-am", "greet twice")
    (root / "old.py").write_text("a\n")  # -2 lines, not committed
    (root / "new.py").write_text("x = 1\n")  # untracked
    ctx = git_context.context(str(root), since)
    assert ctx["branch"] == "fix/slugify" and len(ctx["head"]) == 40
    assert [c["subject"] for c in ctx["commits"]] == ["greet twice"]
    assert ctx["files_changed"] == ["app.py", "new.py", "old.py"]
    assert (ctx["insertions"], ctx["deletions"]) == (1, 2)


def test_git_context_of_a_repo_born_during_the_session_and_of_no_repo(tmp_path):
    root = tmp_path / "fresh"
    root.mkdir()
    _git(root, "init", "-q", "-b", "main")
    (root / "a.txt").write_text("1\n2\n")
    _git(root, "add", "-A")
    _git(root, "commit", "-q", "-m", "first")
    ctx = git_context.context(str(root), time.time() - 60)
    assert ctx["branch"] == "main" and [c["subject"] for c in ctx["commits"]] == ["first"]
    assert ctx["files_changed"] == ["a.txt"] and ctx["insertions"] == 2
    plain = tmp_path / "plain"
    plain.mkdir()
    assert git_context.context(str(plain), time.time()) == {}
    assert git_context.context(str(tmp_path / "missing"), time.time()) == {}


def test_a_learned_job_carries_the_sessions_git_context(ace_home, git_project, monkeypatch):
    monkeypatch.setattr("ace_engine.jobs.queue.start_worker", lambda key: None)
    _git(git_project, "add", "-A")
    _git(git_project, "commit", "-q", "-m", "initial", date="2020-01-01T00:00:00+0000")
    s = Session(git_project)
    s.start()
    (git_project / "app.py").write_text("print('hello')\n")
    fix_session(s)
    from ace_engine.learning.pipeline import job_trajectories, project_for

    with SQLiteStore() as store:
        (job,) = store.list_jobs(all_projects=True)
        (traj,) = job_trajectories(store, job, project_for(store, job["project_id"]))
    assert traj["git"]["files_changed"] == ["app.py"] and traj["git"]["insertions"] == 1
    assert traj["task"].startswith("test_unicode fails") and traj["result"]["success"] is True
    assert traj["project"]["root"] == str(git_project)


def test_history_across_sessions_feeds_co_edit_and_repeated_failure_lessons(ace_home, git_project, monkeypatch):
    monkeypatch.setattr("ace_engine.jobs.queue.start_worker", lambda key: None)
    from ace_engine.learning.pipeline import learn_job

    for n in range(3):
        s = Session(git_project, session_id=f"sess-{n}")
        s.start()
        s.prompt(f"add field number {n} to the order API")
        s.edit("src/api/routes.py", "fields = [", f"fields = ['f{n}', ")
        s.edit("src/api/schemas.py", "class Order:", f"class Order:  # f{n}")
        s.bash("make integration", error="Exit code 2\nError: database shop_test does not exist")
        s.stop("Added the field; the integration suite can't run here.")
        with SQLiteStore() as store:
            (job,) = store.list_jobs(all_projects=True, statuses=("queued",))
            learn_job(store, store.claim_job(job["project_id"], os.getpid(), time.time(), 60))
    from learnutil import bullets

    learned = sorted(b["content"] for b in bullets(ace_home))
    assert learned == [
        "`make integration` keeps failing with `Error: database shop_test does not exist` (in 3 sessions, never fixed "
        "yet): check that error before assuming your change broke it.",
        "`src/api/routes.py` and `src/api/schemas.py` are usually changed together: when you edit one, check the other.",
    ], "nothing from the first two sessions alone; both lessons once the third confirms them"
