"""`ace learn --all-transcripts`: backfilling a project from the transcripts Claude Code keeps in
`~/.claude/projects/` (HOME is a temporary directory in every test) or `$CLAUDE_CONFIG_DIR/projects`,
its worktrees included, other projects left alone, idempotent, with progress and a summary."""

import json
import re
import subprocess

import pytest

from ace_engine.core.project import Project, identify
from conftest import ace as run_ace
from learnutil import bullets, rows
from test_learning_transcript import Transcript


def ace(*args, cwd=None, env=None):
    proc = run_ace(*args, cwd=cwd, env=env, process=True)
    return proc.returncode, proc.stdout, proc.stderr


def folder_of(base, cwd):
    """Claude Code's folder for a working directory: every non-alphanumeric becomes `-`."""
    return base / re.sub(r"[^A-Za-z0-9]", "-", str(cwd))


def work(cwd, session, task, *, sidechain=False, agent_id=None):
    """A session that fails a test, fixes the code and passes it: worth learning."""
    t = Transcript(cwd, session=session, sidechain=sidechain, agent_id=agent_id)
    t.prompt(task, parent=None)
    t.calls((f"{session}-1", "Bash", {"command": "python -m pytest -q"},
             "FAILED tests/test_calc.py::test_div - ZeroDivisionError: division by zero", True))
    t.calls((f"{session}-2", "Edit", {"file_path": f"{cwd}/calc.py", "old_string": "return a / b",
                                      "new_string": "return a / b if b else 0"}, "ok", False))
    t.calls((f"{session}-3", "Bash", {"command": "python -m pytest -q"}, "3 passed", False))
    t.reply("Fixed: division by zero now returns 0.")
    return t


@pytest.fixture
def repo(tmp_path):
    """A repository with one linked worktree: (main root, worktree root)."""
    main = tmp_path / "calc"
    subprocess.run(["git", "init", "-q", str(main)], check=True)
    subprocess.run(["git", "-C", str(main), "-c", "user.email=a@b", "-c", "user.name=a", "commit", "-q",
                    "--allow-empty", "-m", "init"], check=True)
    worktree = tmp_path / "calc-feature"
    subprocess.run(["git", "-C", str(main), "worktree", "add", "-q", str(worktree)], check=True)
    return main, worktree


def test_worktrees_of_one_repository_are_one_project(repo):
    main, worktree = repo
    here, there = identify(str(main)), identify(str(worktree))
    assert here.key == there.key == f"path:{main}" and here.name == there.name == "calc"
    assert there.root == str(worktree), "paths stay relative to the worktree the session works in"
    assert Project(str(worktree), None).key == here.key, "a project rebuilt from a stored row keys the same way"


