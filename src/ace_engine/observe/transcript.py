"""Claude Code transcripts (JSONL, one object a line) → the same tool events and messages the hooks
capture, so `ace learn --transcript FILE` learns from sessions the hooks never saw.

What is read, and what is not (every entry left out is counted under a reason, `skips`):
- Only the ACTIVE branch. Entries form a tree through `uuid` / `parentUuid`; a rewind leaves the
  old branch in the file. The active one is the path from the leaf of the newest entry back to
  the root, crossing compaction boundaries by their `logicalParentUuid` (the pre-compaction work
  happened). Claude Code writes each block of a reply as its own entry and hangs each tool result
  under its own call, so parallel calls sit beside that path: the other entries of a reply on the
  path (same `message.id`) and the results of its calls are active too.
- A tool call: an assistant `tool_use` block paired, by id, with a later `tool_result` (`toolUseResult`).
- A prompt queued while the agent worked (2.1.2xx+ `attachment` `queued_command`) is a user entry; the
  other attachment, `mode`, title and bookkeeping records only keep their place in the tree.
- A user entry's text is a prompt unless it is a compaction summary, a `<task-notification>`,
  injected context (`isMeta`: skill and command bodies, caveats), a built-in command (`/clear`) or
  its output, a system reminder, an interruption notice or a teammate's control message. A slash
  command the model answers (`/gsd:plan 4`) is the user's prompt.
- Whose words a prompt is (`by` on each user message): `user` only for text the user typed. A teammate's
  message, an entry whose `origin` names a non-human sender, and every prompt of a subagent set the turn's
  task but are not the user's (`by` = `teammate`, `other`, `agent`): no "user's correction" is learned
  from them, and for the provenance rule (`observe/origins.py`) they, like every user entry skipped
  above (kept, capped, in the agent's `foreign` list), are text someone else wrote.
- A line nested too deeply to parse (RecursionError) is skipped and counted (`too_deep`).
- Subagents (`<session_id>/subagents/agent-<id>.jsonl`; older versions: beside the session) are learned
  with their own agent id, except the compaction and prompt-suggestion agents (Claude Code's machinery,
  not work). An agent file given on its own is learned as that subagent's work. Everything read goes
  through the capture sanitizer (private spans, secrets, sizes): a transcript holds what the user typed.

Cost: one read pass (whole tree in memory: bookkeeping kept as tree ids, strings capped), one over the active.

Why one module (~450 lines): the branch walk, the prompt classification and the call / result
pairing read one entry tree in one pass and keep one set of skip counts, which is the contract;
split, the tree and the counters would travel between modules.
"""

from __future__ import annotations

import glob
import json
import os
import re
from collections import Counter
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from ..core import config as config_mod
from ..redact.sanitize import sanitize, sanitize_value
from .session_io import MAX_DEPTH, TranscriptError, epoch, opened, shrink, too_deep

if TYPE_CHECKING:
    from ..core.config import Config

HINT = "give a Claude Code transcript (~/.claude/projects/<project folder>/<session id>.jsonl)"

# Agents Claude Code runs for itself: their files restate the conversation, they are not work.
INTERNAL_AGENTS = {
    "acompact": "the compaction agent (it summarises the conversation for /compact)",
    "aprompt_suggestion": "the prompt-suggestion agent (it guesses the next prompt)",
}

_CONTINUED = "This session is being continued from a previous conversation"
_LOCAL = ("<local-command-stdout>", "<local-command-stderr>", "<local-command-caveat>", "<bash-input>",
          "<bash-stdout>", "<bash-stderr>", "<user-memory-input>", "Caveat: The messages below")
_COMMAND = re.compile(r"<command-name>\s*/?([^<\s]+)\s*</command-name>")
_ARGS = re.compile(r"<command-args>(.*?)</command-args>", re.S)
_WRAPPER = re.compile(r"^\s*<(system-reminder|system_instruction|system-instruction)>.*?</\1>\s*", re.S)
_TRAILING_REMINDER = re.compile(r"\s*<system-reminder>.*?</system-reminder>\s*$", re.S)
_TEAMMATE = re.compile(r"<teammate-message\b[^>]*>(.*?)</teammate-message>", re.S)
_EXIT = re.compile(r"exit code:?\s*(-?\d+)", re.IGNORECASE)
_CONVERSATION = ("user", "assistant")
_TREE_KEYS = ("type", "subtype", "uuid", "parentUuid", "logicalParentUuid", "isSidechain")
_FOREIGN_KEPT = 200  # non-user texts kept per agent, for the provenance rule


