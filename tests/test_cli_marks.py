"""The permission table (`ace_engine.core.cli_marks`) and the click CLI cannot drift: every command is
classified, every option of an auto-approvable command carries a mark that matches how click parses
it, and anything the table does not know gets no opinion."""

import click
import pytest

from ace_engine.cli.app import cli
from ace_engine.core import cli_marks
from ace_engine.core.cli_marks import DESTRUCTIVE, FLAG, NO_OPINION, READS, REFUSE, SESSION, TEXT, VALUE
from ace_engine.hooks.permission import classify


def leaf_commands(group: click.Group = cli, prefix: str = "") -> dict[str, click.Command]:
    found = {}
    for name, command in group.commands.items():
        path = f"{prefix}{name}"
        if isinstance(command, click.Group):
            found.update(leaf_commands(command, path + " "))
        else:
            found[path] = command
    return found


COMMANDS = leaf_commands()


def misclassified(commands: dict[str, click.Command]) -> list[str]:
    """The command paths that are in no class of the table, or in more than one."""
    classes = [set(READS), set(DESTRUCTIVE), set(NO_OPINION)]
    return [path for path in commands if sum(path in c for c in classes) != 1]


def test_every_command_is_classified_exactly_once():
    assert misclassified(COMMANDS) == [], (
        "classify these in ace_engine/cli_marks.py: READS only if the command writes nothing, executes "
        "nothing and shows only this project's data")
    assert set(READS) | set(NO_OPINION) <= set(COMMANDS), "the table names commands the CLI no longer has"
    assert DESTRUCTIVE - set(COMMANDS) <= cli_marks.RESERVED, "only RESERVED names may be refused before they exist"


@pytest.mark.parametrize("path", sorted(READS))
def test_every_option_of_an_allowed_command_is_marked_as_click_parses_it(path):
    command = COMMANDS[path]
    options, positional = READS[path]
    click_options: dict[str, click.Option] = {}
    for param in command.params:
        if isinstance(param, click.Option):
            for name in param.opts + param.secondary_opts:
                click_options[name] = param
    assert set(options) == set(click_options), f"`ace {path}`: mark every option, and only existing ones"
    for name, mark in options.items():
        param = click_options[name]
        assert mark in (FLAG, VALUE, SESSION, REFUSE), (path, name)
        if mark == FLAG:
            assert param.is_flag and not param.count, (path, name)
        elif mark in (VALUE, SESSION):
            assert not param.is_flag and param.nargs == 1, (path, name)
    arguments = [p for p in command.params if isinstance(p, click.Argument)]
    assert len(arguments) == len(positional) and all(p.nargs == 1 for p in arguments), path
    assert all(mark in (TEXT, SESSION) for mark in positional), path
    ctx = click.Context(command, info_name=path, parent=click.Context(cli, info_name="ace", **cli.context_settings))
    assert set(command.get_help_option_names(ctx)) == set(cli_marks.HELP), path


def test_top_level_options_are_the_groups_own():
    ctx = click.Context(cli, info_name="ace", **cli.context_settings)
    names = {n for p in cli.params for n in p.opts + p.secondary_opts} | set(cli.get_help_option_names(ctx))
    assert set(cli_marks.TOP_LEVEL) == names


def test_unclassified_commands_and_options_get_no_opinion():
    assert classify(["some-new-command"], "s") is None
    assert classify(["status", "--some-new-option"], "s") is None
    for path in NO_OPINION:
        assert classify(path.split(), "s") is None, path
    for path in READS:
        assert classify([*path.split(), "--json"], "s")[0] == "allow", path


def test_a_command_added_to_the_cli_fails_the_drift_check():
    @cli.command("zz-new-writer")
    def new_writer():
        """Writes something."""
    try:
        assert misclassified(leaf_commands()) == ["zz-new-writer"]
        assert classify(["zz-new-writer"], "s") is None
    finally:
        cli.commands.pop("zz-new-writer")
