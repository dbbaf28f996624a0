"""Check the held-out retrieval set: JSON shape and the low-word-overlap rule.

Contract: reads `bullets.json` and `queries.json` next to this file and the tuned set
(`../bullets.json`, `../queries.json`) for their keys only. Exits 0 when
- every bullet / query / project record has exactly the keys of the tuned set,
  sections and splits are values the tuned set uses, ids are unique;
- every positive prompt lists 1-3 relevant lesson ids that exist and belong to the
  prompt's project or to `global`; negatives list none;
- every positive prompt shares at most MAX_SHARED content words with EACH of its
  relevant lessons (content word: not a stopword, >= 2 characters, after splitting
  code tokens at punctuation and camelCase and a light suffix stemming, so that
  `tests`/`testing`, `OwnershipError`/`ownership` count as the same word).
Prints counts and the overlap distribution; with `-v` every prompt's shared words.
Cost: stdlib only, a few milliseconds.

Usage: python3 bench/data/heldout/check_overlap.py [-v]
"""

from __future__ import annotations

import json
import re
import sys
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent
MAX_SHARED = 2
MAX_RELEVANT = 3

# A standard English stopword list (the usual NLTK one, plus contraction fragments that
# the tokenizer leaves behind). Deliberately no domain words: "test", "run", "file" count.
STOPWORDS = frozenset(
    """
    i me my myself we our ours ourselves you your yours yourself yourselves he him his
    himself she her hers herself it its itself they them their theirs themselves what
    which who whom this that these those am is are was were be been being have has had
    having do does did doing a an the and but if or because as until while of at by for
    with about against between into through during before after above below to from up
    down in out on off over under again further then once here there when where why how
    all any both each few more most other some such no nor not only own same so than too
    very s t can will just don should now d ll m o re ve y ain aren couldn didn doesn
    hadn hasn haven isn ma mightn mustn needn shan shouldn wasn weren won wouldn
    """.split()
)


def stem(word: str) -> str:
    """Light suffix stripping: plural / -ing / -ed / trailing e, so inflections match."""
    if word.endswith("ies") and len(word) > 4:
        return word[:-3] + "y"
    for suffix in ("ing", "ed", "es", "s"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3 and not word.endswith("ss"):
            word = word[: -len(suffix)]
            if suffix in ("ing", "ed") and len(word) > 3 and word[-1] == word[-2] and word[-1] not in "lsz":
                word = word[:-1]  # running -> run, stopped -> stop
            break
    if word.endswith("e") and len(word) > 3:
        word = word[:-1]  # cache / caching -> cach
    return word


def content_words(text: str) -> set[str]:
    """Stemmed content words of a prompt or lesson (code split at punctuation and camelCase)."""
    text = re.sub(r"([A-Z]+)([A-Z][a-z])", r"\1 \2", text)
    text = re.sub(r"([a-z0-9])([A-Z])", r"\1 \2", text)
    tokens = re.findall(r"[a-z0-9]+", text.lower())
    return {stem(t) for t in tokens if len(t) >= 2 and t not in STOPWORDS}


def _keys(record: dict[str, object]) -> set[str]:
    return set(record)


def main(argv: list[str]) -> int:
    verbose = "-v" in argv
    errors: list[str] = []
    ref_b = json.loads((HERE.parent / "bullets.json").read_text())
    ref_q = json.loads((HERE.parent / "queries.json").read_text())
    held_b = json.loads((HERE / "bullets.json").read_text())
    held_q = json.loads((HERE / "queries.json").read_text())

    # --- shape: same keys as the tuned set -------------------------------------------
    if _keys(held_b) != _keys(ref_b):
        errors.append(f"bullets.json top-level keys {sorted(held_b)} != {sorted(ref_b)}")
    proj_keys, bullet_keys, query_keys = (
        _keys(ref_b["projects"][0]), _keys(ref_b["bullets"][0]), _keys(ref_q[0]))
    sections = {b["section"] for b in ref_b["bullets"]}
    splits = {q["split"] for q in ref_q}
    names = set()
    for p in held_b["projects"]:
        if _keys(p) != proj_keys:
            errors.append(f"project {p.get('name')}: keys {sorted(p)}")
        names.add(p["name"])
    lessons: dict[str, dict[str, object]] = {}
    for b in held_b["bullets"]:
        if _keys(b) != bullet_keys:
            errors.append(f"bullet {b.get('key')}: keys {sorted(b)}")
            continue
        if b["key"] in lessons:
            errors.append(f"duplicate bullet key {b['key']}")
        if b["project"] not in names:
            errors.append(f"bullet {b['key']}: unknown project {b['project']}")
        if b["section"] not in sections:
            errors.append(f"bullet {b['key']}: section {b['section']} not used by the tuned set")
        lessons[b["key"]] = b

    # --- queries: references and the overlap rule -------------------------------------
    seen: set[str] = set()
    shared_hist: Counter[int] = Counter()
    positives = negatives = 0
    for q in held_q:
        if _keys(q) != query_keys:
            errors.append(f"query {q.get('id')}: keys {sorted(q)}")
            continue
        if q["id"] in seen:
            errors.append(f"duplicate query id {q['id']}")
        seen.add(q["id"])
        if q["split"] not in splits:
            errors.append(f"query {q['id']}: split {q['split']} not used by the tuned set")
        if q["project"] not in names or q["project"] == "global":
            errors.append(f"query {q['id']}: project {q['project']}")
        if not q["relevant"]:
            negatives += 1
            continue
        positives += 1
        if len(q["relevant"]) > MAX_RELEVANT:
            errors.append(f"query {q['id']}: {len(q['relevant'])} relevant ids")
        words = content_words(q["prompt"])
        for rid in q["relevant"]:
            lesson = lessons.get(rid)
            if lesson is None:
                errors.append(f"query {q['id']}: unknown lesson {rid}")
                continue
            if lesson["project"] not in (q["project"], "global"):
                errors.append(f"query {q['id']}: lesson {rid} is in {lesson['project']}")
            shared = sorted(words & content_words(str(lesson["content"])))
            shared_hist[len(shared)] += 1
            if len(shared) > MAX_SHARED:
                errors.append(f"query {q['id']} shares {len(shared)} words with {rid}: {shared}")
            if verbose:
                print(f"{q['id']:<18} {rid:<26} {len(shared)} {shared}")

    per_project = Counter(b["project"] for b in held_b["bullets"])
    print(f"lessons: {len(lessons)} " + " ".join(f"{k}={v}" for k, v in sorted(per_project.items())))
    print(f"prompts: {positives} positive, {negatives} negative; "
          f"canonical-first prompts: {sum(q['id'].endswith('-canonical') for q in held_q)}")
    print("shared content words per (prompt, relevant lesson): "
          + " ".join(f"{k}:{v}" for k, v in sorted(shared_hist.items())))
    for e in errors:
        print("ERROR", e)
    print("OK" if not errors else f"FAILED ({len(errors)} problems)")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
