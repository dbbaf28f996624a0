"""Switching ace-engine on and off, and checking that it works: install, uninstall, status,
doctor, config."""

import click

from .. import config as config_mod
from .. import diagnostics, escape, paths, trust
from ..integrations import claude_settings
from ..learning import reflector_choice
from ..project import identify
from .common import json_option, project_option, resolve_dir
from .output import emit_json, fail, plain, say, size, styled, table, when

scope_options = [
    click.option("--user", "scope", flag_value="user", help="~/.claude/settings.json (every project)."),
    click.option("--local", "scope", flag_value="local", help=".claude/settings.local.json (just you)."),
]


def _scoped(fn):
    for option in reversed(scope_options):
        fn = option(fn)
    return fn


def _target(scope: str | None, project: str | None) -> tuple[str, str]:
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
    except OSError as exc:  # SettingsError is an AceError: the `ace` group shows it
        fail(str(exc))
    learning = reflector_choice.describe(config_mod.load(identify(resolve_dir(project_dir)).root))
    if as_json:
        return emit_json({**result, "scope": scope, "learning": learning})
    if not result["changed"]:
        say("ace-engine hooks already installed in [bold]{}[/]; nothing changed.", path)
    else:
        say("Installed ace-engine hooks for {} events in [bold]{}[/].", len(result["events"]), path)
        if result["backup"]:
            say("Backup of the previous file: {}", result["backup"])
        say("Start Claude Code in this project; `ace status` shows what is captured.")
    say()
    _say_learning(learning)


def _say_learning(info: dict) -> None:
    """Which reflector writes the lessons, what a model adds and how to turn it on, and the spending caps."""
    if info["reflector"] == "llm":
        say("[bold]Lessons[/]: written by the LLM reflector ({}{}), which states root causes; the offline "
            "reflector takes over when the model fails or a cap is reached.", info["provider"],
            f", model {info['model']}" if info["model"] else "")
    elif info["problem"]:
        say("[bold]Lessons[/]: learned [yellow]offline[/] for now: `llm.provider = {}` is set but can't be used: {}",
            info["provider"], info["problem"])
    else:
        why = " (`learning.reflector = heuristic`)" if info["choice"] == "heuristic" else ""
        say("[bold]Lessons[/]: learned offline by the heuristic reflector{}: which command failed, what changed, "
            "which commands work — it cannot say why something failed. With a language model the reflector reads "
            "each task and the offline candidates and writes the root cause instead (\"X requires Y\", \"do Z "
            "before W\"), dropping one-off events. To turn it on, add to {}:", why, paths.user_config_path())
        if info["claude_on_path"]:
            lines, env = ['provider = "claude-cli"    # your Claude Code login, no API key'], \
                "ACE_LLM_PROVIDER=claude-cli"
        else:
            lines = ['provider = "anthropic"    # the key in ANTHROPIC_API_KEY', 'model = "<model name>"']
            env = "ACE_LLM_PROVIDER=anthropic ACE_LLM_MODEL=<model name>"
        if info["choice"] == "heuristic":
            lines.append('# and under [learning]: reflector = "auto"')
        say("    {}", "\n    ".join(["[llm]", *lines]))
        if not info["claude_on_path"]:
            say("(needs `pip install 'ace-engine\\[llm]'`; with Claude Code on PATH, provider = \"claude-cli\" uses "
                "its login instead; \"openai\" takes any OpenAI-compatible server, with model and base_url)")
        say("or export {} where Claude Code starts; `ace config show` lists the llm.* settings.", env)
    if all(info["budget"].values()):
        say("Spending caps, on by default: {}; past a cap, learning goes offline.", _caps(info["budget"]))
    else:
        say("[yellow]Spending caps[/]: {}; past a cap, learning goes offline.", _caps(info["budget"]))


def _caps(budget: dict) -> str:
    job, calls, tokens = (budget[k] for k in reflector_choice.BUDGET_KEYS)
    return ", ".join([
        f"{job} model calls per task" if job else "no per-task call cap (llm.max_calls_per_job = 0)",
        f"{calls:,} calls and" if calls else "no daily call cap (llm.max_calls_per_day = 0),",
        f"{tokens:,} tokens a day on this machine" if tokens else "no daily token cap (llm.max_tokens_per_day = 0)",
    ]).replace("and,", "and").replace(",,", ",")


