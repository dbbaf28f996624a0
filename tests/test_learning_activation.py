"""When a language model's lesson goes live: the rule (`Curator._grounded`) on a real store, and
the study behind its default (`learning.model_confidence`), kept with it.

The study (bench/llm/activation.py over the stores `bench/llm/score.py --keep` left on the tuning
split, with the recorded answers of bench/data/llm-answers/) tabulates, per grade threshold, with and
without "confirms an offline candidate", and per margin below it for a pitfall whose cited steps show
the failure, per margin below it for a lesson the model says the user's words or a fixed failure show
(`basis`, prompt 12-03.1 on), and with or without holding back what it says recurs rarely, only
the files show, or only this task or a later change to the same code needs (`scope`, prompt 12-07.1
on), the gold recall of active lessons and their gold precision. The rule is the row with the most
recall whose precision, less `guard` standard errors, is still at least 0.5; among equals, the
strictest. The guard is the study's own: for each guard, the rule is chosen on all repositories but
one and counted on the one left out; the guard kept is the one with the most recall left out whose
precision there stays ≥ 0.5 (held-out precision had run below tune's, and one standard error had
not covered it: 12-04.2 chose 2 where 1 had been written). Since 2026-12-07 the study pools two
answer sets of the same tune prompts, written independently (bench/data/llm-answers/<version> and
<version>.set2): one set alone moved which guard and rule it kept. The study kept here is prompt
12-07.1's, on three answer sets of its 91 tune prompts (`.set3` too): with two, 1.5 standard errors
held left out; with three they did not (0.485), and the guard went to 2 — the held-out precision of
the two-set rule had come out at 0.492."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

from ace_engine.core import config
from ace_engine.learning.activation import BASIS_MARGIN, PITFALL_MARGIN, STRONG_BASES, WAITING_BASES
from ace_engine.learning.curator import Curator
from test_learning_curator import cand, cfg, traj

STUDY = Path(__file__).resolve().parents[1] / "bench" / "results" / "llm-activation-tune.json"
RULE = "Run the checks with `mise run test:ci` after a merge: `go build ./...` does not compile the _test.go files."


def _study_module():
    """bench/llm/activation.py, the study itself: its rule and its guard, read here, not copied."""
    spec = importlib.util.spec_from_file_location("bench_llm_activation", STUDY.parents[1] / "llm" / "activation.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def chosen(rows: list[dict], guard: float) -> tuple:
    best = _study_module().chosen(rows, guard)
    return (best["threshold"], best["pitfall_margin"], best["basis_margin"], best["agrees_counts"],
            best["rarely_waits"], best["read_waits"], bool(best.get("lost_strong")), best.get("scope_waits") or "")


def key(t, margin, basis=0.0, agrees=False, rarely=False, read=False, lost=False, scopes=""):
    return (t, margin, basis, agrees, rarely, read, lost, scopes)


def test_the_default_is_the_one_the_study_chose():
    study = json.loads(STUDY.read_text(encoding="utf-8"))
    assert study["split"] == "tune" and study["gold_lessons"] > 50
    assert study["answer_sets"] == 3  # three independent answer sets of the same prompts, pooled
    rows = study["rows"]
    # The guard: the one that held precision ≥ 0.5 on repositories left out with the most recall there.
    assert study["guard"] == _study_module().guard_of(study["cross_validated"]) == 2.0
    folds = {f["guard"]: f for f in study["cross_validated"]}
    assert folds[1.5]["precision"] < 0.5 <= folds[2.0]["precision"]  # 1.5 SE did not hold left out
    assert folds[2.5]["recall"] < folds[2.0]["recall"]  # more held, at a cost in recall on the ones left out
    # The grade alone: confirming an offline candidate is recorded, not counted (it cost precision).
    t = config.DEFAULTS["learning.model_confidence"]
    # Prompt 12-07.1 on three answer sets: what only the files show waits (`WAITING_BASES`, the
    # study's `read_waits`); no margin for the user's words or a fixed failure, nor for the agent's lost
    # steps; nothing waits by what the model says recurs rarely, nor by the scope it names.
    assert "lost" not in STRONG_BASES and WAITING_BASES == {"read"} and BASIS_MARGIN == 0.0
    assert chosen(rows, study["guard"]) == (t, PITFALL_MARGIN, BASIS_MARGIN, False, False, True, False, "")
    by = {key(r["threshold"], r["pitfall_margin"], r["basis_margin"], r["agrees_counts"], r["rarely_waits"],
              r["read_waits"], bool(r.get("lost_strong")), r.get("scope_waits") or ""): r for r in rows}
    shipped = by[key(t, PITFALL_MARGIN, BASIS_MARGIN, read=True)]
    # Activating every grounded lesson would add noise, and lose precision below the bound.
    assert by[key(0.0, 0.0)]["noise_per_session"] > 1.5 * shipped["noise_per_session"]
    assert by[key(0.0, 0.0)]["precision"] < 0.5 <= shipped["precision"]
    # The pitfall tier paid on tune: more recall at the same threshold, the same precision.
    assert shipped["recall"] > by[key(t, 0.0, BASIS_MARGIN, read=True)]["recall"]
    # Letting what only the files show go live too adds noise for little recall, and falls under the guard.
    lax = by[key(t, PITFALL_MARGIN, BASIS_MARGIN)]
    assert lax["noise_per_session"] > shipped["noise_per_session"] and lax["precision"] < 0.51
    # Holding a rule a later change to the same code must keep (`scope` "code") would cost a sixth of
    # the recall for little precision.
    code = by[key(t, PITFALL_MARGIN, BASIS_MARGIN, read=True, scopes="task+code")]
    assert code["recall"] < 0.85 * shipped["recall"] and code["precision"] < shipped["precision"] + 0.03


def _learn(pb, grade, *, agrees=False, session="s1", steps=(3,), kind="llm", section="strategies_and_hard_rules",
           **said):
    extra = {"agrees": True, **said} if agrees else said
    return Curator(pb, cfg(), now=None).curate(
        {"candidates": [cand(RULE, section, confidence=grade, source_steps=list(steps),
                             kind=kind, **extra)], "tags": []}, traj(session=session))


@pytest.mark.parametrize("grade,agrees,kind,status", [
    (0.55, False, "llm", "active"),      # graded at the threshold: live at once
    (0.5, False, "llm", "candidate"),    # below it, alone: waits to be seen again
    (0.5, True, "llm", "candidate"),     # confirming the offline miner's reading is recorded, not counted
    (0.55, True, "error_fix", "candidate"),  # only a model's lesson is judged this way
])
def test_a_models_lesson_is_live_at_its_grade(pb, grade, agrees, kind,
                                                                                      status):
    _learn(pb, grade, agrees=agrees, kind=kind)
    (bullet,) = pb.bullets(statuses=("active", "candidate"))
    assert bullet["status"] == status
    assert bool(bullet["provenance"].get("agrees")) is agrees


def test_a_waiting_models_lesson_seen_again_grounded_is_promoted_saying_why(pb):
    _learn(pb, 0.5, session="s1")
    assert pb.bullets(statuses=("candidate",))
    _learn(pb, 0.8, session="s2")
    (bullet,) = pb.bullets()
    (promote,) = [c for c in pb.store.changes(bullet_id=bullet["id"]) if c["op"] == "PROMOTE"]
    assert "a model's lesson citing the steps that show it" in promote["reason"]


PIT = "troubleshooting_and_pitfalls"


@pytest.mark.parametrize("grade,section,steps,status", [
    (0.35, PIT, (1,), "active"),       # a pitfall whose cited step is the failure: live from 0.55 − 0.2
    (0.3, PIT, (1,), "candidate"),     # below even that
    (0.35, PIT, (3,), "candidate"),    # a troubleshooting lesson citing only the passing run shows no pitfall
    (0.35, "strategies_and_hard_rules", (1,), "candidate"),  # a rule citing a failure is graded as a rule
])
def test_a_pitfall_the_model_saw_happen_is_live_a_margin_lower(pb, grade, section, steps, status):
    _learn(pb, grade, steps=steps, section=section)
    (bullet,) = pb.bullets(statuses=("active", "candidate"))
    assert bullet["status"] == status
    assert bool(bullet["provenance"].get("pitfall")) is (section == PIT and 1 in steps)
    assert not bullet["provenance"]["strong_sessions"]  # the failure alone, never resolved: not the offline tier


@pytest.mark.parametrize("grade,basis,recurs,scope,status", [
    (0.55, "fixed", "sometimes", "code", "active"),  # a fixed failure, by the model's account: the full grade
    (0.5, "user", None, None, "candidate"),        # the user's own words: the same (no margin on 12-07.1)
    (0.5, "lost", None, "repository", "candidate"),  # the agent's lost steps: the same
    (0.55, "lost", "rarely", "code", "active"),    # recurrence and scope are recorded, not counted
    (0.95, "read", None, None, "candidate"),       # only the files show it: it waits, however graded
    (0.5, "bogus", None, None, "candidate"),       # a word the prompt does not offer counts for nothing
])
def test_what_the_model_says_shows_a_lesson_is_weighed_as_the_study_chose(pb, grade, basis, recurs, scope, status):
    said = {"basis": basis, **({"recurs": recurs} if recurs else {}), **({"scope": scope} if scope else {})}
    _learn(pb, grade, **said)
    (bullet,) = pb.bullets(statuses=("active", "candidate"))
    assert bullet["status"] == status
    # What the model said is recorded in its provenance.
    assert (bullet["provenance"].get("basis"), bullet["provenance"].get("scope")) == (basis, scope)
