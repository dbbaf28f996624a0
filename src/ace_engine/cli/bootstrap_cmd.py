"""`ace bootstrap`: seed the project's playbook from the repository (see the `bootstrap` package)."""

import os

import click
from rich.progress import BarColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

from .. import bootstrap as bootstrap_mod
from ..bootstrap import files as bootstrap_files
from ..core import escape
from ..core.project import Project, identify
from ..playbook.playbook import Playbook
from .common import json_option, open_store, project_option, resolve_dir
from .output import console, details, emit_json, plural, say, styled, table

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


# What each step reads, for saying which of those files this repository has (`files.ci_files` and
# `files.doc_files` list the CI and doc files themselves).
STEP_FILES = {
    "managers": ("uv.lock", "poetry.lock", "pdm.lock", "Pipfile.lock", "package-lock.json", "pnpm-lock.yaml",
                 "yarn.lock", "bun.lock"),
    "pyproject": ("pyproject.toml",),
    "package-json": ("package.json",),
    "make": ("Makefile", "makefile", "GNUmakefile", "justfile", "Justfile"),
    "tox-nox": ("tox.ini", "noxfile.py"),
    "conventions": ("pyproject.toml", "ruff.toml", ".ruff.toml", ".flake8", "setup.cfg", "mypy.ini", "pytest.ini",
                    "pyrightconfig.json", "tsconfig.json", ".eslintrc.json", ".prettierrc", "package.json"),
}


def _read_report(result: dict, root: str) -> list[tuple[str, str]]:
    """(step, what it read and found) for each step run: the findings, or why there were none."""
    labels = dict(bootstrap_mod.plan(result["mode"], result["thoroughness"]))
    deep, medium = result["thoroughness"] == "deep", result["thoroughness"] != "light"
    no_git = any(p["file"] == ".git" for p in result.get("problems") or [])
    rows = []
    for step in result.get("steps") or []:
        name, found = step["step"], step["findings"]
        if name == "ci":
            present = bootstrap_files.ci_files(root)
        elif name == "docs":
            present = bootstrap_files.doc_files(root, deep, medium)
        elif name == "git":
            present = [] if no_git else [".git"]
        else:
            present = [f for f in STEP_FILES.get(name, ()) if os.path.exists(os.path.join(root, f))]
        shown = ", ".join(present[:4]) + (f" (+{len(present) - 4})" if len(present) > 4 else "")
        if found:
            what = f"{plural(found, 'finding')}" + (f" in {shown}" if name != "git" else " in the commits")
        elif name == "git":
            what = ("not a git repository (or git is missing)" if no_git else
                    "read the commits: no file kept needing fixes, no reverts, no commit convention")
        elif name == "ci" and not medium:
            what = "skipped at --thoroughness light"
        elif present:
            what = f"read {shown}: no command or setting ace-engine knows"
        else:
            looked = STEP_FILES.get(name) or {"ci": (".github/workflows", ".gitlab-ci.yml"),
                                              "docs": ("README", "CONTRIBUTING", "docs/")}.get(name, ())
            what = f"none here (looked for {', '.join(looked[:5])}{', …' if len(looked) > 5 else ''})"
        rows.append((labels.get(name, name), what))
    return rows


def _print(result: dict, project: Project) -> None:
    bullets = result["bullets"]
    details(f"Read in {project.root} (mode {result['mode']}, {result['thoroughness']})",
            _read_report(result, project.root))
    if bullets:
        table(None, ["status", "id", "section", "bullet"], [
            [styled(*STATUS_STYLE.get(b["status"], (b["status"],))), b["id"] or "-", b["section"], b["content"]]
            for b in bullets
        ], body=("bullet",), bare=("status", "section"))
    verb = "Would add" if result["dry_run"] else "Added"
    say("{} {}, {} {}, {} already there — {}, {}s.", verb, plural(result["created"], "new bullet"),
        "would update" if result["dry_run"] else "updated", result["updated"], result["unchanged"], project.name,
        f"{result['seconds']:.2f}")
    if result.get("dropped"):
        say("{} more {} found; `--thoroughness deep` keeps more.", result["dropped"],
            "was" if result["dropped"] == 1 else "were")
    for problem in result.get("problems") or []:
        if problem["file"] != ".git":  # said in the report above
            say("[yellow]skipped[/] {}: {}", problem["file"], problem["problem"])
    if not bullets:
        hint = ("" if result["mode"] == "hybrid" else
                f" `--mode {result['mode']}` reads only part of it; `--mode hybrid` reads everything.")
        say("Nothing to bootstrap: none of what was read names a build, test or lint command, a tool setting or a "
            "trouble spot.{} Lessons will come from your sessions instead (`ace learn --all-transcripts` learns "
            "the ones Claude Code kept).", hint)
    if result["dry_run"] and result["created"]:
        say("Run without --dry-run to add them.")


COMMANDS = [bootstrap]
