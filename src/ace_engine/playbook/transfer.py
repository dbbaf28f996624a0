"""Sharing a playbook: export to a versioned JSON document, import from one or from a plain list.

Export format, version 1 (`ace export`):

    {"format": "ace-engine.playbook", "version": 1, "exported_at": "2025-01-31T12:00:00Z",
     "project": {"key", "name", "root", "remote"} | null (with --all-projects),
     "projects": [...]                       (with --all-projects only),
     "bullets": [{"id", "scope": "project" | "global" | "team", "project": key | null, "section", "content",
                  "domains": [...], "helpful", "harmful", "helpful_explicit", "harmful_explicit",
                  "confidence", "status", "provenance": {...}, "created_at", "updated_at",
                  "last_used_at", "retrieval_count"}]}        (timestamps: seconds since the epoch)

Import (`ace import`) takes that document, or a plain JSON list of
`{"content", "section", "domain"?: str | [str], "helpful"?, "harmful"?}` objects (the ACE plugin's
shape; `domains`, `helpful_explicit`, `harmful_explicit`, `status`, `scope` are accepted too).

Every item is validated before anything is written: one bad item refuses the whole file, with a
message per problem naming the file and the item's index. Then everything is applied through the
playbook's delta operations in one transaction (all or nothing), so the lesson safety policy
(`Playbook.add`) quarantines any flagged item, and merged by exact content: an item whose
normalized content is already in the playbook (same scope) is not added again, so importing a
file twice changes nothing the second time. A local bullet keeps its status (an archived lesson
stays archived).

A file is untrusted (it may come from anyone), so by default nothing in it is believed but the
lessons' words, section and domains: every item comes in as a new, unproven lesson of this
project — project scope, zero counters, active unless the policy holds it back — and the file's
`status` can only hold a lesson back (quarantined / archived are kept), never make it active. The
file's provenance is kept, untouched, under `provenance.imported.provenance`. With `trust=True`
(`ace import --trust`: the user vouches for the file, e.g. their own export) the file's scope,
status and counters are taken, an existing bullet's counters are raised to the file's when
higher, and its provenance is merged in; the safety policy applies all the same.

Imported bullets get new ids (the original is kept in `provenance.imported.id`) and the current
time; usage (retrieval count, last use) is local and starts at zero.

Cost: stdlib `json`; an import validates every item before the first write (one pass), then one
transaction for the whole file. Not on any hook's path.
"""

from __future__ import annotations

import json
import os
import time

from ..core.errors import AceError
from ..core.fmt import iso_utc
from . import sections
from .playbook import STATUSES, PlaybookError, clean_content

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping
    from typing import Any

    from ..core._types import ImportItem, ProjectRow
    from ..core.project import Project
    from ..store.interfaces import Store
    from .playbook import Playbook

FORMAT = "ace-engine.playbook"
VERSION = 1
COUNTERS = ("helpful", "harmful", "helpful_explicit", "harmful_explicit")
# counter -> (tag, explicit) for raising it through TAG
_TAGS = {"helpful": ("helpful", False), "harmful": ("harmful", False),
         "helpful_explicit": ("helpful", True), "harmful_explicit": ("harmful", True)}
PUBLIC_FIELDS = ("id", "section", "content", "domains", *COUNTERS, "confidence", "status", "provenance",
                 "created_at", "updated_at", "last_used_at", "retrieval_count")
MAX_PROBLEMS_SHOWN = 20
MAX_DEPTH = 32  # nesting levels: an export is ~5 deep (provenance's evidence log); more is not ours


class TransferError(AceError, ValueError):
    """A file that can't be imported; `problems` lists every reason (file, item index, what)."""

    def __init__(self, problems: list[str]):
        self.problems = problems
        shown = problems[:MAX_PROBLEMS_SHOWN]
        more = len(problems) - len(shown)
        text = "\n  ".join(shown) + (f"\n  … and {more} more" if more > 0 else "")
        super().__init__(text)


# -- export ----------------------------------------------------------------------------------------


