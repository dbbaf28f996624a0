"""bench/llm: the endpoint records each prompt under the hash of its text and replays a recorded
answer (a real process on a real port), and the scorer counts as it says, on hand-made rows."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from benchutil import script_module

ROOT = Path(__file__).resolve().parents[1]
ENDPOINT = ROOT / "bench" / "llm" / "endpoint.py"


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _serve(tmp_path, *extra):
    port = _free_port()
    answers, pending = tmp_path / "answers", tmp_path / "pending"
    proc = subprocess.Popen([sys.executable, str(ENDPOINT), "--port", str(port), "--answers", str(answers),
                             "--pending", str(pending), *extra], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    for _ in range(200):  # until it listens (not a timing assertion: a bounded wait for readiness)
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                break
        except OSError:
            time.sleep(0.05)
    return proc, port, answers, pending


@pytest.fixture
def endpoint(tmp_path):
    proc, port, answers, pending = _serve(tmp_path, "--record", str(tmp_path / "record"))
    yield port, answers, pending
    proc.terminate()
    proc.wait(timeout=10)


def test_collecting_answers_an_unanswered_prompt_with_an_empty_reflection_and_keeps_it_pending(tmp_path):
    proc, port, _, pending = _serve(tmp_path, "--collect")
    try:
        status, reply = _ask(port, "SYS", "USER")
    finally:
        proc.terminate()
        proc.wait(timeout=10)
    assert status == 200
    assert json.loads(reply["choices"][0]["message"]["content"])["candidates"] == []
    key = script_module(ENDPOINT, "bench_llm_endpoint").key_of("SYS", "USER")
    assert [p.name for p in pending.glob("*.json")] == [f"{key}.json"]


def _ask(port: int, system: str, user: str) -> tuple[int, dict]:
    body = json.dumps({"model": "replay", "messages": [{"role": "system", "content": system},
                                                       {"role": "user", "content": user}]}).encode()
    request = urllib.request.Request(f"http://127.0.0.1:{port}/v1/chat/completions", data=body,
                                     headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=10) as reply:
            return reply.status, json.loads(reply.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


def test_a_new_prompt_is_recorded_once_and_its_recorded_answer_is_replayed(endpoint):
    port, answers, pending = endpoint
    mod = script_module(ENDPOINT, "bench_llm_endpoint")
    key = mod.key_of("SYS", "USER <bullets_shown>\n[ctx-1] x\n</bullets_shown>")
    assert _ask(port, "SYS", "USER <bullets_shown>\n[ctx-1] x\n</bullets_shown>")[0] == 503
    assert _ask(port, "SYS", "USER <bullets_shown>\n[ctx-1] x\n</bullets_shown>")[0] == 503
    recorded = json.loads((pending / f"{key}.json").read_text())
    assert recorded == {"key": key, "system": "SYS", "user": "USER <bullets_shown>\n[ctx-1] x\n</bullets_shown>"}
    assert sorted(p.name for p in pending.glob("*.json")) == [f"{key}.json"]
    (answers / "heldout").mkdir()
    (answers / "heldout" / f"{key}.json").write_text('{"candidates": []}')
    status, reply = _ask(port, "SYS", "USER <bullets_shown>\n[ctx-1] x\n</bullets_shown>")
    assert status == 200 and reply["choices"][0]["message"]["content"] == '{"candidates": []}'
    assert reply["usage"]["prompt_tokens"] == len("SYS" + "USER <bullets_shown>\n[ctx-1] x\n</bullets_shown>") // 4
    served = [json.loads(line) for line in (pending / "served.jsonl").read_text().splitlines()]
    assert [s["answered"] for s in served] == [False, False, True]
    # --record: every prompt, the answered one too, kept as the pending file is.
    assert json.loads((pending.parent / "record" / f"{key}.json").read_text()) == recorded
    (pending / f"{key}.json").unlink()
    assert _ask(port, "SYS", "USER 2")[0] == 503 and _ask(port, "SYS", "USER <bullets_shown>\n[ctx-1] x\n"
                                                                       "</bullets_shown>")[0] == 200
    assert not (pending / f"{key}.json").exists(), "an answered prompt is not pending"
    assert len(list((pending.parent / "record").glob("*.json"))) == 2
    # --loose: the same task with other lessons shown has the key of the one with none shown.
    assert mod.key_of("S", "U <bullets_shown>\n[ctx-9] y\n</bullets_shown>", loose=True) == \
        mod.key_of("S", "U <bullets_shown>\n(none)\n</bullets_shown>")


def test_the_scorer_counts_active_and_any_status_recall_precision_and_cost():
    mod = script_module(ROOT / "bench" / "llm" / "score.py", "bench_llm_score")
    rows = [
        {"split": "tune", "errors": [], "calls": 1, "tokens": 4000, "fallbacks": 0,
         "lessons": [{"id": "g1", "active": True, "any": True}, {"id": "g2", "active": False, "any": True}],
         "bullets": [{"status": "active", "matches": ["g1"], "junk": []},
                     {"status": "active", "matches": [], "junk": ["over_400_chars"]},
                     {"status": "candidate", "matches": ["g2"], "junk": []}]},
        {"split": "tune", "errors": [], "calls": 3, "tokens": 9000, "fallbacks": 1,
         "lessons": [], "bullets": [{"status": "quarantined", "matches": [], "junk": []}]},
    ]
    s = mod.summarize(rows)
    assert (s["recall_active"], s["recall_any"], s["precision_active"], s["junk_active"]) == (0.5, 1.0, 0.5, 0.5)
    assert s["statuses"] == {"active": 2, "candidate": 1, "quarantined": 1, "archived": 0}
    assert s["calls"] == {"total": 4, "median": 2.0, "p90": 3.0, "max": 3}
    assert s["tokens"]["total"] == 13000 and s["fallback_turns"] == 1


def test_the_review_sheet_draws_active_model_lessons_and_the_tally_counts_only_valid_verdicts(
        tmp_path, monkeypatch, git_project):
    from ace_engine.core.project import identify
    from ace_engine.learning.curator import Curator
    from ace_engine.playbook.playbook import Playbook
    from ace_engine.store.sqlite import SQLiteStore
    from test_learning_curator import cand, cfg, traj

    mod = script_module(ROOT / "bench" / "llm" / "review.py", "bench_llm_review")
    gold = json.loads((ROOT / "bench" / "corpus" / "gold.json").read_text(encoding="utf-8"))
    session = next(t["id"] for t in gold["trajectories"] if t["split"] == "tune")
    keep = tmp_path / "keep"
    monkeypatch.setenv("ACE_HOME", str(keep / session / "acehome"))
    store = SQLiteStore()
    try:
        pb = Playbook(store, identify(str(git_project)))
        Curator(pb, cfg(), now=None).curate({"candidates": [
            cand("Run `mise run lint` before pushing: CI's golangci-lint enables `dupl` on tests.", kind="llm",
                 confidence=0.9, evidence="step 1 failed with dupl, step 3 passed"),
            cand("The fixtures under testdata/ are generated by `make fixtures`; never edit them.", kind="llm",
                 confidence=0.3, source_steps=[2]),                   # waits: not on the sheet
            cand("`python -m pytest -q` needs `pip install -e .` first here.", kind="error_fix"),  # offline
        ], "tags": []}, traj(task="make lint pass on CI"))
    finally:
        store.close()
    out = tmp_path / "review"
    assert mod.sheet(str(keep), str(out), "tune", 50, 1) == 1
    (row,) = [json.loads(line) for line in (out / "sheet.jsonl").read_text(encoding="utf-8").splitlines()]
    assert row["n"] == 1 and row["lesson"].startswith("Run `mise run lint`") and row["task"] == "make lint pass on CI"
    assert row["evidence"] == "step 1 failed with dupl, step 3 passed" and "session" not in row
    (key,) = [json.loads(line) for line in (out / "key.jsonl").read_text(encoding="utf-8").splitlines()]
    assert key["session"] == session
    (out / "verdicts.jsonl").write_text('{"n": 1, "verdict": "useless", "why": "x"}\n{"n": 1, "verdict": "good"}\n'
                                        '{"n": 7, "verdict": "good"}\nnot json\n', encoding="utf-8")
    assert mod.tally(str(out)) == {"good": 0, "wrong": 0, "useless": 1, "missing": 0, "unreadable": 3}
