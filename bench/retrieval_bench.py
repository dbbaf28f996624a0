"""Retrieval benchmark: quality on a labelled dataset, and search latency at 1k / 10k / 100k bullets.

    python bench/retrieval_bench.py [--modes lexical,semantic,hybrid] [--sizes 1000,10000,100000]
                                    [--tune] [--hook-runs 15] [--out bench/results/retrieval.json]

Quality: the 510 hand-written bullets of `bench/data/` (six projects + global lessons) are added
to a real store through `Playbook`, with their counters and ages; each of the 344 prompts is
searched in its project's scope (project + global bullets) exactly as the UserPromptSubmit hook
does (k=5, the configured threshold). Reported per split (`tune`, held-out `test`):
    recall@5   mean share of a prompt's relevant bullets among the results
    mrr        mean of 1/rank of the first relevant result (0 when none is returned)
    raw        the same without the threshold (ranking quality alone)
    noise      for the 30 off-topic prompts: share that injected nothing, and bullets injected
               per prompt; for the others, irrelevant bullets injected per prompt
`--tune` runs a random local search over the weights and the threshold, from the current defaults,
on the tune split only, and prints the best settings (the defaults in config.py came from it).

Side by side (issue 24): after the per-split table, one line per row — lexical, semantic, fused
(`hybrid`), with situations (`+sit`), the default configuration (`auto`: fused with situations), and
`auto+full`: with the full model's write-time lesson vectors (`retrieval.write_time`) — with the
labelled set thresholded and raw, then the real-sessions replay set (bench/retrieval_replay.py, its
`replay` and `final` splits) thresholded and raw; `--no-replay` leaves the replay set out.

Latency: the dataset is varied (words swapped for others of the corpus, numbers changed) into
one project of N bullets; every prompt is searched once after a warm-up; median and p95 of
`search()` in-process. Then, at 10k bullets, whole UserPromptSubmit hook processes (exactly the
command `ace install` writes) against bare `python -c pass`, interleaved.
"""

import argparse
import json
import os
import random
import shlex
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "src"))

from ace_engine.core.config import DEFAULTS  # noqa: E402
from ace_engine.playbook.playbook import Playbook, content_key  # noqa: E402
from ace_engine.core.project import Project, identify  # noqa: E402
from ace_engine.retrieval import situations  # noqa: E402
from ace_engine.retrieval.search import search  # noqa: E402
from ace_engine.store.sqlite import SQLiteStore  # noqa: E402

NOW = 1_750_000_000.0  # a fixed "now" so ages and recency are reproducible
DAY = 86400.0
K = 5


DATASETS = {"tuned": os.path.join(HERE, "data"), "heldout": os.path.join(HERE, "data", "heldout"),
            "replay": os.path.join(HERE, "data", "replay")}  # replay: bench/retrieval_replay.py


def load_dataset(name: str = "tuned") -> tuple[dict, list[dict]]:
    """`tuned`: the set the defaults were tuned on; `heldout`: paraphrases written blind to the ranker
    (bench/data/heldout/README.md), all in the `test` split."""
    folder = DATASETS[name]
    with open(os.path.join(folder, "bullets.json"), encoding="utf-8") as fh:
        bullets = json.load(fh)
    with open(os.path.join(folder, "queries.json"), encoding="utf-8") as fh:
        queries = json.load(fh)
    situations = os.path.join(folder, "situations.json")
    if os.path.exists(situations):
        # The prompts of the sessions each lesson was learned in (written blind to the queries:
        # heldout/README.md), stored as its situations when the store is built (issue 24).
        with open(situations, encoding="utf-8") as fh:
            bullets["situations"] = json.load(fh)["situations"]
    para = os.path.join(folder, "paraphrase_tune.json")
    if name == "tuned" and os.path.exists(para):
        # Prompts in the user's words for the same lessons, written blind to the ranker
        # (bench/data/paraphrase_tune_check.py): a second tuning split, `para`.
        with open(para, encoding="utf-8") as fh:
            queries += [{**q, "split": "para"} for q in json.load(fh)]
    return bullets, queries


def project_for(spec: dict) -> Project | None:
    if not spec["key"]:
        return None
    if spec["key"].startswith("git:"):
        return Project(spec["root"], spec["key"][4:])
    return Project(spec["root"], None)


