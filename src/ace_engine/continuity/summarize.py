"""A session's summary, offline, from what was captured: what was asked, changed, failed, fixed and left open.

`build(events, messages, root=…, git=…)` reads a session's tool events (every agent) and its main
agent's messages — the rows the hooks capture, or the same shapes parsed from a transcript — and
returns the facts, as a dict (`VERSION` names its shape):

* `requests` in the user's words (`facts.gist`; "continue" carries on the request before, a
  greeting is none), `main_request` (the first: what the session was opened for) and
  `last_request` (where it left off);
* `files` changed, each with the kind of change (Edit / MultiEdit / NotebookEdit: edited; Write:
  created or rewritten, from Claude Code's own answer; `rm` / `git rm`: deleted; a file created
  and deleted again is scratch and left out);
* `failures`: commands that failed (not cancelled, refused or a tool's own complaint) and whether
  a later run of the same check or command passed; `checks`: the last run of each kind of check
  (tests, lint, types, build, format) and its outcome;
* git: the branch, commits made (Claude Code's `git commit` answers, plus `git log` since the
  session started when `git` facts are given), a push, a pull request; `uncommitted`: the
  session's files still dirty when it was summarized (captured sessions only: a transcript read
  later says nothing about today's work tree);
* what is left open (`open`): checks left failing, a turn cut off, an announced action the
  session ended on, a question waiting for the user, what the agent or the user said is left
  (`facts.open_statements`, `facts.user_deferred`), uncommitted changes;
* `turns`: the same, one short entry per turn, for sessions of more than one;
* `carry`: whether the next session should hear about it at all — not a greeting, nor a question
  answered without changing anything.

`lines(summary)` (lines.py) renders it as plain lines, every field through the trust rule: what was
asked, what is left open, what was done (what `<ace-recent-context>` shows, its least important
lines dropped first to fit). Writing it to the
store, with git facts and an optional narrative, is `update.py`. Cost: one pass over the session's
events (the learning trajectory's step parser), a few regexes per message: milliseconds, tens of
them for hundreds of tool calls (bench/continuity_bench.py). No subprocess, no store.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

from ..capture.tools import EDIT_TOOLS
from ..observe import commands
from ..observe import trajectory as traj_mod
from . import VERSION, facts
from .lines import CHECK_NAMES, MAX_FILES_SHOWN, lines

__all__ = ["CHECK_NAMES", "MAX_FILES_SHOWN", "VERSION", "build", "lines", "open_count", "relative"]

_NOT_RUN = re.compile(r"command not found|Missing script|not recognized as|No such file or directory|"
                      r"ENOENT|is not installed|Unknown command", re.IGNORECASE)
_COMMIT_LINE = re.compile(r"^\[([^\]\s]+)(?: \([^)]*\))? ([0-9a-f]{7,40})\] (.+)$", re.MULTILINE)
_COMMIT_MESSAGE = re.compile(r"""\s-m\s*(?:"((?:[^"\\]|\\.)*)"|'([^']*)'|(\S+))""")
_PR_URL = re.compile(r"https://\S+/pull/\d+")
_RM = re.compile(r"^(?:git\s+rm|rm)\s+(.+)$")
_SCRATCH_DIRS = ("/tmp/", "/private/tmp/", "/var/folders/", "/dev/")


def _load(value: object) -> Any:
    if not isinstance(value, str) or value[:1] not in "{[":
        return value
    try:
        return json.loads(value)
    except ValueError:
        return value


def relative(path: str | None, root: str | None) -> str | None:
    """`path` inside `root` as a relative path (`/` or `\\` separators); outside it as given."""
    if not path:
        return None
    if root:
        for sep in ("/", "\\"):
            base = root.rstrip("/\\") + sep
            if path.startswith(base):
                return path[len(base):].replace("\\", "/")
    return path


