"""Learning from a Claude Code transcript: a realistic JSONL fixture in the documented format (with a
subagent file beside it), transcripts built here the way Claude Code writes them (rewinds,
compaction, parallel calls, injected entries), and the real sessions of the learning corpus when
present. Parsing, sanitizing, which project the lessons go to, learning once, through the real CLI."""

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from ace_engine.observe import transcript
from benchutil import corpus_transcript
from conftest import ace as run_ace
from learnutil import Session, bullets, rows

FIXTURE = Path(__file__).parent / "fixtures" / "transcripts" / "5b2f6c1e-3d4a-4b8e-9f10-2a3b4c5d6e7f.jsonl"
SESSION = "5b2f6c1e-3d4a-4b8e-9f10-2a3b4c5d6e7f"
# The shared learning corpus, beside the checkout (as in test_continuity.py), or $ACE_LEARNING_CORPUS.
CORPUS = Path(os.environ.get("ACE_LEARNING_CORPUS") or Path(__file__).resolve().parents[2] / "shared"
              / "learning-corpus") / "dev" / "trajectories"


def ace(*args, cwd=None, env=None):
    proc = run_ace(*args, cwd=cwd, env=env, process=True)
    return proc.returncode, proc.stdout, proc.stderr


class Transcript:
    """A transcript written the way Claude Code writes one: an entry a line, each under its parent
    (`parent=` an entry's uuid, None for a root; the previous entry by default)."""

    def __init__(self, cwd, session="sess-0001", sidechain=False, agent_id=None):
        self.cwd, self.session, self.sidechain, self.agent_id = str(cwd), session, sidechain, agent_id
        self.entries, self.clock, self.last = [], 0, None

    def add(self, kind, parent="last", **fields):
        self.clock += 1
        uuid = f"{self.session[:8]}-{len(self.entries):04d}"
        entry = {"parentUuid": self.last if parent == "last" else parent, "isSidechain": self.sidechain,
                 "userType": "external", "cwd": self.cwd, "sessionId": self.session, "version": "2.1.45",
                 "gitBranch": "main", "type": kind, "uuid": uuid,
                 "timestamp": f"2026-03-01T10:{self.clock // 60:02d}:{self.clock % 60:02d}.000Z", **fields}
        if self.agent_id:
            entry["agentId"] = self.agent_id
        self.entries.append(entry)
        self.last = uuid
        return uuid

    def prompt(self, text, parent="last", **fields):
        return self.add("user", parent, message={"role": "user", "content": text}, **fields)

    def reply(self, text, msg="m-text", parent="last"):
        return self.add("assistant", parent, message={"id": f"{msg}-{self.clock}", "role": "assistant",
                                                      "content": [{"type": "text", "text": text}]})

    def calls(self, *calls, parent="last"):
        """One reply making parallel calls [(id, name, input, output, is_error)]: an assistant entry
        per call (same message id), each result under its own call, as Claude Code writes them."""
        msg = f"m-calls-{self.clock}"
        uses = []
        for call_id, name, tool_input, _, _ in calls:
            uses.append(self.add("assistant", parent, message={
                "id": msg, "role": "assistant", "content": [{"type": "tool_use", "id": call_id, "name": name,
                                                            "input": tool_input}]}))
            parent = "last"
            self.add("progress", data={"type": "hook_progress"}, toolUseID=call_id)  # beside, between
        for use, (call_id, _, _, output, failed) in zip(reversed(uses), reversed(calls), strict=True):
            self.add("user", use, message={"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": call_id, "content": output, "is_error": failed}]},
                toolUseResult={"stdout": output, "stderr": "", "interrupted": False})
        return self.last

    def write(self, path):
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("".join(json.dumps(e) + "\n" for e in self.entries))
        return path


def prompts_of(parsed):
    return [m["text"] for a in parsed["agents"] for m in a["messages"] if m["role"] == "user"]


def commands_of(parsed):
    return [json.loads(e["input"]).get("command") for a in parsed["agents"] for e in a["events"]]


# -- parsing ----------------------------------------------------------------------------------------------

