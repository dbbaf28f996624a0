"""One playbook, three agents, end to end with the real CLIs: a lesson learned while Codex worked
reaches Gemini CLI and Claude Code on the same repository.

One temporary git project with a real bug (`slug.slug` keeps accents), set up with `ace install` for
each agent (`--agent codex`, `--agent gemini`, Claude Code's default). Codex 0.169 (from npm,
against a scripted Responses API) runs the tests for real (they fail), fixes `slug.py` with its
own `apply_patch`, runs them again (they pass) and answers; its Stop hook queues the learning job
and the detached worker learns — the test only waits. The bug comes back; a new Gemini CLI 0.61
session (against a scripted Gemini API) and then a new Claude Code session must each carry the
lesson in the very first request their model receives.
"""

from __future__ import annotations

import json
import os
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from .agent_clis import AgentCliUnavailable, AgentRun, codex_home, ensure_cli, gemini_home, run_codex, run_gemini
from .agent_servers import ScriptedGeminiServer, ScriptedResponsesServer
from .claude_cli import ClaudeResult, run_claude
from .conftest import make_git_project
from .model_server import MAIN, ScriptedModelServer
from .test_capture_e2e import ace_env, ace_json, ace_log_errors
from .test_learning_e2e import BUGGY, FIX_LINE, FIXED, PROJECT_FILES, UNFINISHED, wait_until, worker_processes

pytestmark = pytest.mark.e2e

TEST_COMMAND = f"{sys.executable} -m pytest -q"  # Codex runs `bash -lc`: a login shell may reset PATH
PATCH = ("*** Begin Patch\n*** Update File: slug.py\n@@\n+import unicodedata\n+\n+\n def slug(text):\n"
         f"+    {FIX_LINE}\n     return text.lower().replace(' ', '-')\n*** End Patch\n")
# exec_command answers "still running" after 10 s by default; pytest with this venv's plugins can take
# longer on a loaded machine, so the scripted model asks Codex to wait for the exit (and the code).
WAIT_MS = 120_000
CODEX_PROMPT = "The slug tests are failing, please fix slug.py so that they pass."
CODEX_FINAL = "Fixed: slug() now folds accents first; the slug tests pass now."
LATER_PROMPT = "the slug tests fail again after my change, fix them"
LATER_FINAL = "Looking at slug.py."


@pytest.fixture(scope="session")
def codex_bin() -> Path:
    try:
        return ensure_cli("codex")
    except AgentCliUnavailable as exc:
        problem = str(exc)
    pytest.fail(f"Codex CLI unavailable for the e2e tests:\n{problem}", pytrace=False)


@pytest.fixture(scope="session")
def gemini_bin() -> Path:
    try:
        return ensure_cli("gemini")
    except AgentCliUnavailable as exc:
        problem = str(exc)
    pytest.fail(f"Gemini CLI unavailable for the e2e tests:\n{problem}", pytrace=False)


@dataclass
class Team:
    project: Path
    home: Path
    env: dict[str, str]
    ace_home: Path
    installs: dict[str, Any] = field(default_factory=dict)
    codex: AgentRun | None = None
    gemini: AgentRun | None = None
    claude: ClaudeResult | None = None
    codex_later: AgentRun | None = None
    slug_after_codex: str = ""
    jobs: dict = field(default_factory=dict)
    patterns: dict = field(default_factory=dict)
    events: dict = field(default_factory=dict)

    def lesson(self) -> dict | None:
        for bullet in self.patterns.get("patterns", []):
            if "slug.py" in bullet["content"] and "unicodedata" in bullet["content"]:
                return bullet
        return None

    def diagnostics(self) -> str:
        log = self.ace_home / "logs" / "ace.log"
        tail = log.read_text(errors="replace")[-4000:] if log.exists() else "<no ace.log>"
        return (f"jobs: {json.dumps(self.jobs, indent=1)[:3000]}\npatterns: {json.dumps(self.patterns)[:3000]}\n"
                f"codex events: {json.dumps(self.events)[:3000]}\nace.log tail:\n{tail}")


