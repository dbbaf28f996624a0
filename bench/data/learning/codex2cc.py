#!/usr/bin/env python3
"""Convert an OpenAI Codex CLI rollout (JSONL, as Entire commits it for Codex sessions) into a Claude Code
transcript (JSONL) of the shape ace-engine's transcript parser reads, the way the corpus's `swe2cc.py`
does for SWE-agent runs. Used to build check-set sessions of Rust projects whose only recorded agent
sessions are Codex ones; the session stays what it was, only its envelope changes.

Mapping
  event_msg user_message                      -> user prompt (the typed text; AGENTS.md / environment
                                                 blocks that Codex injects as user messages are dropped)
  response_item message (assistant)           -> assistant text
  function_call exec_command / shell / shell_command -> Bash {command}; its output -> tool_result,
        failed (is_error, first line "Exit code N", as Claude Code writes it) when the recorded exit
        code is not 0 ("Process exited with code N", or metadata.exit_code in older rollouts)
  custom_tool_call apply_patch                -> one Edit per hunk of an updated file
        {file_path, old_string = context and '-' lines, new_string = context and '+' lines}, Write for
        an added file; failed when apply_patch reported an error
  everything else (reasoning, plans, stdin polls, web search, token counts) -> dropped
Timestamps, the session id and the working directory are the rollout's own. Standard library only.

usage: codex2cc.py IN.jsonl OUT.jsonl
"""

import json
import re
import sys
import uuid

EXITED = re.compile(r"Process exited with code (-?\d+)")
SHELL_TOOLS = ("exec_command", "shell", "shell_command", "container.exec")


def _args(raw):
    try:
        value = json.loads(raw) if isinstance(raw, str) else raw
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def command_of(name, raw):
    """The shell command of a Codex shell-like call, or None."""
    if name not in SHELL_TOOLS:
        return None
    args = _args(raw)
    cmd = args.get("cmd") if "cmd" in args else args.get("command")
    if isinstance(cmd, list):  # ["bash", "-lc", "cargo test"] -> the script itself
        cmd = cmd[-1] if len(cmd) >= 3 and cmd[1] in ("-lc", "-c") else " ".join(map(str, cmd))
    return cmd if isinstance(cmd, str) and cmd.strip() else None


def output_of(raw):
    """(exit code or None, text) of a function/custom tool call output, either rollout format."""
    text = raw if isinstance(raw, str) else json.dumps(raw)
    data = _args(text) if text.lstrip().startswith("{") else {}
    if data:
        meta = data.get("metadata") or {}
        code = meta.get("exit_code") if isinstance(meta, dict) else None
        return (int(code) if isinstance(code, (int, float)) else None), str(data.get("output", ""))
    m = EXITED.search(text[:400])
    body = text.split("\nOutput:\n", 1)[1] if "\nOutput:\n" in text else text
    return (int(m.group(1)) if m else None), body


def patch_edits(patch, cwd):
    """Edit/Write inputs for an apply_patch body: one per hunk of an updated file, one per added file."""
    edits, path, mode, old, new = [], None, None, [], []

    def flush():
        if path and mode == "update" and (old or new) and old != new:
            edits.append(("Edit", {"file_path": path, "old_string": "\n".join(old), "new_string": "\n".join(new)}))
        elif path and mode == "add":
            edits.append(("Write", {"file_path": path, "content": "\n".join(new)}))

    for line in patch.splitlines():
        header = re.match(r"\*\*\* (Update|Add|Delete) File: (.+)", line)
        if header or line.startswith("*** End Patch") or (line.startswith("@@") and mode == "update"):
            flush()
            old, new = [], []
            if header:
                rel = header.group(2).strip()
                path = rel if rel.startswith("/") else f"{cwd.rstrip('/')}/{rel}"
                mode = header.group(1).lower()
            continue
        if line.startswith("*** "):
            continue
        if mode == "update":
            if line.startswith("-"):
                old.append(line[1:])
            elif line.startswith("+"):
                new.append(line[1:])
            else:
                old.append(line[1:] if line.startswith(" ") else line)
                new.append(line[1:] if line.startswith(" ") else line)
        elif mode == "add" and line.startswith("+"):
            new.append(line[1:])
    flush()
    return edits


