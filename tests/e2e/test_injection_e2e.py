"""ace-engine injection, end to end: the real Claude Code CLI shows the model the right bullets.

A playbook is seeded in the test process (real SQLite under a temporary ``$ACE_HOME``), ace-engine
is switched on with ``ace install``, and one scripted session is driven through six ``claude``
runs.  Every assertion is about what really reached the model — the scripted server records each
request body — cross-checked with what ace-engine recorded (``ace recall --session SID --json``).

Where Claude Code 2.1.197 puts hook context (observed with this harness):

* SessionStart and UserPromptSubmit ``additionalContext`` → one ``role: "system"`` entry of
  ``messages`` right after the prompt: "SessionStart hook additional context: <ace-playbook>…" and
  "UserPromptSubmit hook additional context: <ace-patterns>…" (plus Claude Code's own lists of
  agents and skills).  On ``--resume`` Claude Code does not send a SessionStart context that is
  identical to one already in the history (the resumed digest is recorded by ace, not re-sent).
* PreToolUse ``additionalContext`` → a text block beside the ``tool_result`` in the next request:
  "<system-reminder>\\nPreToolUse:Read hook additional context: <ace-patterns-domain-shift …>".
* SessionStart(compact) ``additionalContext`` is stored in the transcript by ``-p "/compact"`` and
  reaches the model with the next prompt on ``--resume``, in a ``role: "system"`` entry after the
  compaction summary.
"""

from __future__ import annotations

import json
import os
import re
import time
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from .claude_cli import ClaudeResult, run_claude
from .conftest import make_git_project
from .model_server import MAIN, ScriptedModelServer, system_text
from .test_capture_e2e import ace_env, ace_json, ace_log_errors, assert_clean_run

pytestmark = pytest.mark.e2e

# ---------------------------------------------------------------------------------------------
# the seeded playbook

STRATEGIES, SNIPPETS = "strategies_and_hard_rules", "useful_code_snippets"
PITFALLS, APIS = "troubleshooting_and_pitfalls", "apis_to_use"

# Marked helpful by the user: the most valuable bullets, candidates for the session digest.
# (key, content, section, domains); "pytest" is marked twice, so it ranks first of all.
HELPFUL = [
    ("pytest", "Run the suite with `python -m pytest -q` from the repo root; plain `pytest` misses "
               "the src/ layout", STRATEGIES, ["python-testing"]),
    ("git", "Never rebase `main`: open a pull request from a topic branch and squash-merge it",
     STRATEGIES, ["git"]),
    ("ruff", "Run `ruff check --fix` and `ruff format` before committing; CI fails on any lint "
             "warning", STRATEGIES, ["linting"]),
    ("pip", "Install with `pip install -e .[dev]`; the `dev` extra brings the test and lint tools",
     SNIPPETS, ["python-packaging"]),
    ("settings", "Settings come from `.env` through pydantic `BaseSettings`; never commit `.env`, "
                 "update `.env.example`", STRATEGIES, ["config-env"]),
    ("structlog", "Use `structlog.get_logger(__name__)` instead of print; production logs are JSON "
                  "lines", SNIPPETS, ["logging"]),
    ("routers", "New FastAPI routers live in `app/api/` and must be registered in `app/main.py`, "
                "or their endpoints 404", APIS, ["http-api"]),
    ("ci-cache", "Bump the pip cache key in `.github/workflows/ci.yml` whenever pyproject.toml "
                 "changes", PITFALLS, ["ci"]),
    ("mypy", "Type-check with `mypy --strict src/`; untyped defs are rejected by the pre-commit "
             "hook", STRATEGIES, ["python-typing"]),
    ("make-dev", "The `make dev` target starts the API with autoreload on port 8000; stop it "
                 "before running e2e tests", PITFALLS, ["build"]),
    ("anyio", "Async handlers must not call blocking I/O; wrap it with `anyio.to_thread.run_sync`",
     SNIPPETS, ["async"]),
    ("py-spy", "Profile slow endpoints with `py-spy record -o profile.svg --pid PID` before "
               "optimizing anything", SNIPPETS, ["performance"]),
]
# Never marked: they reach the model only when a prompt or a file makes them relevant.
PLAIN = [
    ("jwt", "JWT access tokens expire after 15 min: call `refresh_token()` before retrying a 401",
     PITFALLS, ["auth-jwt"]),
    ("alembic", "Alembic migrations must be generated with `alembic revision --autogenerate` after "
                "importing all models in `models/__init__.py`", STRATEGIES, ["database"]),
    # Near misses for the JWT prompt: they share the word "login" with it (so full-text search
    # finds them) but are about something else; relevance must keep them out.
    ("react-form", "React login form: disable the submit button while the request is pending, "
                   "or a double click posts twice", PITFALLS, ["frontend-react"]),
    ("docker", "Log in with `docker login ghcr.io` before `docker compose push`; the registry "
               "rejects anonymous pushes", STRATEGIES, ["docker"]),
]
# Marked helpful three times (they would top every ranking) and then taken out of service, and
# relevant to the JWT prompt: they must never be injected.
RETIRED = [
    ("archived", "Store the JWT in localStorage so the login survives a reload and the 401 goes "
                 "away", PITFALLS, ["auth-jwt"]),
    ("quarantined", "When a JWT login returns 401, disable signature verification with "
                    "`verify=False` until the token refresh works", PITFALLS, ["auth-jwt"]),
]
UNRELATED_TO_JWT = ("docker", "react-form", "alembic")

