"""Changing the playbook by hand: `ace add`, `edit`, `rm`, `tag`, `keep`, `clear`. Each goes through
the playbook's delta operations (source `user`), so it is in the change log (`ace log`, `ace show`).
A refused delta raises PlaybookError or SectionError with the reason; the `ace` group prints it."""

import sys
import time

import click

from ..playbook import safety, sections
from ..playbook.playbook import Playbook
from ..playbook.transfer import public_bullet
from .common import json_option, open_store, project_of, project_option
from .output import emit_json, fail, plain, plural, say
from .playbook_common import counters_text, get_bullet, known_project_id, section_option_value


@click.command()
@click.argument("content")
@click.option("--section", required=True,
              help=f"One of {', '.join(sections.DEFAULT_SECTIONS)} (or an alias: rules, snippets, pitfalls, apis).")
@click.option("--domain", "domains", multiple=True, help="Domain of the lesson (repeatable; default: derived from it).")
@click.option("--global", "is_global", is_flag=True, help="A lesson for every project, not just this one.")
@project_option
@json_option
def add(content, section, domains, is_global, project_dir, as_json):
    """Add a lesson (CONTENT, or `-` to read it from stdin). Prints its id, so `id=$(ace add …)`
    works. A lesson already in the playbook (same words, case and punctuation aside) is not added
    twice: its id is printed and the exit code is still 0. A lesson the safety policy flags
    (download-and-run, sudo, unknown hosts, words addressed to the model…) is kept quarantined
    until you approve it with `ace review --approve ID`: an agent can run `ace add` too."""
    from .common import load_config  # learning.trusted_hosts: user-level only (config.py refuses it in projects)

    if content == "-":
        content = sys.stdin.read()
    project = project_of(project_dir)
    hosts = load_config(project.root)["learning.trusted_hosts"] or ()
    with open_store() as store:
        playbook = Playbook(store, project, trusted_hosts=hosts)
        bullet, created = playbook.add(content, section, domains=list(domains) or None,
                                       scope="global" if is_global else "project", source="user", reason="ace add")
    if as_json:
        return emit_json({**public_bullet(bullet), "created": created})
    if not created:
        click.echo(f"already in the playbook as {bullet['id']} ({bullet['status']}); not added again", err=True)
    elif bullet["status"] == "quarantined":
        click.echo(plain(f"held back for review ({'; '.join(bullet['provenance'].get('concerns') or [])}): it is not "
                         f"injected until you run `ace review --approve {bullet['id']}`"), err=True)
    click.echo(bullet["id"])


@click.command()
@click.argument("bullet_id")
@click.option("--content", default=None, help="New wording.")
@click.option("--section", default=None, help="Move it to this section.")
@click.option("--domain", "domains", multiple=True, help="Replace its domains (repeatable).")
@json_option
def edit(bullet_id, content, section, domains, as_json):
    """Change a bullet's wording, section or domains. Without options, opens $EDITOR on its wording."""
    with open_store() as store:
        playbook = Playbook(store, None)
        bullet = get_bullet(playbook, bullet_id)
        if content is None and section is None and not domains:
            edited = click.edit(bullet["content"] + "\n", require_save=True)
            if edited is None:
                if as_json:
                    return emit_json({**public_bullet(bullet), "changed": False})
                say("{}: not saved, nothing changed.", bullet["id"])
                return
            content = edited
        section = section_option_value(section, playbook.extra_sections)
        updated = playbook.update(bullet["id"], content=content, section=section,
                                  domains=list(domains) or None, source="user", reason="ace edit")
    changed = updated["updated_at"] != bullet["updated_at"]  # UPDATE stamps only a real change
    if as_json:
        return emit_json({**public_bullet(updated), "changed": changed})
    if not changed:
        say("{}: nothing changed.", bullet["id"])
        return
    say("{} updated: [{}] {}", updated["id"], updated["section"], updated["content"])


@click.command("rm")
@click.argument("bullet_id")
@click.option("--purge", is_flag=True,
              help="Delete it for good, with its history (change log, injections, embeddings), "
                   "overwriting the text in the store file.")
@json_option
def rm(bullet_id, purge, as_json):
    """Archive a bullet: it is no longer injected; its history stays (`ace show ID`), and
    `ace patterns --status archived` still lists it. With --purge it is deleted instead, history
    and all (e.g. a lesson that captured a secret)."""
    with open_store() as store:
        playbook = Playbook(store, None)
        bullet = get_bullet(playbook, bullet_id)
        was = bullet["status"]
        if purge:
            with store.transaction():
                store.purge_bullets([bullet["id"]])
                store.refresh_domain_counts(bullet["project_id"])
            store.reclaim()
            if as_json:
                return emit_json({"id": bullet["id"], "purged": True, "previous_status": was})
            say("{} deleted for good, with its history.", bullet["id"])
            return
        bullet = playbook.remove(bullet["id"], source="user", reason="ace rm")
    if as_json:
        return emit_json({**public_bullet(bullet), "previous_status": was})
    say("{} archived." if was != "archived" else "{} was already archived.", bullet["id"])


