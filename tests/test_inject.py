"""Injection through the real hook processes, with a seeded playbook in a real store."""

import json

import pytest

from ace_engine.core.project import identify
from ace_engine.hooks.inject import skip_prompt
from ace_engine.playbook.playbook import Playbook
from ace_engine.store.sqlite import SQLiteStore
from hookutil import check_answer, payload, run_hook

BULLETS = [
    ("JWT access tokens expire after 15 minutes: call refresh_token() before retrying a 401 from /api/login",
     "troubleshooting_and_pitfalls", ["auth-jwt"]),
    ("Run the suite with `python -m pytest -q` from the repo root; plain `pytest` misses the src/ layout",
     "strategies_and_hard_rules", ["python-testing"]),
    ("Alembic migrations: import every model in models/__init__.py before `alembic revision --autogenerate`",
     "troubleshooting_and_pitfalls", ["database"]),
    ("Docker builds need `--platform linux/amd64` on Apple silicon for the CI image to match",
     "strategies_and_hard_rules", ["docker"]),
]


@pytest.fixture
def seeded(ace_home, git_project):
    with SQLiteStore() as store:
        playbook = Playbook(store, identify(str(git_project)))
        ids = {}
        for content, section, domains in BULLETS:
            bullet, _ = playbook.add(content, section, domains=domains)
            ids[domains[0]] = bullet["id"]
        playbook.tag(ids["python-testing"], "helpful", explicit=True)
        archived, _ = playbook.add("Never run the migrations by hand on production databases", "strategies", domains=["database"])
        playbook.remove(archived["id"])
        ids["archived"] = archived["id"]
    return ids


def _context(event, out):
    answer = check_answer(event, out)
    return answer["hookSpecificOutput"]["additionalContext"] if answer else ""


def _injected(session_id):
    with SQLiteStore() as store:
        return store.injected(session_id)


@pytest.mark.parametrize("prompt,skip", [
    ("/compact", True), ("ace status", True), ("thanks!", True), ("ok", True), ("yes", True),
    ("fix the failing login test", False), ("why does the JWT refresh fail?", False),
])
def test_skip_prompt(prompt, skip):
    assert skip_prompt(prompt) is skip


def test_session_start_digest(seeded, git_project):
    code, out, _, _ = run_hook("SessionStart", payload("SessionStart", str(git_project), source="startup"))
    text = _context("SessionStart", out)
    assert code == 0 and text.startswith("<ace-playbook") and text.rstrip().endswith("</ace-playbook>")
    assert seeded["python-testing"] in text and seeded["archived"] not in text
    assert {row["hook"] for row in _injected("sess-1")} == {"SessionStart"}


def test_prompt_injects_matches_once(seeded, git_project):
    cwd = str(git_project)
    prompt = payload("UserPromptSubmit", cwd, prompt="The login returns 401 after the JWT expires, fix it")
    code, out, _, _ = run_hook("UserPromptSubmit", prompt)
    text = _context("UserPromptSubmit", out)
    assert "<ace-patterns" in text and seeded["auth-jwt"] in text
    assert seeded["docker"] not in text
    code, out, _, _ = run_hook("UserPromptSubmit", prompt)
    assert seeded["auth-jwt"] not in _context("UserPromptSubmit", out), "not repeated in the same session"
    code, out, _, _ = run_hook("UserPromptSubmit", payload("UserPromptSubmit", cwd, prompt="thanks"))
    assert (code, out) == (0, "")


def test_domain_shift_then_quiet(seeded, git_project):
    cwd = str(git_project)
    read = payload("PreToolUse", cwd, tool_name="Read", tool_use_id="r1",
                   tool_input={"file_path": f"{cwd}/src/db/migrations/env.py"})
    code, out, _, _ = run_hook("PreToolUse", read)
    text = _context("PreToolUse", out)
    assert '<ace-patterns-domain-shift domain="database"' in text and seeded["database"] in text
    assert seeded["archived"] not in text
    code, out, _, _ = run_hook("PreToolUse", read | {"tool_use_id": "r2"})
    assert (code, out) == (0, ""), "same domain: nothing to say"
    other = payload("PreToolUse", cwd, tool_name="Read", tool_use_id="r3", tool_input={"file_path": f"{cwd}/README"})
    assert run_hook("PreToolUse", other)[1] == ""


