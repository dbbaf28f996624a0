"""Codex CLI's session files ("rollouts", `~/.codex/sessions/YYYY/MM/DD/rollout-<time>-<id>.jsonl`)
→ the tool events and messages `ace learn --transcript` learns from, as `transcript.parse_file`
gives them for Claude Code (same keys, plus `agent: "codex"`).

The format, from Codex's source (`codex-rs/protocol/src/protocol.rs` `RolloutLine` / `RolloutItem`,
`models.rs` `ResponseItem`): one `{timestamp, type, payload}` object a line; `type` is
`session_meta` (id, cwd, source, git…), `response_item` (a message, a `function_call` /
`custom_tool_call` / `local_shell_call` / `web_search_call` and the `*_output` answering it by
`call_id`, reasoning), `event_msg` (`user_message` — what the user typed —, `exec_command_end`
with the exit code, `patch_apply_end`, `turn_aborted`, `thread_rolled_back`…), `turn_context`
and `compacted`.

What is read, and what is skipped (counted in `skips`, reasons as `transcript_learn.SKIP_LABELS`):
- Prompts: the `user_message` events when the file has any (newer versions); else the user
  messages, less the context Codex injects itself (`<environment_context>`, `<user_instructions>`,
  AGENTS.md bodies…: `injected_context`). Developer and system messages: `injected_context`.
- Calls: each tool call paired by `call_id` with its output; the tool mapped through the one
  table (`agents.tools.to_canonical`, as the hook adapters do; a multi-file `apply_patch` is split
  per file first, each becoming the Edit / MultiEdit / Write `capture.patch.patch_call` makes of
  it). A call fails when its exit code (the output's `metadata.exit_code`, its `Exit code: N`
  line, or the `exec_command_end` event) is not 0, or Codex says it did not succeed.
  A call never answered is interrupted. Code mode's `exec` (a JavaScript snippet calling the tools)
  becomes the calls the snippet makes (`codex_code_mode`), a `wait` on its cell folded into it.
- `thread_rolled_back` drops the last N turns: their entries are an abandoned branch. A
  `compacted` summary is `compaction_summary`; `turn_aborted`, `interruption_notice`.
- A subagent's file (`source.subagent`) is learned as that subagent's work (its parent's session);
  Codex's own compaction and memory agents are machinery (`internal_agent`).

Cost: one pass over the records, after `session_files.read_records`.
"""

from __future__ import annotations

import json
from collections import Counter
from typing import TYPE_CHECKING, Any

from ..agents.codex import AGENT as CODEX
from ..agents.tools import to_canonical
from ..capture.parts import text_of
from ..core import config as config_mod
from . import codex_code_mode as code_mode
from .session_files import Builder, command_output, exit_code_in, read_records
from .session_io import epoch

if TYPE_CHECKING:
    from ..core.config import Config

AGENT = "codex"
HINT = "give a Codex CLI session file (~/.codex/sessions/YYYY/MM/DD/rollout-….jsonl)"
NAMED = "a Codex CLI rollout (~/.codex/sessions/YYYY/MM/DD/rollout-….jsonl)"  # in another reader's error
LINE_TYPES = ("session_meta", "response_item", "event_msg", "turn_context", "compacted")
# Text Codex puts in a user message itself (`codex-rs/core/src/environment_context.rs`,
# `user_instructions.rs`, `user_shell_command.rs`): context, not the user's request.
_INJECTED = ("<environment_context>", "<user_instructions>", "# AGENTS.md instructions", "<INSTRUCTIONS>",
             "<user_shell_command>", "<skill>", "<permissions instructions>", "<collaboration_mode>")
_INTERNAL_SOURCES = {"compact": "Codex's compaction agent", "memory_consolidation": "Codex's memory agent"}
_FAILED_PATCH = ("apply_patch verification failed", "Failed to apply patch", "error:", "Invalid patch")


def looks_like(record: dict[str, Any]) -> bool:
    """Is this a rollout line (`{timestamp, type, payload}` with one of Codex's line types)?"""
    return record.get("type") in LINE_TYPES and isinstance(record.get("payload"), dict)


