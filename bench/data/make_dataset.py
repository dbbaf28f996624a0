"""Build the retrieval benchmark's dataset from the hand-written corpus in `corpus/*.txt`.

    python bench/data/make_dataset.py      # writes bench/data/bullets.json and queries.json

The corpus holds lessons a coding agent would have learned in six invented projects (a FastAPI
billing service, a React dashboard, a Rust CLI, a Python data pipeline, a Node/Express API, a Go
service) plus global ones, and prompts a developer would type, each labelled with the bullets
that should come back (none for the off-topic "negative" prompts). This script only adds what a
real playbook would also have and the corpus leaves out — helpful/harmful counters, ages, last
use — deterministically (seeded by each bullet's key), and splits the queries into a tuning set
and a held-out test set (30%, by a hash of the query id, so the split never changes).
"""

import hashlib
import json
import os
import random

HERE = os.path.dirname(os.path.abspath(__file__))
SECTIONS = {"S": "strategies_and_hard_rules", "P": "troubleshooting_and_pitfalls",
            "C": "useful_code_snippets", "A": "apis_to_use"}


def parse_corpus(path: str) -> tuple[dict, list[dict], list[dict]]:
    project, bullets, queries = None, [], []
    with open(path, encoding="utf-8") as fh:
        for number, raw in enumerate(fh, 1):
            line = raw.strip()
            if not line or line.startswith("#"):
                continue
            kind, _, rest = line.partition(" ")
            fields = [f.strip() for f in rest.split(" | ", 2)]
            if kind == "project":
                name, key, root = fields
                project = {"name": name, "key": None if key == "-" else key, "root": None if root == "-" else root}
            elif kind == "B":
                key, section, content = fields
                bullets.append({"key": key, "project": project["name"], "section": SECTIONS[section], "content": content})
            elif kind == "Q":
                qid, relevant, prompt = fields
                queries.append({"id": qid, "project": project["name"], "prompt": prompt,
                                "relevant": [] if relevant == "-" else [r.strip() for r in relevant.split(",")]})
            else:
                raise SystemExit(f"{path}:{number}: cannot parse {line!r}")
    return project, bullets, queries


def counters(key: str) -> dict:
    """Plausible usage history: most bullets young and lightly used, some proven, a few bad."""
    rng = random.Random(hashlib.sha256(key.encode()).hexdigest())
    kind = rng.random()
    if kind < 0.45:    # new, never judged
        helpful, harmful = 0, 0
    elif kind < 0.85:  # used and mostly helpful
        helpful, harmful = rng.randint(1, 9), rng.randint(0, 1)
    elif kind < 0.95:  # proven, with explicit marks
        helpful, harmful = rng.randint(5, 20), rng.randint(0, 2)
    else:              # doubtful
        helpful, harmful = rng.randint(0, 1), rng.randint(2, 5)
    explicit = rng.randint(1, 3) if kind >= 0.85 and kind < 0.95 else 0
    age = round(rng.uniform(0.5, 240.0), 1)
    last_used = round(rng.uniform(0.0, age), 1) if helpful or harmful else None
    return {"helpful": helpful, "harmful": harmful, "helpful_explicit": explicit, "harmful_explicit": 0,
            "age_days": age, "last_used_days": last_used}


def split_of(qid: str) -> str:
    return "test" if int(hashlib.sha256(qid.encode()).hexdigest(), 16) % 10 < 3 else "tune"


def main() -> None:
    projects, bullets, queries = [], [], []
    for name in sorted(os.listdir(os.path.join(HERE, "corpus"))):
        if name.endswith(".txt"):
            project, b, q = parse_corpus(os.path.join(HERE, "corpus", name))
            projects.append(project)
            bullets += b
            queries += q
    keys = {b["key"] for b in bullets}
    assert len(keys) == len(bullets), "duplicate bullet keys"
    scoped = [p["name"] for p in projects if p["key"]]
    for b in bullets:
        b.update(counters(b["key"]))
    for i, q in enumerate(queries):
        missing = [r for r in q["relevant"] if r not in keys]
        assert not missing, f"{q['id']}: unknown bullets {missing}"
        if q["project"] == "global":  # global lessons are asked about from inside some project
            q["project"] = scoped[i % len(scoped)]
        q["split"] = split_of(q["id"])
    with open(os.path.join(HERE, "bullets.json"), "w", encoding="utf-8") as fh:
        json.dump({"projects": projects, "bullets": bullets}, fh, indent=1, ensure_ascii=False)
    with open(os.path.join(HERE, "queries.json"), "w", encoding="utf-8") as fh:
        json.dump(queries, fh, indent=1, ensure_ascii=False)
    tune = sum(1 for q in queries if q["split"] == "tune")
    print(f"{len(bullets)} bullets in {len(projects)} scopes, {len(queries)} queries "
          f"({tune} tune / {len(queries) - tune} test, {sum(1 for q in queries if not q['relevant'])} negative)")


if __name__ == "__main__":
    main()
