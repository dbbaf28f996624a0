"""`ace bootstrap`: seed the project's playbook from the repository (see learning/bootstrap.py)."""

import click
from rich.progress import BarColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

from .. import bootstrap as bootstrap_mod
from .. import escape
from ..playbook.playbook import Playbook
from ..project import Project, identify
from .common import json_option, open_store, project_option, resolve_dir
from .output import console, emit_json, say, styled, table

STATUS_STYLE = {"created": ("new", "green"), "updated": ("updated", "yellow"), "unchanged": ("exists", "dim")}


@click.command("bootstrap")
@click.option("--mode", type=click.Choice(bootstrap_mod.MODES), default="hybrid", show_default=True,
              help="local-files: build files, CI, linters; docs: README and contributor docs; "
                   "git-history: fix hot spots and reverts; hybrid: all of them.")
@click.option("--thoroughness", type=click.Choice(tuple(bootstrap_mod.LEVELS)), default="medium", show_default=True,
              help="How far to read (commits, docs, workspaces) and how many bullets to keep.")
@click.option("--dry-run", is_flag=True, help="Show what would be added; change nothing.")
@project_option
@json_option
def bootstrap(mode, thoroughness, dry_run, project_dir, as_json):
    """Seed this project's playbook from the repository itself.

    Reads the build / test / lint commands (pyproject.toml, package.json, Makefile, CI workflows,
    READMEs), the configured conventions (formatters, linters, type checkers) and the git history
    (files that keep needing fixes, reverted commits). Every bullet names its source. Re-running
    adds nothing new; changed facts update their bullet.
    """
    project = identify(resolve_dir(project_dir))
    store = open_store()
    try:
        playbook = Playbook(store, project)
        if as_json:
            result = bootstrap_mod.bootstrap(playbook, project.root, mode=mode, thoroughness=thoroughness,
                                             dry_run=dry_run)
        else:
            result = _with_progress(playbook, project.root, mode, thoroughness, dry_run)
    finally:
        store.close()
    if as_json:
        return emit_json({**result, "project": project.name})
    _print(result, project)


def _with_progress(playbook: Playbook, root: str, mode: str, thoroughness: str, dry_run: bool) -> dict:
    columns = (SpinnerColumn(), TextColumn("[bold]{task.description}"), BarColumn(),
               TextColumn("{task.completed}/{task.total}"), TimeElapsedColumn())
    with Progress(*columns, console=console, transient=True) as progress:
        task = progress.add_task("reading the repository", total=len(bootstrap_mod.plan(mode, thoroughness)))

        def on_step(label, index, total):
            # the description column is markup: escape what is not the code's own words
            description = "seeding the playbook" if label == "done" else f"reading {escape.terminal(label)}"
            progress.update(task, completed=index, total=total, description=description)

        return bootstrap_mod.bootstrap(playbook, root, mode=mode, thoroughness=thoroughness, dry_run=dry_run,
                                       on_step=on_step)


def _print(result: dict, project: Project) -> None:
    bullets = result["bullets"]
    if not bullets:
        say("Nothing to bootstrap in [bold]{}[/] ({}, {}): no build files, configs, docs or history found. "
            "Learning will start from your sessions.", project.root, result["mode"], result["thoroughness"])
    else:
        table(None, ["status", "id", "section", "bullet"], [
            [styled(*STATUS_STYLE.get(b["status"], (b["status"],))), b["id"] or "-", b["section"], b["content"]]
            for b in bullets
        ])
    verb = "Would add" if result["dry_run"] else "Added"
    say("{} {} new bullets, {} {}, {} already there — {}, mode {}, {}, {}s.", verb, result["created"],
        "would update" if result["dry_run"] else "updated", result["updated"], result["unchanged"], project.name,
        result["mode"], result["thoroughness"], f"{result['seconds']:.2f}")
    if result.get("dropped"):
        say("{} more were found; `--thoroughness deep` keeps more.", result["dropped"])
    for problem in result.get("problems") or []:
        say("[yellow]skipped[/] {}: {}", problem["file"], problem["problem"])
    if result["dry_run"] and result["created"]:
        say("Run without --dry-run to add them.")


COMMANDS = [bootstrap]
