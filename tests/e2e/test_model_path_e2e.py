"""Learning with the user's own Claude Code, end to end: the real Claude Code CLI (2.1.197) on PATH,
its model the scripted local server (tests/e2e/model_server.py).

Checked: `ace install` on a terminal finds the logged-in `claude` (`claude auth status`), explains
what is sent and the cap, takes yes as the default and writes the choice to the user config, once;
`ace doctor` then makes one real `claude -p` call — with the small default model — that the server
answers and the ledger counts, which `ace status` and the status line show against the cap. A
`claude` that is not logged in (no key, no login in its HOME) is not offered; configured anyway, it
makes doctor FAIL with Claude Code's own words and the fix, the learner falls back to offline
learning and the next SessionStart says why, once.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from hookutil import check_answer, payload, run_hook
from modelpathutil import SYSTEM_PATH, ace_in_terminal, ace_process, user_config
from test_learning_cli import PAYLOAD

from .claude_cli import claude_env
from .model_server import SIDE, system_text
from .test_capture_e2e import ace_env

pytestmark = pytest.mark.e2e

NOT_LOGGED_IN = "Not logged in · Please run /login"


def model_env(claude_bin: Path, home: Path, server_url: str, tmp_path: Path, *, logged_in: bool = True) -> dict:
    """The whole environment of `ace` here: ace-engine's private dirs, Claude Code offline against the
    scripted server (an API key counts as logged in, as `claude auth status` says), and a PATH with
    this `claude` and node but nothing else of the machine's."""
    env = claude_env(home, server_url, ace_env(tmp_path))
    if not logged_in:
        env.pop("ANTHROPIC_API_KEY", None)
    node = shutil.which("node")
    env["PATH"] = os.pathsep.join([str(claude_bin.parent), *([os.path.dirname(node)] if node else []), SYSTEM_PATH])
    return env


def test_install_offers_claude_doctor_calls_it_and_the_budget_shows(claude_bin, model_server, claude_home,
                                                                     project_dir, tmp_path):
    env = model_env(claude_bin, claude_home, model_server.url, tmp_path)
    code, shown = ace_in_terminal("install", env=env, cwd=project_dir, whole_env=True)
    assert code == 0, shown
    assert "Learn with your Claude Code?" in shown and "Learn with it? [Y/n]" in shown
    assert "never the raw output" in shown and "your own Claude Code account" in shown
    assert 'provider = "claude-cli"' in user_config(env).read_text()
    again = ace_process("install", env=env, cwd=project_dir, whole_env=True)
    assert "Learn with it?" not in again.stdout and "written by the LLM reflector (claude-cli" in again.stdout

    model_server.side_text = "ok"
    first = len(model_server.requests)
    doctor = ace_process("doctor", "--json", env=env, cwd=project_dir, whole_env=True)
    check = next(c for c in json.loads(doctor.stdout)["checks"] if c["check"] == "model")
    assert check["status"] == "ok", check
    assert "claude-cli (haiku) answered" in check["detail"] and "1/200 calls" in check["detail"]
    calls = [r for r in model_server.requests[first:] if r.kind == SIDE]
    assert len(calls) == 1, model_server.summary()
    assert "haiku" in calls[0].body["model"]  # the small fast default reached the model
    assert "You are a health check" in system_text(calls[0].body)

    status = ace_process("status", env=env, cwd=project_dir, whole_env=True)
    assert "Learning: with claude-cli, model haiku — 1/200 calls" in status.stdout
    line = ace_process("statusline", env=env, cwd=project_dir, whole_env=True,
                       stdin=json.dumps({"cwd": str(project_dir)}))
    assert line.stdout.rstrip().endswith("llm 1/200 calls")

    offline = ace_process("doctor", "--offline", "--json", env=env, cwd=project_dir, whole_env=True)
    check = next(c for c in json.loads(offline.stdout)["checks"] if c["check"] == "model")
    assert check["status"] == "warn" and "not called (--offline)" in check["detail"]
    assert len([r for r in model_server.requests[first:] if r.kind == SIDE]) == 1


def test_a_claude_that_is_not_logged_in_is_red_with_its_own_words_and_told_once(claude_bin, model_server,
                                                                                 claude_home, project_dir, tmp_path):
    env = model_env(claude_bin, claude_home, model_server.url, tmp_path, logged_in=False)
    installed = ace_process("install", env=env, cwd=project_dir, whole_env=True)
    assert installed.returncode == 0, installed.stderr
    assert "Learn with it?" not in installed.stdout and "not logged in" in installed.stdout
    assert not user_config(env).exists()

    assert ace_process("config", "set", "llm.provider", "claude-cli", env=env, cwd=project_dir,
                       whole_env=True).returncode == 0
    learned = ace_process("learn", "--stdin", "--json", env=env, cwd=project_dir, whole_env=True,
                          stdin=json.dumps(PAYLOAD))
    assert learned.returncode == 0 and json.loads(learned.stdout)["success"] is True  # offline learning went on
    stats = ace_process("stats", env=env, cwd=project_dir, whole_env=True)
    assert "fallback from llm:claude-cli" in stats.stdout and NOT_LOGGED_IN in stats.stdout

    code, out, err, _ = run_hook("SessionStart", payload("SessionStart", str(project_dir), "s-1", source="startup"),
                                 env=env, cwd=str(project_dir))
    answer = check_answer("SessionStart", out)
    assert code == 0 and answer, err
    assert NOT_LOGGED_IN in answer["systemMessage"] and "claude /login" in answer["systemMessage"]
    code, out, _, _ = run_hook("SessionStart", payload("SessionStart", str(project_dir), "s-2", source="startup"),
                               env=env, cwd=str(project_dir))
    assert code == 0 and NOT_LOGGED_IN not in out

    doctor = ace_process("doctor", env=env, cwd=project_dir, whole_env=True)
    assert doctor.returncode == 1
    assert any("FAIL" in line and "model:" in line for line in doctor.stdout.splitlines()), doctor.stdout
    assert NOT_LOGGED_IN in doctor.stdout and "fix: run `claude /login`" in doctor.stdout
    assert not [r for r in model_server.requests if r.kind == SIDE]  # nothing reached a model


