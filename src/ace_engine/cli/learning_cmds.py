"""Learning from captured sessions: `ace learn` (queued jobs, a transcript, every transcript of the
project, or the ACE plugin's payload on stdin) and `ace jobs` (the queue). Statistics, history and
review: `history_cmds`. Transcripts: `learning/transcript_learn.py` (a missing, empty or non-JSONL
file is a `TranscriptError`, shown as `error: …` with the fix)."""

import functools
import json
import os
import sys
import time
from contextlib import nullcontext

import click

from ..core.project import find_git_root
from .common import json_option, load_config, open_store, project_of, project_option, wide_option
from .output import clip, console, emit_json, fail, iso, plain, plural, say, table, when

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any


@click.command()
@project_option
@click.option("--transcript", "transcript_file", type=click.Path(),
              help="Learn from a Claude Code transcript (JSONL) instead of the queue.")
@click.option("--all-transcripts", is_flag=True,
              help="Learn every session of this project that Claude Code kept (~/.claude/projects, or "
                   "$CLAUDE_CONFIG_DIR/projects), Codex CLI kept ($CODEX_HOME/sessions, ~/.codex/sessions) "
                   "and Gemini CLI kept (~/.gemini/tmp), worktrees included. Turns learned before are skipped.")
@click.option("--stdin", "from_stdin", is_flag=True,
              help="Read the ACE plugin's learn payload (JSON) from stdin and answer its learning_statistics.")
@click.option("--session", "session_id", default=None,
              help="First queue whatever this session captured that no job covers yet.")
@click.option("--retry-failed", is_flag=True, help="Queue the project's failed jobs again first.")
@click.option("--force", is_flag=True,
              help="With --transcript / --all-transcripts: learn sessions the hooks already learned from.")
@click.option("--wait", "wait_seconds", default=120.0, show_default=True,
              help="How long to wait for a background worker of this project to finish.")
@click.option("--heuristic", is_flag=True, help="Use the offline heuristic reflector even if an LLM is configured.")
@json_option
def learn(project_dir, transcript_file, all_transcripts, from_stdin, session_id, retry_failed, force, wait_seconds,
          heuristic, as_json):
    """Learn now, in the foreground: run this project's pending jobs (what the hooks queued and
    the background worker hasn't done yet), or learn from a transcript, from every transcript of
    the project, or from a payload.

    A transcript's lessons go to --project, else to the git repository you run this in, else
    (outside any repository) to the repository the session ran in, if it exists here."""
    from ..learning.reflector_choice import heuristic as heuristic_reflector

    if sum(bool(x) for x in (transcript_file, all_transcripts, from_stdin)) > 1:
        fail("--transcript, --all-transcripts and --stdin are alternatives; give one")
    if (transcript_file or all_transcripts or from_stdin) and (session_id or retry_failed):
        fail("--session and --retry-failed work on the queue; leave them out with --transcript, "
             "--all-transcripts or --stdin")
    project = project_of(project_dir) if (project_dir or not transcript_file) else None
    reflector = None
    if heuristic:
        reflector = heuristic_reflector(load_config(project.root if project else None))
    if from_stdin:
        return _learn_stdin(project, reflector, as_json)
    if transcript_file:
        return _learn_transcript(transcript_file, project, force, reflector, as_json)
    if all_transcripts:
        return _learn_all(project, bool(project_dir), force, reflector, as_json)
    return _learn_queue(project, session_id, retry_failed, wait_seconds, reflector, as_json)


def _learn_stdin(project, reflector, as_json):
    from ..learning import pipeline

    raw = sys.stdin.read()
    try:
        payload = json.loads(raw)
    except ValueError as exc:
        fail(f"stdin is not valid JSON ({exc}); pipe the ACE plugin's learn payload: "
             "{\"task\", \"trajectory\": [...], \"result\": {...}, \"playbook_used\": [...]}")
    if not isinstance(payload, dict):
        fail("the learn payload must be a JSON object with `task` and `trajectory`")
    cfg = load_config(project.root)
    with open_store() as store:
        answer = pipeline.learn_payload(store, project, payload, cfg=cfg, reflector=reflector)
    if as_json:
        return emit_json(answer)
    stats = answer["learning_statistics"]
    if answer["already_learned"]:
        say("This payload was learned before; nothing changed.")
    elif answer["skipped"]:
        say("Not learned: {} (bullets shown still got their feedback).", answer["skipped"][0])
    say("Created {}, updated {}, merged {}, pruned {}; average confidence {}.",
        *(stats[k] for k in ("patterns_created", "patterns_updated", "patterns_merged", "patterns_pruned",
                             "average_confidence")))


