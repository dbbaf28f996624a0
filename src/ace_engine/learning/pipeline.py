"""Learning, end to end: trajectory → quality gates → reflector → curator → playbook.

Three ways in, one way through:
- `learn_job`: a queued job (captured events of one session+agent), run by the worker or
  `ace learn`. Its turns are reflected first (no lock held — an LLM may take seconds), then
  curated, recorded and marked done in ONE transaction: a worker killed at any point leaves the
  playbook as it was and the job to be retried, so a task is learned exactly once.
- `learn_payload`: the ACE plugin's learn payload (`ace learn --stdin --json`).
- `transcript_learn.learn_transcript`: a Claude Code transcript file (`ace learn --transcript FILE`),
  built on `_learn_direct` here.
The last two record a done job under a unique key inside the same transaction, so learning the
same payload or transcript turn twice changes nothing the second time.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any, TypedDict

from ..core import config as config_mod
from ..core import log
from ..core.errors import AceError
from ..core.project import Project
from ..observe import commands, git_context, origins, tasks
from ..observe import trajectory as traj_mod
from ..playbook import staleness
from ..playbook.playbook import Playbook
from ..retrieval import situations
from . import anchoring, auto_memory, gates, pattern_lessons, recheck
from .curator import Curator
from .reflector import ReflectorError, normalize
from .reflector_choice import get_reflector, heuristic

if TYPE_CHECKING:
    from ..core._types import JobRow, ProjectInfo, Reflection, Trajectory, TrajectoryStep
    from ..core.config import Config
    from ..store.interfaces import JobsStore, PlaybookStore, SessionsStore, Store
    from ..store.records import CommandRun
    from .reflector import Reflector


class Prepared(TypedDict):
    """A trajectory gated and reflected, waiting for the curation transaction."""

    trajectory: Trajectory
    skip: str | None  # why it is not learned (`gates.skip_reason`); its feedback still counts
    reflection: Reflection
    ms: float
    members: list[int]  # the indexes of the turns it covers, in the list given to `reflect`


class ClaimLost(AceError, RuntimeError):
    """Our lease expired and another worker took the job: roll back, it will learn it."""


class AlreadyLearned(AceError, RuntimeError):
    """A job with this key is done already: roll back."""


# -- shared steps -----------------------------------------------------------------------------------

def project_for(store: SessionsStore, project_id: int | None) -> Project | None:
    row = store.project_row(project_id) if project_id is not None else None
    if not row:
        return None
    # The stored key names the main worktree: a linked worktree deleted since still files under it.
    key = str(row.get("key") or "")
    return Project(row["root"], row["remote"], main_root=key[5:] if key.startswith("path:") else None)


def attach_history(store: JobsStore, trajectory: Trajectory, project_id: int | None) -> None:
    """What past sessions say about this task's files and commands (for the heuristics)."""
    keys = list(dict.fromkeys(_command_keys(trajectory["trajectory"])))
    trajectory["history"] = {
        "co_edits": store.co_edit_counts(project_id, trajectory.get("files") or [], trajectory.get("session_id")),
        "commands": store.command_history(project_id, keys),
    }


def _command_keys(steps: Iterable[TrajectoryStep]) -> list[str]:
    """The normalized command of each step that ran one (`commands.key`), in order."""
    return [commands.key(command) for command in (s.get("command") for s in steps) if command]


def _project_info(project: Project | None, project_id: int | None) -> ProjectInfo:
    if project is None:
        return {}
    return {"id": project_id, "key": project.key, "root": project.root, "name": project.name}


def _reflect_one(traj: Trajectory, store: PlaybookStore, cfg: Config, reflector: Reflector) -> tuple[Reflection, str]:
    """One reflection of `traj` and the name of the reflector that made it (the heuristics when the
    chosen one fails: an LLM failing must not lose the lesson)."""
    used = store.get_bullets(traj.get("playbook_used") or [])
    try:
        return normalize(reflector.reflect(traj, used)), reflector.name
    except Exception as exc:  # noqa: BLE001 — an LLM failing must not lose the lesson
        if getattr(reflector, "name", "") == "heuristic" and not isinstance(exc, ReflectorError):
            raise
        log.warning("learning", f"{reflector.name} reflector failed, using heuristics: {type(exc).__name__}: {exc}")
        fallback = heuristic(cfg)
        return normalize(fallback.reflect(traj, used)), f"{fallback.name} (fallback from {reflector.name})"


