"""A replayed session scored on what its transcript itself shows: the failures it ran into.

Contract: all pure. `failures(parsed)` is the error signatures (observe/signatures.py) of a parsed
transcript's failed commands, main agent and subagents, each once, in order. `score(failures,
earlier, lines, lessons)` scores one session of a replay, given the earlier sessions' scores, the
lesson lines injected at its start ((id, text)) and the playbook as it stood then (`replay.snapshot`):

- recurring: a signature of this session that an earlier session of the replay failed with too —
  the same failure again. Signatures of fewer than `outcomes.MIN_WORDS` words are left out: no
  lesson can be said to cover them (the rule `ace report` uses);
- spared: a recurring signature that an injected lesson covers (`outcomes.covering`: its words in
  order in the lesson's text or one of its situations) — a lesson would have preceded it;
- noise: an injected line whose lesson covers no failure of this session — shown, not needed;
- missed: for each recurring signature not spared, where a lesson covering it stood at the start:
  `active` (there, not injected), `candidate`, `quarantined`, `archived`, else `not learned`.

The transcript is the past, lived without these lessons, so a lesson it needed is one whose failure
it shows; a lesson that states a standing rule and names no failure counts as noise here, which the
bench's gold lessons (bench/replay.py) judge otherwise.

`figures(rows)` sums rows of `replay.replay`: sessions, failures, recurring, spared and its share,
injected lines, noise lines and tokens (totals and per session), errors, missed because.

Cost: one trajectory step per tool event, a words match per recurring signature × injected lesson.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from .outcomes import MIN_WORDS, Lesson, covering, words

STATUS_ORDER = ("active", "candidate", "quarantined", "archived")


def failures(parsed: Mapping[str, Any]) -> list[str]:
    """Each failed command's error signature, once, in the order the session hit them."""
    from ..observe import trajectory

    root = parsed.get("cwd")
    out: list[str] = []
    for agent in parsed.get("agents") or []:
        for i, event in enumerate(agent.get("events") or [], 1):
            if event.get("success") or event.get("is_interrupt"):
                continue
            step = trajectory.step_from_event(event, i, root)
            sig = step.get("error")
            if sig and sig not in out:
                out.append(sig)
    return out


def _as_lessons(items: Sequence[Mapping[str, Any]]) -> list[Lesson]:
    return [{"id": str(b["id"]), "created_at": 0.0, "texts": list(b.get("texts") or [b.get("content") or ""])}
            for b in items]


def score(found: Sequence[str], earlier: Sequence[Mapping[str, Any]], lines: Sequence[tuple[str, str]],
          lessons: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """One session's failures, recurring ones, spared ones, noise and misses (the module's docstring)."""
    seen = {words(sig) for e in earlier for sig in e["failures"]}
    by_id = {b["id"]: b for b in lessons}
    # A line's lesson by its id; one the snapshot lacks (it cannot: the hooks read the same store) by its text.
    shown = _as_lessons([by_id.get(i) or {"id": i, "content": text} for i, text in lines])
    recurring = [sig for sig in found if words(sig) in seen and len(words(sig).split()) >= MIN_WORDS]
    spared = [sig for sig in recurring if covering(sig, shown, 1.0)]
    needed = {i for sig in found for i in covering(sig, shown, 1.0)}
    noise = [text for (i, text), lesson in zip(lines, shown, strict=True) if lesson["id"] not in needed]
    missed: dict[str, str] = {}
    everything = _as_lessons(lessons)
    for sig in recurring:
        if sig in spared:
            continue
        ids = set(covering(sig, everything, 1.0))
        statuses = {b["status"] for b in lessons if b["id"] in ids}
        missed[sig] = next((st for st in STATUS_ORDER if st in statuses), "not learned")
    return {"failures": list(found), "recurring": recurring, "spared": spared, "noise": noise, "missed": missed}


def figures(rows: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """The replay's figures over `rows` (see the module's docstring)."""
    n = len(rows)
    cap = [r["captured"] for r in rows]
    recurring = sum(len(c["recurring"]) for c in cap)
    spared = sum(len(c["spared"]) for c in cap)
    noise = sum(len(c["noise"]) for c in cap)
    tokens = sum(int(r["tokens"]) for r in rows)
    return {"sessions": n, "failures": sum(len(c["failures"]) for c in cap), "recurring": recurring,
            "spared": spared, "spared_share": round(spared / recurring, 3) if recurring else None,
            "lines": sum(len(r["lines"]) for r in rows), "noise_lines": noise,
            "noise_per_session": round(noise / n, 2) if n else None,
            "tokens": tokens, "tokens_per_session": round(tokens / n, 1) if n else None,
            "errors": sum(len(r["errors"]) for r in rows),
            "missed_because": dict(sorted(Counter(w for c in cap for w in c["missed"].values()).items()))}