def build_store(path: str, dataset: dict, write_time: bool = False) -> tuple[SQLiteStore, dict, dict]:
    """A store holding the dataset; returns it, bullet key → id, and project name → project id.
    `write_time`: then the full model's write-time lesson vectors, as the learning worker computes
    them (embed/write_time.py; nothing without the `semantic` extra)."""
    store = SQLiteStore(path)
    ids: dict[str, str] = {}
    project_ids: dict[str, int | None] = {}
    by_project: dict[str, list[dict]] = {}
    for b in dataset["bullets"]:
        by_project.setdefault(b["project"], []).append(b)
    for spec in dataset["projects"]:
        project = project_for(spec)
        playbook = Playbook(store, project)
        project_ids[spec["name"]] = playbook.project_id
        with playbook:
            for b in by_project.get(spec["name"], []):
                created = NOW - b["age_days"] * DAY
                bullet, _ = playbook.add(b["content"], b["section"], scope="project" if project else "global",
                                         helpful=b["helpful"], harmful=b["harmful"], source="bench", now=created)
                if b["helpful_explicit"]:
                    bullet = playbook.tag(bullet["id"], "helpful", explicit=True, count=b["helpful_explicit"],
                                          source="bench", now=created)
                if b["last_used_days"] is not None:
                    store.update_bullet(bullet["id"], {"last_used_at": NOW - b["last_used_days"] * DAY})
                ids[b["key"]] = bullet["id"]
                texts = (dataset.get("situations") or {}).get(b["key"]) or []
                if texts:
                    situations.add(store, bullet["id"], [("prompt", t) for t in texts], session_id=None, now=created)
    if write_time:
        from ace_engine.embed import write_time as write_time_mod

        write_time_mod.refresh(store)
    return store, ids, project_ids


# -- quality -----------------------------------------------------------------------------------------


def evaluate(store, ids: dict, project_ids: dict, queries: list[dict], cfg: dict, mode: str) -> dict:
    """Metrics per split for one configuration."""
    per_split: dict[str, dict[str, list[float]]] = {}
    raw_cfg = {**cfg, "retrieval.threshold": -1.0}
    for q in queries:
        pid = project_ids[q["project"]]
        relevant = {ids[key] for key in q["relevant"]}
        hits = search(store, pid, q["prompt"], k=K, cfg=cfg, mode=mode, now=NOW)
        raw = search(store, pid, q["prompt"], k=K, cfg=raw_cfg, mode=mode, now=NOW)
        stats = per_split.setdefault(q["split"], {})
        shown = [h["id"] for h in hits]
        if relevant:
            stats.setdefault("recall", []).append(len(relevant & set(shown)) / len(relevant))
            stats.setdefault("mrr", []).append(next((1 / r for r, i in enumerate(shown, 1) if i in relevant), 0.0))
            raw_ids = [h["id"] for h in raw]
            stats.setdefault("raw_recall", []).append(len(relevant & set(raw_ids)) / len(relevant))
            stats.setdefault("raw_mrr", []).append(next((1 / r for r, i in enumerate(raw_ids, 1) if i in relevant), 0.0))
            stats.setdefault("irrelevant_shown", []).append(sum(1 for i in shown if i not in relevant))
            # Where the rest of the recall went (recall + these two = 1): not in the raw top 5 (the
            # ranking), or in it but removed by the threshold (the cut).
            lost = relevant - set(shown)
            stats.setdefault("lost_rank", []).append(len(lost - set(raw_ids)) / len(relevant))
            stats.setdefault("lost_cut", []).append(len(lost & set(raw_ids)) / len(relevant))
            if q["id"].endswith("-canonical"):  # the project's plain command, among one-off variants of it
                stats.setdefault("canonical_first", []).append(1.0 if raw_ids[:1] and raw_ids[0] in relevant else 0.0)
        else:
            stats.setdefault("negative_empty", []).append(1.0 if not shown else 0.0)
            stats.setdefault("negative_shown", []).append(len(shown))
    result = {}
    for split, stats in sorted(per_split.items()):
        result[split] = {name: round(statistics.fmean(values), 4) for name, values in stats.items()}
        result[split]["queries"] = len(stats.get("recall", [])) + len(stats.get("negative_empty", []))
    everything = {name: [] for name in ("recall", "mrr")}
    for q_split in per_split.values():
        for name in everything:
            everything[name] += q_split.get(name, [])
    result["all"] = {name: round(statistics.fmean(v), 4) for name, v in everything.items()}
    return result


