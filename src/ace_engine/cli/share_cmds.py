"""Sharing the playbook: `ace export`, `ace import` (see playbook/transfer.py for the format and
the merge rules) and `ace sync` (the top lessons in CLAUDE.md / AGENTS.md / Copilot's
instructions; see integrations/agent_files.py).

Trust: an export file is private data (written 0600, atomically); an import file is untrusted
(its status, scope and counters are believed only with `--trust`, and the lesson safety policy
applies either way); the synced files are committed and read by every agent, so only active
lessons the safety policy passes go there, and never outside the project root."""

from __future__ import annotations

import json
import os
from typing import TYPE_CHECKING

import click

from ..core import escape
from ..core.files import atomic_write
from ..integrations import agent_files
from ..playbook import rescreen, safety, transfer
from ..playbook.playbook import Playbook
from . import import_cmds
from .common import json_option, load_config, open_store, project_of, project_option
from .output import console, emit_json, fail, json_safe, plural, say, table
from .playbook_common import known_project_id

if TYPE_CHECKING:
    from ..core._types import ImportItem, ScoredBullet

PROGRESS_FROM = 200  # items: smaller files import in a blink


@click.command("export")
@click.option("-o", "--output", "output", type=click.Path(dir_okay=False), default=None,
              help="Write to FILE (default: stdout).")
@click.option("--force", is_flag=True, help="Overwrite FILE if it exists (a symlink there is replaced, not followed).")
@click.option("--all-projects", is_flag=True, help="Every project's bullets, not just this one's.")
@project_option
@json_option
def export_cmd(output, force, all_projects, project_dir, as_json):
    """Export the playbook (this project's bullets and the global ones, every status, with their
    counters and provenance) as versioned JSON that `ace import` reads back."""
    project = project_of(project_dir)
    with open_store() as store:
        document = transfer.export_playbook(store, project, all_projects=all_projects)
    text = json.dumps(document, indent=2, ensure_ascii=False) + "\n"
    if output is None or output == "-":
        click.echo(json_safe(text), nl=False)  # C1 controls and bidi overrides as \uXXXX: same JSON
        return
    path = os.path.abspath(output)
    if os.path.lexists(path) and not force:
        fail(f"{output} already exists; pass --force to overwrite it, or choose another file")
    if os.path.isdir(path):
        fail(f"{output} is a directory; give a file name")
    try:
        atomic_write(path, text, mode=0o600)  # lessons and provenance are private: owner only
    except OSError as exc:
        fail(f"cannot write {output} ({exc.strerror}); check that its directory exists and is writable")
    summary = {"file": path, "bullets": len(document["bullets"]), "format": transfer.FORMAT,
               "version": transfer.VERSION}
    if as_json:
        return emit_json(summary)
    say("Exported {} to {}.", plural(summary["bullets"], "bullet"), output)


@click.command("import")
@click.argument("file", required=False, type=click.Path())
@click.option("--trust", is_flag=True,
              help="Believe the file's status, scope (global) and counters: only for a file you vouch for, "
                   "such as your own export. Flagged lessons are quarantined all the same.")
@click.option("--from", "source", type=click.Choice(import_cmds.SOURCES), default=None,
              help="Bring in another memory tool's history instead: FILE is its database (claude-mem: "
                   "~/.claude-mem/claude-mem.db by default).")
@click.option("--claude-memory", "claude_memory", is_flag=True,
              help="Read Claude Code's auto memory once: FILE is its directory (default: this repository's).")
@click.option("--dry-run", is_flag=True, help="With --from or --claude-memory: read everything and say what would "
                                              "come, write nothing.")
