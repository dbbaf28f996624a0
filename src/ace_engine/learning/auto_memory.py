"""Claude Code's auto memory as a source of lessons: the notes the agent writes for itself
(`core/auto_memory.py` says where they live) become lessons of the session that wrote them, and
`ace import --claude-memory` reads an existing memory directory once.

A note (`feedback_*.md`, `project_*.md`, `reference_*.md`, … with a `name` / `description` /
`type` front matter) gives one lesson: its description, with the rule of its `How to apply:`
paragraph when it has one; a `user` note (who the user is) gives none. MEMORY.md's own bullets give a
lesson each, except the lines that only link a topic note (the note is the lesson's source). An
Edit gives the lesson of the text it adds.

The candidates go through the curator like any reflector's (`pipeline.commit` adds them): the
playbook's safety policy screens them with the origins of what the session read (the agent may
have been led to write a note), the quality filter, exact and near duplicates of the playbook.
Their evidence is the note file. Imported ones are candidates of source `import` (their session
is unknown here), curated the same way.

Cost: a regex pass over each note (≤ `core.auto_memory.NOTE_BYTES`); the import reads at most
`IMPORT_FILES` regular files of one directory, no symlink followed, no subdirectory.
"""

from __future__ import annotations

import os
import re
import time
from typing import TYPE_CHECKING, Any

from ..core import auto_memory as where
from ..core import config as config_mod
from ..playbook.playbook import Playbook, content_key
from .curator import Curator

if TYPE_CHECKING:
    from ..core._types import Candidate, Trajectory
    from ..core.config import Config
    from ..core.project import Project
    from ..store.interfaces import Store

KIND = "auto_memory"
CONFIDENCE = 0.8  # the main model's own lesson, written with the whole task in view
IMPORT_CONFIDENCE = 0.3  # read back later, its session unknown: a candidate until a session confirms it
IMPORT_FILES = 500
LESSON_CHARS = 400
SECTIONS = {"feedback": "strategies_and_hard_rules", "project": "strategies_and_hard_rules",
            "reference": "apis_to_use"}