def convert(lines):
    out, parent = [], None
    state = {"cwd": "/", "session": str(uuid.uuid4()), "ts": "2026-01-01T00:00:00Z"}
    calls = {}  # call_id -> list of tool_use ids waiting for that call's output

    def entry(kind, message, **extra):
        nonlocal parent
        u = str(uuid.uuid4())
        e = {"parentUuid": parent, "isSidechain": False, "userType": "external", "cwd": state["cwd"],
             "sessionId": state["session"], "version": "2.0.30", "gitBranch": "main", "type": kind,
             "uuid": u, "timestamp": state["ts"], "message": message, **extra}
        parent = u
        out.append(e)

    def assistant(content, stop="tool_use"):
        entry("assistant", {"id": f"msg_{uuid.uuid4().hex[:24]}", "type": "message", "role": "assistant",
                            "model": "codex", "content": content, "stop_reason": stop})

    for raw in lines:
        try:
            o = json.loads(raw)
        except ValueError:
            continue
        if not isinstance(o, dict):
            continue
        state["ts"] = o.get("timestamp") or state["ts"]
        p = o.get("payload") or {}
        kind, ptype = o.get("type"), p.get("type")
        if kind == "session_meta":
            state["cwd"] = p.get("cwd") or state["cwd"]
            state["session"] = p.get("id") or p.get("session_id") or state["session"]
        elif kind == "turn_context" and p.get("cwd"):
            state["cwd"] = p["cwd"]
        elif kind == "event_msg" and ptype == "user_message" and (p.get("message") or "").strip():
            entry("user", {"role": "user", "content": p["message"].strip()})
        elif kind == "response_item" and ptype == "message" and p.get("role") == "assistant":
            text = "".join(c.get("text", "") for c in p.get("content") or [] if isinstance(c, dict)).strip()
            if text:
                assistant([{"type": "text", "text": text}], stop="end_turn")
        elif kind == "response_item" and ptype in ("function_call", "custom_tool_call"):
            raw_in = p.get("arguments") if ptype == "function_call" else p.get("input")
            name = p.get("name") or ""
            if name == "apply_patch":
                patch = raw_in if isinstance(raw_in, str) else ""
                if ptype == "function_call":
                    patch = _args(raw_in).get("input") or _args(raw_in).get("patch") or patch
                tools = patch_edits(patch, state["cwd"])
            else:
                cmd = command_of(name, raw_in)
                tools = [("Bash", {"command": cmd})] if cmd else []
            ids = []
            for tool, inp in tools:
                use_id = f"toolu_{uuid.uuid4().hex[:24]}"
                ids.append((use_id, tool, inp))
                assistant([{"type": "tool_use", "id": use_id, "name": tool, "input": inp}])
            if ids:
                calls[p.get("call_id")] = ids
        elif kind == "response_item" and ptype in ("function_call_output", "custom_tool_call_output"):
            code, body = output_of(p.get("output"))
            for use_id, tool, inp in calls.pop(p.get("call_id"), []):
                rejected = body.lstrip().lower().startswith(("error", "apply_patch verification failed"))
                failed = bool(code) if tool == "Bash" else (code not in (None, 0) or rejected)
                if tool == "Bash":
                    content = f"Exit code {code}\n{body}" if failed else body
                    tur = f"Error: {content}" if failed else {"stdout": body, "stderr": "", "interrupted": False,
                                                                  "isImage": False}
                else:
                    content = f"<tool_use_error>{body}</tool_use_error>" if failed else \
                        f"The file {inp['file_path']} has been updated."
                    tur = f"Error: {body}" if failed else {"filePath": inp["file_path"],
                                                           "oldString": inp.get("old_string"),
                                                           "newString": inp.get("new_string"),
                                                           "content": inp.get("content"), "userModified": False,
                                                           "replaceAll": False}
                entry("user", {"role": "user", "content": [{"tool_use_id": use_id, "type": "tool_result",
                                                            "content": content, "is_error": failed}]},
                      toolUseResult=tur)
    return out


def main(argv):
    if len(argv) != 3:
        sys.exit(__doc__.strip().splitlines()[-1])
    with open(argv[1], encoding="utf-8") as fh:
        entries = convert(fh)
    with open(argv[2], "w", encoding="utf-8") as fh:
        for e in entries:
            fh.write(json.dumps(e, ensure_ascii=False) + "\n")
    results = [b for e in entries if e["type"] == "user" and isinstance(e["message"]["content"], list)
               for b in e["message"]["content"]]
    print(f"{argv[2]}: {len(entries)} entries, {len(results)} tool results, "
          f"{sum(1 for b in results if b['is_error'])} failed")


if __name__ == "__main__":
    main(sys.argv)
