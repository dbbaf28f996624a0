"""Learning benchmark: heuristic learning and curation against a large playbook, in a real store.

    python bench/learning_bench.py [--bullets 10000] [--steps 200] [--candidates 1000] [--out bench/results/learning.json]

1. A 200-step task, captured through the real hook records into the store and queued as a job,
   learned end to end (`pipeline.learn_job`: turns, git context, history, heuristic reflector,
   curator, recording) into a 10,000-bullet playbook. Target ≤ 1 s.
2. 1,000 candidate lessons (new ones, exact and near duplicates of existing bullets) curated into
   10,000 bullets in one transaction. Target ≤ 5 s. Also run against 1,000 bullets: duplicate
   search goes through the FTS index, so 10× the playbook must not cost anywhere near 10× the time.
3. The Stop hook's queueing (`enqueue_job`) in isolation.
"""

import argparse
import json
import os
import random
import statistics
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "src"))


def shown(path: str) -> str:
    """`path` as the report records it: relative to the repository, or its name alone when outside
    (a report means the same on every machine)."""
    full, repo = os.path.abspath(path), os.path.dirname(HERE)
    return os.path.relpath(full, repo) if full.startswith(repo + os.sep) else os.path.basename(full)


TARGETS = {"learn_200_steps_s": 1.0, "curate_1000_candidates_s": 5.0}

WORDS = ("cart checkout invoice payment refund customer order shipment inventory price discount coupon session "
         "token auth user profile avatar upload export import report cache queue worker scheduler webhook email "
         "template render parser lexer config settings migration schema index search filter paginate serializer").split()
COMMANDS = ["python -m pytest -q", "npm test", "npm run build", "ruff check src", "mypy src", "cargo test", "go test ./...",
            "make lint", "pnpm test", "uv run pytest -q"]
ERRORS = ["TypeError: unsupported operand type(s) for +: 'int' and 'str'", "KeyError: 'user_id'",
          "AttributeError: 'NoneType' object has no attribute 'id'", "error TS2322: Type 'string' is not assignable to type 'number'.",
          "ModuleNotFoundError: No module named 'yaml'", "AssertionError: assert 200 == 404",
          "error[E0308]: mismatched types", "ValueError: invalid literal for int() with base 10: 'abc'"]


def lesson(rng: random.Random, i: int) -> tuple[str, str]:
    a, b, c = rng.sample(WORDS, 3)
    kind = i % 5
    if kind == 0:
        return (f"When `{rng.choice(COMMANDS)}` fails with `{rng.choice(ERRORS)}` in {a}_{i}.py: the fix was in "
                f"src/{b}/{c}_{i}.py, `{a}.{b}` → `{a}.{b}_{i}`."), "troubleshooting_and_pitfalls"
    if kind == 1:
        return f"`src/{a}/{b}_{i}.py` and `src/{a}/{c}_{i}.py` are usually changed together: when you edit one, check the other.", \
            "strategies_and_hard_rules"
    if kind == 2:
        return f"Use `{a}_{i}.{b}()` for {c} lookups in the {a} service; never query the {b} table directly.", "apis_to_use"
    if kind == 3:
        return (f"The {a} {b} {i} lives in `src/{a}/{b}_{i}.py`; its tests are in `tests/test_{b}_{i}.py` and need the "
                f"`{c}_{i}` fixture."), "strategies_and_hard_rules"
    return f"Build the {a} {b} payload with `{c}_{i}_payload(data)`; it validates {a} and {b} before sending.", \
        "useful_code_snippets"


def seed(store, project, n: int, rng: random.Random):
    from ace_engine.playbook.playbook import Playbook

    pb = Playbook(store, project)
    now = time.time()
    contents = []
    with store.transaction():
        with pb:
            for i in range(n):
                content, section = lesson(rng, i)
                pb.add(content, section, helpful=rng.randint(0, 6), harmful=rng.randint(0, 2), source="import",
                       now=now - rng.randint(0, 60) * 86400)
                contents.append((content, section))
    return pb, contents


