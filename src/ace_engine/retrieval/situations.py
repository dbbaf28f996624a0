"""Situations: the moments a lesson serves, kept beside it as extra search keys.

Contract. A lesson is found by its text and by its *situations*: the user prompts of the sessions it
was learned in and later confirmed in (shown, then marked helpful), the error signatures and
commands of that session the lesson names, and the files it names that the session touched. The
learning pipeline calls `learned(store, trajectory, touched, helped, now=…)` after curating a
trajectory; the touched lessons and the ones that helped get the trajectory's situations. Texts pass
`redact.sanitize.sanitize` (UTF-8 repair, `<private>` spans stripped, redaction, a size cap) and the
store's redacting connection, like every stored text; at most `MAX_PER_LESSON` situations are kept
per lesson (the most often, then most recently seen), so a lesson adds a bounded number of vectors.
They are embedded at once with the built-in table (`embed.vectors.embed_situations`), in the
learning worker, never in a hook. Search (`embed.vectors.cosines`) scores a lesson by its vector
folded with its situations' (`SITUATION_WEIGHT` there), and `retrieval.search` counts their words
as the lesson's. A lesson merged into another hands its situations to the survivor
(`Playbook.merge`). What is injected stays the lesson's own text: a situation only finds it.

Cost: stdlib; a few small writes and one table embedding (~1 ms) per situation, in the worker.
"""

from __future__ import annotations

import re

from ..core import log
from ..redact.sanitize import sanitize

TYPE_CHECKING = False  # not `typing.TYPE_CHECKING`: cheap to import
if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence

    from ..core._types import Trajectory
    from ..store.interfaces import PlaybookStore

MAX_PER_LESSON = 8
MAX_CHARS = 400  # a prompt's head says what it is about; a pasted log would only dilute its vector
MIN_WORDS = 3  # "yes", "go on", "fix it": continuations say nothing about a lesson
PROMPTS_PER_SESSION = 2  # the task's prompt and the next one: later ones drift from what the lesson serves
_WORD = re.compile(r"[^\W_]+")


def key(text: str) -> str:
    """One row per situation: lower-case words, space-separated."""
    return " ".join(_WORD.findall(text.lower()))[:200]


def clean(text: object) -> str | None:
    """A situation's text as it may be stored (sanitized, capped), or None when it says too little."""
    if not isinstance(text, str):
        return None
    text = " ".join(sanitize(text, MAX_CHARS * 4).split())[:MAX_CHARS]
    return text if len(_WORD.findall(text)) >= MIN_WORDS else None


def of_trajectory(trajectory: Trajectory, lesson: str = "") -> list[tuple[str, str]]:
    """(kind, text) situations of a trajectory for a lesson with text `lesson`: the session's first
    prompts, and the error signatures, commands and files of the session that the lesson names."""
    items: list[tuple[str, str]] = []
    prompts = [p for p in (trajectory.get("prompts") or []) if isinstance(p, str)] or [trajectory.get("task") or ""]
    for prompt in prompts[:PROMPTS_PER_SESSION]:
        items.append(("prompt", prompt))
    lowered = lesson.lower()
    if lowered:
        for step in trajectory.get("trajectory") or []:
            command = step.get("command") or ""
            head = " ".join(command.split()[:3]).lower()
            if step.get("error") and head and head in lowered:
                items.append(("error", f"{command.strip()[:160]}: {step['error']}"))
        for path in trajectory.get("files") or []:
            name = path.replace("\\", "/").rsplit("/", 1)[-1]
            if isinstance(path, str) and len(name) >= 4 and name.lower() in lowered:
                items.append(("file", path))
    return items


def add(store: PlaybookStore, bullet_id: str, items: Iterable[tuple[str, str]], *, session_id: str | None,
        now: float) -> int:
    """Record a lesson's situations (cleaned, deduplicated, capped) and embed the new ones; returns how
    many rows are new. Never raises: a lost situation costs recall, not the learning run."""
    rows: dict[str, tuple[str, str, str]] = {}
    for kind, text in items:
        cleaned = clean(text)
        if cleaned:
            rows.setdefault(key(cleaned), (kind, cleaned, key(cleaned)))
    if not rows:
        return 0
    try:
        added = store.add_situations(bullet_id, list(rows.values()), session_id=session_id, now=now,
                                     cap=MAX_PER_LESSON)
        if added:
            from ..embed import vectors

            vectors.embed_situations(store, [bullet_id])
        return added
    except Exception as exc:  # noqa: BLE001 — situations are an aid to search, never a reason to fail a write
        log.warning("retrieval", f"could not store a lesson's situations ({type(exc).__name__}: {exc})")
        return 0


def learned(store: PlaybookStore, trajectory: Trajectory, touched: Sequence[str], helped: Sequence[str], *,
            now: float) -> int:
    """After a trajectory was curated: the lessons it created or observed again (`touched`) and the
    shown lessons it confirmed (`helped`) get its situations. Returns how many rows are new."""
    ids = list(dict.fromkeys([*touched, *helped]))
    if not ids:
        return 0
    session_id = trajectory.get("session_id")
    added = 0
    for bullet in store.get_bullets(ids):
        if bullet.get("status") in ("active", "candidate"):
            added += add(store, bullet["id"], of_trajectory(trajectory, bullet["content"]), session_id=session_id,
                         now=now)
    return added
