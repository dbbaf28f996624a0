"""Learning from Claude Code transcripts: one file (`ace learn --transcript FILE`) or every session
of a project that Claude Code kept (`ace learn --all-transcripts`).

Where the lessons go (`choose_project`), unless the caller names a project (`--project`): the git
repository `ace learn` runs in — the user who runs it is looking at that project; outside any
repository, the repository (or directory) the session ran in, when it exists on this machine.
Neither: a `TranscriptError` saying to pass `--project`. The answer always says which project and
why. Worktrees of one repository are one project (`project.Project.key`).

Idempotent: a turn is learned under the key `t:<session>:<agent>:<uuid of its first prompt>`
(`pipeline._learn_direct` skips a key already done), so learning a file again only learns the
turns added since, and a session the hooks captured is not learned a second time from its
transcript unless forced.

The backfill (`find_transcripts`, `learn_all`) looks in `$CLAUDE_CONFIG_DIR/projects` (default
`~/.claude/projects`), one folder per working directory. Folder names are lossy (every
non-alphanumeric becomes `-`), so each file's recorded `cwd` decides: a session belongs to the
project when its directory, as it exists here, is in the project or one of its worktrees (a
directory that no longer exists: when it lies under the project's root). Subagent files are
learned with their session; one whose session file is gone is learned on its own.

Cost: discovery reads the first lines of every transcript file (no parse of the rest), one
`identify` per distinct directory; learning costs what `pipeline._learn_direct` costs per turn.
"""

from __future__ import annotations

import glob
import json
import os
import time
from collections import Counter
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

from ..core import config as config_mod
from ..core import log
from ..core.project import Project, find_git_root, identify
from ..observe import origins, transcript_formats
from ..observe import trajectory as traj_mod
from ..observe.transcript import TranscriptError
from ..playbook.playbook import Playbook
from .pipeline import _learn_direct, _project_info, attach_history

if TYPE_CHECKING:
    from ..core._types import TrajectoryStep
    from ..core.config import Config
    from ..store.interfaces import Store
    from .reflector import Reflector

# Why an entry was not learned: a `skips` key → (one, several) for the human summary.
SKIP_LABELS: dict[str, tuple[str, str]] = {
    "compaction_summary": ("compaction summary", "compaction summaries"),
    "task_notification": ("task notification", "task notifications"),
    "injected_context": ("injected context entry (skill or command body, caveat)",
                         "injected context entries (skill or command bodies, caveats)"),
    "local_command": ("built-in command or its output", "built-in commands or their output"),
    "system_reminder": ("system reminder", "system reminders"),
    "interruption_notice": ("interruption notice", "interruption notices"),
    "teammate_control": ("teammate control message", "teammate control messages"),
    "synthetic_reply": ("synthetic reply (API error or no-op)", "synthetic replies (API errors or no-ops)"),
    "sidechain": ("subagent entry inside the main file", "subagent entries inside the main file"),
    "unreadable_line": ("unreadable line", "unreadable lines"),
    "too_deep": ("line nested too deeply to read (JSON over 100 levels)",
                 "lines nested too deeply to read (JSON over 100 levels)"),
    "unreadable_file": ("unreadable subagent file", "unreadable subagent files"),
    "cli_notice": ("CLI notice (info, warning, error)", "CLI notices (info, warnings, errors)"),  # Gemini CLI
}
_IGNORED = ("abandoned_branch",)  # said apart: not skipped content, a path the conversation left
_CAPTURED = "this session was captured by the hooks and learned from its events; use --force to learn it again"


def describe_skips(skips: dict[str, int], notes: Iterable[str] = ()) -> str:
    """One line for people: "1 compaction summary, 2 task notifications skipped; 14 entries on
    abandoned branches ignored; agent-acompact-… is the compaction agent…" ("" when nothing)."""
    def count(key: str, n: int) -> str:
        one, several = SKIP_LABELS[key]
        return f"{n} {one if n == 1 else several}"

    parts = []
    skipped = [count(k, skips[k]) for k in SKIP_LABELS if skips.get(k)]
    if skipped:
        parts.append(", ".join(skipped) + " skipped")
    if skips.get("abandoned_branch"):
        n = skips["abandoned_branch"]
        parts.append(f"{n} {'entry' if n == 1 else 'entries'} on abandoned (rewound) branches ignored")
    return "; ".join(parts + list(notes))