def record(project, session: str, at: float, event: str, **extra) -> dict:
    from ace_engine.hooks import records
    from ace_engine.hooks.hook_input import HookInput

    r = records.base_record(HookInput.parse(event, {"session_id": session, "cwd": project.root}), at, project)
    r.update(extra)
    return r


def capture_task(store, project, session: str, steps: int, rng: random.Random, cfg) -> None:
    """A realistic long task through the hook records: reads, edits, failing and passing checks."""
    from ace_engine.hooks import records
    from ace_engine.hooks.hook_input import HookInput

    t = time.time() - steps
    store.apply(record(project, session, t, "SessionStart"))
    store.apply({**record(project, session, t + 0.1, "UserPromptSubmit"),
                 "message": records.message("user", "Refactor the checkout flow and make the test suite pass", cfg)})
    for n in range(steps):
        at = t + 1 + n * 0.5
        roll = n % 10
        path = f"{project.root}/src/{rng.choice(WORDS)}/{rng.choice(WORDS)}.py"
        if roll in (0, 1, 2):
            payload = {"tool_name": "Read", "tool_input": {"file_path": path},
                       "tool_response": {"type": "text", "file": {"filePath": path, "content": "x = 1\n" * 40, "numLines": 40}}}
            event = "PostToolUse"
        elif roll in (3, 4, 5):
            payload = {"tool_name": "Edit", "tool_input": {"file_path": path, "old_string": f"{rng.choice(WORDS)} = 1",
                                                           "new_string": f"{rng.choice(WORDS)} = 2"},
                       "tool_response": {"filePath": path}}
            event = "PostToolUse"
        elif roll == 6:
            payload = {"tool_name": "Bash", "tool_input": {"command": "python -m pytest -q"},
                       "error": f"Exit code 1\nFAILED tests/test_{rng.choice(WORDS)}.py::test_x - {rng.choice(ERRORS)}\n1 failed"}
            event = "PostToolUseFailure"
        elif roll == 7:
            payload = {"tool_name": "Grep", "tool_input": {"pattern": rng.choice(WORDS)}, "tool_response": {"numFiles": 3}}
            event = "PostToolUse"
        else:
            cmd = rng.choice(["python -m pytest -q", "ruff check src", "git status", "mypy src"])
            payload = {"tool_name": "Bash", "tool_input": {"command": cmd},
                       "tool_response": {"stdout": "All checks passed!\n42 passed in 3.1s", "stderr": "", "interrupted": False}}
            event = "PostToolUse"
        payload.update(tool_use_id=f"toolu_{session}_{n}", duration_ms=rng.randint(5, 4000))
        r = record(project, session, at, event, detail=payload["tool_name"])
        r["tool_event"] = records.tool_event(HookInput.parse(event, payload), cfg)
        store.apply(r)
    store.apply({**record(project, session, t + steps, "Stop"),
                 "message": records.message("assistant", "Refactored checkout; the suite passes.", cfg)})


def timed(fn, repeat: int = 1):
    times, result = [], None
    for _ in range(repeat):
        started = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - started)
    return statistics.median(times), result