def _content_text(content: object, kinds: tuple[str, ...]) -> str:
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    return "\n".join(str(c.get("text") or "") for c in content if isinstance(c, dict) and c.get("type") in kinds)


def _output(payload: dict[str, Any]) -> tuple[str, bool | None, int | None]:
    """(the output's text, Codex's `success` when it says, the exit code it states)."""
    raw = payload.get("output")
    success = None
    if isinstance(raw, dict):  # {content, success} (older versions wrote the payload struct)
        success = raw.get("success") if isinstance(raw.get("success"), bool) else None
        raw = raw.get("content")
    text = raw if isinstance(raw, str) else text_of(raw)  # every item's text, nested ones too (capture/parts.py)
    if text.startswith("{") and '"metadata"' in text[-400:]:  # the shell tool: {"output", "metadata"}
        try:
            data = json.loads(text)
        except ValueError:
            data = None
        if isinstance(data, dict) and isinstance(data.get("metadata"), dict):
            code = data["metadata"].get("exit_code")
            return str(data.get("output") or ""), success, code if isinstance(code, int) else None
    return command_output(text), success, exit_code_in(text)


def _session_source(meta: dict[str, Any]) -> tuple[str, str | None, str | None]:
    """(kind: session / subagent / internal, the parent session for a subagent, what an internal
    agent is) from `session_meta.source`."""
    source = meta.get("source")
    sub = source.get("subagent") if isinstance(source, dict) else None
    if isinstance(source, dict) and "internal" in source:
        return "internal", None, "Codex's own background agent"
    if sub is None:
        return "session", None, None
    name = sub if isinstance(sub, str) else next(iter(sub), "") if isinstance(sub, dict) else ""
    if name in _INTERNAL_SOURCES:
        return "internal", None, _INTERNAL_SOURCES[name]
    spawn = sub.get("thread_spawn") if isinstance(sub, dict) else None
    parent = spawn.get("parent_thread_id") if isinstance(spawn, dict) else None
    return "subagent", parent if isinstance(parent, str) else None, None


class _Turns:
    """The entries of each user turn, so a rollback can drop the last N of them."""

    def __init__(self) -> None:
        self.turns: list[list[tuple[str, Any]]] = [[]]

    def add(self, kind: str, item: Any) -> None:
        if kind == "prompt" and self.turns[-1]:
            self.turns.append([])
        self.turns[-1].append((kind, item))

    def roll_back(self, n: int) -> int:
        """Drop the last `n` turns (each opened by a prompt); how many entries went."""
        dropped = 0
        while n > 0 and self.turns[-1] and self.turns[-1][0][0] == "prompt":
            dropped += len(self.turns.pop())
            self.turns = self.turns or [[]]
            n -= 1
        return dropped

    def entries(self) -> list[tuple[str, Any]]:
        return [entry for turn in self.turns for entry in turn]