def internal_agent(agent_id: str) -> str | None:
    """What Claude Code runs agent `agent_id` for, when it is its own machinery; else None."""
    return next((what for prefix, what in INTERNAL_AGENTS.items() if agent_id.startswith(prefix)), None)


def _text_of(content: object) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(c.get("text", "") for c in content if isinstance(c, dict) and c.get("type") == "text")
    return ""


def _blocks(entry: dict[str, Any], kind: str) -> list[dict[str, Any]]:
    message = entry.get("message")
    content = message.get("content") if isinstance(message, dict) else None
    return [b for b in content if isinstance(b, dict) and b.get("type") == kind] if isinstance(content, list) else []


def _queued_prompt(entry: dict[str, Any]) -> dict[str, Any]:
    """A queued prompt (see above) as its user entry; a queued notification keeps `origin` / `isMeta`."""
    att = entry.get("attachment")
    if entry.get("type") != "attachment" or not isinstance(att, dict) or att.get("type") != "queued_command" \
            or not isinstance(att.get("prompt"), str):
        return entry
    origin = att["origin"] if isinstance(att.get("origin"), dict) else \
        {"kind": "task-notification"} if att.get("commandMode") == "task-notification" else None
    return {**{k: entry[k] for k in ("uuid", "parentUuid", "isSidechain", "timestamp") if k in entry},
            "type": "user", "message": {"role": "user", "content": att["prompt"]}, "queued": True,
            **({"origin": origin} if origin else {}), **({"isMeta": True} if att.get("isMeta") else {})}


def read_entries(path: str) -> tuple[list[dict[str, Any]], dict[str, Any], int]:
    """(entries, {session_id, cwd, git_branch, agent_type} as first recorded, bad lines).
    Raises TranscriptError, naming the fix, for a missing, unreadable, empty or non-JSONL file."""
    entries: list[dict[str, Any]] = []
    info: dict[str, Any] = dict.fromkeys(("session_id", "cwd", "git_branch", "agent_type"))
    lines = bad = deep = 0
    with opened(path, HINT) as fh:
        for raw in fh:
            if not raw.strip():
                continue
            lines += 1
            try:
                entry = json.loads(raw)
            except ValueError:  # a torn last line is normal while Claude Code writes
                bad += 1
                continue
            except RecursionError:  # nested deeper than the decoder goes: nothing Claude Code writes
                deep += 1
                continue
            if not isinstance(entry, dict):
                bad += 1
                continue
            if too_deep(entry):  # every reader after this one recurses (shrink, sanitize, render)
                deep += 1
                continue
            for key, field in (("session_id", "sessionId"), ("cwd", "cwd"), ("git_branch", "gitBranch"),
                               ("agent_type", "agentType")):
                if info[key] is None and isinstance(entry.get(field), str) and entry[field]:
                    info[key] = entry[field]
            entry = _queued_prompt(entry)
            # Bookkeeping: only its place in the tree matters. The rest: no string longer than
            # what is ever kept of it (file reads, base64 images), so memory follows the caps.
            entries.append(shrink(entry) if entry.get("type") in _CONVERSATION
                           else {k: entry[k] for k in _TREE_KEYS if k in entry})
    if deep:
        info["too_deep"] = deep
    if not lines:
        raise TranscriptError(f"{path} is empty; {HINT}")
    if not entries and deep:
        raise TranscriptError(f"{path}: every one of its {lines} lines is JSON nested too deeply to read (over "
                              f"{MAX_DEPTH} levels), which no Claude Code transcript is; {HINT}")
    if not entries:
        raise TranscriptError(f"{path} is not JSONL: none of its {lines} lines is a JSON object; {HINT}")
    if not any("type" in e for e in entries):
        raise TranscriptError(f"{path} holds JSON lines but no Claude Code entries (none has a `type`); {HINT}")
    return entries, info, bad


