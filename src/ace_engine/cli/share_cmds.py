"""Sharing the playbook: `ace export`, `ace import` (see playbook/transfer.py for the format and
the merge rules) and `ace sync` (the top lessons in CLAUDE.md / AGENTS.md / Copilot's
instructions; see integrations/agent_files.py)."""

import json
import os

import click

from ..integrations import agent_files
from ..playbook import transfer
from ..playbook.playbook import Playbook
from .common import json_option, load_config, open_store, project_of, project_option
from .output import console, emit_json, fail, table
from .playbook_common import known_project_id

PROGRESS_FROM = 200  # items: smaller files import in a blink


@click.command("export")
@click.option("-o", "--output", "output", type=click.Path(dir_okay=False), default=None,
              help="Write to FILE (default: stdout).")
@click.option("--force", is_flag=True, help="Overwrite FILE if it exists.")
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
        click.echo(text, nl=False)
        return
    path = os.path.abspath(output)
    if os.path.exists(path) and not force:
        fail(f"{output} already exists; pass --force to overwrite it, or choose another file")
    try:
        agent_files.atomic_write(path, text)
    except OSError as exc:
        fail(f"cannot write {output} ({exc.strerror}); check that its directory exists and is writable")
    summary = {"file": path, "bullets": len(document["bullets"]), "format": transfer.FORMAT,
               "version": transfer.VERSION}
    if as_json:
        return emit_json(summary)
    console.print(f"Exported {summary['bullets']} bullets to {output}.", highlight=False)


@click.command("import")
@click.argument("file", type=click.Path(dir_okay=False, exists=True))
@project_option
@json_option
def import_cmd(file, project_dir, as_json):
    """Import bullets from FILE: an `ace export`, or a JSON list of {content, section, domain?,
    helpful?, harmful?} objects. Bullets already in the playbook are merged (their counters raised
    to the file's when higher), never duplicated; importing the same file twice changes nothing.
    Every item is checked first: one bad item and nothing is imported."""
    project = project_of(project_dir)
    name = os.path.basename(file)
    with open_store() as store:
        playbook = Playbook(store, project)
        try:
            items = transfer.load_file(file, playbook.extra_sections)
        except transfer.TransferError as exc:
            fail(f"nothing was imported:\n  {exc}\nFix these items (or remove them) and import again.")
        if as_json or len(items) < PROGRESS_FROM:
            result = transfer.import_items(playbook, items, source_name=name)
        else:
            result = _with_progress(playbook, items, name)
    result["file"] = os.path.abspath(file)
    if as_json:
        return emit_json(result)
    console.print(f"Imported {name} into {project.name}: {result['created']} created, {result['merged']} merged, "
                  f"{result['skipped']} skipped (already there) — {result['total']} items.", highlight=False)


def _with_progress(playbook, items, name) -> dict:
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    columns = (TextColumn("[progress.description]{task.description}"), BarColumn(), MofNCompleteColumn(),
               TimeElapsedColumn())
    with Progress(*columns, console=console, transient=True) as progress:
        bar = progress.add_task(f"importing {name}", total=len(items))
        return transfer.import_items(playbook, items, source_name=name,
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
    are left out: these files are usually committed and shared."""
    from ..retrieval.search import top

    project = project_of(project_dir)
    bullets: list[dict] = []
    if not remove:
        cfg = load_config(project.root)
        with open_store() as store:
            project_id = known_project_id(store, project)
            if project_id is not None:
                bullets = top(store, project_id, k, cfg=cfg, include_global=False)
    try:
        entries = agent_files.sync(project.root, bullets, remove=remove)
    except agent_files.SyncError as exc:
        fail(str(exc))
    except OSError as exc:
        fail(f"cannot write {exc.filename or 'a file'} ({exc.strerror}); check the permissions of the project "
             "directory, then re-run")
    if as_json:
        return emit_json({"root": project.root, "bullets": [b["id"] for b in bullets], "files": entries})
    table(None, ["file", "action"], [[e["file"], e["action"] + (f" ({e['reason']})" if e.get("reason") else "")]
                                     for e in entries])
    if not remove:
        console.print(f"{len(bullets)} lessons of {project.name} in the ACE section.", highlight=False)


COMMANDS = [export_cmd, import_cmd, sync]
