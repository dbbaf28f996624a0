"""The holdout (issue 37) through the real hook processes: a session's arm is chosen once from its
id and recorded; a held-out session gets no injection from any hook of any agent, while capture and
learning go on; the user is told once; `ace status`, `ace recall` and `ace experiment` show it."""

import json
import sqlite3

from ace_engine.experiment.arms import HOLDOUT, INJECT, choose
from ace_engine.store.sqlite import SQLiteStore
from conftest import ace
from hookutil import check_answer, payload, run_hook
from test_agent_hooks import CODEX, GEMINI, real
from test_agent_hooks import run as run_agent
from test_inject import seeded  # noqa: F401  (the fixture: a seeded playbook in a real store)

HOLD_ALL = {"ACE_INJECT_HOLDOUT": "1"}  # the user's setting (environment): every session held out


def _context(event, out):
    answer = check_answer(event, out)
    return (answer or {}).get("hookSpecificOutput", {}).get("additionalContext") or ""


def _rows(ace_home, sql, params=()):
    con = sqlite3.connect(ace_home / "ace.db")
    con.row_factory = sqlite3.Row
    try:
        return [dict(r) for r in con.execute(sql, params)]
    finally:
        con.close()


def _claude_session(cwd, session_id, env=None):
    """Every injecting hook of Claude Code, in order: what each put into the context. The startup
    digest is `session_id`'s; the others run in `session_id`-p, which had no digest (it would hold
    every seeded lesson, and the later hooks never repeat one)."""
    first, session_id = session_id, f"{session_id}-p"
    steps = [
        ("SessionStart", payload("SessionStart", cwd, first, source="startup")),
        ("UserPromptSubmit", payload("UserPromptSubmit", cwd, session_id,
                                     prompt="The login returns 401 after the JWT expires, fix it")),
        ("PreToolUse", payload("PreToolUse", cwd, session_id, tool_name="Read", tool_use_id=f"{session_id}-r1",
                               tool_input={"file_path": f"{cwd}/src/db/migrations/env.py"})),
        ("PostToolUse", payload("PostToolUse", cwd, session_id, tool_name="Bash", tool_use_id=f"{session_id}-b1",
                                tool_input={"command": "python -m pytest -q"},
                                tool_response={"stdout": "1 passed in 0.1s", "stderr": "", "interrupted": False})),
        ("PreCompact", payload("PreCompact", cwd, session_id, trigger="auto", custom_instructions=None)),
        ("SessionStart", payload("SessionStart", cwd, session_id, source="compact")),
    ]
    out = []
    for event, data in steps:
        code, stdout, stderr, _ = run_hook(event, data, env=env)
        assert code == 0, stderr
        out.append((event, _context(event, stdout), check_answer(event, stdout)))
    return out


def test_the_arm_is_a_stable_even_hash_of_experiment_and_session():
    ids = [f"sess-{n}" for n in range(4000)]
    arms = [choose(1, sid, 0.2) for sid in ids]
    assert arms == [choose(1, sid, 0.2) for sid in ids], "the same session always lands in the same arm"
    held = arms.count(HOLDOUT) / len(ids)
    assert 0.17 < held < 0.23, held  # ±3 standard errors of a fair 20 % split of 4000
    assert set(arms) == {HOLDOUT, INJECT}
    other = [choose(2, sid, 0.2) for sid in ids]
    assert sum(a != b for a, b in zip(arms, other, strict=True)) > 400, "a new experiment draws anew"
    assert choose(1, "x", 0.0) == INJECT and choose(1, "x", 1.0) == HOLDOUT


def test_a_held_out_session_gets_nothing_from_any_claude_code_hook(seeded, ace_home, git_project):  # noqa: F811
    cwd = str(git_project)
    held = _claude_session(cwd, "held-1", env=HOLD_ALL)
    assert all(context == "" for _, context, _ in held), held
    # Told once, at the first SessionStart: the experiment the setting started.
    notices = [answer.get("systemMessage", "") for _, _, answer in held if answer]
    assert sum("experiment" in n for n in notices) == 1, notices
    again = run_hook("SessionStart", payload("SessionStart", cwd, "held-2", source="startup"), env=HOLD_ALL)[1]
    assert "experiment" not in ((check_answer("SessionStart", again) or {}).get("systemMessage") or "")
    # Capture went on as usual; nothing was recorded as shown; the arm was recorded with its experiment.
    assert [r["tool_name"] for r in _rows(ace_home, "SELECT tool_name FROM tool_events WHERE session_id='held-1-p'")] \
        == ["Bash"]
    assert _rows(ace_home, "SELECT role FROM messages WHERE session_id='held-1-p'") == [{"role": "user"}]
    assert _rows(ace_home, "SELECT * FROM injections") == []
    arms = _rows(ace_home, "SELECT session_id, arm, experiment_id, hook FROM experiment_arms ORDER BY session_id")
    assert [(a["session_id"], a["arm"], a["hook"]) for a in arms] == [
        ("held-1", HOLDOUT, "SessionStart"), ("held-1-p", HOLDOUT, "UserPromptSubmit"), ("held-2", HOLDOUT, "SessionStart")]
    # The same hooks without the holdout inject at every step that has something to say.
    shown = _claude_session(cwd, "free-1")
    assert [event for event, context, _ in shown if context] == ["SessionStart", "UserPromptSubmit", "PreToolUse",
                                                                 "SessionStart"]
    assert _rows(ace_home, "SELECT * FROM experiment_arms WHERE session_id LIKE 'free-1%'") == [], "no arm outside"


