"""`ace trust`: let a project's `.ace.toml` set user-level keys — for this exact content only.

`ace trust` shows the user-level keys the file sets (what the user is approving), then records
the sha256 of its bytes and its real path (`trust.py`). `--revoke` forgets it, `--list` shows
every record and whether the file still has the trusted content. An edit of the file voids the
trust; the keys are then ignored again until the user re-runs `ace trust`.
"""

import os

import click

from ..core import config as config_mod
from ..core import escape, paths
from ..core import trust as trust_mod
from ..core.project import identify
from .common import json_option, project_option, resolve_dir
from .output import emit_json, fail, when

# Plain echo, not rich: paths and values come from files and must never be read as markup.
say = click.echo


def _config_file(project_dir: str | None) -> str:
    return os.path.join(identify(resolve_dir(project_dir)).root, paths.PROJECT_CONFIG_NAME)


@click.command("trust")
@project_option
@click.option("--revoke", is_flag=True, help="Forget the trust of the project's .ace.toml.")
@click.option("--list", "list_all", is_flag=True, help="Show every trusted file and whether it changed since.")
@json_option
def trust(project_dir, revoke, list_all, as_json):
    """Allow the project's .ace.toml to set user-level keys (llm.*, retention.*, trusted hosts…).

    Without trust a project file may only set harmless keys (capture, inject, retrieval, lesson
    shaping); the rest is ignored. Trust covers the file's exact content: any edit voids it.
    """
    if revoke and list_all:
        fail("--revoke and --list do not go together; use one")
    if list_all:
        rows = trust_mod.entries()
        if as_json:
            return emit_json(rows)
        if not rows:
            say("No trusted project config files.")
        for r in rows:
            say(f"{r['state']:<8} {when(r['trusted_at'])}  {r['sha256'][:16]}  {escape.one_line(r['path'])}")
        return
    path = _config_file(project_dir)
    if revoke:
        removed = trust_mod.revoke(path)
        if as_json:
            return emit_json({"path": trust_mod.real_path(path), "revoked": removed})
        if removed:
            say(f"Trust of {escape.one_line(path)} revoked: its user-level keys are ignored again.")
        else:
            say(f"{escape.one_line(path)} was not trusted; nothing changed.")
        return
    found = config_mod.read_toml_bytes(path, project=True)
    if found is None:
        fail(f"{path} does not exist; there is nothing to trust (run in the project, or pass --project DIR)")
    table_, data = found
    unknown = [key for key in table_ if key not in config_mod.SETTINGS_BY_KEY]
    if unknown:
        fail(f"{path}: unknown key `{unknown[0]}`; fix the file (`ace config show` lists valid keys), then re-run")
    restricted = {key: value for key, value in table_.items() if not config_mod.project_may_set(key)}
    entry = trust_mod.trust(path, data)
    if as_json:
        return emit_json({**entry, "user_level_keys": restricted})
    say(f"Trusted {escape.one_line(entry['path'])} (sha256 {entry['sha256'][:16]}…).")
    if restricted:
        say("It may now set these user-level keys:")
        for key, value in sorted(restricted.items()):
            say(f"  {key} = {escape.one_line(repr(value))}")
    else:
        say("It sets no user-level key, so it applied in full already; the record changes nothing.")
    say("Any change to the file voids this; `ace trust --revoke` undoes it.")


COMMANDS = [trust]
