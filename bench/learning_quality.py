"""Learning-quality bench: what `ace learn` writes down from real sessions, scored against gold lessons.

    python bench/learning_quality.py [--set dev|check|all] [--jobs 4] [--json OUT] [--only ID ...] [--venv .venv]

Contract. For every session of the chosen set(s) it runs the learning corpus's scorer (`score.py`:
a fresh ACE_HOME and `git init` project per session, `ace learn --transcript F --project P --heuristic`,
`ace patterns`, `ace search PROMPT --k 3` per gold prompt) and reports, per set and per ecosystem and
over everything, gold recall, precision, junk share, loop closing and the bullet counts behind them,
plus speed: seconds per session (the whole scorer run of it), their median, and the wall time of the
`ace learn` call alone. `--json OUT` writes the figures, the per-session details (every bullet with the
gold lessons it matched and its junk flags) and the list of sessions that could not be run.

Data. `bench/data/learning/<set>/gold.json` names the sessions and their gold lessons; a session's
transcript is taken from `bench/data/learning/<set>/` when it is in the repository (licence allows
copying), else from the shared corpus (`$ACE_LEARNING_CORPUS/<set>/`, by default `../shared/learning-corpus/`
next to the checkout), else from `$ACE_LQ_CHECK_DIR` for the check set; a session found nowhere is skipped
and reported, never an error. The scorer is the shared corpus's `score.py` when present, else the copy
vendored at `bench/data/learning/score.py`.

Cost. One set of ace processes per session (learn, patterns, one search per gold prompt), run `--jobs` at
a time: about 2-10 s per session today, so the 19 dev sessions take well under a minute at 4 jobs. It
never touches the user's ace home or config (the scorer pins ACE_HOME, ACE_CONFIG and XDG dirs to a temp dir).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import statistics
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from types import ModuleType
from typing import Any

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
DATA = os.path.join(HERE, "data", "learning")
SETS = ("dev", "check")
FIGURES = ("gold_recall", "precision", "junk", "loop")


def shared_corpus() -> str:
    """The shared learning corpus: `$ACE_LEARNING_CORPUS`, else `../shared/learning-corpus` beside the checkout."""
    return os.environ.get("ACE_LEARNING_CORPUS") or os.path.join(os.path.dirname(ROOT), "shared", "learning-corpus")


def load_scorer() -> tuple[ModuleType, str]:
    """Import score.py from the shared corpus when present (it may be newer), else the vendored copy."""
    for path in (os.path.join(shared_corpus(), "score.py"), os.path.join(DATA, "score.py")):
        if os.path.isfile(path):
            spec = importlib.util.spec_from_file_location("ace_learning_score", path)
            if spec is None or spec.loader is None:
                continue
            module = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(module)
            for name in ("score_one", "summarize", "_run"):
                if not hasattr(module, name):
                    sys.exit(f"{path} has no {name}(): the scorer changed, update bench/learning_quality.py")
            return module, path
    sys.exit("no score.py: neither the shared learning corpus nor bench/data/learning/score.py is there")


def candidate_dirs(set_name: str) -> list[str]:
    """Where a session's transcript may live, in order: the repository, the shared corpus, $ACE_LQ_CHECK_DIR."""
    dirs = [os.path.join(DATA, set_name), os.path.join(shared_corpus(), set_name)]
    if set_name == "check" and os.environ.get("ACE_LQ_CHECK_DIR"):
        dirs.append(os.environ["ACE_LQ_CHECK_DIR"])
    return dirs


def plan(set_names: list[str], only: list[str] | None) -> tuple[list[dict[str, Any]], list[str]]:
    """The sessions to run (each with its set and the corpus dir holding its file) and notes on those skipped."""
    runs: list[dict[str, Any]] = []
    notes: list[str] = []
    wanted = set(only or [])
    known: set[str] = set()
    for set_name in set_names:
        gold_path = os.path.join(DATA, set_name, "gold.json")
        if not os.path.isfile(gold_path):
            notes.append(f"{set_name}: no {os.path.relpath(gold_path, ROOT)}, set skipped")
            continue
        with open(gold_path, encoding="utf-8") as fh:
            gold = json.load(fh)
        for traj in gold["trajectories"] if isinstance(gold, dict) else gold:
            known.add(traj["id"])
            if wanted and traj["id"] not in wanted:
                continue
            # a gold entry names its file relative to the corpus dir; never let it climb out of it
            rel = os.path.normpath(traj["file"])
            if rel.startswith("..") or os.path.isabs(rel):
                notes.append(f"{set_name}/{traj['id']}: file {traj['file']!r} is outside the corpus, skipped")
                continue
            corpus = next((d for d in candidate_dirs(set_name) if os.path.isfile(os.path.join(d, rel))), None)
            if corpus is None:
                notes.append(f"{set_name}/{traj['id']}: {rel} not in the repository nor the shared corpus, skipped")
                continue
            runs.append({"set": set_name, "traj": traj, "corpus": corpus})
    notes.extend(f"--only {name}: no such session in {', '.join(set_names)}" for name in sorted(wanted - known))
    return runs, notes