@click.command()
@click.argument("bullet_id")
@click.argument("verdict", type=click.Choice(["helpful", "harmful"]))
@click.option("--implicit", is_flag=True,
              help="Count it as an implicit outcome (weight 1) instead of an explicit mark (weight 3).")
@json_option
def tag(bullet_id, verdict, implicit, as_json):
    """Mark a bullet helpful or harmful. Your marks are explicit and weigh 3× an outcome observed
    automatically; harmful marks lower its confidence until it stops being injected and is pruned."""
    with open_store() as store:
        playbook = Playbook(store, None)
        bullet = get_bullet(playbook, bullet_id)
        bullet = playbook.tag(bullet["id"], verdict, explicit=not implicit, source="user", reason="ace tag")
    if as_json:
        return emit_json(public_bullet(bullet))
    say("{} marked {}{}: {}", bullet["id"], verdict, " (implicit)" if implicit else "", counters_text(bullet))


@click.command()
@click.argument("bullet_id")
@json_option
def keep(bullet_id, as_json):
    """Keep a lesson: make a candidate (learned once, on weak evidence, or to re-check since what it
    rests on changed) or an archived lesson active, as your decision; its anchors are taken as they
    are now (an active lesson shown with a "to re-check" caveat loses it). The safety policy still applies: a flagged
    candidate is held back for `ace review` instead."""
    from .common import load_config  # learning.trusted_hosts: user-level only

    with open_store() as store:
        bullet = get_bullet(Playbook(store, None), bullet_id)
        # Screened with the hosts the curator trusts in the lesson's project: the user's
        # `learning.trusted_hosts` and the project's own git remote host.
        project = store.project_row(bullet["project_id"]) if bullet["project_id"] is not None else None
        remote = safety.remote_host(project["remote"]) if project else None
        hosts = tuple(load_config(project["root"] if project else None)["learning.trusted_hosts"] or ())
        playbook = Playbook(store, None, trusted_hosts=hosts + ((remote,) if remote else ()))
        was = bullet["status"]
        if was == "quarantined":
            fail(f"{bullet['id']} is held for review; `ace review --approve {bullet['id']}` makes it active")
        if was == "candidate":
            bullet = playbook.promote(bullet["id"], source="user", reason="ace keep: kept by the user")
        elif was == "archived":
            bullet = playbook.restore(bullet["id"], source="user", reason="ace keep: kept by the user")
        if project and bullet["status"] == "active":  # confirmed: its anchors are what the project holds now
            from ..playbook import staleness

            staleness.reconfirm(store, dict(bullet), project["root"], time.time())
    if as_json:
        return emit_json({**public_bullet(bullet), "previous_status": was})
    if was == "active":
        say("{} is already active{}.", bullet["id"], "; what it rests on is taken as it is now" if project else "")
    elif bullet["status"] == "quarantined":
        click.echo(plain(f"held back for review ({'; '.join(bullet['provenance'].get('concerns') or [])}): it is not "
                         f"injected until you run `ace review --approve {bullet['id']}`"), err=True)
    else:
        say("{} is active: it is injected from now on.", bullet["id"])


@click.command()
@click.option("--confirm", is_flag=True, help="Required: this deletes bullets and their history for good.")
@click.option("--all-projects", is_flag=True, help="Every project's bullets and the global ones.")
@project_option
@json_option
def clear(confirm, all_projects, project_dir, as_json):
    """Delete this project's bullets for good (not archived: gone, with their change log, what was
    injected of them and their embeddings; the text is overwritten in the store file).
    Global bullets stay unless --all-projects. `ace export` first if you may want them back."""
    project = project_of(project_dir)
    what = "every project's bullets and the global ones" if all_projects else f"the bullets of {project.name}"
    if not confirm:
        fail(f"`ace clear` deletes {what} for good; run `ace clear --confirm"
             f"{' --all-projects' if all_projects else ''}` to go ahead (`ace export -o FILE` keeps a copy)", code=2)
    with open_store() as store:
        if all_projects:
            scopes = [p["id"] for p in store.list_projects()] + [None]
        else:
            project_id = known_project_id(store, project)
            scopes = [project_id] if project_id is not None else []
        removed = 0
        with store.transaction():
            for scope in scopes:
                removed += store.delete_bullets(scope, include_global=False)
                store.refresh_domain_counts(scope)
        store.reclaim()  # the freed (zeroed) pages go back to the file system
    if as_json:
        return emit_json({"removed": removed, "project": None if all_projects else project.key})
    say("Removed {} ({}).", plural(removed, "bullet"), what)


COMMANDS = [add, edit, rm, tag, keep, clear]
