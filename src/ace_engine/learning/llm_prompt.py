"""The LLM reflector's prompt: a trajectory rendered into its versioned text.

The fixed texts — system prompt, reply schema, closing line, fences, step statuses — and
`PROMPT_VERSION`, which names them, live in `llm_prompt_text.py` (re-exported here); the
step-line format is code, and the rendering tests pin it.

`render(trajectory, bullets, hints)` gives the user prompt and the step numbers it shows — the
only ids a lesson may cite as evidence. Everything rendered is untrusted data: redacted, paths
made relative, fenced in tags the data cannot close, capped. When the steps don't all fit,
failures, the steps right after them, checks, the steps the offline candidates cite and the
last steps are kept first; reads go first. An edit is shown by its change (the changed lines of
its hunks), never as its first line twice.

Cost: string work linear in the steps, plus difflib on each edit's text (capped at
`MAX_EDIT_SOURCE_CHARS` per side); no I/O.
"""

from __future__ import annotations

import difflib
import os
import re
from collections.abc import Collection, Mapping
from typing import TYPE_CHECKING, Any, NamedTuple, cast

from ..capture.tools import edit_pairs
from ..observe import commands
from ..redact.redactor import redact
from .llm_prompt_text import (
    BASES,
    CLOSING,
    MAX_LESSONS,
    PROMPT_VERSION,
    RECURRENCES,
    SCHEMA,
    SYSTEM_PROMPT,
    fingerprint,
)
from .llm_prompt_text import FENCES as _FENCES
from .llm_prompt_text import NOT_RUN as _NOT_RUN
from .llm_prompt_text import TURN_HEADER as _TURN_HEADER

if TYPE_CHECKING:
    from ..core._types import Bullet, Candidate, Trajectory, TrajectoryStep

MAX_PROMPT_CHARS = 40_000     # the whole user prompt of one call, ≈ 10k tokens: a task of several turns
MAX_TASK_CHARS = 3_000
MAX_TURN_PROMPT_CHARS = 1_200  # the user's words at the start of each later turn of a task
MAX_OUTPUT_CHARS = 1_500
MAX_STEP_CHARS = 400          # one step line (a failure or an edit with its change may use twice this,
                              # a failure another MAX_FAILURE_OUTPUT_CHARS for its output)
MAX_BULLETS_SHOWN = 20
MAX_BULLET_CHARS = 400
MAX_HINTS = 12
MAX_HINT_CHARS = 500
MAX_EDIT_SOURCE_CHARS = 4_000  # of each side of an edit, before diffing
MAX_FAILURE_OUTPUT_CHARS = 600  # the telling lines of a failed step's output
MAX_OK_OUTPUT_CHARS = 300     # of a passing command's output: only lines that complain or say where it serves
AFTER_FAILURE = 3             # steps kept after each failure: usually the fix and the re-run

# Lines of an output that say what went wrong (across ecosystems: tracebacks, `** (Error)`, FAIL, panics…).
_TELLING = re.compile(r"error|exception|fail|panic|traceback|\*\* \(|fatal|denied|not found|cannot|can't|"
                      r"undefined|missing|required|requires|expected|invalid|no such|unknown|refused|violat",
                      re.IGNORECASE)
# Lines of a passing command's output worth showing: a complaint it printed and still exited 0 with
# (a tool refusing a path, a warning), or where something now serves (a dev server's address).
_OK_TELLING = re.compile(r"\b(?:error|fail(?:ed|ure)?|refused|denied|not found|cannot|can't|must be|invalid|"
                         r"unknown|warn(?:ing)?|deprecated)\b|https?://(?:localhost|127\.0\.0\.1|0\.0\.0\.0)|"
                         r"\blistening on\b|\bserving (?:at|on)\b|\brunning (?:at|on)\b", re.IGNORECASE)
_ALL_CLEAR = re.compile(r"\b(?:0|no) (?:errors?|failures?|failed|warnings?|issues?)\b", re.IGNORECASE)

