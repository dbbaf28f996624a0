"""What was captured: sessions, events, and keeping the store bounded (gc)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import click

from ..core import config as config_mod
from ..core.project import identify
from ..store import spool
from .common import json_option, open_store, project_option, resolve_dir, resolve_session, wide_option
from .output import emit_json, fail, iso, plural, say, size, table, when

if TYPE_CHECKING:
    from ..core._types import SessionRow
    from ..store.interfaces import SessionsStore


@click.group(invoke_without_command=True)
@project_option
@click.option("--all", "all_projects", is_flag=True, help="Sessions of every project (the default without --project).")
@click.option("--limit", default=50, show_default=True, help="At most this many, newest first.")
@wide_option
@json_option
@click.pass_context
def sessions(ctx, project_dir, all_projects, limit, as_json):
    """Captured sessions (Claude Code, Codex CLI, Gemini CLI; learned from a transcript or imported),
    newest first; `ace sessions show ID`: one, its summary on top."""
    # `show` is registered by recent_cmds.py, next to the summaries it shows.
    if ctx.invoked_subcommand is not None:
        return
    key = None if (all_projects or project_dir is None) else identify(resolve_dir(project_dir)).key
    from ..store.history_sql import McpStore  # the one list of a project's sessions: learned transcripts too

    store = McpStore(busy_timeout_ms=10_000)
    try:
        rows = store.project_sessions(key, limit)
    finally:
        store.close()
    if as_json:
        return emit_json({"sessions": [{**row, "started_at_iso": iso(row["started_at"]),
                                        "ended_at_iso": iso(row["ended_at"])} for row in rows]})
    if not rows:
        say("No sessions captured yet. Is ace-engine on? Try `ace status`.")
        return
    from ..agents import registry as agents

    table(None, ["session", "agent", "project", "started", "status", "tools (failed)", "messages"], [
        [r["session_id"], agents.label(r.get("agent")) + (" (claude-mem)" if r.get("source") == "claude-mem" else ""),
         r["project"], when(r["started_at"]),
         r["status"] + (f" ({r['end_reason']})" if r["end_reason"] else ""),
         f"{r['tool_events']} ({r['tool_failures']})", r["messages"]]
        for r in rows
    ])


def _find_session(store: SessionsStore, session_id: str) -> SessionRow:
    """The session an id or a unique id prefix names (`common.resolve_session`)."""
    return resolve_session(store, session_id)


@click.command()
@click.argument("session_id")
@click.option("--full", is_flag=True, help="Show whole inputs and responses, not one line each.")
@wide_option
@json_option
def events(session_id, full, as_json):
    """Everything captured for SESSION_ID (a unique prefix is enough), exactly as stored."""
    with open_store() as store:
        session = _find_session(store, session_id)
        data = store.session_events(session["session_id"])
    if as_json:
        return emit_json({"session": session, **data})
    render_session(session, data, full)


@click.command()
@click.option("--max-db-mb", type=float, default=None, help="Size cap (default: retention.max_db_mb).")
@click.option("--max-age-days", type=float, default=None, help="Age cap (default: retention.max_age_days).")
@click.option("--dry-run", is_flag=True, help="Report what would be removed; change nothing.")
@json_option
def gc(max_db_mb, max_age_days, dry_run, as_json):
    """Keep the store bounded: drop captured events past the age cap; then, over the size cap,
    only as many of the oldest finished sessions as it takes to get under 80 % of it (a running
    session is never removed), and give the space back to the disk. Spooled records are written
    first."""
    cfg = config_mod.load(None)
    max_mb = max_db_mb if max_db_mb is not None else cfg["retention.max_db_mb"]
    max_days = max_age_days if max_age_days is not None else cfg["retention.max_age_days"]
    if max_mb <= 0 or max_days <= 0:
        fail("--max-db-mb and --max-age-days must be positive")
    with open_store() as store:
        replayed = 0 if dry_run else spool.replay(store)
        result = store.gc(max_bytes=int(max_mb * 1024 * 1024), max_age_days=max_days, dry_run=dry_run)
    if as_json:
        return emit_json({**result, "replayed": replayed, "dry_run": dry_run})
    verb = "Would remove" if dry_run else "Removed"
    say("{} {}, {}, {}, {}; store {} → {} on disk; {} kept.", verb, plural(result["sessions"], "session"),
        plural(result["tool_events"], "tool event"), plural(result["messages"], "message"),
        plural(result["hook_events"], "hook event"), size(result["file_bytes_before"]),
        size(result["file_bytes_after"]), plural(result["kept_running"], "running session"))


def render_session(session: Mapping[str, Any], data: Mapping[str, Any], full: bool = False) -> None:
    """One time-ordered listing of a session's hooks, tool calls and messages (a table when it
    fits, else one block per entry with its content wrapped under it)."""
    timeline = [(e["created_at"], "hook", e["event"], e["detail"] or "") for e in data["hook_events"]
                if e["event"] not in ("PostToolUse", "PostToolUseFailure")]
    for t in data["tool_events"]:
        outcome = "ok" if t["success"] else f"FAILED exit={t['exit_code']}"
        text = f"{t['input'] or ''}\n→ {t['error'] or t['response'] or ''}"
        timeline.append((t["created_at"], "tool", f"{t['tool_name']} [{outcome}]", text))
    for m in data["messages"]:
        timeline.append((m["created_at"], m["role"], "message", m["text"]))
    timeline.sort(key=lambda row: row[0])

    def clip(text: str) -> str:
        if full:
            return text
        one = " ".join(text.split())
        return one if len(one) <= 160 else one[:157] + "..."

    title = (f"Session {session['session_id']} in {session['project_root']} ({session['status']}, "
             f"started {when(session['started_at'])})")
    table(title, ["time", "kind", "what", "content"],
          [[when(at), kind, what, clip(text)] for at, kind, what, text in timeline], body=("content",),
          bare=("kind", "what"))


COMMANDS = [sessions, events, gc]