def parse_file(path: str, cfg: Config | None = None) -> dict[str, Any]:
    """A rollout file → {kind, session_id, cwd, git_branch, agent, agents: [one], bad_lines,
    skips, notes} (the shape of `transcript.parse_file`)."""
    cfg = cfg or config_mod.load(None)
    records, counts = read_records(path, HINT)
    skips: Counter[str] = Counter(counts)
    meta: dict[str, Any] = {}
    cwd = None
    prompts_from_events = any(r.get("type") == "event_msg" and isinstance(r.get("payload"), dict)
                              and r["payload"].get("type") == "user_message" for r in records)
    turns = _Turns()
    for n, record in enumerate(records):
        kind, payload = record.get("type"), record.get("payload")
        if not isinstance(payload, dict):
            skips["unreadable_line"] += 1
            continue
        at = epoch(record.get("timestamp")) or 0.0
        if kind == "session_meta":
            meta = meta or payload
            cwd = cwd or (payload.get("cwd") if isinstance(payload.get("cwd"), str) else None)
        elif kind == "turn_context":
            cwd = cwd or (payload.get("cwd") if isinstance(payload.get("cwd"), str) else None)
        elif kind == "compacted":
            skips["compaction_summary"] += 1
        elif kind == "event_msg":
            _event(payload, at, n, turns, skips, prompts_from_events)
        elif kind == "response_item":
            _item(payload, at, n, turns, skips, prompts_from_events)
    if not meta and not any(looks_like(r) for r in records):
        from .session_io import TranscriptError

        raise TranscriptError(f"{path} holds JSON lines but no Codex rollout lines; {HINT}")
    source_kind, parent, internal = _session_source(meta)
    own_id = meta.get("id") if isinstance(meta.get("id"), str) else None
    git: dict[str, Any] = meta["git"] if isinstance(meta.get("git"), dict) else {}
    out: dict[str, Any] = {"kind": source_kind, "agent": AGENT, "session_id": parent or own_id or _stem(path),
                           "cwd": cwd, "git_branch": git.get("branch") if isinstance(git.get("branch"), str) else None,
                           "agents": [], "notes": []}
    if internal:
        out["notes"].append(f"{_stem(path)} is {internal}: nothing to learn from it")
        skips["internal_agent"] += 1
    else:
        sub = source_kind == "subagent"
        role = meta.get("agent_role") or meta.get("agent_nickname")
        builder = Builder(cfg, agent_id=(own_id or _stem(path)) if sub else "",
                          agent_type=(role if isinstance(role, str) else "subagent") if sub else None)
        _build(turns.entries(), builder, skips, by="agent" if sub else "user")
        out["agents"].append(builder.agent({}))
    out["skips"] = {k: v for k, v in skips.items() if v}
    out["bad_lines"] = skips["unreadable_line"]
    return out


def _stem(path: str) -> str:
    import os

    return os.path.splitext(os.path.basename(path))[0]


def _event(payload: dict[str, Any], at: float, n: int, turns: _Turns, skips: Counter[str], prompts: bool) -> None:
    what = payload.get("type")
    if what == "user_message" and prompts:
        text = payload.get("message")
        kind = payload.get("kind")
        if isinstance(text, str) and text.strip() and kind in (None, "plain"):
            turns.add("prompt", (text, at, f"codex:{n}"))
        elif isinstance(text, str) and text.strip():
            turns.add("skip", ("injected_context", text, at))
    elif what == "exec_command_end" and isinstance(payload.get("call_id"), str):
        code = payload.get("exit_code")
        turns.add("exit", (payload["call_id"], code if isinstance(code, int) else None, None))
    elif what == "patch_apply_end" and isinstance(payload.get("call_id"), str):
        ok = payload.get("success")
        turns.add("exit", (payload["call_id"], None, ok if isinstance(ok, bool) else None))
    elif what == "turn_aborted":
        skips["interruption_notice"] += 1
    elif what == "thread_rolled_back":
        count = payload.get("num_turns")
        skips["abandoned_branch"] += turns.roll_back(count if isinstance(count, int) and count > 0 else 1)


def _item(payload: dict[str, Any], at: float, n: int, turns: _Turns, skips: Counter[str], prompts: bool) -> None:
    what = payload.get("type")
    if what == "message":
        role = payload.get("role")
        text = _content_text(payload.get("content"), ("input_text", "output_text", "text"))
        if role == "assistant":
            turns.add("reply", (text, at))
        elif role == "user":  # with `user_message` events, the prompts come from those
            injected = text.lstrip().startswith(_INJECTED)
            if injected or not prompts:
                turns.add("skip" if injected else "prompt",
                          ("injected_context", text, at) if injected else (text, at, f"codex:{n}"))
        elif role in ("developer", "system"):
            skips["injected_context"] += 1
    elif what in ("function_call", "custom_tool_call", "local_shell_call", "web_search_call"):
        call_id = payload.get("call_id") or payload.get("id") or f"codex-call:{n}"
        name, given = _call_input(payload)
        turns.add("call", (str(call_id), name, given, at, what == "web_search_call"))
    elif what in ("function_call_output", "custom_tool_call_output") and payload.get("call_id") is not None:
        turns.add("output", (str(payload["call_id"]), payload, at))