class LearnTimer:
    """Wraps the scorer's `_run` so the wall time of each `ace learn` call is kept, keyed by transcript path.

    The scorer times a session as a whole (learn + patterns + one search per prompt); the learn call alone
    is the figure that the product's own speed depends on, so it is measured where it runs.
    """

    def __init__(self, scorer: ModuleType) -> None:
        self.seconds: dict[str, float] = {}
        self._lock = threading.Lock()
        self._inner = scorer._run
        setattr(scorer, "_run", self.run)  # noqa: B010 - the scorer is a module loaded from a file path

    def run(self, cmd: list[str], cwd: str, env: dict[str, str], timeout: float) -> Any:
        started = time.perf_counter()
        try:
            return self._inner(cmd, cwd, env, timeout)
        finally:
            if len(cmd) > 3 and cmd[1] == "learn" and cmd[2] == "--transcript":
                with self._lock:
                    self.seconds[os.path.realpath(cmd[3])] = round(time.perf_counter() - started, 3)


def figures(scorer: ModuleType, results: list[dict[str, Any]]) -> dict[str, Any]:
    """The scorer's own summary of these results (micro-averaged), plus the speed of the same sessions."""
    summary = dict(scorer.summarize(results))
    summary.update(speed(results))
    return summary


def speed(results: list[dict[str, Any]]) -> dict[str, Any]:
    per_session = [float(r["seconds"]) for r in results]
    learn = [float(r["learn_seconds"]) for r in results if r.get("learn_seconds") is not None]
    return {
        "sessions": len(results),
        "seconds_per_session_median": round(statistics.median(per_session), 3) if per_session else None,
        "seconds_per_session_max": round(max(per_session), 3) if per_session else None,
        "learn_seconds_median": round(statistics.median(learn), 3) if learn else None,
        "learn_seconds_max": round(max(learn), 3) if learn else None,
        "learn_seconds_total": round(sum(learn), 3),
    }


def grouped(scorer: ModuleType, results: list[dict[str, Any]]) -> dict[str, Any]:
    """Figures per set, and per ecosystem within each set, and over all sets."""
    report: dict[str, Any] = {"sets": {}, "overall": figures(scorer, results) if results else None}
    for set_name in SETS:
        in_set = [r for r in results if r["set"] == set_name]
        if not in_set:
            continue
        ecosystems = sorted({r.get("ecosystem") or "unknown" for r in in_set})
        report["sets"][set_name] = {
            "all": figures(scorer, in_set),
            "by_ecosystem": {
                eco: figures(scorer, [r for r in in_set if (r.get("ecosystem") or "unknown") == eco])
                for eco in ecosystems
            },
        }
    return report


def row(label: str, s: dict[str, Any]) -> str:
    return (f"{label:<22} {s['sessions']:>3}  gold {s['gold_matched']:>2}/{s['gold_lessons']:<2} "
            f"recall {s['gold_recall']:.2f}  bullets {s['bullets']:>3} (gold {s['bullets_matching_gold']:>2}, "
            f"junk {s['junk_bullets']:>2})  precision {s['precision']:.2f}  junk {s['junk']:.2f}  "
            f"loop {s['prompts_closed']:>2}/{s['prompts']:<2} {s['loop']:.2f}  "
            f"learn {s['learn_seconds_median'] or 0:.2f}s med")


