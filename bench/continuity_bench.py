"""Continuity bench: what a session summary costs, and what the `<ace-recent-context>` block weighs.

    python bench/continuity_bench.py [--repeat 5] [--hook-runs 15] [--out bench/results/continuity.json] [--only ID ...]

Contract. On the real sessions of the learning corpus's dev set (`../shared/learning-corpus/dev`, the
transcripts `ace learn --transcript` learns; found the way `learning_quality.py` finds them), for each
session: the offline summary exactly as `ace learn --transcript` stores it (`continuity.update.
store_transcript`: summary, safety screening of its lines, one write to a real store under a temporary
ACE_HOME) — its cost in milliseconds, cold (the first of the process: regexes compile) and warm (median of
`--repeat` runs) — and the size of its lines (characters, estimated tokens). Then the SessionStart side:
all summaries in one project, the block the hook would inject at the default budget (chars, tokens,
sessions shown), and whole SessionStart hook processes, interleaved with a bare interpreter start as
`hooks_bench.py` does, with no summary stored and with every session's stored: the ratio to the bare
start and what the block adds. Transcript parsing is `ace learn`'s own cost and is reported apart.

Cost: about a second per session for the summaries, plus 2 × `--hook-runs` hook processes. It never
touches the user's ace home (ACE_HOME and the XDG dirs point into a temporary directory).
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from typing import Any

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def corpus_dir() -> str:
    base = os.environ.get("ACE_LEARNING_CORPUS") or os.path.join(os.path.dirname(ROOT), "shared", "learning-corpus")
    return os.path.join(base, "dev")


def sessions(only: list[str] | None) -> list[tuple[str, str]]:
    """(id, transcript path) of the dev set's sessions, in gold.json's order."""
    base = corpus_dir()
    with open(os.path.join(base, "gold.json"), encoding="utf-8") as fh:
        gold = json.load(fh)
    found = []
    for traj in gold["trajectories"]:
        path = os.path.join(base, os.path.normpath(traj["file"]))
        if (not only or traj["id"] in only) and os.path.isfile(path):
            found.append((traj["id"], path))
    return found


def git_project(path: str) -> str:
    os.makedirs(path, exist_ok=True)
    git = ["git", "-C", path, "-c", "user.name=bench", "-c", "user.email=bench@example.invalid"]
    subprocess.run([*git, "init", "-q", "-b", "main"], check=True, capture_output=True)
    subprocess.run([*git, "commit", "-q", "--allow-empty", "-m", "initial"], check=True, capture_output=True)
    return path


def median(values: list[float]) -> float:
    return round(statistics.median(values), 2) if values else 0.0


def summaries(runs: list[tuple[str, str]], repeat: int, project_root: str) -> list[dict[str, Any]]:
    from ace_engine.core import config as config_mod
    from ace_engine.continuity import update
    from ace_engine.observe import transcript
    from ace_engine.core.project import identify
    from ace_engine.retrieval.render import estimate_tokens
    from ace_engine.store.sqlite import SQLiteStore

    cfg = config_mod.load(project_root)
    project = identify(project_root)
    out = []
    with SQLiteStore() as store:
        pid = store.ensure_project(project.key, project.root, project.remote, project.name, time.time())
        for name, path in runs:
            started = time.perf_counter()
            parsed = transcript.parse_file(path)
            parse_ms = (time.perf_counter() - started) * 1000
            times = []
            for _ in range(max(1, repeat)):
                started = time.perf_counter()
                summary = update.store_transcript(store, parsed, pid, parsed["cwd"], cfg, time.time())
                times.append((time.perf_counter() - started) * 1000)
            row = store.session_summary(parsed["session_id"]) or {}
            text = str(row.get("text") or "")
            events = sum(len(a["events"]) for a in parsed["agents"])
            out.append({"id": name, "session_id": parsed["session_id"], "events": events,
                        "parse_ms": round(parse_ms, 2), "cold_ms": round(times[0], 2),
                        "warm_ms": median(times[1:] or times),
                        "lines": len(text.splitlines()), "chars": len(text), "tokens": estimate_tokens(text),
                        "open_ends": row.get("open_ends"), "carry": bool(row.get("carry")),
                        "withheld": (summary or {}).get("withheld", 0)})
        # Make them this week's sessions, an hour apart, so the hook brings them back.
        now = time.time()
        for n, item in enumerate(out):
            store.conn.execute("UPDATE session_summaries SET last_at = ? WHERE session_id = ?",
                               (now - 3600 * (n + 1), item["session_id"]))
    return out


def block_size(project_root: str) -> dict[str, Any]:
    from ace_engine.core import config as config_mod
    from ace_engine.continuity import DEFAULTS, candidates, recent
    from ace_engine.core.project import identify
    from ace_engine.retrieval.render import estimate_tokens
    from ace_engine.store.sqlite import SQLiteStore

    cfg = config_mod.load(project_root)
    with SQLiteStore() as store:
        pid = store.project_id(identify(project_root).key)
        budget = DEFAULTS["continuity.recent_tokens"]
        now = time.time()
        rows = candidates(store, cfg, pid, "bench-new-session", now)
        text, shown = recent.block(rows, cfg, project_root, now, budget)
    return {"budget_tokens": budget, "chars": len(text), "tokens": estimate_tokens(text), "sessions_shown": len(shown),
            "text": text}


def run_once(argv: list[str], stdin: bytes, env: dict[str, str]) -> float:
    started = time.perf_counter()
    subprocess.run(argv, input=stdin, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env, check=True)
    return time.perf_counter() - started


def hook_times(env: dict[str, str], project_root: str, runs: int, label: str) -> dict[str, Any]:
    from ace_engine.integrations.claude_settings import hook_command

    argv = shlex.split(hook_command("SessionStart", sys.executable))
    base, hook = [], []
    for n in range(runs + 2):
        data = {"session_id": f"bench-{label}-{n}", "transcript_path": os.path.join(project_root, "t.jsonl"),
                "cwd": project_root, "hook_event_name": "SessionStart", "source": "startup"}
        b = run_once([sys.executable, "-c", "pass"], b"", env)
        h = run_once(argv, json.dumps(data).encode(), env)
        if n >= 2:
            base.append(b)
            hook.append(h)
    bare, hooked = statistics.median(base), statistics.median(hook)
    return {"baseline_ms": round(bare * 1000, 2), "hook_ms": round(hooked * 1000, 2), "ratio": round(hooked / bare, 2)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeat", type=int, default=5, help="summaries per session (the first is cold)")
    parser.add_argument("--hook-runs", type=int, default=15)
    parser.add_argument("--out", default=os.path.join(HERE, "results", "continuity.json"))
    parser.add_argument("--only", nargs="*")
    args = parser.parse_args()
    runs = sessions(args.only)
    if not runs:
        sys.exit(f"no session of the dev set found under {corpus_dir()}; set ACE_LEARNING_CORPUS")
    from ace_engine.integrations.claude_settings import precompile

    precompile()
    with tempfile.TemporaryDirectory(prefix="ace-continuity-") as tmp:
        env = {**os.environ, "ACE_HOME": os.path.join(tmp, "home"), "XDG_CONFIG_HOME": os.path.join(tmp, "cfg"),
               "XDG_DATA_HOME": os.path.join(tmp, "data"), "ACE_LEARNING_ENABLED": "0"}
        os.environ.update({k: env[k] for k in ("ACE_HOME", "XDG_CONFIG_HOME", "XDG_DATA_HOME", "ACE_LEARNING_ENABLED")})
        project = git_project(os.path.join(tmp, "project"))
        empty = hook_times(env, project, args.hook_runs, "empty")
        rows = summaries(runs, args.repeat, project)
        block = block_size(project)
        full = hook_times(env, project, args.hook_runs, "full")
    warm = [r["warm_ms"] for r in rows]
    report = {
        "when": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "python": sys.version.split()[0],
        "cpus": os.cpu_count(), "sessions": len(rows),
        "summary_ms": {"warm_median": median(warm), "warm_max": round(max(warm), 2),
                       "cold_median": median([r["cold_ms"] for r in rows]),
                       "per_100_events_median": median([r["warm_ms"] * 100 / max(1, r["events"]) for r in rows])},
        "summary_tokens": {"median": median([r["tokens"] for r in rows]), "max": max(r["tokens"] for r in rows)},
        "block": block,
        "session_start_hook": {"no_summaries": empty, "with_summaries": full,
                               "added_ms": round(full["hook_ms"] - empty["hook_ms"], 2)},
        "per_session": rows,
    }
    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    with open(args.out, "w", encoding="utf-8") as fh:
        json.dump(report, fh, indent=2, ensure_ascii=False)
    print(f"{'session':<24}{'events':>7}{'parse ms':>10}{'cold ms':>9}{'warm ms':>9}{'tokens':>8}{'open':>6}  carry")
    for r in rows:
        print(f"{r['id']:<24}{r['events']:>7}{r['parse_ms']:>10}{r['cold_ms']:>9}{r['warm_ms']:>9}{r['tokens']:>8}"
              f"{r['open_ends']:>6}  {'yes' if r['carry'] else 'no'}")
    s = report["summary_ms"]
    print(f"summary: {s['warm_median']} ms median warm (max {s['warm_max']}), {s['cold_median']} ms cold; "
          f"{s['per_100_events_median']} ms per 100 tool calls")
    print(f"block at {block['budget_tokens']} tokens: {block['chars']} chars, ~{block['tokens']} tokens, "
          f"{block['sessions_shown']} sessions")
    h = report["session_start_hook"]
    print(f"SessionStart hook: {h['no_summaries']['hook_ms']} ms ({h['no_summaries']['ratio']}x bare) without "
          f"summaries, {h['with_summaries']['hook_ms']} ms ({h['with_summaries']['ratio']}x) with "
          f"{len(rows)} stored: +{h['added_ms']} ms")
    print(f"written to {args.out}")


if __name__ == "__main__":
    main()