def _call_input(payload: dict[str, Any]) -> tuple[str, Any]:
    """(Codex's tool name, its input as an object) of a call item."""
    what = payload.get("type")
    if what == "local_shell_call":
        action: dict[str, Any] = payload["action"] if isinstance(payload.get("action"), dict) else {}
        return "local_shell", {"command": action.get("command"), "workdir": action.get("working_directory")}
    if what == "web_search_call":
        action = payload["action"] if isinstance(payload.get("action"), dict) else {}
        return "web_search", {"query": action.get("query") or action.get("url")}
    name = str(payload.get("name") or "unknown")
    if what == "custom_tool_call":  # freeform: the input is the text itself (apply_patch's patch)
        return name, {"input": payload.get("input")}
    raw = payload.get("arguments")
    try:
        given = json.loads(raw) if isinstance(raw, str) else raw
    except ValueError:
        given = {"arguments": raw}
    return name, given if isinstance(given, dict) else {"arguments": given}


def _build(entries: list[tuple[str, Any]], builder: Builder, skips: Counter[str], *, by: str) -> None:
    exits: dict[str, tuple[int | None, bool | None]] = {}
    calls_by_id = {item[0] for kind, item in entries if kind == "call"}
    outputs: dict[str, tuple[dict[str, Any], float]] = {}
    # Code mode's patch_apply_end events carry an id of their own ("exec-…"): each belongs to the
    # `exec` call whose answer has not come yet (the model's calls run one at a time there).
    patches: dict[str, list[bool | None]] = {}
    open_exec = None
    for kind, item in entries:
        if kind == "exit" and open_exec and item[0].startswith("exec-") and item[0] not in calls_by_id:
            patches.setdefault(open_exec, []).append(item[2])
        elif kind == "exit":
            code, ok = item[1], item[2]
            old = exits.get(item[0], (None, None))
            exits[item[0]] = (code if code is not None else old[0], ok if ok is not None else old[1])
        elif kind == "output":
            outputs.setdefault(item[0], (item[1], item[2]))
            open_exec = None if item[0] == open_exec else open_exec
        elif kind == "call" and item[1] == "exec":
            open_exec = item[0]
    running, cells = _cells(entries, outputs)
    for kind, item in entries:
        if kind == "call" and item[1] == "wait" and _cell_of(item[2]) in running:
            continue  # a poll of a code-mode cell: its end is the exec's answer
        if kind == "prompt":
            builder.prompt(item[0], item[1], item[2], by=by)
        elif kind == "reply":
            builder.reply(item[0], item[1])
        elif kind == "skip":
            skips[item[0]] += 1
            builder.skipped_text(item[1], item[2])
        elif kind == "call":
            answer = outputs.get(item[0])
            cell = code_mode.running_cell(answer[0]) if answer and item[1] == "exec" else None
            _call(builder, item, cells.get(cell, answer) if cell else answer, exits.get(item[0], (None, None)),
                  patches.get(item[0], []))


def _cell_of(given: Any) -> str | None:
    cell = given.get("cell_id") if isinstance(given, dict) else None
    return str(cell) if isinstance(cell, (str, int)) and not isinstance(cell, bool) else None


def _cells(entries: list[tuple[str, Any]], outputs: dict[str, tuple[dict[str, Any], float]]
           ) -> tuple[set[str], dict[str, tuple[dict[str, Any], float]]]:
    """(the code-mode cells an `exec` left running, {cell: the `wait` answer that ended it}); a
    cell no wait saw end keeps its "running" answer."""
    running = {cell for kind, item in entries if kind == "call" and item[1] == "exec" and item[0] in outputs
               for cell in [code_mode.running_cell(outputs[item[0]][0])] if cell}
    ended: dict[str, tuple[dict[str, Any], float]] = {}
    for kind, item in entries:
        cell = _cell_of(item[2]) if kind == "call" and item[1] == "wait" else None
        answer = outputs.get(item[0]) if cell in running else None
        if cell and answer and cell not in ended and code_mode.running_cell(answer[0]) is None:
            ended[cell] = answer
    return running, ended


