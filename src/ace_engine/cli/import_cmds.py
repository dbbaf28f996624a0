"""`ace import --from claude-mem [PATH]`: a claude-mem user's history brought in (the work is
`learning.claude_mem_import`'s; this is its command line: the default path, a progress bar, the
summary, `--dry-run`, `--json`). `ace import --claude-memory [DIR]`: Claude Code's auto memory
directory of this repository read once (`learning.auto_memory.import_directory`).

Cost: imports rich only for the progress bar on a terminal."""

from __future__ import annotations

import os

from ..learning import claude_mem_import
from ..store.claude_mem_sql import ClaudeMemError
from .common import open_store, project_of
from .output import console, emit_json, fail, plural, say

SOURCES = ("claude-mem",)


def default_path() -> str:
    """Where claude-mem keeps its database: `$CLAUDE_MEM_DATA_DIR/claude-mem.db`, else
    `~/.claude-mem/claude-mem.db` (claude-mem's `src/shared/paths.ts`)."""
    base = os.environ.get("CLAUDE_MEM_DATA_DIR") or os.path.join("~", ".claude-mem")
    return os.path.join(os.path.expanduser(base), "claude-mem.db")


def run(source: str, path: str | None, project_dir: str | None, dry_run: bool, as_json: bool) -> None:
    path = path or default_path()
    only = project_of(project_dir) if project_dir else None
    with open_store() as store:
        try:
            if as_json or not console.is_terminal:
                result = claude_mem_import.import_claude_mem(store, path, run_dir=os.getcwd(), only=only,
                                                             dry_run=dry_run)
            else:
                result = _with_progress(store, path, only, dry_run)
        except ClaudeMemError as exc:
            fail(str(exc))
    if as_json:
        return emit_json(result)
    sessions, lessons = result["sessions"], result["lessons"]
    verb = "Would import" if dry_run else "Imported"
    say("{} {} of {} from {}{}.", verb, plural(sessions["imported"], "session"), result["total_sessions"], source,
        f" ({result['path']})")
    if not dry_run and sessions["already_here"]:
        say("{} already here (imported before, or captured by the hooks): left as they are.",
            plural(sessions["already_here"], "session was", "sessions were"))
    say("{}, {}, {}; {}.", plural(result["prompts"], "prompt"), plural(result["observations"], "observation"),
        plural(result["summaries"], "summary", "summaries"),
        f"{plural(lessons['worth'], 'observation')} worth a candidate lesson" if dry_run else
        f"{plural(lessons['created'], 'candidate lesson')} added, {lessons['quarantined']} held back by the "
        f"safety policy, {lessons['already']} already in the playbook")
    for name, entry in sorted(result["projects"].items()):
        say("  {} → {} ({})", name, entry["root"], plural(entry["sessions"], "session"))
    for name, count in sorted(result["skipped_projects"].items()):
        say("  {}: {} skipped — no project here has this name; run the import inside that repository",
            name, plural(count, "session"))
    if not dry_run and lessons["created"]:
        say("The lessons are candidates: `ace patterns --status candidate` lists them, `ace keep ID` keeps one; "
            "a session here that confirms one promotes it.")


def _with_progress(store, path, only, dry_run):
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    columns = (TextColumn("[progress.description]{task.description}"), BarColumn(), MofNCompleteColumn(),
               TimeElapsedColumn())
    with Progress(*columns, console=console, transient=True) as progress:
        bar = progress.add_task("reading claude-mem" if dry_run else "importing from claude-mem", total=None)
        return claude_mem_import.import_claude_mem(
            store, path, run_dir=os.getcwd(), only=only, dry_run=dry_run,
            on_session=lambda done, total: progress.update(bar, completed=done, total=total))


def run_claude_memory(directory: str | None, project_dir: str | None, dry_run: bool, as_json: bool) -> None:
    """`ace import --claude-memory [DIR]`: DIR, else this repository's auto memory directory."""
    from ..core import auto_memory as where
    from ..learning import auto_memory

    project = project_of(project_dir)
    if directory is None:
        directory = next((d for d in where.directories(project.main_root, project.root) if os.path.isdir(d)), None)
        if directory is None:
            fail(f"no Claude Code auto memory found for {project.root} (looked in "
                 f"{', '.join(where.directories(project.main_root, project.root))}); give its DIR")
    if not os.path.isdir(directory):
        fail(f"{directory} is not a directory")
    with open_store() as store:
        result = auto_memory.import_directory(store, project, directory, dry_run=dry_run)
    if as_json:
        return emit_json(result)
    say("{} {} from {} ({}).", "Would read" if dry_run else "Read", plural(result["notes"], "note"),
        result["directory"], plural(result["lessons"], "lesson"))
    if not dry_run:
        say("{} added as candidates, {} updated, {} already in the playbook, {} held back by the safety policy, "
            "{} rejected by the quality filter.", plural(result["created"], "lesson"), result["updated"],
            result["already"], result["quarantined"], result["rejected"])
