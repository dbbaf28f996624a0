"""`ace import --from claude-mem`: a claude-mem user's history brought into ace-engine — each of
its sessions as a session of the right project (its prompts, and its observations as the
session's messages, so MCP `search_history` and `ace sessions` find them), its summary as the
session's summary (`ace recent`, the next session's start), and its observations of fixes,
gotchas and decisions as candidate lessons.

Which project: claude-mem names a session's project by the basename of its git root
(`getProjectName`). A name maps to the project of the repository the import runs in when that
repository's directory has this name, else to a project the store already knows whose root
has it; a name that maps to none is skipped and said so (run the import inside that repository).
With `only` (the CLI's --project), only that project's sessions are imported.

Trust: claude-mem's database is another tool's file. Every text goes through the capture
sanitizer (private spans, caps) and the store's redacting connection; lessons through the
playbook (the lesson safety policy: flagged ones are quarantined), as `candidate` — seen once
elsewhere, shown only after a session here confirms them or the user keeps them — with source
`import` (their words are text someone else wrote, for the provenance rule). Summaries are
rebuilt by `continuity` from the prompts, the claude-mem summary kept as the model's narrative.

Idempotent: a session id the store has (imported before, or captured by the hooks) is skipped;
a lesson already in the playbook is not added twice. `dry_run` reads everything, writes nothing.

Cost: one pass over claude-mem's sessions, three indexed reads each; one playbook add per
lesson-worthy observation.
"""

from __future__ import annotations

import json
import os
import time
from collections import Counter
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..continuity import update as continuity_update
from ..core import config as config_mod
from ..core.project import Project, find_git_root, identify
from ..playbook.playbook import Playbook
from ..redact.sanitize import sanitize
from ..store.claude_mem_sql import ClaudeMem

if TYPE_CHECKING:
    from ..store.interfaces import Store

SOURCE = "claude-mem"
# claude-mem's `platform_source` → our agent names (`agents.registry.NAMES`, as the hooks record them).
PLATFORM_AGENTS = {"claude": "claude", "claude-code": "claude", "codex": "codex", "gemini": "gemini",
                   "gemini-cli": "gemini"}
# Observations worth a candidate lesson, and the section they go to: claude-mem's types
# (`bugfix`, `decision`, …) and concepts (`gotcha`, `problem-solution`, `pattern`, `trade-off`).
LESSON_SECTIONS = {"bugfix": "troubleshooting_and_pitfalls", "gotcha": "troubleshooting_and_pitfalls",
                   "problem-solution": "troubleshooting_and_pitfalls", "decision": "strategies_and_hard_rules",
                   "pattern": "strategies_and_hard_rules", "trade-off": "strategies_and_hard_rules"}
LESSON_CHARS = 300


def _seconds(epoch: object) -> float | None:
    """claude-mem's epochs are milliseconds (`Date.now()`); seconds pass through."""
    if not isinstance(epoch, (int, float)) or epoch <= 0:
        return None
    return float(epoch) / 1000 if epoch > 1e11 else float(epoch)


def _list(value: object) -> list[str]:
    """A JSON list stored as text (`facts`, `concepts`, `files_*`), its strings; [] otherwise."""
    if isinstance(value, str):
        text = value
        try:
            value = json.loads(text)
        except ValueError:
            return [text] if text.strip() and not text.lstrip().startswith("[") else []
    return [v for v in value if isinstance(v, str) and v.strip()] if isinstance(value, list) else []


def observation_text(obs: dict[str, Any]) -> str:
    """One observation as a message: what `search_history` shows and finds."""
    head = " — ".join(str(obs[k]) for k in ("title", "subtitle") if obs.get(k))
    body = [f"claude-mem {obs.get('type') or 'observation'}: {head}".rstrip(": ")]
    if obs.get("narrative"):
        body.append(str(obs["narrative"]))
    elif obs.get("text"):
        body.append(str(obs["text"]))
    facts = _list(obs.get("facts"))
    if facts:
        body.append("Facts: " + "; ".join(facts))
    files = _list(obs.get("files_modified")) or _list(obs.get("files_read"))
    if files:
        body.append("Files: " + ", ".join(files[:10]))
    return "\n".join(body)