def reflect(trajectories: list[Trajectory], store: PlaybookStore, cfg: Config, reflector: Reflector | None = None
            ) -> list[Prepared]:
    """Gate and reflect each trajectory (no write). Returns [{trajectory, skip, reflection, ms, members}]
    in the order of the turns.

    A reflector with a `plan` (the LLM reflector: a call costs money) reads consecutive turns it
    learns from as one task (`observe/tasks.join`), as few calls as their evidence needs, and a turn
    too long for one call in windows (its `split`). An item's `members` are the turns it completes
    (a turn whose last window it holds): only those are recorded as learned. When a call fails, the
    turns it completes are learned by the heuristics, each on its own, as if no model were
    configured. The heuristics read one turn at a time."""
    reflector = reflector or get_reflector(cfg)
    reasons = [gates.skip_reason(t) for t in trajectories]
    learned = [i for i, reason in enumerate(reasons) if reason is None]
    plan, split = getattr(reflector, "plan", None), getattr(reflector, "split", None)
    planned = callable(plan) and bool(learned)
    parts = [(i, part) for i in learned
             for part in (split(trajectories[i]) if planned and callable(split) else [trajectories[i]])]
    groups = plan([part for _, part in parts]) if planned and callable(plan) else [[j] for j in range(len(parts))]
    last = {i: j for j, (i, _) in enumerate(parts)}  # each turn's last window
    waiting = [i for i, reason in enumerate(reasons) if reason is not None]
    prepared: list[Prepared] = []

    def skipped_before(index: float) -> None:
        while waiting and waiting[0] < index:
            i = waiting.pop(0)
            trajectories[i]["reflector"] = None
            prepared.append({"trajectory": trajectories[i], "skip": reasons[i],
                             "reflection": {"candidates": [], "tags": []}, "ms": 0.0, "members": [i]})

    for group in groups:
        turns = list(dict.fromkeys(parts[j][0] for j in group))
        members = [i for i in turns if last[i] in group]
        skipped_before(turns[0])
        started = time.perf_counter()
        if len(group) == 1 and parts[group[0]][1] is trajectories[turns[0]]:  # one whole turn
            task = trajectories[turns[0]]
            reflection, name = _reflect_one(task, store, cfg, reflector)
        else:
            task = tasks.join([parts[j][1] for j in group])
            try:
                reflection = normalize(reflector.reflect(task, store.get_bullets(task.get("playbook_used") or [])))
                name = reflector.name
            except Exception as exc:  # noqa: BLE001 — the task's call failed: its turns by the heuristics
                log.warning("learning", f"{reflector.name} reflector failed on a task of {len(turns)} turn(s), "
                                        f"using heuristics per turn: {type(exc).__name__}: {exc}")
                fallback = heuristic(cfg)
                for m in members:
                    one_started = time.perf_counter()
                    turn = trajectories[m]
                    reflection = normalize(fallback.reflect(turn, store.get_bullets(turn.get("playbook_used") or [])))
                    turn["reflector"] = f"{fallback.name} (fallback from {reflector.name})"
                    prepared.append({"trajectory": turn, "skip": None, "reflection": reflection,
                                     "ms": (time.perf_counter() - one_started) * 1000, "members": [m]})
                continue
        task["reflector"] = name
        prepared.append({"trajectory": task, "skip": None, "reflection": reflection,
                         "ms": (time.perf_counter() - started) * 1000, "members": members})
    skipped_before(float("inf"))
    return prepared


