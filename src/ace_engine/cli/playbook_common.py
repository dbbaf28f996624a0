"""Helpers shared by the playbook commands: the project and its config, the ACE plugin's JSON item
shape, bullets as table rows, and the candidates waiting to recur (`ace patterns`, `ace status`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ..playbook import sections
from ..playbook.playbook import Playbook

if TYPE_CHECKING:
    from ..core._types import Bullet
    from ..core.project import Project
    from ..store.interfaces import AnchorStore, PlaybookStore, SessionsStore

EVIDENCE_ITEMS = 5


def known_project_id(store: SessionsStore, project: Project) -> int | None:
    """The store's id of `project` without creating it (read-only commands); None when the store
    has never seen it — then only the global bullets apply."""
    return store.project_id(project.key)


def get_bullet(playbook: Playbook, given: str) -> Bullet:
    """The bullet for an id or a unique id prefix (`common.resolve_bullet`); a CommandError
    naming the candidates or the way to list them otherwise."""
    from .common import resolve_bullet

    return resolve_bullet(playbook.store, given)


def section_option_value(name: str | None, extra: tuple[str, ...] = ()) -> str | None:
    if name is None:
        return None
    return sections.normalize(name, extra)  # SectionError names the known sections


def totals(bullet: Mapping[str, Any]) -> tuple[int, int]:
    """helpful, harmful: implicit and explicit marks together (what people and the plugin see)."""
    return (int(bullet.get("helpful") or 0) + int(bullet.get("helpful_explicit") or 0),
            int(bullet.get("harmful") or 0) + int(bullet.get("harmful_explicit") or 0))


def evidence(bullet: Mapping[str, Any]) -> list[str]:
    """The `evidence` of the plugin's item: a list of strings, most recent observation last — the
    evidence the lesson was learned from (`provenance.evidence`), then that of each later
    observation (`provenance.evidence_log`), at most EVIDENCE_ITEMS, duplicates dropped. [] for a
    lesson a person added."""
    provenance = bullet.get("provenance") or {}
    found: list[str] = []
    first = provenance.get("evidence")
    if isinstance(first, str) and first.strip():
        found.append(first.strip())
    elif isinstance(first, list):
        found += [str(e).strip() for e in first if str(e).strip()]
    for entry in provenance.get("evidence_log") or []:
        text = entry.get("evidence") if isinstance(entry, dict) else entry
        if isinstance(text, str) and text.strip():
            found.append(text.strip())
    unique = list(dict.fromkeys(found))
    return unique[:1] + unique[1:][-(EVIDENCE_ITEMS - 1):] if len(unique) > EVIDENCE_ITEMS else unique


def compat_item(bullet: Mapping[str, Any]) -> dict:
    """One `similar_patterns` item of the ACE plugin's `ace-cli`, exactly:
    {id, section, content, confidence, helpful, harmful, domain, evidence}; `domain` is the
    bullet's primary (first) domain."""
    helpful, harmful = totals(bullet)
    domains = bullet.get("domains") or []
    return {
        "id": bullet["id"],
        "section": bullet["section"],
        "content": bullet["content"],
        "confidence": float(bullet.get("confidence") or 0.0),
        "helpful": helpful,
        "harmful": harmful,
        "domain": domains[0] if domains else "general",
        "evidence": evidence(bullet),
    }


def counters_text(bullet: Mapping[str, Any]) -> str:
    helpful, harmful = totals(bullet)
    return f"✓{helpful} ✗{harmful} {float(bullet.get('confidence') or 0.0):.2f}"


def bullet_row(bullet: Mapping[str, Any]) -> list:
    # A lesson pulled from the team server says so next to its id, as in the injected line.
    ident = f"{bullet['id']} (team)" if bullet.get("origin") == "team" else bullet["id"]
    return [ident, bullet["section"], bullet["content"], ", ".join(bullet.get("domains") or []),
            counters_text(bullet)]


BULLET_COLUMNS = ["id", "section", "lesson", "domains", "✓ ✗ conf."]
BULLET_BODY = ("lesson",)  # wrapped under the id when the terminal is too narrow for a table
BULLET_BARE = ("section", "✓ ✗ conf.")  # shown without their label there: they say what they are



WAITING_SHOWN = 3  # candidates listed under `ace patterns` / `ace status`; `--status candidate` lists all


def seen_text(bullet: Mapping[str, Any]) -> str:
    """A learned lesson's evidence: sessions seen in, and the evidence confidence the promotion
    rule compares with `learning.promote_confidence` ("-" for lessons written by hand)."""
    prov = bullet.get("provenance") or {}
    grade = prov.get("confidence")
    if not isinstance(grade, (int, float)) or isinstance(grade, bool):
        return "-"
    return f"{int(prov.get('observations') or 1)}× {float(grade):.2f}"


def waiting(store: PlaybookStore, project_id: int | None, *, section: str | None = None,
            domain: str | None = None) -> tuple[int, list[Bullet]]:
    """(how many candidates wait to recur, the newest few of them) in this project's playbook."""
    if project_id is None:
        return 0, []
    rows = store.list_bullets(project_id, statuses=("candidate",), section=section, domain=domain, order="recent")
    return len(rows), rows[:WAITING_SHOWN]


def show_waiting(total: int, newest: list[Bullet]) -> None:
    """The waiting candidates, marked as waiting, with how to keep one; nothing when there are none."""
    from .output import plural, say, table

    if not total:
        return
    say("")
    say("[yellow]Waiting to recur:[/] {} learned once, not used yet: seen again in a later session (the same "
        "failure and fix, say), a lesson becomes active; `ace keep ID` keeps one now.", plural(total, "lesson"))
    table(None, ["id", "status", "lesson", "seen"],
          [[b["id"], "waiting", b["content"], seen_text(b)] for b in newest], body=("lesson",),
          bare=("status", "seen"))
    if total > len(newest):
        say("{} more: `ace patterns --status candidate`.", total - len(newest))


def show_waiting_for(project_key: str) -> None:
    """`ace status`: this project's waiting candidates, as `ace patterns` shows them (nothing
    when there are none)."""
    from .common import open_store

    with open_store() as store:
        show_waiting(*waiting(store, store.project_id(project_key)))


# Lessons listed by `ace patterns --to-recheck`: the store returns at most this many anchors.
RECHECK_LISTED = 2_000


def recheck_notes(store: AnchorStore, project_id: int | None) -> dict[str, list[str]]:
    """{lesson id: what changed} of the project's live lessons with an anchor to re-check — changed
    since it was written, or grown (`playbook/staleness.py`); what `ace keep ID` confirms."""
    if project_id is None:
        return {}
    out: dict[str, list[str]] = {}
    for anchor in store.to_recheck(project_id, limit=RECHECK_LISTED):
        out.setdefault(anchor["bullet_id"], []).append(
            anchor.get("detail") or f"{anchor['kind']} `{anchor['name']}` changed")
    return out


def show_to_recheck(rows: list[Bullet], changed: dict[str, list[str]]) -> None:
    """`ace patterns --to-recheck`: the lessons with what changed under each."""
    from .output import plural, say, table

    if not rows:
        say("No lesson to re-check: nothing they rest on has changed since the last check.")
        return
    table(None, BULLET_COLUMNS + ["changed"], [bullet_row(b) + ["; ".join(changed[b["id"]])] for b in rows],
          body=BULLET_BODY + ("changed",), bare=BULLET_BARE)
    say("{} to re-check; `ace keep ID` confirms one as the project is now.", plural(len(rows), "lesson"))
