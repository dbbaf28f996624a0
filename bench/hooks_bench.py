"""Hook benchmark: whole hook processes, timed against the bare start of the same interpreter.

    python bench/hooks_bench.py [--runs 15] [--python PATH] [--out bench/results/hooks.json]
    python bench/hooks_bench.py --agent codex|gemini|antigravity   (-> bench/results/hooks_AGENT.json)
    python bench/hooks_bench.py --events SessionStart --touch-anchors --skip-concurrency --out X.json

For each case, baseline (`python -c pass`) and hook runs are interleaved so that machine noise hits
both alike; we report medians, the ratio hook/baseline, and each hook's peak RSS (from wait4).
Then 8 processes x 500 PostToolUse events hit one store concurrently; all 4,000 rows must be there.
With `--agent codex|gemini|antigravity` the same cases run as that agent's hooks (the command `ace install
--agent` writes, the agent's own event names and payload shapes, as its CLI sends them), against the
same budgets: each agent event is held to the target of the Claude Code event it is handled as.
"""

import argparse
import json
import os
import shlex
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def shown(path: str) -> str:
    """`path` as the report records it: relative to the repository, or its name alone when outside
    (a report means the same on every machine)."""
    full, repo = os.path.abspath(path), os.path.dirname(HERE)
    return os.path.relpath(full, repo) if full.startswith(repo + os.sep) else os.path.basename(full)


# Ratio targets (hook / bare interpreter start). UserPromptSubmit, SessionStart and PreToolUse run
# against a playbook of `--bullets` active bullets (10,000 by default).
# Stop runs last: the learning workers it starts would compete for the CPU with later cases.
TARGETS = {"PostToolUse": 3.0, "SessionStart": 3.5, "UserPromptSubmit": 4.0, "PreToolUse": 3.0, "Stop": 3.5}
MAX_RSS_MIB = 25.0


def run_once(argv: list[str], stdin: bytes, env: dict) -> tuple[float, float, int]:
    """(seconds, peak RSS MiB, exit code) of one process."""
    started = time.perf_counter()
    proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, env=env)
    proc.stdin.write(stdin)
    proc.stdin.close()
    _, status, usage = os.wait4(proc.pid, 0)
    elapsed = time.perf_counter() - started
    proc.returncode = os.waitstatus_to_exitcode(status)
    return elapsed, usage.ru_maxrss / 1024, proc.returncode


def payloads(event: str, cwd: str, n: int) -> bytes:
    # A fresh session per SessionStart / prompt run, so every run really searches and injects.
    session = f"bench-{event}-{n}" if event in ("SessionStart", "UserPromptSubmit") else "bench-session"
    base = {"session_id": session, "transcript_path": os.path.join(cwd, "t.jsonl"), "cwd": cwd,
            "hook_event_name": event, "permission_mode": "default"}
    if event == "PostToolUse":
        response = ("collected 42 items\n" + "tests/test_api.py ......... [ 21%]\n" * 60)[:2048]
        base.update(tool_name="Bash", tool_use_id=f"toolu_bench_{n}", duration_ms=812,
                    tool_input={"command": "python -m pytest -q tests", "description": "Run tests"},
                    tool_response={"stdout": response, "stderr": "", "interrupted": False, "isImage": False})
    elif event == "SessionStart":
        base.update(source="startup")
    elif event == "UserPromptSubmit":
        base.update(prompt="The login test fails with a 401 after the token refresh; find the cause and fix it.")
    elif event == "PreToolUse":
        # Same file every run: the first run shifts the session's domain, the measured ones don't.
        base.update(tool_name="Read", tool_use_id=f"toolu_pre_{n}",
                    tool_input={"file_path": os.path.join(cwd, "src", "api", "auth", "tokens.py")})
    elif event == "Stop":
        base.update(stop_hook_active=False, last_assistant_message="Fixed the refresh: tests pass (42 passed).")
    return json.dumps(base).encode()


