"""The learning job queue: what Stop / SubagentStop / SessionEnd queue, the detached worker, leases,
backoff, and learning each task exactly once — with real hooks, real SQLite and real processes."""

import os
import signal
import stat
import subprocess
import threading
import time

import pytest

from ace_engine.core import config
from ace_engine.core.project import identify
from ace_engine.jobs import worker
from ace_engine.jobs.queue import enqueue_leftovers, enqueue_turn, lock_path, start_worker
from ace_engine.learning import pipeline
from ace_engine.store.sqlite import SQLiteStore
from learnutil import Session, bullets, fix_session, rows, wait_for_learning


def _no_worker(monkeypatch):
    """Queue without starting workers, to look at the jobs as the hooks left them."""
    monkeypatch.setattr("ace_engine.jobs.queue.start_worker", lambda key: None)


def _covered(job, table, ids):
    return [i for i in ids if job[f"{table}_from"] < i <= job[f"{table}_to"]]


def test_each_turn_and_subagent_gets_its_own_job_covering_its_events_once(ace_home, git_project, monkeypatch):
    _no_worker(monkeypatch)
    s = Session(git_project)
    s.start()
    s.prompt("add a --verbose flag to the cli and test it")
    s.read("app.py")
    s.read("app.py", agent_id="agent-7", )
    s.bash("grep -rn verbose .", stdout="", agent_id="agent-7")
    s.subagent_stop("agent-7", "Explore", "No verbose flag exists yet.")
    s.edit("app.py", "print('hi')", "print('hi', flush=True)")
    s.bash("python -m pytest -q", stdout="3 passed in 0.1s")
    s.stop("Added --verbose.")
    s.fire("Stop", stop_hook_active=True, last_assistant_message="continuing")  # never queues
    with SQLiteStore() as store:
        assert store.enqueue_job(s.session_id, None, None, "Stop", time.time()) is None, "nothing new"
    s.prompt("now document it in the README")
    s.edit("README.md", "# demo", "# demo\n\n--verbose prints more")
    s.stop("Documented.")

    jobs = rows(ace_home, "SELECT * FROM jobs ORDER BY id")
    assert [(j["agent_id"], j["agent_type"], j["trigger"]) for j in jobs] == [
        ("agent-7", "Explore", "SubagentStop"), ("", None, "Stop"), ("", None, "Stop")]
    events = rows(ace_home, "SELECT id, agent_id FROM tool_events ORDER BY id")
    messages = rows(ace_home, "SELECT id, agent_id, role FROM messages ORDER BY id")
    sub, main1, main2 = jobs
    assert sub["tool_events"] == 2 and sub["messages"] == 1
    assert main1["tool_events"] == 3 and main1["messages"] == 2 and main2["tool_events"] == 1
    # Every captured event belongs to exactly one job of its own agent.
    for event in events:
        owners = [j for j in jobs if _covered(j, "tool", [event["id"]])
                  and (j["agent_id"] or None) == event["agent_id"]]
        assert len(owners) == 1, event
    for message in messages:
        owners = [j for j in jobs if _covered(j, "msg", [message["id"]]) and (j["agent_id"] or None) == message["agent_id"]]
        assert len(owners) == 1, message
    assert main2["window_from"] == main1["window_to"], "feedback windows follow each other"