@click.command()
@_scoped
@project_option
@json_option
def uninstall(scope, project_dir, as_json):
    """Switch ace-engine off: remove exactly the hook entries `ace install` added."""
    scope, path = _target(scope, project_dir)
    try:
        result = claude_settings.uninstall(path)
    except OSError as exc:
        fail(str(exc))
    if as_json:
        return emit_json({**result, "scope": scope})
    if result["changed"]:
        say("Removed ace-engine hooks for {} events from [bold]{}[/].", len(result["events"]), path)
    else:
        say("No ace-engine hooks in {}; nothing changed.", path)


@click.command()
@project_option
@json_option
def status(project_dir, as_json):
    """Is ace-engine on for this project, and what has it captured?"""
    report = diagnostics.status(resolve_dir(project_dir))
    if as_json:
        return emit_json(report)
    p = report["project"]
    if report["enabled"]:
        say("Project [bold]{}[/] ({}): [green]on[/]", p["name"], p["root"])
    else:
        say("Project [bold]{}[/] ({}): [red]off[/] (run `ace install`)", p["name"], p["root"])
    for install_ in report["installs"]:
        say("  hooks in {} ({} events)", install_["path"], len(install_["events"]))
    if report["plugin_enabled"]:
        say("  hooks from the ace-engine Claude Code plugin")
    store = report["store"]
    if not store["exists"]:
        say("Store: {} (not created yet: nothing captured)", store["path"])
    elif "error" in store:
        say("Store: {} [red]{}[/] — run `ace doctor`", store["path"], store["error"])
    else:
        say("Store: {} ({})", store["path"], size(store["bytes"]))
        cp, ct = report["counts_project"], report["counts_total"]
        table(None, ["", "this project", "all projects"], [
            ["sessions", cp["sessions"], ct["sessions"]],
            ["tool events", cp["tool_events"], ct["tool_events"]],
            ["messages", cp["messages"], ct["messages"]],
            ["hook events", cp["hook_events"], ct["hook_events"]],
        ])
        say("Last activity here: {}", when(report["last_activity"]))
    if report["spooled_records"]:
        say("[yellow]{} records spooled[/] — `ace doctor --fix` writes them", report["spooled_records"])
    if report["degraded"]:
        say("[yellow]Degraded:[/] {}", report["degraded"].get("reason"))
    if report["last_errors"]:
        say("Last errors:")
        for line in report["last_errors"]:
            say("  {}", line)



@click.command()
@project_option
@click.option("--fix", is_flag=True, help="Apply the safe fixes: replay spooled records, move a corrupt store aside, "
              "re-screen lessons stored under an older safety policy.")
@json_option
def doctor(project_dir, fix, as_json):
    """Check interpreter, store, hooks, Claude Code and config; say how to fix each failure."""
    checks = diagnostics.doctor(resolve_dir(project_dir), fix=fix)
    failed = [c for c in checks if not c.ok and not c.warn]
    if as_json:
        emit_json({"ok": not failed, "checks": [c.as_dict() for c in checks]})
    else:
        marks = {"ok": ("ok", "green"), "warn": ("warn", "yellow"), "fail": ("FAIL", "red")}
        for check in checks:
            d = check.as_dict()
            label, style = marks[d["status"]]
            say("{}  [bold]{}[/]: {}", styled(f"{label:>8}", style), d["check"], d["detail"])
            if d["fix"] and d["status"] != "ok":
                say("        fix: {}", d["fix"])
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
    cfg = config_mod.load(root, strict=True)
    if as_json:
        shown = {
            key: {"value": cfg.values[key], "source": cfg.sources[key], "env": config_mod.env_name(key),
                  "project_may_set": config_mod.project_may_set(key)}
            for key in cfg.values
        }
        for key, (value, path) in cfg.ignored.items():
            shown[key]["ignored"] = {"value": value, "source": f"project ({path})", "fix": trust.ignored_fix(path)}
        return emit_json(shown)
    table(None, ["key", "value", "source", "description"], [
        [key, cfg.values[key], cfg.sources[key], config_mod.SETTINGS_BY_KEY[key].help]
        for key in cfg.values
    ])
    if cfg.ignored:
        # Plain echo: the values come from a repository file and must not be read as markup.
        files = sorted({path for _, path in cfg.ignored.values()})
        click.echo(plain(f"\nIgnored: {', '.join(files)} sets user-level key(s) but is not trusted:"))
        for key, (value, _) in sorted(cfg.ignored.items()):
            click.echo(f"  {key} = {escape.one_line(repr(value))}  (ignored)")
        for path in files:
            click.echo(plain(f"fix: {trust.ignored_fix(path)}"))


COMMANDS = [install, uninstall, status, doctor, config_group]
