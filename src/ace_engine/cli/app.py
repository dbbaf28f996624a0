"""`ace` commands. Thin: each parses options, calls the layer that owns the work, prints.

Errors: every error ace-engine raises on purpose is an `errors.AceError` whose message names the
problem and the fix. `AceGroup` turns one that reaches it from any command (subgroups included)
into `error: <message>` and exit code 1, so a command catches an error only to add context or to
carry on; anything else is a bug and keeps its traceback.
"""

from typing import Any

import click

from .. import __version__
from ..errors import AceError
from . import (
    bootstrap_cmd,
    capture_cmds,
    demo_cmd,
    history_cmds,
    learning_cmds,
    playbook_cmds,
    playbook_edit_cmds,
    remote_cmds,
    server_cmds,
    setup_cmds,
    share_cmds,
    trust_cmd,
    ui_cmd,
)
from .output import CommandError


class AceGroup(click.Group):
    """The `ace` group: one place where an `AceError` becomes a clean message and exit code."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except AceError as exc:
            raise CommandError(str(exc)) from exc


@click.group(cls=AceGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="ace-engine")
def cli() -> None:
    """ace-engine: a self-improving context engine for Claude Code.

    Hooks capture every session (redacted) into a local store; later releases learn lessons
    from it and inject the relevant ones. Data lives in $ACE_HOME, never in your repository.
    """


@cli.command("hook", context_settings={"ignore_unknown_options": True})
@click.argument("event")
def hook_cmd(event: str) -> None:
    """Run the hook for EVENT (reads Claude Code's JSON on stdin). Used by the installed hooks."""
    from ..hooks.engine import run as run_hook

    run_hook([event])


for module in (setup_cmds, capture_cmds, playbook_cmds, playbook_edit_cmds, share_cmds, learning_cmds, history_cmds,
               bootstrap_cmd, demo_cmd, trust_cmd, remote_cmds, server_cmds, ui_cmd):
    for command in module.COMMANDS:
        cli.add_command(command)


