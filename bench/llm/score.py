"""The LLM reflector on the grown corpus, with recorded answers: what it finds, what goes live, what it costs.

    python bench/llm/score.py --port N [--split tune|heldout|all] [--jobs 2] [--json OUT] [--keep DIR]
                              [--only ID ...] [--venv .venv] [--aggregates-only] [--mirrors DIR]

Contract. Needs `bench/llm/endpoint.py` listening on 127.0.0.1:N. For every session of the split
(`bench/corpus/gold.json`; transcripts in `bench/corpus/trajectories/` or, rebuilt by
`bench/corpus/fetch_external.py`, `bench/corpus/external/`): a fresh ACE_HOME and `git init` project,
a user config that points the LLM reflector at the endpoint (with `--mirrors DIR`, holding
`fetch`'s snapshots as DIR/<owner>+<name>/repo, the project is the session's repository as it was
then: the tree of the last commit of its default branch before the session started, as a user's
checkout would be — what provenance reads as the project's own files; without a snapshot, or
without `--mirrors`, an empty repository), `ace learn --transcript F --project P
--json`, then `ace patterns --json --status all`. A lesson matches a gold lesson as the corpus's scorer
says (`score.py`'s `matches`: a token of every `must_any` group); junk by its detectors.

Figures per split (micro-averaged): recall of active lessons (what is injected), recall of lessons of
any status, precision of active lessons (share matching some gold lesson of their session; a control
session's lessons all count as misses), junk share of active lessons, the status counts, and the cost:
model calls and tokens per session (median, p90, total; from each run's usage ledger, tokens ≈ characters
/ 4 as the endpoint counts them). Sessions whose prompts had no recorded answer fall back offline and
are counted (`unanswered`). `--aggregates-only` prints no per-session line (for held-out: read only
its aggregates); `--json` then keeps only the aggregates too.

Cost: one `ace learn` per session (seconds each, plus the endpoint's replies), `--jobs` at a time.
Never touches the user's ace home or config.
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from typing import Any

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
CORPUS = os.path.join(ROOT, "bench", "corpus")
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, CORPUS)
from learning_quality import load_scorer  # noqa: E402 — bench/ is not a package
from transcripts import readable  # noqa: E402 — the committed transcripts are stored gzip-compressed

STATUSES = ("active", "candidate", "quarantined", "archived")


def transcript(traj: dict[str, Any]) -> str | None:
    """The session's file: in the repository (`trajectories/`), else rebuilt into `external/`."""
    for path in (os.path.join(CORPUS, traj["file"]), os.path.join(CORPUS, "external", os.path.basename(traj["file"]))):
        if readable(path):
            return path
    return None


def env_for(tmp: str, port: int) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ACE_", "OPENAI_", "ANTHROPIC_"))}
    env.update({"ACE_HOME": os.path.join(tmp, "acehome"), "ACE_CONFIG": os.path.join(tmp, "config.toml"),
                "XDG_CONFIG_HOME": os.path.join(tmp, "xdg-config"), "XDG_DATA_HOME": os.path.join(tmp, "xdg-data"),
                "HOME": os.path.join(tmp, "home"), "GIT_CONFIG_NOSYSTEM": "1", "OPENAI_API_KEY": "not-needed",
                "GIT_AUTHOR_NAME": "score", "GIT_COMMITTER_NAME": "score",
                "GIT_AUTHOR_EMAIL": "score@example.invalid", "GIT_COMMITTER_EMAIL": "score@example.invalid"})
    os.makedirs(env["HOME"], exist_ok=True)
    with open(env["ACE_CONFIG"], "w", encoding="utf-8") as fh:
        fh.write(f'[llm]\nprovider = "openai"\nmodel = "replay"\nbase_url = "http://127.0.0.1:{port}/v1"\n'
                 "max_calls_per_day = 0\nmax_tokens_per_day = 0\ntimeout_s = 60\n")
    return env


def usage(acehome: str) -> dict[str, int]:
    """Calls and tokens the run's usage ledger recorded (every provider, every day)."""
    calls = tokens = 0
    for path in glob.glob(os.path.join(acehome, "**", "llm-usage.json"), recursive=True):
        try:
            with open(path, encoding="utf-8") as fh:
                ledger = json.load(fh)
        except (OSError, ValueError):
            continue
        for entry in (ledger.values() if isinstance(ledger, dict) else []):  # {day: {calls, input_tokens, …}}
            if isinstance(entry, dict):
                calls += int(entry.get("calls") or 0)
                tokens += int(entry.get("input_tokens") or 0) + int(entry.get("output_tokens") or 0)
    return {"calls": calls, "tokens": tokens}


