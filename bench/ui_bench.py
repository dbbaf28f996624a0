"""The dashboard at scale: every page renders in under 200 ms of server time (median) over a store of
10,000 lessons and 100,000 captured events (plus the injections, marks and learning runs that go with
them). Moved here from tests/test_ui_perf.py: tests never assert a time.

    python bench/ui_bench.py [--lessons 10000] [--events 100000] [--sessions 400] [--runs 5]
                             [--budget-ms 200] [--out bench/results/ui.json] [--no-budget]

The store is written through its own write methods (`insert_bullet`, `log_change`, `apply_many`,
`record_injections`, `record_learning_run`, `enqueue_job`) inside one transaction per table family,
then the lessons are embedded as `ace embed` does, so the search page runs the hooks' real hybrid
search. Each page is rendered in process through the real app (auth included) once to warm up, then
`--runs` times; a page whose median reaches the budget prints `OVER` and the script exits 1
(`--no-budget`: report only, as tests/test_bench_ui.py runs it at a small scale). Every page must
answer 200 either way. Everything runs in a private temporary ACE_HOME, removed at the end.

Cost: about a minute to seed at the default scale on a quiet 2-core machine, then seconds.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

from ace_engine.playbook import domains as domain_mod
from ace_engine.playbook.confidence import confidence
from ace_engine.playbook.ids import new_id
from ace_engine.playbook.playbook import content_key
from ace_engine.core.project import Project
from ace_engine.embed import vectors
from ace_engine.store.sqlite import SQLiteStore
from ace_engine.store.views_sql import ViewsSQLiteStore

HERE = Path(__file__).resolve().parent

LESSONS = 10_000  # defaults; --lessons / --events / --sessions / --runs change them
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


def seed(store: SQLiteStore, rng: random.Random, lessons: int, events: int, sessions: int) -> dict:
    """The big store; returns ids the page list needs."""
    project = Project("/srv/shop", "github.com/acme/shop")
    pid = store.ensure_project(project.key, project.root, project.remote, project.name, NOW - 400 * DAY)
    ids = []
    with store.transaction():
        for i in range(lessons):
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
                "provenance": {"source": "learning", "sessions": [f"sess-{rng.randrange(sessions)}"]},
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
    records, per_session = [], events // sessions
    for s in range(sessions):
        sid = f"sess-{s}"
        start = NOW - (sessions - s) * 0.7 * DAY
        for n in range(per_session):
            at = start + n * 5
            record = {**base, "at": at, "session_id": sid, "detail": None}
            if n == 0:
                record.update(event="SessionStart", detail="startup")
            elif n % 10 == 1:
                record.update(event="UserPromptSubmit", message={"role": "user", "text": f"fix {rng.choice(SUBJECTS)} (step {n})"})
            elif n == per_session - 1 and s < sessions - 1:
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

    active = ids[: lessons // 2]
    with store.transaction():
        for s in range(sessions):
            for n in range(10):
                at = NOW - (sessions - s) * 0.7 * DAY + n * 50 + 5
                shown = rng.sample(active, 3)
                store.record_injections(f"sess-{s}", pid, "UserPromptSubmit", [(b, 0.4, r + 1) for r, b in enumerate(shown)], at)
                for b in shown[:1]:
                    store.log_change(b, "TAG", {"tag": rng.choice(["helpful", "helpful", "harmful"]), "explicit": False,
                                                "count": 1, "confidence": 0.6}, "task succeeded", "learning", f"sess-{s}", at + 30)
        for s in range(sessions):
            store.record_learning_run({"project_id": pid, "session_id": f"sess-{s}", "source": "session", "reflector": "heuristic",
                                       "task": "fix the build", "outcome": rng.choice(["success", "failure"]), "learned": True,
                                       "created": rng.randrange(3), "merged": rng.randrange(2), "pruned": rng.randrange(2),
                                       "created_at": NOW - (sessions - s) * 0.7 * DAY + 3000})
    store.enqueue_job(f"sess-{sessions - 1}", None, None, "Stop", NOW)
    store.conn.execute("PRAGMA optimize")
    hot = store.conn.execute("SELECT bullet_id FROM injections GROUP BY bullet_id ORDER BY COUNT(*) DESC LIMIT 1").fetchone()[0]
    return {"pid": pid, "lesson": hot, "session": f"sess-{sessions // 2}", "live": f"sess-{sessions - 1}"}


def measure(found: dict, runs: int) -> dict[str, tuple[float, float, float, int]]:
    """Each page: (first ms, median ms, max ms, bytes); raises when a page does not answer 200."""
    from starlette.testclient import TestClient

    from ace_engine.ui.app import create_app

    client = TestClient(create_app(lambda: ViewsSQLiteStore(), token=TOKEN, now=lambda: NOW), base_url="http://127.0.0.1:9")
    if client.get(f"/?token={TOKEN}", follow_redirects=True).status_code != 200:
        raise SystemExit("the dashboard refused its own token")
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
        if response.status_code != 200:
            raise SystemExit(f"{path} answered {response.status_code}: {response.text[:500]}")
        times = []
        for _ in range(runs):
            t0 = time.perf_counter()
            if client.get(path).status_code != 200:
                raise SystemExit(f"{path} stopped answering 200")
            times.append((time.perf_counter() - t0) * 1000)
        figures[name] = (cold, statistics.median(times), max(times), len(response.content))
    return figures


def main() -> int:
    parser = argparse.ArgumentParser(description="The dashboard's pages at scale, against a time budget.")
    parser.add_argument("--lessons", type=int, default=LESSONS)
    parser.add_argument("--events", type=int, default=EVENTS)
    parser.add_argument("--sessions", type=int, default=SESSIONS)
    parser.add_argument("--runs", type=int, default=RUNS)
    parser.add_argument("--budget-ms", type=float, default=BUDGET_MS)
    parser.add_argument("--no-budget", action="store_true", help="report only (exit 0 whatever the figures)")
    parser.add_argument("--out", default=str(HERE / "results" / "ui.json"))
    args = parser.parse_args()
    base = Path(tempfile.mkdtemp(prefix="ace-ui-bench-"))
    os.environ["ACE_HOME"] = str(base / "ace-home")
    os.environ.pop("ACE_CONFIG", None)
    os.environ["XDG_CONFIG_HOME"] = str(base / "config")
    try:
        rng = random.Random(12)
        started = time.perf_counter()
        with ViewsSQLiteStore() as store:
            found = seed(store, rng, args.lessons, args.events, args.sessions)
            counts = store.table_counts()
        seeded_s = time.perf_counter() - started
        if counts["bullets"] != args.lessons or counts["hook_events"] < args.events:
            raise SystemExit(f"the seed came out wrong: {counts}")
        figures = measure(found, args.runs)
    finally:
        shutil.rmtree(base, ignore_errors=True)
    print(f"ace ui at {counts['bullets']:,} lessons, {counts['hook_events']:,} hook events "
          f"({counts['tool_events']:,} tool calls, {counts['messages']:,} prompts), {counts['injections']:,} injections,"
          f" {counts['bullet_changes']:,} changes; seeded in {seeded_s:.1f} s; load {os.getloadavg()[0]:.2f}")
    print(f"{'page':42} {'first':>9} {'median':>9} {'max':>9} {'bytes':>9}")
    over = {}
    for name, (cold, median, worst, size) in figures.items():
        flag = "  OVER" if median >= args.budget_ms else ""
        print(f"{name:42} {cold:8.1f}ms {median:8.1f}ms {worst:8.1f}ms {size:9,}{flag}")
        if flag:
            over[name] = round(median, 1)
    report = {"at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "machine": platform.machine(),
              "cpus": os.cpu_count(), "load": os.getloadavg(), "python": platform.python_version(),
              "counts": counts, "seeded_seconds": seeded_s, "runs": args.runs, "budget_ms": args.budget_ms,
              "pages": {name: {"first_ms": f[0], "median_ms": f[1], "max_ms": f[2], "bytes": f[3]}
                        for name, f in figures.items()}, "over": over}
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(report, indent=1) + "\n")
    if over:
        print(f"pages over {args.budget_ms:.0f} ms (median of {args.runs}): {over}")
    return 1 if over and not args.no_budget else 0


if __name__ == "__main__":
    sys.exit(main())
