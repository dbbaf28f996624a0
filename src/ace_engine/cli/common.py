"""Options and helpers shared by the command modules."""

import os

import click

from .. import config as config_mod
from ..project import identify
from ..store.sqlite import SQLiteStore, StoreError
from .output import fail

json_option = click.option("--json", "as_json", is_flag=True, help="Print JSON instead of tables.")


def project_option(fn):
    return click.option(
        "--project", "project_dir", default=None, type=click.Path(file_okay=False, exists=True),
        help="Project directory (default: the current directory).",
    )(fn)


def resolve_dir(value: str | None) -> str:
    return os.path.abspath(value or os.getcwd())


def open_store() -> SQLiteStore:
    try:
        return SQLiteStore(busy_timeout_ms=10_000)
    except StoreError as exc:
        fail(f"cannot open the store: {exc}. Run `ace doctor` for the fix.")
        raise  # unreachable: fail exits


def project_of(project_dir: str | None):
    """The project (`project.Project`) for `--project DIR`, or the current directory."""
    return identify(resolve_dir(project_dir))


def load_config(root: str | None):
    """The layered config, strictly: a bad file or variable stops the command with its fix."""
    try:
        return config_mod.load(root, strict=True)
    except config_mod.ConfigError as exc:
        fail(str(exc))