def absent_blobs(git: list[str], commit: str) -> list[str]:
    """The paths of `commit`'s files whose content the snapshot does not hold."""
    listed = subprocess.run([*git, "ls-tree", "-r", "-z", commit], capture_output=True, timeout=120)
    blobs = [(meta.split()[2], path) for meta, _, path in (entry.decode("utf-8", "surrogateescape").partition("\t")
                                                          for entry in listed.stdout.split(b"\0") if entry)
             if meta.split()[1] == "blob"]
    check = subprocess.run([*git, "cat-file", "--batch-check=%(objectname)"], capture_output=True, timeout=120,
                           input="".join(sha + "\n" for sha, _ in blobs).encode())
    missing = {line.split()[0] for line in check.stdout.decode().splitlines() if line.endswith(" missing")}
    return [path for sha, path in blobs if sha in missing]


def checkout(traj: dict[str, Any], mirrors: str | None, proj: str) -> str | None:
    """The session's repository tree, as of its start, written into `proj`; the commit, or None."""
    repo = traj.get("repo")
    git_dir = os.path.join(mirrors, repo.replace("/", "+"), "repo") if mirrors and repo else None
    started = (traj.get("source") or {}).get("created_at")
    if not git_dir or not started or not os.path.isdir(git_dir):
        return None
    git = ["git", "--git-dir", git_dir, "-c", "core.hooksPath=/dev/null"]
    found = subprocess.run([*git, "rev-list", "-1", f"--before={started}", "HEAD"], capture_output=True, text=True,
                           timeout=120)
    commit = found.stdout.strip()
    if found.returncode != 0 or not commit:
        return None
    # A snapshot may lack its largest blobs (listed, not fetched): leave those files out, as `git archive`
    # would otherwise fail whole and the session would run in an empty repository.
    archive = subprocess.run([*git, "archive", "--format=tar", commit, "--", ".",
                              *(f":(exclude,literal){p}" for p in absent_blobs(git, commit))],
                             capture_output=True, timeout=600)
    if archive.returncode != 0:
        return None
    untar = subprocess.run(["tar", "-x", "--no-same-owner", "-C", proj], input=archive.stdout, capture_output=True,
                           timeout=600)
    return commit if untar.returncode == 0 else None


def score_one(traj: dict[str, Any], scorer: Any, ace: str, port: int, keep: str | None,
              mirrors: str | None = None) -> dict[str, Any]:
    tmp = tempfile.mkdtemp(prefix=f"acellm-{traj['id']}-")
    env = env_for(tmp, port)
    proj = os.path.join(tmp, "proj")
    os.makedirs(proj)
    res: dict[str, Any] = {"id": traj["id"], "split": traj["split"], "errors": [], "bullets": [], "lessons": []}
    try:
        res["tree"] = checkout(traj, mirrors, proj)
        subprocess.run(["git", "init", "-q", "."], cwd=proj, env=env, capture_output=True, timeout=60)
        path = transcript(traj)
        if path is None:
            res["errors"].append("transcript missing (run bench/corpus/fetch_external.py)")
            return res
        learn = subprocess.run([ace, "learn", "--transcript", path, "--project", proj, "--json"], cwd=proj, env=env,
                               capture_output=True, text=True, timeout=1800)
        if learn.returncode != 0:
            res["errors"].append(f"learn rc={learn.returncode}: {learn.stderr.strip()[-300:]}")
        try:
            turns = (json.loads(learn.stdout) or {}).get("turns") or []
        except ValueError:
            turns = []
        res["fallbacks"] = sum(1 for t in turns if "fallback" in json.dumps(t.get("summary") or {}))
        out = subprocess.run([ace, "patterns", "--json", "--status", "all"], cwd=proj, env=env, capture_output=True,
                             text=True, timeout=300)
        try:
            patterns = (json.loads(out.stdout) or {}).get("patterns") or []
        except ValueError:
            patterns, _ = [], res["errors"].append(f"patterns rc={out.returncode}: {out.stderr.strip()[-300:]}")
        lessons = traj.get("lessons") or []
        for b in patterns:
            text = b.get("content") or ""
            res["bullets"].append({"id": b.get("id"), "status": b.get("status"), "content": text,
                                   "kind": (b.get("provenance") or {}).get("kind"), "junk": scorer.junk_flags(text),
                                   "matches": [g["id"] for g in lessons if scorer.matches(text, g.get("must_any"))]})
        for g in lessons:
            res["lessons"].append({"id": g["id"], "active": any(g["id"] in b["matches"] for b in res["bullets"]
                                                               if b["status"] == "active"),
                                   "any": any(g["id"] in b["matches"] for b in res["bullets"])})
        res.update(usage(env["ACE_HOME"]))
    finally:
        if keep:
            dest = os.path.join(keep, traj["id"])
            shutil.rmtree(dest, ignore_errors=True)
            shutil.copytree(tmp, dest, symlinks=True)
        shutil.rmtree(tmp, ignore_errors=True)
    return res