def _learn_transcript(path, project, force, reflector, as_json):
    from rich.progress import Progress

    from ..learning import transcript_learn

    cfg = load_config(project.root) if project else None
    path = os.path.abspath(path)
    with open_store() as store:
        learn = functools.partial(transcript_learn.learn_transcript, store, path, project, cfg=cfg, force=force,
                                  reflector=reflector, run_dir=os.getcwd())
        if as_json or not console.is_terminal:
            result = learn()
        else:
            with Progress(console=console, transient=True) as progress:
                task = progress.add_task("learning from the transcript", total=None)
                result = learn(on_turn=lambda _: progress.advance(task))
    if as_json:
        return emit_json(result)
    where = result["project"]
    turns = result["turns"]
    if turns:
        columns = ["task", "status", "created", "candidates", "updated", "merged", "quarantined", "rejected"]
        table(f"Session {result['session_id']}", columns, [
            [clip(t.get("task"), 160), "learned before" if t["already_learned"] else t.get("status"),
             t["summary"].get("created", 0), t["summary"].get("held", 0), t["summary"].get("updated", 0),
             t["summary"].get("merged", 0), t["summary"].get("quarantined", 0), t["summary"].get("rejected", 0)]
            for t in turns], body=("task",), bare=("status",))
        held = sum(t["summary"].get("held", 0) for t in turns)
        if held:
            say("{} of the new lessons {}: seen once, on weaker evidence, not injected until another session "
                "confirms them (`ace patterns --status candidate`; `ace keep ID` keeps one now).",
                held, "is a candidate" if held == 1 else "are candidates")
    elif result.get("skipped_reason"):
        say("Nothing learned: {}.", result["skipped_reason"])
    else:
        say("No turns found in that transcript: {}.", result.get("empty_reason") or "nothing to learn")
    if result["kind"] == "subagent":
        say("A subagent's file on its own: learned as the work of that subagent.")
    if where:
        say("Project: [bold]{}[/] ({}) — {}.", where["name"], where["root"], where["reason"])
    skipped = transcript_learn.describe_skips(result["skips"], [n for n in result["notes"]
                                                                if n != result.get("skipped_reason")])
    if skipped:
        say("Skipped: {}.", skipped)


