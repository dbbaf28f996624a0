"""Time budgets that used to be asserted inside tests, measured here instead (tests never assert a time).

    python bench/budgets_bench.py [--only NAME ...] [--skip-mcp] [--no-budget] [--out bench/results/budgets.json]

Each case runs the same inputs its test uses and compares a figure (a median, a worst case or a
per-call mean, as its budget says) with the budget the test held. The functional half of each
check stayed in its test; the test named beside each case. A case over budget prints `OVER` and
the script exits 1 (`--no-budget`: report only, as tests/test_bench_budgets.py runs it).
Everything runs in a private temporary HOME / ACE_HOME, removed at the end.

Cases (budget, where it came from):
- query parse, 500 KB prompt: 2 s (tests/test_retrieval.py::test_long_prompts_are_capped)
- search, 100 KB prompt: 1 s (tests/test_retrieval.py::test_a_100kb_prompt_is_safe)
- search at 10,000 lessons, median: 50 ms (formerly tests/test_retrieval.py, "a rough guard")
- sanitize (cap and redact) 20 MB of tool output: 1 s
  (tests/test_capture_text.py::test_sanitize_huge_text_is_capped_and_redacted)
- code patterns, 60 KB write, per call: 50 ms (tests/test_code_patterns.py::test_a_large_write_is_scanned)
- feedback parser, 500 random texts, worst: 50 ms; an ordinary prompt, per call: 50 µs
  (tests/test_playbook_feedback.py)
- continuity summary of a dev-corpus session, median: 100 ms
  (tests/test_continuity.py::test_every_corpus_session_gives_a_summary_row)
- statusline process: 1 s (tests/test_statusline.py::test_ace_statusline_command_and_the_fast_entry)
- hook faults — every event on every malformed input: under the event's Claude Code timeout; a
  20 MB response and a locked store: under PostToolUse's own budget; a
  1.5-million-key response (39 MB): stored truncated, under the budget (tests/test_hook_contract.py,
  tests/security/test_redaction.py::test_giant_object_is_stored_truncated)
- MCP tools at 10,000 lessons / 100,000 tool calls: every call under 1 s
  (tests/test_mcp_server.py::test_every_tool_answers_at_scale; `--skip-mcp` leaves it out)

Cost: about a minute on a quiet 2-core machine (the MCP seed is most of it).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

HERE = Path(__file__).resolve().parent
TESTS = HERE.parent / "tests"
sys.path.insert(0, str(TESTS))  # the tests' own input builders (hookutil, test_mcp_server's seed)


def private_environment(base: Path) -> None:
    """Pin every user location under `base` (this process and the hooks it starts)."""
    home = base / "home"
    for sub in ("", ".local/share", ".config", ".cache", ".local/state"):
        (home / sub).mkdir(parents=True, exist_ok=True)
    (base / "run").mkdir(mode=0o700, exist_ok=True)
    os.environ.update(HOME=str(home), XDG_DATA_HOME=str(home / ".local/share"), XDG_CONFIG_HOME=str(home / ".config"),
                      XDG_CACHE_HOME=str(home / ".cache"), XDG_STATE_HOME=str(home / ".local/state"),
                      XDG_RUNTIME_DIR=str(base / "run"), ACE_HOME=str(base / "ace-home"), ACE_LEARNING_ENABLED="0")
    for key in [k for k in os.environ if k.startswith("ACE_") and k not in ("ACE_HOME", "ACE_LEARNING_ENABLED")]:
        del os.environ[key]


def fresh_home(base: Path, name: str) -> Path:
    """A new ACE_HOME for one case (the store starts empty)."""
    home = base / f"ace-{name}"
    os.environ["ACE_HOME"] = str(home)
    return home


def git_project(path: Path) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    subprocess.run(["git", "init", "-q", str(path)], check=True)
    subprocess.run(["git", "-C", str(path), "remote", "add", "origin", "git@github.com:Acme/Widget.git"], check=True)
    return path.resolve()


def timed(fn: Callable[[], object]) -> float:
    started = time.perf_counter()
    fn()
    return time.perf_counter() - started


# -- the cases: each returns a list of (name, seconds, budget seconds, what the figure is) -------------------


def case_retrieval(base: Path) -> list[tuple]:
    from ace_engine.core.project import identify
    from ace_engine.playbook.playbook import Playbook, content_key
    from ace_engine.retrieval import query as q
    from ace_engine.retrieval.search import search
    from ace_engine.store.sqlite import SQLiteStore

    prompt = " ".join(f"word{i} identifier_{i} CamelCase{i}" for i in range(20_000))
    parse_s = timed(lambda: q.parse(prompt, max_terms=32))

    fresh_home(base, "retrieval")
    root = git_project(base / "retrieval-proj")
    rows = []
    with SQLiteStore() as store:
        playbook = Playbook(store, identify(str(root)))
        for i, text in enumerate(["JWT refresh: retry once after a 401 with a fresh token (tokens.py)",
                                  "Run `python -m pytest -q` from the repository root", "ExpiredSignatureError means "
                                  "the clock is off: set TZ=UTC in CI", "Alembic migrations need `make migrate`"] * 5):
            playbook.add(f"{text} (case {i})", "strategies")
        pid = playbook.project_id
        big = ("Traceback: ExpiredSignatureError in tokens.py line 42 -- AND OR NOT \"x\" " * 1500)[:100_000]
        search(store, pid, big, k=5)  # warm
        big_s = statistics.median(timed(lambda: search(store, pid, big, k=5)) for _ in range(5))

        rng = random.Random(3)
        words = ("invoice customer token refresh cache redis postgres migration docker compose pytest fixture "
                 "router component query mutation schema parquet pandas worker queue retry timeout header "
                 "cursor pagination webhook signature stripe bundle vite eslint clippy cargo").split()
        now = time.time()
        with store.transaction():
            for i in range(10_000):
                content = " ".join(rng.choice(words) for _ in range(18)) + f" case {i}"
                store.insert_bullet({
                    "id": f"ctx-bench{i:06d}", "project_id": pid, "section": "strategies_and_hard_rules",
                    "content": content, "domains": ["general"], "helpful": 0, "harmful": 0, "helpful_explicit": 0,
                    "harmful_explicit": 0, "confidence": 0.5, "status": "active", "provenance": {},
                    "content_key": content_key(content), "created_at": now, "updated_at": now,
                    "last_used_at": None, "retrieval_count": 0})
        prompts = ["the invoice webhook signature fails after the stripe retry", "pytest fixture for the redis cache",
                   "vite bundle too big after adding the router", "cargo clippy complains about the parquet worker"]
        search(store, pid, prompts[0])
        times = [timed(lambda p=p: search(store, pid, p, k=5)) for p in prompts * 5]
    rows += [("query parse, 500 KB prompt", parse_s, 2.0, "one run"),
             ("search, 100 KB prompt", big_s, 1.0, "median of 5"),
             ("search at 10,000 lessons", statistics.median(times), 0.05, "median of 20")]
    return rows


def case_patterns_and_feedback(base: Path) -> list[tuple]:
    from ace_engine.learning import code_patterns

    table = code_patterns.builtin()
    from ace_engine.playbook.feedback import parse_feedback

    block = ("def f(a, b=None):\n    with open(a) as fh:\n        return [x for x in fh if x.strip() == b]\n\n" * 600
             + "except:\n    pass\n")
    per_call = timed(lambda: [table.detect("Write", {"file_path": "big.py", "content": block}) for _ in range(10)]) / 10

    rng = random.Random(7)
    alphabet = "abcdefghijklmnopqrstuvwxyz ctx-0123456789 .,;:!?'\"`\n\t()[]{}<>/\\é日本"
    worst = 0.0
    for _ in range(500):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randrange(2000)))
        worst = max(worst, timed(lambda t=text: list(parse_feedback(t + " ctx-01abc that tip helped"))))
    prompt = "The login test fails with a 401 after the token refresh; find the cause and fix it. " * 3
    ordinary = timed(lambda: [parse_feedback(prompt) for _ in range(2000)]) / 2000
    from ace_engine.redact.sanitize import sanitize

    line = "src/module.py:12: assert value == expected  # ok\n"
    text = (line * 3 + "export GITHUB_TOKEN=ghp_" + "A1b2C3d4" * 5 + "\n" + line * (20_000_000 // len(line))
            + "\nAuthorization: Bearer abc123DEF456ghi789\n")
    sanitize_s = timed(lambda: sanitize(text, 20_000))
    return [("sanitize, 20 MB tool output", sanitize_s, 1.0, "one run"),
            ("code patterns, 60 KB write", per_call, 0.05, "mean of 10"),
            ("feedback parser, random text ≤ 2,000 chars", worst, 0.05, "worst of 500"),
            ("feedback parser, ordinary prompt", ordinary, 50e-6, "mean of 2,000")]


def case_statusline(base: Path) -> list[tuple]:
    from ace_engine.store.sqlite import SQLiteStore

    fresh_home(base, "statusline")
    root = git_project(base / "statusline-proj")
    with SQLiteStore():
        pass
    payload = json.dumps({"session_id": "s1", "cwd": str(root)})
    argv = [sys.executable, "-I", "-m", "ace_engine.integrations.statusline"]

    def once() -> None:
        proc = subprocess.run(argv, input=payload, capture_output=True, text=True, timeout=60)
        if proc.returncode != 0 or not proc.stdout.startswith("ace ·"):
            raise SystemExit(f"statusline failed: {proc!r}")

    once()
    return [("statusline process", statistics.median(timed(once) for _ in range(5)), 1.0, "median of 5")]


def case_hook_faults(base: Path) -> list[tuple]:
    from ace_engine.hooks.events import EVENTS
    from hookutil import payload, run_hook

    bad_inputs = [b"", b"not json", b"[1, 2, 3]", b'{"session_id": "s\xff\xfe", "prompt": "caf\xc3"}',
                  b'{"session_id": 5, "cwd": 7, "prompt": ["a"], "tool_name": {}, "tool_input": 3}', b"{}"]
    rows = []
    fresh_home(base, "faults")
    cwd = str(git_project(base / "faults-proj"))
    for event in sorted(EVENTS):
        worst = 0.0
        for raw in bad_inputs:
            code, _, err, seconds = run_hook(event, raw, cwd=cwd, timeout=120)
            if code != 0:
                raise SystemExit(f"{event} exited {code} on bad input: {err}")
            worst = max(worst, seconds)
        rows.append((f"hook {event}, malformed input", worst, float(EVENTS[event]["timeout"]),
                     f"worst of {len(bad_inputs)}"))
    budget = float(EVENTS["PostToolUse"]["budget"])

    def tool(n: str, response: object) -> dict:
        return payload("PostToolUse", cwd, tool_name="Bash", tool_use_id=n, tool_input={"command": "dump"},
                       tool_response=response)

    _, _, _, huge_s = run_hook("PostToolUse", tool("big-1", {"stdout": "x" * (20 * 1024 * 1024), "stderr": ""}),
                               timeout=120)
    rows.append(("hook PostToolUse, 20 MB response", huge_s, budget, "one run"))

    home = fresh_home(base, "locked")
    run_hook("SessionStart", payload("SessionStart", cwd, source="startup"), timeout=120)
    locker = sqlite3.connect(home / "ace.db", isolation_level=None)
    locker.execute("BEGIN EXCLUSIVE")
    try:
        _, _, _, locked_s = run_hook("PostToolUse", tool("l-1", {"stdout": "ok"}), timeout=120)
    finally:
        locker.execute("ROLLBACK")
        locker.close()
    rows.append(("hook PostToolUse, store locked", locked_s, budget, "one run"))

    home = fresh_home(base, "giant")
    run_hook("SessionStart", payload("SessionStart", cwd, source="startup"), timeout=120)  # the store exists
    giant = {f"k{i}": [i, "v"] for i in range(1_500_000)}
    _, _, _, giant_s = run_hook("PostToolUse", tool("t-giant", giant), timeout=120)
    con = sqlite3.connect(home / "ace.db")
    try:
        row = con.execute("SELECT response FROM tool_events WHERE tool_use_id='t-giant'").fetchone()
    except sqlite3.OperationalError:
        row = None
    finally:
        con.close()
    stored = row is not None and "[ace:" in row[0] and len(row[0]) < 100_000
    rows.append(("hook PostToolUse, 1.5M-key response (39 MB)", giant_s if stored else float("inf"), budget,
                 "one run; stored truncated" if stored else "one run; RECORD LOST (the watchdog fired first)"))
    return rows


def case_mcp(base: Path) -> list[tuple]:
    from ace_engine.store.sqlite import SQLiteStore
    from test_mcp_server import EVENTS as SCALE_EVENTS
    from test_mcp_server import git_project as mcp_project
    from test_mcp_server import run_calls, seed_scale

    fresh_home(base, "mcp")
    root = mcp_project(base / "mcp-big")
    with SQLiteStore() as store:
        lesson = seed_scale(store, root, random.Random(13))
        assert store.counts()["tool_events"] == SCALE_EVENTS
    calls = [
        ("search_lessons", {"query": "the login keeps returning 401 after the JWT refresh", "k": 10}),
        ("get_lesson", {"id": lesson}),
        ("search_history", {"query": "npm run build"}),
        ("search_history", {"query": "this phrase was never captured anywhere"}),
        ("search_history", {"query": "pytest", "since": "2d"}),
        ("recent_failures", {}),
        ("recent_failures", {"command": "cargo test"}),
        ("mark_lesson", {"id": lesson, "verdict": "helpful", "reason": "it applied"}),
    ]
    _, results = run_calls(root, calls, allow_writes=True)
    rows = []
    for call in results:
        if call.is_error:
            raise SystemExit(f"MCP {call.name} failed: {call.text}")
        rows.append((f"MCP {call.name} {json.dumps(list(call.args.values())[:1])}", call.seconds, 1.0, "one call"))
    return rows


def case_continuity(base: Path) -> list[tuple]:
    from ace_engine.continuity import update
    from ace_engine.observe import transcript
    from test_continuity import corpus_file, corpus_summaries

    costs = []
    for name, _, _ in corpus_summaries():
        parsed = transcript.parse_file(str(corpus_file(name)))
        costs.append(timed(lambda n=name, p=parsed: update.row_for(n, 1, update.transcript_summary(p, p["cwd"]),
                                                                  "offline")))
    return [("continuity summary of a dev-corpus session", statistics.median(costs), 0.1,
             f"median of {len(costs)}")]


CASES = {"retrieval": case_retrieval, "continuity": case_continuity, "patterns": case_patterns_and_feedback,
         "statusline": case_statusline,
         "hooks": case_hook_faults, "mcp": case_mcp}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", nargs="*", choices=sorted(CASES), help="run only these case groups")
    parser.add_argument("--skip-mcp", action="store_true", help="leave out the MCP case (its seed takes ~30 s)")
    parser.add_argument("--no-budget", action="store_true", help="report only (exit 0 whatever the figures)")
    parser.add_argument("--out", default=str(HERE / "results" / "budgets.json"))
    args = parser.parse_args()
    chosen = args.only or [name for name in CASES if not (args.skip_mcp and name == "mcp")]
    base = Path(tempfile.mkdtemp(prefix="ace-budgets-"))
    try:
        private_environment(base)
        rows = [row for name in chosen for row in CASES[name](base)]
    finally:
        shutil.rmtree(base, ignore_errors=True)
    print(f"{'case':64} {'figure':>10} {'budget':>10}  what")
    over = []
    for name, seconds, budget, what in rows:
        flag = "" if seconds < budget else "  OVER"
        print(f"{name:64} {seconds * 1000:8.2f}ms {budget * 1000:8.2f}ms  {what}{flag}")
        if flag:
            over.append(name)
    report = {"at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "machine": platform.machine(),
              "cpus": os.cpu_count(), "load": os.getloadavg(), "python": platform.python_version(),
              "cases": [{"name": n, "seconds": s, "budget_seconds": b, "figure": w, "ok": s < b}
                        for n, s, b, w in rows]}
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(report, indent=1, ensure_ascii=False) + "\n")
    print(f"{len(rows) - len(over)} within budget, {len(over)} over" + (f": {', '.join(over)}" if over else ""))
    return 1 if over and not args.no_budget else 0


if __name__ == "__main__":
    sys.exit(main())
