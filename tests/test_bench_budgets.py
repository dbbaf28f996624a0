"""The time-budget benches run end to end (`bench/ui_bench.py` at a small scale, `bench/budgets_bench.py`'s
quick cases), in report-only mode: a test never asserts a time, so this checks that each bench runs the
real code, answers every page or case, and writes the report its README promises. The budgets
themselves are checked by running the benches (bench/README.md)."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from benchutil import a_duration

ROOT = Path(__file__).resolve().parent.parent
PAGES = 13


def _run(tmp_path: Path, script: str, *args: str) -> dict:
    out = tmp_path / "report.json"
    proc = subprocess.run([sys.executable, str(ROOT / "bench" / script), "--no-budget", "--out", str(out), *args],
                          capture_output=True, text=True, timeout=600, cwd=str(tmp_path))
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    return json.loads(out.read_text())


@pytest.mark.slow  # the bench itself over a seeded store, in a process (3-9 s in a loaded 2-core run)
def test_ui_bench_renders_every_page_of_a_seeded_store(tmp_path):
    pytest.importorskip("jinja2", reason="the dashboard needs the `server` extra (Starlette, uvicorn, Jinja2)")
    report = _run(tmp_path, "ui_bench.py", "--lessons", "200", "--events", "1000", "--sessions", "10", "--runs", "1")
    assert report["counts"]["bullets"] == 200 and report["counts"]["hook_events"] >= 1000
    assert len(report["pages"]) == PAGES
    for name, page in report["pages"].items():
        assert page["bytes"] > 0 and a_duration(page["median_ms"]) and a_duration(page["max_ms"]), name
    assert report["budget_ms"] == 200.0 and report["runs"] == 1


@pytest.mark.slow  # the bench itself, in a process (3 s in a loaded 2-core run)
def test_budgets_bench_quick_cases_report_every_figure(tmp_path):
    report = _run(tmp_path, "budgets_bench.py", "--only", "patterns", "statusline")
    names = [case["name"] for case in report["cases"]]
    assert names == ["sanitize, 20 MB tool output", "code patterns, 60 KB write", "feedback parser, random text ≤ 2,000 chars",
                     "feedback parser, ordinary prompt", "statusline process"]
    for case in report["cases"]:
        # The verdict against the budget is the bench's (budgets_bench.py); here, only that it reports one.
        assert a_duration(case["seconds"]) and a_duration(case["budget_seconds"]) and isinstance(case["ok"], bool), case