iso = iso_utc  # exported times: ISO 8601, UTC


def public_bullet(bullet: Mapping[str, Any]) -> dict[str, Any]:
    """A bullet as shown to people and other tools: no storage internals (row id, content key,
    the store's numeric project id); `scope` says project or global, and `team` for a project
    lesson pulled from the team server (an import takes none of it on trust)."""
    out = {field: bullet.get(field) for field in PUBLIC_FIELDS}
    out["scope"] = "global" if bullet.get("project_id") is None else (
        "team" if bullet.get("origin") == "team" else "project")
    return out


def _project_info(row: ProjectRow) -> dict[str, Any]:
    return {"key": row["key"], "name": row["name"], "root": row["root"], "remote": row["remote"]}


def export_playbook(store: Store, project: Project | None = None, *, all_projects: bool = False,
                    now: float | None = None) -> dict[str, Any]:
    """The export document of `project`'s bullets plus the global ones (every status), or of every
    project's with `all_projects`. Reads only: exporting a project the store doesn't know yet gives
    just the global bullets."""
    now = time.time() if now is None else now
    document: dict[str, Any] = {"format": FORMAT, "version": VERSION, "exported_at": iso(now)}
    scopes: list[tuple[int | None, str | None]] = []
    if all_projects:
        rows = store.list_projects()
        document["project"] = None
        document["projects"] = [_project_info(r) for r in rows]
        scopes = [(r["id"], r["key"]) for r in rows]
    else:
        if project is None:
            raise TypeError("export_playbook needs a project, or all_projects=True")
        document["project"] = {"key": project.key, "name": project.name, "root": project.root, "remote": project.remote}
        project_id = store.project_id(project.key)
        if project_id is not None:
            scopes = [(project_id, project.key)]
    scopes.append((None, None))  # the global bullets
    bullets = []
    for project_id, key in scopes:
        for bullet in store.list_bullets(project_id, include_global=False, statuses=STATUSES, order="created"):
            bullets.append({**public_bullet(bullet), "project": key})
    document["bullets"] = bullets
    return document


# -- import: parsing and validation ------------------------------------------------------------------


def load_file(path: str, extra_sections: tuple[str, ...] = ()) -> list[ImportItem]:
    """Read and validate an import file; returns the normalized items (see `parse`)."""
    name = os.path.basename(path)
    try:
        with open(path, "rb") as fh:
            raw = fh.read()
    except OSError as exc:
        raise TransferError([f"{path}: cannot be read ({exc.strerror}); check the path and its permissions"]) from exc
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise TransferError([f"{name}: not UTF-8 text ({exc}); export it again or re-save it as UTF-8"]) from exc
    return parse(text, name, extra_sections)