def active_entries(entries: list[dict[str, Any]], *, sidechain: bool) -> set[int]:
    """Indices of the entries on the active branch (see the module docstring). `sidechain`: a
    subagent's file, where every entry is one; in a main file such entries are not its own."""
    def in_scope(i: int) -> bool:
        return sidechain or not entries[i].get("isSidechain")

    by_uuid: dict[str, int] = {}
    children: dict[str, list[int]] = {}
    for i, entry in enumerate(entries):
        if isinstance(entry.get("uuid"), str) and in_scope(i):
            by_uuid.setdefault(entry["uuid"], i)
        if isinstance(entry.get("parentUuid"), str) and in_scope(i):
            children.setdefault(entry["parentUuid"], []).append(i)
    talk = [i for i in range(len(entries)) if entries[i].get("type") in _CONVERSATION and in_scope(i)]
    untreed = {i for i in talk if not isinstance(entries[i].get("uuid"), str)}  # no place in a tree: keep
    rooted = [i for i in talk if i not in untreed]
    if not rooted:
        return set(talk)
    leaf = rooted[-1]  # the newest entry written; then down to its leaf, newest child first
    while True:
        below = [c for c in children.get(entries[leaf]["uuid"], ()) if entries[c].get("type") in _CONVERSATION]
        if not below:
            break
        leaf = below[-1]
    path: set[int] = set()
    at: int | None = leaf
    while at is not None and at not in path:
        path.add(at)
        parent = entries[at].get("parentUuid") or entries[at].get("logicalParentUuid")
        if not isinstance(parent, str):
            break  # the root
        nxt = by_uuid.get(parent)
        if nxt is None:  # a parent never written (Claude Code loses one now and then): the entry before
            nxt = next((j for j in range(at - 1, -1, -1) if j not in path and in_scope(j)
                        and isinstance(entries[j].get("uuid"), str)), None)
        at = nxt
    # Beside the path: the other entries of its replies (chained under one another, progress
    # entries between them; same `message.id`) and the results of their calls (under the call).
    active = path | untreed
    stack = list(path)
    while stack:
        entry = entries[stack.pop()]
        if entry.get("type") != "assistant" or not isinstance(entry.get("uuid"), str):
            continue
        reply = entry["message"].get("id") if isinstance(entry.get("message"), dict) else None
        calls = {b.get("id") for b in _blocks(entry, "tool_use")}
        below = list(children.get(entry["uuid"], ()))
        while below:
            c = below.pop()
            child = entries[c]
            if child.get("type") not in _CONVERSATION:  # bookkeeping: look through it
                below += children.get(str(child.get("uuid")), ())
                continue
            same_reply = child.get("type") == "assistant" and reply is not None and \
                isinstance(child.get("message"), dict) and child["message"].get("id") == reply
            if c not in active and (same_reply or any(b.get("tool_use_id") in calls
                                                      for b in _blocks(child, "tool_result"))):
                active.add(c)
                stack.append(c)
    return active


def _teammate(text: str) -> str:
    """A teammate's messages as the work they ask for: a task assignment's subject and description,
    a plain message's text; control messages (shutdown, idle…) ask for none."""
    parts = []
    for body in (b.strip() for b in _TEAMMATE.findall(text)):
        try:
            data = json.loads(body)
        except ValueError:
            data = None
        if isinstance(data, dict) and data.get("type"):
            if data["type"] == "task_assignment":
                parts.append("\n".join(str(data[k]) for k in ("subject", "description") if data.get(k)))
            continue
        parts.append(body)
    parts.append(_TEAMMATE.sub("", text).strip())
    return "\n\n".join(p for p in parts if p)


def prompt_of(entry: dict[str, Any], text: str, after: dict[str, Any] | None) -> tuple[str | None, str | None]:
    """(prompt, None) for a user entry's text that is the user's request, else (None, why not).
    `after` is the next user entry on the branch: a command the model answers is followed by its
    body (an `isMeta` entry), a built-in one by its output."""
    origin = entry.get("origin")
    kind = origin.get("kind") if isinstance(origin, dict) else None
    head = text.lstrip()
    if entry.get("isCompactSummary") or head.startswith(_CONTINUED):
        return None, "compaction_summary"
    if kind == "task-notification" or head.startswith("<task-notification>"):
        return None, "task_notification"
    if entry.get("isMeta") or entry.get("isVisibleInTranscriptOnly"):
        return None, "injected_context"
    if head.startswith("[Request interrupted"):
        return None, "interruption_notice"
    if head.startswith(_LOCAL):
        return None, "local_command"
    if head.startswith("<command-"):
        command = _COMMAND.search(text)
        # Newer versions say who sent it (`origin`); with older ones, the body comes with it or next.
        body_next = after is not None and bool(after.get("isMeta")) and not \
            _text_of((after.get("message") or {}).get("content")).lstrip().startswith(_LOCAL)
        typed = kind == "human" if "origin" in entry else \
            body_next or bool(re.sub(r"<(command-[\w-]+)>.*?</\1>", "", text, flags=re.S).strip())
        if not command or not typed:
            return None, "local_command"
        args = _ARGS.search(text)
        return f"/{command.group(1)} {args.group(1).strip() if args else ''}".strip(), None
    body = text
    while (match := _WRAPPER.match(body)) is not None:
        body = body[match.end():]
    body = _TRAILING_REMINDER.sub("", body).strip()
    if not body:
        return None, "system_reminder"
    if body.startswith("<teammate-message"):
        body = _teammate(body)
        if not body:
            return None, "teammate_control"
    return body, None


