"""The LLM reflector through the real Claude Code CLI (2.1.197) in headless mode.

`claude -p --output-format json` talks to the scripted Messages server, which answers with a
reflection JSON as the assistant text. Checked: the lessons and tags that come back, what Claude
Code sent to the model (our system prompt, no tools, the output cap, the model), that ace-engine's
own hooks — installed for the user — stay silent for this call (learning never captures itself)
while they do capture an ordinary session, that no transcript is left behind, and the failure
paths: a malformed reply (one retry, then the fallback error), a model that never answers (the
process group is killed at the timeout) and an API error reported by Claude Code.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest

from ace_engine import llm
from ace_engine.core import config as config_mod
from ace_engine.learning import llm_reflector
from ace_engine.learning.reflector import ReflectorError
from ace_engine.observe import trajectory as traj_mod

from .claude_cli import claude_env, run_claude
from .model_server import SIDE, system_text
from .test_capture_e2e import ace_env, ace_json

pytestmark = pytest.mark.e2e

REFLECTION = {
    "reasoning": "pytest failed on a missing module until the package was installed in editable mode.",
    "error_identification": "ModuleNotFoundError: No module named 'textutil'",
    "root_cause": "the package was not installed",
    "candidates": [{
        "content": "When `pytest -q` fails with `ModuleNotFoundError: No module named 'textutil'`, run `pip install -e .` "
                   "first: the tests import the installed package.",
        "section": "troubleshooting_and_pitfalls", "evidence": "step 1 failed, step 2 installed, step 3 passed",
        "confidence": 0.9, "source_steps": [1, 2, 3]}],
    "tags": [{"bullet_id": "ctx-e2e00001", "tag": "helpful", "reason": "step 3 ran its command and passed"}],
}
SHOWN = [{"id": "ctx-e2e00001", "section": "useful_code_snippets", "content": "Run the tests with `pytest -q`.",
          "helpful": 1, "harmful": 0}]


def trajectory() -> dict:
    return traj_mod.from_payload({
        "task": "Fix the failing slug tests",
        "trajectory": [
            {"step": 1, "tool": "Bash", "action": "$ pytest -q", "success": False,
             "result": "ModuleNotFoundError: No module named 'textutil'"},
            {"step": 2, "tool": "Bash", "action": "$ pip install -e .", "result": "Successfully installed textutil-0.1"},
            {"step": 3, "tool": "Bash", "action": "$ pytest -q", "result": "3 passed in 0.05s"},
        ],
        "result": {"success": True, "output": "Installed the package; the tests pass.", "summary": "tests pass"},
        "playbook_used": ["ctx-e2e00001"],
        "session_id": "e2e-session",
    })


def cli_cfg(claude_bin, **extra) -> dict:
    cfg = dict(config_mod.DEFAULTS)
    cfg.update({"llm.provider": "claude-cli", "llm.claude_path": str(claude_bin), "llm.model": "claude-reflector-e2e",
                "llm.max_tokens": 2345, "llm.timeout_s": 90.0})
    cfg.update(extra)
    return cfg


def reflector_for(claude_bin, claude_home, server_url, env, tmp_path, **extra):
    """The reflector as the worker builds it, in the environment `claude` must run in (HOME, the
    scripted server, ace-engine's ACE_HOME so that its hooks *could* capture)."""
    provider = llm.get_provider(cli_cfg(claude_bin, **extra), env=claude_env(claude_home, server_url, env),
                                ledger=llm.UsageLedger(str(tmp_path / "llm-usage.json")))
    return llm_reflector.LLMReflector(provider)


def claude_pids(claude_bin, home=None) -> set[int]:
    """Processes running this `claude` binary (Linux /proc); with `home`, only those whose HOME is
    it (this test's, not another test worker's running in parallel)."""
    target = os.path.realpath(claude_bin)
    found = set()
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if os.path.realpath(entry / "exe") == target and (
                        home is None or f"HOME={home}".encode() in (entry / "environ").read_bytes().split(b"\0")):
                    found.add(int(entry.name))
            except OSError:
                continue
    return found


def test_claude_cli_reflects_without_capturing_itself(claude_bin, model_server, claude_home, project_dir, tmp_path):
    env = ace_env(tmp_path)
    # ace-engine switched on for every project of this user: its hooks run in any `claude` session…
    installed = ace_json(env, claude_home, "install", "--user")
    assert installed["changed"] is True
    # …as an ordinary session shows (the control: otherwise "nothing captured" below proves nothing).
    run_claude(claude_bin, project_dir, claude_home, model_server, "hello", script=["Hi."], env=env).check()
    before = ace_json(env, claude_home, "sessions", "--all")["sessions"]
    assert len(before) == 1, before

    model_server.side_text = "Here is my reflection:\n" + json.dumps(REFLECTION, indent=1)
    first_request = len(model_server.requests)
    reflector = reflector_for(claude_bin, claude_home, model_server.url, env, tmp_path)
    result = reflector.reflect(trajectory(), SHOWN)

    assert [c["content"] for c in result["candidates"]] == [REFLECTION["candidates"][0]["content"]]
    assert result["candidates"][0]["source_steps"] == [1, 2, 3]
    assert result["tags"] == REFLECTION["tags"]
    assert result["reflector"] == "llm:claude-cli"
    assert result["usage"]["calls"] == 1 and result["usage"]["cost_usd"] > 0  # claude reports its cost

    # What Claude Code sent to the model: our prompts, no tools, our output cap and model.
    requests = [r for r in model_server.requests[first_request:] if r.method == "POST"]
    assert [r.kind for r in requests] == [SIDE], model_server.summary(requests)
    body = requests[0].body
    assert not body.get("tools")
    assert body["model"] == "claude-reflector-e2e"
    assert body["max_tokens"] == 2345
    assert "You are the Reflector of ACE" in system_text(body)
    user_text = json.dumps(body["messages"])
    assert "Fix the failing slug tests" in user_text and "ctx-e2e00001" in user_text

    # ace-engine's hooks stayed silent for the reflection call: still only the control session.
    after = ace_json(env, claude_home, "sessions", "--all")["sessions"]
    assert [s["session_id"] for s in after] == [s["session_id"] for s in before]
    # …and Claude Code kept no transcript of it (only the control session's project has one).
    projects = claude_home / ".claude" / "projects"
    transcripts = [p for p in projects.rglob("*.jsonl")] if projects.exists() else []
    assert all(before[0]["session_id"] in p.name for p in transcripts), transcripts


def test_malformed_reply_is_retried_once_then_falls_back(claude_bin, model_server, claude_home, tmp_path):
    model_server.side_text = "I am not able to produce JSON today."
    reflector = reflector_for(claude_bin, claude_home, model_server.url, ace_env(tmp_path), tmp_path)
    with pytest.raises(ReflectorError, match="InvalidOutput.*no JSON object.*after one retry"):
        reflector.reflect(trajectory(), SHOWN)
    posts = [r for r in model_server.requests if r.method == "POST"]
    assert len(posts) == 2
    assert "Reply with JSON only" in json.dumps(posts[1].body["messages"])


def test_a_model_that_never_answers_is_cut_off_at_the_timeout(claude_bin, claude_home, tmp_path):
    from llm_servers import ScriptedChatServer

    with ScriptedChatServer([json.dumps(REFLECTION)], delay=120) as stalled:
        reflector = reflector_for(claude_bin, claude_home, stalled.url, ace_env(tmp_path), tmp_path,
                                  **{"llm.timeout_s": 6.0})
        running_before = claude_pids(claude_bin, claude_home)
        with pytest.raises(ReflectorError, match="LLMTimeout: claude did not answer within 6s"):
            reflector.reflect(trajectory(), SHOWN)  # the stalled model answers after 120 s: that was not waited for
        assert any(r["kind"] == "anthropic" for r in stalled.requests)  # it did reach the model
    # The whole process group was killed: no claude of ours is left running.
    deadline = time.monotonic() + 5
    while claude_pids(claude_bin, claude_home) - running_before and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not claude_pids(claude_bin, claude_home) - running_before


def test_an_api_error_reported_by_claude_is_an_llm_error(claude_bin, claude_home, tmp_path):
    from llm_servers import ScriptedChatServer

    refusal = (400, {"type": "error", "error": {"type": "invalid_request_error", "message": "model not allowed here"}})
    with ScriptedChatServer([refusal]) as refusing:
        provider = llm.get_provider(cli_cfg(claude_bin), env=claude_env(claude_home, refusing.url, ace_env(tmp_path)),
                                    ledger=llm.UsageLedger(str(tmp_path / "llm-usage.json")))
        with pytest.raises(llm.LLMError, match="claude reported an error.*model not allowed here"):
            provider.complete_json("system", "user", {"type": "object"})