def size_dependence(dataset: dict, queries: list[dict], cfg: dict, mode: str, tmp: str, ids: dict, store,
                    project_ids: dict, limit: int = 60, write_time: bool = False) -> dict:
    """Does a score mean the same in a small store as in a large one? For each of the first `limit`
    positive prompts: the score of its first relevant lesson in the project's whole scope, and in a
    store holding only that lesson and 4 others of the project (a seeded choice); the mean absolute
    difference, and the share of prompts where the threshold decides differently."""
    rng = random.Random(11)
    by_key = {b["key"]: b for b in dataset["bullets"]}
    threshold = cfg["retrieval.threshold"]
    diffs, flips = [], 0
    positives = [q for q in queries if q["relevant"]][:limit]
    raw = {**cfg, "retrieval.threshold": -1.0}
    for n, q in enumerate(positives):
        key = q["relevant"][0]
        target = by_key[key]
        others = [b for b in dataset["bullets"] if b["project"] == target["project"] and b["key"] != key]
        small_set = {"projects": dataset["projects"], "bullets": [target] + rng.sample(others, min(4, len(others))),
                     "situations": dataset.get("situations")}
        small, small_ids, small_pids = build_store(os.path.join(tmp, f"small-{mode}-{n}.db"), small_set, write_time)
        scores = []
        for st, idmap, pids in ((store, ids, project_ids), (small, small_ids, small_pids)):
            hits = search(st, pids[target["project"]], q["prompt"], k=50, cfg=raw, mode=mode, now=NOW)
            scores.append(next((h["score"] for h in hits if h["id"] == idmap[key]), 0.0))
        small.close()
        diffs.append(abs(scores[0] - scores[1]))
        flips += (scores[0] >= threshold) != (scores[1] >= threshold)
    return {"prompts": len(positives), "mean_abs_diff": round(statistics.fmean(diffs), 4),
            "threshold_flips": round(flips / len(positives), 3)}


def objective(metrics: dict) -> float:
    """What tuning maximizes on the tuning splits (`tune`, and `para` when present, weighted
    alike): recall and MRR, minus injected noise."""
    total = 0.0
    for split in ("tune", "para"):
        m = metrics.get(split)
        if m:
            total += (m["recall"] + 0.5 * m["mrr"] + 0.3 * m.get("negative_empty", 0.0)
                      - 0.03 * m["irrelevant_shown"])
    return total


TUNED = {"retrieval.weights.bm25": 0.05, "retrieval.weights.coverage": 0.1, "retrieval.weights.fuzzy": 0.05,
         "retrieval.weights.domain": 0.05, "retrieval.weights.confidence": 0.05, "retrieval.weights.helpful": 0.05,
         "retrieval.weights.recency": 0.05, "retrieval.weights.semantic": 0.1, "retrieval.threshold": 0.025,
         "retrieval.relative_cut": 0.05}


def tune(store, ids, project_ids, queries, mode: str, base: dict, steps: int = 40,
         seed: int = 5) -> tuple[float, dict, dict]:
    """Random local search from the current defaults, on the tune split only: each step moves two
    settings by one step up or down and keeps the change if the objective improves."""
    tune_queries = [q for q in queries if q["split"] in ("tune", "para")]
    rng = random.Random(seed)
    keys = [k for k in TUNED if mode not in ("lexical", "semantic") or k != "retrieval.weights.semantic"]

    def run(settings: dict) -> tuple[float, dict]:
        metrics = evaluate(store, ids, project_ids, tune_queries, {**base, **settings}, mode)
        return objective(metrics), {split: metrics[split] for split in ("tune", "para") if split in metrics}

    current = {k: base[k] for k in keys}
    best, best_metrics = run(current)
    print(f"tune {mode}: defaults → objective {best:.4f} {best_metrics}")
    for step in range(steps):
        candidate = dict(current)
        for key in rng.sample(keys, 2):
            candidate[key] = round(max(0.0, candidate[key] + rng.choice((-1, 1)) * TUNED[key]), 4)
        score, metrics = run(candidate)
        if score > best:
            best, best_metrics, current = score, metrics, candidate
            print(f"  step {step}: objective {score:.4f} {metrics}\n    {current}")
    return best, current, best_metrics


# -- latency -----------------------------------------------------------------------------------------