def bench_learn(tmp: str, bullets: int, steps: int) -> dict:
    from ace_engine.core import config
    from ace_engine.core.project import Project
    from ace_engine.learning import pipeline
    from ace_engine.store.sqlite import SQLiteStore

    rng = random.Random(7)
    root = os.path.join(tmp, "learn-project")
    os.makedirs(root)
    project = Project(root, None)
    # The premise is a 10,000-bullet playbook: the size cap (default 500) would prune it away on the
    # first job (that cost is measured on its own, `bench_prune`).
    cfg = dict(config.load(root).values, **{"learning.max_bullets": 0, "learning.max_tokens": 0})
    with SQLiteStore(os.path.join(tmp, "learn.db")) as store:
        seed_s, _ = timed(lambda: seed(store, project, bullets, rng))
        runs = []
        for round_ in range(3):
            session = f"bench-{round_}"
            capture_task(store, project, session, steps, rng, cfg)
            job_id = store.enqueue_job(session, None, None, "Stop", time.time())
            job = store.claim_job(store.project_id(project.key), os.getpid(), time.time(), 600)
            assert job["id"] == job_id
            seconds, summary = timed(lambda: pipeline.learn_job(store, job, cfg=cfg))
            runs.append((seconds, summary))
        best = statistics.median(s for s, _ in runs)
        summary = runs[-1][1]
        active = store.count_bullets(store.project_id(project.key), include_global=False)
    return {"playbook_bullets": bullets, "steps": steps, "seed_seconds": round(seed_s, 2),
            "learn_job_seconds_runs": [round(s, 3) for s, _ in runs], "learn_200_steps_s": round(best, 3),
            "candidates": summary["candidates"], "created": summary["created"], "updated": summary["updated"],
            "active_after": active}


def candidates(contents, n: int, rng: random.Random) -> list[dict]:
    out = []
    for i in range(n):
        roll = i % 4
        if roll == 0:  # brand new
            content, section = lesson(rng, 1_000_000 + i)
        elif roll == 1:  # exact duplicate (case and spacing differ)
            content, section = rng.choice(contents)
            content = "  " + content.upper()[:1] + content[1:] + " "
        elif roll == 2:  # near duplicate: a few words added
            content, section = rng.choice(contents)
            content = content.rstrip(".") + " (seen again in this project)."
        else:  # related but different: same template, other names
            content, section = lesson(rng, 2_000_000 + i)
        out.append({"content": content, "section": section, "evidence": f"bench candidate {i}", "source_steps": []})
    return out


def bench_curate(tmp: str, bullets: int, n: int, label: str) -> dict:
    from ace_engine.core import config
    from ace_engine.core.project import Project
    from ace_engine.learning.curator import Curator
    from ace_engine.store.sqlite import SQLiteStore

    rng = random.Random(11)
    root = os.path.join(tmp, f"curate-{label}")
    os.makedirs(root)
    project = Project(root, None)
    settings = dict(config.DEFAULTS, **{"learning.max_bullets": 0, "learning.max_tokens": 0})
    with SQLiteStore(os.path.join(tmp, f"curate-{label}.db")) as store:
        pb, contents = seed(store, project, bullets, rng)
        batch = candidates(contents, n, rng)
        traj = {"task": "bench", "trajectory": [], "result": {"success": True}, "session_id": "bench", "playbook_used": []}

        def run():
            with store.transaction():
                return Curator(pb, settings).curate({"candidates": batch, "tags": []}, traj)

        seconds, stats = timed(run)
    return {"playbook_bullets": bullets, "candidates": n, "seconds": round(seconds, 3),
            "created": stats["created"], "updated": stats["updated"], "merged": stats["merged"],
            "rejected": stats["rejected"], "quarantined": stats["quarantined"],
            "per_candidate_ms": round(seconds / n * 1000, 3)}


def bench_prune(tmp: str, bullets: int) -> dict:
    """The first curation after a playbook grew far past the default cap: archive down to it."""
    from ace_engine.core import config
    from ace_engine.core.project import Project
    from ace_engine.learning.curator import Curator
    from ace_engine.store.sqlite import SQLiteStore

    root = os.path.join(tmp, "prune-project")
    os.makedirs(root)
    with SQLiteStore(os.path.join(tmp, "prune.db")) as store:
        pb, _ = seed(store, Project(root, None), bullets, random.Random(5))
        traj = {"task": "bench", "trajectory": [], "result": {"success": True}, "session_id": "bench", "playbook_used": []}

        lesson_ = {"content": "Run the tests with `python -m pytest -q` (verified in this project).",
                   "section": "strategies_and_hard_rules", "evidence": "bench"}

        def run():  # one new lesson: the playbook grew, the cap applies
            with store.transaction():
                return Curator(pb, dict(config.DEFAULTS)).curate({"candidates": [lesson_], "tags": []}, traj)

        seconds, stats = timed(run)
        left = store.count_bullets(pb.project_id, include_global=False)
    return {"playbook_bullets": bullets, "cap": config.DEFAULTS["learning.max_bullets"], "pruned": stats["pruned"],
            "active_after": left, "seconds": round(seconds, 3)}


