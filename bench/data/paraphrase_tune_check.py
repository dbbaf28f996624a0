"""Check `paraphrase_tune.json`, the paraphrased tuning prompts of the retrieval benchmark.

    python bench/data/paraphrase_tune_check.py          # exit 0 and a summary when clean, 1 with problems

Contract: every entry has exactly the shape of a `queries.json` entry (`id, project, prompt, relevant,
split`), ids are unique (`pt-NNN` for positives, `pt-neg-NN` for negatives), `split` is "tune", the
project exists in `bullets.json`, each relevant key exists and belongs to the prompt's project or to
global, and a prompt shares at most MAX_SHARED content words with each of its relevant bullets.
"Content word": an alphanumeric token of at least 3 characters, lower-cased, not a stop word; two
words count as shared when their crude stems match (suffixes stripped, then cut to 6 characters),
so "migrate"/"migration" or "test"/"tests" count once. The cut errs on the side of counting a word
as shared, which makes the check stricter than a human reader. Stdlib only; cost is linear in the
number of prompts (well under a second). Never reads `heldout/`.
"""

import json
import os
import re
import sys
from collections import Counter

HERE = os.path.dirname(os.path.abspath(__file__))
MAX_SHARED = 2
KEYS = ["id", "project", "prompt", "relevant", "split"]

STOP = set("""
a about above after again against all also am an and any are aren as at be because been before being
below between both but by can cannot could did didn do does doesn doing don down during each even ever
every few for from further get gets got had has have having he her here hers herself him himself his how
i if in into is isn it its itself just like me more most much my myself no nor not now of off on once
only or other our ours ourselves out over own same she should so some such than that the their theirs
them themselves then there these they this those through to too under until up upon us very was wasn we
were weren what when where which while who whom why will with won would you your yours yourself
yourselves yet still though already instead via per
""".split())

SUFFIXES = ("ations", "ation", "ings", "ing", "ions", "ion", "ers", "er", "ies", "ied", "es", "ed", "ly",
            "s", "e", "y")


def stem(word: str) -> str:
    # Strip suffixes repeatedly (migrations -> migration -> migrat), undo a doubled final consonant
    # (running -> runn -> run), then cut to 6 characters so derived forms still meet.
    changed = True
    while changed:
        changed = False
        for suf in SUFFIXES:
            if word.endswith(suf) and len(word) - len(suf) >= 3:
                word = word[: -len(suf)]
                changed = True
                break
    if len(word) >= 4 and word[-1] == word[-2] and word[-1] not in "aeiousl":
        word = word[:-1]
    return word[:6]


def content_stems(text: str) -> dict[str, str]:
    """Map stem -> first surface word for the content words of `text`."""
    out: dict[str, str] = {}
    for tok in re.findall(r"[a-z0-9]+", text.lower()):
        if len(tok) < 3 or tok in STOP:
            continue
        out.setdefault(stem(tok), tok)
    return out


def shared_words(prompt: str, content: str) -> list[str]:
    p, c = content_stems(prompt), content_stems(content)
    return sorted(p[s] for s in p.keys() & c.keys())


def main() -> int:
    with open(os.path.join(HERE, "bullets.json"), encoding="utf-8") as fh:
        data = json.load(fh)
    bullets = {b["key"]: b for b in data["bullets"]}
    projects = {p["name"] for p in data["projects"]}
    with open(os.path.join(HERE, "paraphrase_tune.json"), encoding="utf-8") as fh:
        entries = json.load(fh)

    problems: list[str] = []
    if not isinstance(entries, list):
        print("top level must be a list")
        return 1
    ids = Counter(e.get("id") for e in entries)
    problems += [f"duplicate id {i}" for i, n in ids.items() if n > 1]
    prompts = Counter(e.get("prompt", "").strip().lower() for e in entries)
    problems += [f"duplicate prompt {p!r}" for p, n in prompts.items() if n > 1]
    overlap: Counter[int] = Counter()
    per_project: Counter[str] = Counter()
    per_target: Counter[str] = Counter()
    for e in entries:
        eid = e.get("id")
        if list(e.keys()) != KEYS:
            problems.append(f"{eid}: keys {list(e.keys())} != {KEYS}")
            continue
        if e["split"] != "tune":
            problems.append(f"{eid}: split must be 'tune'")
        if e["project"] not in projects or e["project"] == "global":
            problems.append(f"{eid}: project {e['project']!r} is not a project of bullets.json")
        if not isinstance(e["prompt"], str) or not isinstance(e["relevant"], list):
            problems.append(f"{eid}: prompt must be a string and relevant a list")
            continue
        n_words = len(e["prompt"].split())
        if not 5 <= n_words <= 25:
            problems.append(f"{eid}: {n_words} words, want 5-25")
        negative = not e["relevant"]
        if negative != str(eid).startswith("pt-neg-") or not re.fullmatch(r"pt-(neg-\d{2}|\d{3})", str(eid)):
            problems.append(f"{eid}: id must be pt-NNN (positive) or pt-neg-NN (negative)")
        if len(e["relevant"]) > 2:
            problems.append(f"{eid}: more than 2 relevant bullets")
        per_project[e["project"] + (" (neg)" if negative else "")] += 1
        for key in e["relevant"]:
            b = bullets.get(key)
            if b is None:
                problems.append(f"{eid}: unknown bullet {key}")
                continue
            if b["project"] not in (e["project"], "global"):
                problems.append(f"{eid}: {key} belongs to {b['project']}, not {e['project']} or global")
            per_target[b["project"]] += 1
            shared = shared_words(e["prompt"], b["content"])
            overlap[len(shared)] += 1
            if len(shared) > MAX_SHARED:
                problems.append(f"{eid}: shares {len(shared)} content words with {key}: {shared}")

    for p in problems:
        print("PROBLEM", p)
    print("prompts per project:", dict(sorted(per_project.items())))
    print("relevant bullets by owning project:", dict(sorted(per_target.items())))
    print("shared content words per (prompt, relevant bullet):", dict(sorted(overlap.items())))
    print("clean" if not problems else f"{len(problems)} problem(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