def vary(dataset: dict, n: int, seed: int = 1) -> list[tuple[str, str]]:
    """n (section, content) pairs: the dataset's bullets with some words swapped for other words
    of the corpus and numbers changed, so the vocabulary and lengths stay realistic."""
    rng = random.Random(seed)
    sources = dataset["bullets"]
    vocabulary = sorted({w for b in sources for w in b["content"].split() if w.isalpha() and len(w) > 3})
    out = []
    for i in range(n):
        b = sources[i % len(sources)]
        words = b["content"].split()
        if i >= len(sources):
            for _ in range(max(2, len(words) // 6)):
                j = rng.randrange(len(words))
                if words[j].isalpha():
                    words[j] = rng.choice(vocabulary)
            words = [str(rng.randint(2, 999)) if w.isdigit() else w for w in words]
            words.append(f"(variant {i})")
        out.append((b["section"], " ".join(words)))
    return out


def synth_store(path: str, dataset: dict, n: int, project: Project, situations_each: int = 0,
                prompts: list[str] = ()) -> tuple[SQLiteStore, int]:
    """A store with n active bullets in `project`, written straight through the store (the
    playbook's per-bullet transactions would take minutes at 100k); with `situations_each`, every
    bullet gets that many situations (prompts varied by a number), embedded and folded."""
    from ace_engine.playbook import domains as domain_mod
    from ace_engine.playbook.confidence import confidence
    from ace_engine.playbook.ids import new_id

    store = SQLiteStore(path)
    pid = Playbook(store, project).project_id
    rng = random.Random(n)
    with store.transaction():
        for i, (section, content) in enumerate(vary(dataset, n)):
            helpful, harmful = rng.choice([0, 0, 0, 1, 2, 5, 9]), rng.choice([0, 0, 0, 1, 3])
            created = NOW - rng.uniform(0, 300) * DAY
            store.insert_bullet({
                "id": new_id(created) + f"{i:x}", "project_id": pid, "section": section, "content": content,
                "domains": domain_mod.derive(content), "helpful": helpful, "harmful": harmful,
                "helpful_explicit": 0, "harmful_explicit": 0, "confidence": confidence(helpful, harmful),
                "status": "active", "provenance": {"source": "bench"}, "content_key": content_key(content),
                "created_at": created, "updated_at": created, "last_used_at": None, "retrieval_count": 0,
            })
        store.refresh_domain_counts(pid)
    store.conn.execute("PRAGMA optimize")
    from ace_engine.embed import vectors

    # what `ace embed` does for lessons written without the playbook; the full model's write-time
    # vectors left out (minutes at 100k): the hook reads one second vector per lesson either way
    vectors.embed_missing(store, write_time=False)
    if situations_each and prompts:
        rows = store.conn.execute("SELECT id FROM bullets ORDER BY rowid").fetchall()
        with store.transaction():
            for i, (bid,) in enumerate(rows):
                texts = [f"{prompts[(i * situations_each + j) % len(prompts)]} ({j})" for j in range(situations_each)]
                store.add_situations(bid, [("prompt", t, situations.key(t)) for t in texts], session_id=None,
                                     now=NOW, cap=situations.MAX_PER_LESSON)
        vectors.embed_situations(store)
    return store, pid


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(p * (len(ordered) - 1))))]


def search_latency(store, pid, prompts: list[str], mode: str = "lexical") -> dict:
    for prompt in prompts[:20]:
        search(store, pid, prompt, k=K, mode=mode)
    times, counts = [], []
    for prompt in prompts:
        started = time.perf_counter()
        hits = search(store, pid, prompt, k=K, mode=mode)
        times.append((time.perf_counter() - started) * 1000)
        counts.append(len(hits))
    return {"median_ms": round(statistics.median(times), 2), "p95_ms": round(percentile(times, 0.95), 2),
            "max_ms": round(max(times), 2), "mean_results": round(statistics.fmean(counts), 2)}


# The hook's own peak RSS: started with posix_spawn (no copy of a parent's memory, which a fork's
# ru_maxrss would count) from this small parent, which reports it on stderr.
RSS_PROBE = """import os, sys
pid = os.posix_spawn(sys.argv[1], sys.argv[1:], os.environ)
_, status, usage = os.wait4(pid, 0)
sys.stderr.write(str(usage.ru_maxrss) + chr(10))
sys.exit(os.waitstatus_to_exitcode(status))
"""


