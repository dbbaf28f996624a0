"""`ace replay`: a repository's own transcripts (the ones `ace learn --all-transcripts` reads) replayed in
order through the real hooks and the real offline learner, in a throwaway store.

- A small repository whose answer is known: a failure fixed in the first session comes back in two later
  ones (each spared: the lesson learned from the first is shown at their start), an unfixed failure comes
  back once (not spared, its lesson never learned), and a last session without either failure is shown the
  lesson anyway (noise). The user's store is never written.
- No transcript of the project: an error naming the folder and the fix.
- The corpus: `ace replay` on a corpus repository's sessions gives the very figure `bench/replay.py`
  gives on the same sessions (the bench's `captured` figures; both run `experiment.replay`).
- The counting itself on hand-made lines (`replay_score.score`).
"""

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from ace_engine.experiment import replay_score
from conftest import ace
from test_learning_transcript import Transcript

ROOT = Path(__file__).resolve().parent.parent
BENCH = ROOT / "bench" / "replay.py"
CORPUS = ROOT / "bench" / "corpus"
MISSING = "ModuleNotFoundError: No module named 'textutil'"
UNFIXED = "error: unresolved import `serde_json`"


def folder_of(home: Path, cwd: Path) -> Path:
    """Claude Code's transcript folder for a working directory: every non-alphanumeric becomes `-`."""
    return home / ".claude" / "projects" / re.sub(r"[^A-Za-z0-9]", "-", str(cwd))


def _session(repo: Path, home: Path, n: int, *, missing: bool, unfixed: bool) -> None:
    t = Transcript(repo, session=f"s{n}")
    t.prompt("run the test suite and fix what fails", parent=None)
    if missing:  # fixed in the session: a lesson to learn
        t.calls((f"s{n}-1", "Bash", {"command": "python -m pytest -q"},
                 f"ImportError while importing test module\n{MISSING}", True))
        t.calls((f"s{n}-2", "Bash", {"command": "pip install -e ."}, "Successfully installed textutil-0.1", False))
    if unfixed:  # never fixed: nothing to learn from
        t.calls((f"s{n}-9", "Bash", {"command": "cargo build --release"},
                 "error[E0432]: unresolved import `serde_json`", True))
    t.calls((f"s{n}-3", "Bash", {"command": "python -m pytest -q"}, "3 passed in 0.2s", False))
    t.reply("Done.")
    for entry in t.entries:  # one day per session: the replay's order
        entry["timestamp"] = entry["timestamp"].replace("2026-03-01", f"2026-03-0{n}")
    t.write(folder_of(home, repo) / f"s{n}.jsonl")


@pytest.fixture
def repo(tmp_path):
    root = tmp_path / "calc"
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    return root