def test_learning_is_queued_for_a_held_out_session(seeded, ace_home, git_project):  # noqa: F811
    cwd = str(git_project)
    _claude_session(cwd, "held-3", env=HOLD_ALL)
    run_hook("Stop", payload("Stop", cwd, "held-3-p", stop_hook_active=False, last_assistant_message="Fixed."),
             env=HOLD_ALL)
    assert _rows(ace_home, "SELECT session_id FROM jobs WHERE session_id='held-3-p'"), "learning goes on"


def test_a_held_out_session_gets_nothing_through_codex_or_gemini(seeded, ace_home, git_project):  # noqa: F811
    for agent, event, sample in [("codex", "SessionStart", CODEX["SessionStart"]),
                                 ("codex", "UserPromptSubmit", CODEX["UserPromptSubmit"]),
                                 ("gemini", "SessionStart", GEMINI["SessionStart"])]:
        data = real(sample, git_project)
        if event == "UserPromptSubmit":
            data["prompt"] = "The login returns 401 after the JWT expires, fix it"
        code, out, err = run_agent(agent, event, data, git_project, env=HOLD_ALL)
        assert code == 0, err
        assert "additionalContext" not in out and "ace-p" not in out, (agent, event, out)
        free = {**data, "session_id": f"{data['session_id']}-free-{event}"}
        code, out, err = run_agent(agent, event, free, git_project)
        assert "additionalContext" in out, (agent, event, out)  # the same hook injects outside the holdout
    sample = real(GEMINI["AfterTool:replace:ok"], git_project)
    sample["tool_input"] = dict(sample["tool_input"], file_path=str(git_project / "src/db/migrations/env.py"))
    assert run_agent("gemini", "AfterTool", sample, git_project, env=HOLD_ALL)[1] == ""
    held = {r["session_id"] for r in _rows(ace_home, "SELECT session_id FROM experiment_arms WHERE arm='holdout'")}
    assert held == {CODEX["SessionStart"]["session_id"], GEMINI["SessionStart"]["session_id"]}
    assert not _rows(ace_home, "SELECT * FROM injections WHERE session_id IN (?, ?)", tuple(held))


def test_a_repository_cannot_switch_the_holdout(seeded, ace_home, git_project):  # noqa: F811
    (git_project / ".ace.toml").write_text("[inject]\nholdout = 1.0\n")
    code, out, _, _ = run_hook("SessionStart", payload("SessionStart", str(git_project), "repo-1", source="startup"))
    assert "<ace-playbook" in _context("SessionStart", out), "a repository's file is not the user's setting"
    assert _rows(ace_home, "SELECT * FROM experiment_arms") == []


def test_experiment_start_splits_sessions_as_recorded_and_stop_ends_it(seeded, ace_home, git_project):  # noqa: F811
    cwd = str(git_project)
    started = ace("experiment", "start", "--share", "0.5", process=True, cwd=cwd)
    assert started.returncode == 0 and "50 %" in started.stdout, started
    assert "ace sync" not in started.stdout, "no synced agent file here: nothing to warn of"
    experiment = json.loads(ace("experiment", "status", "--json", process=True).stdout)["experiments"][0]
    assert experiment["stopped_at"] is None and experiment["announced_at"] is not None
    ids = [f"split-{n}" for n in range(10)]
    for sid in ids:
        code, out, _, _ = run_hook("SessionStart", payload("SessionStart", cwd, sid, source="startup"))
        answer = check_answer("SessionStart", out) or {}
        assert "experiment" not in (answer.get("systemMessage") or ""), "the CLI already told the user"
        arm = _rows(ace_home, "SELECT arm FROM experiment_arms WHERE session_id=?", (sid,))[0]["arm"]
        assert arm == choose(experiment["id"], sid, 0.5)
        assert bool(_context("SessionStart", out)) is (arm == INJECT), (sid, arm)
        # A later hook of the same session keeps the arm it was given (and, held out, injects nothing).
        code, out, _, _ = run_hook("UserPromptSubmit", payload("UserPromptSubmit", cwd, sid,
                                                               prompt="login 401 after the JWT expired"))
        assert arm == INJECT or _context("UserPromptSubmit", out) == ""
        assert _rows(ace_home, "SELECT arm, hook FROM experiment_arms WHERE session_id=?", (sid,)) == [
            {"arm": arm, "hook": "SessionStart"}]
    held = [r["session_id"] for r in _rows(ace_home, "SELECT session_id FROM experiment_arms WHERE arm='holdout'")]
    assert held and len(held) < len(ids)
    recall = ace("recall", "--session", held[0], process=True)
    assert "holdout arm of experiment" in recall.stdout, recall
    assert json.loads(ace("recall", "--session", held[0], "--json", process=True).stdout)["arm"]["arm"] == HOLDOUT
    status = json.loads(ace("status", "--json", process=True, cwd=cwd).stdout)
    assert status["experiment"]["share"] == 0.5
    stopped = ace("experiment", "stop", process=True)
    assert stopped.returncode == 0 and "stopped" in stopped.stdout
    with SQLiteStore() as store:
        assert store.running_experiment() is None
    late = next(s for s in (f"late-{n}" for n in range(50)) if choose(experiment["id"], s, 0.5) == HOLDOUT)
    code, out, _, _ = run_hook("SessionStart", payload("SessionStart", cwd, late, source="startup"))
    assert "<ace-playbook" in _context("SessionStart", out), "stopped: every session gets lessons again"
    assert not _rows(ace_home, "SELECT * FROM experiment_arms WHERE session_id=?", (late,))



