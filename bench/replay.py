"""Replay benchmark (issue 27): does the agent already know, the second time a problem comes up?

    python bench/replay.py [--set corpus|dev|both] [--jobs 2] [--venv .venv] [--only-repo R ...]
                           [--out bench/results/replay.json] [--table bench/results/replay.md] [--label L]
    python bench/replay.py --compare BEFORE.json AFTER.json      # a before → after table

Contract. For every repository with several sessions in the chosen set (the grown corpus,
`bench/corpus/gold.json`; the shared dev set, `../shared/learning-corpus/dev/gold.json`; or both,
merged by repository), its sessions are replayed in the order they happened (`source.created_at`,
else the transcript's first timestamp) with one fresh ACE_HOME and `git init` project per
repository, the way a user lives them — by the package's replay (`ace_engine.experiment.replay`,
the one `ace replay` runs on a user's own transcripts; this file adds the gold lessons' judgement):

1. session start: the real SessionStart hook (`startup`), as the process `ace install` writes into
   Claude Code's settings (`integrations.claude_settings.hook_argv`, asked in the replayed venv, so
   `--venv` of another checkout replays that checkout), then every user prompt typed
   before the session's first tool call through the real UserPromptSubmit hook; what they inject
   (`additionalContext`) is recorded;
2. after the session: `ace learn --transcript FILE --project P --heuristic`, then `ace learn
   --project P --heuristic` (the queue, what the background worker would run), as a user learning
   offline would; with `--llm-port N`, without `--heuristic`: the LLM reflector learns through the
   recorded answers of `bench/llm/endpoint.py --loose` (a prompt with no answer falls back offline).

Measures, per session, then summed per split (tune, heldout, strict heldout = heldout from
repositories not in the dev set; dev) and ecosystem:
- recurring moment: a gold lesson of session k that matches a gold lesson of an earlier session of
  the same repository — the earlier lesson's text meets this one's `must_any`, or this one's text
  meets the earlier one's (the corpus scorer's own `matches`, imported from `score.py`, never copied);
- spared: a recurring moment whose gold lesson is matched by an injected lesson line before the
  first tool call (the SessionStart digest or a prompt's block);
- noise: injected lesson lines that match no gold lesson of that session (per session: their mean);
- tokens: the estimated tokens of everything injected (`core.fmt.estimate_tokens`, as the hooks count);
- missed because: for a recurring moment not spared, where its lesson stood at the session's start
  (the playbook then, every status): active but not injected, a candidate, quarantined, archived, not learned;
- captured (under each figure's `captured`): the same measures judged on the transcripts' own
  failures instead of gold lessons (`experiment/replay_score.py`) — what `ace replay` reports for a
  user's repository, so the two give the same figure on the same sessions.

Held-out figures are written as aggregates only (no per-session lines): nothing is tuned on them.

Cost. Per session two hook processes or more (~0.1-0.3 s each) and two `ace learn` processes
(~1-5 s); repositories run `--jobs` at a time. The 163 corpus sessions take a few minutes on two cores.
It never touches the user's ace home or config (ACE_HOME, ACE_CONFIG, HOME and XDG dirs in a temp dir).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from collections import Counter, defaultdict
from concurrent.futures import ThreadPoolExecutor
from typing import Any

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)

from learning_quality import candidate_dirs, load_scorer  # noqa: E402  (bench/ is not a package)

try:
    import ace_engine  # noqa: F401  (the venv's, when this runs in one)
except ImportError:
    sys.path.insert(0, os.path.join(ROOT, "src"))
from ace_engine.experiment import replay as core  # noqa: E402
from ace_engine.experiment import replay_score  # noqa: E402

sys.path.insert(0, os.path.join(HERE, "corpus"))
from transcripts import unpack  # noqa: E402  (the committed transcripts are stored gzip-compressed)

CORPUS = os.path.join(HERE, "corpus")

SCORER, SCORER_PATH = load_scorer()
matches = SCORER.matches  # the corpus's one match rule


# -- the sessions ---------------------------------------------------------------------------------

def sessions(set_name: str, corpus: str = CORPUS) -> tuple[list[dict[str, Any]], list[str]]:
    """Every session of the set whose transcript is here, with its split label and time key."""
    notes: list[str] = []
    out: list[dict[str, Any]] = []
    if set_name == "corpus":
        gold_path, dirs = os.path.join(corpus, "gold.json"), [corpus]
    else:
        dirs = candidate_dirs("dev")
        gold_path = next((os.path.join(d, "gold.json") for d in dirs if os.path.isfile(os.path.join(d, "gold.json"))),
                         "")
        if not gold_path:
            return [], ["dev: no gold.json (shared corpus absent), set skipped"]
    with open(gold_path, encoding="utf-8") as fh:
        gold = json.load(fh)
    for d in dirs:
        unpack(d)
    for traj in gold["trajectories"]:
        rel = os.path.normpath(traj["file"])
        if rel.startswith("..") or os.path.isabs(rel):
            notes.append(f"{traj['id']}: file outside the corpus, skipped")
            continue
        path = next((os.path.join(d, rel) for d in dirs if os.path.isfile(os.path.join(d, rel))), None)
        if path is None:
            notes.append(f"{traj['id']}: {rel} missing (bench/corpus/fetch_external.py rebuilds external/), skipped")
            continue
        split = traj.get("split") or "dev"
        if split == "heldout" and not traj.get("repo_in_dev_set"):
            split = "strict_heldout"  # also counted under heldout
        when = (traj.get("source") or {}).get("created_at") or core.first_timestamp(path)
        out.append({"id": traj["id"], "repo": traj["repo"], "ecosystem": traj.get("ecosystem") or "unknown",
                    "split": split, "set": set_name, "path": path, "when": when, "lessons": traj.get("lessons") or []})
    return out, notes


def by_repository(items: list[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    repos: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for s in items:
        repos[s["repo"]].append(s)
    return {r: sorted(v, key=lambda s: (s["when"], s["id"])) for r, v in sorted(repos.items()) if len(v) > 1}


# -- one repository: the package's replay (ace_engine.experiment.replay), judged on the gold lessons ---------

LLM_PORT: int | None = None  # --llm-port: learn with the LLM reflector through bench/llm/endpoint.py
injected_lines = core.injected_lines


def _llm_config() -> str:
    if not LLM_PORT:
        return ""
    return (f'[llm]\nprovider = "openai"\nmodel = "replay"\nbase_url = "http://127.0.0.1:{LLM_PORT}/v1"\n'
            "max_calls_per_day = 0\nmax_tokens_per_day = 0\ntimeout_s = 60\n")


def installed_hook(python: str) -> list[str]:
    """The hook command `ace install` writes, as the replayed venv's own package defines it (the
    interpreter, `-I`, its launcher), with the event left off: `hook_argv` asked in that venv."""
    code = ("import json; from ace_engine.integrations.claude_settings import hook_argv; "
            "print(json.dumps(hook_argv('SessionStart')))")
    argv = json.loads(subprocess.run([python, "-c", code], capture_output=True, text=True, check=True,
                                     timeout=60).stdout)
    return [python] + argv[1:-1]


def score_session(s: dict[str, Any], earlier: list[dict[str, Any]], lines: list[tuple[str, str]]) -> dict[str, Any]:
    """The session's recurring moments, which were spared, and the noise among the injected lines."""
    lessons = s["lessons"]
    earlier_lessons = [L for e in earlier for L in e["lessons"]]
    recurring, spared, seen_any = [], [], []
    for L in lessons:
        if any(matches(L.get("lesson") or "", E.get("must_any")) or matches(E.get("lesson") or "", L.get("must_any"))
               for E in earlier_lessons):
            recurring.append(L["id"])
            if any(matches(text, L.get("must_any")) for _, text in lines):
                spared.append(L["id"])
        if any(matches(text, L.get("must_any")) for _, text in lines):
            seen_any.append(L["id"])
    noise = [text for _, text in lines if not any(matches(text, L.get("must_any")) for L in lessons)]
    return {"recurring": recurring, "spared": spared, "gold_injected": seen_any, "noise": noise}