def _pct(values: list[int], q: float) -> float:
    if not values:
        return 0.0
    ordered = sorted(values)
    return float(ordered[min(len(ordered) - 1, int(q * len(ordered)))])


def summarize(results: list[dict[str, Any]]) -> dict[str, Any]:
    gold = [g for r in results for g in r["lessons"]]
    active = [b for r in results for b in r["bullets"] if b["status"] == "active"]
    ratio = lambda a, b: round(a / b, 3) if b else 0.0  # noqa: E731
    calls = [int(r.get("calls") or 0) for r in results]
    tokens = [int(r.get("tokens") or 0) for r in results]
    return {
        "sessions": len(results), "gold_lessons": len(gold),
        "recall_active": ratio(sum(g["active"] for g in gold), len(gold)),
        "recall_any": ratio(sum(g["any"] for g in gold), len(gold)),
        "precision_active": ratio(sum(1 for b in active if b["matches"]), len(active)),
        "junk_active": ratio(sum(1 for b in active if b["junk"]), len(active)),
        "statuses": {s: sum(1 for r in results for b in r["bullets"] if b["status"] == s) for s in STATUSES},
        "calls": {"total": sum(calls), "median": statistics.median(calls) if calls else 0, "p90": _pct(calls, 0.9),
                  "max": max(calls, default=0)},
        "tokens": {"total": sum(tokens), "median": statistics.median(tokens) if tokens else 0,
                   "p90": _pct(tokens, 0.9), "max": max(tokens, default=0)},
        "fallback_turns": sum(int(r.get("fallbacks") or 0) for r in results),
        "errors": sum(len(r["errors"]) for r in results),
        "in_their_repository": sum(1 for r in results if r.get("tree")),
    }


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--split", choices=("tune", "heldout", "all"), default="tune")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--json", dest="json_out")
    ap.add_argument("--keep")
    ap.add_argument("--only", nargs="+")
    ap.add_argument("--venv", default=os.path.join(ROOT, ".venv"))
    ap.add_argument("--aggregates-only", action="store_true")
    ap.add_argument("--mirrors", help="repository snapshots (DIR/<owner>+<name>/repo): the project is the session's "
                                      "repository as it was then")
    args = ap.parse_args(argv)
    scorer, _ = load_scorer()
    ace = os.path.join(os.path.abspath(args.venv), "bin", "ace")
    with open(os.path.join(CORPUS, "gold.json"), encoding="utf-8") as fh:
        trajs = json.load(fh)["trajectories"]
    trajs = [t for t in trajs if args.split == "all" or t["split"] == args.split]
    if args.only:
        trajs = [t for t in trajs if t["id"] in set(args.only)]
    with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        results = list(pool.map(lambda t: score_one(t, scorer, ace, args.port, args.keep, args.mirrors), trajs))
    report = {split: summarize([r for r in results if r["split"] == split])
              for split in sorted({r["split"] for r in results})}
    if not args.aggregates_only:
        for r in results:
            got = sum(g["any"] for g in r["lessons"])
            act = sum(g["active"] for g in r["lessons"])
            counts = {s: sum(1 for b in r["bullets"] if b["status"] == s) for s in STATUSES}
            print(f"{r['id']:<40} gold {act}/{got}/{len(r['lessons'])} (active/any/all)  {counts}  "
                  f"calls {r.get('calls', 0)} tokens {r.get('tokens', 0)}" + (" ERR" if r["errors"] else ""))
    for split, s in report.items():
        print(f"{split}: " + json.dumps(s))
    if args.json_out:
        with open(args.json_out, "w", encoding="utf-8") as fh:
            json.dump({"summary": report, **({} if args.aggregates_only else {"results": results})}, fh, indent=1,
                      ensure_ascii=False)


if __name__ == "__main__":
    main()
