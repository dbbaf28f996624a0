"""Writing session summaries: after each learning job, from a transcript, or read on demand.

* `update_session(store, session_id, cfg, now)` — the learning worker's call after each job of a
  captured session (`jobs/worker.py`): the session's events from the store, git facts read now
  (the work tree is still the session's: branch, commits since it started, what is dirty), the
  offline summary (`summarize.build`), a narrative when a model is configured (`narrative.py`),
  one row written (`store.put_session_summary`). Rewritten after every job, so it always covers
  the whole session.
* `store_transcript(store, parsed, project_id, root, cfg, now)` — the same for a transcript
  parsed by `learning.transcript.parse_file` (`ace learn --transcript`): no git facts (today's
  work tree is not the session's), the branch the transcript recorded.
* `summary_of(store, session_id)` — the stored summary, else one built now from the captured
  events without writing it (views of sessions captured before summaries existed).

What is injected later is screened here, where there is time: a line that trips the lesson
safety policy (`playbook.safety.concerns`: commands that fetch and run code, exfiltrate, disable
checks, or text that speaks to the model) is kept out of the stored `text` — the hook shows only
`text` — and counted in the summary as `withheld`. Hosts named by a line are the session's own
business here, and secrets were redacted at capture, so those two concerns don't withhold.

Cost: up to three `git` processes per update (worker only), the summary (milliseconds), one write.
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping
from typing import Any

from .. import log
from . import narrative, setting, summarize

__all__ = ["update_session", "store_transcript", "summary_of", "git_state", "row_for", "screened_lines"]


def git_state(root: str | None, since: float | None) -> dict[str, Any]:
    """{branch, commits since `since`, dirty: paths} of the work tree at `root`; {} outside git."""
    from ..learning.git_context import run_git

    if not root or not os.path.isdir(root):
        return {}
    branch = run_git(root, "rev-parse", "--abbrev-ref", "HEAD")
    if branch is None:
        return {}
    status = run_git(root, "status", "--porcelain", "--untracked-files=normal") or ""
    dirty = []
    for line in status.splitlines():
        path = line[3:].strip()
        if " -> " in path:  # a rename: the new name
            path = path.split(" -> ", 1)[1]
        if path:
            dirty.append(path.strip('"'))
    commits = []
    if since:
        # Whole seconds, rounded up: a commit of the second the session started came before it.
        log_text = run_git(root, "log", f"--since=@{math.ceil(since)}", "--format=%h%x1f%s", "-n", "20") or ""
        for line in log_text.splitlines():
            sha, _, subject = line.partition("\x1f")
            if sha:
                commits.append({"sha": sha, "subject": subject})
    return {"branch": branch.strip() if branch.strip() != "HEAD" else None, "dirty": dirty, "commits": commits[::-1]}


def screened_lines(summary_lines: list[str]) -> tuple[list[str], int]:
    """(the lines the hook may inject, how many were withheld by the safety policy)."""
    from ..playbook.safety import concerns, hosts

    kept, withheld = [], 0
    for line in summary_lines:
        reasons = [r for r in concerns(line, hosts(line))
                   if not r.startswith("contacts unknown host") and r != "contains a secret"]
        if reasons:
            withheld += 1
        else:
            kept.append(line)
    return kept, withheld


def row_for(session_id: str, project_id: int | None, summary: dict[str, Any], kind: str) -> dict[str, Any]:
    """The `session_summaries` row of a summary (its lines screened into `text`)."""
    kept, withheld = screened_lines(summarize.lines(summary))
    summary["withheld"] = withheld
    return {"session_id": session_id, "project_id": project_id, "version": summarize.VERSION, "kind": kind,
            "summary": summary, "text": "\n".join(kept), "branch": (summary.get("git") or {}).get("branch"),
            "open_ends": summarize.open_count(summary), "carry": bool(summary.get("carry")) and bool(kept),
            "last_at": float(summary.get("last_at") or summary.get("started_at") or 0.0)}


def _with_narrative(summary: dict[str, Any], previous: Mapping[str, Any] | None, cfg: Any) -> str:
    """Add the narrative (reused while the facts are the same); the row's kind."""
    if not summary.get("carry") or not narrative.wanted(cfg):
        return "offline"
    key = narrative.facts_key(summarize.lines(summary))
    old = (previous or {}).get("summary") or {}
    text = old.get("narrative") if old.get("narrative_of") == key else narrative.narrate(
        summary, summarize.lines(summary), cfg)
    if not text:
        return "offline"
    summary["narrative"], summary["narrative_of"] = text, key
    return "llm"


def update_session(store: Any, session_id: str, cfg: Any, now: float, *, with_narrative: bool = True,
                   with_git: bool = True) -> dict[str, Any] | None:
    """Build and write the summary of a captured session; the summary, or None (continuity off,
    or no such session)."""
    if not setting(cfg, "continuity.enabled"):
        return None
    session = store.session(session_id)
    if session is None:
        return None
    data = store.continuity_events(session_id)
    root = session.get("project_root") or session.get("cwd")
    git = git_state(root, session.get("started_at")) if with_git else {}
    summary = summarize.build(data["tool_events"], data["messages"], root=root, git=git,
                              started_at=session.get("started_at"), live=bool(git))
    summary["status"] = session.get("status")
    kind = _with_narrative(summary, store.session_summary(session_id), cfg) if with_narrative else "offline"
    store.put_session_summary(row_for(session_id, session.get("project_id"), summary, kind), now)
    return summary


def transcript_summary(parsed: Mapping[str, Any], root: str | None) -> dict[str, Any]:
    """The summary of a parsed transcript (`learning.transcript.parse_file`), not written."""
    events: list[dict[str, Any]] = []
    messages: list[dict[str, Any]] = []
    for agent in parsed.get("agents") or []:
        agent_id = agent.get("agent_id") or None
        events += [{**e, "agent_id": agent_id} for e in agent["events"]]
        if not agent_id:
            messages += agent["messages"]
    events.sort(key=lambda e: (e["created_at"], e["id"]))
    summary = summarize.build(events, messages, root=root, branch=parsed.get("git_branch"), live=False)
    summary["status"] = "transcript"
    return summary


def store_transcript(store: Any, parsed: Mapping[str, Any], project_id: int | None, root: str | None, cfg: Any,
                     now: float) -> dict[str, Any] | None:
    """Write the summary of a transcript learned with `ace learn --transcript`; None when
    continuity is off or the transcript names no session."""
    session_id = parsed.get("session_id")
    if not session_id or not setting(cfg, "continuity.enabled"):
        return None
    summary = transcript_summary(parsed, root)
    store.put_session_summary(row_for(str(session_id), project_id, summary, "offline"), now)
    return summary


def summary_of(store: Any, session_id: str) -> dict[str, Any] | None:
    """The stored summary row of a session, else one built now from its captured events (not
    written; `computed` set) — None when the store knows nothing of the session."""
    found = store.session_summary(session_id)
    if found is not None:
        return dict(found)
    session = store.session(session_id)
    if session is None:
        return None
    try:
        data = store.continuity_events(session_id)
        root = session.get("project_root") or session.get("cwd")
        summary = summarize.build(data["tool_events"], data["messages"], root=root,
                                  started_at=session.get("started_at"))
    except Exception as exc:  # noqa: BLE001 — a view shows the session without its summary
        log.warning("continuity", f"summary of {session_id} could not be built: {type(exc).__name__}: {exc}")
        return None
    summary["status"] = session.get("status")
    row = row_for(session_id, session.get("project_id"), summary, "offline")
    row["computed"] = True
    return row