def test_session_end_queues_leftovers_of_an_interrupted_turn(ace_home, git_project, monkeypatch):
    _no_worker(monkeypatch)
    s = Session(git_project)
    s.start()
    fix_session(s)
    s.prompt("also make slugify keep digits")  # the user presses Esc: no Stop for this turn
    s.edit("src/textutil.py", "[^a-z0-9]+", "[^a-z0-9]+")
    s.bash("echo $RANDOM", agent_id="agent-9")  # a subagent that never reported back
    s.end()  # the real SessionEnd hook queues the leftovers
    jobs = rows(ace_home, "SELECT * FROM jobs ORDER BY id")
    assert len(jobs) == 3
    main, agent = (jobs[1], jobs[2]) if jobs[1]["agent_id"] == "" else (jobs[2], jobs[1])
    assert main["trigger"] == "SessionEnd" and main["tool_events"] == 1 and main["messages"] == 1
    assert agent["agent_id"] == "agent-9" and agent["tool_events"] == 1
    assert main["tool_from"] == jobs[0]["tool_to"], "leftovers start where the last job ended"
    with SQLiteStore() as store:
        assert enqueue_leftovers(store, s.session_id, "SessionEnd", time.time(), 3) == [], "nothing left the second time"
        assert enqueue_turn(store, s.session_id, None, None, "Stop", time.time(), 3) == [], "nor for a late Stop"


def test_interrupted_turn_is_learned_on_its_own_not_mixed_with_the_next(ace_home, git_project, monkeypatch):
    _no_worker(monkeypatch)
    s = Session(git_project)
    s.start()
    s.prompt("rename the helper in utils.py")  # interrupted: no Stop
    s.edit("utils.py", "def helper", "def format_name")
    fix_session(s)  # the next turn's Stop queues one job holding both turns
    (job,) = rows(ace_home, "SELECT * FROM jobs")
    assert job["messages"] == 3
    with SQLiteStore() as store:
        summary = pipeline.learn_job(store, store.claim_job(job["project_id"], os.getpid(), time.time(), 60))
    assert summary["turns"] == 2
    runs = rows(ace_home, "SELECT task, steps, outcome FROM learning_runs ORDER BY id")
    assert runs[0]["task"] == "rename the helper in utils.py" and runs[0]["steps"] == 1
    assert runs[0]["outcome"] == "failure", "an interrupted turn did not succeed"
    assert runs[1]["task"].startswith("test_unicode fails") and runs[1]["steps"] == 5


def test_stop_starts_a_detached_worker_that_learns_and_exits(ace_home, git_project):
    s = Session(git_project)
    s.start()
    fix_session(s)
    jobs = wait_for_learning(ace_home)
    assert [j["status"] for j in jobs] == ["done"] and jobs[0]["attempts"] == 1
    pid = jobs[0]["worker_pid"]
    assert pid != os.getpid(), "learned in another process"
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:  # the worker is our child (spawned from the hook): reap it
        done, _ = os.waitpid(pid, os.WNOHANG)
        if done == pid:
            break
        time.sleep(0.05)
    else:
        pytest.fail("the worker process did not exit")
    learned = {b["content"] for b in bullets(ace_home)}
    assert any(c.startswith("When `python -m pytest -q` fails with") for c in learned)