def _learn_all(project, given, force, reflector, as_json):
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from ..learning import transcript_learn
    from ..observe import transcript_formats

    cfg = load_config(project.root)
    folder = transcript_learn.claude_projects_dir()
    others = [d for d in (transcript_formats.codex_sessions_dir(), transcript_formats.gemini_tmp_dir())
              if os.path.isdir(d)]
    if not os.path.isdir(folder) and not others:
        fail(f"no Claude Code transcripts folder at {folder}, nor Codex CLI's "
             f"({transcript_formats.codex_sessions_dir()}) or Gemini CLI's ({transcript_formats.gemini_tmp_dir()}); "
             "run one of them in this project first "
             "(or set CLAUDE_CONFIG_DIR, CODEX_HOME or GEMINI_CLI_HOME to the directory it uses)")
    reason = "--project" if given else (
        "the git repository `ace learn` ran in" if find_git_root(os.getcwd()) else "the directory `ace learn` ran in")
    found = transcript_learn.find_all(project, folder)

    def line(n, total, item, row):
        text = f"[{n}/{total}] {os.path.basename(item['path'])}: {_brief(row)}"
        click.echo(plain(text), err=as_json)

    with open_store() as store:
        learn = functools.partial(transcript_learn.learn_all, store, project, reason=reason, cfg=cfg, force=force,
                                  reflector=reflector, projects_dir=folder, found=found)
        if as_json or not console.is_terminal:
            result = learn(on_file=line)
        else:
            columns = (TextColumn("[progress.description]{task.description}"), BarColumn(), MofNCompleteColumn(),
                       TimeElapsedColumn())
            with Progress(*columns, console=console, transient=True) as progress:
                bar = progress.add_task("learning transcripts", total=max(len(found), 1))
                result = learn(on_file=lambda *_: progress.advance(bar))
    if as_json:
        return emit_json(result)
    totals, where = result["totals"], result["project"]
    if not result["files"]:
        say("No transcript in {} ran in {} or one of its worktrees.", folder, where["root"])
        return
    say("Read {} from {}.", plural(totals["files"], "transcript"),
        ", ".join(dict.fromkeys(_where(f["path"], folder) for f in result["files"])))
    say("{}: {} learned, {} not worth learning, {} learned before; {} created, {} updated, {} merged.",
        plural(totals.get("turns", 0), "turn"),
        *(totals.get(k, 0) for k in ("learned", "not_worth_learning", "learned_before")),
        plural(totals.get("created", 0), "lesson"), totals.get("updated", 0), totals.get("merged", 0))
    if totals.get("captured_by_hooks"):
        say("{} already learned from what the hooks captured (--force learns them again).",
            plural(totals["captured_by_hooks"], "session was", "sessions were"))
    unreadable = [f for f in result["files"] if f.get("error")]
    for f in unreadable[:5]:
        say("Not read: {}", f["error"])
    if len(unreadable) > 5:
        say("… and {} more not read (`--json` lists them).", plural(len(unreadable) - 5, "file"))
    say("Project: [bold]{}[/] ({}) — {}.", where["name"], where["root"], where["reason"])
    skipped = transcript_learn.describe_skips(result["skips"], sorted(set(result["notes"])))
    if skipped:
        say("Skipped: {}.", skipped)


def _where(path, folder):
    """The folder a transcript was found in: Claude Code's, else its agent's top folder."""
    from ..observe import transcript_formats

    for top in (folder, transcript_formats.codex_sessions_dir(), transcript_formats.gemini_tmp_dir()):
        if path.startswith(os.path.join(top, "")):
            return top
    return os.path.dirname(path)


def _brief(row):
    if row.get("error") or row.get("skipped_reason"):
        return row.get("error") or row["skipped_reason"]
    if not row["turns"]:
        return f"no turns ({row.get('empty_reason') or 'nothing to learn'})"
    return (f"{plural(row['turns'], 'turn')}: {row['learned']} learned, "
            f"{row['not_worth_learning']} not worth learning, {row['learned_before']} learned before")


def _learn_queue(project, session_id, retry_failed, wait_seconds, reflector, as_json):
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from ..jobs import worker

    cfg = load_config(project.root)
    with open_store() as store:
        project_id = store.project_id(project.key)
        if project_id is None:
            fail(f"nothing captured for {project.root} yet; run Claude Code there with ace-engine installed "
                 "(`ace install`), or learn from a transcript with `ace learn --transcript FILE`")
        queued = []
        if session_id:
            if store.session(session_id) is None:
                fail(f"no session `{session_id}` in the store; `ace sessions` lists them")
            queued = store.enqueue_leftovers(session_id, "cli", time.time(), cfg["learning.max_attempts"])
        if retry_failed:
            for failed in store.list_jobs(project_id, statuses=("failed",), limit=1000):
                store.retry_job(failed["id"], time.time())
        waiting = console.status("a background worker is learning this project; waiting for it…")
        with waiting if not as_json else nullcontext():
            lock = worker.wait_for_lock(project.key, wait_seconds)
        if lock is None:
            fail(f"a background learning worker still holds {worker.lock_path(project.key)} after {wait_seconds:g}s; "
                 "try again later or pass a longer --wait")
        try:
            total = store.runnable_jobs(project_id, time.time(), ignore_backoff=True) + \
                store.job_counts(project_id).get("running", 0)
            if as_json:
                results = worker.drain(store, project_id, lock, cfg, linger=0, ignore_backoff=True, reflector=reflector)
            else:
                columns = (TextColumn("[progress.description]{task.description}"), BarColumn(), MofNCompleteColumn(),
                           TimeElapsedColumn())
                with Progress(*columns, console=console, transient=True) as progress:
                    bar = progress.add_task("learning", total=max(total, 1))
                    results = worker.drain(store, project_id, lock, cfg, linger=0, ignore_backoff=True,
                                           reflector=reflector, on_job=lambda r: progress.advance(bar))
        finally:
            lock.release()
        jobs = {j["id"]: j for j in store.list_jobs(project_id, limit=max(50, len(results) + 10))}
    if as_json:
        return emit_json({"project": project.key, "queued": queued, "results": results,
                          "jobs": [jobs.get(r["job"]) for r in results]})
    if not results:
        say("No pending learning jobs for this project. `ace jobs` shows the queue.")
        return
    rows = []
    for r in results:
        summary = r.get("summary") or {}
        job: Mapping[str, Any] = jobs.get(r["job"]) or {}
        note = job.get("reason") or (r.get("error") or "").split("\n")[0]
        rows.append([r["job"], job.get("session_id") or "", job.get("agent_id") or "main", r["status"],
                     summary.get("created", 0), summary.get("updated", 0), summary.get("merged", 0),
                     summary.get("pruned", 0), summary.get("quarantined", 0), clip(note, 160)])
    table("Learned",
          ["job", "session", "agent", "status", "created", "updated", "merged", "pruned", "quarantined", "note"], rows,
          body=("note",), bare=("status",))


