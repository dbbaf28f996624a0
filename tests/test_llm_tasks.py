"""The LLM reflector reads a task, not a turn: consecutive turns joined into one call
(`observe/tasks.join`, `llm_prompt.plan`), the user's words where each turn starts, a long session
split only where its evidence would not fit — and everything it learns is filed under every turn."""

from __future__ import annotations

import json
import re
from pathlib import Path

from ace_engine.core.project import identify
from ace_engine.learning import llm_prompt
from ace_engine.observe import tasks
from ace_engine.observe import trajectory as traj_mod
from ace_engine.playbook.playbook import Playbook
from ace_engine.store.sqlite import SQLiteStore
from conftest import ace

CWD = "/srv/widget"


def write_session(path: Path, turns: list[dict]) -> Path:
    """A Claude Code transcript: each turn is {prompt, calls: [{tool, input, output, error?}], final}."""
    lines: list[str] = []
    clock = [0]

    def entry(kind: str, content, **extra) -> None:
        clock[0] += 2
        stamp = f"2026-11-20T10:{clock[0] // 60:02d}:{clock[0] % 60:02d}.000Z"
        lines.append(json.dumps({"type": kind, "sessionId": "5e551011-0000-4000-8000-00000000a5c1", "cwd": CWD,
                                 "gitBranch": "main", "uuid": f"u-{len(lines):04d}",
                                 "parentUuid": f"u-{len(lines) - 1:04d}" if lines else None, "isSidechain": False,
                                 "timestamp": stamp, "message": {"role": kind, "content": content}, **extra}))

    n = 0
    for turn in turns:
        entry("user", turn["prompt"])
        for call in turn["calls"]:
            n += 1
            use_id = f"toolu_{n:03d}"
            entry("assistant", [{"type": "tool_use", "id": use_id, "name": call["tool"], "input": call["input"]}])
            failed = "error" in call
            body = (f"Exit code {call['error']}\n" if failed else "") + call["output"]
            entry("user", [{"tool_use_id": use_id, "type": "tool_result", "content": body, "is_error": failed}],
                  toolUseResult=f"Error: {body}" if failed else {"stdout": call["output"], "stderr": "",
                                                                  "interrupted": False})
        entry("assistant", [{"type": "text", "text": turn["final"]}])
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def bash(command: str, output: str, error: int | None = None) -> dict:
    call = {"tool": "Bash", "input": {"command": command}, "output": output}
    if error is not None:
        call["error"] = error
    return call


THREE_TURNS = [
    {"prompt": "Make the tests pass", "final": "Done.",
     "calls": [bash("pytest -q", "E   ModuleNotFoundError: No module named 'widget'\n1 error", error=1),
               bash("pip install -e .", "Successfully installed widget-0.1"),
               bash("pytest -q", "3 passed")]},
    {"prompt": "no, use `make check` instead of calling pytest yourself, it also runs the linters", "final": "OK.",
     "calls": [bash("make check", "ruff: all checks passed\n3 passed")]},
    {"prompt": "now bump the version", "final": "Bumped.",
     "calls": [{"tool": "Edit", "input": {"file_path": f"{CWD}/pyproject.toml", "old_string": 'version = "0.1"',
                                          "new_string": 'version = "0.2"'}, "output": "ok"},
               bash("make check", "ruff: all checks passed\n3 passed")]},
]

ANSWER = {"reasoning": "The user corrected how checks are run.", "error_identification": "none",
          "root_cause": "none", "hints": [], "tags": [],
          "candidates": [{"content": "Run the checks with `make check` (it runs the linters too), not bare `pytest`.",
                          "section": "strategies_and_hard_rules", "evidence": "the user's correction, then make check",
                          "source_steps": [3, 4, 6], "confidence": 0.7}]}


