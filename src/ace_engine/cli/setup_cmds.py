"""Switching ace-engine on and off, and checking that it works: install, uninstall, status,
doctor (with the ace-engine Claude Code plugin enabled, `install` writes no hooks: the plugin's
run already; `install --mcp` refuses, writing nothing, where the server could not start); and the
configuration: `ace config show | get | set | edit | path` (the settings table,
its types and which keys a project may set are `config.py`'s; this module only prints and asks
it to write)."""

import os
import sys

import click

from ..agents import registry
from ..core import config as config_mod
from ..core import config_write, escape, paths, trust
from ..core.files import atomic_write
from ..core.project import find_git_root, identify
from ..integrations import claude_settings
from ..learning import reflector_choice
from . import diagnostics, model_path
from .common import json_option, project_option, resolve_dir, wide_option
from .output import emit_json, fail, plain, plural, say, size, styled, table, when

agent_option = click.option("--agent", type=click.Choice(list(registry.NAMES)), default=registry.DEFAULT,
                            show_default=True, help="Which agent: " + ", ".join(registry.LABELS.values())
                            + " (its own config; project scope or --user).")
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
@click.option("--mcp", "with_mcp", is_flag=True,
              help="Also register ace-engine's MCP server `ace` in the project's .mcp.json and approve it in the "
                   "chosen settings file (needs the `mcp` package where ace-engine runs: the [mcp] extra).")
@click.option("--allow-writes", is_flag=True, help="With --mcp: also offer mark_lesson and propose_lesson.")
@click.option("--statusline", "with_statusline", is_flag=True,
              help="Show ace-engine's status line in Claude Code (unless you have one of your own).")
@agent_option
@click.option("--learn-with", "learn_with", type=click.Choice(["claude", "codex", "none"]), default=None,
              help="Learn with this agent's model in the background (`claude -p` / `codex exec`), or none, without "
                   "being asked; written to your user config. Default: asked once in a terminal.")
