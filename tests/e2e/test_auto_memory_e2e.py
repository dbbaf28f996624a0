"""Claude Code's auto memory beside ace-engine, end to end with the real CLI and the scripted model:
after `ace install` Claude Code still has its auto memory (its system prompt names the memory
directory, as it does only when auto memory is on), the note the agent saves there becomes an
ace-engine lesson once, and the next session's digest does not repeat it (MEMORY.md, which Claude
Code loads itself, links the note)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from .claude_cli import project_slug, run_claude
from .model_server import MAIN, message_text, system_text
from .test_capture_e2e import ace_env, ace_json, ace_log_errors, assert_clean_run, run_ace

pytestmark = pytest.mark.e2e

NOTE = """---
name: feedback_greeting_tests
description: tests/test_app.py pins the greeting text, so change `greet()` and its test together
metadata:
  type: feedback
---

**How to apply:** run `python -m pytest -q tests/test_app.py` after any edit of `greet()` in app.py.
"""
INDEX = "- [Greeting tests](feedback_greeting_tests.md) — change greet() and its test together\n"
LESSON = "tests/test_app.py pins the greeting text"


def _memory_prompt(requests) -> str:
    return "\n".join(system_text(r.body) for r in requests if r.kind == MAIN and isinstance(r.body, dict))


@pytest.mark.parametrize("setting", [None, True])
def test_auto_memory_stays_on_and_its_note_is_learned_once(claude_bin, model_server, claude_home, project_dir,
                                                          tmp_path, setting):
    env = ace_env(tmp_path)
    user_settings = claude_home / ".claude" / "settings.json"
    user_settings.parent.mkdir(parents=True, exist_ok=True)
    before = {} if setting is None else {"autoMemoryEnabled": setting}
    user_settings.write_text(json.dumps(before))
    ace_json(env, claude_home, "install", "--project", str(project_dir))
    ace_json(env, claude_home, "install", "--user")
    assert "autoMemoryEnabled" not in json.loads((project_dir / ".claude" / "settings.json").read_text())
    assert json.loads(user_settings.read_text()).get("autoMemoryEnabled") == setting

    memory = claude_home / ".claude" / "projects" / project_slug(project_dir) / "memory"
    script = [
        [{"name": "Write", "input": {"file_path": str(memory / "feedback_greeting_tests.md"), "content": NOTE}}],
        [{"name": "Write", "input": {"file_path": str(memory / "MEMORY.md"), "content": INDEX}}],
        [{"name": "Edit", "input": {"file_path": str(project_dir / "app.py"), "old_string": "return 'hello'",
                                    "new_string": "return 'hi'"}}],
        "Saved the note and changed the greeting.",
    ]
    result = run_claude(claude_bin, project_dir, claude_home, model_server, "change the greeting to hi",
                        script=script, env=env)
    assert_clean_run(result, "Saved the note and changed the greeting.")
    assert f"memory at `{memory}/`" in _memory_prompt(result.server_requests), "auto memory is on after install"
    assert (memory / "MEMORY.md").read_text() == INDEX

    run_ace(env, claude_home, "learn", "--project", str(project_dir), "--json")
    lessons = [b for b in ace_json(env, claude_home, "patterns", "--project", str(project_dir))["patterns"]
               if b["content"].startswith(LESSON)]
    assert len(lessons) == 1, lessons
    assert ace_log_errors(Path(env["ACE_HOME"])) == []

    again = run_claude(claude_bin, project_dir, claude_home, model_server, "what does greet return?",
                       script=["It returns 'hi'."], env=env)
    assert_clean_run(again, "It returns 'hi'.")
    first = next(r for r in again.server_requests if r.kind == MAIN)
    seen = "\n".join(message_text(m) for m in first.body.get("messages") or [])
    assert "Greeting tests" in seen + system_text(first.body), "Claude Code loaded MEMORY.md itself"
    digest = re.findall(r"<ace-playbook.*?</ace-playbook>", seen, re.S)
    assert not [d for d in digest if LESSON in d], "the SessionStart digest does not repeat what MEMORY.md gives"
    assert LESSON in seen, "the lesson is live: the prompt-time search still finds it"