STATUS_ORDER = ("active", "candidate", "quarantined", "archived")


def diagnose(s: dict[str, Any], scored: dict[str, Any], lessons: list[dict[str, Any]]) -> dict[str, str]:
    """For each recurring moment not spared, where its lesson stood at the session's start
    (`lessons`: the playbook then, every status): `active` (learned and injectable, but not
    injected), `candidate` (waiting to recur), `quarantined`, `archived`, or `not learned`."""
    missed = [L for L in s["lessons"] if L["id"] in scored["recurring"] and L["id"] not in scored["spared"]]
    why = {}
    for L in missed:
        found = {b["status"] for b in lessons if matches(b.get("content") or "", L.get("must_any"))}
        why[L["id"]] = next((st for st in STATUS_ORDER if st in found), "not learned")
    return why


def replay_repo(repo: str, items: list[dict[str, Any]], ace: str, hook_cmd: list[str]) -> list[dict[str, Any]]:
    """The repository's sessions through `core.replay`, each judged on its gold lessons too."""
    by_id = {s["id"]: (k, s) for k, s in enumerate(items)}

    def gold(session: Any, k: int, lines: Any, lessons: Any) -> dict[str, Any]:
        s = by_id[session["id"]][1]
        scored = score_session(s, items[:k], list(lines))
        scored["missed"] = diagnose(s, scored, list(lessons))
        return scored

    rows = core.replay([{"id": s["id"], "path": s["path"], "when": s["when"]} for s in items], ace=[ace],
                       hook=hook_cmd, offline=not LLM_PORT, config_text=_llm_config(), judge=gold,
                       env={**os.environ, "OPENAI_API_KEY": "not-needed"} if LLM_PORT else None)
    out = []
    for row in rows:
        s = by_id[row["id"]][1]
        out.append({"id": s["id"], "repo": repo, "ecosystem": s["ecosystem"], "split": s["split"], "set": s["set"],
                    "gold": len(s["lessons"]), **{k: v for k, v in row.items() if k not in ("id", "path")}})
    return out