def parse(text: str, name: str = "<input>", extra_sections: tuple[str, ...] = ()) -> list[ImportItem]:
    """Validate an import document; return its items normalized to
    `{index, content, section, domains (list | None), scope, status, provenance, <counters>}`.
    Raises TransferError listing every problem; nothing is half-valid."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise TransferError([f"{name}: not valid JSON (line {exc.lineno}, column {exc.colno}: {exc.msg}); "
                             "nothing was imported"]) from exc
    except ValueError as exc:  # e.g. an integer past Python's digit limit (a 5,000-digit number)
        raise TransferError([f"{name}: not readable as JSON ({' '.join(str(exc).split())[:160]}); "
                             "nothing was imported"]) from exc
    except RecursionError as exc:  # the decoder recurses once per level: a hostile file can exhaust it
        raise TransferError([f"{name}: JSON nested too deeply to read (an ace-engine export is {MAX_DEPTH} levels "
                             "deep at most); nothing was imported"]) from exc
    if _deeper_than(data, MAX_DEPTH):  # what passes is stored and re-serialised: keep it shallow
        raise TransferError([f"{name}: JSON nested more than {MAX_DEPTH} levels deep (an ace-engine export never "
                             "is); nothing was imported"])
    if isinstance(data, dict):
        fmt = data.get("format")
        if fmt != FORMAT:
            raise TransferError([f"{name}: expected an ace-engine export (\"format\": \"{FORMAT}\") or a JSON list "
                                 f"of {{content, section}} objects, got an object with format {fmt!r}"])
        version = data.get("version")
        if not isinstance(version, int) or isinstance(version, bool) or version < 1:
            raise TransferError([f"{name}: \"version\" must be a positive integer, got {version!r}"])
        if version > VERSION:
            raise TransferError([f"{name}: written by a newer ace-engine (format version {version}; this one reads "
                                 f"up to {VERSION}); upgrade ace-engine to import it"])
        items = data.get("bullets")
        if not isinstance(items, list):
            raise TransferError([f"{name}: \"bullets\" must be a list"])
    elif isinstance(data, list):
        items = data
    else:
        raise TransferError([f"{name}: expected an ace-engine export object or a JSON list of "
                             f"{{content, section}} objects, got {type(data).__name__}"])
    problems: list[str] = []
    out: list[ImportItem] = []
    for index, item in enumerate(items):
        found: list[str] = []
        normalized = _item(item, index, extra_sections, found)
        problems += [f"{name}: item {index}: {p}" for p in found]
        if not found and normalized is not None:
            out.append(normalized)
    if problems:
        raise TransferError(problems)
    return out


def _deeper_than(value: object, limit: int) -> bool:
    """Does `value` nest lists / objects more than `limit` levels deep? Iterative: no recursion
    for a hostile document to exhaust."""
    stack: list[tuple[object, int]] = [(value, 1)]
    while stack:
        node, depth = stack.pop()
        children = node.values() if isinstance(node, dict) else node if isinstance(node, list) else None
        if children is None:
            continue
        if depth > limit:
            return True
        stack.extend((child, depth + 1) for child in children)
    return False


def _count(item: Mapping[str, Any], key: str, problems: list[str]) -> int:
    value = item.get(key, 0)
    if value is None:
        return 0
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        problems.append(f"`{key}` must be a whole number ≥ 0, got {value!r}")
        return 0
    return value


def _domains(item: Mapping[str, Any], problems: list[str]) -> list[str] | None:
    value = item.get("domains", item.get("domain"))
    if value is None or value == "" or value == []:
        return None  # derived from the content, as for a new lesson
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(d, str) for d in value):
        problems.append(f"`domain` must be a string or a list of strings, got {value!r}")
        return None
    return value


def _item(item: object, index: int, extra_sections: tuple[str, ...], problems: list[str]) -> ImportItem | None:
    """`item` normalized, its problems appended to `problems` (the result is only good without any)."""
    if not isinstance(item, dict):
        problems.append(f"expected an object with `content` and `section`, got {type(item).__name__}")
        return None
    content = section = ""  # stay empty only when a problem is recorded
    raw_content = item.get("content")
    if not isinstance(raw_content, str):
        problems.append("`content` is missing or not a string" if raw_content is None
                        else f"`content` must be a string, got {type(raw_content).__name__}")
    else:
        try:
            content = clean_content(raw_content)
        except PlaybookError as exc:
            problems.append(str(exc))
    raw_section = item.get("section")
    if not isinstance(raw_section, str):
        problems.append("`section` is missing or not a string; use one of: "
                        + ", ".join(sections.DEFAULT_SECTIONS + tuple(extra_sections)))
    else:
        try:
            section = sections.normalize(raw_section, extra_sections)
        except sections.SectionError as exc:
            problems.append(str(exc))
    status = item.get("status") or "active"
    if status not in STATUSES:
        problems.append(f"`status` must be one of {', '.join(STATUSES)}, got {status!r}")
    scope = item.get("scope") or "project"
    if scope == "team":  # exported from a machine that pulled it: here it is a lesson of this project
        scope = "project"
    if scope not in ("project", "global"):
        problems.append(f"`scope` must be project, global or team, got {scope!r}")
    provenance = item.get("provenance")
    if provenance is not None and not isinstance(provenance, dict):
        problems.append(f"`provenance` must be an object, got {type(provenance).__name__}")
    return {"index": index, "content": content, "section": section, "domains": _domains(item, problems),
            "scope": scope, "status": status, "provenance": dict(provenance or {}),
            "original_id": item.get("id") if isinstance(item.get("id"), str) else None,
            "helpful": _count(item, "helpful", problems), "harmful": _count(item, "harmful", problems),
            "helpful_explicit": _count(item, "helpful_explicit", problems),
            "harmful_explicit": _count(item, "harmful_explicit", problems)}


# -- import: applying --------------------------------------------------------------------------------


_HOLD_BACK = ("quarantined", "archived", "candidate")  # statuses an untrusted file may still ask for


def believed(item: ImportItem, trust: bool) -> ImportItem:
    """What of a validated item is taken as is: everything with `trust`; otherwise only its
    words, section and domains (project scope, zero counters, active unless held back)."""
    if trust:
        return item
    return {**item, "scope": "project", "status": item["status"] if item["status"] in _HOLD_BACK else "active",
            "helpful": 0, "harmful": 0, "helpful_explicit": 0, "harmful_explicit": 0}


def _counter(record: Mapping[str, Any], key: str) -> int:
    """The counter `key` (one of `COUNTERS`) of an item or a bullet."""
    return int(record[key])


def import_items(playbook: Playbook, items: list[ImportItem], *, source_name: str = "import",
                 on_item: Callable[[int], object] | None = None, now: float | None = None,
                 trust: bool = False) -> dict[str, Any]:
    """Apply validated items (from `parse` / `load_file`) to `playbook`, all in one transaction.

    Returns {"created", "merged", "skipped", "quarantined", "total", "items": [{"index", "id",
    "outcome", "status"}]}: created = new bullet; merged = (with `trust`) an existing bullet with the
    same content got higher counters; skipped = already there (a re-import skips everything);
    quarantined = how many of the created ones the safety policy held back. Without `trust` the
    file's scope, counters and status are not believed (see the module doc).
    `on_item(done_count)` is called after each item (for a progress bar)."""
    now = time.time() if now is None else now
    reason = f"imported from {source_name}" + (" (trusted)" if trust else "")
    counts = {"created": 0, "merged": 0, "skipped": 0}
    held = 0
    results: list[dict[str, Any]] = []
    with playbook.store.transaction(), playbook:
        for done, item in enumerate(items, 1):
            item = believed(item, trust)
            imported = {"file": source_name, "id": item.get("original_id"), "at": now, "trusted": trust}
            if trust:
                provenance = {**item["provenance"], "imported": imported}
            else:
                provenance = {"source": "import", "imported": {**imported, "provenance": item["provenance"]}}
            bullet, created = playbook.add(
                item["content"], item["section"], domains=item["domains"], scope=item["scope"],
                provenance=provenance, helpful=item["helpful"], harmful=item["harmful"], status=item["status"],
                source="import", reason=reason,
            )
            if created and bullet["status"] == "quarantined" and item["status"] != "quarantined":
                held += 1
            if created:
                for key in ("helpful_explicit", "harmful_explicit"):
                    if _counter(item, key) > 0:
                        tag, explicit = _TAGS[key]
                        bullet = playbook.tag(bullet["id"], tag, explicit=explicit, count=_counter(item, key),
                                              source="import", reason=reason)
                outcome = "created"
            else:
                outcome = "skipped"
                for key in COUNTERS:
                    missing = _counter(item, key) - _counter(bullet, key)
                    if missing > 0:
                        tag, explicit = _TAGS[key]
                        bullet = playbook.tag(bullet["id"], tag, explicit=explicit, count=missing, source="import",
                                              reason=f"{reason}: {key} raised to {_counter(item, key)}")
                        outcome = "merged"
            counts[outcome] += 1
            results.append({"index": item["index"], "id": bullet["id"], "outcome": outcome, "status": bullet["status"]})
            if on_item is not None:
                on_item(done)
    return {**counts, "quarantined": held, "total": len(items), "items": results}
