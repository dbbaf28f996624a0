"""The documentation a user reads stays true: the README stays short and every relative link in it
and in docs/ points at a file that exists, and the performance figures in docs/performance.md are the
ones `bench/hooks_bench.py` last measured (bench/results/hooks.json). Cost: reads a dozen files."""

import json
import re
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
_LINK = re.compile(r"\]\(([^)#\s]+)(?:#[^)]*)?\)")


def _docs() -> list[Path]:
    return [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]


def test_readme_is_a_short_path_to_value():
    lines = (REPO / "README.md").read_text().splitlines()
    assert len(lines) < 200
    headings = [line for line in lines if line.startswith("## ")]
    # What it is, the two set-up commands, Claude Code, the first session: in that order, first.
    assert headings[:3] == ["## Set up", "## Use it with Claude Code", "## Your first real session"]
    text = "\n".join(lines)
    assert "bash scripts/test.sh" in text and ".venv/bin/ace demo" in text


def test_relative_links_resolve():
    broken = []
    for doc in _docs():
        for target in _LINK.findall(doc.read_text()):
            if "://" in target or target.startswith("mailto:"):
                continue
            if not (doc.parent / target).exists():
                broken.append(f"{doc.relative_to(REPO)} -> {target}")
    assert not broken, broken


def test_performance_table_is_the_measured_one():
    measured = json.loads((REPO / "bench" / "results" / "hooks.json").read_text())
    page = (REPO / "docs" / "performance.md").read_text()
    rows = dict(re.findall(r"^\| (\w+) \| [\d.]+ ms \| ([\d.]+)× \|", page, re.MULTILINE))
    assert rows, "the Performance table is gone"
    for hook in measured["hooks"]:
        assert rows.get(hook["event"]) == f"{hook['ratio']:.2f}", (hook["event"], rows.get(hook["event"]))
        assert f"| {hook['event']} | {hook['hook_ms']:.1f} ms |" in page, hook["event"]
    baseline = sorted(h["baseline_ms"] for h in measured["hooks"])[len(measured["hooks"]) // 2]
    assert f"~{round(baseline)} ms" in page