def commit(store: Store, playbook: Playbook, cfg: Config, prepared: list[Prepared], *, job_id: int | None, source: str,
           now: float) -> list[dict[str, Any]]:
    """Curate every prepared trajectory and record its run. Call inside `store.transaction()`."""
    curator = Curator(playbook, cfg, now=now)
    runs = []
    for item in prepared:
        traj = item["trajectory"]
        started = time.perf_counter()
        if item["skip"] is None:
            found = pattern_lessons.reflection(store, playbook.project_id, traj, cfg, now)
            reflection = item["reflection"]
            item["reflection"] = {**reflection,
                                  "candidates": list(reflection.get("candidates") or []) + found["candidates"]
                                  + auto_memory.candidates(traj),  # the agent's own memory notes
                                  "tags": list(reflection.get("tags") or []) + found["tags"]}
        # The origins of the lessons' risky parts, from this trajectory (`origins.py`): the playbook
        # records them, and holds a part first seen in someone else's text for review.
        # The project's files are read where they are: the session's directory, else (gone, or a
        # transcript from another machine) the project's root.
        root = next((r for r in (traj.get("cwd"), (traj.get("project") or {}).get("root")) if r and os.path.isdir(r)),
                    None)
        playbook.attribution = origins.Attribution.of(traj, root)
        try:
            stats = curator.curate(item["reflection"], traj, job_id=job_id, learn=item["skip"] is None)
        finally:
            playbook.attribution = None
        # What the lessons rest on, the ones this session contradicts, what changed since (anchors).
        stats["anchors"] = anchoring.after_curation(store, playbook, traj, stats, root, now,
                                                    withhold=staleness.withholds(cfg))
        # The lessons learned or confirmed here are found again by this task's prompts.
        situations.learned(store, traj, stats["touched"],
                           [t["bullet_id"] for t in stats["tagged"] if t["tag"] == "helpful"], now=now)
        success = (traj.get("result") or {}).get("success")
        run = {
            "job_id": job_id, "project_id": playbook.project_id, "session_id": traj.get("session_id"),
            "agent_id": traj.get("agent_id") or None, "source": source, "reflector": traj.get("reflector"),
            "task": str(traj.get("task") or "")[:300],
            "outcome": "unknown" if success is None else ("success" if success else "failure"),
            "learned": item["skip"] is None, "gate_reason": item["skip"], "steps": len(traj.get("trajectory") or []),
            **{k: stats[k] for k in ("candidates", "created", "updated", "merged", "pruned", "quarantined", "rejected",
                                     "helpful", "harmful", "average_confidence")},
            "duration_ms": round(item["ms"] + (time.perf_counter() - started) * 1000, 2),
            "detail": {"rejections": stats["rejections"][:20], "tagged": stats["tagged"][:50],
                       "touched": stats["touched"][:50],
                       # of `created`: kept as candidates (not injected yet); candidates made active
                       "held": stats.get("held", 0), "promoted": stats.get("promoted", 0)},
            "created_at": now,
        }
        run["id"] = store.record_learning_run(run)
        session_id = traj.get("session_id")
        if session_id:
            store.record_file_edits(playbook.project_id, session_id, traj.get("files") or [], now)
            store.record_command_runs(playbook.project_id, session_id, _command_runs(traj), now)
        runs.append(run)
    return runs


def _command_runs(traj: Trajectory) -> list[CommandRun]:
    runs: dict[str, CommandRun] = {}
    for step in traj.get("trajectory") or []:
        command = step.get("command")
        if not command or step.get("kind") == "readonly":
            continue
        key = commands.key(command)
        run = runs.setdefault(key, {"command": key, "kind": step.get("kind"), "runs": 0, "failures": 0, "error": None})
        run["runs"] += 1
        if not step.get("success"):
            run["failures"] += 1
            run["error"] = step.get("error") or run["error"]
    return list(runs.values())