@pytest.fixture(scope="module")
def team(codex_bin, gemini_bin, claude_bin, tmp_path_factory) -> Team:
    tmp = tmp_path_factory.mktemp("agents")
    env = ace_env(tmp)
    env["ACE_LEARNING_LINGER_SECONDS"] = "0"
    env["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"  # the project's tests need none of this venv's plugins
    project = make_git_project(tmp / "project", PROJECT_FILES)
    home = tmp / "home"
    home.mkdir()
    scn = Team(project, home, env, Path(env["ACE_HOME"]))
    codex_server, gemini_server = ScriptedResponsesServer().start(), ScriptedGeminiServer().start()
    claude_server = ScriptedModelServer().start()
    try:
        codex_home(home, codex_server.url, project, codex_bin)  # the user's own set-up first
        gemini_home(home)
        for agent in ("codex", "gemini", "claude"):
            scn.installs[agent] = ace_json(env, home, "install", "--agent", agent, "--project", str(project))
        scn.codex = run_codex(codex_bin, project, home, codex_server, CODEX_PROMPT, env=env, script=[
            [{"name": "exec_command", "args": {"cmd": TEST_COMMAND, "yield_time_ms": WAIT_MS}}],
            [{"name": "apply_patch", "args": {"input": PATCH}}],
            [{"name": "exec_command", "args": {"cmd": TEST_COMMAND, "yield_time_ms": WAIT_MS}}],
            CODEX_FINAL,
        ])
        scn.slug_after_codex = (project / "slug.py").read_text()
        session = _codex_session(scn)

        def learned():
            data = ace_json(env, home, "jobs", "--project", str(project))
            mine = [j for j in data["jobs"] if j["session_id"] == session]
            return data if mine and not any(j["status"] in UNFINISHED for j in mine) else None

        scn.jobs = wait_until(learned, 60.0)[0] or ace_json(env, home, "jobs", "--project", str(project))
        wait_until(lambda: not worker_processes(scn.ace_home), 10.0)
        scn.patterns = ace_json(env, home, "patterns", "--project", str(project))
        if session:
            scn.events = ace_json(env, home, "events", session)

        (project / "slug.py").write_text(BUGGY)  # the bug comes back
        scn.gemini = run_gemini(gemini_bin, project, home, gemini_server, LATER_PROMPT, env=env, script=[
            [{"name": "mcp_ace_search_lessons", "args": {"query": "slug.py accents tests fail"}}],  # ace mcp's tool
            LATER_FINAL,
        ])
        scn.claude = run_claude(claude_bin, project, home, claude_server, LATER_PROMPT, script=[LATER_FINAL],
                                env=env)
        # A later Codex session asks ace mcp itself. Codex sends its first request before its MCP
        # servers have connected (the server's Python takes seconds to start on a loaded machine), so
        # the scripted model first looks at the repository for a few seconds, as a model might.
        scn.codex_later = run_codex(codex_bin, project, home, codex_server, LATER_PROMPT, env=env, script=[
            [{"name": "exec_command", "args": {"cmd": "sleep 5; git status --short", "yield_time_ms": WAIT_MS}}],
            [{"name": "search_lessons", "namespace": "mcp__ace", "args": {"query": "slug.py accents tests fail"}}],
            LATER_FINAL,
        ])
    finally:
        for server in (codex_server, gemini_server, claude_server):
            server.stop()
    wait_until(lambda: not worker_processes(scn.ace_home), 30.0)
    return scn


def _codex_session(scn: Team) -> str | None:
    data = ace_json(scn.env, scn.home, "sessions")  # a private ACE_HOME: only the Codex session so far
    sessions = data.get("sessions") if isinstance(data, dict) else data
    return sessions[0]["session_id"] if sessions else None


def test_install_wrote_each_agents_own_config(team):
    assert set(team.installs["codex"]["events"]) >= {"SessionStart", "UserPromptSubmit", "PostToolUse", "Stop"}
    assert "features.hooks" in team.installs["codex"]["added"]
    assert set(team.installs["gemini"]["events"]) >= {"SessionStart", "BeforeAgent", "AfterTool", "AfterAgent"}
    assert (team.project / ".codex" / "hooks.json").exists() and (team.project / ".gemini" / "settings.json").exists()


def test_codex_session_failed_fixed_and_passed_for_real(team):
    assert team.codex.returncode == 0, team.codex.describe()
    assert team.slug_after_codex == FIXED, team.codex.describe()
    outputs = [i for r in team.codex.requests if r.main for i in r.body.get("input", [])
               if isinstance(i, dict) and i.get("type") in ("function_call_output", "custom_tool_call_output")]
    text = json.dumps(outputs)
    assert "creme-brulee" in text and "1 passed" in text, text[:4000]


def test_codex_hooks_captured_the_session_as_claude_codes_would_be(team):
    tools = team.events.get("tool_events") or []
    assert [(t["tool_name"], t["success"]) for t in tools] == [("Bash", False), ("Edit", True), ("Bash", True)], \
        team.diagnostics()
    assert tools[0]["exit_code"] == 1, tools[0]


def test_the_worker_learned_from_the_codex_session(team):
    assert team.lesson() is not None, team.diagnostics()


def _first_main(requests: list) -> str:
    main = next(r for r in requests if getattr(r, "main", False) or getattr(r, "kind", None) == MAIN)
    return json.dumps(main.body, ensure_ascii=False)


def test_a_later_gemini_session_carries_the_lesson_in_its_first_request(team):
    lesson = team.lesson()
    assert lesson is not None, team.diagnostics()
    assert team.gemini.returncode == 0, team.gemini.describe()
    first = _first_main(team.gemini.requests)
    assert lesson["id"] in first, f"{first[:6000]}\n{team.diagnostics()}"


def test_a_later_claude_code_session_carries_the_lesson_in_its_first_request(team):
    lesson = team.lesson()
    assert lesson is not None, team.diagnostics()
    team.claude.check()
    first = _first_main(team.claude.server_requests)
    assert lesson["id"] in first, first[:6000]


def codex_hook_problems(stderr: str) -> list[str]:
    """Codex prints `hook: EVENT` when a hook starts and `hook: EVENT Completed` when it answered
    well; any other `hook:` line (Failed, Blocked, a warning about its output) is a problem."""
    return [line for line in stderr.splitlines() if line.startswith("hook: ")
            and not re.fullmatch(r"hook: [A-Za-z]+( Completed)?", line.strip())]


def test_gemini_calls_ace_mcps_search_lessons_itself(team):
    lesson = team.lesson()
    assert lesson is not None, team.diagnostics()
    mains = [r for r in team.gemini.requests if r.main]
    offered = [d["name"] for t in mains[0].body.get("tools", []) for d in t.get("functionDeclarations", [])]
    assert "mcp_ace_search_lessons" in offered, offered
    answers = [p["functionResponse"] for c in mains[-1].body["contents"] for p in c.get("parts", [])
               if "functionResponse" in p]
    assert answers and answers[-1]["name"] == "mcp_ace_search_lessons", answers
    assert lesson["id"] in json.dumps(answers[-1]), answers[-1]


def test_codex_calls_ace_mcps_search_lessons_itself(team):
    """Codex 0.169 starts MCP servers from the user's config.toml (where `ace install --agent codex`
    registers it) and offers their tools as a namespace (`mcp__ace`)."""
    lesson = team.lesson()
    assert lesson is not None, team.diagnostics()
    assert team.codex_later.returncode == 0, team.codex_later.describe()
    mains = [r for r in team.codex_later.requests if r.main]
    offered = [{t.get("name"): [u.get("name") for u in t.get("tools", [])]
                for t in r.body.get("tools", []) if t.get("type") == "namespace"}.get("mcp__ace", []) for r in mains]
    assert "search_lessons" in offered[-1], offered
    outputs = [i for i in mains[-1].body.get("input", []) if isinstance(i, dict)
               and i.get("type") == "function_call_output"]
    assert lesson["id"] in json.dumps(outputs[-1]), json.dumps(outputs)[-3000:]


def test_no_hook_failed_anywhere(team):
    assert ace_log_errors(team.ace_home) == []
    assert codex_hook_problems(team.codex.stderr) == [], team.codex.stderr[-3000:]
    assert re.search(r"hook: Stop Completed", team.codex.stderr), "the Codex hooks did run"
    # Gemini reports a failing hook as "Hook(s) [NAME] failed for event E" / "Hook execution error".
    assert not re.search(r"Hook\(s\) \[.*\] failed|Hook execution (for|error)", team.gemini.stderr), \
        team.gemini.stderr[-3000:]
    assert "Hook system message: ace learned" in team.gemini.stderr, "Gemini showed SessionStart's message"
    assert team.claude.hook_problems() == []
    assert os.path.exists(team.ace_home / "ace.db")