def test_at_most_one_worker_per_project_and_a_dead_workers_lock_is_taken_over(ace_home, git_project):
    key = identify(str(git_project)).key
    holder = subprocess.Popen(["python3", "-c", "import fcntl, os, sys, time\n"
                               "fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT)\n"
                               "fcntl.flock(fd, fcntl.LOCK_EX)\nprint('locked', flush=True)\ntime.sleep(60)\n",
                               lock_path(key)], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "locked"
        results = []
        threads = [threading.Thread(target=lambda: results.append(start_worker(key))) for _ in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert results == [None] * 8, "a worker holds the project: nobody else starts"
    finally:
        holder.kill()
        holder.wait()
    pid = start_worker(key)  # the holder was killed: its lock went with it
    assert pid is not None
    os.waitpid(pid, 0)


def _fake_git(tmp_path, monkeypatch) -> str:
    """A `git` that hangs: the worker's git-context step blocks mid-job (the job is `running`).
    Returns the real PATH."""
    fake = tmp_path / "fakebin"
    fake.mkdir()
    script = fake / "git"
    script.write_text("#!/bin/sh\nsleep 120\n")
    script.chmod(script.stat().st_mode | stat.S_IEXEC)
    real = os.environ["PATH"]
    monkeypatch.setenv("PATH", f"{fake}{os.pathsep}{real}")
    return real


def test_waiting_for_the_worker_is_taking_its_lock(ace_home):
    """`worker.wait_for_lock` / `wait_idle`: the one way the CLI, the demo and the tests wait."""
    from ace_engine.core.background import ProcessLock

    held = ProcessLock(lock_path("git:example.com/waiting"))
    assert held.acquire()  # a worker of this project runs (flock: a second descriptor is refused)
    try:
        assert worker.wait_for_lock("git:example.com/waiting", 0.1) is None
        assert not worker.wait_idle("git:example.com/waiting", 0.1)
        assert not worker.wait_idle(None, 0.1)  # any project's worker counts
        assert worker.wait_idle("git:example.com/other", 0.1)
    finally:
        held.release()
    lock = worker.wait_for_lock("git:example.com/waiting", 1.0)
    assert lock is not None and lock.fd is not None
    lock.release()
    assert worker.wait_idle(None, 0)


def test_a_worker_killed_mid_job_leaves_it_to_be_retried_and_learned_once(ace_home, git_project, tmp_path, monkeypatch):
    real_path = _fake_git(tmp_path, monkeypatch)
    s = Session(git_project)
    s.start()
    fix_session(s)
    deadline = time.monotonic() + 20
    while True:
        (job,) = rows(ace_home, "SELECT * FROM jobs")
        if job["status"] == "running":
            break
        assert time.monotonic() < deadline, job
        time.sleep(0.02)
    pid = job["worker_pid"]
    os.killpg(pid, signal.SIGKILL)  # the worker and its hung git
    os.waitpid(pid, 0)
    assert rows(ace_home, "SELECT status FROM jobs")[0]["status"] == "running"
    assert bullets(ace_home) == [], "nothing half-learned"

    monkeypatch.setenv("PATH", real_path)  # the real git again
    s.prompt("thanks, now run the linter")  # the next turn's Stop starts a new worker…
    s.bash("ruff check src", stdout="All checks passed!")
    s.stop("Lint is clean.")
    jobs = wait_for_learning(ace_home)
    first = jobs[0]
    assert first["status"] == "done" and first["attempts"] == 2, first
    assert "stopped during attempt 1" in first["last_error"]
    assert first["worker_pid"] != pid
    fixes = [b for b in bullets(ace_home) if b["content"].startswith("When `python -m pytest -q` fails")]
    assert len(fixes) == 1
    adds = rows(ace_home, "SELECT COUNT(*) AS n FROM bullet_changes WHERE op = 'ADD' AND bullet_id = ?", (fixes[0]["id"],))
    assert adds[0]["n"] == 1
    assert len(rows(ace_home, "SELECT * FROM learning_runs WHERE job_id = ?", (first["id"],))) == 1


def _queued_job(ace_home, git_project):
    s = Session(git_project)
    s.start()
    fix_session(s)
    return s


def test_lease_expiry_hands_the_job_to_another_worker_and_the_late_one_rolls_back(ace_home, git_project, monkeypatch):
    _no_worker(monkeypatch)
    _queued_job(ace_home, git_project)
    with SQLiteStore() as store:
        (job,) = store.list_jobs(all_projects=True)
        now = time.time()
        first = store.claim_job(job["project_id"], 111, now, lease_seconds=5)
        assert first["attempts"] == 1
        assert store.claim_job(job["project_id"], 222, now + 1, lease_seconds=5) is None, "leased"
        second = store.claim_job(job["project_id"], 222, now + 6, lease_seconds=5)
        assert second["id"] == first["id"] and second["attempts"] == 2
        assert "stopped during attempt 1" in second["last_error"]
        with pytest.raises(pipeline.ClaimLost):
            pipeline.learn_job(store, first)  # the late worker finds its claim gone before curating
        assert store.list_bullets(job["project_id"]) == []
        with store.transaction():  # …and could not have marked the job done had it got further
            assert store.finish_job(first, "done", {}, None, time.time()) is False
        pipeline.learn_job(store, second)
        assert store.get_job(job["id"])["status"] == "done"
        # One lesson: the fix (`python -m pytest -q` is the obvious command, no lesson of its own).
        assert len(store.list_bullets(job["project_id"], statuses=("active", "candidate"))) == 1


class _Broken:
    name = "broken"

    def reflect(self, trajectory, playbook):
        raise RuntimeError("model server exploded")


def test_failures_back_off_exponentially_keep_the_error_and_stop_after_max_attempts(ace_home, git_project, monkeypatch):
    _no_worker(monkeypatch)
    _queued_job(ace_home, git_project)
    cfg = config.load(str(git_project))
    broken = _Broken()
    with SQLiteStore() as store:
        (job,) = store.list_jobs(all_projects=True)
        pid, t = job["project_id"], time.time()
        delays = []
        for attempt in (1, 2, 3):
            claimed = store.claim_job(pid, os.getpid(), t, 60)
            assert claimed is not None and claimed["attempts"] == attempt
            before = time.time()
            result = worker.run_one(store, claimed, cfg, reflector=_Raising())
            after = store.get_job(job["id"])
            assert result["status"] == ("failed" if attempt == 3 else "queued")
            assert "IndexError" in after["last_error"], "the last error is kept"
            if attempt < 3:
                delays.append(after["not_before"] - before)
                assert store.claim_job(pid, os.getpid(), t + 1, 60) is None, "backing off"
                t = after["not_before"] + 0.01
        assert [round(d) for d in delays] == [30, 60]
        assert store.get_job(job["id"])["status"] == "failed"
        assert store.claim_job(pid, os.getpid(), t + 3600, 60) is None
        assert store.retry_job(job["id"], t) and store.get_job(job["id"])["attempts"] == 0
        claimed = store.claim_job(pid, os.getpid(), t + 1, 60)
        # A failing LLM reflector is not a failed job: the heuristics take over.
        summary = pipeline.learn_job(store, claimed, reflector=broken)
        assert summary["created"] == 1  # the fix; the obvious test command is no lesson
        assert rows(ace_home, "SELECT reflector FROM learning_runs")[0]["reflector"] == "heuristic (fallback from broken)"


class _Raising:
    """Not an LLM reflector: a bug in the pipeline itself (it must fail the attempt, not fall back)."""
    name = "heuristic"

    def reflect(self, trajectory, playbook):
        return [][1]


def test_a_detached_process_keeps_no_pipe_of_its_parent(tmp_path):
    """Claude Code waits for EOF on the hook's stdout: a worker holding it (or any other inherited
    pipe) open would hang the session. Only the lock it is handed is inherited."""
    from ace_engine.core.background import spawn_python

    read_end, write_end = os.pipe()
    os.set_inheritable(write_end, True)  # an inheritable pipe, as a parent process might pass down
    lock = tmp_path / "held.lock"
    held = os.open(lock, os.O_RDWR | os.O_CREAT)
    seen = tmp_path / "fds"
    pid = spawn_python(f"import os\nopen({str(seen)!r}, 'w').write(repr(os.fstat({held}).st_ino))\n"
                       f"inodes = set()\nfor fd in range(3, 1024):\n    try:\n        inodes.add(os.fstat(fd).st_ino)\n"
                       f"    except OSError:\n        pass\nopen({str(seen)!r} + '.all', 'w').write(' '.join(map(str, inodes)))\n",
                       keep_fds=(held,))
    os.close(write_end)
    os.waitpid(pid, 0)
    assert seen.read_text() == repr(os.fstat(held).st_ino), "the handed-over descriptor is there"
    held_by_child = {int(n) for n in seen.with_name("fds.all").read_text().split()}
    assert os.fstat(read_end).st_ino not in held_by_child, "the child holds a copy of the parent's pipe"
    assert os.read(read_end, 1) == b"", "EOF: nobody else holds the write end"
    os.close(held)
    os.close(read_end)
