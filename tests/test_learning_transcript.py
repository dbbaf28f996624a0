"""Learning from a Claude Code transcript (a realistic JSONL fixture in the documented format,
with a subagent file beside it): parsing, sanitizing, learning once, through the real CLI."""

import json
from pathlib import Path

from ace_engine.learning import transcript
from conftest import ace as run_ace
from learnutil import Session, bullets, rows

FIXTURE = Path(__file__).parent / "fixtures" / "transcripts" / "5b2f6c1e-3d4a-4b8e-9f10-2a3b4c5d6e7f.jsonl"
SESSION = "5b2f6c1e-3d4a-4b8e-9f10-2a3b4c5d6e7f"


def ace(*args, cwd=None):
    proc = run_ace(*args, cwd=cwd, process=True)
    return proc.returncode, proc.stdout, proc.stderr


def test_the_transcript_is_parsed_into_sanitized_events_and_prompts(ace_home):
    parsed = transcript.parse_file(str(FIXTURE))
    assert (parsed["session_id"], parsed["cwd"], parsed["git_branch"]) == (SESSION, "/home/dev/textutil", "fix/unicode")
    assert parsed["bad_lines"] == 1, "the torn last line is skipped, not fatal"
    main, sub = parsed["agents"]
    assert [e["tool_name"] for e in main["events"]] == ["Read", "Task", "Bash", "Edit", "Edit", "Bash", "Bash", "Bash"], \
        "tool_use / tool_result pairs in order; TodoWrite is skipped like the hooks skip it"
    failed = main["events"][2]
    assert not failed["success"] and failed["exit_code"] == 1 and "AssertionError" in failed["error"]
    assert json.loads(main["events"][3]["input"])["old_string"] == "    text = text.lower()"
    prompts = [m["text"] for m in main["messages"] if m["role"] == "user"]
    assert prompts == ["test_unicode fails for accented input; fix slugify so the tests pass. ",
                       "no, use uv run pytest instead of python -m pytest", "what does slugify do with emoji?"], \
        "private spans dropped; slash-command wrappers and meta entries are not prompts"
    everything = json.dumps(parsed)
    assert "hunter2-fixture" not in everything and "FIXTUREFIXTURE" not in everything
    assert "[REDACTED:anthropic-key]" in everything
    assert sub["agent_id"] == "a1b2c3d4" and [e["tool_name"] for e in sub["events"]] == ["Grep"]


def test_ace_learn_transcript_learns_each_turn_once(ace_home, git_project):
    code, out, err = ace("learn", "--transcript", str(FIXTURE), "--project", str(git_project), "--json")
    assert code == 0, err
    result = json.loads(out)
    turns = result["turns"]
    assert [(t["task"][:30], t["status"]) for t in turns] == [
        ("test_unicode fails for accente", "done"),
        ("no, use uv run pytest instead ", "done"),
        ("what does slugify do with emoj", "skipped"),
        ("Find other places that build U", "skipped"),
    ]
    learned = {b["content"] for b in bullets(ace_home)}
    assert ("When `python -m pytest -q` fails with `tests/test_textutil.py::test_unicode - AssertionError: assert "
            "'cr-me-br-l-e' == 'creme-brulee'`: the fix was in src/textutil.py, `text = text.lower()` → `text = "
            "unicodedata.normalize('NFKD', text).encode('ascii', 'ignore').decode().lower()` (+1 more edit).") in learned
    assert "Use uv run pytest instead of python -m pytest (the user's correction)." in learned
    assert "Run the tests with `uv run pytest -q` (verified in this project)." in learned
    assert not any("FIXTURE" in b or "hunter2" in b for b in learned)
    before = rows(ace_home, "SELECT id, content, updated_at FROM bullets ORDER BY id")

    code, out, err = ace("learn", "--transcript", str(FIXTURE), "--project", str(git_project), "--json")
    assert code == 0, err
    assert all(t["already_learned"] for t in json.loads(out)["turns"])
    assert rows(ace_home, "SELECT id, content, updated_at FROM bullets ORDER BY id") == before
    jobs = rows(ace_home, "SELECT kind, status FROM jobs")
    assert len(jobs) == 4 and {j["kind"] for j in jobs} == {"transcript"}

    code, out, err = ace("learn", "--transcript", str(FIXTURE), "--project", str(git_project))
    assert code == 0 and "learned before" in out


def test_a_session_the_hooks_learned_is_not_learned_again_from_its_transcript(ace_home, git_project, monkeypatch):
    monkeypatch.setattr("ace_engine.jobs.queue.start_worker", lambda key: None)
    s = Session(git_project, session_id=SESSION)
    s.start()
    s.prompt("fix it")
    s.edit("app.py", "hi", "hello")
    s.stop("done")
    code, out, err = ace("learn", "--transcript", str(FIXTURE), "--project", str(git_project), "--json")
    assert code == 0, err
    assert "captured by the hooks" in json.loads(out)["skipped_reason"]
    code, out, err = ace("learn", "--transcript", str(FIXTURE), "--project", str(git_project), "--json", "--force")
    assert len(json.loads(out)["turns"]) == 4


def test_an_unreadable_transcript_names_the_fix(ace_home, tmp_path):
    code, out, err = ace("learn", "--transcript", str(tmp_path / "nope.jsonl"))
    assert code != 0 and "does not exist" in err