# -- figures ------------------------------------------------------------------------------------------

def figures(rows: list[dict[str, Any]]) -> dict[str, Any]:
    n = len(rows)
    recurring = sum(len(r["recurring"]) for r in rows)
    spared = sum(len(r["spared"]) for r in rows)
    lines = sum(len(r["lines"]) for r in rows)
    noise = sum(len(r["noise"]) for r in rows)
    tokens = sum(r["tokens"] for r in rows)
    gold = sum(r["gold"] for r in rows)
    return {"sessions": n, "gold_lessons": gold, "recurring": recurring, "spared": spared,
            "spared_share": round(spared / recurring, 3) if recurring else None,
            "gold_injected": sum(len(r["gold_injected"]) for r in rows),
            "lines": lines, "noise_lines": noise, "noise_per_session": round(noise / n, 2) if n else None,
            "tokens": tokens, "tokens_per_session": round(tokens / n, 1) if n else None,
            "errors": sum(len(r["errors"]) for r in rows),
            "missed_because": dict(sorted(Counter(w for r in rows for w in r["missed"].values()).items())),
            "captured": replay_score.figures(rows)}


def report(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Figures per split (strict heldout also inside heldout) and ecosystem, and over all."""
    groups: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for r in rows:
        splits = [r["split"]] + (["heldout"] if r["split"] == "strict_heldout" else [])
        for split in splits:
            groups[split].append(r)
    out: dict[str, Any] = {"all": figures(rows), "splits": {}}
    for split in ("tune", "heldout", "strict_heldout", "dev"):
        if split in groups:
            part = groups[split]
            out["splits"][split] = {"all": figures(part), "ecosystems": {
                eco: figures([r for r in part if r["ecosystem"] == eco])
                for eco in sorted({r["ecosystem"] for r in part})}}
    return out


def table(rep: dict[str, Any]) -> str:
    head = ("| split | ecosystem | sessions | recurring | spared | noise lines / session | tokens / session |\n"
            "|---|---|---|---|---|---|---|")
    rows = []
    for split, part in rep["splits"].items():
        for eco, f in [("all", part["all"])] + list(part["ecosystems"].items()):
            rows.append(f"| {split} | {eco} | {f['sessions']} | {f['recurring']} | {f['spared']} | "
                        f"{f['noise_per_session']} | {f['tokens_per_session']} |")
    return "\n".join([head] + rows)


def compare(before: dict[str, Any], after: dict[str, Any]) -> str:
    """A before → after table of two reports (`--compare`): spared / recurring, noise and tokens per session."""
    head = ("| split | ecosystem | sessions | spared / recurring | noise lines / session | tokens / session |\n"
            "|---|---|---|---|---|---|")
    rows = []
    for split, part in after["splits"].items():
        old = before["splits"].get(split) or {"all": None, "ecosystems": {}}
        for eco, f in [("all", part["all"])] + list(part["ecosystems"].items()):
            b = old["all"] if eco == "all" else old["ecosystems"].get(eco)
            if b is None:
                continue

            def arrow(key: str, b: dict[str, Any] = b, f: dict[str, Any] = f) -> str:
                return f"{b[key]} → {f[key]}"

            rows.append(f"| {split} | {eco} | {f['sessions']} | {b['spared']}/{b['recurring']} → "
                        f"{f['spared']}/{f['recurring']} | {arrow('noise_per_session')} | "
                        f"{arrow('tokens_per_session')} |")
    return "\n".join([head] + rows)


def public(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per-session rows for the json: held-out sessions keep counts only (aggregates, no text)."""
    out = []
    for r in rows:
        if r["split"] in ("heldout", "strict_heldout"):
            out.append({"id": r["id"], "split": r["split"], "ecosystem": r["ecosystem"],
                        "recurring": len(r["recurring"]), "spared": len(r["spared"]), "lines": len(r["lines"]),
                        "noise": len(r["noise"]), "missed_because": sorted(r["missed"].values()),
                        "tokens": r["tokens"], "errors": len(r["errors"]),
                        "captured": {k: len(v) for k, v in r["captured"].items()}})
        else:
            out.append(r)
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--set", choices=("corpus", "dev", "both"), default="corpus")
    ap.add_argument("--corpus", default=CORPUS, help="the corpus folder (gold.json + transcripts) for --set corpus")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--llm-port", type=int, help="learn with the LLM reflector through bench/llm/endpoint.py on this "
                                                 "port (run it with --loose: earlier lessons are shown in a replay)")
    ap.add_argument("--venv", default=os.path.join(ROOT, ".venv"))
    ap.add_argument("--only-repo", nargs="*", help="only these repositories (owner/name)")
    ap.add_argument("--out", help="write figures and per-session rows here (json)")
    ap.add_argument("--table", help="write the markdown table here")
    ap.add_argument("--label", default="", help="what was replayed (e.g. a commit), kept in the json")
    ap.add_argument("--compare", nargs=2, metavar=("BEFORE", "AFTER"),
                    help="print a before → after table of two --out files, replay nothing")
    args = ap.parse_args(argv)
    if args.compare:
        before, after = (json.load(open(path, encoding="utf-8"))["report"] for path in args.compare)
        print(compare(before, after))
        return 0
    global LLM_PORT
    LLM_PORT = args.llm_port
    venv = os.path.abspath(args.venv)
    ace, python = os.path.join(venv, "bin", "ace"), os.path.join(venv, "bin", "python")
    if not os.access(ace, os.X_OK):
        sys.exit(f"no ace executable at {ace}")
    items, notes = [], []
    for name in (("corpus", "dev") if args.set == "both" else (args.set,)):
        got, why = sessions(name, args.corpus)
        items += got
        notes += why
    repos = by_repository(items)
    if args.only_repo:
        repos = {r: v for r, v in repos.items() if r in set(args.only_repo)}
    started = time.time()
    with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        hook_cmd = installed_hook(python)
        done = list(pool.map(lambda kv: replay_repo(kv[0], kv[1], ace, hook_cmd), repos.items()))
    rows = [r for part in done for r in part]
    rep = report(rows)
    text = table(rep)
    print(text)
    f = rep["all"]
    print(f"# {len(repos)} repositories, {f['sessions']} sessions: recurring {f['recurring']}, spared {f['spared']}, "
          f"noise {f['noise_per_session']} lines/session, {f['tokens_per_session']} tokens/session, "
          f"{round(time.time() - started)} s, errors {f['errors']}")
    for n in notes:
        print(f"# {n}")
    if args.out:
        os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
        with open(args.out, "w", encoding="utf-8") as fh:
            json.dump({"label": args.label, "set": args.set, "scorer": os.path.relpath(SCORER_PATH, ROOT),
                       "repositories": {r: len(v) for r, v in repos.items()}, "report": rep, "notes": notes,
                       "wall_seconds": round(time.time() - started, 1), "sessions": public(rows)},
                      fh, indent=1, ensure_ascii=False)
    if args.table:
        with open(args.table, "w", encoding="utf-8") as fh:
            fh.write(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