def hook_process_latency(dataset: dict, n: int, runs: int, prompts: list[str]) -> dict:
    """Whole UserPromptSubmit hook processes against a store of n bullets, vs bare interpreter."""
    from ace_engine.integrations.claude_settings import hook_command

    with tempfile.TemporaryDirectory(prefix="ace-rbench-") as tmp:
        root = os.path.join(tmp, "project")
        os.makedirs(os.path.join(root, ".git"))
        with open(os.path.join(root, ".git", "config"), "w") as fh:
            fh.write('[remote "origin"]\n\turl = git@github.com:acme/bench.git\n')
        home = os.path.join(tmp, "home")
        env = {**os.environ, "ACE_HOME": home, "XDG_CONFIG_HOME": os.path.join(tmp, "cfg")}
        env.pop("ACE_DISABLED", None)
        store, _ = synth_store(os.path.join(home, "ace.db"), dataset, n, identify(root),
                               situations_each=situations.MAX_PER_LESSON, prompts=prompts)
        store.close()
        argv = shlex.split(hook_command("UserPromptSubmit", sys.executable))
        bare, hook, rss, injected = [], [], [], 0
        for i in range(runs + 2):
            payload = json.dumps({"session_id": f"bench-{i}", "transcript_path": os.path.join(root, "t.jsonl"),
                                  "cwd": root, "hook_event_name": "UserPromptSubmit", "permission_mode": "default",
                                  "prompt": prompts[i % len(prompts)]}).encode()
            started = time.perf_counter()
            subprocess.run([sys.executable, "-c", "pass"], env=env, check=True)
            b = time.perf_counter() - started
            started = time.perf_counter()
            proc = subprocess.run(argv, input=payload, env=env, capture_output=True, check=True)
            h = time.perf_counter() - started
            if i >= 2:
                bare.append(b * 1000)
                hook.append(h * 1000)
                injected += b"ace-patterns" in proc.stdout
        for i in range(3):  # peak RSS, through a small parent (see RSS_PROBE)
            payload = json.dumps({"session_id": f"rss-{i}", "transcript_path": os.path.join(root, "t.jsonl"),
                                  "cwd": root, "hook_event_name": "UserPromptSubmit", "permission_mode": "default",
                                  "prompt": prompts[i]}).encode()
            probe = subprocess.run([sys.executable, "-I", "-c", RSS_PROBE, *argv], input=payload, env=env,
                                   capture_output=True, check=True)
            rss.append(int(probe.stderr.decode().strip().splitlines()[-1]) / 1024)  # KiB on Linux
        return {"bullets": n, "situations_per_bullet": situations.MAX_PER_LESSON, "runs": runs, "bare_ms": round(statistics.median(bare), 2),
                "hook_ms": round(statistics.median(hook), 2),
                "ratio": round(statistics.median(hook) / statistics.median(bare), 2), "target_ratio": 4.0,
                "peak_rss_mib": round(max(rss), 1), "target_rss_mib": 40,
                "prompts_with_injection": injected}


CUT: dict = {}  # --cut: the threshold and relative cut every row uses instead of the defaults


def label_config(label: str) -> tuple[str, dict]:
    """A row of the report: its search mode and settings. `auto` is the default configuration as
    installed; `X+sit` is mode X finding lessons by their situations too, `X` without them;
    `X+full` adds the write-time lesson vectors (`uses_write_time`); `minilm-X`: X with the optional
    full model on both sides instead of the built-in table."""
    mode = label.removeprefix("minilm-").removesuffix("+full")
    cfg = {**DEFAULTS, **CUT}
    if mode != "auto":
        cfg["retrieval.situations"] = mode.endswith("+sit")
    return mode.removesuffix("+sit"), cfg


def uses_write_time(label: str) -> bool:
    """Whether a row's store holds the full model's write-time lesson vectors (embed/write_time.py):
    `X+full`, and `auto` when `retrieval.write_time` is on by default, when the `semantic` extra is
    installed (the learning worker would have written them); the prompt side is the table either way."""
    from ace_engine.embed import semantic

    wanted = label.endswith("+full") or (label == "auto" and bool(DEFAULTS["retrieval.write_time"]))
    return not label.startswith("minilm-") and wanted and semantic.available()


def replay_report(modes: list[str], tmp: str) -> dict:
    """The real-sessions replay set (bench/retrieval_replay.py): every label's thresholded and raw
    metrics per split, and the sweep of the cut over the raw scores of the default configuration."""
    import retrieval_replay

    results: dict[str, list[dict]] = {}
    for write_time in (False, True):  # one walk per kind of store: the learning worker writes them as it goes
        runs = {label: label_config(label)[::-1] for label in modes
                if not label.startswith("minilm-") and uses_write_time(label) == write_time}
        if runs:
            results.update(retrieval_replay.walk(os.path.join(tmp, f"replay-{write_time}.db"), runs, write_time))
    report: dict = {"quality": {}, "sweep": {}}
    for label, rows in results.items():
        shown, raw = retrieval_replay.metrics(rows), retrieval_replay.metrics(rows, "raw")
        report["quality"][label] = {split: {**m, "raw_recall": raw[split].get("recall", 0.0),
                                            "raw_mrr": raw[split].get("mrr", 0.0), "queries": m["positives"] + m["negatives"]}
                                    for split, m in shown.items()}
        cfg = label_config(label)[1]
        cut = float(cfg["retrieval.relative_cut"])
        semantic = float(cfg["retrieval.semantic_threshold"])
        report["sweep"][label] = retrieval_replay.cut_sweep(rows, cut, [round(0.02 * i, 2) for i in range(8, 26)],
                                                            semantic)
    return report


