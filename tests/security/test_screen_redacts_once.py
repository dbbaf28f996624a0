"""Issue 26, "throughput per core": the team server's screen (`server.policy.screen`) redacts a pushed
lesson once. `safety.concerns` used to redact it again for its secret rule; the screen now tells it
when that second redaction cannot change anything (the first one changed nothing, nor did the
cleaning: `redaction_fixed`), and the rule's redaction is skipped. That must never change a verdict:
every string of the security and playbook tests (the policy's corpus), and those strings with
secrets and private spans around them, get the same status and concerns as the full policy gives.
"""

from __future__ import annotations

from ace_engine.playbook import safety
from ace_engine.redact.redactor import redact
from ace_engine.server import policy

from .test_policy_linear import EDGES, _strings

SECRETS = ["sk-abcDEF1234567890abcdef1234567890", "ghp_" + "a1B2" * 9, "password: hunter2hunter2",
           "AKIAIOSFODNN7EXAMPLE", "<private>my notes</private>"]
TEXTS = sorted({*_strings(), *EDGES, *(f"{s} then {t}" for t in sorted(_strings())[:200] for s in SECRETS)})


def _add(content: str) -> dict:
    return {"key": "k", "op": "ADD", "lesson_id": "ctx-0123456789abcdefghjk", "section": "troubleshooting_and_pitfalls",
            "content": content}


def test_the_screen_gives_the_full_policy_verdict():
    fixed = 0
    for text in TEXTS:
        verdict = policy.screen(_add(text))
        if verdict.status == "rejected":
            continue  # empty or too long once cleaned: no policy ran either way
        stored = verdict.body["content"]
        full = safety.concerns(stored)  # the policy with its own redaction
        assert verdict.body.get("concerns", []) == full, text
        assert verdict.status == ("quarantined" if full else "active"), text
        fixed += policy._content(text)[1]
    assert fixed > 300  # the skip is taken for most texts: the test is not vacuous


def test_a_fixed_point_is_one():
    for text in TEXTS:
        try:
            stored, fixed = policy._content(text)
        except Exception:  # noqa: BLE001 - a rejected content (empty, too long) has no fixed point to check
            continue
        if fixed:
            assert redact(stored) == stored, text
            assert not safety.contains_secret(stored), text