@json_option
def install(scope, project_dir, python, with_mcp, allow_writes, with_statusline, agent, learn_with, as_json):
    """Switch ace-engine on: merge its hooks into Claude Code's settings.

    Writes .claude/settings.json of the project by default. Other keys and other tools' hooks
    are kept; re-running changes nothing; a backup (*.ace-backup) is written before a change.
    With --agent codex|gemini|antigravity: Codex's .codex/hooks.json and config.toml (hooks feature,
    MCP server), Gemini's .gemini/settings.json (hooks, MCP server), or Antigravity's
    .agents/hooks.json and .agents/mcp_config.json.

    Once, when no model was chosen yet and the agent's CLI is logged in: offers to learn with it in
    the background (`claude -p` / `codex exec`; yes by default in a terminal, off without one);
    `--learn-with` answers for scripts. The answer goes to your user config.
    """
    from ..integrations import mcp_config

    if agent != "claude":
        if with_statusline or allow_writes:
            fail("--statusline and --allow-writes are Claude Code's; `--agent` always registers the read-only MCP "
                 "server", code=2)
        from .agent_setup import run

        run("install", agent, scope, project_dir, python, as_json)
        if not as_json:
            say()
        model_path.offer(agent, identify(resolve_dir(project_dir)).root, learn_with, quiet=as_json)
        return None

    if allow_writes and not with_mcp:
        fail("--allow-writes goes with --mcp: `ace install --mcp --allow-writes`", code=2)
    scope, path = _target(scope, project_dir)
    root = identify(resolve_dir(project_dir)).root
    if with_mcp:
        problem = mcp_config.sdk_problem(python)
        if problem:
            fail(f"--mcp: {problem} in the interpreter the server would run ({python or sys.executable}), so "
                 f"Claude Code could not start it. Add it with `{mcp_config.sdk_hint(python)}`, then re-run; "
                 "nothing was changed")
    via_plugin = diagnostics.plugin_enabled() and not claude_settings.installed_events(path)
    try:
        if via_plugin:  # the plugin's hooks already run for every project: a second set would double each event
            result: dict = {"path": path, "changed": False, "events": [], "backup": None, "plugin": True}
        else:
            result = claude_settings.install(path, python)
        claude_settings.precompile()
        mcp = mcp_config.install(root, path, python=python, allow_writes=allow_writes) if with_mcp else None
        line = mcp_config.install_statusline(path, python=python) if with_statusline else None
    except OSError as exc:  # SettingsError is an AceError: the `ace` group shows it
        fail(str(exc))
    if as_json:
        offered = model_path.offer(agent, root, learn_with, quiet=True)
        return emit_json({**result, "scope": scope, "learning": reflector_choice.describe(config_mod.load(root)),
                          "mcp": mcp, "statusline": line, "model_offer": offered})
    if mcp is not None:
        say("MCP server `ace` registered in [bold]{}[/] and approved in {} ({}).", mcp.get("mcp_json"), path,
            "read and write tools" if allow_writes else "read-only tools")
    if line is not None:
        say("{}", "Status line: ace-engine's." if not line.get("kept") else
            "Status line: yours is kept (ace-engine's is `ace statusline`).")
    if via_plugin:
        say("The ace-engine Claude Code plugin is enabled and provides the hooks; none written to {} (they would "
            "run twice). `ace doctor` checks the set-up.", path)
    elif not result["changed"]:
        say("ace-engine hooks already installed in [bold]{}[/]; nothing changed.", path)
    else:
        say("Installed ace-engine hooks for {} in [bold]{}[/].", plural(len(result["events"]), "event"), path)
        if result["backup"]:
            say("Backup of the previous file: {}", result["backup"])
        say("Start Claude Code in this project; `ace status` shows what is captured.")
    if find_git_root(root) is None:
        # Outside git nothing marks where a project starts: say which directory is the project.
        say("[yellow]{} is not in a git repository:[/] it is the project of the sessions started in it (wherever "
            "they move below it). A session started in another directory, even a subdirectory, is another project: "
            "start Claude Code here (or `git init` here).", root)
    say()
    offered = model_path.offer(agent, root, learn_with)  # once: the answer is kept in the user config
    model_path.say_learning(reflector_choice.describe(config_mod.load(root)), offered=offered)


@click.command()
@_scoped
@project_option
@agent_option
@json_option
def uninstall(scope, project_dir, agent, as_json):
    """Switch ace-engine off: remove exactly the hook entries `ace install` added."""
    from ..integrations import mcp_config

    if agent != "claude":
        from .agent_setup import run

        return run("uninstall", agent, scope, project_dir, None, as_json)

    scope, path = _target(scope, project_dir)
    try:
        result = claude_settings.uninstall(path)
        result["mcp"] = mcp_config.uninstall(identify(resolve_dir(project_dir)).root, path)
        result["statusline"] = mcp_config.uninstall_statusline(path)
    except OSError as exc:
        fail(str(exc))
    if as_json:
        return emit_json({**result, "scope": scope})
    if result["changed"]:
        say("Removed ace-engine hooks for {} from [bold]{}[/].", plural(len(result["events"]), "event"), path)
    else:
        say("No ace-engine hooks in {}; nothing changed.", path)
    mcp = result["mcp"]
    if mcp["mcp_changed"]:
        say("Removed MCP server `ace` from {}.", mcp["mcp_json"])
    for where in mcp["unapproved_in"]:
        say("Removed the approval of MCP server `ace` from {}.", where)