# -- main --------------------------------------------------------------------------------------------


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--modes", default="lexical,semantic,semantic+sit,hybrid,hybrid+sit,auto,auto+full,"
                                           "minilm-semantic,minilm-hybrid",
                        help="auto: the default configuration as installed; X+sit: mode X with the lessons' situations, X "
                             "without; X+full: with the write-time vectors; minilm-*: the full model on both sides")
    parser.add_argument("--no-replay", action="store_true", help="leave out the real-sessions replay set")
    parser.add_argument("--sizes", default="1000,10000,100000")
    parser.add_argument("--tune", action="store_true", help="grid-search weights on the tune split")
    parser.add_argument("--hook-runs", type=int, default=15, help="hook processes at 10k bullets (0: skip)")
    parser.add_argument("--data", choices=sorted(DATASETS), default="tuned",
                        help="tuned: the set the defaults came from; heldout: paraphrases written blind to the "
                             "ranker")
    parser.add_argument("--out", default=None, help="default bench/results/retrieval[-heldout].json")
    parser.add_argument("--cut", default="", help="THRESHOLD,RELATIVE_CUT[,SEMANTIC_THRESHOLD] for every row instead "
                                                 "of the defaults (0.23,0.75,2: the cut before issue 24; "
                                                 "0.24,0.65,2: its first part)")
    args = parser.parse_args()
    if args.cut:
        values = [float(x) for x in args.cut.split(",")]
        CUT.update({"retrieval.threshold": values[0], "retrieval.relative_cut": values[1]})
        if len(values) > 2:
            CUT["retrieval.semantic_threshold"] = values[2]
    if args.out is None:
        name = "retrieval.json" if args.data == "tuned" else f"retrieval-{args.data}.json"
        args.out = os.path.join(HERE, "results", name)
    modes = [m for m in args.modes.split(",") if m]
    if args.data == "replay":
        main_replay(args, modes)
        return
    dataset, queries = load_dataset(args.data)
    report: dict = {"data": args.data, "version": sys.version.split()[0], "machine": os.uname().machine, "cpus": os.cpu_count(),
                    "when": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                    "dataset": {"bullets": len(dataset["bullets"]), "queries": len(queries),
                                "tune": sum(q["split"] == "tune" for q in queries),
                                "para": sum(q["split"] == "para" for q in queries),
                                "test": sum(q["split"] == "test" for q in queries),
                                "negative": sum(not q["relevant"] for q in queries)},
                    "settings": {k: v for k, v in DEFAULTS.items() if k.startswith("retrieval.")},
                    "quality": {}, "latency": {}}

    with tempfile.TemporaryDirectory(prefix="ace-rbench-") as tmp:
        os.environ["ACE_HOME"] = os.path.join(tmp, "home")  # logs of the run stay in the temp dir
        stores = {}

        def store_for(write_time: bool) -> tuple:
            if write_time not in stores:
                stores[write_time] = build_store(os.path.join(tmp, f"quality-{write_time}.db"), dataset, write_time)
            return stores[write_time]

        for label in modes:
            store, ids, project_ids = store_for(uses_write_time(label))
            # `minilm-…`: the same mode with the optional full model instead of the built-in table.
            mode, cfg = label_config(label)
            if label.startswith("minilm-"):
                from ace_engine.embed import semantic

                problem = semantic.missing()
                if problem:
                    report["quality"][label] = {"skipped": problem}
                    continue
                cfg["retrieval.embedder"] = "minilm"
                started = time.perf_counter()
                semantic.encoder()
                loaded = time.perf_counter() - started
                from ace_engine.embed import vectors

                embedded = vectors.embed_missing(store, cfg={"retrieval.embedder": "minilm"})
                report.setdefault("embedding", {"model_load_seconds": round(loaded, 2), "bullets": embedded,
                                                "seconds": round(time.perf_counter() - started - loaded, 1)})
            elif mode in ("semantic", "hybrid", "auto"):
                from ace_engine.embed import vectors

                vectors.embed_missing(store)  # Playbook embedded them on write; this checks nothing is left
            if args.tune:
                score, settings, metrics = tune(store, ids, project_ids, queries, mode, cfg)
                print(f"tune {label}: best objective {score:.4f} with {settings}")
            report["quality"][label] = evaluate(store, ids, project_ids, queries, cfg, mode)
            report["quality"][label]["write_time_vectors"] = uses_write_time(label)
            if not label.startswith("minilm-"):
                report["quality"][label]["size_dependence"] = size_dependence(
                    dataset, queries, cfg, mode, tmp, ids, store, project_ids, write_time=uses_write_time(label))
            if mode == "hybrid" and "billing-api" in project_ids:
                prompts = [q["prompt"] for q in queries]
                report["latency"]["hybrid_510"] = search_latency(store, project_ids["billing-api"], prompts, "hybrid")
        for store, _, _ in stores.values():
            store.close()
        if not args.no_replay:
            report["replay"] = replay_report(modes, tmp)

        prompts = [q["prompt"] for q in queries if q["relevant"]]
        big = Project("/home/dev/src/monorepo", "github.com/acme/monorepo")
        for size in [int(s) for s in args.sizes.split(",") if s]:
            started = time.perf_counter()
            store, pid = synth_store(os.path.join(tmp, f"size-{size}.db"), dataset, size, big)
            built = time.perf_counter() - started
            report["latency"][str(size)] = {"lexical": search_latency(store, pid, prompts),
                                            "auto": search_latency(store, pid, prompts, "auto"),
                                            "build_seconds": round(built, 1)}
            from ace_engine.retrieval.search import top

            times = []
            for _ in range(20):
                started = time.perf_counter()
                top(store, pid, 40)
                times.append((time.perf_counter() - started) * 1000)
            report["latency"][str(size)]["top40_median_ms"] = round(statistics.median(times), 2)
            store.close()
            os.remove(os.path.join(tmp, f"size-{size}.db"))
        if args.hook_runs:
            report["hook_process"] = hook_process_latency(dataset, 10_000, args.hook_runs, prompts)

    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    with open(args.out, "w") as fh:
        json.dump(report, fh, indent=2)

    print(f"{'mode':<16}{'split':<6}{'recall@5':>9}{'MRR':>7}{'raw R@5':>9}{'raw MRR':>9}{'noise/q':>9}"
          f"{'neg empty':>10}{'queries':>8}{'lost: rank':>12}{'cut':>6}")
    for mode, result in report["quality"].items():
        if "skipped" in result:
            print(f"{mode:<16}skipped: {result['skipped']}")
            continue
        for split in [sp for sp in ("tune", "para", "test") if sp in result]:
            m = result[split]
            print(f"{mode:<16}{split:<6}{m['recall']:>9.3f}{m['mrr']:>7.3f}{m['raw_recall']:>9.3f}{m['raw_mrr']:>9.3f}"
                  f"{m['irrelevant_shown']:>9.2f}{m.get('negative_empty', float('nan')):>10.2f}{m['queries']:>8}"
                  f"{m['lost_rank']:>12.3f}{m['lost_cut']:>6.3f}")
    if "replay" in report:
        print_side_by_side(report, "test" if args.data == "heldout" else "tune")
    for mode, result in report["quality"].items():
        if "size_dependence" in result:
            d = result["size_dependence"]
            print(f"{mode:<16}score in a 5-lesson store vs the whole scope: mean |diff| {d['mean_abs_diff']:.3f},"
                  f" threshold decides differently on {d['threshold_flips']:.0%} of {d['prompts']} prompts")
    print(f"\n{'bullets':>8}{'median ms':>11}{'p95 ms':>9}{'max ms':>9}{'top40 ms':>10}")
    for size, lat in report["latency"].items():
        for mode in ("lexical", "auto"):
            if mode in lat:
                lx = lat[mode]
                print(f"{size:>8}{lx['median_ms']:>11}{lx['p95_ms']:>9}{lx['max_ms']:>9}{lat['top40_median_ms']:>10}"
                      f"  {mode}")
    if "hybrid_510" in report["latency"]:
        h = report["latency"]["hybrid_510"]
        print(f"hybrid search on the 510-bullet store (model loaded): median {h['median_ms']} ms, p95 {h['p95_ms']} ms")
    if "embedding" in report:
        e = report["embedding"]
        print(f"semantic: model loaded in {e['model_load_seconds']} s; {e['bullets']} bullets embedded in {e['seconds']} s")
    if "hook_process" in report:
        h = report["hook_process"]
        print(f"\nUserPromptSubmit hook process at {h['bullets']} bullets ({h.get('situations_per_bullet', 0)} situations"
              f" each): {h['hook_ms']} ms vs bare {h['bare_ms']} ms"
              f" → ratio {h['ratio']} (target ≤ {h['target_ratio']}), peak RSS {h['peak_rss_mib']} MiB"
              f" (target ≤ {h['target_rss_mib']}), injected on {h['prompts_with_injection']}/{h['runs']}")
    print(f"written to {args.out}")