SKIPPED_TYPES = ("user",)
_FRONT = re.compile(r"\A\s*---\s*\n(.*?)\n---\s*(?:\n|\Z)", re.S)
_FIELD = re.compile(r"^\s*(name|description|type)\s*:\s*(.*?)\s*$", re.M)
_APPLY = re.compile(r"\*\*\s*how to apply\s*:?\s*\*\*\s*:?\s*(.+?)(?:\n\s*\n|\Z)", re.I | re.S)
_BULLET = re.compile(r"^\s*[-*]\s+(.+?)\s*$", re.M)
_LINK_ONLY = re.compile(r"^\[[^\]]*\]\([^)]*\.md\)")
_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Za-z`(\"'])")
_WIKI_LINK = re.compile(r"(?:\bRelated:\s*)?\[\[[^\]]*\]\]\.?")  # links between notes: nothing to learn


def _unquote(value: str) -> str:
    value = value.strip()
    return value[1:-1].strip() if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'" else value


def _sentences(text: str, limit: int) -> str:
    """Whole sentences of `text` up to `limit` characters (the first one whatever its length)."""
    out = ""
    for sentence in _SENTENCE.split(" ".join(_WIKI_LINK.sub(" ", text).split())):
        if out and len(out) + 1 + len(sentence) > limit:
            break
        out = f"{out} {sentence}".strip()
    return out


def note_lessons(path: str, text: str, *, added_only: str | None = None) -> list[tuple[str, str]]:
    """(content, section) of the lessons in one note's text. `added_only`: the text an Edit replaced
    (lines already in it are not new)."""
    name = os.path.basename(path)
    before = {line.strip() for line in (added_only or "").splitlines()}
    if name == where.INDEX:
        out = []
        for match in _BULLET.finditer(text):
            line = match.group(1)
            if match.group(0).strip() in before or _LINK_ONLY.match(line):
                continue
            out.append((line, "strategies_and_hard_rules"))
        return out
    front = _FRONT.match(text)
    fields = {k.lower(): _unquote(v) for k, v in _FIELD.findall(front.group(1))} if front else {}
    kind = fields.get("type", "").lower() or name.split("_", 1)[0].lower()
    if kind in SKIPPED_TYPES:
        return []
    body = text[front.end():] if front else text
    section = SECTIONS.get(kind, "strategies_and_hard_rules")
    description = fields.get("description", "").rstrip(" .")
    apply = _APPLY.search(body)
    rule = _sentences(apply.group(1), LESSON_CHARS - len(description) - 2) if apply else ""
    rule = rule[:1].upper() + rule[1:]
    if description and rule:
        return [(f"{description}. {rule}"[:LESSON_CHARS], section)]
    if description or rule:
        return [((description or rule)[:LESSON_CHARS], section)]
    if added_only is not None:  # an edit of a topic note: the bullets it adds
        return [(m.group(1), section) for m in _BULLET.finditer(text) if m.group(0).strip() not in before]
    paragraph = next((p for p in re.split(r"\n\s*\n", body) if p.strip() and not p.lstrip().startswith("#")), "")
    return [(_sentences(paragraph, LESSON_CHARS), section)] if paragraph.strip() else []


def _evidence(path: str, text: str) -> str:
    return f"auto memory note {path}: " + " ".join(text.split())[:600]


def candidates(trajectory: Trajectory, extra_dirs: tuple[str, ...] = ()) -> list[Candidate]:
    """The lessons of the memory notes a trajectory's successful Write / Edit steps wrote."""
    out: list[Candidate] = []
    for step in trajectory.get("trajectory") or []:
        data = step.get("written")
        if not isinstance(data, dict) or not step.get("success"):
            continue
        path = str(data.get("file_path") or "")
        if not where.is_note(path, extra_dirs):
            continue
        tool = step.get("tool")
        if tool == "Write":
            text, replaced = str(data.get("content") or ""), None
        elif tool == "Edit":
            text, replaced = str(data.get("new_string") or ""), str(data.get("old_string") or "")
        elif tool == "MultiEdit" and isinstance(data.get("edits"), list):
            edits = [e for e in data["edits"] if isinstance(e, dict)]
            text = "\n".join(str(e.get("new_string") or "") for e in edits)
            replaced = "\n".join(str(e.get("old_string") or "") for e in edits)
        else:
            continue
        for content, section in note_lessons(path, text[:where.NOTE_BYTES], added_only=replaced):
            if content.strip():
                out.append({"content": content, "section": section, "evidence": _evidence(path, text),
                            "source_steps": [step["step"]], "confidence": CONFIDENCE, "kind": KIND,
                            "files": [path]})
    return out


def import_directory(store: Store, project: Project, directory: str, *, cfg: Config | None = None,
                     dry_run: bool = False, now: float | None = None) -> dict[str, Any]:
    """Read the memory directory once: each note's lessons curated into `project`'s playbook as
    candidates. Returns {directory, notes, skipped, lessons, already, created, updated, quarantined, rejected}."""
    now = now or time.time()
    cfg = cfg or config_mod.load(project.root)
    directory = os.path.abspath(os.path.expanduser(directory))
    found: list[Candidate] = []
    notes = skipped = 0
    try:
        entries = sorted(os.scandir(directory), key=lambda e: e.name)[:IMPORT_FILES]
    except OSError:
        entries = []
    for entry in entries:
        # Regular files of this directory only: a symlink may point anywhere on the machine.
        if not entry.name.endswith(".md") or entry.is_symlink() or not entry.is_file(follow_symlinks=False):
            skipped += 1
            continue
        text = where.read_bounded(entry.path, where.NOTE_BYTES)
        if text is None:
            skipped += 1
            continue
        notes += 1
        for content, section in note_lessons(entry.path, text):
            if content.strip():
                found.append({"content": content, "section": section, "evidence": _evidence(entry.path, text),
                              "confidence": IMPORT_CONFIDENCE, "kind": KIND, "files": [entry.path]})
    result: dict[str, Any] = {"directory": directory, "notes": notes, "skipped": skipped, "lessons": len(found),
                              "already": 0, "created": 0, "updated": 0, "quarantined": 0, "rejected": 0}
    if dry_run or not found:
        return result
    playbook = Playbook(store, project, trusted_hosts=cfg["learning.trusted_hosts"] or ())
    # Read once: a lesson the playbook holds word for word is not observed again by a second import.
    fresh = [c for c in found if store.find_by_content_key(content_key(c["content"]), playbook.project_id) is None]
    result["already"] = len(found) - len(fresh)
    if not fresh:
        return result
    found = fresh
    trajectory: Trajectory = {
        "task": "", "prompts": [], "trajectory": [], "result": {"success": None, "output": "", "summary": ""},
        "playbook_used": [], "cited": [], "git": {},
        "agent_id": "", "files": [], "files_read": [], "interrupted": False, "source": "import",
        "tool_event_ids": [], "session_id": f"claude-memory:{directory}", "cwd": project.root}
    with store.transaction():
        stats = Curator(playbook, cfg, source="import", now=now).curate(
            {"candidates": found, "tags": []}, trajectory, prune=False)
    result.update({k: stats[k] for k in ("created", "updated", "quarantined", "rejected")})
    return result
