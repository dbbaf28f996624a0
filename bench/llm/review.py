"""The hand review of active lessons: a sheet of random active model lessons, and the tally of its verdicts.

    python bench/llm/review.py sheet KEEP_DIR OUT_DIR [--split tune] [--n 50] [--seed 1]
    python bench/llm/review.py tally OUT_DIR

Contract. `sheet` reads the stores `bench/llm/score.py --keep` left (KEEP_DIR/<session>/acehome/ace.db)
of the sessions of `--split`, takes every active lesson a model wrote (provenance kind `llm`), draws
`--n` of them at random (`--seed`: the same stores and seed give the same sheet) and writes
OUT_DIR/sheet.jsonl: per lesson its number, repository, the start of its session's task, section,
text and the evidence the model gave — what a reviewer reads under `bench/llm/REVIEWING.md`, the one
instruction a review is done under. OUT_DIR/key.jsonl keeps which session each number came from.
`tally` reads the reviewer's OUT_DIR/verdicts.jsonl and prints the counts (good / wrong / useless,
and lines missing or unreadable) as JSON: for the held-out split, the only thing read of a review.

Stdlib only; reads the stores read-only.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sqlite3
import sys
from typing import Any

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
TASK_CHARS = 300
VERDICTS = ("good", "wrong", "useless")


def active_lessons(keep: str, split: str) -> list[dict[str, Any]]:
    with open(os.path.join(ROOT, "bench", "corpus", "gold.json"), encoding="utf-8") as fh:
        trajs = [t for t in json.load(fh)["trajectories"] if t["split"] == split]
    out = []
    for traj in trajs:
        db = os.path.join(keep, traj["id"], "acehome", "ace.db")
        if not os.path.exists(db):
            continue
        con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
        try:
            rows = con.execute("SELECT id, section, content, provenance FROM bullets WHERE status = 'active' "
                               "ORDER BY id").fetchall()
        finally:
            con.close()
        for bullet_id, section, content, prov in rows:
            p = json.loads(prov or "{}")
            if p.get("kind") != "llm":
                continue
            out.append({"session": traj["id"], "bullet": bullet_id, "repo": traj.get("repo") or "?",
                        "task": " ".join(str(p.get("task") or "").split())[:TASK_CHARS], "section": section,
                        "lesson": content, "evidence": p.get("evidence") or ""})
    return out


def sheet(keep: str, out_dir: str, split: str, n: int, seed: int) -> int:
    lessons = active_lessons(keep, split)
    drawn = random.Random(seed).sample(lessons, min(n, len(lessons)))
    os.makedirs(out_dir, exist_ok=True)
    with open(os.path.join(out_dir, "sheet.jsonl"), "w", encoding="utf-8") as fh, \
            open(os.path.join(out_dir, "key.jsonl"), "w", encoding="utf-8") as key:
        for i, lesson in enumerate(drawn, 1):
            fh.write(json.dumps({"n": i, **{k: lesson[k] for k in ("repo", "task", "section", "lesson",
                                                                  "evidence")}}, ensure_ascii=False) + "\n")
            key.write(json.dumps({"n": i, "session": lesson["session"], "bullet": lesson["bullet"]}) + "\n")
    return len(drawn)


def tally(out_dir: str) -> dict[str, int]:
    with open(os.path.join(out_dir, "sheet.jsonl"), encoding="utf-8") as fh:
        numbers = {json.loads(line)["n"] for line in fh if line.strip()}
    counts = dict.fromkeys(VERDICTS, 0)
    seen: set[int] = set()
    unreadable = 0
    path = os.path.join(out_dir, "verdicts.jsonl")
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            if not line.strip():
                continue
            try:
                row = json.loads(line)
                verdict, number = row["verdict"], int(row["n"])
            except (ValueError, KeyError, TypeError):
                unreadable += 1
                continue
            if verdict not in counts or number not in numbers or number in seen:
                unreadable += 1
                continue
            seen.add(number)
            counts[verdict] += 1
    return {**counts, "missing": len(numbers - seen), "unreadable": unreadable}


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("sheet")
    s.add_argument("keep")
    s.add_argument("out")
    s.add_argument("--split", default="tune")
    s.add_argument("--n", type=int, default=50)
    s.add_argument("--seed", type=int, default=1)
    t = sub.add_parser("tally")
    t.add_argument("out")
    args = ap.parse_args(argv)
    if args.cmd == "sheet":
        print(f"{sheet(args.keep, args.out, args.split, args.n, args.seed)} lessons on the sheet", file=sys.stderr)
    else:
        print(json.dumps(tally(args.out)))


if __name__ == "__main__":
    main()
