"""The real-sessions replay set of `bench/retrieval_bench.py` (issue 24): learn from a repository's earlier
sessions, query with its later ones.

`bench/data/replay/sessions.json` (made by `make_replay.py` there from `bench/corpus/gold.json`) holds,
per repository, its sessions in time order with the user's first prompts and the gold lessons written
for each. `walk()` replays every repository into its own project of one real store, session by session:

  1. query, before learning from session i, with its first prompt and with the gold `prompts` of each
     of its lessons. Relevant: the lessons already stored that match (the corpus's `must_any` rule) a
     gold lesson of session i — the lesson came back, so showing the earlier one would have helped.
     When none does, the prompt should get nothing (a negative): the store has no lesson for it yet.
  2. learn from session i: each gold lesson that matches a stored one confirms it (that lesson gets
     session i's prompts as situations: the reinforcement path); any other is added with session i's
     prompts as its situations (the learning path). Both go through `retrieval.situations.add`.

Split `replay`: those queries, in time order. Split `final`: after the walk, every gold prompt of every
lesson against the whole store (relevant: that lesson and the lessons matching it), leaving out a
prompt that repeats one of the lesson's own situations (Jaccard of words > 0.5: a leak, not a find).
Every query is searched once raw (k=5, no threshold) and once with `cfg`; `cut_sweep()` re-applies any
threshold to the raw scores, which is how the cut is chosen on this set.
"""

import json
import os
import re
import statistics

HERE = os.path.dirname(os.path.abspath(__file__))
SESSIONS = os.path.join(HERE, "data", "replay", "sessions.json")
NOW = 1_750_000_000.0
DAY = 86400.0
K = 5


def _words(text: str) -> set[str]:
    return set(re.findall(r"\w+", text.lower()))


def _jaccard(a: str, b: str) -> float:
    x, y = _words(a), _words(b)
    return len(x & y) / len(x | y) if x | y else 0.0


def matches(must_any: list[list[str]], text: str) -> bool:
    lowered = text.lower()
    return all(any(token.lower() in lowered for token in group) for group in must_any)


def load() -> dict:
    with open(SESSIONS, encoding="utf-8") as fh:
        return json.load(fh)


def _search(store, q: dict, cfg: dict, mode: str) -> dict:
    from ace_engine.retrieval.search import search

    raw = search(store, q["project_id"], q["prompt"], k=K, cfg={**cfg, "retrieval.threshold": -1.0}, mode=mode,
                 now=q["now"])
    shown = search(store, q["project_id"], q["prompt"], k=K, cfg=cfg, mode=mode, now=q["now"])
    return {"split": q["split"], "relevant": q["relevant"], "prompt": q["prompt"],
            "raw": [(h["id"], h["score"], h.get("score_parts", {}).get("cosine")) for h in raw],
            "shown": [h["id"] for h in shown]}