def summarize(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """Totals of a job's runs, plus the plugin's `learning_statistics`."""
    total = {k: sum(r[k] for r in runs) for k in ("created", "updated", "merged", "pruned", "quarantined", "rejected",
                                                 "helpful", "harmful", "candidates", "steps")}
    confidences = [r["average_confidence"] for r in runs if r["average_confidence"] is not None]
    total["held"] = sum(int((r.get("detail") or {}).get("held") or 0) for r in runs)
    total["promoted"] = sum(int((r.get("detail") or {}).get("promoted") or 0) for r in runs)
    total["turns"] = len(runs)
    total["learned"] = sum(1 for r in runs if r["learned"])
    total["skipped"] = [r["gate_reason"] for r in runs if not r["learned"]]
    total["average_confidence"] = round(sum(confidences) / len(confidences), 4) if confidences else None
    total["run_ids"] = [r["id"] for r in runs]
    return total


def statistics(summary: dict[str, Any]) -> dict[str, Any]:
    """The ACE plugin's `learning_statistics` object."""
    return {"patterns_created": summary.get("created", 0), "patterns_updated": summary.get("updated", 0),
            "patterns_merged": summary.get("merged", 0), "patterns_pruned": summary.get("pruned", 0),
            "average_confidence": summary.get("average_confidence") or 0.0}


# -- queued jobs (captured events) --------------------------------------------------------------------

def job_trajectories(store: Store, job: JobRow, project: Project | None) -> list[Trajectory]:
    """The turns a job covers, as trajectories with their feedback window, git context and history."""
    events = store.job_tool_events(job)
    messages = store.job_messages(job)
    turns = traj_mod.split_turns(events, messages)
    session_id = job["session_id"] or ""  # set on every `session` job (the only kind queued)
    session: dict[str, Any] = dict(store.session(session_id) or {})
    root = project.root if project else session.get("cwd")
    injections = [] if job["agent_id"] else [
        i for i in store.injected(session_id, job["window_from"] or None)
        if i["created_at"] > (job["window_from"] or 0) and i["created_at"] <= job["window_to"]]
    out: list[Trajectory] = []
    rows_before = store.tool_events_before(session_id, job["agent_id"], job["tool_from"], 30)
    before = [traj_mod.step_from_event(r, i, root) for i, r in enumerate(rows_before, 1)]
    # The session so far, in order: a package a tool printed in an earlier turn is still someone
    # else's when the agent runs it in this one (`origins.py`).
    earlier = origins.from_events(rows_before)
    previous_commands = _command_keys(before)
    previous_steps = before
    previous_task = None
    for n, turn in enumerate(turns):
        fallback = None
        if not turn["prompts"]:
            prompt = store.last_prompt_before(session_id, job["msg_to"], turn.get("start"))
            parent = prompt["text"] if prompt else ""
            fallback = (f"Subagent ({job['agent_type'] or 'agent'}) work during: {parent}" if job["agent_id"]
                        else parent)
        traj = traj_mod.build(turn, root=root, session_id=session_id, agent_id=job["agent_id"],
                              agent_type=job["agent_type"] or session.get("agent_type"), task_fallback=fallback,
                              agent=session.get("agent"))
        start = turn.get("start") or 0
        end = turns[n + 1]["start"] if n + 1 < len(turns) and turns[n + 1].get("start") else float("inf")
        own = origins.from_events(turn["events"])
        traj["origin_evidence"] = earlier + own
        earlier = origins.kept(earlier + own)
        traj["playbook_used"] = list(dict.fromkeys(
            i["bullet_id"] for i in injections if (n == 0 or i["created_at"] >= start) and i["created_at"] < end))
        traj["project"] = _project_info(project, job["project_id"])
        traj["job_id"] = job["id"]
        traj["previous"] = {"task": previous_task, "commands": previous_commands[-10:]}
        traj["carried"] = traj_mod.carried(previous_steps)
        traj["cwd"] = root
        attach_history(store.jobs, traj, job["project_id"])
        out.append(traj)
        previous_task = traj["task"]
        previous_commands = _command_keys(traj["trajectory"]) or previous_commands
        previous_steps = traj["trajectory"]
    # git runs only for tasks that will be learned (most Stops end a chat turn: no subprocess then).
    if root and any(gates.skip_reason(t) is None for t in out):
        git = git_context.context(root, session.get("started_at"))
        for traj in out:
            traj["git"] = git
    return out


def learn_job(store: Store, job: JobRow, *, reflector: Reflector | None = None, cfg: Config | None = None,
              now: float | None = None) -> dict[str, Any]:
    """Learn one claimed job; marks it done / skipped in the curation transaction. Raises on
    failure (the caller records the attempt) and `ClaimLost` when another worker took it."""
    project = project_for(store.sessions, job["project_id"])
    cfg = cfg or config_mod.load(project.root if project else None)
    trajectories = job_trajectories(store, job, project)
    prepared = reflect(trajectories, store.lessons, cfg, reflector)
    now = now or time.time()
    if job.get("lease_until") and not store.renew_lease(job, time.time() + cfg["learning.lease_seconds"]):
        raise ClaimLost(f"job {job['id']}: lease lost to another worker while reflecting")
    playbook = Playbook(store, project)
    with store.transaction():
        runs = commit(store, playbook, cfg, prepared, job_id=job["id"], source="session", now=now)
        summary = summarize(runs)
        status = "done" if summary["learned"] else "skipped"
        reason = None if summary["learned"] else ("; ".join(dict.fromkeys(summary["skipped"])) or "no events")
        if not store.finish_job(job, status, summary, reason, now):
            raise ClaimLost(f"job {job['id']}: lease lost to another worker")
    if project is not None:  # after the transaction: a model call never holds the write lock
        try:
            summary["recheck"] = recheck.confirm(store, playbook, cfg, project.root, now)
        except Exception as exc:  # noqa: BLE001 — the job is done; a failed confirmation leaves them to re-check
            log.warning("learning", f"lessons to re-check not confirmed: {type(exc).__name__}: {exc}")
    return summary


# -- trajectories that come with the request (payloads, transcripts) ---------------------------------

def _learn_direct(store: Store, playbook: Playbook, cfg: Config, trajectories: list[Trajectory], keys: list[str], *,
                  kind: str, reflector: Reflector | None = None, now: float | None = None,
                  on_result: Callable[[dict[str, Any]], object] | None = None) -> list[dict[str, Any]]:
    """Learn each trajectory under its unique key; already learned ones are skipped. The others are
    reflected together (`reflect`: an LLM reads consecutive turns as one task) and curated one
    item at a time, each in its own transaction that also records the done job of every turn it
    covers: a crash loses at most the item being written, and learning again redoes only that.
    Returns one result per key, in order; `on_result` is called with each as it is known."""
    now = now or time.time()
    results: dict[int, dict[str, Any]] = {}

    def known(i: int, result: dict[str, Any]) -> None:
        results[i] = result
        if on_result:
            on_result(result)

    def already(i: int) -> dict[str, Any]:
        done = store.job_by_key(keys[i])
        return {"key": keys[i], "already_learned": True, "job_id": done["id"] if done else None,
                "summary": (done.get("result") if done else None) or {}, "task": trajectories[i].get("task"),
                "status": done["status"] if done else None}

    pending = []
    for i, key in enumerate(keys):
        if store.job_by_key(key) is not None:
            known(i, already(i))
        else:
            pending.append(i)
    prepared = reflect([trajectories[i] for i in pending], store.lessons, cfg, reflector) if pending else []
    for item in prepared:
        covered = [pending[m] for m in item["members"]]
        traj = item["trajectory"]
        try:
            with store.transaction():
                runs = commit(store, playbook, cfg, [item], job_id=None, source=kind, now=now)
                summary = summarize(runs)
                status = "done" if summary["learned"] else "skipped"
                job_ids = []
                for i in covered:
                    job_id = store.insert_done_job(kind, keys[i], playbook.project_id, traj.get("session_id"),
                                                   traj.get("agent_id") or "", traj.get("agent_type"), status,
                                                   summary, "; ".join(summary["skipped"]) or None, now)
                    if job_id is None:
                        raise AlreadyLearned(keys[i])
                    job_ids.append(job_id)
        except AlreadyLearned:
            for i in covered:
                known(i, already(i))
            continue
        for i, job_id in zip(covered, job_ids, strict=True):
            known(i, {"key": keys[i], "already_learned": False, "job_id": job_id, "summary": summary,
                      "task": trajectories[i].get("task"), "status": status})
    return [results[i] for i in range(len(keys))]


def payload_key(payload: dict[str, Any]) -> str:
    import hashlib

    canonical = json.dumps(payload, sort_keys=True, ensure_ascii=False, default=str)
    return "p:" + hashlib.sha256(canonical.encode("utf-8", "replace")).hexdigest()[:40]


def learn_payload(store: Store, project: Project | None, payload: dict[str, Any], *, cfg: Config | None = None,
                  reflector: Reflector | None = None, now: float | None = None) -> dict[str, Any]:
    """The ACE plugin's `learn --stdin --json`: returns {success, learning_statistics, …}."""
    if not isinstance(payload, dict):
        raise ValueError("the learn payload must be a JSON object")
    cfg = cfg or config_mod.load(project.root if project else None)
    playbook = Playbook(store, project)
    traj = traj_mod.from_payload(payload)
    traj["origin_evidence"] = origins.from_steps(traj["trajectory"])  # the learner's, never the payload's
    traj["project"] = _project_info(project, playbook.project_id)
    attach_history(store.jobs, traj, playbook.project_id)
    (result,) = _learn_direct(store, playbook, cfg, [traj], [payload_key(payload)], kind="payload",
                              reflector=reflector, now=now)
    summary = result["summary"] or {}
    return {"success": True, "learning_statistics": statistics(summary), "already_learned": result["already_learned"],
            "skipped": summary.get("skipped") or [], "job_id": result["job_id"]}