def lesson_of(obs: dict[str, Any]) -> tuple[str, str] | None:
    """(content, section) of the candidate lesson an observation makes, or None."""
    kinds = [str(obs.get("type") or "")] + _list(obs.get("concepts"))
    section = next((LESSON_SECTIONS[k] for k in kinds if k in LESSON_SECTIONS), None)
    title = str(obs.get("title") or "").strip()
    if section is None or not title:
        return None
    facts = _list(obs.get("facts"))
    detail = facts[0] if facts else str(obs.get("narrative") or "").split(". ")[0]
    content = f"{title.rstrip('.')}: {detail.strip()}" if detail.strip() else title
    return content[:LESSON_CHARS].rstrip(), section


class _Projects:
    """claude-mem project names → our projects (see the module docstring)."""

    def __init__(self, store: Store, run_dir: str | None, only: Project | None) -> None:
        self.only = only
        self.here = identify(run_dir) if run_dir and find_git_root(run_dir) else None
        self.known = {os.path.basename(p["root"].rstrip("/")): p for p in store.list_projects()}
        self.cache: dict[str, Project | None] = {}

    def of(self, name: str) -> Project | None:
        if name not in self.cache:
            self.cache[name] = self._find(name)
        return self.cache[name]

    def _find(self, name: str) -> Project | None:
        for project in (self.only,) if self.only is not None else (self.here,):
            if project is not None and name in (os.path.basename(project.main_root.rstrip("/")),
                                                os.path.basename(project.root.rstrip("/")), project.name):
                return project
        if self.only is not None:
            return None
        row = self.known.get(name)
        return identify(row["root"]) if row and os.path.isdir(row["root"]) else None


def import_claude_mem(store: Store, path: str, *, run_dir: str | None = None, only: Project | None = None,
                      dry_run: bool = False, now: float | None = None,
                      on_session: Callable[[int, int], object] | None = None) -> dict[str, Any]:
    """Import claude-mem's database at `path`. Returns {path, dry_run, sessions: {seen, imported,
    already_here}, prompts, observations, summaries, lessons: {created, quarantined, already},
    projects: {name: {root, sessions}}, skipped_projects: {name: sessions}}."""
    now = now or time.time()
    totals: Counter[str] = Counter()
    projects: dict[str, dict[str, Any]] = {}
    skipped: Counter[str] = Counter()
    playbooks: dict[str, Playbook] = {}
    resolve = _Projects(store, run_dir, only)
    with ClaudeMem(path) as db:
        total = db.count_sessions()
        for n, session in enumerate(db.sessions(), 1):
            name = str(session.get("project") or "")
            project = resolve.of(name)
            if project is None:
                if not (only is not None and name):
                    skipped[name or "(none)"] += 1
                if on_session:
                    on_session(n, total)
                continue
            entry = projects.setdefault(name, {"root": project.root, "key": project.key, "sessions": 0})
            entry["sessions"] += 1
            cfg = config_mod.load(project.root)
            if project.key not in playbooks and not dry_run:
                playbooks[project.key] = Playbook(store, project, trusted_hosts=cfg["learning.trusted_hosts"] or ())
            _session(store, db, session, project, playbooks.get(project.key), cfg, totals, dry_run, now)
            if on_session:
                on_session(n, total)
    return {"path": os.path.abspath(path), "dry_run": dry_run, "total_sessions": total,
            "sessions": {k: totals[k] for k in ("seen", "imported", "already_here")},
            "prompts": totals["prompts"], "observations": totals["observations"], "summaries": totals["summaries"],
            "lessons": {k: totals[f"lessons_{k}"] for k in ("created", "quarantined", "already", "worth")},
            "projects": projects, "skipped_projects": dict(skipped)}


