"""The dashboard at scale: every page renders in under 200 ms of server time over a store of 10,000
lessons and 100,000 captured events (plus the injections, marks and learning runs that go with them).

The store is written through its own write methods (`insert_bullet`, `log_change`, `apply_many`,
`record_injections`, `record_learning_run`, `enqueue_job`) inside one transaction per table family,
then the lessons are embedded as `ace embed` does, so the search page runs the hooks' real hybrid
search. Each page is rendered in process through the real app (auth included) once to warm up, then
`RUNS` times; the median must stay under the budget, and the figures are printed.
"""

import random
import statistics
import time

import pytest

from ace_engine.playbook import domains as domain_mod
from ace_engine.playbook.confidence import confidence
from ace_engine.playbook.ids import new_id
from ace_engine.playbook.playbook import content_key
from ace_engine.project import Project
from ace_engine.retrieval import vectors
from ace_engine.store.sqlite import SQLiteStore
from ace_engine.store.views_sql import ViewsSQLiteStore

pytest.importorskip("jinja2", reason="the dashboard needs the `server` extra (Starlette, uvicorn, Jinja2)")
from starlette.testclient import TestClient  # noqa: E402

from ace_engine.ui.app import create_app  # noqa: E402

LESSONS = 10_000
EVENTS = 100_000
SESSIONS = 400
BUDGET_MS = 200.0
RUNS = 5
NOW = 1_750_000_000.0
DAY = 86400.0
TOKEN = "perf-token"

SUBJECTS = ["the login endpoint", "JWT refresh", "the Alembic migration", "the Docker build", "pytest fixtures",
            "the Redis cache", "the payment webhook", "the CSV importer", "the GraphQL resolver", "the S3 uploader",
            "the Celery worker", "the React form", "the rate limiter", "the search index", "the email sender"]
ADVICE = ["retry once after a 401 and refresh the token first", "pin the version in requirements.txt",
          "run `python -m pytest -q` from the repo root", "set TZ=UTC before comparing timestamps",
          "close the session in a finally block", "call flush() before reading the file back",
          "use the async client inside the event loop", "add the index before backfilling",
          "mock the clock instead of sleeping", "keep secrets in the environment, never in settings.py"]
SECTIONS = ["strategies_and_hard_rules", "useful_code_snippets", "troubleshooting_and_pitfalls", "apis_to_use"]
TOOLS = ["Bash", "Read", "Edit", "Grep", "Glob", "Write"]