# ---------------------------------------------------------------------------------------------
# the session

JWT_PROMPT = "The login returns 401 after the JWT expires; can you find out why?"
# An `ace` command is not searched, although its words match the docker bullet.
ACE_COMMAND_QUERY = "docker login registry push"
ACE_COMMAND_PROMPT = f"ace search {ACE_COMMAND_QUERY}"
AFTER_COMPACT_PROMPT = "Now add a regression test for the expired token case"
# The session's runs, in order: all but the first `--resume` the first one's session.
RUNS = ("startup", "thanks", "ace_command", "repeat", "compact", "after_compact")
PROMPTS = {"startup": JWT_PROMPT, "thanks": "thanks", "ace_command": ACE_COMMAND_PROMPT,
           "repeat": JWT_PROMPT, "compact": "/compact", "after_compact": AFTER_COMPACT_PROMPT}
PROJECT_FILES = {
    "README.md": "# demo service\n",
    "src/auth/jwt_refresh.py": "def refresh_token(token):\n    return token\n",
    "src/db/migrations/env.py": "from alembic import context\n",
    "frontend/components/LoginForm.tsx": "export const LoginForm = () => null;\n",
}
SAME_DOMAIN_FILE = "src/auth/jwt_refresh.py"  # auth-jwt: the prompt's domain, no shift
DATABASE_FILE = "src/db/migrations/env.py"  # an Alembic file: a shift to `database`
REACT_FILE = "frontend/components/LoginForm.tsx"  # a shift to `frontend-react`
FINAL = {
    "startup": "The refresh call is missing before the retry.",
    "thanks": "You're welcome.",
    "ace_command": "Searched the playbook.",
    "repeat": "Same cause as before: no refresh before the retry.",
    "compact": "",
    "after_compact": "Regression test added.",
}

TAG_RE = re.compile(r"<(ace-[a-z-]+)((?:\s[^>]*)?)>\n(.*?)\n</\1>", re.DOTALL)
LINE_RE = re.compile(r"^- \[(ctx-[0-9a-z]+) ✓(\d+) ✗(\d+) conf (\d\.\d\d)\] (.+)$")
TITLES = {STRATEGIES: "Strategies and hard rules", SNIPPETS: "Useful code snippets",
          PITFALLS: "Troubleshooting and pitfalls", APIS: "APIs to use"}


@dataclass
class Block:
    """One injected `<ace-…>` block as the model received it."""

    tag: str
    attrs: str
    body: str
    where: str  # "system-message" | "tool-result-reminder" | "user-text"
    prefix: str  # the text Claude Code put right before the block

    @property
    def ids(self) -> list[str]:
        return re.findall(r"^- \[(ctx-[0-9a-z]+) ", self.body, re.MULTILINE)

    @property
    def lines(self) -> list[str]:
        return [line for line in self.body.splitlines() if line.startswith("- [")]