def sender(entry: dict[str, Any], text: str, *, sidechain: bool) -> str:
    """Whose words a user entry's prompt is: `user`, or `agent` (a subagent's prompt: its parent
    wrote it), `teammate` (a teammate's message), `other` (an `origin` naming another sender)."""
    if sidechain:
        return "agent"
    origin = entry.get("origin")
    if isinstance(origin, dict) and origin.get("kind") not in (None, "human"):
        return "other"
    body = text
    while (match := _WRAPPER.match(body)) is not None:
        body = body[match.end():]
    return "teammate" if body.lstrip().startswith("<teammate-message") else "user"


def parse_entries(entries: list[dict[str, Any]], *, agent_id: str = "", agent_type: str | None = None,
                  cfg: Config | None = None, sidechain: bool = False) -> dict[str, Any]:
    """One file's entries → {events, messages, agent_id, agent_type, skips: {reason: count}, foreign:
    [{text, at} of the skipped non-user entries, capped]}."""
    cfg = cfg or config_mod.load(None)
    cap_in, cap_out = cfg["capture.max_input_chars"], cfg["capture.max_response_chars"]
    cap_msg = cfg["capture.max_message_chars"]
    skip_tools = set(cfg["capture.skip_tools"])
    events: list[dict[str, Any]] = []
    messages: list[dict[str, Any]] = []
    foreign: list[dict[str, Any]] = []
    skips: Counter[str] = Counter()
    active = active_entries(entries, sidechain=sidechain)
    texts = [(i, _text_of((e.get("message") or {}).get("content"))) for i, e in enumerate(entries)
             if e.get("type") == "user" and isinstance(e.get("message"), dict) and not _blocks(e, "tool_result")]
    on_branch = [i for i, _ in texts if i in active]
    followed = {i: entries[nxt] for i, nxt in zip(on_branch, on_branch[1:], strict=False)}
    text_of = dict(texts)
    pending: dict[str, dict[str, Any]] = {}
    seq = 0
    last_at = None
    for i, entry in enumerate(entries):
        kind = entry.get("type")
        if kind not in _CONVERSATION:
            continue
        if i not in active:  # counted only when it would have been learned on the active branch
            if entry.get("isSidechain") and not sidechain:
                skips["sidechain"] += 1
            elif kind == "assistant" or i not in text_of or (
                    text_of[i].strip() and prompt_of(entry, text_of[i], None)[0] is not None):
                skips["abandoned_branch"] += 1
            continue
        at = epoch(entry.get("timestamp")) or last_at or 0.0
        last_at = at
        seq += 1
        if kind == "assistant":
            message = entry.get("message")
            if entry.get("isApiErrorMessage") or isinstance(message, dict) and message.get("model") == "<synthetic>":
                skips["synthetic_reply"] += 1
                continue
            for block in _blocks(entry, "tool_use"):
                if block.get("id"):
                    pending[block["id"]] = {"name": block.get("name") or "unknown", "input": block.get("input"),
                                            "at": at}
            for block in _blocks(entry, "text"):
                text = sanitize(block.get("text") or "", cap_msg)
                if text.strip():
                    messages.append({"id": seq, "role": "assistant", "text": text, "created_at": at,
                                     "uuid": entry.get("uuid")})
            continue
        results = _blocks(entry, "tool_result")
        for block in results:
            use = pending.pop(str(block.get("tool_use_id")), None)
            if use is None or use["name"] in skip_tools:
                continue
            seq += 1
            body = _text_of(block.get("content"))
            structured = entry.get("toolUseResult") if len(results) == 1 else None
            failed = bool(block.get("is_error"))
            exit_match = _EXIT.search(body[:200]) if failed else None
            response = structured if isinstance(structured, (dict, list)) else body
            if isinstance(response, dict) and isinstance(response.get("exitCode"), int):
                failed = failed or response["exitCode"] != 0
            events.append({
                "id": seq, "tool_use_id": block.get("tool_use_id"), "tool_name": use["name"],
                "input": sanitize_value(use["input"], cap_in),
                "response": None if failed else sanitize_value(response, cap_out),
                "success": not failed,
                "error": sanitize(body, cap_out) if failed else None,
                "exit_code": int(exit_match.group(1)) if exit_match
                else (0 if use["name"] == "Bash" and not failed else None),
                "is_interrupt": bool(isinstance(structured, dict) and structured.get("interrupted")),
                # Who stopped the call, where Claude Code says (newer versions): `corrections.typed_refusal`.
                **({"denial": entry["toolDenialKind"]} if isinstance(entry.get("toolDenialKind"), str) else {}),
                "duration_ms": round((at - use["at"]) * 1000, 1) if at and use["at"] else None,
                "created_at": at,
            })
        if results or not text_of.get(i, "").strip():
            continue
        prompt, why = prompt_of(entry, text_of[i], followed.get(i))
        if why:
            skips[why] += 1
            if len(foreign) < _FOREIGN_KEPT:
                foreign.append({"text": sanitize(text_of[i], cap_msg), "at": at})
            continue
        clean = sanitize(prompt or "", cap_msg)
        if clean.strip():
            messages.append({"id": seq, "role": "user", "text": clean, "created_at": at, "uuid": entry.get("uuid"),
                             "by": sender(entry, text_of[i], sidechain=sidechain)})
    for use_id, use in pending.items():  # asked but never answered: the turn was interrupted
        if use["name"] in skip_tools:
            continue
        seq += 1
        events.append({"id": seq, "tool_use_id": use_id, "tool_name": use["name"],
                       "input": sanitize_value(use["input"], cap_in), "response": None, "success": False,
                       "error": "interrupted (no result)", "exit_code": None, "is_interrupt": True,
                       "duration_ms": None, "created_at": use["at"]})
    events.sort(key=lambda e: (e["created_at"], e["id"]))
    return {"events": events, "messages": messages, "agent_id": agent_id, "agent_type": agent_type,
            "skips": dict(skips), "foreign": foreign}