def test_all_transcripts_backfills_this_project_and_its_worktrees_once(ace_home, repo, tmp_path, _private_environment):
    main, worktree = repo
    other = tmp_path / "other"
    subprocess.run(["git", "init", "-q", str(other)], check=True)
    projects = _private_environment / ".claude" / "projects"
    work(main, "s-main", "fix the division test").write(folder_of(projects, main) / "s-main.jsonl")
    sub = work(main, "s-main", "check the callers of div", sidechain=True, agent_id="a1b2c3")
    sub.write(folder_of(projects, main) / "s-main" / "subagents" / "agent-a1b2c3.jsonl")
    compact = Transcript(main, session="s-main", sidechain=True, agent_id="acompact-77aa11")
    compact.prompt("Your task is to create a detailed summary of the conversation so far…", parent=None)
    compact.write(folder_of(projects, main) / "s-main" / "subagents" / "agent-acompact-77aa11.jsonl")
    work(worktree, "s-wt", "fix the modulo test").write(folder_of(projects, worktree) / "s-wt.jsonl")
    work(main / "gone" / "sub", "s-gone", "fix the power test").write(folder_of(projects, main / "gone") / "s-gone.jsonl")
    orphan = work(main, "s-deleted", "fix the rounding test", sidechain=True, agent_id="a9d8e7")
    orphan.write(folder_of(projects, main) / "s-deleted" / "subagents" / "agent-a9d8e7.jsonl")
    work(other, "s-other", "fix the other test").write(folder_of(projects, other) / "s-other.jsonl")
    # A folder whose name says "calc" but whose session ran in the other repository: the cwd decides.
    work(other, "s-liar", "fix another test").write(folder_of(projects, main) / "s-liar.jsonl")
    (folder_of(projects, main) / "s-broken.jsonl").write_text(json.dumps({"cwd": str(main)}) + "\n")

    code, out, err = ace("learn", "--all-transcripts", "--json", "--heuristic", cwd=main)
    assert code == 0, err
    result = json.loads(out)
    learned = sorted((f["session_id"], f["kind"], f["turns"], f["learned"]) for f in result["files"])
    assert learned == [("s-broken", None, 0, 0), ("s-deleted", "subagent", 1, 1), ("s-gone", "session", 1, 1),
                       ("s-main", "session", 2, 2), ("s-wt", "session", 1, 1)]
    assert [f["error"] for f in result["files"] if f.get("error")] == [
        f"{folder_of(projects, main) / 's-broken.jsonl'} holds JSON lines but no Claude Code entries (none has a "
        "`type`); give a Claude Code transcript (~/.claude/projects/<project folder>/<session id>.jsonl), a Codex "
        "CLI rollout (~/.codex/sessions/YYYY/MM/DD/rollout-….jsonl) or a Gemini CLI chat "
        "(~/.gemini/tmp/<project>/chats/session-….jsonl)"]
    assert result["totals"]["learned"] == 5 and result["totals"]["unreadable"] == 1
    assert result["skips"] == {"internal_agent": 1}
    assert result["project"] == {"key": f"path:{main}", "root": str(main), "name": "calc",
                                 "reason": "the git repository `ace learn` ran in"}
    assert re.findall(r"\[(\d)/5\]", err) == ["1", "2", "3", "4", "5"], "progress on stderr, stdout is the JSON"
    assert rows(ace_home, "SELECT key FROM projects") == [{"key": f"path:{main}"}]
    before = [(b["id"], b["content"], b["updated_at"]) for b in bullets(ace_home)]
    assert before and not any("other test" in b[1] for b in before)

    code, out, err = ace("learn", "--all-transcripts", "--heuristic", cwd=worktree)
    assert code == 0, err
    assert [(b["id"], b["content"], b["updated_at"]) for b in bullets(ace_home)] == before, "nothing learned twice"
    assert re.search(r"\[\d/5\] s-gone\.jsonl: 1 turn: 0 learned, 0 not worth learning, 1 learned before", out)
    assert "Read 5 transcripts from" in out and f"Project: calc ({worktree})" in out
    assert "5 turns: 0 learned, 0 not worth learning, 5 learned before; 0 lessons created" in out
    assert "Not read: " in out and "s-broken.jsonl holds JSON lines" in out
    assert "Skipped: agent-acompact-77aa11 is the compaction agent (it summarises the conversation for " \
           "/compact).\n" in out


def test_claude_config_dir_is_where_transcripts_are_looked_for(ace_home, repo, tmp_path):
    main, _ = repo
    config = tmp_path / "claude-config"
    work(main, "s-1", "fix the division test").write(folder_of(config / "projects", main) / "s-1.jsonl")
    code, out, err = ace("learn", "--all-transcripts", "--json", cwd=main, env={"CLAUDE_CONFIG_DIR": str(config)})
    assert code == 0, err
    result = json.loads(out)
    assert result["folder"] == str(config / "projects") and [f["session_id"] for f in result["files"]] == ["s-1"]
    code, out, err = ace("learn", "--all-transcripts", cwd=main)
    assert code == 1 and "no Claude Code transcripts folder at" in err and "CLAUDE_CONFIG_DIR" in err
    assert "CODEX_HOME" in err


def test_a_project_without_transcripts_says_so(ace_home, repo, _private_environment):
    main, _ = repo
    (_private_environment / ".claude" / "projects").mkdir(parents=True)
    code, out, err = ace("learn", "--all-transcripts", cwd=main)
    assert code == 0, err
    assert f"No transcript in {_private_environment / '.claude' / 'projects'} ran in {main}" in out


def test_all_transcripts_is_an_alternative_to_the_other_sources(ace_home, repo):
    main, _ = repo
    code, out, err = ace("learn", "--all-transcripts", "--transcript", "x.jsonl", cwd=main)
    assert code == 1 and "alternatives" in err
    code, out, err = ace("learn", "--all-transcripts", "--retry-failed", cwd=main)
    assert code == 1 and "work on the queue" in err