@dataclass
class Scenario:
    project: Path
    home: Path
    env: dict[str, str]
    ace_home: Path
    ids: dict[str, str]
    sections: dict[str, str]  # bullet id -> section
    runs: dict[str, ClaudeResult] = field(default_factory=dict)
    started: dict[str, float] = field(default_factory=dict)  # run name -> time.time() at start
    server_errors: list[str] = field(default_factory=list)

    @property
    def session_id(self) -> str:
        return self.runs["startup"].session_id

    def mains(self, run: str) -> list:
        return [r for r in self.runs[run].server_requests if r.kind == MAIN]

    def recall(self) -> dict:
        return ace_json(self.env, self.home, "recall", "--session", self.session_id)

    def shown(self, hook: str) -> list[str]:
        return [row["bullet_id"] for row in self.recall()["injections"] if row["hook"] == hook]

    def id_of(self, *keys: str) -> set[str]:
        return {self.ids[k] for k in keys}


# ---------------------------------------------------------------------------------------------
# reading the requests


def _text_of(block: dict) -> str:
    if block.get("type") == "text":
        return block.get("text", "")
    if block.get("type") == "tool_result":
        content = block.get("content")
        if isinstance(content, str):
            return content
        return "\n".join(b.get("text", "") for b in content or [] if isinstance(b, dict))
    return ""


def _blocks_in(text: str, where: str) -> list[Block]:
    found = []
    for m in TAG_RE.finditer(text):
        prefix = text[max(0, m.start() - 60): m.start()].rsplit("\n", 1)[-1]
        found.append(Block(m.group(1), m.group(2).strip(), m.group(3), where, prefix))
    return found


def message_blocks(message: dict) -> list[Block]:
    """The `<ace-…>` blocks of one message of a request body."""
    content = message.get("content")
    parts = [{"type": "text", "text": content}] if isinstance(content, str) else content or []
    found = []
    for part in parts:
        if not isinstance(part, dict):
            continue
        text = _text_of(part)
        if message.get("role") == "system":
            where = "system-message"
        elif text.startswith("<system-reminder>") and any(
                isinstance(p, dict) and p.get("type") == "tool_result" for p in parts):
            where = "tool-result-reminder"
        else:
            where = "user-text"
        found += _blocks_in(text, where)
    return found


def request_blocks(body: dict, tag: str | None = None) -> list[Block]:
    """Every `<ace-…>` block of a request body (`tag`: only those), in the system prompt too."""
    blocks = [b for m in body.get("messages") or [] for b in message_blocks(m)]
    blocks += _blocks_in(system_text(body), "system-prompt")
    return [b for b in blocks if tag is None or b.tag == tag]


def new_turn_blocks(body: dict) -> list[Block]:
    """Blocks of the messages after the last assistant message: what this turn added."""
    messages = body.get("messages") or []
    last = max((i for i, m in enumerate(messages) if m.get("role") == "assistant"), default=-1)
    return [b for m in messages[last + 1:] for b in message_blocks(m)]


def tool_result_message(body: dict, file_path: Path) -> dict | None:
    """The user message carrying the result of the Read of `file_path`, if the request has it."""
    messages = body.get("messages") or []
    use_ids = {b["id"] for m in messages if m.get("role") == "assistant"
               for b in m.get("content") or [] if isinstance(b, dict) and b.get("type") == "tool_use"
               and (b.get("input") or {}).get("file_path") == str(file_path)}
    for m in messages:
        if m.get("role") == "user" and isinstance(m.get("content"), list) and any(
                isinstance(b, dict) and b.get("type") == "tool_result" and b.get("tool_use_id") in use_ids
                for b in m["content"]):
            return m
    return None


def describe_blocks(blocks: list[Block]) -> str:
    return "\n".join(f"<{b.tag} {b.attrs}> ({b.where}, after {b.prefix!r}): {b.ids}" for b in blocks) or "<none>"