def _session(store: Store, db: ClaudeMem, session: dict[str, Any], project: Project, playbook: Playbook | None,
             cfg: Any, totals: Counter[str], dry_run: bool, now: float) -> None:
    totals["seen"] += 1
    sid = str(session.get("content_session_id") or session.get("memory_session_id") or f"claude-mem-{session['id']}")
    memory_id = str(session.get("memory_session_id") or "")
    agent = PLATFORM_AGENTS.get(str(session.get("platform_source") or "claude").lower(),
                                str(session.get("platform_source") or "claude")[:40])
    started = _seconds(session.get("started_at_epoch")) or now
    cap = cfg["capture.max_message_chars"]
    prompts: list[dict[str, Any]] = [
        {"id": i, "role": "user", "text": sanitize(str(p.get("prompt_text") or ""), cap), "uuid": f"p{i}",
         "created_at": _seconds(p.get("created_at_epoch")) or started}
        for i, p in enumerate(db.prompts(str(session.get("content_session_id") or "")), 1)]
    if not prompts and session.get("user_prompt"):
        prompts = [{"id": 1, "role": "user", "text": sanitize(str(session["user_prompt"]), cap), "uuid": "p1",
                    "created_at": started}]
    observations = db.observations(memory_id)
    summaries = db.summaries(memory_id)
    totals["prompts"] += len(prompts)
    totals["observations"] += len(observations)
    totals["summaries"] += bool(summaries)
    worth = [(o, lesson) for o in observations if (lesson := lesson_of(o)) is not None]
    totals["lessons_worth"] += len(worth)
    if dry_run or playbook is None:
        totals["imported"] += not store.has_session(sid)
        return
    notes: list[dict[str, Any]] = [{"role": "assistant", "text": sanitize(observation_text(o), cap),
              "created_at": _seconds(o.get("created_at_epoch")) or started} for o in observations]
    last = max([m["created_at"] for m in prompts + notes] + [started])
    row = {"session_id": sid, "project_id": playbook.project_id, "cwd": project.root, "agent": agent,
           "source": SOURCE, "started_at": started, "ended_at": _seconds(session.get("completed_at_epoch")) or last}
    if not store.import_session(row, prompts + notes):
        totals["already_here"] += 1
        return
    totals["imported"] += 1
    if summaries and store.session_summary(sid) is None:
        _summary(store, sid, prompts, summaries[-1], playbook.project_id, project.root, agent, cfg, now)
    for obs, (content, section) in worth:
        provenance = {"source": "import", "imported_from": SOURCE, "agent": agent, "session_id": sid,
                      "sessions": [sid], "observation": obs.get("id"), "task": str(obs.get("title") or "")[:200],
                      "evidence": sanitize(observation_text(obs), 800),
                      "files": (_list(obs.get("files_modified")) or _list(obs.get("files_read")))[:10]}
        bullet, created = playbook.add(content, section, status="candidate", source="import", provenance=provenance,
                                       reason=f"imported from claude-mem (observation {obs.get('id')})",
                                       session_id=sid, now=now)
        key = "already" if not created else "quarantined" if bullet["status"] == "quarantined" else "created"
        totals[f"lessons_{key}"] += 1


def _summary(store: Store, sid: str, prompts: list[dict[str, Any]], found: dict[str, Any], project_id: int | None,
             root: str, agent: str, cfg: Any, now: float) -> None:
    """The session's summary: built from its prompts, claude-mem's own summary as the narrative."""
    parsed = {"session_id": sid, "git_branch": None, "agents": [{"agent_id": "", "events": [], "messages": prompts}]}
    summary = continuity_update.transcript_summary(parsed, root)
    parts = [f"{label}: {str(found[key]).strip()}" for key, label in (
        ("request", "asked"), ("completed", "done"), ("learned", "learned"), ("next_steps", "next"))
        if found.get(key) and str(found[key]).strip()]
    summary["narrative"] = sanitize("; ".join(parts), 400)
    summary["status"] = "imported"
    summary["last_at"] = _seconds(found.get("created_at_epoch")) or summary.get("last_at")
    row = continuity_update.row_for(sid, project_id, summary, SOURCE, continuity_update.trusted_hosts(cfg, root),
                                    continuity_update.attribution([], prompts, root))
    store.put_session_summary({**row, "agent": agent}, now)