def test_the_transcript_is_parsed_into_sanitized_events_and_prompts(ace_home):
    parsed = transcript.parse_file(str(FIXTURE))
    assert (parsed["session_id"], parsed["cwd"], parsed["git_branch"]) == (SESSION, "/home/dev/textutil", "fix/unicode")
    assert parsed["bad_lines"] == 1 and parsed["skips"]["unreadable_line"] == 1, "the torn last line: skipped, said"
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


def test_injected_entries_are_not_prompts_and_the_work_before_a_compaction_is_kept(tmp_path):
    t = Transcript("/home/dev/proj")
    t.prompt("make the parser accept tabs")
    t.calls(("c1", "Bash", {"command": "pytest -q"}, "1 failed", True))
    before_compaction = t.reply("Fixed; tests pass.")
    t.add("system", None, subtype="compact_boundary", logicalParentUuid=before_compaction, content="Compacted")
    t.prompt("This session is being continued from a previous conversation that ran out of context. Summary: …",
             isCompactSummary=True, isVisibleInTranscriptOnly=True)
    t.prompt("<local-command-caveat>Caveat: The messages below were generated by the user…</local-command-caveat>",
             isMeta=True)
    t.prompt("<command-name>/compact</command-name>\n<command-message>compact</command-message>\n<command-args></command-args>")
    t.prompt("<local-command-stdout>Compacted</local-command-stdout>")
    t.prompt("<command-message>gsd:plan</command-message>\n<command-name>/gsd:plan</command-name>\n"
             "<command-args>4</command-args>")
    t.prompt("<objective>Plan phase 4 of the roadmap…</objective>", isMeta=True)
    t.calls(("c2", "Bash", {"command": "make plan"}, "ok", False))
    t.prompt("<task-notification>\n<task-id>b1</task-id>\n<status>completed</status>\n</task-notification>\n"
             "Read the output file to retrieve the result: /tmp/b1.output")
    t.prompt("[Request interrupted by user for tool use]")
    t.prompt("<system-reminder>The date changed.</system-reminder>")
    t.prompt("<system_instruction>You are working inside an app.</system_instruction>\n\nrename the flag to --tabs")
    t.prompt('<teammate-message teammate_id="lead">\n{"type":"shutdown_request","reason":"done"}\n</teammate-message>')
    t.prompt('<teammate-message teammate_id="lead">\n{"type":"task_assignment","subject":"DOM-2: add the repository",'
             '"description":"Create lib/repo.dart"}\n</teammate-message>')
    t.calls(("c3", "Bash", {"command": "dart test"}, "All tests passed!", False))
    t.add("assistant", message={"id": "synthetic", "model": "<synthetic>", "role": "assistant",
                                "content": [{"type": "text", "text": "No response requested."}]})
    parsed = transcript.parse_file(str(t.write(tmp_path / "s.jsonl")))
    assert prompts_of(parsed) == ["make the parser accept tabs", "/gsd:plan 4", "rename the flag to --tabs",
                                  "DOM-2: add the repository\nCreate lib/repo.dart"], \
        "a command the model answers is the user's prompt, its body is not; wrappers are peeled off"
    assert commands_of(parsed) == ["pytest -q", "make plan", "dart test"], "the work before the compaction counts"
    assert parsed["skips"] == {"compaction_summary": 1, "injected_context": 2, "local_command": 2,
                               "task_notification": 1, "interruption_notice": 1, "system_reminder": 1,
                               "teammate_control": 1, "synthetic_reply": 1}


def test_only_the_active_branch_of_a_rewound_conversation_is_learned(tmp_path):
    t = Transcript("/home/dev/proj")
    t.prompt("delete the build cache")
    t.calls(("old1", "Bash", {"command": "rm -rf build"}, "", False))
    t.reply("Deleted.")
    t.prompt("now delete dist too")
    t.calls(("old2", "Bash", {"command": "rm -rf dist"}, "", False))
    # The user rewinds to before the first prompt and asks something else: a second root.
    t.prompt("run the linters and fix what they report", parent=None)
    t.calls(("new1", "Bash", {"command": "ruff check ."}, "E501 line too long", True),
            ("new2", "Bash", {"command": "mypy src"}, "Success", False),
            ("new3", "Read", {"file_path": "/home/dev/proj/app.py"}, "x = 1", False))
    t.calls(("new4", "Edit", {"file_path": "/home/dev/proj/app.py", "old_string": "x = 1", "new_string": "x = 2"},
             "ok", False))
    t.reply("Fixed the long line.")
    parsed = transcript.parse_file(str(t.write(tmp_path / "s.jsonl")))
    assert prompts_of(parsed) == ["run the linters and fix what they report"]
    events = parsed["agents"][0]["events"]
    assert {e["tool_use_id"]: e["success"] for e in events} == {"new1": False, "new2": True, "new3": True,
                                                                  "new4": True}, \
        "the parallel calls beside the path, and their results, are kept"
    assert not any("interrupted" in (e["error"] or "") for e in events)
    # 2 prompts, 2 calls, 2 results and the reply of the old branch.
    assert parsed["skips"] == {"abandoned_branch": 7}