# ---------------------------------------------------------------------------------------------
# the scenario: seeded playbook, `ace install`, one session in six `claude` runs


def seed_playbook(project: Path) -> tuple[dict[str, str], dict[str, str]]:
    """Add the bullets through the real Playbook (ACE_HOME is set); returns key->id, id->section."""
    from ace_engine.core.project import identify
    from ace_engine.playbook.playbook import Playbook
    from ace_engine.store.sqlite import SQLiteStore

    ids, sections = {}, {}
    store = SQLiteStore()
    try:
        playbook = Playbook(store, identify(str(project)))
        for key, content, section, domains in HELPFUL + PLAIN + RETIRED:
            bullet, created = playbook.add(content, section, domains=domains)
            assert created, f"seed bullet {key!r} was not created"
            ids[key], sections[bullet["id"]] = bullet["id"], section
        for key, *_ in HELPFUL:
            playbook.tag(ids[key], "helpful", explicit=True)
        playbook.tag(ids["pytest"], "helpful", explicit=True)
        for key, *_ in RETIRED:
            playbook.tag(ids[key], "helpful", explicit=True, count=3)
        playbook.remove(ids["archived"], reason="leaks tokens to XSS")
        playbook.quarantine(ids["quarantined"], reason="disables security")
    finally:
        store.close()
    return ids, sections


def session_scripts(project: Path) -> dict[str, list]:
    """The scripted model's steps per run: the first reads three files, one step each."""

    def read(rel: str) -> list[dict]:
        return [{"name": "Read", "input": {"file_path": str(project / rel)}}]

    return {
        "startup": [read(SAME_DOMAIN_FILE), read(DATABASE_FILE), read(REACT_FILE), FINAL["startup"]],
        "thanks": [FINAL["thanks"]],
        "ace_command": [FINAL["ace_command"]],
        "repeat": [FINAL["repeat"]],
        "compact": ["unused: /compact is answered with the compaction summary"],
        "after_compact": [FINAL["after_compact"]],
    }


@pytest.fixture(scope="module")
def scenario(claude_bin, tmp_path_factory) -> Scenario:
    """Seed the playbook, `ace install`, and run the whole session once for all the tests."""
    tmp = tmp_path_factory.mktemp("injection")
    env = ace_env(tmp)
    project = make_git_project(tmp / "project", PROJECT_FILES)
    home = tmp / "home"
    home.mkdir()
    with pytest.MonkeyPatch.context() as mp:
        for key in [k for k in os.environ if k.startswith("ACE_") and k != "ACE_TEST_CACHE"]:
            mp.delenv(key)
        for key, value in env.items():
            mp.setenv(key, value)
        ids, sections = seed_playbook(project)
    scn = Scenario(project, home, env, Path(env["ACE_HOME"]), ids, sections)
    installed = ace_json(env, home, "install", "--project", str(project))
    assert {"SessionStart", "UserPromptSubmit", "PreToolUse", "PreCompact"} <= set(installed["events"]), installed

    scripts = session_scripts(project)
    server = ScriptedModelServer().start()
    try:
        for name in RUNS:
            scn.started[name] = time.time()
            resume = scn.session_id if name != "startup" else None
            result = run_claude(claude_bin, project, home, server, PROMPTS[name], resume=resume,
                                script=scripts[name], env=env)
            result.check()
            scn.runs[name] = result
            assert result.session_id == scn.session_id, result.describe()
        scn.server_errors = list(server.errors)
    finally:
        server.stop()
    return scn


# ---------------------------------------------------------------------------------------------
# 1. SessionStart: the digest