def choose_project(run_dir: str | None, session_cwd: str | None) -> tuple[Project, str, str | None]:
    """(project, why it was chosen, a note or None) for a transcript learned without `--project`."""
    session_here = bool(session_cwd) and os.path.isdir(session_cwd or "")
    if run_dir and find_git_root(run_dir):
        project = identify(run_dir)
        note = None
        if session_here and session_cwd:
            other = identify(session_cwd)
            if other.key != project.key:
                note = (f"the session ran in {session_cwd} (project {other.name}); "
                        f"pass --project {other.root} to file its lessons there")
        return project, "the git repository `ace learn` ran in", note
    if session_here and session_cwd:
        project = identify(session_cwd)
        where = "repository" if find_git_root(session_cwd) else "directory"
        return project, f"the {where} the session ran in ({session_cwd}); `ace learn` ran outside any repository", None
    recorded = f"its recorded directory {session_cwd} does not exist here" if session_cwd \
        else "it records no working directory"
    raise TranscriptError(f"cannot tell which project the lessons belong to: `ace learn` ran outside any git "
                          f"repository and {recorded}; run it inside the project's repository or pass --project DIR")


def session_of(path: str, field: str = "sessionId", lines: int = 200) -> str | None:
    """The first `field` (a string) a transcript records, reading at most `lines` lines."""
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            for n, raw in enumerate(fh):
                if n >= lines:
                    break
                try:
                    entry = json.loads(raw)
                except ValueError:
                    continue
                if isinstance(entry, dict) and isinstance(entry.get(field), str) and entry[field]:
                    return str(entry[field])
    except OSError:
        return None
    return None


def _legacy_siblings(path: str) -> list[str]:
    """Older versions kept subagent files beside the session: those of this session."""
    stem = os.path.splitext(os.path.basename(path))[0]
    if stem.startswith("agent-"):
        return []
    return [p for p in glob.glob(os.path.join(os.path.dirname(path), "agent-*.jsonl")) if session_of(p) == stem]


