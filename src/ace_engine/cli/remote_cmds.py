"""The team server, from a developer's machine: `ace remote set / status / unset / stats / review`,
`ace push` and `ace pull` (the work is in `team_client/`; docs/team-server.md has the design).

Trust: the binding is kept in the user's data directory only (`team_client/remote.py`), so `ace remote
set` is the one way a project gets a server; a plain-http URL to another machine is refused
without `--insecure`. The token is never printed back; `--token -` reads it from stdin, so it
stays out of the shell's history. Server answers are untrusted text and shown through `output`.
"""

from __future__ import annotations

import sys
from typing import Any

import click

from .. import team_client
from ..team_client.remote import remove_remote
from .common import json_option, load_config, open_store, project_of
from .output import emit_json, fail, plural, say, table, when

dir_option = click.option("--dir", "project_dir", default=None, type=click.Path(file_okay=False, exists=True),
                          help="Project directory (default: the current directory).")


@click.group("remote")
def remote() -> None:
    """The team server this project syncs with (see `ace push`, `ace pull`)."""


@remote.command("set")
@click.argument("url")
@click.option("--token", required=True, help="A token from `ace server token create` (`-`: read it from stdin).")
@click.option("--project", "name", default=None, help="The project's name on the server (default: the local name).")
@click.option("--insecure", is_flag=True, help="Allow plain http to another machine (the token travels in clear).")
@dir_option
@json_option
def set_cmd(url: str, token: str, name: str | None, insecure: bool, project_dir: str | None, as_json: bool) -> None:
    """Bind this project to NAME on the team server at URL, after checking that the server answers
    and accepts the token for that project. Kept in your data directory, never in the repository."""
    if token == "-":
        token = sys.stdin.readline().strip()
    project = project_of(project_dir)
    from ..team_client.client import NOTHING_LOST
    from ..team_client.remote import RemoteError

    with open_store() as store:
        try:
            result = team_client.bind(store, project, url, token, name=name, insecure=insecure)
        except RemoteError as exc:  # said as what it means here: nothing was bound
            fail(f"{str(exc).replace(NOTHING_LOST, '').rstrip('. ')}. `ace remote set` changed nothing: "
                 "fix that, then run it again")
    if as_json:
        return emit_json(result)
    server = result["server"]
    say("{} now syncs with project {} at {} (server {}; {} deltas logged).", project.name, result["project"],
        result["url"], result["version"] or "?", server.get("last_seq", "?"))
    say("`ace push` sends this machine's lessons, `ace pull` takes the team's; the learning worker does both.")


@remote.command("status")
@click.option("--offline", is_flag=True, help="Do not contact the server.")
@dir_option
@json_option
def status_cmd(offline: bool, project_dir: str | None, as_json: bool) -> None:
    """The server (reachable?), the project, the cursors, the outbox size and the last error."""
    project = project_of(project_dir)
    with open_store() as store:
        info = team_client.status(store, project, check=not offline)
    if as_json:
        return emit_json(info)
    if info["remote"] is None:
        say("{} has no team server; `ace remote set URL --token TOKEN` sets one.", project.name)
        return
    r = info["remote"]
    say("Remote: {} project {} (set {}).", r["url"], r["project"], when(r["since"]))
    server = info.get("server")
    if server is not None:
        if server.get("reachable"):
            proj = server.get("project") or {}
            lessons = proj.get("lessons") or {}
            say("Server: reachable (version {}); {} deltas logged, {} active, {} in review.", server.get("version"),
                proj.get("last_seq", "?"), lessons.get("active", "?"), lessons.get("quarantined", "?"))
        else:
            say("Server: [red]not usable[/]: {}", server.get("error"))
    say("Push: cursor at change {}, {} waiting; last push {}.", info["push_cursor"], plural(info["outbox"], "change"),
        when(info["pushed_at"]))
    say("Pull: cursor at seq {}; last pull {}.", info["pull_cursor"], when(info["pulled_at"]))
    if info["last_error"]:
        say("Last error: {}", info["last_error"])


@remote.command("unset")
@dir_option
@json_option
def unset_cmd(project_dir: str | None, as_json: bool) -> None:
    """Stop syncing this project (the binding and its token are deleted; lessons stay)."""
    project = project_of(project_dir)
    removed = remove_remote(project.key)
    if as_json:
        return emit_json({"project": project.name, "removed": removed})
    say("{}", f"{project.name} no longer syncs with a team server." if removed else
        f"{project.name} had no team server.")