# Per agent: (its event, the event it is handled as), in the order they run (Stop last).
AGENT_CASES = {
    "claude": [(event, event) for event in TARGETS],
    "codex": [(event, event) for event in TARGETS],  # Codex uses Claude Code's event names
    "gemini": [("AfterTool", "PostToolUse"), ("SessionStart", "SessionStart"), ("BeforeAgent", "UserPromptSubmit"),
               ("AfterAgent", "Stop")],  # no PreToolUse: Gemini's BeforeTool takes no context
    "antigravity": [("PostToolUse", "PostToolUse"), ("SessionStart", "SessionStart"), ("Stop", "Stop")],
}


def agent_payload(agent: str, native: str, event: str, cwd: str, n: int) -> bytes:
    """The payload of `native` as `agent` sends it (shapes from tests/fixtures/agents/hook_payloads.json)."""
    data = json.loads(payloads(event, cwd, n))
    if agent == "claude":
        return json.dumps(data).encode()
    data["hook_event_name"] = native
    if agent == "antigravity":  # camelCase, agy's own tool names (tests/test_antigravity.py)
        agy = {"conversationId": data["session_id"], "stepIdx": n, "workspacePaths": [cwd],
               "transcriptPath": os.path.join(cwd, "transcript.jsonl"), "artifactDirectoryPath": cwd}
        if event == "PostToolUse":
            command = data["tool_input"]["command"]
            agy["toolCall"] = {"name": "run_command", "args": {"CommandLine": command, "Cwd": cwd}}
        return json.dumps(agy).encode()
    if agent == "codex":
        data.update(model="gpt-5.5", turn_id="turn-1", transcript_path=os.path.join(cwd, "rollout.jsonl"))
        if event == "PostToolUse":  # the output text only; the exit code is read from the rollout file
            data["tool_response"] = data["tool_response"]["stdout"]
            data["tool_use_id"] = "call_bench"
        elif event == "PreToolUse":
            data.update(tool_name="apply_patch", tool_input={"command": "*** Begin Patch\n*** Update File: "
                        "src/api/auth/tokens.py\n@@\n-TTL = 60\n+TTL = 300\n*** End Patch\n"})
    else:
        data.pop("permission_mode", None)
        data["timestamp"] = "2026-11-27T14:29:44.186Z"
        if event == "PostToolUse":
            out = data.pop("tool_response")["stdout"]
            data.update(tool_name="run_shell_command", tool_input={"command": data["tool_input"]["command"]},
                        tool_response={"llmContent": f"<untrusted_context>\nOutput: {out}\nProcess Group PGID: 7\n"
                                       "</untrusted_context>", "returnDisplay": out})
            data.pop("tool_use_id", None)
            data.pop("duration_ms", None)
        elif event == "Stop":
            data["prompt_response"] = data.pop("last_assistant_message")
    return json.dumps(data).encode()


def write_codex_rollout(cwd: str) -> None:
    """A Codex rollout file of ~200 KB ending with the shell call the PostToolUse payload names."""
    filler = json.dumps({"type": "response_item", "payload": {"type": "message", "content": "x" * 900}})
    item = {"type": "event_msg", "payload": {"type": "item_completed", "item": {
        "type": "CommandExecution", "id": "call_bench", "status": "completed", "exit_code": 0}}}
    with open(os.path.join(cwd, "rollout.jsonl"), "w") as fh:
        fh.write((filler + "\n") * 220 + json.dumps(item) + "\n")


def hook_argv(python: str, event: str, agent: str = "claude") -> list[str]:
    """Exactly the command `ace install` (`--agent AGENT`) writes into the agent's settings."""
    if agent != "claude":
        from ace_engine.integrations.agent_hooks import hook_command as agent_command

        return shlex.split(agent_command(agent, event, python))
    from ace_engine.integrations.claude_settings import hook_command

    return shlex.split(hook_command(event, python))