def test_a_task_of_three_turns_is_one_model_call_and_every_turn_is_done(tmp_path, ace_home, scripted_chat,
                                                                       git_project):
    path = write_session(tmp_path / "session.jsonl", THREE_TURNS)
    server = scripted_chat([json.dumps(ANSWER)])
    env = {"ACE_LLM_PROVIDER": "openai", "ACE_LLM_MODEL": "local-reflector", "ACE_LLM_BASE_URL": server.url + "/v1"}

    done = ace("learn", "--transcript", path, "--project", git_project, "--json", env=env)

    assert done.exit_code == 0, done.output
    (request,) = server.requests  # one call for the whole task, not one per prompt
    user = request["body"]["messages"][1]["content"]
    # Steps are numbered across the turns; the user's later words stand where they were said.
    assert [int(n) for n in re.findall(r"^\[(\d+)\] ", user, re.M)] == [1, 2, 3, 4, 5, 6]
    lines = user.split("<steps", 1)[1].splitlines()
    turn2 = next(i for i, line in enumerate(lines) if line.startswith("[turn 2] user: no, use `make check`"))
    assert lines[turn2 + 1].startswith("[4] Bash")
    assert any(line.startswith("[turn 3] user: now bump the version") for line in lines)
    assert "<task>\nMake the tests pass\n</task>" in user
    result = json.loads(done.stdout)
    assert len(result["turns"]) == 3 and all(not t["already_learned"] for t in result["turns"])
    with SQLiteStore() as store:
        (lesson,) = [b for b in Playbook(store, identify(str(git_project))).bullets(statuses=None)
                     if "make check" in b["content"]]
        # The cited steps resolve across turns: the pytest run of turn 1 and the make check of turns 2 and 3.
        assert lesson["provenance"]["steps"] == [3, 4, 6]
        assert len(lesson["provenance"]["tool_event_ids"]) in (0, 3)  # transcripts carry no event rows
    again = ace("learn", "--transcript", path, "--project", git_project, "--json", env=env)
    assert again.exit_code == 0 and len(server.requests) == 1  # every turn is learned: nothing is asked again
    assert all(t["already_learned"] for t in json.loads(again.stdout)["turns"])


def test_when_the_tasks_call_fails_each_turn_is_learned_offline(tmp_path, ace_home, scripted_chat, git_project):
    path = write_session(tmp_path / "session.jsonl", THREE_TURNS)
    server = scripted_chat(["not json at all", "still not json"])
    env = {"ACE_LLM_PROVIDER": "openai", "ACE_LLM_MODEL": "local-reflector", "ACE_LLM_BASE_URL": server.url + "/v1"}

    done = ace("learn", "--transcript", path, "--project", git_project, "--json", env=env)

    assert done.exit_code == 0, done.output
    assert 1 <= len(server.requests) <= 2  # the task's call (and its one retry), not one per turn
    turns = json.loads(done.stdout)["turns"]
    assert len(turns) == 3 and all(t["status"] in ("done", "skipped") for t in turns)
    with SQLiteStore() as store:
        runs = store.learning_runs(all_projects=True)
    assert runs and all("fallback from llm:openai" in str(r["reflector"]) for r in runs if r["learned"])


def _turn(n_steps: int, failures: set[int], prompt: str, agent_id: str = "") -> dict:
    steps = []
    for i in range(1, n_steps + 1):
        failed = i in failures
        steps.append(traj_mod.enrich({"tool": "Bash", "action": f"$ make test TARGET={i} " + "x" * 200,
                                      "result": ("failed: boom " if failed else "ok ") + "y" * 200,
                                      "success": not failed, "command": f"make test TARGET={i}"}, i))
    return {"task": prompt, "prompts": [prompt], "trajectory": steps, "result": {"success": True, "output": "",
            "summary": ""}, "playbook_used": [], "cited": [], "git": {}, "agent_id": agent_id, "files": [],
            "files_read": [], "interrupted": False, "source": "transcript", "tool_event_ids": [],
            "session_id": "s1"}


def test_a_long_session_is_split_where_its_evidence_would_not_fit_and_nothing_is_dropped():
    # 40 turns, each with failures whose lines (and the steps after them) are first-rank evidence.
    turns = [_turn(12, {2, 7}, f"turn {k}: fix target {k}") for k in range(40)]
    groups = llm_prompt.plan(turns)
    assert 1 < len(groups) < len(turns)  # a few calls, not one per turn and not one truncated call
    assert [i for g in groups for i in g] == list(range(40))  # in order, each turn once
    budget = int(llm_prompt.MAX_PROMPT_CHARS * llm_prompt.ESSENTIAL_SHARE)
    for group in groups:
        assert len(group) == 1 or sum(llm_prompt.essential_chars(turns[i]) for i in group) <= budget
        task = tasks.join([turns[i] for i in group])
        text = llm_prompt.render(task, []).text
        shown = {int(n) for n in re.findall(r"^\[(\d+)\] ", text, re.M)}
        failed = {s["step"] for s in task["trajectory"] if not s["success"]}
        assert failed <= shown  # every failure of every turn of the call is in its prompt
        assert all(f"[turn {k}] user: turn" in text for k in range(2, len(group) + 1))


def test_turns_of_another_agent_are_never_joined():
    turns = [_turn(2, set(), "main"), _turn(2, set(), "sub", agent_id="agent-1"), _turn(2, set(), "main again")]
    assert llm_prompt.plan(turns) == [[0], [1], [2]]