def _request_groups(turns: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Turns grouped under the request they work on: a "continue" turn, or one without a
    prompt, joins the request before; a greeting-only turn asks nothing."""
    groups: list[dict[str, Any]] = []
    for turn in turns:
        prompts = [p["text"] for p in turn["prompts"] if not facts.trivial(p["text"])]
        asked = [p for p in prompts if not facts.continuation(p)]
        if asked:
            groups.append({"text": facts.gist(asked[0]), "turns": [turn]})
        elif groups:
            groups[-1]["turns"].append(turn)
        elif turn["events"] or prompts:
            groups.append({"text": facts.gist(prompts[0]) if prompts else "", "turns": [turn]})
    return groups


def _files(steps: Sequence[Mapping[str, Any]], root: str | None) -> list[dict[str, Any]]:
    """Files changed, in the order first touched: {path, change, edits}."""
    seen: dict[str, dict[str, Any]] = {}
    for step in steps:
        if not step.get("success"):
            continue
        if step["kind"] == "edit":
            response = step.get("_response")
            for path in step["files"]:
                path = relative(path, root) or path
                if path.startswith(_SCRATCH_DIRS):
                    continue
                entry = seen.setdefault(path, {"path": path, "change": "edited", "edits": 0})
                if not entry["edits"] and step["tool"] == "Write":
                    created = isinstance(response, dict) and response.get("type") == "create"
                    entry["change"] = "created" if created else "rewritten"
                entry["edits"] += 1
        elif step.get("command"):
            m = _RM.match(commands.key(step["command"]))
            if not m:
                continue
            for arg in m.group(1).split():
                if arg.startswith("-") or any(c in arg for c in "*?$`;&|"):
                    continue
                path = relative(arg, root) or arg
                known = seen.get(path)
                if known is not None and known["change"] in ("created", "rewritten"):
                    del seen[path]  # written and removed again: scratch
                elif known is not None:
                    known["change"] = "deleted"
                elif not path.startswith(("/", "~")) and "." in path.rsplit("/", 1)[-1]:
                    seen[path] = {"path": path, "change": "deleted", "edits": 0}
    return list(seen.values())


def _printed(step: Mapping[str, Any]) -> str:
    """The line the failed command printed, as it printed it: the error signature is normalised for
    matching (git's `fatal:` reads `error:`, paths are cut), so the line of the output it came from is
    quoted when there is one."""
    sig = str(step.get("error") or "")
    body = sig.removeprefix("error: ")[:40]
    if body:
        for line in str(step.get("output") or "").splitlines():
            if body in line:
                return line.strip()
    return sig or str(step.get("result") or "").removeprefix("failed: ")


def _command_runs(steps: Sequence[Mapping[str, Any]]) -> tuple[list[dict[str, Any]], dict[str, dict[str, Any]]]:
    """(failures with whether a later run passed, the last run of each kind of check)."""
    failures: dict[str, dict[str, Any]] = {}
    checks: dict[str, dict[str, Any]] = {}
    for step in steps:
        command = step.get("command")
        if not command:
            continue
        kind = step["kind"]
        # A check, or a git operation, is the same one again with other arguments: `git push` failing
        # and `git push --set-upstream origin x` passing is a failure retried and fixed.
        group = f"{commands.family(command)}:{kind}" if kind in commands.CHECK_KINDS + ("vcs",) \
            else commands.key(command)
        # `test && lint` passing passes both; failing, it is charged to the first (we can't tell).
        kinds = step["_kinds"] if step["success"] else [kind]
        result = step.get("result") or ""
        for check in kinds if kind in commands.CHECK_KINDS else []:
            checks[check] = {"command": facts.cut(commands.key(command), 100), "passed": bool(step["success"]),
                             "result": facts.cut(result.removeprefix("failed: "), 160),
                             "not_run": not step["success"] and bool(_NOT_RUN.search(
                                 result + " " + str(step.get("output") or "")[:400]))}
        if step["success"]:
            for failure in failures.values():
                if failure["group"] == group:
                    failure["fixed"] = True
        elif step.get("failure", "failed") == "failed" and kind != "readonly":
            failures.setdefault(group, {"group": group, "command": facts.cut(commands.key(command), 100), "kind": kind,
                                        "error": facts.cut(_printed(step), 160),
                                        "fixed": False})["fixed"] = False
    return [{k: v for k, v in f.items() if k != "group"} for f in failures.values()], checks


def _git_facts(steps: Sequence[Mapping[str, Any]], git: Mapping[str, Any]) -> dict[str, Any]:
    commits: list[dict[str, str]] = []
    pushed, pr = False, None
    for step in steps:
        command = step.get("command") or ""
        if not step.get("success") or not command:
            continue
        key = commands.key(command)
        output = str(step.get("output") or step.get("result") or "")
        if key.startswith("git commit"):
            m = _COMMIT_LINE.search(output)
            if m:
                commits.append({"sha": m.group(2)[:10], "subject": facts.cut(m.group(3), 100)})
            else:
                msg = _COMMIT_MESSAGE.search(command)
                subject = next((g for g in msg.groups() if g), "") if msg else ""
                commits.append({"sha": "", "subject": facts.cut(subject.splitlines()[0] if subject else "", 100)})
        elif key.startswith("git push"):
            pushed = True
        elif key.startswith("gh pr create"):
            found = _PR_URL.search(output)
            pr = found.group(0) if found else pr or "created"
    known = {c["sha"][:7] for c in commits if c["sha"]}
    for c in git.get("commits") or []:
        sha = str(c.get("sha") or "")[:10]
        if sha[:7] not in known:
            commits.append({"sha": sha, "subject": facts.cut(str(c.get("subject") or ""), 100)})
    return {"branch": git.get("branch"), "commits": commits[-8:], "pushed": pushed, "pr": pr}


def _steps(events: Sequence[Mapping[str, Any]], root: str | None) -> list[dict[str, Any]]:
    out = []
    for n, event in enumerate(events, 1):
        step: dict[str, Any] = dict(traj_mod.step_from_event(dict(event), n, root))
        if step["tool"] in EDIT_TOOLS:
            step["_response"] = _load(event.get("response"))
        command = step.get("command")
        step["_kinds"] = list(dict.fromkeys(
            k for k in map(commands.kind, commands.parts(command)) if k in commands.CHECK_KINDS
        )) if command and step["success"] and step["kind"] in commands.CHECK_KINDS else [step["kind"]]
        out.append(step)
    return out


def build(events: Sequence[Mapping[str, Any]], messages: Sequence[Mapping[str, Any]], *, root: str | None,
          git: Mapping[str, Any] | None = None, branch: str | None = None, started_at: float | None = None,
          live: bool = False) -> dict[str, Any]:
    """The summary of one session (see the module docstring). `messages`: prompts and final
    messages; only the main agent's (no `agent_id`) are read. `git`: facts from `git` itself
    (branch, commits, dirty) — given only while the work tree is the session's (`live`)."""
    git = git or {}
    main = [m for m in messages if not m.get("agent_id")]
    turns = traj_mod.split_turns(list(events), main)
    for turn in turns:
        turn["steps"] = _steps(turn["events"], root)
    steps = [s for t in turns for s in t["steps"]]
    groups = _request_groups(turns)
    main_group = groups[0] if groups else None
    files = _files(steps, root)
    failures, checks = _command_runs(steps)
    gitfacts = _git_facts(steps, git)
    gitfacts["branch"] = gitfacts["branch"] or branch

    last = turns[-1] if turns else None
    final = last["assistant"][-1] if last and last["assistant"] else None
    # Work done after the turn's last words: the session stopped mid-turn (a message between two
    # tool calls is no final answer).
    work_after = [s for s in (last["steps"] if last else [])
                  if (final is None or (s.get("at") or 0) > final["created_at"])
                  and (s["kind"] == "edit" or (s.get("command") and s["kind"] != "readonly"))]
    cut_off = bool(work_after)
    said = facts.open_statements(None if cut_off else _last_words(turns))
    prompts = [p["text"] for t in turns for p in t["prompts"]]
    deferred = next((d for d in map(facts.user_deferred, prompts[-1:]) if d), None)
    dirty = [str(p) for p in git.get("dirty") or []]
    touched = {f["path"] for f in files if f["change"] != "deleted"}
    uncommitted = [p for p in dirty if p in touched]

    open_ends: list[dict[str, str]] = []
    if cut_off:
        doing = work_after[-1].get("action") or work_after[-1]["tool"]
        open_ends.append({"kind": "interrupted", "text": facts.cut(str(doing), 120)})
    if said["stopped"]:
        open_ends.append({"kind": "stopped", "text": str(said["stopped"])})
    for kind in ("test", "typecheck", "lint", "build", "format"):
        check = checks.get(kind)
        if check and not check["passed"] and not check["not_run"]:
            open_ends.append({"kind": "failing", "check": kind, "text": f"{check['command']}",
                              "error": check["result"]})
    if said["waiting"]:
        open_ends.append({"kind": "waiting", "text": str(said["waiting"])})
    for item in said["next"]:
        open_ends.append({"kind": "next", "text": str(item)})
    if deferred:
        open_ends.append({"kind": "user", "text": deferred})
    if uncommitted:
        open_ends.append({"kind": "uncommitted", "text": ", ".join(uncommitted[:MAX_FILES_SHOWN]),
                          "more": str(len(uncommitted) - min(len(uncommitted), MAX_FILES_SHOWN))})

    did_work = bool(files) or bool(gitfacts["commits"]) or any(
        s["success"] and s.get("command") and commands.is_state_changing(s["command"]) for s in steps)
    times = [float(e["created_at"]) for e in events] + [float(m["created_at"]) for m in main]
    summary: dict[str, Any] = {
        "version": VERSION,
        "requests": [g["text"] for g in groups if g["text"]],
        "main_request": main_group["text"] if main_group else "",
        "last_request": groups[-1]["text"] if groups else "",
        "files": files,
        "failures": failures[:8],
        "checks": checks,
        "git": gitfacts,
        "uncommitted": uncommitted if live else None,
        "dirty_elsewhere": len([p for p in dirty if p not in touched]) if live else None,
        "open": open_ends,
        "interrupted": cut_off,
        "final": facts.cut(final["text"], 300) if final else "",
        "carry": bool(open_ends) or did_work,
        "started_at": started_at if started_at is not None else (min(times) if times else None),
        "last_at": max(times) if times else started_at,
        "counts": {"turns": len(turns), "prompts": len(prompts), "tool_calls": len(steps),
                   "failed_calls": sum(1 for s in steps if not s["success"])},
        "turns": _turn_entries(turns, root) if len(turns) > 1 else [],
    }
    return summary


def _worked(turn: Mapping[str, Any]) -> bool:
    return any(s["kind"] == "edit" or (s.get("command") and s["kind"] != "readonly") for s in turn["steps"])


def _last_words(turns: list[dict[str, Any]]) -> str | None:
    """The final message that says what is left: the last turn's, unless that turn did no work
    and said nothing either way ("continue" → "Back on it.", "thanks" → "You're welcome"):
    chatter doesn't close what an earlier turn left open."""
    for turn in reversed(turns):
        text = turn["assistant"][-1]["text"] if turn["assistant"] else None
        if text is None or _worked(turn):
            return text
        said = facts.open_statements(text)
        if said["next"] or said["waiting"] or said["stopped"] or facts.closes(text):
            return text
    return None


def _turn_entries(turns: list[dict[str, Any]], root: str | None) -> list[dict[str, Any]]:
    """One short entry per turn (the last 20): its request, files, checks and final words."""
    out = []
    for n, turn in enumerate(turns, 1):
        prompts = [p["text"] for p in turn["prompts"]]
        _, checks = _command_runs(turn["steps"])
        out.append({
            "n": n,
            "request": facts.gist(prompts[0]) if prompts else "",
            "files": [f["path"] for f in _files(turn["steps"], root)][:MAX_FILES_SHOWN],
            "checks": {k: v["passed"] for k, v in checks.items()},
            "failed": sum(1 for s in turn["steps"] if not s["success"]),
            "final": facts.cut(turn["assistant"][-1]["text"], 200) if turn["assistant"] else "",
        })
    return out[-20:]


def open_count(summary: Mapping[str, Any]) -> int:
    return len(summary.get("open") or [])