def bench_event(python: str, event: str, runs: int, env: dict, cwd: str, agent: str = "claude",
                native: str | None = None, touch: str | None = None) -> dict:
    """`touch`: a file (relative to `cwd`) whose mtime moves before each hook run, so that a
    SessionStart's anchor check re-reads it and judges every lesson anchored there."""
    native = native or event
    base_times, hook_times, rss = [], [], []
    for n in range(runs + 2):
        b, _, _ = run_once([python, "-c", "pass"], b"", env)
        if touch:
            os.utime(os.path.join(cwd, touch), ns=(time.time_ns(), time.time_ns()))
        stdin = agent_payload(agent, native, event, cwd, n)
        h, peak, code = run_once(hook_argv(python, native, agent), stdin, env)
        if code != 0:
            raise SystemExit(f"{agent} {native} hook exited {code}")
        if n >= 2:  # the first runs warm the page cache and create the store
            base_times.append(b)
            hook_times.append(h)
            rss.append(peak)
    base, hook = statistics.median(base_times), statistics.median(hook_times)
    named = {} if agent == "claude" else {"agent": agent, "agent_event": native}
    return {"event": event, **named, "runs": runs, "baseline_ms": round(base * 1000, 2),
            "hook_ms": round(hook * 1000, 2),
            "ratio": round(hook / base, 2), "target_ratio": TARGETS[event],
            "peak_rss_mib": round(max(rss), 1), "ok": hook / base <= TARGETS[event] and max(rss) <= MAX_RSS_MIB}


AREAS = [
    ("auth-jwt", "JWT refresh", "src/api/auth/tokens.py", "a 401 after the access token expires"),
    ("python-testing", "pytest fixtures", "tests/conftest.py", "ModuleNotFoundError when run outside the repo root"),
    ("database", "Alembic migrations", "src/db/migrations/env.py", "autogenerate misses models not imported"),
    ("docker", "Docker builds", "Dockerfile", "layer cache busted by copying the whole tree first"),
    ("frontend-react", "React effects", "web/src/components/Cart.tsx", "an effect that refetches on every render"),
    ("ci", "CI workflows", ".github/workflows/test.yml", "a cache key without the lock file hash"),
    ("http-api", "FastAPI endpoints", "src/api/routes/orders.py", "a 422 from a missing Pydantic field"),
    ("linting", "ruff", "pyproject.toml", "an unused import flagged as F401 in __init__ re-exports"),
]
VERBS = ["Run", "Check", "Prefer", "Avoid", "Use", "Remember", "Pin", "Reset", "Regenerate", "Log"]