def print_side_by_side(report: dict, split: str) -> None:
    """Every row on one line: the labelled set's `split`, then the replay set's two splits, each
    thresholded (as injected) and raw (the ranking alone, k=5). noise: irrelevant lessons shown per
    positive prompt; neg: share of the prompts that should get nothing that got nothing."""
    print(f"\n{'':<18}{report['data'] + ' / ' + split:<43}{'replay set: replay split':<43}final split")
    head = f"{'R@5':>6}{'MRR':>6}{'noise':>6}{'neg':>5} |{'raw R@5':>8}{'MRR':>6}"
    print(f"{'mode':<18}{head}    {head}    {'R@5':>6}{'MRR':>6}{'noise':>6} |{'raw R@5':>8}{'MRR':>6}")
    for label, result in report["quality"].items():
        m = result.get(split)
        r = report["replay"]["quality"].get(label, {})
        if not m:
            continue
        name = label
        line = (f"{name:<18}{m['recall']:>6.3f}{m['mrr']:>6.3f}{m['irrelevant_shown']:>6.2f}"
                f"{m.get('negative_empty', float('nan')):>5.2f} |{m['raw_recall']:>8.3f}{m['raw_mrr']:>6.3f}")
        for sp in ("replay", "final"):
            x = r.get(sp)
            if x is None:
                continue
            neg = f"{x.get('negative_empty', float('nan')):>5.2f}" if sp == "replay" else ""
            line += (f"    {x.get('recall', 0):>6.3f}{x.get('mrr', 0):>6.3f}{x.get('irrelevant_shown', 0):>6.2f}{neg}"
                     f" |{x['raw_recall']:>8.3f}{x['raw_mrr']:>6.3f}")
        print(line)