__all__ = ["BASES", "CLOSING", "MAX_LESSONS", "PROMPT_VERSION", "RECURRENCES", "SCHEMA", "SYSTEM_PROMPT", "fingerprint",
           "Rendered", "data", "change_text", "failure_excerpt", "step_line", "select_steps", "essential_chars",
           "split", "plan", "render", "build_prompt"]


class Rendered(NamedTuple):
    """A user prompt, the step numbers it shows, and the offline candidates it lists by id."""

    text: str
    steps: frozenset[int]
    hints: dict[str, Candidate]


def data(raw: object, limit: int, root: str | None = None) -> str:
    """Untrusted text for the prompt: redacted, paths made relative, fences neutralized, capped head + tail."""
    text = redact(str(raw or ""))
    if root:
        text = text.replace(root.rstrip("/") + "/", "")
    home = os.path.expanduser("~")
    if home and home != "/":
        text = text.replace(home, "~")
    text = _FENCES.sub(lambda m: f"&lt;{m.group(1)}{m.group(2)}", text)
    if len(text) > limit:
        head = int(limit * 0.6)
        text = text[:head] + " […] " + text[-(limit - head - 5):]
    return text


def change_text(step: TrajectoryStep) -> str:
    """An edit's real change: its removed (-) and added (+) lines, joined by ' | ' ('' if none)."""
    # Edit and MultiEdit only: a Write's whole content is no "change" to show.
    pairs = edit_pairs(step.get("tool"), step.get("written")) if step.get("tool") in ("Edit", "MultiEdit") else []
    if not pairs:
        change: Mapping[str, Any] = step.get("change") or {}
        pairs = [(str(change.get("old") or ""), str(change.get("new") or ""))]
    lines: list[str] = []
    for old, new in pairs[:5]:
        diff = difflib.unified_diff(old[:MAX_EDIT_SOURCE_CHARS].splitlines(), new[:MAX_EDIT_SOURCE_CHARS].splitlines(),
                                    lineterm="", n=0)
        for line in diff:
            if line.startswith(("---", "+++", "@@")) or not line[1:].strip():
                continue
            lines.append(line[0] + " ".join(line[1:].split()))
    return " | ".join(lines)


def failure_excerpt(output: str, limit: int = MAX_FAILURE_OUTPUT_CHARS) -> str:
    """The lines of a failure's output that say what went wrong (each with the line after it, which
    often says what to do), joined by ' | ' within `limit`; the tail when no line stands out."""
    lines = [" ".join(line.split()) for line in str(output or "").splitlines()]
    lines = [line for line in lines if line]
    picked: list[str] = []
    for i, line in enumerate(lines):
        if _TELLING.search(line):
            picked += [x for x in lines[i:i + 2] if x not in picked]
        if sum(len(x) + 3 for x in picked) >= limit:
            break
    text = " | ".join(picked or lines[-4:])
    return text if len(text) <= limit else text[:limit - 1] + "…"


def ok_excerpt(output: str, limit: int = MAX_OK_OUTPUT_CHARS) -> str:
    """The lines of a passing command's output that complain or say where it serves (`_OK_TELLING`),
    joined by ' | ' within `limit`; '' when none does — a clean run shows no output."""
    picked = [" ".join(line.split()) for line in str(output or "").splitlines()
              if _OK_TELLING.search(line) and not _ALL_CLEAR.search(line)]
    text = " | ".join(dict.fromkeys(x for x in picked if x))
    return text if len(text) <= limit else text[:limit - 1] + "…"