def test_compaction_recalls_what_was_shown(seeded, git_project):
    cwd = str(git_project)
    run_hook("SessionStart", payload("SessionStart", cwd, source="startup"))
    run_hook("UserPromptSubmit", payload("UserPromptSubmit", cwd, prompt="login 401 after the JWT expired"))
    shown = {row["bullet_id"] for row in _injected("sess-1")}
    assert seeded["auth-jwt"] in shown
    code, out, _, _ = run_hook("PreCompact", payload("PreCompact", cwd, trigger="auto", custom_instructions=None))
    assert (code, out) == (0, "")
    code, out, _, _ = run_hook("SessionStart", payload("SessionStart", cwd, source="compact"))
    text = _context("SessionStart", out)
    assert text.startswith("<ace-patterns-recalled") and all(bid in text for bid in shown)
    assert {row["bullet_id"] for row in _injected("sess-1") if row["hook"] == "SessionStart:compact"} == shown
    # The recalled block put it back in context: the next prompt doesn't repeat it.
    code, out, _, _ = run_hook("UserPromptSubmit", payload("UserPromptSubmit", cwd, prompt="login 401 after the JWT expired"))
    assert seeded["auth-jwt"] not in _context("UserPromptSubmit", out)


def test_injection_is_capped_and_empty_playbook_injects_nothing(ace_home, git_project):
    cwd = str(git_project)
    code, out, _, _ = run_hook("SessionStart", payload("SessionStart", cwd, source="startup"))
    assert (code, out) == (0, "")
    with SQLiteStore() as store:
        playbook = Playbook(store, identify(cwd))
        with playbook:
            for n in range(300):
                playbook.add(f"Lesson {n}: the login endpoint needs header X-Trace-{n} " + "detail " * 60, "apis")
    for event, data in [
        ("SessionStart", payload("SessionStart", cwd, session_id="s2", source="startup")),
        ("UserPromptSubmit", payload("UserPromptSubmit", cwd, session_id="s2", prompt="which header does the login endpoint need")),
    ]:
        code, out, _, _ = run_hook(event, data)
        text = _context(event, out)
        assert 0 < len(text) <= 9000
        assert len(json.loads(out)["hookSpecificOutput"]["additionalContext"]) <= 10_000


def test_explicit_feedback_applies_even_with_injection_off(seeded, git_project):
    data = payload("UserPromptSubmit", str(git_project), prompt=f"ace: {seeded['docker']} was wrong, ignore it")
    code, out, _, _ = run_hook("UserPromptSubmit", data, env={"ACE_INJECT_ENABLED": "false"})
    assert (code, out) == (0, "")
    with SQLiteStore() as store:
        bullet = store.get_bullet(seeded["docker"])
    assert bullet["harmful_explicit"] == 1 and bullet["confidence"] < 0.5


def test_the_policy_runs_without_a_hook(seeded, git_project):
    """The injection steps take an explicit context, so the CLI and tests call them directly."""
    from ace_engine.core import config
    from ace_engine.hooks import inject

    project = identify(str(git_project))
    with SQLiteStore() as store:
        ctx = inject.Context(store, config.load(project.root), project, "sess-cli", 1000.0)
        text = inject.safely(ctx, "prompt injection", inject.prompt, "why does the JWT refresh fail after a 401?")
        assert seeded["auth-jwt"] in text and text.startswith("<ace-patterns")
        assert inject.prompt(ctx, "why does the JWT refresh fail after a 401?") is None, "shown once per session"
        shift = inject.domain_shift(ctx, "Read", {"file_path": str(git_project / "docker" / "Dockerfile")})
        assert shift is None or "ace-patterns-domain-shift" in shift
        assert inject.domain_shift(ctx, "Bash", {"command": "cat Dockerfile"}) is None, "not a file tool"
        assert inject.pin_for_compaction(ctx) >= 1
        assert inject.safely(None, "no store", inject.prompt, "anything at all here") is None
        shown = {row["bullet_id"] for row in store.injected("sess-cli")}
        assert seeded["auth-jwt"] in shown