def walk(path: str, runs: dict[str, tuple[dict, str]], write_time: bool = False) -> dict[str, list[dict]]:
    """Replay every repository into a store at `path`, searching each query at its time with every
    (cfg, mode) of `runs`; returns {label: [{split, relevant, raw: [(id, score)], shown: [id]}]}.
    `write_time`: after each session, the full model's write-time vectors of the new lessons, as the
    learning worker computes them (embed/write_time.py; nothing without the `semantic` extra)."""
    from ace_engine.core.project import Project
    from ace_engine.playbook.playbook import Playbook
    from ace_engine.retrieval import situations
    from ace_engine.store.sqlite import SQLiteStore

    store = SQLiteStore(path)
    results: dict[str, list[dict]] = {label: [] for label in runs}
    lessons: dict[str, dict] = {}  # bullet id → {project_id, content, gold: [...], situations: [...]}
    for n, repo in enumerate(load()["repos"]):
        playbook = Playbook(store, Project(f"/replay/{n}", f"github.com/{repo['repo']}"))
        pid = playbook.project_id
        stored: list[str] = []
        for i, session in enumerate(repo["sessions"]):
            now = NOW - (len(repo["sessions"]) - i) * DAY
            asked = [(p, [ls["must_any"] for ls in session["lessons"]]) for p in session["prompts"][:1]]
            asked += [(p, [lesson["must_any"]]) for lesson in session["lessons"] for p in lesson["prompts"]]
            for prompt, rules in asked:
                relevant = [b for b in stored if any(matches(rule, lessons[b]["content"]) for rule in rules)]
                q = {"project_id": pid, "prompt": prompt, "relevant": relevant, "split": "replay", "now": now}
                for label, (cfg, mode) in runs.items():
                    results[label].append(_search(store, q, cfg, mode))
            items = [("prompt", p) for p in session["prompts"][:situations.PROMPTS_PER_SESSION]]
            with playbook:
                for lesson in session["lessons"]:
                    known = next((b for b in stored if matches(lesson["must_any"], lessons[b]["content"])), None)
                    if known is None:
                        bullet, _ = playbook.add(lesson["lesson"], "strategies_and_hard_rules", scope="project",
                                                 source="bench", now=now)
                        known = bullet["id"]
                        stored.append(known)
                        lessons[known] = {"project_id": pid, "content": bullet["content"], "gold": [],
                                          "situations": []}
                    lessons[known]["gold"].append(lesson)
                    lessons[known]["situations"] += [p for _, p in items]
                    situations.add(store, known, items, session_id=session["id"], now=now)
            if write_time:
                from ace_engine.embed import write_time as write_time_mod

                write_time_mod.refresh(store)
    for bid, lesson in lessons.items():
        peers = [b for b, x in lessons.items() if x["project_id"] == lesson["project_id"]]
        for gold in lesson["gold"]:
            relevant = list(dict.fromkeys([bid, *(b for b in peers if matches(gold["must_any"], lessons[b]["content"]))]))
            for prompt in gold["prompts"]:
                if any(_jaccard(prompt, s) > 0.5 for s in lesson["situations"]):
                    continue
                q = {"project_id": lesson["project_id"], "prompt": prompt, "relevant": relevant, "split": "final",
                     "now": NOW}
                for label, (cfg, mode) in runs.items():
                    results[label].append(_search(store, q, cfg, mode))
    store.close()
    return results


def metrics(results: list[dict], key: str = "shown") -> dict:
    """recall@5, MRR (positives), negative_empty and shown-per-negative, irrelevant shown per positive."""
    per: dict[str, dict[str, list[float]]] = {}
    for r in results:
        ids = [hit[0] for hit in r["raw"]] if key == "raw" else r[key]
        stats = per.setdefault(r["split"], {})
        relevant = set(r["relevant"])
        if relevant:
            stats.setdefault("recall", []).append(len(relevant & set(ids)) / len(relevant))
            stats.setdefault("mrr", []).append(next((1 / n for n, i in enumerate(ids, 1) if i in relevant), 0.0))
            stats.setdefault("irrelevant_shown", []).append(sum(1 for i in ids if i not in relevant))
        else:
            stats.setdefault("negative_empty", []).append(1.0 if not ids else 0.0)
            stats.setdefault("negative_shown", []).append(len(ids))
    return {split: {**{name: round(statistics.fmean(v), 4) for name, v in stats.items()},
                    "positives": len(stats.get("recall", [])), "negatives": len(stats.get("negative_empty", []))}
            for split, stats in sorted(per.items())}


def cut(raw: list[tuple[str, float, float | None]], threshold: float, relative: float,
        semantic_threshold: float = 2.0) -> list[str]:
    """What `search` shows for a threshold, a relative cut and a semantic threshold (the best hit passing
    on its cosine alone: `retrieval.search._cut`), from the raw ranking."""
    kept = [(i, s) for i, s, _ in raw if s >= threshold]
    from ace_engine.retrieval.search import SEMANTIC_ALLOWANCE

    if raw and threshold - SEMANTIC_ALLOWANCE <= raw[0][1] < threshold and (raw[0][2] or 0.0) >= semantic_threshold:
        kept = [raw[0][:2]]
    if kept and relative > 0:
        best = max(s for _, s in kept)
        kept = [(i, s) for i, s in kept if s >= relative * best]
    return [i for i, _ in kept]


def cut_sweep(results: list[dict], relative: float, thresholds: list[float],
              semantic_threshold: float = 2.0) -> list[dict]:
    """Per threshold: the replay split's and final split's metrics when that cut is applied to the raw scores."""
    rows = []
    for t in thresholds:
        shown = [{**r, "shown": cut(r["raw"], t, relative, semantic_threshold)} for r in results]
        rows.append({"threshold": t, **metrics(shown)})
    return rows
