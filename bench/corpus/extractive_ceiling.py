"""How much of the gold could any learner that copies one sentence of a session match? (issue 23)

    python3 bench/corpus/extractive_ceiling.py [--split tune|heldout|all] [--scorer ../shared/learning-corpus/score.py]

For each gold lesson of the chosen split, is there a single sentence in its session that meets the
lesson's `must_any` (the scorer's own `matches`, imported, never copied)? Three pools of sentences:

- assistant: every sentence of the agent's own text (its explanations, diagnoses, summaries);
- user: every prompt the user typed and the words they typed when stopping a tool call;
- diagnosis: the first causal sentence(s) of the agent's text right after a failed tool call
  ("the issue is…", "… requires …", "… not installed") — what a cheap offline rule could pick.

It prints counts only (held-out gold is never printed), and how many sentences each pool holds: a
pool that matches much but holds thousands of sentences says how hard picking the right one is.
Claude Code transcripts only (Codex rollouts are counted as not read). Stdlib only; seconds to run.
"""

import argparse
import importlib.util
import json
import os
import re

from transcripts import readable  # beside this file: the committed transcripts are stored gzip-compressed

HERE = os.path.dirname(os.path.abspath(__file__))
SENTENCE = re.compile(r"(?<=[.!?])\s+|\n+")
CAUSAL = re.compile(r"\b(?:because|the (?:issue|problem|cause|reason|error|failure) (?:is|was|here)|root cause|needs? to|"
                    r"requires?|must|instead of|rather than|only works|you need|we need|isn't|is not|doesn't|does not|"
                    r"can't|cannot|not on PATH|has no|not installed)\b", re.IGNORECASE)
SAID = re.compile(r"the user said:\s*(.+)", re.IGNORECASE | re.S)


def scorer_matches(path: str):
    spec = importlib.util.spec_from_file_location("score", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.matches


def pools(path: str) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {"assistant": [], "user": [], "diagnosis": []}
    after_failure = False
    with open(path, encoding="utf-8", errors="replace") as fh:
        for line in fh:
            try:
                entry = json.loads(line)
            except ValueError:
                continue
            message = entry.get("message") if isinstance(entry, dict) else None
            content = message.get("content") if isinstance(message, dict) else None
            if entry.get("type") == "user":
                if isinstance(content, str) and not content.startswith("<"):
                    out["user"].append(content)
                for block in content if isinstance(content, list) else []:
                    if not isinstance(block, dict) or block.get("type") != "tool_result":
                        continue
                    text = json.dumps(block.get("content"))
                    said = SAID.search(block.get("content") if isinstance(block.get("content"), str) else "")
                    if said:
                        out["user"].append(said.group(1))
                    elif block.get("is_error") and "interrupted" not in text:
                        after_failure = True
            elif entry.get("type") == "assistant":
                for block in content if isinstance(content, list) else []:
                    if isinstance(block, dict) and block.get("type") == "text":
                        sentences = [s for s in SENTENCE.split(block.get("text", "")) if len(s) > 20]
                        out["assistant"] += sentences
                        if after_failure:
                            out["diagnosis"] += [s for s in sentences if len(s) < 300 and CAUSAL.search(s)][:2]
                            after_failure = False
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--split", default="all", choices=("tune", "heldout", "all"))
    parser.add_argument("--scorer", default=os.path.join(HERE, "..", "..", "..", "shared", "learning-corpus", "score.py"))
    args = parser.parse_args()
    matches = scorer_matches(args.scorer)
    gold = json.load(open(os.path.join(HERE, "gold.json"), encoding="utf-8"))
    for split in ("tune", "heldout") if args.split == "all" else (args.split,):
        counts = {"gold": 0, "not read": 0, "assistant": 0, "user": 0, "diagnosis": 0}
        sizes = {"assistant": 0, "user": 0, "diagnosis": 0}
        for traj in gold["trajectories"]:
            if traj["split"] != split:
                continue
            path = os.path.join(HERE, traj["file"])
            if not readable(path):
                path = os.path.join(HERE, "external", os.path.basename(traj["file"]))
            found = pools(path) if os.path.exists(path) and traj.get("kind") != "codex" else None
            for pool in sizes:
                sizes[pool] += len(found[pool]) if found else 0
            for lesson in traj["lessons"]:
                counts["gold"] += 1
                if found is None:
                    counts["not read"] += 1
                    continue
                for pool in sizes:
                    counts[pool] += any(matches(s, lesson["must_any"]) for s in found[pool])
        share = {k: round(v / max(counts["gold"], 1), 2) for k, v in counts.items() if k != "gold"}
        print(f"{split}: gold {counts['gold']}; one sentence matches (share): {share}; sentences per pool: {sizes}")


if __name__ == "__main__":
    main()