def _call(builder: Builder, call: tuple[str, str, Any, float, bool], answer: tuple[dict[str, Any], float] | None,
          exit_info: tuple[int | None, bool | None], patches: list[bool | None]) -> None:
    call_id, name, given, at, answered_inline = call
    found = code_mode.calls(given.get("input")) if name == "exec" and isinstance(given, dict) else None
    if found is not None:
        _code_mode(builder, call_id, found, answer, at, patches)
        return
    if answer is None and not answered_inline:  # never answered: the turn was interrupted
        for use_id, tool, tool_input in _calls(call_id, name, given):
            builder.call(use_id, tool, tool_input, output=None, failed=True, exit_code=None, at=at, started=at,
                         interrupted=True)
        return
    text, success, code = _output(answer[0]) if answer else ("", True, None)
    code = exit_info[0] if exit_info[0] is not None else code
    success = exit_info[1] if exit_info[1] is not None else success
    failed = success is False or (code is not None and code != 0)
    if name == "apply_patch" and success is None and code is None:
        failed = text.lstrip().startswith(_FAILED_PATCH)
    done = answer[1] if answer else at
    for use_id, tool, tool_input in _calls(call_id, name, given):
        builder.call(use_id, tool, tool_input, output=text, failed=failed,
                     exit_code=(code if code is not None else 0 if not failed else None) if tool == "Bash" else None,
                     at=done, started=at)


def _code_mode(builder: Builder, call_id: str, found: list[tuple[str, dict[str, Any]]],
               answer: tuple[dict[str, Any], float] | None, at: float, patches: list[bool | None]) -> None:
    """A code-mode `exec` as the calls its script makes (`codex_code_mode`): each with its part of
    the output, the exit code only when a part states it (never a guessed failure); its patches'
    outcome from their `patch_apply_end` events, in order, when there is one per patch."""
    outcomes = patches if len(patches) == sum(name == "apply_patch" for name, _ in found) else []
    parts = code_mode.output_parts(answer[0])[1] if answer else []
    split = code_mode.split_output(parts, len(found))
    done = answer[1] if answer else at
    for i, ((name, given), (text, code)) in enumerate(zip(found, split, strict=True)):
        failed = code is not None and code != 0
        if name == "apply_patch":
            ok = outcomes.pop(0) if outcomes else None
            failed = ok is False or (ok is None and text.lstrip().startswith(_FAILED_PATCH))
        for use_id, tool, tool_input in _calls(call_id if i == 0 else f"{call_id}:c{i}", name, given):
            if answer is None:
                builder.call(use_id, tool, tool_input, output=None, failed=True, exit_code=None, at=at,
                             started=at, interrupted=True)
            else:
                builder.call(use_id, tool, tool_input, output=text, failed=failed,
                             exit_code=code if tool == "Bash" else None, at=done, started=at)


def _calls(call_id: str, name: str, given: Any) -> list[tuple[str, str, Any]]:
    """[(tool_use_id, our tool, its input)]: one call, or one per file of a patch."""
    command = given.get("command") if isinstance(given, dict) else None
    if name in ("shell", "local_shell") and isinstance(command, list) and len(command) == 2 \
            and command[0] in CODEX.patch_tools and isinstance(command[1], str):  # older Codex: a shell apply_patch
        name, given = "apply_patch", {"input": command[1]}
    if name in CODEX.patch_tools and isinstance(given, dict) and isinstance(given.get("input"), str):
        files = _per_file(given["input"])
        if len(files) > 1:
            return [(call_id if i == 0 else f"{call_id}:{i}", *_ours(name, {**given, "input": text}))
                    for i, text in enumerate(files)]
    return [(call_id, *_ours(name, given))]


def _ours(name: str, given: Any) -> tuple[str, Any]:
    tool, tool_input = to_canonical(AGENT, name, given)
    return str(tool), tool_input


_FILE_MARKS = ("*** Update File: ", "*** Add File: ", "*** Delete File: ")


def _per_file(patch: str) -> list[str]:
    """A patch's files, each as a patch of its own (the hook adapters model one file per call)."""
    sections: list[list[str]] = []
    for line in patch.splitlines():
        if line.startswith(_FILE_MARKS):
            sections.append([line])
        elif sections and not line.startswith(("*** Begin Patch", "*** End Patch")):
            sections[-1].append(line)
    return ["*** Begin Patch\n" + "\n".join(lines) + "\n*** End Patch\n" for lines in sections]