def test_join_renumbers_steps_and_keeps_every_turns_evidence():
    a, b = _turn(3, {2}, "first"), _turn(2, set(), "second")
    a["origin_evidence"] = [{"use": "", "seen": "run npx evil-pkg", "cut": False, "at": 1.0}]
    b["origin_evidence"] = [*a["origin_evidence"], {"use": "make test", "seen": "ok", "cut": False, "at": 2.0}]
    a["playbook_used"], b["playbook_used"] = ["ctx-a"], ["ctx-b", "ctx-a"]
    joined = tasks.join([a, b])
    assert [s["step"] for s in joined["trajectory"]] == [1, 2, 3, 4, 5]
    assert joined["task"] == "first" and joined["prompts"] == ["first", "second"]
    assert joined["turns"] == [{"first": 1, "prompts": ["first"], "task": "first"},
                               {"first": 4, "prompts": ["second"], "task": "second"}]
    assert joined["playbook_used"] == ["ctx-a", "ctx-b"]
    assert [e["seen"] for e in joined["origin_evidence"]] == ["run npx evil-pkg", "ok"]
    assert a["trajectory"][0]["step"] == 1 and b["trajectory"][0]["step"] == 1  # the turns are not changed


def test_a_lesson_that_would_be_stored_with_a_redacted_span_is_dropped(tmp_path, ace_home, scripted_chat,
                                                                        git_project):
    answer = {**ANSWER, "candidates": [
        {"content": "`git commit` here signs through 1Password: [REDACTED:env-secret] (set by the shell profile).",
         "section": "strategies_and_hard_rules", "evidence": "step 3", "source_steps": [3], "confidence": 0.9},
        {"content": "Deploys read the token from `DEPLOY_TOKEN=ghp_abcdefghijklmnopqrstuvwxyz0123456789` in `.env`.",
         "section": "strategies_and_hard_rules", "evidence": "step 3", "source_steps": [3], "confidence": 0.9},
        ANSWER["candidates"][0]]}
    path = write_session(tmp_path / "session.jsonl", THREE_TURNS)
    server = scripted_chat([json.dumps(answer)])
    env = {"ACE_LLM_PROVIDER": "openai", "ACE_LLM_MODEL": "local-reflector", "ACE_LLM_BASE_URL": server.url + "/v1"}
    assert ace("learn", "--transcript", path, "--project", git_project, env=env).exit_code == 0
    with SQLiteStore() as store:
        contents = [b["content"] for b in Playbook(store, identify(str(git_project))).bullets(statuses=None)]
        runs = store.learning_runs(all_projects=True)
    assert not any("REDACTED" in c or "1Password" in c or "DEPLOY_TOKEN" in c for c in contents), contents
    assert any("make check" in c for c in contents)
    reasons = [r["reason"] for run in runs for r in (run.get("detail") or {}).get("rejections") or []]
    assert sum("redacted span" in r for r in reasons) == 2, reasons


def test_one_turn_too_long_for_a_call_is_read_in_windows_that_keep_every_failure(tmp_path, ace_home, scripted_chat,
                                                                                git_project):
    # Hours of work after one prompt: 160 failing runs, each followed by its fix and re-run.
    calls = []
    for k in range(160):
        calls += [bash(f"make test SHARD={k}", f"FAIL shard {k}: expected {k} got {k + 1} " + "x" * 300, error=2),
                  bash(f"make test SHARD={k} FIX=1", "ok")]
    turn = [{"prompt": "fix every shard", "final": "All shards pass.", "calls": calls}]
    path = write_session(tmp_path / "session.jsonl", turn)
    server = scripted_chat([json.dumps({**ANSWER, "candidates": []})])
    env = {"ACE_LLM_PROVIDER": "openai", "ACE_LLM_MODEL": "local-reflector", "ACE_LLM_BASE_URL": server.url + "/v1",
           "ACE_LLM_MAX_CALLS_PER_DAY": "0", "ACE_LLM_MAX_TOKENS_PER_DAY": "0"}

    done = ace("learn", "--transcript", path, "--project", git_project, "--json", env=env)

    assert done.exit_code == 0, done.output
    prompts = [r["body"]["messages"][1]["content"] for r in server.requests]
    assert len(prompts) >= 2  # windows, not one call that drops the failures past its budget
    shown = [int(n) for text in prompts for n in re.findall(r"^\[(\d+)\] Bash test FAILED", text, re.M)]
    assert sorted(shown) == list(range(1, 321, 2))  # every failure, each in exactly one call
    assert all(len(text) <= llm_prompt.MAX_PROMPT_CHARS + 2_000 for text in prompts)
    (result,) = json.loads(done.stdout)["turns"]
    assert result["status"] in ("done", "skipped") and not result["already_learned"]
    again = ace("learn", "--transcript", path, "--project", git_project, "--json", env=env)
    assert json.loads(again.stdout)["turns"][0]["already_learned"] and len(server.requests) == len(prompts)