def _agent_type(path: str) -> str | None:
    """A subagent's type from the `agent-<id>.meta.json` newer versions write beside its file."""
    try:
        with open(path[: -len(".jsonl")] + ".meta.json", encoding="utf-8") as fh:
            meta = json.load(fh)
    except (OSError, ValueError):
        return None
    return meta.get("agentType") if isinstance(meta, dict) and isinstance(meta.get("agentType"), str) else None


def _stem(path: str) -> str:
    return os.path.splitext(os.path.basename(path))[0]


def parse_file(path: str, cfg: Config | None = None, *, siblings: Iterable[str] = ()) -> dict[str, Any]:
    """A transcript and its subagents' files: {kind, session_id, cwd, git_branch, agents: [...],
    bad_lines, skips: {reason: count}, notes: [...]}. `kind` is `session`, `subagent` (an agent
    file given on its own) or `internal` (Claude Code's own agent: nothing to learn). `siblings`:
    the older layout's subagent files (`agent-*.jsonl` beside the session, of its sessionId).
    Reasons in `skips` are described by `transcript_learn.SKIP_LABELS`."""
    entries, info, bad = read_entries(path)
    stem = _stem(path)
    notes: list[str] = []
    skips: Counter[str] = Counter({"unreadable_line": bad} if bad else {})
    if info.get("too_deep"):
        skips["too_deep"] += int(info.pop("too_deep"))
    out: dict[str, Any] = {"kind": "session", "session_id": info["session_id"] or stem, "cwd": info["cwd"],
                           "git_branch": info["git_branch"], "agents": [], "notes": notes}
    subs: list[tuple[str, Any]] = [(path, (entries, info, 0))]  # an agent file given on its own
    if stem.startswith("agent-"):
        out["kind"] = "internal" if internal_agent(stem[len("agent-"):]) else "subagent"
    else:
        out["agents"].append(parse_entries(entries, cfg=cfg))
        folder = os.path.join(os.path.dirname(path), stem, "subagents")
        subs = [(sub, None) for sub in sorted(glob.glob(os.path.join(folder, "agent-*.jsonl"))) + sorted(siblings)]
    for sub, read in subs:
        agent_id = _stem(sub)[len("agent-"):]  # the same turn keys whether learned alone or with its session
        internal = internal_agent(agent_id)
        if internal:
            notes.append(f"{_stem(sub)} is {internal}" + (": nothing to learn from it" if sub == path else ""))
            skips["internal_agent"] += 1
            continue
        try:
            sub_entries, sub_info, sub_bad = read or read_entries(sub)
        except TranscriptError as exc:
            notes.append(str(exc))
            skips["unreadable_file"] += 1
            continue
        skips["unreadable_line"] += sub_bad
        skips["too_deep"] += int(sub_info.pop("too_deep", 0) or 0)
        out["agents"].append(parse_entries(sub_entries, agent_id=agent_id, cfg=cfg, sidechain=True,
                                           agent_type=sub_info["agent_type"] or _agent_type(sub)))
    for agent in out["agents"]:
        skips.update(agent["skips"])
    out["skips"] = {k: v for k, v in skips.items() if v}
    out["bad_lines"] = skips["unreadable_line"]
    return out