def learn_transcript(store: Store, path: str, project: Project | None = None, *, cfg: Config | None = None,
                     reflector: Reflector | None = None, now: float | None = None, force: bool = False,
                     on_turn: Callable[[dict[str, Any]], object] | None = None, run_dir: str | None = None,
                     reason: str = "--project", siblings: Iterable[str] | None = None) -> dict[str, Any]:
    """Learn every turn of a Claude Code transcript (and its subagents' files). Without `project`
    it is chosen by `choose_project(run_dir, the session's directory)`. Returns {session_id, kind,
    project: {key, root, name, reason}, turns, skips, notes, skipped_reason?}."""
    # The format is read from the content: Claude Code's, Codex CLI's or Gemini CLI's.
    parsed = transcript_formats.parse_file(path, siblings=_legacy_siblings(path) if siblings is None else siblings)
    notes = list(parsed["notes"])
    session_id = parsed["session_id"]
    out: dict[str, Any] = {"session_id": session_id, "kind": parsed["kind"], "turns": [], "project": None,
                           "skips": parsed["skips"], "notes": notes, "agent": parsed.get("agent")}
    if parsed["kind"] == "internal":  # nothing to file anywhere: no project to choose
        out["skipped_reason"] = notes[0]
        return out
    if project is None:
        project, reason, note = choose_project(run_dir, parsed["cwd"])
        notes += [note] if note else []
    out["project"] = {"key": project.key, "root": project.root, "name": project.name, "reason": reason}
    cfg = cfg or config_mod.load(project.root)
    if session_id and not force and any(
            j["kind"] == "session" for j in store.list_jobs(session_id=session_id, all_projects=True, limit=1000)):
        out["skipped_reason"] = _CAPTURED
        return out
    playbook = Playbook(store, project)
    # Paths are made relative to where the session ran (its repository's top when that exists here).
    cwd = parsed["cwd"]
    root = (identify(cwd).root if os.path.isdir(cwd) else cwd) if cwd else project.root
    trajectories, keys = [], []
    for agent in parsed["agents"]:
        previous: list[TrajectoryStep] = []
        earlier: list[dict[str, Any]] = []  # the agent's turns so far, for the origins of what it learns
        for turn in traj_mod.split_turns(agent["events"], agent["messages"]):
            anchor = turn["prompts"][0].get("uuid") if turn["prompts"] else (turn["events"][0].get("tool_use_id")
                                                                             if turn["events"] else None)
            if anchor is None:
                continue
            traj = traj_mod.build(turn, root=root, session_id=session_id, agent_id=agent["agent_id"],
                                  agent_type=agent["agent_type"], source="transcript", agent=parsed.get("agent"),
                                  task_fallback=f"Subagent work ({agent['agent_id']})" if agent["agent_id"] else None)
            traj["project"] = _project_info(project, playbook.project_id)
            traj["git"] = {"branch": parsed["git_branch"]} if parsed.get("git_branch") else {}
            traj["cwd"] = root
            traj["agent"] = parsed.get("agent")  # which agent's session: its lessons say so
            # Only what the user typed is the user's (`transcript.sender`): a teammate's message or a
            # subagent's prompt sets the task, but teaches no "user's correction", and for the
            # provenance rule it is text someone else wrote, like every non-user entry.
            traj["prompts"] = [p["text"] for p in turn["prompts"] if p.get("by", "user") == "user"]
            others = [{"text": p["text"], "at": p.get("created_at")} for p in turn["prompts"]
                      if p.get("by", "user") != "user"]
            last = max((e.get("created_at") or 0.0 for e in turn["events"]), default=None)
            own = origins.from_events(turn["events"])
            traj["origin_evidence"] = origins.in_order(origins.foreign(others + agent.get("foreign", [])),
                                                       earlier + own, until=last)
            earlier = origins.kept(earlier + own)
            # What the turn before ended on, never fixed: this turn may fix it ("update X and retry").
            traj["carried"] = traj_mod.carried(previous)
            previous = traj["trajectory"]
            attach_history(store.jobs, traj, playbook.project_id)
            trajectories.append(traj)
            keys.append(f"t:{session_id}:{agent['agent_id']}:{anchor}")
    # All turns at once: the LLM reflector reads consecutive turns as one task (one call, not one per prompt).
    out["turns"] = _learn_direct(store, playbook, cfg, trajectories, keys, kind="transcript", reflector=reflector,
                                 now=now, on_result=on_turn)
    from ..continuity import update as continuity_update  # the session's summary: `ace recent`, next SessionStart

    try:
        continuity_update.store_transcript(store, parsed, playbook.project_id, root, cfg, now or time.time())
        store.set_summary_agent(session_id, parsed.get("agent"))
    except Exception as exc:  # noqa: BLE001 — a summary never fails learning
        log.error("continuity", f"summary of {session_id} failed: {type(exc).__name__}: {exc}")
    if not out["turns"]:
        talk = sum(len(a["events"]) + len(a["messages"]) for a in parsed["agents"])
        what = describe_skips(parsed["skips"], [])
        out["empty_reason"] = (f"nothing on its active branch is a prompt or a tool call ({what})" if what
                               else "it holds no prompt and no tool call" if not talk
                               else "no turn in it has a prompt or a tool call to anchor it")
    return out


# -- the backfill ---------------------------------------------------------------------------------------

def claude_projects_dir() -> str:
    """Where Claude Code keeps transcripts: `$CLAUDE_CONFIG_DIR/projects`, else `~/.claude/projects`."""
    base = os.environ.get("CLAUDE_CONFIG_DIR") or os.path.join("~", ".claude")
    return os.path.join(os.path.expanduser(base), "projects")


def _belongs(project: Project) -> Callable[[str | None], bool]:
    seen: dict[str, bool] = {}
    roots = tuple(dict.fromkeys(os.path.join(r, "") for r in (project.root, project.main_root)))

    def belongs(cwd: str | None) -> bool:
        if not cwd:
            return False
        if cwd not in seen:
            if os.path.isdir(cwd):
                seen[cwd] = identify(cwd).key == project.key
            else:  # gone from this machine: only by its place under the project
                seen[cwd] = os.path.join(os.path.normpath(cwd), "").startswith(roots)
        return seen[cwd]
    return belongs