# -- Codex: `codex exec` as the provider, offered by `ace install --agent codex` -------------------------

@pytest.fixture(scope="module")
def codex_bin() -> Path:
    from .agent_clis import AgentCliUnavailable, ensure_cli

    try:
        return ensure_cli("codex")
    except AgentCliUnavailable as exc:
        problem = str(exc)
    pytest.fail(f"Codex CLI unavailable for the e2e tests:\n{problem}", pytrace=False)


@pytest.fixture
def responses_server():
    from .agent_servers import ScriptedResponsesServer

    server = ScriptedResponsesServer().start()
    try:
        yield server
    finally:
        server.stop()


def codex_env(codex_bin: Path, home: Path, server_url: str, project: Path, tmp_path: Path) -> dict:
    """Codex offline against the scripted Responses server, logged in with an API key (its auth.json),
    and ace-engine's private dirs; PATH with this `codex` and node only."""
    from .agent_clis import clean_env, codex_home

    folder = codex_home(home, server_url, project, codex_bin)
    (folder / "auth.json").write_text(json.dumps({"OPENAI_API_KEY": "sk-scripted-000000"}))
    (folder / "auth.json").chmod(0o600)
    env = clean_env(home, {**ace_env(tmp_path), "CODEX_HOME": str(folder), "SCRIPTED_API_KEY": "unused"})
    node = shutil.which("node")
    env["PATH"] = os.pathsep.join([str(codex_bin.parent), *([os.path.dirname(node)] if node else []), SYSTEM_PATH])
    return env


def test_codex_exec_is_a_provider_within_the_budget(codex_bin, responses_server, tmp_path, project_dir):
    from ace_engine import llm

    home = tmp_path / "codex-home"
    env = codex_env(codex_bin, home, responses_server.url, project_dir, tmp_path)
    responses_server.set_script(['Here it is: {"lessons": ["run `make test` before pushing"]}'])
    ledger = llm.UsageLedger(str(tmp_path / "usage.json"))
    provider = llm.get_provider({"llm.provider": "codex-cli", "llm.codex_path": str(codex_bin)}, env=env,
                                ledger=ledger)
    assert provider is not None
    answer = provider.complete_json("You are the Reflector of ACE.", "THE TASK: fix the calc tests",
                                    {"type": "object", "required": ["lessons"]})
    assert answer == {"lessons": ["run `make test` before pushing"]}
    sent = json.dumps([r.body for r in responses_server.main_requests()])
    assert "You are the Reflector of ACE." in sent and "THE TASK: fix the calc tests" in sent
    # No tool that acts or reads beyond the prompt reaches the model: no shell, no web search, no MCP.
    tools = {t.get("name") or t.get("type") for r in responses_server.main_requests() for t in r.body.get("tools") or []}
    assert tools and not tools & {"exec_command", "write_stdin", "shell", "web_search", "view_image"}, tools
    assert tools <= {"apply_patch", "request_user_input"}, tools
    assert ledger.day()["calls"] == 1 and ledger.day()["providers"] == {"codex-cli": 1}
    assert not list((home / ".codex").glob("sessions/**/*.jsonl"))  # --ephemeral: no session file kept


def test_install_agent_codex_offers_codex_exec_and_doctor_checks_it(codex_bin, responses_server, tmp_path,
                                                                   project_dir):
    env = codex_env(codex_bin, tmp_path / "codex-home", responses_server.url, project_dir, tmp_path)
    code, shown = ace_in_terminal("install", "--agent", "codex", env=env, cwd=project_dir, whole_env=True)
    assert code == 0, shown
    assert "Learn with your Codex?" in shown and "`codex exec`" in shown and "Learn with it? [Y/n]" in shown
    assert 'provider = "codex-cli"' in user_config(env).read_text()

    responses_server.set_script(["ok"])
    first = len(responses_server.requests)
    doctor = ace_process("doctor", "--json", env=env, cwd=project_dir, whole_env=True)
    check = next(c for c in json.loads(doctor.stdout)["checks"] if c["check"] == "model")
    assert check["status"] == "ok" and "codex-cli answered" in check["detail"], check
    assert any("You are a health check" in r.text() for r in responses_server.requests[first:])
    status = ace_process("status", env=env, cwd=project_dir, whole_env=True)
    assert "Learning: with codex-cli — 1/200 calls" in status.stdout