def test_an_orphaned_subagent_file_is_learned_as_that_subagents_work(ace_home, git_project, tmp_path):
    t = Transcript("/home/dev/proj", session="sess-parent", sidechain=True, agent_id="a9f3c21")
    t.prompt("Find every caller of slugify and fix the ones that pass bytes", parent=None)
    t.calls(("s1", "Grep", {"pattern": "slugify("}, "src/a.py:3", False))
    t.calls(("s2", "Edit", {"file_path": "/home/dev/proj/src/a.py", "old_string": "slugify(b)",
                            "new_string": "slugify(b.decode())"}, "ok", False))
    t.reply("Fixed the one caller.")
    path = t.write(tmp_path / "agent-a9f3c21.jsonl")
    code, out, err = ace("learn", "--transcript", path, "--json", cwd=git_project)
    assert code == 0, err
    result = json.loads(out)
    assert result["kind"] == "subagent" and result["session_id"] == "sess-parent"
    assert [(t["task"][:24], t["status"]) for t in result["turns"]] == [("Find every caller of slu", "done")]
    assert rows(ace_home, "SELECT agent_id FROM jobs") == [{"agent_id": "a9f3c21"}]
    code, out, err = ace("learn", "--transcript", path, cwd=git_project)
    assert code == 0 and "learned before" in out and "learned as the work of that subagent" in out


def test_the_compaction_agents_file_is_not_learned_and_says_why(ace_home, git_project, tmp_path):
    t = Transcript("/home/dev/proj", sidechain=True, agent_id="acompact-946d2b")
    t.prompt("Your task is to create a detailed summary of the conversation so far…", parent="missing-parent")
    t.reply("<analysis>…</analysis><summary>…</summary>")
    path = t.write(tmp_path / "agent-acompact-946d2b.jsonl")
    code, out, err = ace("learn", "--transcript", path, cwd=git_project)
    assert code == 0, err
    assert "Nothing learned: agent-acompact-946d2b is the compaction agent" in out
    assert rows(ace_home, "SELECT count(*) AS n FROM jobs") == [{"n": 0}]


@pytest.mark.parametrize("content,problem", [
    ("", "is empty"),
    ("\n\n", "is empty"),
    ('{\n  "type": "user"\n}\n', "is not JSONL"),
    ("[1, 2]\n", "is not JSONL"),
    ('{"hello": "world"}\n', "no Claude Code entries"),
])
def test_bad_input_names_the_problem_and_the_fix(ace_home, git_project, tmp_path, content, problem):
    path = tmp_path / "t.jsonl"
    path.write_text(content)
    code, out, err = ace("learn", "--transcript", path, cwd=git_project)
    assert code == 1 and problem in err and "~/.claude/projects/" in err and "Traceback" not in err


def test_a_missing_file_or_a_folder_names_the_fix(ace_home, git_project, tmp_path):
    code, out, err = ace("learn", "--transcript", tmp_path / "nope.jsonl", cwd=git_project)
    assert code == 1 and "does not exist" in err and "~/.claude/projects/" in err
    code, out, err = ace("learn", "--transcript", tmp_path, cwd=git_project)
    assert code == 1 and "is a directory" in err and "--all-transcripts" in err


# -- which project --------------------------------------------------------------------------------------