def render(report: dict[str, Any], results: list[dict[str, Any]], notes: list[str], verbose: bool) -> str:
    lines: list[str] = []
    if verbose:
        for r in results:
            good = sum(1 for b in r["bullets"] if b["matches"])
            junk = sum(1 for b in r["bullets"] if b["junk"])
            got = sum(1 for L in r["lessons"] if L["matched_by"])
            closed = sum(1 for L in r["lessons"] for p in L["prompts"] if p["rank"])
            prompts = sum(len(L["prompts"]) for L in r["lessons"])
            err = "  ERR" if r["errors"] else ""
            lines.append(f"{r['set']:<5} {r['id']:<40} {r.get('ecosystem') or '?':<10} bullets {len(r['bullets']):>2} "
                         f"(gold {good}, junk {junk})  gold {got}/{len(r['lessons'])}  loop {closed}/{prompts}  "
                         f"{r['seconds']:>5.1f}s (learn {r.get('learn_seconds') or 0:.1f}s){err}")
        lines.append("")
    for set_name, block in report["sets"].items():
        for eco, s in block["by_ecosystem"].items():
            lines.append(row(f"{set_name} {eco}", s))
        lines.append(row(f"{set_name} ALL", block["all"]))
        lines.append("")
    overall = report["overall"]
    if overall:
        lines.append(row("ALL", overall))
        lines.append(f"speed: {overall['sessions']} sessions, {overall['seconds_per_session_median']} s per session "
                     f"(median; max {overall['seconds_per_session_max']}), "
                     f"ace learn {overall['learn_seconds_median']} s median "
                     f"(max {overall['learn_seconds_max']}, total {overall['learn_seconds_total']} s), "
                     f"wall {report['wall_seconds']} s at {report['jobs']} jobs")
        for err in overall["learn_errors"]:
            lines.append(f"# error {err}")
    for note in notes:
        lines.append(f"# skipped {note}")
    if overall:
        lines.append(f"gold_recall {overall['gold_recall']:.3f}, precision {overall['precision']:.3f}, "
                     f"junk {overall['junk']:.3f}, loop {overall['loop']:.3f} ({overall['sessions']} trajectories)")
    return "\n".join(lines)


def run(set_names: list[str], venv: str, jobs: int,
        only: list[str] | None) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    ace = os.path.join(venv, "bin", "ace")
    if not os.access(ace, os.X_OK):
        sys.exit(f"no ace executable at {ace} (give --venv)")
    scorer, scorer_path = load_scorer()
    timer = LearnTimer(scorer)
    runs, notes = plan(set_names, only)
    started = time.perf_counter()

    def one(item: dict[str, Any]) -> dict[str, Any]:
        res: dict[str, Any] = scorer.score_one(item["traj"], item["corpus"], ace)
        res["set"] = item["set"]
        path = os.path.realpath(os.path.join(item["corpus"], item["traj"]["file"]))
        res["learn_seconds"] = timer.seconds.get(path)
        res["source"] = os.path.relpath(path, ROOT) if path.startswith(ROOT + os.sep) else path
        return res

    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        results = list(pool.map(one, runs))
    report = grouped(scorer, results)
    report.update({
        "when": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "venv": os.path.abspath(venv),
        "scorer": scorer_path, "sets_run": set_names, "jobs": jobs,
        "wall_seconds": round(time.perf_counter() - started, 2), "skipped": notes,
    })
    return report, results


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--set", dest="sets", choices=(*SETS, "all"), default="all", help="which set(s) to run")
    parser.add_argument("--jobs", type=int, default=4, help="sessions scored at once")
    parser.add_argument("--json", dest="json_out", help="write figures and per-session details here")
    parser.add_argument("--only", nargs="+", metavar="ID", help="only these session ids")
    parser.add_argument("--venv", default=os.path.join(ROOT, ".venv"), help="virtualenv with ace installed")
    parser.add_argument("-q", "--quiet", action="store_true", help="no per-session lines")
    args = parser.parse_args(argv)
    set_names = list(SETS) if args.sets == "all" else [args.sets]
    report, results = run(set_names, args.venv, args.jobs, args.only)
    print(render(report, results, report["skipped"], verbose=not args.quiet))
    if args.json_out:
        os.makedirs(os.path.dirname(os.path.abspath(args.json_out)), exist_ok=True)
        with open(args.json_out, "w", encoding="utf-8") as fh:
            json.dump({**report, "results": results}, fh, indent=1, ensure_ascii=False)
        print(f"written to {args.json_out}")


if __name__ == "__main__":
    main()