def test_experiment_start_warns_of_lessons_synced_into_agent_files(ace_home, git_project):
    (git_project / "CLAUDE.md").write_text("# notes\n<!-- ACE_SECTION_START -->\n- a lesson\n<!-- ACE_SECTION_END -->\n")
    started = ace("experiment", "start", "--share", "0.2", cwd=str(git_project))
    assert started.exit_code == 0 and "CLAUDE.md holds the lessons `ace sync` wrote" in started.output
    assert "ace sync --remove" in started.output


def _codex_session(cwd, session_id, env=None):
    """Every Codex event that may add context (`hooks.agents.CONTEXT_EVENTS`), in one session after its
    start: a prompt, a patch to a file of the database domain, a failed and a passing command.
    What each put into the context. As in `_claude_session`, the start is `session_id`'s and the rest
    run in `session_id`-p, which had no digest (the later hooks never repeat a lesson it showed)."""
    patch = ("*** Begin Patch\n*** Update File: src/db/migrations/env.py\n@@\n-print('hi')\n+print('hello')\n"
             "*** End Patch\n")
    steps = [("SessionStart", CODEX["SessionStart"], {}),
             ("UserPromptSubmit", CODEX["UserPromptSubmit"],
              {"prompt": "The login returns 401 after the JWT expires, fix it"}),
             ("PreToolUse", CODEX["PreToolUse:apply_patch:ok"], {"tool_input": {"command": patch}}),
             ("PostToolUse", CODEX["PostToolUse:apply_patch:ok"], {"tool_input": {"command": patch}}),
             ("PreToolUse", CODEX["PreToolUse:Bash:fail"], {}),
             ("PostToolUse", CODEX["PostToolUse:Bash:fail"], {}),
             ("PostToolUse", CODEX["PostToolUse:Bash:ok"], {})]
    out = []
    for n, (event, sample, override) in enumerate(steps):
        data = {**real(sample, cwd), **override, "session_id": session_id if n == 0 else f"{session_id}-p"}
        if "tool_use_id" in data:
            data["tool_use_id"] = f"{session_id}-{n}"
        code, stdout, stderr = run_agent("codex", event, data, cwd, env=env)
        assert code == 0, stderr
        answer = json.loads(stdout) if stdout.strip() else {}
        out.append((event, (answer.get("hookSpecificOutput") or {}).get("additionalContext") or ""))
    return out


def test_a_held_out_codex_session_gets_nothing_from_any_codex_hook(seeded, ace_home, git_project):  # noqa: F811
    held = _codex_session(git_project, "codex-held", env=HOLD_ALL)
    assert all(context == "" for _, context in held), held
    assert not _rows(ace_home, "SELECT * FROM injections WHERE session_id LIKE 'codex-held%'")
    assert [r["arm"] for r in _rows(ace_home, "SELECT arm FROM experiment_arms WHERE session_id LIKE 'codex-held%' "
                                              "ORDER BY session_id")] == [HOLDOUT, HOLDOUT]
    captured = _rows(ace_home, "SELECT tool_name FROM tool_events WHERE session_id = 'codex-held-p'")
    assert len(captured) == 3, "capture goes on"
    # The same session outside the holdout: its start, its prompt and the patch into another domain inject.
    shown = _codex_session(git_project, "codex-free")
    assert {event for event, context in shown if context} >= {"SessionStart", "UserPromptSubmit", "PreToolUse"}, shown
