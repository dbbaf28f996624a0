"""Auto-memory bench: the lessons Claude Code's own memory notes give on the corpus, and how many of
them the offline learner did not find by itself.

    python bench/auto_memory_bench.py [--venv .venv] [--json OUT]

Contract. Every corpus session (bench/corpus/trajectories, and external/ when fetched) whose agent
writes into its auto memory (a Write / Edit / MultiEdit of `…/.claude/projects/<folder>/memory/*.md`)
is learned in a fresh ACE_HOME and `git init` project (`ace learn --transcript F --project P
--heuristic --json`). Its lessons of kind `auto_memory` are the ones found this way; one is
"missed by the learner" when no other lesson of that session is a near duplicate of it
(`similarity.duplicate_score` ≥ `learning.merge_similarity`) nor shares half its distinctive words.
No gold is read: the figure is about what the offline learner wrote down, not about gold.

Cost. One `ace learn` per such session (a few seconds each); never touches the user's ace home.
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import re
import sqlite3
import subprocess
import sys
import tempfile
from typing import Any

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(HERE, "corpus"))
from transcripts import unpack  # noqa: E402  (bench/ is not a package; the transcripts are stored gzip-compressed)

_NOTE = re.compile(r'"file_path":\s*"[^"]*/\.claude/projects/[^"/]+/memory/[^"/]+\.md"')
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_./-]{3,}")


def writes_memory(path: str) -> bool:
    """Whether the session's agent writes a note into its auto memory (a Read of one does not count)."""
    with open(path, encoding="utf-8", errors="replace") as fh:
        for line in fh:
            if "/memory/" not in line or not _NOTE.search(line):
                continue
            try:
                content = (json.loads(line).get("message") or {}).get("content")
            except (ValueError, AttributeError):
                continue
            for block in content if isinstance(content, list) else []:
                if (isinstance(block, dict) and block.get("type") == "tool_use"
                        and block.get("name") in ("Write", "Edit", "MultiEdit")
                        and _NOTE.search(json.dumps({"file_path": (block.get("input") or {}).get("file_path")}))):
                    return True
    return False


def sessions() -> list[str]:
    unpack(os.path.join(HERE, "corpus"))
    return [path for base in ("trajectories", "external")
            for path in sorted(glob.glob(os.path.join(HERE, "corpus", base, "*.jsonl"))) if writes_memory(path)]


def _words(text: str) -> set[str]:
    return {w.lower().strip("./-") for w in _WORD.findall(text)}


def learn(path: str, python: str) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        project = os.path.join(tmp, "proj")
        os.makedirs(project)
        subprocess.run(["git", "init", "-q", project], check=True)
        env = {**os.environ, "ACE_HOME": os.path.join(tmp, "ace"), "ACE_CONFIG": os.path.join(tmp, "ace.toml"),
               "XDG_CONFIG_HOME": os.path.join(tmp, "xdg"), "HOME": tmp,
               "CLAUDE_CONFIG_DIR": os.path.join(tmp, "claude")}
        proc = subprocess.run([python, "-m", "ace_engine.cli", "learn", "--transcript", path, "--project", project,
                               "--heuristic", "--json"], capture_output=True, text=True, env=env, timeout=600)
        if proc.returncode != 0:
            return {"session": os.path.basename(path), "error": proc.stderr.strip()[-400:]}
        con = sqlite3.connect(os.path.join(tmp, "ace", "ace.db"))
        rows = [(c, s, json.loads(p or "{}")) for c, s, p in con.execute(
            "SELECT content, status, provenance FROM bullets")]
        con.close()
    from ace_engine.core.config import DEFAULTS
    from ace_engine.learning import similarity

    memory = [(c, s) for c, s, p in rows if p.get("kind") == "auto_memory"]
    others = [c for c, _, p in rows if p.get("kind") != "auto_memory"]
    missed = []
    for content, _ in memory:
        words = _words(content)
        near = any(similarity.duplicate_score(content, o) >= DEFAULTS["learning.merge_similarity"] for o in others)
        shared = any(words and len(words & _words(o)) >= 0.5 * len(words) for o in others)
        if not (near or shared):
            missed.append(content)
    return {"session": os.path.basename(path), "memory_lessons": [{"content": c, "status": s} for c, s in memory],
            "other_lessons": len(others), "missed_by_learner": missed}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--venv", default=os.path.join(ROOT, ".venv"))
    parser.add_argument("--json", dest="out")
    args = parser.parse_args(argv)
    python = os.path.join(args.venv, "bin", "python")
    results = [learn(path, python) for path in sessions()]
    total = sum(len(r.get("memory_lessons") or []) for r in results)
    missed = sum(len(r.get("missed_by_learner") or []) for r in results)
    for r in results:
        if "error" in r:
            print(f"{r['session']}: error {r['error']}")
            continue
        print(f"{r['session']}: {len(r['memory_lessons'])} from memory notes "
              f"({', '.join(m['status'] for m in r['memory_lessons']) or '-'}), {r['other_lessons']} by the learner, "
              f"{len(r['missed_by_learner'])} of the first not found by the learner")
        for m in r["memory_lessons"]:
            print(f"    {m['content'][:160]}")
    print(f"sessions writing memory notes: {len(results)}; lessons from their notes: {total}; "
          f"not found by the offline learner: {missed}")
    if args.out:
        with open(args.out, "w", encoding="utf-8") as fh:
            json.dump({"sessions": results, "memory_lessons": total, "missed_by_learner": missed}, fh, indent=1)


if __name__ == "__main__":
    sys.path.insert(0, os.path.join(ROOT, "src"))
    main()
