"""The replay bench (`bench/replay.py`) replays a repository's sessions in order through the real hooks
and the real `ace learn`, and counts recurring moments, spared ones, noise and tokens as it says.

End to end on a small corpus made here from one real copied session (a golangci-lint errcheck failure
fixed with `//nolint:errcheck`): the same session twice, the second with another session id and a later
time, so its gold lesson is a recurring moment by construction and the second session's start must
inject what the first one taught. The counting itself is checked on hand-made lines.
Skips when the copied session or the venv's `ace` is missing.
"""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from benchutil import corpus_transcript, script_module

ROOT = Path(__file__).resolve().parent.parent
BENCH = ROOT / "bench" / "replay.py"
VENV = Path(sys.prefix)
LESSON = {"id": "nolint", "lesson": "A deliberately ignored error needs `//nolint:errcheck // reason` above the line.",
          "must_any": [["nolint"], ["errcheck"]], "prompts": ["fix lint errors"]}


def _corpus(tmp_path: Path) -> Path:
    if not os.access(VENV / "bin" / "ace", os.X_OK):
        pytest.skip("the venv's ace is missing")
    text = corpus_transcript("ecli-6c3e73", tmp_path / "copied").read_text(encoding="utf-8")
    corpus = tmp_path / "corpus"
    (corpus / "trajectories").mkdir(parents=True)
    (corpus / "trajectories" / "a.jsonl").write_text(text, encoding="utf-8")
    old = "68d61609-708d-431d-b552-dc582ffc947b"
    assert old in text
    (corpus / "trajectories" / "b.jsonl").write_text(text.replace(old, "77d61609-708d-431d-b552-dc582ffc947b"),
                                                     encoding="utf-8")
    trajs = [{"id": name, "file": f"trajectories/{name}.jsonl", "ecosystem": "go", "repo": "o/r", "split": split,
              "repo_in_dev_set": False, "source": {"created_at": when}, "lessons": [{**LESSON, "id": f"{name}-nolint"}]}
             for name, split, when in (("a", "tune", "2026-01-01T00:00:00Z"), ("b", "tune", "2026-01-02T00:00:00Z"))]
    # a control session of another repository with one session only: not replayed
    trajs.append({**trajs[0], "id": "c", "repo": "o/single", "lessons": []})
    (corpus / "gold.json").write_text(json.dumps({"trajectories": trajs}), encoding="utf-8")
    return corpus


def test_replay_runs_sessions_in_order_through_the_hooks_and_learning(tmp_path):
    corpus = _corpus(tmp_path)
    out = tmp_path / "replay.json"
    proc = subprocess.run([sys.executable, str(BENCH), "--corpus", str(corpus), "--venv", str(VENV), "--jobs", "1",
                           "--out", str(out)], capture_output=True, text=True, timeout=300, cwd=str(ROOT))
    assert proc.returncode == 0, proc.stderr[-2000:]
    report = json.loads(out.read_text(encoding="utf-8"))
    assert report["repositories"] == {"o/r": 2}  # one session alone recurs nothing: not replayed
    first, second = report["sessions"]
    assert (first["id"], second["id"]) == ("a", "b") and (first["order"], second["order"]) == (0, 1)
    assert first["errors"] == [] and second["errors"] == []
    assert first["prompts"] == 1  # "fix lint errors", typed before the first tool call
    # Nothing learned yet: the first session starts empty.
    assert first["lines"] == [] and first["tokens"] == 0 and first["recurring"] == []
    # The second starts after learning from the first: the digest carries its lessons.
    assert second["recurring"] == ["b-nolint"]
    assert second["lines"] and second["tokens"] > 0
    assert set(second["spared"]) <= {"b-nolint"}
    assert second["noise"] == [t for t in second["lines"] if not ("nolint" in t.lower() and "errcheck" in t.lower())]
    figures = report["report"]["splits"]["tune"]["all"]
    assert figures["sessions"] == 2 and figures["recurring"] == 1
    assert figures["noise_lines"] == len(first["noise"]) + len(second["noise"])
    assert figures["tokens"] == second["tokens"]


def test_counting_recurring_spared_and_noise():
    bench = script_module(BENCH, "ace_replay_bench")
    earlier = [{"lessons": [{"id": "e", "lesson": "push with `git push --set-upstream origin BRANCH`",
                             "must_any": [["--set-upstream", "push -u"]]}]}]
    session = {"lessons": [
        {"id": "up", "lesson": "first push needs -u", "must_any": [["--set-upstream", "push -u"]]},
        {"id": "new", "lesson": "run `mix format` before committing", "must_any": [["mix format"]]},
    ]}
    lines = bench.injected_lines(
        "<ace-playbook>\nPlaybook: lessons\n## Strategies and hard rules\n"
        "- [ctx-01abc ✓0 ✗0 conf 0.50] A new branch: `git push --set-upstream origin BRANCH` on its first push.\n"
        "- [ctx-01abd team ✓1 ✗0 conf 0.60] Run `go test ./...` from the repository root.\n</ace-playbook>")
    assert [i for i, _ in lines] == ["ctx-01abc", "ctx-01abd"]
    scored = bench.score_session(session, earlier, lines)
    assert scored["recurring"] == ["up"]  # "new" has no earlier twin
    assert scored["spared"] == ["up"]
    assert scored["noise"] == ["Run `go test ./...` from the repository root."]
    # Not injected in time: recurring, not spared.
    assert bench.score_session(session, earlier, lines[1:])["spared"] == []