def test_startup_request_carries_the_digest_of_the_most_valuable_bullets(scenario):
    first = scenario.mains("startup")[0].body
    digests = request_blocks(first, "ace-playbook")
    assert len(digests) == 1, describe_blocks(request_blocks(first))
    digest = digests[0]
    assert digest.where == "system-message" and digest.prefix == "SessionStart hook additional context: ", \
        describe_blocks(digests)

    shown = digest.ids
    helpful = {scenario.ids[k] for k, *_ in HELPFUL}
    assert scenario.ids["pytest"] in shown, digest.body  # the most valuable bullet of all
    assert len(shown) >= 6, f"the 500-token digest should hold several bullets:\n{digest.body}"
    assert set(shown) <= helpful, f"only the helpful bullets rank into the digest:\n{digest.body}"
    assert not set(shown) & scenario.id_of("archived", "quarantined"), digest.body
    assert len(shown) == len(set(shown))

    # Each line: the full id and the counters, then the lesson; grouped under section titles.
    section_order = [line[3:] for line in digest.body.splitlines() if line.startswith("## ")]
    assert section_order == [t for s, t in TITLES.items() if t in section_order], section_order
    current = None
    for line in digest.body.splitlines()[1:]:
        if line.startswith("## "):
            current = line[3:]
            continue
        m = LINE_RE.match(line)
        assert m, f"malformed digest line: {line!r}"
        assert TITLES[scenario.sections[m.group(1)]] == current, f"{line!r} is under {current!r}"
    pytest_line = next(line for line in digest.lines if scenario.ids["pytest"] in line)
    assert LINE_RE.match(pytest_line).group(2) == "2", pytest_line  # two helpful marks

    # What the model saw is what ace recorded as shown by SessionStart.
    assert set(scenario.shown("SessionStart")) == set(shown)


# ---------------------------------------------------------------------------------------------
# 2. UserPromptSubmit: the prompt's matches, no repeats, nothing for trivial prompts


def test_prompt_injects_the_matching_bullet_and_not_the_unrelated_ones(scenario):
    first = scenario.mains("startup")[0].body
    digest_ids = request_blocks(first, "ace-playbook")[0].ids
    # Precondition: the JWT bullet was not already shown by the digest (it would be excluded).
    assert scenario.ids["jwt"] not in digest_ids

    patterns = request_blocks(first, "ace-patterns")
    assert len(patterns) == 1, describe_blocks(request_blocks(first))
    block = patterns[0]
    assert block.where == "system-message" and block.prefix == "UserPromptSubmit hook additional context: ", \
        describe_blocks(patterns)
    assert block.ids[0] == scenario.ids["jwt"], block.body
    assert not set(block.ids) & scenario.id_of(*UNRELATED_TO_JWT), block.body
    assert not set(block.ids) & scenario.id_of("archived", "quarantined"), block.body
    assert not set(block.ids) & set(digest_ids), "a bullet of the digest was repeated"
    for line in block.lines:
        assert LINE_RE.match(line), line
    jwt_line = block.lines[0]
    assert jwt_line.endswith("JWT access tokens expire after 15 min: call `refresh_token()` before "
                             "retrying a 401"), jwt_line


@pytest.mark.parametrize("run", ["thanks", "ace_command"])
def test_trivial_prompt_and_ace_command_inject_nothing(scenario, run):
    first = scenario.mains(run)[0].body
    assert first["messages"][-1]["role"] == "user"  # nothing appended to the prompt
    assert PROMPTS[run] in json.dumps(first["messages"][-1])
    added = new_turn_blocks(first)
    assert added == [], describe_blocks(added)
    end = scenario.started[RUNS[RUNS.index(run) + 1]]
    rows = [r for r in scenario.recall()["injections"]
            if r["hook"] == "UserPromptSubmit" and scenario.started[run] <= r["created_at"] < end]
    assert rows == []


def test_ace_command_words_would_have_matched(scenario):
    """Control for the test above: the same words, searched, do find the docker bullet."""
    found = ace_json(scenario.env, scenario.home, "search", ACE_COMMAND_QUERY,
                     "--project", str(scenario.project))
    assert scenario.ids["docker"] in [p["id"] for p in found["similar_patterns"]], found


