"""Options and helpers shared by the command modules."""

import os

import click

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
