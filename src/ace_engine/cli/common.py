"""Options and helpers shared by the command modules."""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import TypeVar

import click

from .. import config as config_mod
from ..project import Project, identify
from ..store.sqlite import SQLiteStore, StoreError
from .output import fail

F = TypeVar("F", bound=Callable[..., object])

json_option = click.option("--json", "as_json", is_flag=True, help="Print JSON instead of tables.")


def project_option(fn: F) -> F:
    return click.option(
        "--project", "project_dir", default=None, type=click.Path(file_okay=False, exists=True),
        help="Project directory (default: the current directory).",
    )(fn)


def resolve_dir(value: str | None) -> str:
    return os.path.abspath(value or os.getcwd())


def open_store() -> SQLiteStore:
    try:
        return SQLiteStore(busy_timeout_ms=10_000)
    except StoreError as exc:  # caught here only to add the way out
        fail(f"cannot open the store: {exc}. Run `ace doctor` for the fix.")


def project_of(project_dir: str | None) -> Project:
    """The project (`project.Project`) for `--project DIR`, or the current directory."""
    return identify(resolve_dir(project_dir))


def load_config(root: str | None) -> config_mod.Config:
    """The layered config, strictly: a bad file or variable stops the command with its fix (a
    ConfigError, shown by the `ace` group)."""
    return config_mod.load(root, strict=True)