def step_line(step: TrajectoryStep, root: str | None) -> str:
    """`[n] Tool kind ok|FAILED|…: action → result (facts)`, within MAX_STEP_CHARS (twice for a failure or an edit)."""
    facts: Mapping[str, Any] = step  # the builder's optional facts (`failure`, `output`) are read by name
    not_run = _NOT_RUN.get(str(facts.get("failure") or ""))
    status = "ok" if step.get("success") else (not_run or "FAILED")
    kind = step.get("kind") or "other"
    change = change_text(step) if kind == "edit" and step.get("tool") != "Write" else ""
    limit = MAX_STEP_CHARS * (2 if not step.get("success") or change else 1)
    action = step.get("action") or step.get("tool")
    if change and step.get("files"):
        action = f"edit {step['files'][0]}"  # the first line twice says nothing; the change below does
    text = data(action, limit // 2, root)
    result = data(step.get("result"), limit // 2, root)
    extra = []
    if change:
        extra.append(f"change: {data(change, limit // 2, root)}")
    if status == "FAILED" and facts.get("output"):
        excerpt = failure_excerpt(str(facts["output"]))
        if excerpt and excerpt not in text + result:
            extra.append(f"output: {data(excerpt, MAX_FAILURE_OUTPUT_CHARS, root)}")
    elif status == "ok" and kind != "readonly" and facts.get("output"):
        # A read-only probe's output is what it looked for (a grep's hits say "error" by design).
        excerpt = ok_excerpt(str(facts["output"]))
        if excerpt and excerpt not in text + result:
            extra.append(f"output: {data(excerpt, MAX_OK_OUTPUT_CHARS, root)}")
    error, duration = step.get("error"), step.get("duration_ms")
    if error and error not in (step.get("result") or ""):
        extra.append(f"error: {data(error, 200, root)}")
    if step.get("exit_code") not in (None, 0):
        extra.append(f"exit {step['exit_code']}")
    if duration and duration >= 30_000:
        extra.append(f"took {duration / 1000:.0f}s")
    tail = f" ({'; '.join(extra)})" if extra else ""
    return f"[{step.get('step')}] {step.get('tool')} {kind} {status}: {text} → {result}{tail}"


def _priorities(steps: list[TrajectoryStep], keep: Collection[int]) -> list[int]:
    n = len(steps)
    priority = [2] * n
    for i, step in enumerate(steps):
        kind = step.get("kind")
        if kind == "edit" or (step.get("command") and kind not in ("readonly", None)):
            priority[i] = 1
        if kind in commands.CHECK_KINDS or i >= n - 3 or step.get("step") in keep:
            priority[i] = 0
        if not step.get("success"):
            for j in range(i, min(n, i + 1 + AFTER_FAILURE)):
                priority[j] = 0
    return priority


def select_steps(steps: list[TrajectoryStep], budget: int, root: str | None = None, keep: Collection[int] = (),
                 headers: Mapping[int, list[str]] | None = None) -> list[str]:
    """Step lines within `budget` characters, in order, with markers where steps were left out.

    `headers` are lines shown before the step at that index (the user's words where a later turn
    of the task starts; index len(steps) after the last step): always kept, counted first.
    Then kept first: failures, the steps right after each failure (the fix and the re-run), check
    runs (test / build / lint …), the steps numbered in `keep` and the last steps; then edits and
    other commands; reads last."""
    headers = headers or {}
    lines = [step_line(s, root) for s in steps]
    priority = _priorities(steps, keep)
    chosen: set[int] = set()
    used = sum(len(h) + 1 for group in headers.values() for h in group)
    for level in (0, 1, 2):
        for i, line in enumerate(lines):
            if priority[i] == level and used + len(line) + 1 <= budget:
                chosen.add(i)
                used += len(line) + 1
    out: list[str] = []
    skipped: list[TrajectoryStep] = []
    for i in range(len(lines) + 1):
        if i in headers:
            if skipped:
                out.append(_omitted(skipped))
                skipped = []
            out.extend(headers[i])
        if i == len(lines):
            break
        if i in chosen:
            if skipped:
                out.append(_omitted(skipped))
                skipped = []
            out.append(lines[i])
        else:
            skipped.append(steps[i])
    if skipped:
        out.append(_omitted(skipped))
    return out


def _turn_headers(trajectory: Trajectory, root: str | None) -> dict[int, list[str]]:
    """The user's words where each later turn of a joined task starts (`observe/tasks.join`), by step index."""
    headers: dict[int, list[str]] = {}
    for k, turn in enumerate(trajectory.get("turns") or [], 1):
        words = " / ".join(str(p) for p in turn.get("prompts") or [] if str(p).strip())
        if k == 1 or not words:
            continue  # the first turn's words are the <task>; a turn without a prompt continues the last
        text = " ".join(data(words, MAX_TURN_PROMPT_CHARS, root).split())
        headers.setdefault(max(0, int(turn.get("first") or 1) - 1), []).append(_TURN_HEADER.format(k=k, text=text))
    return headers


def essential_chars(trajectory: Trajectory) -> int:
    """What a turn needs of a prompt whatever else is left out: its user's words and its first-rank
    step lines (failures with the steps after them, checks, its last steps)."""
    root = (trajectory.get("project") or {}).get("root")
    steps = trajectory.get("trajectory") or []
    words = sum(len(str(p)) for p in trajectory.get("prompts") or [])
    first_rank = [i for i, level in enumerate(_priorities(steps, ())) if level == 0]
    return min(words, MAX_TURN_PROMPT_CHARS) + 20 + sum(len(step_line(steps[i], root)) + 1 for i in first_rank)


# The share of a call's prompt the turns' first-rank lines may fill; the rest is the task, the
# outcome, the hints, the shown bullets and the edits and reads that fit around them.
ESSENTIAL_SHARE = 0.7


def split(trajectory: Trajectory) -> list[Trajectory]:
    """A turn whose first-rank lines alone would not fit one call (hours of autonomous work after one
    prompt), cut into consecutive windows of its steps that each fit — the steps keep their
    numbers, each window the turn's task; any other turn as it is, `[trajectory]`."""
    budget = int(MAX_PROMPT_CHARS * ESSENTIAL_SHARE)
    if essential_chars(trajectory) <= budget:
        return [trajectory]
    root = (trajectory.get("project") or {}).get("root")
    steps = trajectory.get("trajectory") or []
    words = min(sum(len(str(p)) for p in trajectory.get("prompts") or []), MAX_TURN_PROMPT_CHARS) + 20
    windows: list[list[TrajectoryStep]] = [[]]
    used = words
    for step, level in zip(steps, _priorities(steps, ()), strict=True):
        cost = len(step_line(step, root)) + 1 if level == 0 else 0
        if windows[-1] and used + cost > budget:
            windows.append([])
            used = words
        windows[-1].append(step)
        used += cost
    parts = []
    for window in windows:
        part = cast("Trajectory", dict(trajectory))
        part["trajectory"] = window
        parts.append(part)
    return parts


def plan(trajectories: list[Trajectory]) -> list[list[int]]:
    """Consecutive turns grouped into as few calls as their evidence needs: a group takes the next
    turn while the first-rank lines of all its turns fit in ESSENTIAL_SHARE of MAX_PROMPT_CHARS
    (select, don't truncate: what a call can't show goes to the next call, not away). Turns of
    different agents (a subagent's) are never in one group. Returns lists of indexes, in order."""
    budget = int(MAX_PROMPT_CHARS * ESSENTIAL_SHARE)
    groups: list[list[int]] = []
    used = 0
    for i, traj in enumerate(trajectories):
        need = essential_chars(traj)
        same_agent = bool(groups) and (trajectories[groups[-1][-1]].get("agent_id") or "") == (
            traj.get("agent_id") or "") and trajectories[groups[-1][-1]].get("session_id") == traj.get("session_id")
        if same_agent and used + need <= budget:
            groups[-1].append(i)
            used += need
        else:
            groups.append([i])
            used = need
    return groups


def _omitted(steps: list[TrajectoryStep]) -> str:
    tools: dict[str, int] = {}
    for s in steps:
        tools[s.get("tool") or "?"] = tools.get(s.get("tool") or "?", 0) + 1
    detail = ", ".join(f"{count} {tool}" for tool, count in sorted(tools.items(), key=lambda kv: -kv[1]))
    return f"[… {len(steps)} steps left out: {detail} …]"


def _hint_lines(hints: list[Candidate], known: set[int], root: str | None
                ) -> tuple[list[str], dict[str, Candidate]]:
    """The offline candidates as `[hN] (section; kind; confidence; steps …) content`."""
    lines: list[str] = []
    by_id: dict[str, Candidate] = {}
    for cand in hints[:MAX_HINTS]:
        hint_id = f"h{len(by_id) + 1}"
        by_id[hint_id] = cand
        cited = [n for n in cand.get("source_steps") or [] if n in known]
        facts = [str(cand.get("section") or "?"), str(cand.get("kind") or "rule")]
        if isinstance(cand.get("confidence"), (int, float)):
            facts.append(f"confidence {float(cand['confidence']):.2f}")
        facts.append("steps " + (", ".join(map(str, cited)) if cited else "none"))
        line = f"[{hint_id}] ({'; '.join(facts)}) {data(cand.get('content'), MAX_HINT_CHARS, root)}"
        if cand.get("evidence") and cited:  # what the miner compared: the failing and passing runs, what changed
            line += f"\n    rests on: {' '.join(data(cand.get('evidence'), MAX_HINT_CHARS, root).split())}"
        lines.append(line)
    return lines, by_id


def render(trajectory: Trajectory, bullets: list[Bullet], hints: list[Candidate] | None = None) -> Rendered:
    """The user prompt: task, outcome, git, steps (with the user's words where each later turn of a
    joined task starts), offline candidates and shown bullets, within MAX_PROMPT_CHARS."""
    root = (trajectory.get("project") or {}).get("root")
    result = trajectory.get("result") or {}
    outcome = result.get("success")
    success = "unknown" if outcome is None else ("true" if outcome else "false")
    interrupted = ' interrupted="true"' if trajectory.get("interrupted") else ""
    parts = [f"<task>\n{data(trajectory.get('task'), MAX_TASK_CHARS, root)}\n</task>",
             f"<outcome success=\"{success}\"{interrupted}>\n"
             f"summary: {data(result.get('summary'), 600, root)}\n"
             f"files edited: {data(', '.join(trajectory.get('files') or []) or 'none', 600, root)}\n"
             f"agent's final message: {data(result.get('output'), MAX_OUTPUT_CHARS, root)}\n</outcome>"]
    git = trajectory.get("git") or {}
    facts = [f"{k}: {data(git[k], 300, root)}" for k in ("branch", "commits", "files_changed", "insertions",
                                                         "deletions") if git.get(k) not in (None, "", [], 0)]
    if facts:
        parts.append("<git>\n" + "\n".join(facts) + "\n</git>")
    steps = trajectory.get("trajectory") or []
    hint_lines, by_id = _hint_lines(list(hints or []), {s.get("step") for s in steps}, root)
    hints_part = "<offline_candidates>\n" + ("\n".join(hint_lines) or "(none)") + "\n</offline_candidates>"
    cited = set(trajectory.get("cited") or [])
    listed = "\n".join(f"[{b['id']}] ({b.get('section', '?')}; helpful {b.get('helpful', 0)}, harmful "
                       f"{b.get('harmful', 0)}{'; cited by the agent' if b['id'] in cited else ''}) "
                       f"{data(b.get('content'), MAX_BULLET_CHARS)}" for b in bullets) or "(none)"
    bullets_part = f"<bullets_shown>\n{listed}\n</bullets_shown>"
    fixed = sum(len(p) for p in parts) + len(hints_part) + len(bullets_part) + len(CLOSING) + 200
    keep = {n for cand in by_id.values() for n in cand.get("source_steps") or []}
    step_lines = select_steps(steps, max(2_000, MAX_PROMPT_CHARS - fixed), root, keep, _turn_headers(trajectory, root))
    shown = frozenset(int(m.group(1)) for line in step_lines if (m := re.match(r"\[(\d+)\] ", line)))
    agent = trajectory.get("agent_type") or "main agent"
    parts.append(f"<steps count=\"{len(steps)}\" agent=\"{data(agent, 60)}\">\n" + "\n".join(step_lines)
                 + "\n</steps>")
    parts += [hints_part, bullets_part, CLOSING]
    return Rendered("\n\n".join(parts), shown, by_id)


def build_prompt(trajectory: Trajectory, bullets: list[Bullet], hints: list[Candidate] | None = None) -> str:
    """The user prompt's text (see `render`)."""
    return render(trajectory, bullets, hints).text
