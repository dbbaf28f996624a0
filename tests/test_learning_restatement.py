"""The same lesson in other words: the study behind `restatement.MERGE_COSINE`, the prohibition guard,
and the curator recognising a restated lesson in a real store (one entry, its second sighting counted)."""

import json
from pathlib import Path

import pytest

from ace_engine.core import config
from ace_engine.embed import static_embed
from ace_engine.learning import activation, restatement
from ace_engine.learning import similarity as sim
from ace_engine.learning.curator import Curator

PAIRS = Path(__file__).resolve().parents[1] / "bench" / "data" / "restatement_pairs.jsonl"
LABELS = ("same", "overlap", "different")


def _cosine(a: str, b: str) -> float:
    va, vb = static_embed.embed(a), static_embed.embed(b)
    assert va is not None and vb is not None
    return sum(x * y for x, y in zip(va, vb, strict=True))


@pytest.fixture(scope="module")
def pairs():
    rows = [json.loads(line) for line in PAIRS.read_text(encoding="utf-8").splitlines() if line.strip()]
    for row in rows:
        row["cos"] = _cosine(row["a"], row["b"])
        row["opposite"] = restatement.forbids(row["a"]) != restatement.forbids(row["b"])
        row["alike"] = (sim.jaccard(sim.prose_words(row["a"]), sim.prose_words(row["b"])) >= restatement.WORDED_ALIKE
                        and sim.names(row["a"]) != sim.names(row["b"]))
    return rows


def merged(pairs, threshold, prohibition=True):
    picked = [p for p in pairs if p["cos"] >= threshold and not p["alike"] and not (prohibition and p["opposite"])]
    return tuple(sum(1 for p in picked if p["label"] == label) for label in LABELS)


def test_the_study_behind_the_threshold(pairs):
    assert len(pairs) == 269
    assert tuple(sum(1 for p in pairs if p["label"] == label) for label in LABELS) == (119, 107, 43)
    # The table in learning/restatement.py.
    assert merged(pairs, 0.95) == (15, 0, 0)
    assert merged(pairs, 0.94) == (21, 0, 0)
    assert merged(pairs, 0.93) == (27, 3, 0)
    assert merged(pairs, 0.90) == (53, 15, 0)
    # Without the prohibition guard, "don't run X" merges with "run X" from 0.94 down.
    assert merged(pairs, 0.94, prohibition=False) == (21, 0, 2)
    # `restates` applies exactly these guards.
    for p in pairs:
        assert (restatement.restates(p["a"], [p["b"]]) is not None) == (
            p["cos"] >= restatement.MERGE_COSINE and not p["alike"] and not p["opposite"]), p["n"]
    # The rule: the lowest cosine (a 0.01 grid) at which every merged pair is the same lesson.
    grid = [round(0.99 - 0.01 * i, 2) for i in range(15)]
    clean = [t for t in grid if merged(pairs, t)[1:] == (0, 0)]
    assert min(clean) == restatement.MERGE_COSINE
    assert all(merged(pairs, t)[1:] == (0, 0) for t in grid if t >= restatement.MERGE_COSINE)


def test_restates_takes_the_closest_of_the_same_polarity():
    new = "Bead branches here are created without an upstream; push them the first time with `git push -u origin HEAD`."
    others = ["Run `mix format` before committing.",
              "Bead branches are created without an upstream: push the first time with `git push -u origin HEAD`."]
    found = restatement.restates(new, others)
    assert found is not None and found[1] == 1 and found[0] >= restatement.MERGE_COSINE
    assert restatement.restates(new, others[:1]) is None
    run = "Verify changes with `mise run fmt && mise run lint && mise run test:ci`."
    dont = "Verify changes with `mise run fmt`, `mise run lint` and `mise run test`; don't run `mise run test:ci`."
    assert _cosine(run, dont) >= restatement.MERGE_COSINE - 0.01  # alike in words …
    assert restatement.restates(dont, [run]) is None  # … opposite in what they ask


def test_the_lexical_studys_different_lessons_stay_apart_by_meaning():
    from tests.test_learning_curator import DIFFERENT, LOOKALIKES

    for a, b in [*DIFFERENT, *LOOKALIKES]:
        assert restatement.restates(a, [b]) is None, (a, b)
    # Templated lessons naming other things lie close in meaning: the template guard keeps them apart.
    close = [(a, b) for a, b in [*DIFFERENT, *LOOKALIKES] if _cosine(a, b) >= restatement.MERGE_COSINE]
    assert len(close) == 5


# -- the curator, on a real store ----------------------------------------------------------------------

def _traj(session):
    steps = [
        {"step": 1, "tool": "Bash", "action": "$ git push", "result": "fatal: The current branch has no upstream branch",
         "success": False, "tool_event_id": 11, "kind": "vcs", "command": "git push", "files": []},
        {"step": 2, "tool": "Bash", "action": "$ git push -u origin HEAD", "result": "ok", "success": True,
         "tool_event_id": 12, "kind": "vcs", "command": "git push -u origin HEAD", "files": []}]
    return {"task": "ship the bead", "trajectory": steps, "result": {"success": True, "output": "", "summary": ""},
            "playbook_used": [], "session_id": session, "files": [], "reflector": "llm:test@v"}


def _lesson(content, section, grade):
    return {"content": content, "section": section, "evidence": "steps 1-2", "source_steps": [1, 2],
            "kind": "llm", "confidence": grade, "basis": "inferred"}


FIRST = "Bead branches are created without an upstream: push the first time with `git push -u origin HEAD`."
AGAIN = ("Bead branches here are created without an upstream; the first push of one needs "
         "`git push --set-upstream origin HEAD`.")


def test_a_restated_lesson_is_the_same_entry_seen_again(pb):
    settings = dict(config.DEFAULTS)
    low = settings["learning.model_confidence"] - activation.PITFALL_MARGIN - 0.05  # under every floor: a candidate
    Curator(pb, settings).curate({"candidates": [_lesson(FIRST, "strategies_and_hard_rules", low)], "tags": []},
                                 _traj("sess-1"))
    (first,) = pb.bullets(statuses=None)
    assert first["status"] == "candidate"
    # Another session words it anew, in another section, graded high enough to go live.
    stats = Curator(pb, settings).curate(
        {"candidates": [_lesson(AGAIN, "troubleshooting_and_pitfalls", 0.9)], "tags": []}, _traj("sess-2"))
    assert (stats["created"], stats["updated"], stats["restated"]) == (0, 1, 1)
    (bullet,) = pb.bullets(statuses=None)
    assert bullet["id"] == first["id"] and bullet["status"] == "active"
    assert bullet["provenance"]["observations"] == 2
    assert bullet["provenance"]["evidence_log"][-1]["similarity"] >= restatement.MERGE_COSINE


def test_a_lesson_saying_the_opposite_is_another_entry(pb):
    settings = dict(config.DEFAULTS)
    run = "Verify changes with `mise run fmt && mise run lint && mise run test:ci` before reporting done."
    dont = "Verify changes with `mise run fmt`, `mise run lint` and `mise run test`; don't run `mise run test:ci`."
    for n, text in enumerate((run, dont)):
        Curator(pb, settings).curate({"candidates": [_lesson(text, "strategies_and_hard_rules", 0.9)], "tags": []},
                                     _traj(f"sess-{n}"))
    assert sorted(b["content"] for b in pb.bullets(statuses=None)) == sorted([run, dont])