@project_option
@json_option
def import_cmd(file, trust, source, claude_memory, dry_run, project_dir, as_json):
    """Import bullets from FILE: an `ace export`, or a JSON list of {content, section, domain?,
    helpful?, harmful?} objects. A file can come from anyone, so by default only its lessons'
    words, section and domains are taken: each comes in as a new lesson of this project with zero
    counters, and any the safety policy flags waits in `ace review`. Bullets already in the
    playbook are never duplicated; importing the same file twice changes nothing. Every item is
    checked first: one bad item and nothing is imported.

    `ace import --from claude-mem [PATH]` brings a claude-mem history in: its sessions (prompts and
    observations, found by the MCP search_history), their summaries and, from its observations of
    fixes, gotchas and decisions, candidate lessons — each into the project it belongs to (the
    repository you run it in, or one ace-engine knows, by name; --project: only that one). The
    database is opened read-only; --dry-run writes nothing.

    `ace import --claude-memory [DIR]` reads Claude Code's auto memory notes (MEMORY.md and its
    topic files; regular files only, no symlink followed) once, as candidate lessons."""
    if claude_memory:
        if source or trust:
            fail("--claude-memory goes alone (not with --from or --trust): its notes always come in as candidates")
        return import_cmds.run_claude_memory(file, project_dir, dry_run, as_json)
    if source:
        if trust:
            fail("--trust is for playbook files; a claude-mem import always comes in as candidates")
        return import_cmds.run(source, file, project_dir, dry_run, as_json)
    if dry_run:
        fail("--dry-run goes with --from (e.g. `ace import --from claude-mem --dry-run`)")
    if not file:
        fail("give the FILE to import (an `ace export`), or --from claude-mem")
    if not os.path.isfile(file):
        fail(f"{file} does not exist or is not a file")
    project = project_of(project_dir)
    name = os.path.basename(file)
    cfg = load_config(project.root)
    with open_store() as store:
        playbook = Playbook(store, project, trusted_hosts=cfg["learning.trusted_hosts"] or ())
        try:
            items = transfer.load_file(file, playbook.extra_sections)
        except transfer.TransferError as exc:
            if len(exc.problems) == 1 and ": item " not in exc.problems[0]:  # the file as a whole: one line
                problem = exc.problems[0]
                fail(problem if "nothing was imported" in problem else f"{problem}; nothing was imported")
            fail(f"nothing was imported:\n  {exc}\nFix these items (or remove them) and import again.")
        if as_json or len(items) < PROGRESS_FROM:
            result = transfer.import_items(playbook, items, source_name=name, trust=trust)
        else:
            result = _with_progress(playbook, items, name, trust)
    result["file"] = os.path.abspath(file)
    if as_json:
        return emit_json(result)
    say("Imported {} into {}: {} created, {} merged, {} skipped (already there) — {}.", name, project.name,
        result["created"], result["merged"], result["skipped"], plural(result["total"], "item"))
    if result["quarantined"]:
        say("{} held back by the safety policy: see `ace review`.", result["quarantined"])
    if not trust:
        say("Status, scope and counters in the file were not taken (pass --trust for a file you vouch for).")


def _with_progress(playbook: Playbook, items: list[ImportItem], name: str, trust: bool) -> dict:
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    columns = (TextColumn("[progress.description]{task.description}"), BarColumn(), MofNCompleteColumn(),
               TimeElapsedColumn())
    with Progress(*columns, console=console, transient=True) as progress:
        bar = progress.add_task(f"importing {escape.terminal(name)}", total=len(items))  # the column is markup
        return transfer.import_items(playbook, items, source_name=name, trust=trust,
                                     on_item=lambda done: progress.update(bar, completed=done))


@click.command()
@click.option("--remove", is_flag=True, help="Take the ACE section out of the files instead.")
@click.option("--k", "k", type=click.IntRange(min=1), default=15, show_default=True, help="How many lessons to write.")
@project_option
@json_option
def sync(remove, k, project_dir, as_json):
    """Write the project's top lessons into CLAUDE.md, AGENTS.md and .github/copilot-instructions.md
    at the project root, between <!-- ACE_SECTION_START --> and <!-- ACE_SECTION_END -->. Nothing
    outside the markers changes; missing files are created (.github/ itself is not). Global lessons
    are left out: these files are usually committed and shared. Only active lessons the safety
    policy passes are written (one you approved in `ace review` is injected for you, but not
    written where every agent of every clone reads it), and a target that a symlink leads out of
    the project is refused: then nothing is written."""
    from ..retrieval.search import top

    project = project_of(project_dir)
    bullets: list[ScoredBullet] = []
    if not remove:
        cfg = load_config(project.root)
        with open_store() as store:
            rescreen.ensure_screened(store)  # lessons stored under an older policy: quarantined before reading
            project_id = known_project_id(store, project)
            if project_id is not None:
                hosts = tuple(cfg["learning.trusted_hosts"] or ()) + (safety.remote_host(project.remote) or "",)
                # Screened again: a lesson stored before the policy (or by an older version) that it
                # now flags stays out of files every agent obeys.
                bullets = [b for b in top(store, project_id, k * 2, cfg=cfg, include_global=False)
                           if b["status"] == "active" and not safety.concerns(b["content"], hosts)][:k]
    try:
        entries = agent_files.sync(project.root, bullets, remove=remove)
    except OSError as exc:  # SyncError is an AceError: the `ace` group shows it
        fail(f"cannot write {exc.filename or 'a file'} ({exc.strerror}); check the permissions of the project "
             "directory, then re-run")
    if as_json:
        return emit_json({"root": project.root, "bullets": [b["id"] for b in bullets], "files": entries})
    table(None, ["file", "action"], [[e["file"], e["action"] + (f" ({e['reason']})" if e.get("reason") else "")]
                                     for e in entries])
    if not remove:
        say("{} of {} in the ACE section.", plural(len(bullets), "lesson"), project.name)


COMMANDS = [export_cmd, import_cmd, sync]
