"""Explicit feedback in a prompt: "ace: ctx-00012 was wrong", "ctx-01abc helped", "that tip
helped". Explicit marks weigh 3× an implicit one (see `playbook.confidence`).

Hook-safe (the UserPromptSubmit hook calls it on every prompt): stdlib `re` only, patterns
compiled on first use, and a substring pre-check so an ordinary prompt costs a few `in` tests.

- `parse_feedback(prompt)` → [(bullet id or id prefix, or None for "the tip just shown", tag)];
- `apply_feedback(store, project, session_id, prompt)` resolves and applies them (TAG, explicit,
  source `feedback`): None → the bullets of the session's most recent injection.

Grammar, deliberately narrow so that ordinary talk isn't taken for feedback: a bullet id
(`ctx-` + at least 4 id characters) with a verdict word in the same clause ("helped", "was
useful", "is wrong", "didn't work", "👍"); or, without an id, a verdict about "the/that/this
tip | pattern | bullet | lesson | hint | advice | suggestion" or a prompt starting with `ace:`.
A negation right before a verdict flips a positive one ("wasn't helpful" → harmful); a negated
negative ("not wrong") says nothing and is ignored.
"""

from __future__ import annotations

import re

TYPE_CHECKING = False  # not `typing.TYPE_CHECKING`: the hooks must not import `typing`
if TYPE_CHECKING:
    from ..core.project import Project
    from ..store.interfaces import PlaybookStore, Store

_ID = r"ctx-[0-9a-hjkmnp-tv-z]{4,20}"
_POSITIVE = (r"help(?:ed|s|ful)?|useful|work(?:ed|s)?|good|great|correct|right|accurate|spot[- ]on|nice|perfect|"
             r"valuable|👍|\+1")
_NEGATIVE = (r"wrong|harmful|bad|incorrect|misleading|outdated|out of date|stale|broke|broken|useless|unhelpful|"
             r"irrelevant|inaccurate|bogus|👎|-1|hurt|confus(?:ed|ing)")
_NEGATION = r"(?:not|n't|never|no longer|hardly)"
_NOUNS = ("tip", "pattern", "bullet", "lesson", "hint", "advice", "suggestion", "playbook")
_compiled: dict[str, re.Pattern[str]] = {}


def _rx(name: str) -> re.Pattern[str]:
    rx = _compiled.get(name)
    if rx is None:
        sources = {
            "id": _ID,
            "verdict": rf"(?P<neg>\b{_NEGATION}\b[\s\w']{{0,12}}?)?"
                       rf"(?:(?P<pos>\b(?:{_POSITIVE})(?:\b|(?=\s|$)))|(?P<bad>\b(?:{_NEGATIVE})(?:\b|(?=\s|$))))",
            "clause": r"[.;!?\n]+|\s(?:but|however|whereas|although|while)\s",
            "noun": r"\b(?:the|that|this|these|those|your|last|previous)\s+(?:(?:ace|playbook)\s+)?(?:"
                    + "|".join(_NOUNS) + r")s?\b",
            "ace": r"^\s*!?ace\s*:",
        }
        rx = _compiled[name] = re.compile(sources[name], re.IGNORECASE)
    return rx


def _verdict(text: str) -> str | None:
    """helpful / harmful for the first verdict word of a clause; None when there is none."""
    for m in _rx("verdict").finditer(text):
        negated = bool(m.group("neg")) or bool(re.search(r"n't\s*$", text[: m.start()]))
        if m.group("pos"):
            return "harmful" if negated else "helpful"
        if m.group("bad"):
            if negated:
                return None  # "not wrong": too weak to act on
            return "harmful"
    return None


def parse_feedback(prompt: object) -> list[tuple[str | None, str]]:
    """[(bullet id or prefix | None, "helpful" | "harmful")] stated in a prompt; [] for most prompts."""
    if not isinstance(prompt, str) or not prompt:
        return []
    text = prompt[:4000]
    low = text.lower()
    if "ctx-" not in low and not any(noun in low for noun in _NOUNS) and "ace:" not in low:
        return []
    marks: list[tuple[str | None, str]] = []
    for clause in _rx("clause").split(text):
        ids = [m.group(0).lower() for m in _rx("id").finditer(clause)]
        if ids:
            verdict = _verdict(_rx("id").sub(" ", clause))
            if verdict:
                marks.extend((bullet_id, verdict) for bullet_id in dict.fromkeys(ids))
            continue
        if _rx("noun").search(clause) or _rx("ace").match(clause):
            verdict = _verdict(clause)
            if verdict:
                marks.append((None, verdict))
    # An id without a verdict in its clause takes the verdict of the prompt's next clause
    # ("ctx-01abc, ctx-02def: both wrong").
    if not marks:
        ids = [m.group(0).lower() for m in _rx("id").finditer(text)]
        verdict = _verdict(_rx("id").sub(" ", text)) if ids else None
        if verdict:
            marks.extend((bullet_id, verdict) for bullet_id in dict.fromkeys(ids))
    seen: set[tuple[str | None, str]] = set()
    out: list[tuple[str | None, str]] = []
    for mark in marks:
        if mark not in seen:
            seen.add(mark)
            out.append(mark)
    return out


def resolve(store: PlaybookStore, session_id: str | None, marks: list[tuple[str | None, str]]) -> list[tuple[str, str]]:
    """Full bullet ids for the marks: prefixes expanded when unique, None → the bullets of the
    session's latest injection."""
    resolved: list[tuple[str, str]] = []
    for bullet_id, tag in marks:
        if bullet_id is None:
            targets = store.last_injection_batch(session_id) if session_id else []
        elif store.get_bullet(bullet_id) is not None:
            targets = [bullet_id]
        else:
            found = store.find_by_prefix(bullet_id)
            targets = found if len(found) == 1 else []
        for target in targets:
            if (target, tag) not in resolved:
                resolved.append((target, tag))
    return resolved


def apply_feedback(store: Store, project: Project | None, session_id: str | None, prompt: object,
                   now: float | None = None) -> list[dict[str, object]]:
    """Parse, resolve and apply the explicit feedback in a prompt; returns what was tagged.
    `project` is a `project.Project` (or None). The playbook is only loaded when the prompt holds
    feedback, so an ordinary prompt costs the parse alone (microseconds)."""
    marks = parse_feedback(prompt)
    if not marks:
        return []
    from .playbook import Playbook

    playbook = Playbook(store, project)
    done = []
    for bullet_id, tag in resolve(store, session_id, marks):
        bullet = playbook.tag(bullet_id, tag, explicit=True, source="feedback", session_id=session_id,
                              reason=f"the user said so: {' '.join(str(prompt).split())[:160]}", now=now)
        done.append({"bullet_id": bullet_id, "tag": tag, "confidence": bullet["confidence"]})
    return done
