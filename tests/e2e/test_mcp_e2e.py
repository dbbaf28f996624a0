"""ace-engine inside the agent, end to end: the real Claude Code CLI asks ace-engine's MCP server, and
the plugin's slash command reaches the model.

Two routes, as a user switches them on:

* ``ace install`` plus the MCP registration ``ace install --mcp`` writes (`integrations.mcp_config`:
  the project's ``.mcp.json`` and ``.claude/settings.local.json``): the scripted model's first reply
  calls ``mcp__ace__search_lessons``; the lesson seeded in the store must come back as that call's
  ``tool_result`` in the next request to the model — allowed by the settings ``install`` wrote, not
  by ``--allowedTools``. A mark through ``mcp__ace__mark_lesson`` lands under the Claude Code
  session's id (the server reads ``$CLAUDE_CODE_SESSION_ID``).
* the Claude Code plugin (``claude plugin marketplace add`` + ``claude plugin install``, as
  `test_capture_e2e` does): ``/ace-engine:search …`` runs ``ace search --json`` through the
  command's ``allowed-tools`` and its output is in the model's first request; the plugin's own MCP
  server (``mcp__plugin_ace-engine_ace__search_lessons``, started by ``bin/ace_mcp.py`` with
  ``$ACE_PYTHON``) answers a call the same way.

What Claude Code 2.1.197 does here (observed with this harness): MCP servers start in the project
directory with ``CLAUDE_CODE_SESSION_ID`` and ``CLAUDE_PROJECT_DIR`` set; a plugin's servers are named
``plugin:<plugin>:<server>``, so their tools are ``mcp__plugin_<plugin>_<server>__<tool>``; a tool
result reaches the model as a ``tool_result`` block (text) in the next request; a command's
```` ```! ```` block runs before the model is called, after ``$ARGUMENTS`` and ``${CLAUDE_SESSION_ID}``
are substituted, and only when ``allowed-tools`` permits every command in it.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from .claude_cli import run_claude, run_claude_command
from .conftest import make_git_project
from .model_server import MAIN
from .test_capture_e2e import ace_env, ace_json, ace_log_errors, assert_clean_run, plugin_checkout  # noqa: F401

pytestmark = pytest.mark.e2e
pytest.importorskip("mcp", reason="the MCP server needs the `mcp` package (pip install 'mcp>=2.3,<3')")

JWT = "JWT access tokens expire after 15 min: call `refresh_token()` before retrying a 401"
DOCKER = "Log in with `docker login ghcr.io` before `docker compose push`; the registry rejects anonymous pushes"
QUERY = "the login returns 401 after the JWT expires"
VENV_BIN = str(Path(sys.executable).parent)  # where `ace` is, as `pip install ace-engine` puts it on PATH


def seed(env: dict[str, str], project: Path) -> dict[str, str]:
    """Two lessons in the project's playbook, written in this process under the test's ACE_HOME."""
    from ace_engine.core.project import identify
    from ace_engine.playbook.playbook import Playbook
    from ace_engine.store.sqlite import SQLiteStore

    with pytest.MonkeyPatch.context() as mp:
        for key in [k for k in os.environ if k.startswith("ACE_") and k != "ACE_TEST_CACHE"]:
            mp.delenv(key)
        for key, value in env.items():
            mp.setenv(key, value)
        with SQLiteStore() as store:
            playbook = Playbook(store, identify(str(project)))
            return {"jwt": playbook.add(JWT, "troubleshooting_and_pitfalls", domains=["auth-jwt"])[0]["id"],
                    "docker": playbook.add(DOCKER, "strategies_and_hard_rules", domains=["docker"])[0]["id"]}


def tool_result_text(result, tool_use_id: str) -> tuple[str, bool]:
    """The text of the tool_result for `tool_use_id` in the requests of this run, and its is_error."""
    for request in result.server_requests:
        if request.kind != MAIN:
            continue
        for message in request.body.get("messages") or []:
            for block in message.get("content") if isinstance(message.get("content"), list) else []:
                if block.get("type") == "tool_result" and block.get("tool_use_id") == tool_use_id:
                    content = block.get("content")
                    text = content if isinstance(content, str) else "\n".join(
                        b.get("text", "") for b in content or [] if isinstance(b, dict))
                    return text, bool(block.get("is_error"))
    raise AssertionError(f"no tool_result for {tool_use_id}:\n{result.describe()}")


def test_the_model_asks_the_mcp_server_and_gets_the_lesson(claude_bin, model_server, claude_home, tmp_path):
    from ace_engine.integrations import mcp_config

    env = ace_env(tmp_path)
    project = make_git_project(tmp_path / "project", {"README.md": "# shop\n", "src/auth/jwt.py": "x = 1\n"})
    ids = seed(env, project)
    ace_json(env, claude_home, "install", "--project", str(project))  # the hooks, as a user has them
    installed = mcp_config.install(str(project), str(project / ".claude" / "settings.local.json"), allow_writes=True)
    assert installed["mcp_changed"] and installed["settings_changed"]

    script = [
        [{"id": "toolu_ace_search_1", "name": "mcp__ace__search_lessons", "input": {"query": QUERY, "k": 3}}],
        [{"id": "toolu_ace_mark_1", "name": "mcp__ace__mark_lesson",
          "input": {"id": ids["jwt"], "verdict": "helpful", "reason": "refreshing before the retry fixed the 401"}}],
        "The lesson says to refresh the token before retrying.",
    ]
    # Only the write tool is granted on the command line: the read tool is allowed by what
    # `mcp_config.install` wrote into .claude/settings.local.json.
    result = run_claude(claude_bin, project, claude_home, model_server, f"Why does {QUERY}?", script=script,
                        env=env, extra_args=["--allowedTools", "mcp__ace__mark_lesson"])
    assert_clean_run(result, "The lesson says to refresh the token before retrying.")
    mains = [r for r in result.server_requests if r.kind == MAIN]
    assert [r.step for r in mains] == [0, 1, 2], result.describe()
    tools = {t["name"] for t in mains[0].body.get("tools") or []}
    assert {f"mcp__ace__{t}" for t in mcp_config.READ_TOOLS} | {"mcp__ace__mark_lesson"} <= tools, sorted(tools)

    text, is_error = tool_result_text(result, "toolu_ace_search_1")
    assert not is_error, text
    assert f"1. [{ids['jwt']} ✓0 ✗0 conf 0.50] {JWT}" in text, text
    assert ids["docker"] not in text
    # It came back in the very next request, right after the call.
    assert "toolu_ace_search_1" in json.dumps(mains[1].body["messages"][-1])

    text, is_error = tool_result_text(result, "toolu_ace_mark_1")
    assert not is_error and text.startswith(f"Marked {ids['jwt']} helpful"), text
    log = ace_json(env, claude_home, "log", "--limit", "5", "--project", str(project))
    marks = [c for c in log["changes"] if c["op"] == "TAG" and c["source"] == "mcp"]  # (learning may mark it too)
    assert [(c["session_id"], c["detail"]["explicit"]) for c in marks] == [(result.session_id, True)], log
    assert ace_log_errors(Path(env["ACE_HOME"])) == []


def test_the_plugin_route_search_command_and_mcp_server(claude_bin, model_server, claude_home, tmp_path,
                                                        plugin_checkout):  # noqa: F811
    env = ace_env(tmp_path)
    env["ACE_PYTHON"] = sys.executable  # the plugin's hooks and MCP launcher run with it
    env["PATH"] = VENV_BIN + os.pathsep + os.environ.get("PATH", "")  # `ace` for the slash command
    project = make_git_project(tmp_path / "project", {"README.md": "# shop\n"})
    ids = seed(env, project)
    for args in (["plugin", "marketplace", "add", str(plugin_checkout)], ["plugin", "install", "ace-engine@ace-engine"]):
        proc = run_claude_command(claude_bin, args, home=claude_home, server_url=model_server.url, cwd=project, env=env)
        assert proc.returncode == 0, f"claude {' '.join(args)}:\n{proc.stdout}\n{proc.stderr}"
    assert not (project / ".mcp.json").exists() and not (project / ".claude").exists()

    # The slash command: `ace search --json` runs before the model is called; its answer is in the prompt.
    typed = "it's the \"login\" $(touch pwned) 401 after JWT expiry"
    result = run_claude(claude_bin, project, claude_home, model_server, f"/ace-engine:search {typed}",
                        script=["Here are the lessons."], env=env)
    assert_clean_run(result, "Here are the lessons.")
    first = [r for r in result.server_requests if r.kind == MAIN][0].body
    prompt = "\n".join(b.get("text", "") for b in first["messages"][0]["content"] if isinstance(b, dict))
    assert "ace-engine's playbook search for the words below" in prompt, prompt[:3000]
    found = json.loads(prompt[prompt.index("{"): prompt.rindex("}") + 1])
    assert found["query"] == typed  # passed as data: quotes kept, nothing substituted or run
    assert not (project / "pwned").exists()
    assert [p["id"] for p in found["similar_patterns"]][:1] == [ids["jwt"]], found
    assert found["similar_patterns"][0]["content"] == JWT and found["similar_patterns"][0]["why"]

    # The plugin's MCP server, started by its launcher with $ACE_PYTHON.
    tool = "mcp__plugin_ace-engine_ace__search_lessons"
    result = run_claude(claude_bin, project, claude_home, model_server, "Any lesson about the 401?",
                        script=[[{"id": "toolu_plugin_1", "name": tool, "input": {"query": QUERY}}], "Found one."],
                        env=env, extra_args=["--allowedTools", tool])
    assert_clean_run(result, "Found one.")
    text, is_error = tool_result_text(result, "toolu_plugin_1")
    assert not is_error and f"[{ids['jwt']} " in text and JWT in text, text
    listed = {t["name"] for t in [r for r in result.server_requests if r.kind == MAIN][0].body["tools"]}
    assert "mcp__plugin_ace-engine_ace__mark_lesson" not in listed  # read-only unless the user allows writes
    assert ace_log_errors(Path(env["ACE_HOME"])) == []