@remote.command("stats")
@click.option("--days", type=click.IntRange(1, 366), default=30, show_default=True, help="Days to report.")
@dir_option
@json_option
def stats_cmd(days: int, project_dir: str | None, as_json: bool) -> None:
    """The team's statistics from the server: lessons per day, feedback, the most helpful lessons."""
    project = project_of(project_dir)
    remote_ = team_client.require_remote(project, None)
    with team_client.open_client(remote_) as client:
        stats = client.stats(remote_.project, days)
    if as_json:
        return emit_json(stats)
    columns = ["created", "updated", "pruned", "quarantined"]
    periods = [p for p in stats.get("periods") or [] if isinstance(p, dict) and any(p.get(c) for c in columns)]
    if periods:  # the days something happened; the JSON has every day
        table(f"{remote_.project} at {remote_.url}, last {plural(days, 'day')}", ["day", *columns],
              [[p.get("day"), *(p.get(c) for c in columns)] for p in periods])
    else:
        say("No lesson was created, updated, pruned or held on {} in the last {}.", remote_.project,
            plural(days, "day"))
    rate = stats.get("helpful_rate")
    say("Feedback: {} helpful, {} harmful ({}); {}.", stats.get("helpful"), stats.get("harmful"),
        "-" if rate is None else f"{float(rate):.0%} helpful", plural(int(stats.get("clients") or 0), "client"))
    top = [t for t in stats.get("top") or [] if isinstance(t, dict)]
    if top:
        table("Most helpful", ["id", "✓", "✗", "lesson"],
              [[t.get("lesson_id"), t.get("helpful"), t.get("harmful"), str(t.get("content") or "")[:90]]
               for t in top])


HASH_SHOWN = 16  # hex digits of a lesson's content hash shown in the queue and named by --seen


@remote.command("review")
@click.option("--approve", "approve_id", default=None, help="Approve this quarantined lesson (admin token).")
@click.option("--reject", "reject_id", default=None, help="Reject this quarantined lesson (admin token).")
@click.option("--seen", "seen", default=None, metavar="HASH",
              help="The hash the queue showed for it: what you read is what gets decided.")
@dir_option
@json_option
def review_cmd(approve_id: str | None, reject_id: str | None, seen: str | None, project_dir: str | None,
               as_json: bool) -> None:
    """The server's review queue (lessons its safety policy held back), or a decision on one. An
    approved lesson is pulled by every client, whose own safety policy still applies."""
    project = project_of(project_dir)
    remote_ = team_client.require_remote(project, None)
    with team_client.open_client(remote_) as client:
        queue = client.review(remote_.project)
        lessons = [x for x in queue.get("lessons") or [] if isinstance(x, dict)]
        if approve_id or reject_id:
            lesson_id = approve_id or reject_id or ""
            found = next((x for x in lessons if x.get("lesson_id") == lesson_id), None)
            full = str(found.get("content_hash") or "") if found else ""
            if not seen or len(seen) < HASH_SHOWN or not full.startswith(seen.lower()):
                fail(f"{lesson_id} is not waiting with the hash you name; run `ace remote review` and pass the "
                     f"hash it shows for the lesson with --seen (a lesson changed since is not decided)")
            answer: dict[str, Any] = client.decide(remote_.project, lesson_id, bool(approve_id), full)
            if as_json:
                return emit_json(answer)
            say("{} is now {}.", answer.get("lesson_id"), answer.get("status"))
            return
    if as_json:
        return emit_json(queue)
    if not lessons:
        say("Nothing awaits review on {}.", remote_.project)
        return
    table(f"Awaiting review on {remote_.project}", ["id", "hash", "lesson", "concerns"],
          [[x.get("lesson_id"), str(x.get("content_hash") or "")[:HASH_SHOWN], str(x.get("content") or "")[:90],
            "; ".join(map(str, x.get("concerns") or []))
            + (f" (client's note: {x.get('client_note')})" if x.get("client_note") else "")]
           for x in lessons])


@click.command("push")
@dir_option
@json_option
def push_cmd(project_dir: str | None, as_json: bool) -> None:
    """Send this project's new lesson changes to its team server (only lessons, never events)."""
    project = project_of(project_dir)
    with open_store() as store:
        report = team_client.push(store, project)
    if as_json:
        return emit_json(report)
    say("Pushed {}: {} applied, {} already there, {} held for review, {} rejected; {} waiting.",
        plural(report["sent"], "change"), report.get("applied", 0), report.get("duplicate", 0),
        report.get("quarantined", 0), report.get("rejected", 0), report["outbox"])
    for rejection in report["rejections"][:10]:
        say("  rejected {} {}: {}", rejection["op"], rejection["key"], rejection["reason"])


@click.command("pull")
@click.option("--from-start", is_flag=True, help="Apply the server's whole log again (changes nothing twice).")
@dir_option
@json_option
def pull_cmd(from_start: bool, project_dir: str | None, as_json: bool) -> None:
    """Take the team's lesson changes from the server into this project's playbook (the local safety
    policy applies to each)."""
    project = project_of(project_dir)
    cfg = load_config(project.root)
    with open_store() as store:
        report = team_client.pull(store, project, cfg, from_start=from_start)
    if as_json:
        return emit_json(report)
    say("Pulled up to seq {}: {} applied, {} skipped, {} of this machine's own.", report["cursor"], report["applied"],
        report["skipped"], report["own"])


COMMANDS = [remote, push_cmd, pull_cmd]
