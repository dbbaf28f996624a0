"""A session's outcomes, read from what was captured: did the agent do better with the lessons?

Contract: `session_outcomes(tool_events, messages, lessons, started_at, now, root)` is pure: the
session's captured tool events and messages (the store's `session_events`), the lessons of its
project (`Lesson`: id, when it was written, the texts that say what failure it covers), and the
time, in; a dict of outcomes out (`OUTCOMES` names them, each lower-is-better):

- `repeat_failures`: failed commands whose error signature (observe/signatures.py) a lesson written
  before the session started already covers — the same mistake again. `recurred` is whether there
  was any (a yes/no per session, compared as a rate), `covered_ids` which lessons' failures recurred.
- `calls_to_pass` / `seconds_to_pass`: tool calls and wall time from the first prompt to the first
  passing check (a test, build, lint, type check or format run that succeeded); None when no check
  passed (`passed` False): those sessions are counted in `passed`, not averaged.
- `failed_per_task`: failed commands per prompt the user gave (a prompt is a task; at least one).
- `corrections`: prompts that correct the agent ("no, use …", "don't …": observe/corrections.py);
  `interruptions`: tool calls the user interrupted.
- `complete`: False while the session may still be running (activity in the last `RUNNING_S`
  seconds before `now` and no end): the report leaves those out.

`tokens` is not computed here (it needs the transcript file: `tokens.transcript_tokens`, which
`report.gather` adds); it is None in what this returns.

Which lessons count is the same for both arms (written before the session started, whatever
their status now), so a holdout session is measured against the lessons it would have been shown.
A lesson covers a signature when the signature's words (at least `MIN_WORDS`) appear in order in
the lesson's text or in one of its situations (retrieval/situations.py: the error it was learned on).

Cost: one trajectory step per tool event (observe/trajectory.py), one signature match per failure
against each lesson's texts: linear in events × lessons; report time only, never a hook.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any, TypedDict

from ..observe import commands, corrections, trajectory

RUNNING_S = 30 * 60
MIN_WORDS = 3
_WORD = re.compile(r"\w+")
_INTERRUPTED_PROMPT = re.compile(r"^\s*\[Request interrupted", re.IGNORECASE)

# (outcome, what it is, kind): kind "rate" is a yes/no per session, "mean" a number per session.
OUTCOMES: tuple[tuple[str, str, str], ...] = (
    ("recurred", "sessions where a failure a lesson covers came back", "rate"),
    ("repeat_failures", "failures a lesson already covered, per session", "mean"),
    ("calls_to_pass", "tool calls from the first prompt to the first passing check", "mean"),
    ("seconds_to_pass", "seconds from the first prompt to the first passing check", "mean"),
    ("failed_per_task", "failed commands per task", "mean"),
    ("corrections", "corrections by the user, per session", "mean"),
    ("interruptions", "tool calls interrupted by the user, per session", "mean"),
    ("tokens", "model tokens per session, where the transcript records them", "mean"),
)


class Lesson(TypedDict):
    id: str
    created_at: float
    texts: list[str]  # the lesson's content and its situations' texts


def words(text: str) -> str:
    """Lower-case words joined by single spaces, padded so that `in` matches whole words."""
    return " " + " ".join(_WORD.findall(text.lower())) + " "


def covering(signature: str, lessons: Sequence[Lesson], before: float) -> list[str]:
    """Ids of the lessons written before `before` whose texts hold the signature's words in order."""
    key = words(signature)
    if len(key.split()) < MIN_WORDS:
        return []
    return [lesson["id"] for lesson in lessons if lesson["created_at"] < before
            and any(key in words(text) for text in lesson["texts"])]


def session_outcomes(tool_events: Sequence[Mapping[str, Any]], messages: Sequence[Mapping[str, Any]],
                     lessons: Sequence[Lesson], started_at: float, now: float,
                     root: str | None = None, ended: bool = False) -> dict[str, Any]:
    """The outcomes of one session (see the module's docstring); main agent and subagents alike."""
    prompts = [m for m in messages if m.get("role") == "user"]
    steps = [trajectory.step_from_event(e, i, root) for i, e in enumerate(tool_events, 1)]
    first_prompt = min((float(m["created_at"]) for m in prompts), default=None)
    repeat, covered_ids, failed = 0, [], 0
    for step in steps:
        if step["success"] or step.get("interrupted"):
            continue
        if step["tool"] == "Bash" and step.get("failure") == "failed":
            failed += 1
        error = step.get("error")
        ids = covering(error, lessons, started_at) if error else []
        if ids:
            repeat += 1
            covered_ids += [i for i in ids if i not in covered_ids]
    calls = seconds = None
    if first_prompt is not None:
        after = [s for s in steps if float(s.get("at") or 0.0) >= first_prompt]
        for count, step in enumerate(after, 1):
            if step["success"] and step.get("kind") in commands.CHECK_KINDS:
                calls, seconds = count, round(float(step.get("at") or first_prompt) - first_prompt, 3)
                break
    last = max([float(e["created_at"]) for e in tool_events] + [float(m["created_at"]) for m in messages]
               + [started_at])
    tasks = [m for m in prompts if not _INTERRUPTED_PROMPT.match(str(m.get("text") or ""))]
    return {
        "recurred": repeat > 0,
        "repeat_failures": repeat,
        "covered_ids": covered_ids,
        "passed": calls is not None,
        "calls_to_pass": calls,
        "seconds_to_pass": seconds,
        "failed_per_task": round(failed / max(1, len(tasks)), 4),
        "corrections": sum(1 for m in tasks if corrections.correction(str(m.get("text") or ""))),
        "interruptions": sum(1 for e in tool_events if e.get("is_interrupt"))
        + sum(1 for m in prompts if _INTERRUPTED_PROMPT.match(str(m.get("text") or ""))),
        "tool_calls": len(steps),
        "tokens": None,
        "complete": ended or now - last >= RUNNING_S,
    }
