"""What was captured: sessions, events, and keeping the store bounded (gc)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import click

from .. import config as config_mod
from ..project import identify
from ..store import spool
from .common import json_option, open_store, project_option, resolve_dir
from .output import emit_json, fail, iso, say, size, table, when

if TYPE_CHECKING:
    from .._types import SessionRow
    from ..store.interfaces import Store


@click.command()
@project_option
@click.option("--all", "all_projects", is_flag=True, help="Sessions of every project (the default without --project).")
@click.option("--limit", default=50, show_default=True, help="At most this many, newest first.")
@json_option
def sessions(project_dir, all_projects, limit, as_json):
    """Captured Claude Code sessions, newest first."""
    key = None if (all_projects or project_dir is None) else identify(resolve_dir(project_dir)).key
    with open_store() as store:
        rows = store.list_sessions(key, limit)
    if as_json:
        return emit_json({"sessions": [{**row, "started_at_iso": iso(row["started_at"]),
                                        "ended_at_iso": iso(row["ended_at"])} for row in rows]})
    if not rows:
        say("No sessions captured yet. Is ace-engine on? Try `ace status`.")
        return
    table(None, ["session", "project", "started", "status", "tools (failed)", "messages"], [
        [r["session_id"], r["project"], when(r["started_at"]),
         r["status"] + (f" ({r['end_reason']})" if r["end_reason"] else ""),
         f"{r['tool_events']} ({r['tool_failures']})", r["messages"]]
        for r in rows
    ])


def _find_session(store: Store, session_id: str) -> SessionRow:
    found = store.session(session_id)
    if found:
        return found
    matches = [s for s in store.list_sessions(None, 10_000) if s["session_id"].startswith(session_id)]
    if len(matches) == 1:
        found = store.session(matches[0]["session_id"])
        if found:  # else it was removed meanwhile (gc): "no session" below
            return found
    elif matches:
        fail(f"`{session_id}` matches {len(matches)} sessions; give more of the id (see `ace sessions`)")
    fail(f"no session `{session_id}` in the store; `ace sessions` lists the captured ones")


@click.command()
@click.argument("session_id")
@click.option("--full", is_flag=True, help="Show whole inputs and responses, not one line each.")
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
    say("{} {} sessions, {} tool events, {} messages, {} hook events; store {} → {} on disk; {} running "
        "session(s) kept.", verb, result["sessions"], result["tool_events"], result["messages"],
        result["hook_events"], size(result["file_bytes_before"]), size(result["file_bytes_after"]),
        result["kept_running"])


def render_session(session: Mapping[str, Any], data: Mapping[str, Any], full: bool = False) -> None:
    """One time-ordered table of a session's hooks, tool calls and messages."""
    say("Session [bold]{}[/] in {} ({}, started {})", session["session_id"], session["project_root"],
        session["status"], when(session["started_at"]))
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

    table(None, ["time", "kind", "what", "content"],
          [[when(at), kind, what, clip(text)] for at, kind, what, text in timeline])


COMMANDS = [sessions, events, gc]