def seed(store: SQLiteStore, rng: random.Random) -> dict:
    """The big store; returns ids the page list needs."""
    project = Project("/work/shop", "github.com/acme/shop")
    pid = store.ensure_project(project.key, project.root, project.remote, project.name, NOW - 400 * DAY)
    ids = []
    with store.transaction():
        for i in range(LESSONS):
            content = (f"{rng.choice(SUBJECTS)}: {rng.choice(ADVICE)}; seen with {rng.choice(SUBJECTS)} "
                       f"(case {i}, {rng.choice(['linux', 'macOS', 'CI', 'staging'])})")
            helpful, harmful = rng.choice([0, 0, 0, 1, 2, 5, 9]), rng.choice([0, 0, 0, 1, 3])
            created = NOW - rng.uniform(0, 300) * DAY
            bid = new_id(created) + f"{i:x}"
            ids.append(bid)
            store.insert_bullet({
                "id": bid, "project_id": pid if i % 5 else None, "section": rng.choice(SECTIONS), "content": content,
                "domains": domain_mod.derive(content), "helpful": helpful, "harmful": harmful,
                "helpful_explicit": 0, "harmful_explicit": 0, "confidence": confidence(helpful, harmful),
                "status": rng.choice(["active"] * 17 + ["candidate", "quarantined", "archived"]),
                "provenance": {"source": "learning", "sessions": [f"sess-{rng.randrange(SESSIONS)}"]},
                "content_key": content_key(content), "created_at": created, "updated_at": created,
                "last_used_at": None, "retrieval_count": 0,
            })
            store.log_change(bid, "ADD", {"content": content}, None, "learning", None, created)
        store.refresh_domain_counts(pid)
        store.refresh_domain_counts(None)
    vectors.embed_missing(store)

    base = {"v": 1, "agent_id": None, "agent_type": None,
            "project": {"key": project.key, "root": project.root, "remote": project.remote, "name": project.name},
            "session": {"cwd": project.root, "transcript_path": None, "permission_mode": "default", "agent_type": None}}
    records, per_session = [], EVENTS // SESSIONS
    for s in range(SESSIONS):
        sid = f"sess-{s}"
        start = NOW - (SESSIONS - s) * 0.7 * DAY
        for n in range(per_session):
            at = start + n * 5
            record = {**base, "at": at, "session_id": sid, "detail": None}
            if n == 0:
                record.update(event="SessionStart", detail="startup")
            elif n % 10 == 1:
                record.update(event="UserPromptSubmit", message={"role": "user", "text": f"fix {rng.choice(SUBJECTS)} (step {n})"})
            elif n == per_session - 1 and s < SESSIONS - 1:
                record.update(event="SessionEnd", detail="exit")
            else:
                ok = rng.random() > 0.1
                record.update(event="PostToolUse" if ok else "PostToolUseFailure", detail="Bash", duration_ms=rng.uniform(5, 60),
                              tool_event={"tool_use_id": f"{sid}-{n}", "tool_name": rng.choice(TOOLS),
                                          "input": '{"command": "pytest -q"}', "response": "ok " * 200 if ok else None,
                                          "success": ok, "exit_code": 0 if ok else 1, "error": None if ok else "Exit code 1",
                                          "is_interrupt": False, "duration_ms": rng.uniform(10, 5000)})
            records.append(record)
    store.apply_many(records)

    active = ids[: LESSONS // 2]
    with store.transaction():
        for s in range(SESSIONS):
            for n in range(10):
                at = NOW - (SESSIONS - s) * 0.7 * DAY + n * 50 + 5
                shown = rng.sample(active, 3)
                store.record_injections(f"sess-{s}", pid, "UserPromptSubmit", [(b, 0.4, r + 1) for r, b in enumerate(shown)], at)
                for b in shown[:1]:
                    store.log_change(b, "TAG", {"tag": rng.choice(["helpful", "helpful", "harmful"]), "explicit": False,
                                                "count": 1, "confidence": 0.6}, "task succeeded", "learning", f"sess-{s}", at + 30)
        for s in range(SESSIONS):
            store.record_learning_run({"project_id": pid, "session_id": f"sess-{s}", "source": "session", "reflector": "heuristic",
                                       "task": "fix the build", "outcome": rng.choice(["success", "failure"]), "learned": True,
                                       "created": rng.randrange(3), "merged": rng.randrange(2), "pruned": rng.randrange(2),
                                       "created_at": NOW - (SESSIONS - s) * 0.7 * DAY + 3000})
    store.enqueue_job(f"sess-{SESSIONS - 1}", None, None, "Stop", NOW)
    store.conn.execute("PRAGMA optimize")
    hot = store.conn.execute("SELECT bullet_id FROM injections GROUP BY bullet_id ORDER BY COUNT(*) DESC LIMIT 1").fetchone()[0]
    return {"pid": pid, "lesson": hot, "session": f"sess-{SESSIONS // 2}", "live": f"sess-{SESSIONS - 1}"}


def test_pages_render_under_budget_at_scale(ace_home, capsys):
    rng = random.Random(12)
    started = time.perf_counter()
    with ViewsSQLiteStore() as store:
        found = seed(store, rng)
        counts = store.table_counts()
    seeded_s = time.perf_counter() - started
    assert counts["bullets"] == LESSONS
    assert counts["hook_events"] >= EVENTS, counts  # every record is a hook event; tool calls and prompts have rows too

    client = TestClient(create_app(lambda: ViewsSQLiteStore(), token=TOKEN, now=lambda: NOW), base_url="http://127.0.0.1:9")
    assert client.get(f"/?token={TOKEN}", follow_redirects=True).status_code == 200
    pages = {
        "playbook list": "/",
        "playbook list, filtered, page 20": "/?section=troubleshooting_and_pitfalls&status=any&order=recent&page=20",
        "playbook search (hybrid, all projects)": "/?q=login+keeps+failing+after+the+token+expires",
        "playbook search (one project)": f"/?q=database+migration+index+backfill&scope={found['pid']}",
        "palette search (JSON)": "/api/search?q=flaky+timestamp+comparison",
        "lesson": f"/lessons/{found['lesson']}",
        "review queue": "/review",
        "sessions timeline": f"/sessions?project={found['pid']}",
        "sessions timeline, page 10": f"/sessions?project={found['pid']}&page=10",
        "session": f"/sessions/{found['session']}",
        "does it help? (30 days)": "/help",
        "does it help? (365 days)": "/help?days=365",
        "health": "/health",
    }
    figures = {}
    for name, path in pages.items():
        t0 = time.perf_counter()
        response = client.get(path)
        cold = (time.perf_counter() - t0) * 1000
        assert response.status_code == 200, (path, response.text[:500])
        runs = []
        for _ in range(RUNS):
            t0 = time.perf_counter()
            assert client.get(path).status_code == 200
            runs.append((time.perf_counter() - t0) * 1000)
        figures[name] = (cold, statistics.median(runs), max(runs), len(response.content))
    with capsys.disabled():
        print(f"\nace ui at {counts['bullets']:,} lessons, {counts['hook_events']:,} hook events "
              f"({counts['tool_events']:,} tool calls, {counts['messages']:,} prompts), {counts['injections']:,} injections,"
              f" {counts['bullet_changes']:,} changes; seeded in {seeded_s:.1f} s")
        print(f"{'page':42} {'first':>9} {'median':>9} {'max':>9} {'bytes':>9}")
        for name, (cold, median, worst, size) in figures.items():
            print(f"{name:42} {cold:8.1f}ms {median:8.1f}ms {worst:8.1f}ms {size:9,}")
    slow = {name: round(f[1], 1) for name, f in figures.items() if f[1] >= BUDGET_MS}
    assert not slow, f"pages over {BUDGET_MS:.0f} ms (median of {RUNS}): {slow}"