@click.command()
@project_option
@click.option("--all", "all_projects", is_flag=True, help="Jobs of every project.")
@click.option("--status", "statuses", multiple=True,
              type=click.Choice(["queued", "running", "done", "failed", "skipped"]), help="Only these (repeatable).")
@click.option("--retry", "retry_id", type=int, default=None, help="Queue this failed or skipped job again.")
@click.option("--limit", default=30, show_default=True)
@wide_option
@json_option
def jobs(project_dir, all_projects, statuses, retry_id, limit, as_json):
    """The learning queue: one job per finished task (Stop / SubagentStop) or session end."""
    project = project_of(project_dir)
    with open_store() as store:
        project_id = store.project_id(project.key)
        if retry_id is not None:
            if not store.retry_job(retry_id, time.time()):
                fail(f"job {retry_id} is not a failed or skipped job of the queue; "
                     "`ace jobs --status failed` lists them")
            from ..jobs.queue import start_worker

            start_worker(project.key)
        rows = store.list_jobs(project_id, all_projects=all_projects, statuses=tuple(statuses), limit=limit)
        counts = store.job_counts(project_id, all_projects=all_projects)
    if as_json:
        shown = [{**row, "created_at_iso": iso(row["created_at"]), "finished_at_iso": iso(row["finished_at"])}
                 for row in rows]
        return emit_json({"jobs": shown, "counts": counts})
    if not rows:
        say("No learning jobs yet: they are queued when a Claude Code turn ends (Stop).")
        return
    table(None, ["job", "project", "session", "agent", "trigger", "status", "attempts", "events", "created", "note"], [
        [j["id"], j["project"], j["session_id"] or "",
         j["agent_id"] or ("main" if j["kind"] == "session" else j["kind"]),
         j["trigger"], j["status"], f"{j['attempts']}/{j['max_attempts']}",
         f"{plural(j['tool_events'], 'tool')}, {plural(j['messages'], 'msg')}" if j["kind"] == "session" else "-",
         when(j["created_at"]), _note(j)] for j in rows], body=("note",), bare=("status",))
    say("{}", "  ".join(f"{k}: {v}" for k, v in sorted(counts.items())))


def _note(job: "Mapping[str, Any]") -> str:
    if job["status"] in ("failed", "queued") and job.get("last_error"):
        text = job["last_error"].split("\n")[0]
        if job["status"] == "queued" and job["not_before"] > time.time():
            text = f"retry after {when(job['not_before'])}: {text}"
        return clip(text, 160)
    if job.get("reason"):
        return clip(job["reason"], 160)
    result = job.get("result") if isinstance(job.get("result"), dict) else {}
    if result:
        return f"+{result.get('created', 0)} ~{result.get('updated', 0)} merged {result.get('merged', 0)}"
    return ""


COMMANDS = [learn, jobs]