def find_transcripts(project: Project, projects_dir: str | None = None) -> list[dict[str, Any]]:
    """The transcripts of `project`'s sessions, oldest first: [{path, session_id, cwd, siblings}]
    — main session files (their subagents come with them) and subagent files whose session file
    is gone."""
    base = projects_dir or claude_projects_dir()
    belongs = _belongs(project)
    found: list[dict[str, Any]] = []
    for folder in sorted(glob.glob(os.path.join(glob.escape(base), "*", ""))):
        files = sorted(glob.glob(os.path.join(glob.escape(folder), "*.jsonl")))
        mains = {os.path.splitext(os.path.basename(f))[0]: f for f in files
                 if not os.path.basename(f).startswith("agent-")}
        legacy: dict[str | None, list[str]] = {}
        for f in files:
            if os.path.basename(f).startswith("agent-"):
                legacy.setdefault(session_of(f), []).append(f)
        orphans = [f for sid, group in legacy.items() if sid not in mains for f in group]
        orphans += [f for f in sorted(glob.glob(os.path.join(glob.escape(folder), "*", "subagents", "agent-*.jsonl")))
                    if os.path.basename(os.path.dirname(os.path.dirname(f))) not in mains]
        for stem, path in mains.items():
            cwd = session_of(path, "cwd")
            if belongs(cwd):
                found.append({"path": path, "session_id": stem, "cwd": cwd, "siblings": legacy.get(stem, [])})
        for path in orphans:
            cwd = session_of(path, "cwd")
            if belongs(cwd):
                found.append({"path": path, "session_id": session_of(path), "cwd": cwd, "siblings": []})
    found.sort(key=lambda item: (_mtime(item["path"]), item["path"]))
    return found


def find_all(project: Project, projects_dir: str | None = None, *, codex_dir: str | None = None,
             gemini_dir: str | None = None) -> list[dict[str, Any]]:
    """The project's sessions of every agent, oldest first: Claude Code's (`find_transcripts`, when
    its folder exists), Codex CLI's rollouts and Gemini CLI's chats (`transcript_formats`)."""
    base = projects_dir or claude_projects_dir()
    found = find_transcripts(project, base) if os.path.isdir(base) else []
    belongs = _belongs(project)
    found += transcript_formats.find_codex(belongs, codex_dir)
    found += transcript_formats.find_gemini(belongs, (project.root, project.main_root), gemini_dir)
    found.sort(key=lambda item: (_mtime(item["path"]), item["path"]))
    return found


def _mtime(path: str) -> float:
    try:
        return os.path.getmtime(path)
    except OSError:
        return 0.0


def learn_all(store: Store, project: Project, *, reason: str, cfg: Config | None = None,
              reflector: Reflector | None = None, now: float | None = None, force: bool = False,
              projects_dir: str | None = None, found: list[dict[str, Any]] | None = None,
              on_file: Callable[[int, int, dict[str, Any], dict[str, Any]], object] | None = None) -> dict[str, Any]:
    """Learn every transcript of `project` (`find_transcripts`) into it. A file that cannot be read
    is reported and passed over. Returns {project, folder, files: [...], totals, skips, notes}."""
    base = projects_dir or claude_projects_dir()
    found = find_transcripts(project, base) if found is None else found
    cfg = cfg or config_mod.load(project.root)
    now = now or time.time()
    totals: Counter[str] = Counter()
    skips: Counter[str] = Counter()
    notes: list[str] = []
    files = []
    for n, item in enumerate(found, 1):
        try:
            result = learn_transcript(store, item["path"], project, cfg=cfg, reflector=reflector, now=now,
                                      force=force, reason=reason, siblings=item["siblings"])
        except TranscriptError as exc:
            result = {"session_id": item["session_id"], "turns": [], "error": str(exc)}
        row = file_summary(item["path"], result)
        files.append(row)
        for key in ("turns", "learned", "not_worth_learning", "learned_before", "created", "updated", "merged"):
            totals[key] += row[key]
        totals["files"] += 1
        totals["unreadable"] += bool(row.get("error"))
        totals["captured_by_hooks"] += result.get("skipped_reason") == _CAPTURED
        skips.update(result.get("skips") or {})
        notes += result.get("notes") or []
        if on_file:
            on_file(n, len(found), item, row)
    return {"project": {"key": project.key, "root": project.root, "name": project.name, "reason": reason},
            "folder": base, "files": files, "totals": dict(totals), "skips": dict(skips), "notes": notes}


def file_summary(path: str, result: dict[str, Any]) -> dict[str, Any]:
    """One transcript's outcome in numbers (what a progress line and the summary show)."""
    turns = result.get("turns") or []
    new = [t for t in turns if not t["already_learned"]]
    row: dict[str, Any] = {
        "path": path, "session_id": result.get("session_id"), "kind": result.get("kind"), "turns": len(turns),
        "learned": sum(1 for t in new if t["status"] == "done"),
        "not_worth_learning": sum(1 for t in new if t["status"] != "done"),
        "learned_before": len(turns) - len(new),
        **{k: sum((t.get("summary") or {}).get(k, 0) for t in new) for k in ("created", "updated", "merged")},
    }
    for key in ("skipped_reason", "empty_reason", "error"):
        if result.get(key):
            row[key] = result[key]
    return row
