"""Writing session summaries: after each learning job, from a transcript, or read on demand.

* `update_session(store, session_id, cfg, now)` — the learning worker's call after each job of a
  captured session (`jobs/worker.py`): the session's events from the store, git facts read now
  (the work tree is still the session's: branch, the commits between the HEAD the session started
  on — recorded at SessionStart, `head.py` — and HEAD now, what is dirty), the offline summary
  (`summarize.build`), a narrative when a model is configured (`narrative.py`), one row written
  (`store.put_session_summary`). Rewritten after every job, so it always covers the whole session.
* `store_transcript(store, parsed, project_id, root, cfg, now)` — the same for a transcript
  parsed by `observe.transcript.parse_file` (`ace learn --transcript`): no git facts (today's
  work tree is not the session's), the branch the transcript recorded.
* `summary_of(store, session_id)` — the stored summary, else one built now from the captured
  events without writing it (views of sessions captured before summaries existed).

What is injected later is screened here, where there is time, field by field (`trust.py`: the
lesson safety policy for every field, the provenance rule for every field the user didn't write,
someone else's words quoted after who said them); the lines built from them pass the safety
policy once more as lines. What is kept out never reaches the stored `text` — the hook shows only
`text` and the screened `branch` — and is counted in the summary as `withheld`.

Cost: up to five `git` processes per update (worker only), the summary (milliseconds), one write.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ..core import log
from . import head as head_mod
from . import narrative, setting, summarize
from .trust import Fields

if TYPE_CHECKING:
    from ..store.records import SummaryInput

__all__ = ["update_session", "store_transcript", "summary_of", "git_state", "row_for", "screened_lines"]


def git_state(root: str | None, first_head: str | None, since: float | None = None) -> dict[str, Any]:
    """{branch, head, commits of the session, dirty: paths} of the work tree at `root`; {} outside git.
    The session's commits are those between the HEAD it started on (`first_head`, recorded at
    SessionStart: `head.py`) and HEAD now, on the path from one to the other (`git rev-list
    --ancestry-path first..HEAD`): never a date window, so a commit that was already there (however
    it is dated) is not the session's; `since` (its start) also leaves out commits made before it
    on a branch checked out later. No first HEAD: none."""
    from ..observe.git_context import commits_between, run_git

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
    head = (run_git(root, "rev-parse", "--verify", "-q", "HEAD") or "").strip() or None
    commits = commits_between(root, first_head, head, limit=20, since=since) if first_head and head else []
    return {"branch": branch.strip() if branch.strip() != "HEAD" else None, "head": head, "dirty": dirty,
            "commits": [{"sha": c["sha"][:7], "subject": c["subject"]} for c in commits]}


def screened_lines(summary_lines: list[str]) -> tuple[list[str], int]:
    """(the lines the hook may inject, how many were withheld): a second net over lines already
    built from screened fields (`trust.Fields`) — two fields side by side must not make what
    neither is alone. Hosts are the fields' business (screened there by origin)."""
    from ..playbook.safety import concerns, hosts

    kept, withheld = [], 0
    for line in summary_lines:
        reasons = [r for r in concerns(line, hosts(line)) if not r.startswith("contacts unknown host")]
        if reasons:
            withheld += 1
        else:
            kept.append(line)
    return kept, withheld


def trusted_hosts(cfg: Any, root: str | None) -> tuple[str, ...]:
    """Hosts a field may name: the user's `learning.trusted_hosts` and the project's git remote
    host — as for lessons, nothing the repository writes can add to them."""
    from ..core.project import identify
    from ..playbook.safety import remote_host

    try:
        hosts = tuple(str(h) for h in cfg["learning.trusted_hosts"] or ())
    except KeyError:
        hosts = ()
    remote = remote_host(identify(root).remote) if root and os.path.isdir(root) else None
    return hosts + ((remote,) if remote else ())


def attribution(events: list[dict[str, Any]], messages: list[dict[str, Any]], root: str | None) -> Any:
    """Where the risky parts of the session's commands came from (`observe.origins.Attribution`):
    the user's prompts, the project's files, else the order of what the agent ran and what it saw."""
    from ..observe import origins

    prompts = [str(m.get("text") or "") for m in messages if m.get("role") == "user" and not m.get("agent_id")]
    ordered = sorted(events, key=lambda e: (float(e.get("created_at") or 0.0), e.get("id") or 0))
    return origins.Attribution(prompts, origins.from_events(ordered), origins.project_text(root))


def row_for(session_id: str, project_id: int | None, summary: dict[str, Any], kind: str,
            hosts: tuple[str, ...] = (), attributed: Any = None) -> SummaryInput:
    """The `session_summaries` row of a summary: its lines built field by field through
    `trust.Fields` (`hosts`: `trusted_hosts`; `attributed`: `attribution` of its session) and
    screened again as lines into `text`; the branch a screened name."""
    fields = Fields(hosts, attributed)
    kept, withheld = screened_lines(summarize.lines(summary, fields))
    branch = fields.name((summary.get("git") or {}).get("branch"))
    summary["withheld"] = fields.withheld + withheld
    return {"session_id": session_id, "project_id": project_id, "version": summarize.VERSION, "kind": kind,
            "summary": summary, "text": "\n".join(kept), "branch": branch,
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
    first_head = store.get_state(session_id, head_mod.STATE_KEY)
    git = git_state(root, first_head, session.get("started_at")) if with_git else {}
    summary = summarize.build(data["tool_events"], data["messages"], root=root, git=git,
                              started_at=session.get("started_at"), live=bool(git))
    summary["status"] = session.get("status")
    kind = _with_narrative(summary, store.session_summary(session_id), cfg) if with_narrative else "offline"
    attributed = attribution(data["tool_events"], data["messages"], root)
    store.put_session_summary(row_for(session_id, session.get("project_id"), summary, kind,
                                      trusted_hosts(cfg, root), attributed), now)
    return summary


def _transcript_parts(parsed: Mapping[str, Any]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    events: list[dict[str, Any]] = []
    messages: list[dict[str, Any]] = []
    for agent in parsed.get("agents") or []:
        agent_id = agent.get("agent_id") or None
        events += [{**e, "agent_id": agent_id} for e in agent["events"]]
        if not agent_id:
            messages += agent["messages"]
    events.sort(key=lambda e: (e["created_at"], e["id"]))
    return events, messages


def transcript_summary(parsed: Mapping[str, Any], root: str | None) -> dict[str, Any]:
    """The summary of a parsed transcript (`observe.transcript.parse_file`), not written."""
    events, messages = _transcript_parts(parsed)
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
    attributed = attribution(*_transcript_parts(parsed), root)
    store.put_session_summary(row_for(str(session_id), project_id, summary, "offline", trusted_hosts(cfg, root),
                                      attributed), now)
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
    return {**row_for(session_id, session.get("project_id"), summary, "offline"), "computed": True}