def main_replay(args: argparse.Namespace, modes: list[str]) -> None:
    with tempfile.TemporaryDirectory(prefix="ace-rbench-") as tmp:
        os.environ["ACE_HOME"] = os.path.join(tmp, "home")
        report = {"data": "replay", "when": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                  "settings": {k: v for k, v in DEFAULTS.items() if k.startswith("retrieval.")},
                  **replay_report(modes, tmp)}
    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    with open(args.out, "w") as fh:
        json.dump(report, fh, indent=2)
    print(f"{'mode':<13}{'split':<7}{'recall@5':>9}{'MRR':>7}{'raw R@5':>9}{'raw MRR':>9}{'noise/q':>9}"
          f"{'neg empty':>10}{'pos':>5}{'neg':>5}")
    for mode, result in report["quality"].items():
        for split, m in result.items():
            print(f"{mode:<13}{split:<7}{m.get('recall', 0):>9.3f}{m.get('mrr', 0):>7.3f}{m['raw_recall']:>9.3f}"
                  f"{m['raw_mrr']:>9.3f}{m.get('irrelevant_shown', 0):>9.2f}{m.get('negative_empty', float('nan')):>10.2f}"
                  f"{m['positives']:>5}{m['negatives']:>5}")
    if "auto" in report["sweep"]:
        print("\nthe cut on the default configuration's raw scores (replay split: R@5 / MRR / negatives empty /"
              " irrelevant shown per prompt; final split: R@5 / MRR / irrelevant shown)")
        for row in report["sweep"]["auto"]:
            r, f = row.get("replay", {}), row.get("final", {})
            print(f"  threshold {row['threshold']:.2f}: replay {r.get('recall', 0):.3f} / {r.get('mrr', 0):.3f} /"
                  f" {r.get('negative_empty', 0):.2f} / {r.get('irrelevant_shown', 0):.2f}   final"
                  f" {f.get('recall', 0):.3f} / {f.get('mrr', 0):.3f} / {f.get('irrelevant_shown', 0):.2f}")
    print(f"written to {args.out}")


if __name__ == "__main__":
    main()