def bench_enqueue(tmp: str, runs: int = 200) -> dict:
    from ace_engine.core import config
    from ace_engine.core.project import Project
    from ace_engine.store.sqlite import SQLiteStore

    rng = random.Random(3)
    root = os.path.join(tmp, "enqueue-project")
    os.makedirs(root)
    project = Project(root, None)
    cfg = config.load(root)
    times = []
    with SQLiteStore(os.path.join(tmp, "enqueue.db")) as store:
        for n in range(runs):
            session = f"q-{n % 20}"
            capture_task(store, project, session, 3, rng, cfg) if n < 20 else store.apply(
                {**record(project, session, time.time(), "Stop"), "message": {"role": "assistant", "text": "ok"}})
            started = time.perf_counter()
            store.enqueue_job(session, None, None, "Stop", time.time())
            times.append(time.perf_counter() - started)
    return {"runs": runs, "median_ms": round(statistics.median(times) * 1000, 3),
            "p95_ms": round(sorted(times)[int(runs * 0.95)] * 1000, 3)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--bullets", type=int, default=10_000)
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--candidates", type=int, default=1_000)
    parser.add_argument("--out", default=os.path.join(HERE, "results", "learning.json"))
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="ace-learn-bench-") as tmp:
        os.environ["ACE_HOME"] = os.path.join(tmp, "home")
        os.environ["XDG_CONFIG_HOME"] = os.path.join(tmp, "cfg")
        learn = bench_learn(tmp, args.bullets, args.steps)
        curate = bench_curate(tmp, args.bullets, args.candidates, "large")
        curate_small = bench_curate(tmp, max(1, args.bullets // 10), args.candidates, "small")
        prune = bench_prune(tmp, args.bullets)
        enqueue = bench_enqueue(tmp)
    report = {
        "python": shown(sys.executable), "version": sys.version.split()[0], "machine": os.uname().machine,
        "cpus": os.cpu_count(),
        "when": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "learn": learn, "curate": curate, "curate_small_playbook": curate_small, "prune_to_cap": prune,
        "enqueue": enqueue,
        "targets": TARGETS,
        "ok": learn["learn_200_steps_s"] <= TARGETS["learn_200_steps_s"]
        and curate["seconds"] <= TARGETS["curate_1000_candidates_s"],
    }
    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    with open(args.out, "w") as fh:
        json.dump(report, fh, indent=2)
    print(f"learn a {learn['steps']}-step task into {learn['playbook_bullets']} bullets: {learn['learn_200_steps_s']} s "
          f"(target ≤ {TARGETS['learn_200_steps_s']} s; runs {learn['learn_job_seconds_runs']}; "
          f"{learn['candidates']} candidates → +{learn['created']} ~{learn['updated']})")
    print(f"curate {curate['candidates']} candidates into {curate['playbook_bullets']} bullets: {curate['seconds']} s "
          f"(target ≤ {TARGETS['curate_1000_candidates_s']} s; +{curate['created']} ~{curate['updated']} "
          f"merged {curate['merged']} rejected {curate['rejected']})")
    print(f"  same into {curate_small['playbook_bullets']} bullets: {curate_small['seconds']} s")
    print(f"first curation past the cap: {prune['pruned']} of {prune['playbook_bullets']} archived down to "
          f"{prune['active_after']} in {prune['seconds']} s")
    print(f"enqueue (Stop hook's SQL): median {enqueue['median_ms']} ms, p95 {enqueue['p95_ms']} ms")
    print(f"written to {args.out}")
    if not report["ok"]:
        sys.exit(1)


if __name__ == "__main__":
    main()