def test_same_prompt_again_does_not_repeat_the_bullet(scenario):
    first = scenario.mains("repeat")[0].body
    added = new_turn_blocks(first)
    assert scenario.ids["jwt"] not in {i for b in added for i in b.ids}, describe_blocks(added)
    # The bullet is still in the context, from the first turn (that is why it is not repeated).
    assert any(scenario.ids["jwt"] in b.ids for b in request_blocks(first, "ace-patterns"))
    rows = [r for r in scenario.recall()["injections"] if r["hook"] == "UserPromptSubmit"
            and scenario.started["repeat"] <= r["created_at"] < scenario.started["compact"]]
    assert scenario.ids["jwt"] not in {r["bullet_id"] for r in rows}, rows


# ---------------------------------------------------------------------------------------------
# 3. PreToolUse: a file of another domain brings that domain's bullets


def _after_read(scenario: Scenario, rel: str) -> list[Block]:
    """The blocks beside the result of the Read of `rel`, in the request that carried it."""
    for request in scenario.mains("startup"):
        message = tool_result_message(request.body, scenario.project / rel)
        if message is not None:
            return message_blocks(message)
    raise AssertionError(f"no request carried the Read of {rel}:\n{scenario.runs['startup'].describe()}")


def _path_domain(scenario: Scenario, rel: str) -> str:
    """For failure messages: the domain ace-engine matches `rel` to, among the playbook's."""
    from ace_engine.playbook.domains import match_path

    domains = sorted({d for *_, ds in HELPFUL + PLAIN + RETIRED for d in ds})
    return f"match_path({rel!r}, <playbook domains>) = {match_path(rel, domains)}"


def test_reading_a_file_of_the_current_domain_injects_nothing(scenario):
    blocks = _after_read(scenario, SAME_DOMAIN_FILE)
    assert blocks == [], describe_blocks(blocks)


def test_reading_a_migration_file_shifts_to_the_database_domain(scenario):
    blocks = _after_read(scenario, DATABASE_FILE)
    assert [b.tag for b in blocks] == ["ace-patterns-domain-shift"], (
        f"no domain-shift block beside the Read of {DATABASE_FILE} (the prompt's domain is "
        f"auth-jwt); found: {describe_blocks(blocks)}; {_path_domain(scenario, DATABASE_FILE)}")
    block = blocks[0]
    assert block.attrs == 'domain="database"', block.attrs
    assert block.where == "tool-result-reminder" and block.prefix == "PreToolUse:Read hook additional context: "
    assert scenario.ids["alembic"] in block.ids, block.body
    for line in block.lines:
        assert LINE_RE.match(line), line


def test_reading_a_react_component_shifts_to_the_frontend_domain(scenario):
    blocks = _after_read(scenario, REACT_FILE)
    assert [b.tag for b in blocks] == ["ace-patterns-domain-shift"], describe_blocks(blocks)
    block = blocks[0]
    assert block.attrs == 'domain="frontend-react"', block.attrs
    assert block.where == "tool-result-reminder" and block.prefix == "PreToolUse:Read hook additional context: "
    assert block.ids == [scenario.ids["react-form"]], block.body
    assert LINE_RE.match(block.lines[0]), block.lines[0]


# ---------------------------------------------------------------------------------------------
# 4. PreCompact pins, SessionStart(compact) recalls


def test_compaction_recalls_the_bullets_shown_before(scenario):
    before_compact = [r for run in RUNS[: RUNS.index("compact")] for r in scenario.mains(run)]
    shown_before = {i for r in before_compact for b in request_blocks(r.body) for i in b.ids}
    assert not any(request_blocks(r.body, "ace-patterns-recalled") for r in before_compact)

    first = scenario.mains("after_compact")[0].body
    # Compaction removed the earlier blocks from the context: that is what the recall is for.
    assert request_blocks(first, "ace-patterns") == [], describe_blocks(request_blocks(first))
    recalled = request_blocks(first, "ace-patterns-recalled")
    assert len(recalled) == 1, describe_blocks(request_blocks(first))
    block = recalled[0]
    assert block.where == "system-message" and block.prefix == "SessionStart hook additional context: "
    for line in block.lines:
        assert LINE_RE.match(line), line
    recalled_ids = set(block.ids)
    assert recalled_ids <= shown_before, recalled_ids - shown_before
    # The bullets the prompt and the files brought in are the ones most worth recalling.
    assert scenario.id_of("jwt", "react-form") <= recalled_ids, (
        f"recalled {len(recalled_ids)} of the {len(shown_before)} bullets shown before; missing "
        f"{scenario.id_of('jwt', 'react-form') - recalled_ids}:\n{block.body}")
    assert not recalled_ids & scenario.id_of("docker", "archived", "quarantined")

    # Pins: every bullet shown before the compaction, recorded by PreCompact.
    recall = scenario.recall()
    assert {p["bullet_id"] for p in recall["pins"]} == set(
        r["bullet_id"] for r in recall["injections"] if r["created_at"] < scenario.started["compact"])
    assert set(scenario.shown("SessionStart:compact")) == recalled_ids


