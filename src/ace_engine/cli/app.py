"""`ace` commands. Thin: each parses options, calls the layer that owns the work, prints.

Errors: every error ace-engine raises on purpose is an `errors.AceError` whose message names the
problem and the fix. `AceGroup` turns one that reaches it from any command (subgroups included)
into `error: <message>` and exit code 1, so a command catches an error only to add context or to
carry on; anything else is a bug and keeps its traceback.

Help: bare `ace` prints the help and exits 0; `ace --help` lists the commands by task (`SECTIONS`;
a command not named there is listed under "Other", so a new module is never hidden). `ace hook
--help` is routed here by `cli/__init__.py` (a real hook call never reaches click).
`ace completion SHELL` prints click's completion script (the same as `_ACE_COMPLETE=bash_source ace`).
"""

from typing import Any

import click

from .. import __version__
from ..core.errors import AceError
from . import (
    bootstrap_cmd,
    capture_cmds,
    demo_cmd,
    experiment_cmds,
    history_cmds,
    learning_cmds,
    mcp_cmd,
    playbook_cmds,
    playbook_edit_cmds,
    recent_cmds,
    remote_cmds,
    replay_cmd,
    server_cmds,
    setup_cmds,
    share_cmds,
    trust_cmd,
    ui_cmd,
)
from .output import NO_PAGER_KEY, CommandError

# The help's command list, by task. Order within a section is the order shown.
SECTIONS = (
    ("Start", ("demo", "install", "status", "doctor", "uninstall")),
    ("The playbook", ("search", "patterns", "top", "show", "domains", "add", "edit", "tag", "keep", "rm", "review",
                      "bootstrap", "recall", "clear")),
    ("Sessions and learning", ("sessions", "session", "recent", "events", "learn", "jobs", "stats", "log", "gc",
                               "embed", "experiment", "report", "replay")),
    ("Sharing", ("export", "import", "sync", "remote", "push", "pull", "server", "ui")),
    ("Inside Claude Code", ("mcp", "statusline", "hook", "cache")),
    ("Settings and shell", ("config", "trust", "completion")),
)


class AceGroup(click.Group):
    """The `ace` group: one place where an `AceError` becomes a clean message and exit code, and
    where the help lists the commands by task."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except AceError as exc:
            raise CommandError(str(exc)) from exc

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        commands = {name: cmd for name in self.list_commands(ctx)
                    if (cmd := self.get_command(ctx, name)) is not None and not cmd.hidden}
        limit = formatter.width - 6 - max((len(name) for name in commands), default=0)
        placed: set[str] = set()
        for title, names in SECTIONS:
            rows = [(n, commands[n].get_short_help_str(limit)) for n in names if n in commands]
            placed.update(n for n, _ in rows)
            if rows:
                with formatter.section(title):
                    formatter.write_dl(rows)
        rest = [(n, c.get_short_help_str(limit)) for n, c in commands.items() if n not in placed]
        if rest:
            with formatter.section("Other"):
                formatter.write_dl(rest)


@click.group(cls=AceGroup, invoke_without_command=True, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="ace-engine")
@click.option("--no-pager", is_flag=True, help="Never page long output (it is paged only on a terminal).")
@click.pass_context
def cli(ctx: click.Context, no_pager: bool) -> None:
    """ace-engine: a self-improving context engine for Claude Code.

    Claude Code's hooks capture every session (redacted, `<private>` spans dropped) into a local
    store. A background worker learns short lessons from what failed and what fixed it (offline,
    or with a model you configure), and the hooks inject the relevant ones: a digest when a session
    starts, the best matches on each prompt, a domain's lessons when the work moves there. What was
    shown and how the task went make lessons stronger or retire them. Lessons can be shared through
    a team server (`ace remote`, `push`, `pull`) and browsed in a local dashboard (`ace ui`).
    Everything stays in $ACE_HOME, never in your repository.

    New here? `ace demo` replays a recorded session (nothing of yours is touched); `ace install`
    switches ace-engine on for this project; `ace status` shows what it captured.
    """
    if no_pager:
        ctx.meta[NO_PAGER_KEY] = True
    if ctx.invoked_subcommand is None:
        click.echo(ctx.get_help())


@cli.command("hook", context_settings={"ignore_unknown_options": True})
@click.argument("event", required=False)
@click.pass_context
def hook_cmd(ctx: click.Context, event: str | None) -> None:
    """Run the hook for EVENT, as Claude Code does: its JSON on stdin, one JSON answer on stdout,
    always exit 0. `ace install` and the plugin set these up; you don't run them by hand.

    EVENT is one of SessionStart, UserPromptSubmit, PreToolUse, PermissionRequest, PostToolUse,
    PostToolUseFailure, PreCompact, Stop, SubagentStop, SessionEnd. Running one by hand records
    a session like any other; to see what the prompt hook would inject for a prompt, run
    `ace search "the prompt"` (the same ranking, with scores and why), and `ace recall --session
    ID` for what a real session was shown.
    """
    if event is None:
        click.echo(ctx.get_help())
        return
    from ..hooks.engine import run as run_hook

    run_hook([event])


@cli.command("completion")
@click.argument("shell", type=click.Choice(["bash", "zsh", "fish"]))
def completion_cmd(shell: str) -> None:
    """Print the shell completion script for SHELL. Load it from your shell's startup file:

    \b
      bash (~/.bashrc):   eval "$(ace completion bash)"
      zsh (~/.zshrc):     eval "$(ace completion zsh)"
      fish:               ace completion fish > ~/.config/fish/completions/ace.fish
    """
    from click.shell_completion import get_completion_class

    complete = get_completion_class(shell)
    if complete is None:  # click knows all three; kept for a click that drops one
        raise CommandError(f"click has no completion for {shell}")
    click.echo(complete(cli, {}, "ace", "_ACE_COMPLETE").source())


for module in (setup_cmds, capture_cmds, playbook_cmds, playbook_edit_cmds, share_cmds, learning_cmds, history_cmds,
               recent_cmds, bootstrap_cmd, demo_cmd, experiment_cmds, trust_cmd, remote_cmds, server_cmds, ui_cmd,
               mcp_cmd, replay_cmd):
    for command in module.COMMANDS:
        cli.add_command(command)
