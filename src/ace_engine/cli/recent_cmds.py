"""Looking back on demand: `ace recent` and `ace session ID` — the session summaries of continuity/.

`ace recent [--sessions N] [--json]`: this project's last N sessions, newest first, each with its
summary — what was asked, what is left open, what was done — and whether the next session start
brings it back (`carry`). Sessions captured before summaries existed get one built on the spot
(`computed`, not stored). `ace session ID [--json] [--full]` (a unique prefix is enough): one
session's summary on top, then everything captured for it — `show_session` is the same view for
`ace sessions show ID`. Both only read.

Text is shown through `output` (escaped for the terminal); `--json` carries the stored summary.
"""

from __future__ import annotations

from typing import Any

import click

from ..continuity import summarize, update
from ..core.project import identify
from .capture_cmds import render_session, sessions
from .common import json_option, open_store, project_option, resolve_dir, resolve_session
from .output import emit_json, iso, say, when


def _entry(row: dict[str, Any]) -> dict[str, Any]:
    summary = row.get("summary") or {}
    return {"session_id": row["session_id"], "last_at": row.get("last_at"), "last_at_iso": iso(row.get("last_at")),
            "branch": row.get("branch"), "kind": row.get("kind"), "version": row.get("version"),
            "carry": bool(row.get("carry")), "open_ends": row.get("open_ends", 0),
            "computed": bool(row.get("computed")),
            "lines": [line for line in str(row.get("text") or "").splitlines() if line], "summary": summary}


def _print(entry: dict[str, Any]) -> None:
    summary = entry["summary"]
    facts = [f"branch {entry['branch']}" if entry["branch"] else None, entry["kind"],
             "not stored yet" if entry["computed"] else None,
             "brought back at session start" if entry["carry"] else "nothing to carry over"]
    say("[bold]{}[/] {} ({})", entry["session_id"], when(entry["last_at"]), ", ".join(f for f in facts if f))
    lines = entry["lines"] or summarize.lines(summary)
    for line in lines or ["(no request, no tool call)"]:
        say("  {}", line)
    withheld = int(summary.get("withheld") or 0)
    if withheld:
        say("  [dim]{} line(s) kept out of the injected context by the safety policy[/]", withheld)


def recent_rows(store: Any, project_key: str, limit: int) -> list[dict[str, Any]]:
    """The project's last `limit` sessions with their summaries (stored, else built now)."""
    project_id = store.project_id(project_key)
    if project_id is None:
        return []
    rows = {r["session_id"]: r for r in store.summary_page(project_id, limit=limit)}
    for session in store.list_sessions(project_key, limit):
        if session["session_id"] not in rows:
            built = update.summary_of(store, session["session_id"])
            counts = (built or {}).get("summary", {}).get("counts") or {}
            if built is not None and (counts.get("prompts") or counts.get("tool_calls")):  # not an empty start
                rows[session["session_id"]] = built
    ordered = sorted(rows.values(), key=lambda r: -float(r.get("last_at") or 0.0))
    return ordered[:limit]


@click.command("recent")
@project_option
@click.option("--sessions", "limit", default=5, show_default=True, type=click.IntRange(1, 200),
              help="How many of the last sessions.")
@json_option
def recent(project_dir: str | None, limit: int, as_json: bool) -> None:
    """Where this project's last sessions left off: asked, done, left open."""
    project = identify(resolve_dir(project_dir))
    with open_store() as store:
        entries = [_entry(r) for r in recent_rows(store, project.key, limit)]
    if as_json:
        return emit_json({"project": {"key": project.key, "root": project.root, "name": project.name},
                          "sessions": entries})
    if not entries:
        say("No sessions recorded for {} yet. Is ace-engine on? Try `ace status`.", project.root)
        return
    for entry in entries:
        _print(entry)
        say("")


def _resolve(store: Any, session_id: str) -> str:
    """The session's id: exact (a session learned from a transcript may have a summary only), or
    the one captured session it is a unique prefix of (`common.resolve_session`, as everywhere)."""
    if store.session(session_id) or store.session_summary(session_id):
        return session_id
    return str(resolve_session(store, session_id)["session_id"])


def show_session(session_id: str, as_json: bool = False, full: bool = False) -> None:
    """One session: its summary on top, then what was captured (`ace session`, `ace sessions show`)."""
    with open_store() as store:
        sid = _resolve(store, session_id)
        row = update.summary_of(store, sid)
        session = store.session(sid)
        data = store.session_events(sid) if session else None
    entry = _entry(row) if row else None
    if as_json:
        return emit_json({"session": session, "summary": entry, **(data or {})})
    if entry:
        _print(entry)
    else:
        say("No summary for {}: nothing was recorded for it.", sid)
    if session and data:
        say("")
        render_session(session, data, full)


@click.command("session")
@click.argument("session_id")
@click.option("--full", is_flag=True, help="Show whole inputs and responses, not one line each.")
@json_option
def session_cmd(session_id: str, full: bool, as_json: bool) -> None:
    """One session (a unique prefix is enough): its summary on top, then everything captured for it."""
    show_session(session_id, as_json, full)


sessions.add_command(session_cmd, "show")  # `ace sessions show ID` is `ace session ID`, one command

COMMANDS = [recent, session_cmd]
__all__ = ["COMMANDS", "recent", "session_cmd", "show_session", "recent_rows"]
