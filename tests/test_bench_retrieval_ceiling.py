"""`bench/retrieval_ceiling.py` counts what it says: the raw ranking's R@5 / MRR, the AUC between prompts
that have a lesson and prompts that should get nothing, a re-fused ranking from a hit's score parts, and
the cut re-applied to the raw scores. Checked on hand-made rows (the real run reads the bench's data sets
and takes ~25 s: it is the benchmark itself, not a test)."""

from pathlib import Path

import pytest

from benchutil import script_module

ROOT = Path(__file__).resolve().parent.parent
BENCH = ROOT / "bench" / "retrieval_ceiling.py"


@pytest.fixture(scope="module")
def ceiling():
    return script_module(BENCH, "ace_retrieval_ceiling")


def parts(cosine, coverage=0.0, bm25=0.0):
    return {"cosine": cosine, "coverage": coverage, "bm25": bm25, "fuzzy": 0.0, "domain": 0.0}


# Two prompts with a lesson (the right one first, then second) and one that should get nothing.
ROWS = [
    {"relevant": ["a"], "best_cosine": 0.62, "raw": [("a", 0.40, parts(0.62)), ("b", 0.20, parts(0.30))]},
    {"relevant": ["c"], "best_cosine": 0.48, "raw": [("d", 0.30, parts(0.20, coverage=0.5, bm25=0.4)),
                                                     ("c", 0.25, parts(0.48))]},
    {"relevant": [], "best_cosine": 0.21, "raw": [("e", 0.12, parts(0.21))]},
]


def test_the_raw_ranking_is_measured_as_said(ceiling):
    m = ceiling.measure(ROWS, lambda row: [h[0] for h in row["raw"]])
    assert m == {"recall": 1.0, "mrr": 0.75, "irrelevant_shown": 1.0, "negative_empty": 0.0}


def test_auc_orders_prompts_with_a_lesson_above_those_without(ceiling):
    assert ceiling.auc([0.62, 0.48], [0.21]) == 1.0
    assert ceiling.auc([0.3], [0.3]) == 0.5
    assert ceiling.auc([0.1], [0.2, 0.3]) == 0.0
    assert ceiling.auc([], [0.2]) is None


def test_a_re_fused_ranking_follows_its_constants(ceiling):
    lexical_first = ceiling.fused(ROWS[1], 0.125, 0.5, 0.35, 0.6, 0.6)
    by_meaning = ceiling.fused(ROWS[1], 0.125, 0.5, 0.35, 1.0, 0.0)  # coverage weighs nothing
    assert lexical_first == ["d", "c"] and by_meaning == ["c", "d"]


def test_the_report_holds_every_part_per_split(ceiling):
    report = ceiling.report({"tuned/tune": ROWS, "heldout/test": ROWS})
    assert report["ceiling"]["as_shipped"]["heldout/test"]["mrr"] == 0.75
    assert report["separable"]["tuned/tune"]["best_cosine_auc"] == 1.0
    assert {row["threshold"] for row in report["frontier"]} >= {0.18, 0.26, 0.30}
    strict = next(r for r in report["frontier"] if r["threshold"] == 0.30 and r["relative_cut"] == 0.825)
    # Threshold 0.30 keeps the first prompt's right lesson and the second prompt's wrong first hit only.
    assert strict["tuned/tune"]["recall"] == 0.5 and strict["tuned/tune"]["negative_empty"] == 1.0