def test_prompt_after_compaction_does_not_repeat_recalled_bullets(scenario):
    first = scenario.mains("after_compact")[0].body
    recalled = set(request_blocks(first, "ace-patterns-recalled")[0].ids)
    added = new_turn_blocks(first)
    repeated = {i for b in added if b.tag == "ace-patterns" for i in b.ids} & recalled
    assert not repeated, describe_blocks(added)


# ---------------------------------------------------------------------------------------------
# 5. clean runs, and what ace recorded matches what the model saw


def test_runs_are_clean_and_answers_unaffected(scenario):
    for name, result in scenario.runs.items():
        assert_clean_run(result, FINAL[name])
    assert scenario.server_errors == []
    assert ace_log_errors(scenario.ace_home) == []
    assert [r.step for r in scenario.mains("startup")] == [0, 1, 2, 3]


def test_recorded_injections_match_what_the_model_received(scenario):
    recall = scenario.recall()
    assert recall["session_id"] == scenario.session_id
    hooks = {row["hook"] for row in recall["injections"]}
    assert hooks == {"SessionStart", "UserPromptSubmit", "PreToolUse", "SessionStart:compact"}, hooks

    received: dict[str, set[str]] = {}
    tag_hook = {"ace-playbook": "SessionStart", "ace-patterns": "UserPromptSubmit",
                "ace-patterns-domain-shift": "PreToolUse", "ace-patterns-recalled": "SessionStart:compact"}
    for result in scenario.runs.values():
        for request in result.server_requests:
            if isinstance(request.body, dict):
                for block in request_blocks(request.body):
                    received.setdefault(tag_hook[block.tag], set()).update(block.ids)
    recorded: dict[str, set[str]] = {}
    for row in recall["injections"]:
        recorded.setdefault(row["hook"], set()).add(row["bullet_id"])
    assert recorded == received, json.dumps(
        {h: sorted(v) for h, v in recorded.items()}, indent=1) + "\nvs received\n" + json.dumps(
        {h: sorted(v) for h, v in received.items()}, indent=1)
    never = scenario.id_of("archived", "quarantined", "docker")
    assert not never & set().union(*recorded.values())


# ---------------------------------------------------------------------------------------------
# 6. configuration reaches the hooks


def test_prompt_injection_honours_the_retrieval_threshold(scenario, claude_bin, model_server):
    """`retrieval.threshold` is "the minimum score of a bullet to be injected": with 0.95 nothing
    the JWT prompt matches (scores ≈ 0.4) may be injected — as `ace search` already agrees."""
    env = dict(scenario.env, ACE_RETRIEVAL_THRESHOLD="0.95")
    found = ace_json(env, scenario.home, "search", JWT_PROMPT, "--project", str(scenario.project))
    assert found["threshold"] == 0.95 and found["similar_patterns"] == [], found

    result = run_claude(claude_bin, scenario.project, scenario.home, model_server, JWT_PROMPT,
                        script=["Looked at it."], env=env)
    assert_clean_run(result, "Looked at it.")
    first = [r for r in result.server_requests if r.kind == MAIN][0].body
    assert request_blocks(first, "ace-playbook"), "injection is on: the digest is still there"
    patterns = request_blocks(first, "ace-patterns")
    assert patterns == [], f"the hook ignored ACE_RETRIEVAL_THRESHOLD=0.95:\n{describe_blocks(patterns)}"
