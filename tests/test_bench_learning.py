"""The learning-quality bench (`bench/learning_quality.py`) runs end to end on real copied sessions.

Not a quality threshold: it checks that the bench runs the real scorer over the real `ace` of this venv,
that its report has the promised shape (per set, per ecosystem, overall, speed, skipped sessions) and that
every figure is in range and consistent with the per-session details. Two small copied dev sessions (a
converted SWE-agent run with one gold lesson, and a control with none) keep it to a few seconds.
Skips when the copied data or the venv's `ace` is missing.
"""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from benchutil import a_duration

ROOT = Path(__file__).resolve().parent.parent
BENCH = ROOT / "bench" / "learning_quality.py"
DEV = ROOT / "bench" / "data" / "learning" / "dev"
SESSIONS = ("swe-pydicom-1458", "swe-testrepo-1c2844")
VENV = Path(sys.prefix)


def _need_data() -> None:
    if not BENCH.is_file() or not (DEV / "gold.json").is_file():
        pytest.skip("learning bench or its dev gold is not in this checkout")
    for name in SESSIONS:
        if not (DEV / "trajectories" / f"{name}.jsonl").is_file():
            pytest.skip(f"copied dev session {name} missing")
    if not os.access(VENV / "bin" / "ace", os.X_OK):
        pytest.skip("no ace executable in the running venv")


def _bench(tmp_path: Path, *args: str) -> tuple[subprocess.CompletedProcess, dict]:
    out = tmp_path / "lq.json"
    proc = subprocess.run(
        [sys.executable, str(BENCH), "--venv", str(VENV), "--json", str(out), *args],
        capture_output=True, text=True, timeout=120, cwd=str(ROOT),
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    return proc, json.loads(out.read_text(encoding="utf-8"))


def _in_range(summary: dict) -> None:
    for key in ("gold_recall", "precision", "junk", "loop"):
        assert 0.0 <= summary[key] <= 1.0, (key, summary[key])
    assert 0 <= summary["gold_matched"] <= summary["gold_lessons"]
    assert 0 <= summary["bullets_matching_gold"] <= summary["bullets"]
    assert 0 <= summary["junk_bullets"] <= summary["bullets"]
    assert 0 <= summary["prompts_closed"] <= summary["prompts"]
    # Times are reported, not judged here: the learning bench's budget is its own (learning_bench.py).
    for key in ("seconds_per_session_median", "learn_seconds_median", "seconds_per_session_max"):
        assert a_duration(summary[key]), (key, summary[key])


def test_bench_scores_copied_dev_sessions(tmp_path):
    _need_data()
    proc, report = _bench(tmp_path, "--set", "dev", "--jobs", "2", "--only", *SESSIONS)

    results = report["results"]
    assert sorted(r["id"] for r in results) == sorted(SESSIONS)
    assert {r["set"] for r in results} == {"dev"}
    for r in results:
        # read from the repository's copy, learned by the real CLI without an error
        assert r["source"].startswith("bench/data/learning/dev/trajectories/"), r["source"]
        assert r["learn_rc"] == 0 and not r["errors"], r["errors"]
        assert a_duration(r["learn_seconds"]) and a_duration(r["seconds"]), r  # reported; judged by the bench
        for b in r["bullets"]:
            assert isinstance(b["content"], str) and isinstance(b["junk"], list)

    dev = report["sets"]["dev"]
    assert set(dev["by_ecosystem"]) == {"python"}
    for summary in (dev["all"], dev["by_ecosystem"]["python"], report["overall"]):
        _in_range(summary)
        assert summary["sessions"] == 2
    # the overall counts are the sums of the per-session details, not figures from elsewhere
    overall = report["overall"]
    assert overall["gold_lessons"] == sum(len(r["lessons"]) for r in results) == 1
    assert overall["bullets"] == sum(len(r["bullets"]) for r in results)
    assert overall["prompts"] == sum(len(L["prompts"]) for r in results for L in r["lessons"])
    assert a_duration(report["wall_seconds"]) and report["skipped"] == []
    # the text report ends with the scorer's summary line, for the same figures
    last = proc.stdout.strip().splitlines()[-2]
    assert last.startswith(f"gold_recall {overall['gold_recall']:.3f}, precision {overall['precision']:.3f}")


def test_bench_reports_unknown_sessions_as_skipped(tmp_path):
    _need_data()
    _, report = _bench(tmp_path, "--set", "dev", "--only", SESSIONS[1], "no-such-session")
    assert [r["id"] for r in report["results"]] == [SESSIONS[1]]
    assert any("no-such-session" in note for note in report["skipped"])
