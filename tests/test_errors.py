"""One error tree: every exception class of the package derives from `errors.AceError`, keeps the
builtin base it had, and the `ace` group turns one into `error: <message>` and exit code 1."""

import importlib
import inspect
import pkgutil

import pytest
from click.testing import CliRunner

import ace_engine
from ace_engine.cli.app import cli
from ace_engine.core import errors

# Modules that need an optional extra (or a model package) to import at all.
OPTIONAL = ("ace_engine.llm.anthropic_api", "ace_engine.llm.openai_compat", "ace_engine.embed.semantic")


def _package_exceptions() -> dict[str, type]:
    found = {}
    for info in pkgutil.walk_packages(ace_engine.__path__, "ace_engine."):
        if info.name.endswith("__main__"):
            continue
        try:
            module = importlib.import_module(info.name)
        except ImportError:
            if info.name in OPTIONAL:
                continue
            raise
        for name, obj in vars(module).items():
            if inspect.isclass(obj) and issubclass(obj, BaseException) and obj.__module__.startswith("ace_engine"):
                found[f"{obj.__module__}.{name}"] = obj
    return found


def test_every_exception_class_derives_from_ace_error():
    classes = _package_exceptions()
    assert len(classes) >= 16
    outside = [name for name, cls in classes.items() if not issubclass(cls, errors.AceError)]
    # the one exception: how the CLI shows an AceError, a click exception by nature
    assert outside == ["ace_engine.cli.output.CommandError"]


def test_the_builtin_bases_are_kept():
    """Code written before the tree (`except ValueError`, `except PermissionError`) still catches."""
    from ace_engine import llm
    from ace_engine.core import paths
    from ace_engine.integrations import agent_files, claude_settings
    from ace_engine.playbook import playbook, sections, transfer

    for cls in (errors.ConfigError, agent_files.SyncError, playbook.PlaybookError, sections.SectionError,
                transfer.TransferError, llm.InvalidOutput):
        assert issubclass(cls, ValueError), cls
    assert issubclass(llm.LLMError, RuntimeError) and issubclass(llm.BudgetExceeded, RuntimeError)
    assert issubclass(paths.UnsafeDirError, PermissionError)
    assert claude_settings.SettingsError is errors.SettingsError
    # the model failures stay siblings: `except LLMError` still means "the call itself failed"
    assert not issubclass(llm.BudgetExceeded, llm.LLMError) and not issubclass(llm.InvalidOutput, llm.LLMError)


def test_errors_is_stdlib_free_and_tiny():
    source = inspect.getsource(errors)
    assert "\nimport " not in source and "\nfrom " not in source
    assert len(source.splitlines()) < 100


def test_an_ace_error_from_any_command_is_a_clean_message(ace_home, git_project, monkeypatch):
    monkeypatch.chdir(git_project)
    runner = CliRunner()
    shown = runner.invoke(cli, ["show", "ctx-nope"])
    assert shown.exit_code == 1
    assert shown.output.startswith("error: ") and "ctx-nope" in shown.output and "Traceback" not in shown.output

    bad = runner.invoke(cli, ["config", "show"], env={"ACE_INJECT_PROMPT_K": "many"})  # a subgroup too
    assert bad.exit_code == 1
    assert bad.output == "error: ACE_INJECT_PROMPT_K: `inject.prompt_k` must be int like 5, got 'many'\n"


def test_the_message_is_printed_plain(ace_home, git_project, monkeypatch):
    """Stored or user text in a message: controls made visible, never a terminal escape."""
    monkeypatch.chdir(git_project)
    result = CliRunner().invoke(cli, ["show", "ctx-\x1b[31mred"])
    assert result.exit_code == 1 and "\x1b" not in result.output and "\\x1b" in result.output


@pytest.mark.parametrize("command", [["hook", "--help"], ["--version"]])
def test_commands_without_errors_are_untouched(command):
    assert CliRunner().invoke(cli, command).exit_code == 0


def test_the_documented_tree_names_every_class():
    """errors.py's docstring draws the tree; a class added anywhere must appear in it (issue 22)."""
    doc = errors.__doc__ or ""
    classes = _package_exceptions()
    missing = sorted({cls.__name__ for cls in classes.values()
                      if issubclass(cls, errors.AceError) and not cls.__name__.startswith("_") and cls.__name__ not in doc})
    assert not missing, f"add these to the tree in errors.py's docstring: {missing}"
