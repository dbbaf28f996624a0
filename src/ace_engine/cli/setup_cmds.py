"""Switching ace-engine on and off, and checking that it works: install, uninstall, status,
doctor, config."""

import click

from .. import config as config_mod
from .. import diagnostics
from ..integrations import claude_settings
from ..project import identify
from .common import json_option, project_option, resolve_dir
from .output import console, emit_json, fail, size, table, when

scope_options = [
    click.option("--user", "scope", flag_value="user", help="~/.claude/settings.json (every project)."),
    click.option("--local", "scope", flag_value="local", help=".claude/settings.local.json (just you)."),
]


def _scoped(fn):
    for option in reversed(scope_options):
        fn = option(fn)
    return fn


def _target(scope, project) -> tuple[str, str]:
    root = identify(resolve_dir(project)).root
    scope = scope or "project"
    return scope, claude_settings.settings_path(scope, root)


@click.command()
@_scoped
@project_option
@click.option("--python", "python", default=None, help="Interpreter the hooks run with (default: this one).")
@json_option
def install(scope, project_dir, python, as_json):
    """Switch ace-engine on: merge its hooks into Claude Code's settings.

    Writes .claude/settings.json of the project by default. Other keys and other tools' hooks
    are kept; re-running changes nothing; a backup (*.ace-backup) is written before a change.
    """
    scope, path = _target(scope, project_dir)
    try:
        result = claude_settings.install(path, python)
        claude_settings.precompile()
    except (claude_settings.SettingsError, OSError) as exc:
        fail(str(exc))
    if as_json:
        return emit_json({**result, "scope": scope})
    if not result["changed"]:
        console.print(f"ace-engine hooks already installed in [bold]{path}[/]; nothing changed.")
        return
    console.print(f"Installed ace-engine hooks for {len(result['events'])} events in [bold]{path}[/].")
    if result["backup"]:
        console.print(f"Backup of the previous file: {result['backup']}")
    console.print("Start Claude Code in this project; `ace status` shows what is captured.")


@click.command()
@_scoped
@project_option
@json_option
def uninstall(scope, project_dir, as_json):
    """Switch ace-engine off: remove exactly the hook entries `ace install` added."""
    scope, path = _target(scope, project_dir)
    try:
        result = claude_settings.uninstall(path)
    except (claude_settings.SettingsError, OSError) as exc:
        fail(str(exc))
    if as_json:
        return emit_json({**result, "scope": scope})
    if result["changed"]:
        console.print(f"Removed ace-engine hooks for {len(result['events'])} events from [bold]{path}[/].")
    else:
        console.print(f"No ace-engine hooks in {path}; nothing changed.")


@click.command()
@project_option
@json_option
def status(project_dir, as_json):
    """Is ace-engine on for this project, and what has it captured?"""
    report = diagnostics.status(resolve_dir(project_dir))
    if as_json:
        return emit_json(report)
    p = report["project"]
    on = "[green]on[/]" if report["enabled"] else "[red]off[/] (run `ace install`)"
    console.print(f"Project [bold]{p['name']}[/] ({p['root']}): {on}")
    for install_ in report["installs"]:
        console.print(f"  hooks in {install_['path']} ({len(install_['events'])} events)")
    if report["plugin_enabled"]:
        console.print("  hooks from the ace-engine Claude Code plugin")
    store = report["store"]
    if not store["exists"]:
        console.print(f"Store: {store['path']} (not created yet: nothing captured)")
    elif "error" in store:
        console.print(f"Store: {store['path']} [red]{store['error']}[/] — run `ace doctor`")
    else:
        console.print(f"Store: {store['path']} ({size(store['bytes'])})")
        cp, ct = report["counts_project"], report["counts_total"]
        table(None, ["", "this project", "all projects"], [
            ["sessions", cp["sessions"], ct["sessions"]],
            ["tool events", cp["tool_events"], ct["tool_events"]],
            ["messages", cp["messages"], ct["messages"]],
            ["hook events", cp["hook_events"], ct["hook_events"]],
        ])
        console.print(f"Last activity here: {when(report['last_activity'])}")
    if report["spooled_records"]:
        console.print(f"[yellow]{report['spooled_records']} records spooled[/] — `ace doctor --fix` writes them")
    if report["degraded"]:
        console.print(f"[yellow]Degraded:[/] {report['degraded'].get('reason')}")
    if report["last_errors"]:
        console.print("Last errors:")
        for line in report["last_errors"]:
            console.print(f"  {line}", highlight=False, markup=False)



@click.command()
@project_option
@click.option("--fix", is_flag=True, help="Apply the safe fixes: replay spooled records, move a corrupt store aside.")
@json_option
def doctor(project_dir, fix, as_json):
    """Check interpreter, store, hooks, Claude Code and config; say how to fix each failure."""
    checks = diagnostics.doctor(resolve_dir(project_dir), fix=fix)
    failed = [c for c in checks if not c.ok and not c.warn]
    if as_json:
        emit_json({"ok": not failed, "checks": [c.as_dict() for c in checks]})
    else:
        marks = {"ok": "[green]ok[/]", "warn": "[yellow]warn[/]", "fail": "[red]FAIL[/]"}
        for check in checks:
            d = check.as_dict()
            console.print(f"{marks[d['status']]:>18}  [bold]{d['check']}[/]: {d['detail']}", highlight=False)
            if d["fix"] and d["status"] != "ok":
                console.print(f"{'':>8}fix: {d['fix']}", highlight=False)
    if failed:
        raise SystemExit(1)


@click.group("config")
def config_group():
    """Show the effective configuration."""


@config_group.command("show")
@project_option
@json_option
def config_show(project_dir, as_json):
    """Effective values and where each came from (default < user < project < ACE_* env)."""
    root = identify(resolve_dir(project_dir)).root
    try:
        cfg = config_mod.load(root, strict=True)
    except config_mod.ConfigError as exc:
        fail(str(exc))
    if as_json:
        return emit_json({
            key: {"value": cfg.values[key], "source": cfg.sources[key], "env": config_mod.env_name(key)}
            for key in cfg.values
        })
    table(None, ["key", "value", "source", "description"], [
        [key, cfg.values[key], cfg.sources[key], config_mod.DESCRIPTIONS.get(key, "")]
        for key in cfg.values
    ])


COMMANDS = [install, uninstall, status, doctor, config_group]