def seed_playbook(env: dict, cwd: str, bullets: int, write_time: bool = False) -> None:
    """`bullets` varied, distinct active bullets over several domains, through the real Playbook;
    with `write_time`, then the full model's write-time vectors of every one, as the learning worker
    writes them (embed/write_time.py: every lesson then has a second vector the hook reads)."""
    code = (
        "import sys, random\n"
        "from ace_engine.store.sqlite import SQLiteStore\n"
        "from ace_engine.playbook.playbook import Playbook\n"
        "from ace_engine.core.project import identify\n"
        f"areas, verbs, n, cwd = {AREAS!r}, {VERBS!r}, {bullets}, {cwd!r}\n"
        "rng = random.Random(7)\n"
        "sections = ['strategies_and_hard_rules', 'useful_code_snippets', 'troubleshooting_and_pitfalls', 'apis_to_use']\n"
        "with SQLiteStore() as store:\n"
        "    pb = Playbook(store, identify(cwd))\n"
        "    with pb:\n"
        "        for i in range(n):\n"
        "            domain, topic, path, symptom = areas[i % len(areas)]\n"
        "            verb = verbs[rng.randrange(len(verbs))]\n"
        "            text = (f'{topic} #{i}: {verb.lower()} the step in {path} that handles case {i * 7919 % 10007}; '\n"
        "                    f'otherwise expect {symptom} (seen in session {i // 3}).')\n"
        "            b, _ = pb.add(text, sections[i % 4], domains=[domain])\n"
        "            if i % 5 == 0:\n"
        "                pb.tag(b['id'], 'helpful', count=1 + i % 4)\n"
        # What each lesson rests on (the file it names), as the learner records it, where this
        # ace-engine records anchors: the SessionStart check then stats those files.
        "    try:\n"
        "        from ace_engine.playbook import staleness\n"
        "    except ImportError:\n"
        "        staleness = None\n"
        "    if staleness is not None:\n"
        "        import os, time\n"
        "        for _, _, path, _ in areas:\n"
        "            os.makedirs(os.path.join(cwd, os.path.dirname(path)), exist_ok=True)\n"
        "            open(os.path.join(cwd, path), 'w').write('# ' + path + '\\n')\n"
        "        with store.transaction():\n"
        "            for b in store.list_bullets(pb.project_id, include_global=False, limit=n):\n"
        "                staleness.record(store, dict(b), cwd, time.time())\n"
        "        print('anchors:', store.conn.execute('SELECT COUNT(*) FROM lesson_anchors').fetchone()[0])\n"
    )
    if write_time:
        code += ("    from ace_engine.embed import write_time\n"
                 "    print('write-time vectors:', write_time.refresh(store))\n")
    subprocess.run([sys.executable, "-c", code], env=env, check=True)