def test_lessons_go_to_the_repository_ace_learn_runs_in_and_it_says_so(ace_home, git_project, tmp_path):
    other = tmp_path / "other"
    subprocess.run(["git", "init", "-q", str(other)], check=True)
    t = Transcript(other)
    t.prompt("make the parser accept tabs")
    t.calls(("c1", "Edit", {"file_path": f"{other}/p.py", "old_string": "a", "new_string": "b"}, "ok", False))
    t.reply("Done.")
    path = t.write(tmp_path / "s.jsonl")
    code, out, err = ace("learn", "--transcript", path, "--json", cwd=git_project / ".")
    assert code == 0, err
    result = json.loads(out)
    assert result["project"] == {"key": "git:github.com/Acme/Widget", "root": str(git_project), "name": "Widget",
                                 "reason": "the git repository `ace learn` ran in"}
    assert any(f"--project {other}" in n for n in result["notes"]), "the session's own repository is named"
    code, out, err = ace("learn", "--transcript", path, cwd=git_project)
    assert "Project: Widget (" in out and "the git repository `ace learn` ran in" in out


def test_outside_a_repository_the_sessions_repository_is_used_worktrees_being_one(ace_home, tmp_path):
    main = tmp_path / "repo"
    subprocess.run(["git", "init", "-q", str(main)], check=True)
    subprocess.run(["git", "-C", str(main), "-c", "user.email=a@b", "-c", "user.name=a", "commit", "-q",
                    "--allow-empty", "-m", "init"], check=True)
    worktree = tmp_path / "repo-wt"
    subprocess.run(["git", "-C", str(main), "worktree", "add", "-q", str(worktree)], check=True)
    outside = tmp_path / "outside"
    outside.mkdir()
    keys = []
    for n, cwd in enumerate((main, worktree)):
        t = Transcript(cwd, session=f"sess-{n}")
        t.prompt(f"task {n}: fix the build")
        t.calls((f"c{n}", "Edit", {"file_path": f"{cwd}/b.py", "old_string": "a", "new_string": "b"}, "ok", False))
        code, out, err = ace("learn", "--transcript", t.write(tmp_path / f"s{n}.jsonl"), "--json", cwd=outside)
        assert code == 0, err
        keys.append(json.loads(out)["project"])
    assert keys[0]["key"] == keys[1]["key"] == f"path:{main}", "a worktree files under its main repository"
    assert keys[1]["root"] == str(worktree) and "the repository the session ran in" in keys[1]["reason"]
    assert rows(ace_home, "SELECT key FROM projects") == [{"key": f"path:{main}"}]


def test_outside_a_repository_a_session_from_elsewhere_needs_project(ace_home, tmp_path):
    t = Transcript("/home/someone-else/proj")
    t.prompt("fix it")
    outside = tmp_path / "outside"
    outside.mkdir()
    code, out, err = ace("learn", "--transcript", t.write(tmp_path / "s.jsonl"), cwd=outside)
    assert code == 1 and "/home/someone-else/proj does not exist here" in err and "--project DIR" in err


# -- learning -------------------------------------------------------------------------------------------

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
    assert result["project"]["reason"] == "--project"
    learned = {b["content"] for b in bullets(ace_home)}
    assert any("python -m pytest -q" in b and "test_unicode" in b and "src/textutil.py" in b
               and "unicodedata.normalize" in b for b in learned), learned
    assert "Use uv run pytest instead of python -m pytest (the user's correction)." in learned
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
    assert "Skipped: 1 injected context entry (skill or command body, caveat), 1 built-in command or its output, " \
           "1 unreadable line skipped." in out


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


# -- the real sessions of the learning corpus --------------------------------------------------------------

needs_corpus = pytest.mark.skipif(not (CORPUS / "spotter-ae4a77f8.jsonl").exists(), reason="no learning corpus here")


@needs_corpus
def test_a_real_compacted_session_skips_the_summary_and_the_compaction_agent():
    parsed = transcript.parse_file(str(CORPUS / "spotter-ae4a77f8.jsonl"))
    prompts = prompts_of(parsed)
    assert prompts[0].startswith("Work on bead spotter-4te") and "continue implementation" in prompts
    assert not any(p.startswith("This session is being continued") for p in prompts)
    assert parsed["skips"]["compaction_summary"] == 1 and parsed["skips"]["internal_agent"] == 1
    assert [a["agent_id"] for a in parsed["agents"]] == ["", "aac57f5"]
    assert any("agent-acompact-946d2b is the compaction agent" in n for n in parsed["notes"])
    answered = set()
    for line in (CORPUS / "spotter-ae4a77f8.jsonl").read_text().splitlines():
        entry = json.loads(line)
        content = (entry.get("message") or {}).get("content") if entry.get("type") == "user" else None
        answered |= {b["tool_use_id"] for b in content or [] if isinstance(b, dict) and b.get("type") == "tool_result"}
    kept = {e["tool_use_id"] for e in parsed["agents"][0]["events"]}
    assert answered <= kept, "no real tool call is lost by following the active branch (parallel calls included)"


