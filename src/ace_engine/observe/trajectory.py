"""Trajectories: what the agent did for one task, in the ACE plugin's learn-payload shape.

    {task, trajectory: [{step, tool, action, result, …}], result: {success, output, summary},
     playbook_used: [bullet ids], git: {…}, session_id, agent_type, …}

Built from the captured tool events (ground truth) — or a transcript, or a payload — with one
short action and result line per step plus the structured facts the reflector mines: the
command, its kind, the files, the error signature, the exit code, the duration. A job's events
are split into turns at the user's prompts, so an interrupted turn is learned on its own and
never mixed into the next one.

Why one module (~410 lines): the three sources (events, a transcript, a payload) must yield the
same payload shape, and they share the step builder, the outcome rule and the turn splitting
that define it.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any, cast

from ..capture.tools import AGENT_TOOLS, EDIT_TOOLS, READ_TOOLS
from . import commands, corrections
from .commands import covers

if TYPE_CHECKING:
    from ..core._types import Trajectory, TrajectoryResult, TrajectoryStep

_NEGATIVE = re.compile(
    r"\b(?:couldn't|could not|can't|cannot|unable to|failed to|still fail\w*|not able to|doesn't work|"
    r"does not work|didn't work|did not work|I was unable|gave up|no luck|blocked by)\b", re.IGNORECASE)
_ERRORISH = re.compile(r"\b(?:error|failed|failure|traceback|exception|exit code [1-9]\d*|not found|denied)\b",
                       re.IGNORECASE)
_CITED = re.compile(r"\bctx-[0-9a-hjkmnp-tv-z]{4,20}\b")
# Failures that say nothing about the project: Claude Code cancelled the call (a parallel call
# failed, the user pressed Esc) or the user refused it. Neither is a failed command.
_CANCELLED = re.compile(r"Sibling tool call errored|Cancelled: parallel tool call|\[Request interrupted|"
                        r"Request interrupted by user|interrupted \(no result\)", re.IGNORECASE)
# Claude Code's own refusals too: a permission rule ("Permission to use Bash with command X has been denied")
# and auto mode's classifier ("Permission for this action was denied by the Claude Code auto mode classifier").
_REFUSED = re.compile(r"user doesn't want to (?:proceed|take this action)|user (?:rejected|denied|declined)|"
                      r"^(?:Error: )?Permission (?:to use \S+(?: with command [\s\S]{0,300}?)?|for this action) "
                      r"(?:has been|was) denied|"
                      r"requested permissions? .* (?:denied|rejected)|"
                      r"tool use was rejected|was blocked by (?:a |the )?(?:PreToolUse )?hook", re.IGNORECASE)
_TOOL_ERROR = re.compile(r"<tool_use_error>")
OUTPUT_KEPT = 4000  # characters of a failure's output the miners may read (never rendered whole)


def failure_class(text: str, tool: str, interrupted: bool = False) -> str:
    """Why a call failed: cancelled / refused / tool (Claude Code refused an Edit or Read: file not
    read yet, string not found) / failed (the command or check itself failed)."""
    head = text[:600]
    if interrupted or _CANCELLED.search(head):
        return "cancelled"
    if _REFUSED.search(head):
        return "refused"
    if _TOOL_ERROR.search(head) and tool != "Bash":
        return "tool"
    return "failed"


def _load(value: object) -> Any:
    """Stored input/response: JSON text (or text capped mid-JSON) → dict / str."""
    if isinstance(value, (dict, list)) or value is None:
        return value
    text = str(value)
    if text[:1] in "{[":
        try:
            return json.loads(text)
        except ValueError:
            pass
    return text


def _field(data: object, name: str) -> str | None:
    if isinstance(data, dict):
        value = data.get(name)
        return value if isinstance(value, str) else None
    if isinstance(data, str):  # capped JSON: dig the field out by hand
        m = re.search(r'"' + re.escape(name) + r'"\s*:\s*"((?:[^"\\]|\\.)*)"', data)
        if m:
            try:
                return json.loads(f'"{m.group(1)}"')
            except ValueError:
                return m.group(1)
    return None


def relative(path: str | None, root: str | None) -> str | None:
    if not path:
        return None
    if root and path.startswith(root.rstrip("/") + "/"):
        return path[len(root.rstrip("/")) + 1:]
    return path


def _first_line(text: object, limit: int = 80) -> str:
    for line in str(text or "").splitlines():
        if line.strip():
            line = line.strip()
            return line if len(line) <= limit else line[: limit - 1] + "…"
    return ""


def _response_text(response: object) -> str:
    if isinstance(response, dict):
        parts = [str(response[k]) for k in ("stdout", "stderr", "output", "result") if isinstance(response.get(k), str)]
        if parts:
            return "\n".join(parts)
        content = response.get("content")
        if isinstance(content, list):
            return "\n".join(c.get("text", "") for c in content if isinstance(c, dict))
        return json.dumps(response, ensure_ascii=False)[:4000]
    if isinstance(response, list):
        return "\n".join(c.get("text", "") for c in response if isinstance(c, dict))
    return str(response or "")


def step_from_event(event: Mapping[str, Any], number: int, root: str | None) -> TrajectoryStep:
    """One step from a tool event (captured row or transcript pair): action / result lines and facts."""
    tool = event.get("tool_name") or "unknown"
    data = _load(event.get("input"))
    response = _load(event.get("response"))
    success = bool(event.get("success"))
    error_text = event.get("error") or ""
    step: TrajectoryStep = {
        "step": number, "tool": tool, "action": tool, "result": "", "success": success,
        "tool_event_id": event.get("id"), "tool_use_id": event.get("tool_use_id"),
        "kind": "other", "files": [], "command": None, "error": None, "exit_code": event.get("exit_code"),
        "duration_ms": event.get("duration_ms"), "interrupted": bool(event.get("is_interrupt")),
        "at": event.get("created_at"),
    }
    if tool == "Bash":
        command = _field(data, "command") or (data if isinstance(data, str) else "")
        step["command"] = commands.clean(command)[:500]
        step["kind"] = commands.kind(command)
        step["action"] = "$ " + _first_line(step["command"], 160)
        if isinstance(data, dict) and data.get("run_in_background"):
            step["background"] = True  # its exit says nothing about the command's outcome
    elif tool in EDIT_TOOLS:
        path = relative(_field(data, "file_path") or _field(data, "notebook_path"), root)
        step["kind"] = "edit"
        step["files"] = [path] if path else []
        step["written"] = data  # what was written, for the code-pattern detector (never rendered)
        if tool == "Edit":
            old, new = _field(data, "old_string"), _field(data, "new_string")
            step["change"] = {"old": _first_line(old, 120), "new": _first_line(new, 120)}
            step["action"] = f"edit {path}: `{_first_line(old, 50)}` → `{_first_line(new, 50)}`"
        elif tool == "MultiEdit":
            edits = data.get("edits") if isinstance(data, dict) else None
            count = len(edits) if isinstance(edits, list) else 0
            if edits and count:
                first = edits[0] if isinstance(edits[0], dict) else {}
                step["change"] = {"old": _first_line(first.get("old_string"), 120),
                                  "new": _first_line(first.get("new_string"), 120)}
            step["action"] = f"edit {path} ({count} changes)"
        elif tool == "Write":
            content = _field(data, "content") or ""
            step["action"] = f"write {path} ({content.count(chr(10)) + 1 if content else 0} lines)"
        else:
            step["action"] = f"edit notebook {path}"
    elif tool in READ_TOOLS:
        step["kind"] = "read"
        if tool == "Read":
            path = relative(_field(data, "file_path"), root)
            step["files"] = [path] if path else []
            step["action"] = f"read {path}"
        elif tool == "Grep":
            where = relative(_field(data, "path"), root)
            step["action"] = f"grep '{_first_line(_field(data, 'pattern'), 60)}'" + (f" in {where}" if where else "")
        elif tool == "Glob":
            step["action"] = f"glob {_first_line(_field(data, 'pattern'), 80)}"
    elif tool in AGENT_TOOLS:
        step["kind"] = "agent"
        what = _first_line(_field(data, "description"), 80)
        step["action"] = f"subagent {_field(data, 'subagent_type') or ''}: {what}".replace("  ", " ")
    elif tool in ("WebFetch", "WebSearch"):
        step["kind"] = "web"
        target = _first_line(_field(data, "url") or _field(data, "query"), 100)
        step["action"] = f"{'fetch' if tool == 'WebFetch' else 'web search'} {target}"
    else:
        if isinstance(data, dict):
            value = next((v for v in data.values() if isinstance(v, str) and v.strip()), "")
            step["action"] = f"{tool} {_first_line(value, 80)}".strip()

    text = _response_text(response)
    if not success:
        root_text = error_text or text
        step["failure"] = failure_class(root_text, tool, step["interrupted"])
        if step["failure"] == "refused" and step["exit_code"] is not None:
            step["failure"] = "failed"  # it ran (it has an exit code): what it printed is its own text
        step["output"] = root_text[:OUTPUT_KEPT // 4] + "\n" + root_text[-(OUTPUT_KEPT * 3 // 4):] \
            if len(root_text) > OUTPUT_KEPT else root_text
        step["error"] = commands.error_signature(root_text, root) if step["failure"] == "failed" else None
        if step["failure"] == "refused":  # the user's words only where Claude Code wrote the refusal
            said = corrections.typed_refusal(tool, root_text, ran=step["exit_code"] is not None,
                                             denial=event.get("denial"))
            if said:
                step["said"] = said
        step["result"] = "failed: " + (step["error"] or _first_line(root_text, 160) or f"exit code {step['exit_code']}")
        if step["interrupted"]:
            step["result"] = "interrupted"
    elif step["kind"] in commands.CHECK_KINDS or tool == "Bash":
        step["result"] = commands.outcome_line(text) or "ok"
        if tool == "Bash" and text:  # a script may print the error it caught and still exit 0
            step["output"] = text[-OUTPUT_KEPT:]
    elif tool == "Read" and isinstance(response, dict):
        lines = (response.get("file") or {}).get("numLines") if isinstance(response.get("file"), dict) else None
        step["result"] = f"{lines} lines" if lines is not None else "ok"
    elif tool == "Glob" and isinstance(response, dict) and "numFiles" in response:
        step["result"] = f"{response['numFiles']} files"
    elif tool == "Grep" and isinstance(response, dict) and ("numFiles" in response or "numLines" in response):
        step["result"] = f"{response.get('numLines') or response.get('numFiles')} matches"
    elif tool in AGENT_TOOLS:
        step["result"] = _first_line(text, 160) or "ok"
    else:
        step["result"] = "ok"
    return step


def enrich(step: Mapping[str, Any], number: int) -> TrajectoryStep:
    """Fill the structured facts of a payload step that has only {step, tool, action, result}
    (the ACE plugin's shape). Idempotent on steps built here."""
    if "kind" in step and "success" in step and "files" in step:
        return cast("TrajectoryStep", step)
    out = dict(step)
    out.setdefault("step", number)
    tool = str(out.get("tool") or "unknown")
    out["tool"] = tool
    action = str(out.get("action") or "")
    result = str(out.get("result") or "")
    if "success" not in out:
        out["success"] = not (_ERRORISH.search(result[:2000]) and not re.search(r"\b0 (?:failed|errors?)\b", result))
    out["success"] = bool(out["success"])
    out.setdefault("files", [])
    out.setdefault("tool_event_id", None)
    out.setdefault("exit_code", None)
    out.setdefault("duration_ms", None)
    out.setdefault("interrupted", False)
    if tool == "Bash" or action.startswith("$ "):
        command = action[2:] if action.startswith("$ ") else action
        out["command"] = commands.clean(command)[:500]
        out["kind"] = commands.kind(command)
    elif tool in EDIT_TOOLS:
        out["kind"] = "edit"
        if not out["files"]:
            m = re.search(r"([\w./-]+\.\w+)", action)
            out["files"] = [m.group(1)] if m else []
    elif tool in READ_TOOLS:
        out["kind"] = "read"
    else:
        out["kind"] = "other"
    out.setdefault("command", None)
    if not out["success"]:
        out["error"] = out.get("error") or commands.error_signature(result)
    else:
        out.setdefault("error", None)
    return cast("TrajectoryStep", out)  # every key of a step is set above


def outcome(steps: list[TrajectoryStep], final_message: str | None, interrupted: bool = False) -> TrajectoryResult:
    """{success: True/False/None, output, summary}: the last run of each check decides; without
    checks, an interrupted turn, a failing last step or a final message admitting defeat fail."""
    checks: dict[str, TrajectoryStep] = {}
    for step in steps:
        command = step.get("command")
        if command and step.get("kind") in commands.CHECK_KINDS:
            checks[commands.family(command) + ":" + step["kind"]] = step
    failed = sum(1 for s in steps if not s.get("success"))
    message = final_message or ""
    substantial = any(s.get("kind") == "edit" or (s.get("command") and s.get("kind") != "readonly") for s in steps)
    if checks:
        success = all(s["success"] for s in checks.values())
    elif interrupted or any(s.get("interrupted") for s in steps[-1:]):
        success = False
    elif _NEGATIVE.search(message[:2000]):
        success = False
    elif steps and not steps[-1].get("success"):
        success = False
    elif substantial or message:
        success = True
    else:
        success = None
    parts = [f"{len(steps)} steps" + (f" ({failed} failed)" if failed else "")]
    for step in checks.values():
        parts.append(f"{step['kind']} `{commands.key(step['command'] or '')}` "
                     f"{'passed' if step['success'] else 'failed'}"
                     + (f" ({step['result']})" if step.get("result") and step["success"] else ""))
    if interrupted:
        parts.append("interrupted")
    return {"success": success, "output": message[:2000], "summary": "; ".join(parts)}


def cited_ids(texts: Iterable[str | None]) -> list[str]:
    """Bullet ids the agent cited in its own messages ("following ctx-01abc…")."""
    found: list[str] = []
    for text in texts:
        for m in _CITED.findall(text or ""):
            if m not in found:
                found.append(m)
    return found


def split_turns(events: list[Any], messages: list[Any]) -> list[dict[str, Any]]:
    """Split a job's tool events and messages into turns at each user prompt (by time). A prompt
    followed by nothing but another prompt joins it (the user re-asked). Events before the
    first prompt form a continuation turn (its task is looked up by the caller)."""
    turns: list[dict[str, Any]] = []
    current: dict[str, Any] = {"prompts": [], "events": [], "assistant": [], "start": None}

    def flush() -> None:
        if current["prompts"] or current["events"] or current["assistant"]:
            turns.append(dict(current))

    timeline = [(m["created_at"], 0, m["id"], "message", m) for m in messages] + \
               [(e["created_at"], 1, e["id"], "event", e) for e in events]
    timeline.sort(key=lambda t: (t[0], t[1], t[2]))
    for at, _, _, what, item in timeline:
        if what == "message" and item["role"] == "user":
            if current["events"] or current["assistant"]:
                flush()
                current = {"prompts": [], "events": [], "assistant": [], "start": at}
            current["prompts"].append(item)
            if current["start"] is None:
                current["start"] = at
        elif what == "message":
            current["assistant"].append(item)
        else:
            current["events"].append(item)
            if current["start"] is None:
                current["start"] = at
    flush()
    for turn in turns:
        # A turn with no final assistant message that another turn follows was interrupted.
        turn["interrupted"] = not turn["assistant"] and turn is not turns[-1]
    return turns


def build(turn: dict[str, Any], *, root: str | None, session_id: str | None, agent_id: str = "",
          agent_type: str | None = None, task_fallback: str | None = None, source: str = "session",
          agent: str | None = None) -> Trajectory:
    """The trajectory of one turn (see the module docstring). `agent`: the coding agent whose session
    it is (None: Claude Code); only Claude Code writes the refusal that carries the user's words, so
    another agent's tool text that reads like one is never `said` (`corrections.typed_refusal`)."""
    steps = [step_from_event(e, i, root) for i, e in enumerate(turn["events"], 1)]
    if agent not in (None, "", "claude"):
        for step in steps:
            step.pop("said", None)
    prompts = [p["text"] for p in turn["prompts"]]
    task = "\n".join(prompts) if prompts else (task_fallback or "")
    final = turn["assistant"][-1]["text"] if turn["assistant"] else None
    interrupted = bool(turn.get("interrupted"))
    files = list(dict.fromkeys(f for s in steps if s["kind"] == "edit" for f in s["files"]))
    return {
        "task": task,
        "prompts": prompts,
        "continuation": not prompts,
        "trajectory": steps,
        "result": outcome(steps, final, interrupted),
        "playbook_used": [],
        "cited": cited_ids(m["text"] for m in turn["assistant"]),
        "git": {},
        "session_id": session_id,
        "agent_id": agent_id,
        "agent_type": agent_type,
        "files": files,
        "files_read": list(dict.fromkeys(f for s in steps if s["kind"] == "read" for f in s["files"])),
        "interrupted": interrupted,
        "source": source,
        "tool_event_ids": [n for n in (s["tool_event_id"] for s in steps) if n is not None],
        "started_at": turn.get("start"),
    }


def from_payload(payload: dict[str, Any]) -> Trajectory:
    """A plugin learn payload → a trajectory (steps enriched; unknown keys kept)."""
    steps = [enrich(s if isinstance(s, dict) else {"action": str(s)}, i)
             for i, s in enumerate(payload.get("trajectory") or [], 1)]
    result: dict[str, Any] = payload["result"] if isinstance(payload.get("result"), dict) else {}
    traj = cast("Trajectory", dict(payload))  # unknown keys of the payload are kept
    traj["trajectory"] = steps
    traj["task"] = str(payload.get("task") or "")
    traj["prompts"] = [traj["task"]] if traj["task"] else []
    derived = outcome(steps, result.get("output") or result.get("summary"))
    traj["result"] = {"success": result.get("success", derived["success"]),
                      "output": str(result.get("output") or "")[:2000],
                      "summary": str(result.get("summary") or derived["summary"])}
    used = payload.get("playbook_used") or []
    traj["playbook_used"] = [u if isinstance(u, str) else str(u.get("id")) for u in used
                             if isinstance(u, str) or (isinstance(u, dict) and u.get("id"))]
    traj.setdefault("cited", [])
    traj["git"] = payload["git"] if isinstance(payload.get("git"), dict) else {}
    traj["files"] = list(dict.fromkeys(f for s in steps if s["kind"] == "edit" for f in s["files"]))
    traj.setdefault("files_read", [])
    traj.setdefault("agent_id", "")
    traj["source"] = "payload"
    traj.setdefault("tool_event_ids", [])
    traj.setdefault("interrupted", False)
    return traj


def carried(previous: Iterable[TrajectoryStep]) -> list[TrajectoryStep]:
    """The real failures a turn ended on — commands that failed and never passed in it — numbered
    0, -1, … so they sort before the next turn's steps. The next turn may fix them ("update
    wrangler and retry"); the reflector pairs them with its runs but learns nothing from them alone."""
    steps = list(previous)
    last: dict[str, TrajectoryStep] = {}
    for n, step in enumerate(steps):
        command = step.get("command")
        # Got past in this turn (`git push` then `git push --set-upstream …`): learned here already.
        if command and not step.get("success") and step.get("failure", "failed") == "failed" and not any(
                later.get("success") and covers(later.get("command") or "", command)
                for later in steps[n + 1:]):
            last[commands.key(command)] = step
    out = []
    for n, step in enumerate(sorted(last.values(), key=lambda s: -s["step"])):
        copy = cast("TrajectoryStep", dict(step))
        copy["step"] = -n
        out.append(copy)
    return out[::-1]


def text_of(trajectory: Trajectory) -> str:
    """Everything a bullet could be relevant to, as one text (task, actions, results, files)."""
    parts = [trajectory.get("task") or "", (trajectory.get("result") or {}).get("output") or ""]
    for step in trajectory.get("trajectory") or []:
        parts.append(step.get("action") or "")
        parts.append(step.get("result") or "")
        parts.extend(step.get("files") or [])
    return "\n".join(parts)