def bench_concurrency(python: str, env: dict, processes: int = 8, events: int = 500) -> dict:
    """`processes` workers each push `events` PostToolUse payloads through the real engine."""
    worker = (
        "import io, json, sys\n"
        "from ace_engine.hooks import engine\n"
        "w, n = int(sys.argv[1]), int(sys.argv[2])\n"
        "for i in range(n):\n"
        "    d = {'session_id': f'c{w}', 'cwd': '/', 'hook_event_name': 'PostToolUse', 'tool_name': 'Bash',\n"
        "         'tool_use_id': f'c{w}-{i}', 'tool_input': {'command': f'echo {i}'},\n"
        "         'tool_response': {'stdout': 'x' * 2000, 'stderr': ''}}\n"
        "    try:\n"
        "        engine.main(['PostToolUse'], stdin=io.BytesIO(json.dumps(d).encode()), stdout=io.StringIO())\n"
        "    except SystemExit:\n"
        "        pass\n"
    )
    started = time.perf_counter()
    procs = [subprocess.Popen([python, "-c", worker, str(w), str(events)], env=env) for w in range(processes)]
    codes = [p.wait() for p in procs]
    elapsed = time.perf_counter() - started
    import sqlite3

    con = sqlite3.connect(os.path.join(env["ACE_HOME"], "ace.db"))
    stored = con.execute("SELECT COUNT(*) FROM tool_events WHERE tool_use_id LIKE 'c%'").fetchone()[0]
    con.close()
    total = processes * events
    return {"processes": processes, "events_each": events, "stored": stored, "expected": total,
            "seconds": round(elapsed, 2), "events_per_second": round(total / elapsed),
            "ok": stored == total and not any(codes)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--python", default=sys.executable, help="the interpreter the hooks use")
    parser.add_argument("--out", default=None, help="default bench/results/hooks.json (hooks_AGENT.json)")
    parser.add_argument("--agent", choices=sorted(AGENT_CASES), default="claude",
                        help="whose hooks: Claude Code's (default), Codex CLI's, Antigravity CLI's or Gemini CLI's")
    parser.add_argument("--skip-concurrency", action="store_true")
    parser.add_argument("--bullets", type=int, default=10_000, help="active bullets in the playbook")
    parser.add_argument("--events", default="", help="only these events, comma-separated (e.g. SessionStart)")
    parser.add_argument("--touch-anchors", action="store_true",
                        help="move an anchor file's mtime before each SessionStart: its anchor check re-reads the "
                             "file and judges the lessons anchored there (1 in 8 of --bullets), not only stats")
    parser.add_argument("--write-time", action="store_true",
                        help="give every lesson the full model's write-time vector first (the `semantic` extra)")
    args = parser.parse_args()
    args.out = args.out or os.path.join(HERE, "results", "hooks.json" if args.agent == "claude"
                                        else f"hooks_{args.agent}.json")

    # Like `pip install` and `ace install` do: hooks then load bytecode even where
    # PYTHONDONTWRITEBYTECODE is set (it is on some machines, and would make every hook compile).
    from ace_engine.integrations.claude_settings import precompile

    precompile()
    with tempfile.TemporaryDirectory(prefix="ace-bench-", ignore_cleanup_errors=True) as tmp:
        cwd = os.path.join(tmp, "project")
        os.makedirs(os.path.join(cwd, ".git"))
        # No size cap on the playbook: the first learning job would otherwise archive the seeded
        # bullets down to the default 500 in the middle of the measurement.
        env = {**os.environ, "ACE_HOME": os.path.join(tmp, "home"), "XDG_CONFIG_HOME": os.path.join(tmp, "cfg"),
               "ACE_LEARNING_MAX_BULLETS": "0"}
        started = time.perf_counter()
        seed_playbook(env, cwd, args.bullets, args.write_time)
        print(f"seeded {args.bullets} bullets in {time.perf_counter() - started:.1f} s")
        write_codex_rollout(cwd)
        only = {e.strip() for e in args.events.split(",") if e.strip()}
        touch = AREAS[0][2] if args.touch_anchors else None
        results = [bench_event(args.python, event, args.runs, env, cwd, args.agent, native,
                               touch if event == "SessionStart" else None)
                   for native, event in AGENT_CASES[args.agent] if not only or native in only or event in only]
        concurrent = not args.skip_concurrency and args.agent == "claude"
        concurrency = bench_concurrency(args.python, env) if concurrent else None
        # The Stop hooks started learning workers in the background: the store goes only once they
        # are done (they write into it; removing it under them failed the run after its measurements).
        from ace_engine.jobs.worker import wait_idle

        os.environ["ACE_HOME"] = env["ACE_HOME"]
        if not wait_idle(None, timeout=300):
            print("a learning worker still ran after 300 s; its files may outlive the temporary directory")

    report = {"agent": args.agent, "python": shown(args.python), "bullets": args.bullets,
              "touch_anchors": args.touch_anchors,
              "version": sys.version.split()[0], "machine": os.uname().machine,
              "cpus": os.cpu_count(), "when": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
              "hooks": results, "max_rss_mib": MAX_RSS_MIB, "concurrency": concurrency}
    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    with open(args.out, "w") as fh:
        json.dump(report, fh, indent=2)

    print(f"{args.agent}: each event measured as the one it is handled as (its budget)")
    print(f"{'event':<18}{'bare ms':>9}{'hook ms':>9}{'ratio':>7}{'target':>8}{'RSS MiB':>9}  ok")
    for r in results:
        print(f"{r.get('agent_event', r['event']):<18}{r['baseline_ms']:>9}{r['hook_ms']:>9}{r['ratio']:>7}{r['target_ratio']:>8}"
              f"{r['peak_rss_mib']:>9}  {'yes' if r['ok'] else 'NO'}")
    if concurrency:
        print(f"concurrency: {concurrency['processes']}x{concurrency['events_each']} PostToolUse -> "
              f"{concurrency['stored']}/{concurrency['expected']} rows, {concurrency['events_per_second']} events/s")
    print(f"written to {args.out}")
    if not all(r["ok"] for r in results) or (concurrency and not concurrency["ok"]):
        sys.exit(1)


if __name__ == "__main__":
    main()