def test_replay_of_a_repository_whose_answer_is_known(repo, ace_home, _private_environment):
    home = _private_environment
    for n, missing, unfixed in ((1, True, True), (2, True, False), (3, True, True), (4, False, False)):
        _session(repo, home, n, missing=missing, unfixed=unfixed)
    proc = ace("replay", "--json", cwd=repo, process=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    data = json.loads(proc.stdout)
    rows = {s["id"]: s for s in data["sessions"]}
    assert [s["id"] for s in data["sessions"]] == ["s1", "s2", "s3", "s4"], "in the order they happened"
    assert all(s["errors"] == [] for s in data["sessions"])
    assert rows["s1"]["lines"] == [] and rows["s1"]["captured"]["recurring"] == [], "nothing learned yet"
    for sid in ("s2", "s3"):  # the fixed failure came back after its lesson was learned: spared
        assert rows[sid]["captured"]["spared"] == [MISSING], rows[sid]
        assert any("pip install -e ." in line for line in rows[sid]["lines"])
        assert rows[sid]["captured"]["noise"] == []
    assert rows["s3"]["captured"]["recurring"] == [MISSING, UNFIXED]
    assert rows["s3"]["captured"]["missed"] == {UNFIXED: "not learned"}, "it recurred, no lesson covered it"
    # Shown, not needed: the last session hit neither failure.
    assert rows["s4"]["captured"]["failures"] == [] and rows["s4"]["captured"]["noise"] == rows["s4"]["lines"]
    assert len(rows["s4"]["lines"]) == 1
    f = data["figures"]
    assert (f["sessions"], f["recurring"], f["spared"], f["noise_lines"]) == (4, 3, 2, 1)
    assert f["noise_per_session"] == 0.25 and f["missed_because"] == {"not learned": 1}
    assert f["tokens"] == sum(s["tokens"] for s in data["sessions"]) > 0
    assert data["learner"] == "offline" and data["model_spend"] is None
    assert not ace_home.exists(), "the user's store is never written"

    text = ace("replay", "--limit", "3", cwd=repo, process=True, timeout=300)
    assert text.returncode == 0, text.stderr[-2000:]
    assert "Replayed 3 sessions" in text.stdout and "Spared 1 of 1 recurring failure" in text.stdout
    assert "\x1b" not in text.stdout


def test_no_transcripts_for_the_project_is_a_clear_error(repo, ace_home, _private_environment, tmp_path):
    other = tmp_path / "other"
    subprocess.run(["git", "init", "-q", str(other)], check=True)
    _session(other, _private_environment, 1, missing=True, unfixed=False)  # another project's
    proc = ace("replay", cwd=repo, process=True)
    assert proc.returncode != 0
    assert "no transcripts of" in proc.stderr and "ace replay" in proc.stderr, proc.stderr
    model = ace("replay", "--model", cwd=other, process=True)
    assert model.returncode != 0 and "one session" in model.stderr, "one session recurs nothing"


def test_model_replay_needs_a_configured_model(repo, ace_home, _private_environment):
    for n in (1, 2):
        _session(repo, _private_environment, n, missing=True, unfixed=False)
    proc = ace("replay", "--model", cwd=repo, process=True)
    assert proc.returncode != 0 and "llm.provider is none" in proc.stderr, proc.stderr


def test_counting_recurring_spared_noise_and_missed():
    lessons = [{"id": "ctx-1", "status": "active", "content": f"Run `pip install -e .` first: else `{MISSING}`.",
                "texts": [f"Run `pip install -e .` first: else `{MISSING}`."]},
               {"id": "ctx-2", "status": "candidate", "content": "Add serde_json to Cargo.toml",
                "texts": ["Add serde_json to Cargo.toml", UNFIXED]},
               {"id": "ctx-3", "status": "active", "content": "Use `uv run pytest`.", "texts": ["Use `uv run pytest`."]}]
    earlier = [{"failures": [MISSING, UNFIXED, "boom"]}]
    lines = [("ctx-1", "Run `pip install -e .` first"), ("ctx-3", "Use `uv run pytest`.")]
    scored = replay_score.score([MISSING, UNFIXED, "boom", "TypeError: x is not a function"], earlier, lines, lessons)
    assert scored["recurring"] == [MISSING, UNFIXED], "a signature too short to cover ('boom') is not counted"
    assert scored["spared"] == [MISSING]
    assert scored["missed"] == {UNFIXED: "candidate"}, "covered by a situation of a lesson not yet injected"
    assert scored["noise"] == ["Use `uv run pytest`."]
    # Not shown at the start: recurring all the same, spared no more; the lesson stood active.
    late = replay_score.score([MISSING], earlier, [], lessons)
    assert late["spared"] == [] and late["missed"] == {MISSING: "active"}


def _copy_for_claude(src: Path, dest: Path, cwd: Path) -> None:
    """A corpus transcript as Claude Code would keep it for `cwd` (its lines' `cwd` set to it)."""
    out = []
    for line in src.read_text(encoding="utf-8").splitlines():
        try:
            entry = json.loads(line)
        except ValueError:
            out.append(line)
            continue
        if isinstance(entry, dict) and "cwd" in entry:
            entry["cwd"] = str(cwd)
        out.append(json.dumps(entry, ensure_ascii=False))
    dest.parent.mkdir(parents=True, exist_ok=True)
    dest.write_text("\n".join(out) + "\n", encoding="utf-8")


def test_replay_on_the_corpus_gives_the_benchs_figure(repo, ace_home, _private_environment, tmp_path):
    gold = json.loads((CORPUS / "gold.json").read_text(encoding="utf-8"))
    # A repository of the corpus with two sessions whose failures come back (the bench's own ordering rule).
    trajs = [t for t in gold["trajectories"] if t["repo"] == "teslamint/entirecontext"]
    if len(trajs) != 2 or not all((CORPUS / t["file"]).is_file() for t in trajs):
        pytest.skip("the corpus's teslamint/entirecontext sessions are missing")
    folder = folder_of(_private_environment, repo)
    copied = []
    for t in trajs:
        _copy_for_claude(CORPUS / t["file"], folder / f"{t['id']}.jsonl", repo)
        copied.append({**t, "file": f"{t['id']}.jsonl", "source": {}})  # ordered by the transcript's own clock
    (folder / "gold.json").write_text(json.dumps({"trajectories": copied}), encoding="utf-8")
    out = tmp_path / "bench.json"
    bench = subprocess.run([sys.executable, str(BENCH), "--corpus", str(folder), "--venv", sys.prefix, "--jobs", "1",
                            "--out", str(out)], capture_output=True, text=True, timeout=900, cwd=str(ROOT),
                           env={**os.environ, "HOME": str(_private_environment)})
    assert bench.returncode == 0, bench.stderr[-2000:]
    benched = json.loads(out.read_text(encoding="utf-8"))
    proc = ace("replay", "--json", cwd=repo, process=True, timeout=900)
    assert proc.returncode == 0, proc.stderr[-2000:]
    replayed = json.loads(proc.stdout)
    assert [s["id"] for s in replayed["sessions"]] == [s["id"] for s in benched["sessions"]]
    figure = benched["report"]["all"]["captured"]
    assert replayed["figures"] == figure
    assert figure["errors"] == 0 and figure["sessions"] == 2
    assert figure["recurring"] >= 1, figure  # a figure that says something
    assert [s["lines"] for s in replayed["sessions"]] == [s["lines"] for s in benched["sessions"]]
