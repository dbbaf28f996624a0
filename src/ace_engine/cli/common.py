"""Options and helpers shared by the command modules: `--json`, `--project`, `--wide`, the store,
the layered config, and the one way an id the user typed becomes a record (`resolve_bullet`,
`resolve_session`).

Ids: wherever a command takes a lesson or session id, a unique prefix is enough. A lesson id may be
given with or without its `ctx-`, in any case, even with the brackets or backticks it was quoted
in (`[ctx-01m8…`). No match says so and names the command that lists them; several matches are
listed in the error, so the next try can be exact. Both go through `pick()`, so every command
answers the same way.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import TYPE_CHECKING, TypeVar

import click

from ..core import config as config_mod
from ..core import install_route
from ..core.project import Project, identify
from ..store.sqlite import SQLiteStore, StoreError
from .output import WIDE_KEY, CommandError, fail

if TYPE_CHECKING:
    from ..core._types import Bullet, SessionRow
    from ..store.interfaces import PlaybookStore, SessionsStore

F = TypeVar("F", bound=Callable[..., object])

json_option = click.option("--json", "as_json", is_flag=True, help="Print JSON instead of tables.")


def _set_wide(ctx: click.Context, _param: click.Parameter, value: bool) -> bool:
    if value:
        ctx.meta[WIDE_KEY] = True  # read by output.table(); meta is shared with the whole invocation
    return value


wide_option = click.option(
    "--wide", is_flag=True, expose_value=False, callback=_set_wide,
    help="Always draw a table, however narrow the terminal (default: a list when a table would not fit).")


def project_option(fn: F) -> F:
    return click.option(
        "--project", "project_dir", default=None, type=click.Path(file_okay=False, exists=True),
        help="Project directory (default: the current directory).",
    )(fn)


def resolve_dir(value: str | None) -> str:
    return os.path.abspath(value or os.getcwd())


def extra_hint(extra: str, only: list[str] | None = None) -> str:
    """The command that adds an optional extra (`server`, `llm`, `mcp`, `semantic`) to the
    environment `ace` runs in — pip of this venv, `pipx inject`, `uv tool install --with`
    (`install_route.extra_hint`). Every CLI hint about a missing extra uses it."""
    return install_route.extra_hint(extra, only)


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


# -- ids ------------------------------------------------------------------------------------------

SHOWN_CANDIDATES = 5  # ids listed in an "ambiguous" error (the store's prefix lookup returns at most 5)


def pick(given: str, matches: list[str], noun: str, lister: str, more: bool = False) -> str:
    """The one id of `matches` (the ids `given` is a prefix of), or a CommandError: none ("no
    lesson `x`; `ace patterns` lists them") or several, listed. `more`: `matches` was cut short."""
    if len(matches) == 1:
        return matches[0]
    if not matches:
        raise CommandError(f"no {noun} `{given}`; `{lister}` lists them")
    count = f"{len(matches)} or more" if more else str(len(matches))
    shown = ", ".join(matches[:SHOWN_CANDIDATES]) + (", …" if more or len(matches) > SHOWN_CANDIDATES else "")
    raise CommandError(f"`{given}` is the start of {count} {noun}s: {shown}; give more of the id")


def _lesson_prefix(given: str) -> str | None:
    """`given` as the start of a lesson id (`ctx-…`, lower case), or None when it cannot be one
    (the store's prefix lookup is a LIKE: only letters, digits and `-` are passed to it)."""
    text = given.strip().strip("[]()`'\",.:;").lower()
    if not text.startswith("ctx-"):
        text = "ctx-" + text
    return text if all(c.isalnum() or c == "-" for c in text) else None


def resolve_bullet(store: PlaybookStore, given: str) -> Bullet:
    """The lesson `given` names: its exact id, or the one id it is a unique prefix of."""
    found = store.get_bullet(given)
    if found is not None:
        return found
    prefix = _lesson_prefix(given)
    matches = store.find_by_prefix(prefix) if prefix else []
    bullet_id = pick(given, matches, "lesson", "ace patterns --status all", more=len(matches) >= SHOWN_CANDIDATES)
    found = store.get_bullet(bullet_id)
    if found is None:  # removed meanwhile
        raise CommandError(f"no lesson `{given}`; `ace patterns --status all` lists them")
    return found


def resolve_session(store: SessionsStore, given: str) -> SessionRow:
    """The captured session `given` names: its exact id, or the one id it is a unique prefix of."""
    found = store.session(given)
    if found is not None:
        return found
    text = given.strip()
    matches = [s["session_id"] for s in store.list_sessions(None, 10_000)
               if text and s["session_id"].lower().startswith(text.lower())]
    found = store.session(pick(given, matches, "session", "ace sessions --all"))
    if found is None:  # removed meanwhile (gc)
        raise CommandError(f"no session `{given}`; `ace sessions --all` lists them")
    return found