@click.command()
@project_option
@json_option
def status(project_dir, as_json):
    """Is ace-engine on for this project, and what has it captured?"""
    report = diagnostics.status(resolve_dir(project_dir))
    if as_json:
        return emit_json(report)
    p = report["project"]
    unreadable = report.get("unreadable_settings") or []
    if report["enabled"]:
        say("Project [bold]{}[/] ({}): [green]on[/]", p["name"], p["root"])
    elif unreadable:
        say("Project [bold]{}[/] ({}): [red]off[/] (a settings file Claude Code cannot read: fix it, then "
            "`ace install`)", p["name"], p["root"])
    else:
        say("Project [bold]{}[/] ({}): [red]off[/] (run `ace install`)", p["name"], p["root"])
    for bad in unreadable:
        say("  [red]{}[/]", bad["error"])
    for install_ in report["installs"]:
        say("  hooks in {} ({})", install_["path"], plural(len(install_["events"]), "event"))
    if report["plugin_enabled"]:
        say("  hooks from the ace-engine Claude Code plugin")
    from .agent_setup import show_status

    show_status(report.get("agents") or [])
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
        lessons = report.get("lessons") or {"active": 0, "waiting": 0}
        say("Lessons learned here: {} ({} waiting to recur){}", plural(lessons["active"], "active lesson"),
            lessons["waiting"], "" if lessons["active"] or lessons["waiting"] else
            " — they come after a task ends (`ace learn` to learn now)")
        say("Last activity here: {}", when(report["last_activity"]))
        if report.get("experiment"):
            say("Experiment {} running: {} % of sessions get no lessons (`ace report`, `ace experiment stop`)",
                report["experiment"]["id"], round(report["experiment"]["share"] * 100))
        from .playbook_common import show_waiting_for  # the lessons waiting to recur, as `ace patterns` lists them

        if (report.get("waiting") or {}).get("count"):
            show_waiting_for(p["key"])
    if report.get("llm"):
        model_path.show_summary(report["llm"])
    if report["spooled_records"]:
        say("[yellow]{} spooled[/] — `ace doctor --fix` writes them", plural(report["spooled_records"], "record"))
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
@click.option("--offline", is_flag=True, help="Make no model call (the model path is then judged by its last call).")
@json_option
def doctor(project_dir, fix, offline, as_json):
    """Check interpreter, store, hooks, Claude Code, config and the model path (one small model call,
    counted in the daily budget, unless --offline); say how to fix each failure."""
    checks = diagnostics.doctor(resolve_dir(project_dir), fix=fix, offline=offline)
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
    """Show, read and change the configuration (`ace config show` lists every key).

    Layers, each overriding the one before: defaults < your user file (`ace config path`) < the
    project's .ace.toml (harmless keys only, unless `ace trust`) < ACE_* environment variables."""


@config_group.command("show")
@project_option
@wide_option
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
        [key, _shown(cfg.values[key]), cfg.sources[key], config_mod.SETTINGS_BY_KEY[key].help]
        for key in cfg.values
    ], body=("description",), bare=("value",))
    if cfg.ignored:
        # Plain echo: the values come from a repository file and must not be read as markup.
        files = sorted({path for _, path in cfg.ignored.values()})
        click.echo(plain(f"\nIgnored: {', '.join(files)} sets user-level key(s) but is not trusted:"))
        for key, (value, _) in sorted(cfg.ignored.items()):
            click.echo(f"  {key} = {escape.one_line(repr(value))}  (ignored)")
        for path in files:
            click.echo(plain(f"fix: {trust.ignored_fix(path)}"))


# `--project` alone means the current directory's project, `--project DIR` that one's.
project_file_option = click.option(
    "--project", "project_dir", is_flag=False, flag_value=".", default=None,
    type=click.Path(file_okay=False, exists=True),
    help="The project's .ace.toml instead of your user file (`--project` alone: this directory's project).")


def _project_file(project_dir: str) -> str:
    return os.path.join(identify(resolve_dir(project_dir)).root, paths.PROJECT_CONFIG_NAME)


def _shown(value: object) -> str:
    """A value as `config get` prints it: strings and numbers plain, lists and tables as TOML."""
    if isinstance(value, (list, dict)):
        return config_write.toml_literal(value)
    return str(value).lower() if isinstance(value, bool) else str(value)


def _keys(_ctx: click.Context, _param: click.Parameter, incomplete: str) -> list[str]:
    """Shell completion of a setting's name (`ace config set inject.<TAB>`)."""
    return [key for key in config_mod.SETTINGS_BY_KEY if key.startswith(incomplete)]


@config_group.command("get")
@click.argument("key", shell_complete=_keys)
@click.option("--project", "project_dir", default=None, type=click.Path(file_okay=False, exists=True),
              help="The value in effect in this project directory (default: the current directory).")