@needs_corpus
def test_a_real_orphaned_subagent_file_is_learned(ace_home, git_project, tmp_path):
    alone = tmp_path / "agent-aac57f5.jsonl"
    shutil.copy(CORPUS / "spotter-ae4a77f8" / "subagents" / "agent-aac57f5.jsonl", alone)
    code, out, err = ace("learn", "--transcript", alone, "--project", git_project, "--json", "--heuristic")
    assert code == 0, err
    result = json.loads(out)
    assert result["kind"] == "subagent" and len(result["turns"]) == 1
    assert result["turns"][0]["task"].startswith("Search hex.pm for the latest versions")


def test_records_of_claude_code_2_1_2xx_to_3xx_are_read_without_loss(tmp_path):
    """A prompt the user typed while the agent worked is a `queued_command` attachment in 2.1.2xx+;
    `mode`, `attachment`, title and bookkeeping records sit in the tree between the work."""
    t = Transcript("/home/dev/shop")
    t.prompt("run the tests")
    t.add("mode", mode="normal")
    t.add("attachment", attachment={"type": "hook_success", "hookName": "SessionStart:startup", "content": ""})
    t.calls(("c1", "Bash", {"command": "pytest -q"}, "3 passed", False))
    t.add("attachment", attachment={"type": "queued_command", "commandMode": "prompt", "origin": {"kind": "human"},
                                    "prompt": "no, use uv run pytest instead of pytest"})
    t.add("attachment", attachment={"type": "queued_command", "commandMode": "task-notification",
                                    "prompt": "<task-notification>\n<task-id>b1</task-id>\n</task-notification>"})
    t.add("attachment", attachment={"type": "queued_command", "commandMode": "prompt", "isMeta": True,
                                    "origin": {"kind": "peer", "from": "reviewer"}, "prompt": "<agent-message>ok"})
    t.add("ai-title", aiTitle="tests")
    t.calls(("c2", "Bash", {"command": "uv run pytest -q"}, "3 passed", False))
    t.reply("Done.")
    parsed = transcript.parse_file(str(t.write(tmp_path / "s.jsonl")))
    (agent,) = parsed["agents"]
    users = [(m["text"], m["by"]) for m in agent["messages"] if m["role"] == "user"]
    assert users == [("run the tests", "user"), ("no, use uv run pytest instead of pytest", "user")]
    assert commands_of(parsed) == ["pytest -q", "uv run pytest -q"]
    assert parsed["skips"].get("task_notification") == 1 and parsed["skips"].get("injected_context") == 1


def test_ace_learn_transcript_reads_a_real_claude_code_2_1_232_session_without_loss(ace_home, git_project, tmp_path):
    """A real session (teslamint/entirecontext, MIT; bench/corpus/SOURCES.md) written by Claude Code
    2.1.232: `attachment`, `mode`, `permission-mode`, `ai-title`, `pr-link`, `queue-operation` and
    `file-history-delta` records between the work. Every tool call of the file is read."""
    real = corpus_transcript("entirecontext-39m0cv", tmp_path / "corpus")
    calls = set()
    for line in real.read_text(encoding="utf-8").splitlines():
        entry = json.loads(line)
        if entry.get("type") == "assistant":
            calls |= {b["id"] for b in entry["message"].get("content") or []
                      if isinstance(b, dict) and b.get("type") == "tool_use"}
    parsed = transcript.parse_file(str(real))
    assert parsed["bad_lines"] == 0 and {e["tool_use_id"] for e in parsed["agents"][0]["events"]} == calls
    code, out, err = ace("learn", "--transcript", str(real), "--project", str(git_project), "--json")
    assert code == 0, err
    result = json.loads(out)
    assert result["turns"] and not any(t["status"] == "error" for t in result["turns"])
    assert result["skips"] == {"injected_context": 3, "task_notification": 2}