@json_option
def config_get(key, project_dir, as_json):
    """Print the effective value of KEY (`ace config get inject.prompt_k`); `--json` adds where it
    came from."""
    config_mod.setting(key)  # unknown key: the error names the closest ones
    cfg = config_mod.load(identify(resolve_dir(project_dir)).root, strict=True)
    if as_json:
        return emit_json({"key": key, "value": cfg.values[key], "source": cfg.sources[key],
                          "default": config_mod.DEFAULTS[key], "project_may_set": config_mod.project_may_set(key)})
    click.echo(plain(_shown(cfg.values[key])))


@config_group.command("set", context_settings={"ignore_unknown_options": True})  # VALUE may be `-1`
@click.argument("key", shell_complete=_keys)
@click.argument("value")
@project_file_option
@json_option
def config_set(key, value, project_dir, as_json):
    """Set KEY to VALUE in your user file (or, with --project, in the project's .ace.toml — only
    for the keys a repository may set). VALUE is written as for the environment: `true` / `false`,
    a number, `a,b` for a list, `k8s=kubernetes,tf=terraform` for a table. The value is checked
    against the key's type first; the file is replaced atomically, its other lines kept."""
    setting = config_mod.setting(key)
    parsed = config_mod.parse_value(key, value)
    root = identify(resolve_dir(project_dir)).root
    if project_dir is not None:
        if not setting.project:
            fail(f"`{key}` is a user-level key: a repository's .ace.toml may not set it (it chooses a program, an "
                 f"endpoint, credentials, retention or spending). Set it in your user file: "
                 f"`ace config set {key} {value}` (without --project)")
        path = _project_file(project_dir)
        before = config_mod.read_toml_bytes(path)
        was_trusted = before is not None and trust.is_trusted(path, before[1])
    else:
        path, was_trusted = os.path.realpath(paths.user_config_path()), False  # a symlinked dotfile: written through
    config_write.write_value(path, key, parsed, new_mode=0o644 if project_dir is not None else 0o600)
    cfg = config_mod.load(root, strict=True)
    if as_json:
        return emit_json({"key": key, "value": parsed, "file": path, "effective": cfg.values[key],
                          "source": cfg.sources[key]})
    say("Set {} = {} in {}.", key, config_write.toml_literal(parsed), path)
    if cfg.values[key] != parsed:
        say("[yellow]note[/]: {} still applies here, from {}.", config_write.toml_literal(cfg.values[key]),
            cfg.sources[key])
    if was_trusted:
        say("[yellow]note[/]: the file changed, so its `ace trust` no longer holds; run `ace trust` again to keep "
            "its user-level keys.")


STARTER = """# ace-engine user configuration (TOML). `ace config show` lists every key with its value, where it
# came from and what it does; `ace config set KEY VALUE` changes one from the command line.
#
# [inject]
# prompt_k = 5
#
# [llm]
# provider = "claude-cli"    # learn with your Claude Code login
"""


@config_group.command("edit")
def config_edit():
    """Open your user config file in $EDITOR (created if missing), then check it."""
    path = os.path.realpath(paths.user_config_path())
    if not os.path.exists(path):
        os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
        atomic_write(path, STARTER, mode=0o600)
    click.edit(filename=path)
    try:
        config_mod.load(None, strict=True)
    except config_mod.ConfigError as exc:
        fail(f"{exc} (the file was saved as you left it; `ace config edit` to fix it)")
    say("{} is valid.", path)


@config_group.command("path")
@project_file_option
@json_option
def config_path(project_dir, as_json):
    """Print the path of your user config file (or, with --project, of the project's .ace.toml);
    it need not exist yet."""
    path = _project_file(project_dir) if project_dir is not None else paths.user_config_path()
    if as_json:
        return emit_json({"path": path, "exists": os.path.exists(path),
                          "scope": "project" if project_dir is not None else "user"})
    click.echo(plain(path))


COMMANDS = [install, uninstall, status, doctor, config_group]
