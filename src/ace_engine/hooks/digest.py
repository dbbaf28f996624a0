"""Which lessons the SessionStart digest offers: this repository's recent failures and
open ends first, filler never.

The digest is read before anything is known of the new session but its repository, so it bets on
what comes back: a failure a recent session met (the same wall is hit again the next day), one
met in several sessions (it recurs), or one about what the last sessions left open (the next
session picks it up). The order it is given (`retrieval.search.top`: value) is kept inside each tier:

    0  lessons the curator learned from a failure (any kind but a command that merely passed,
       `working_command`, or files edited together, `co_edit`) observed in one of the last
       `RECENT_SESSIONS` sessions, or in two sessions or more, or sharing `OPEN_END_WORDS`
       distinctive words with an open end of the last sessions' summaries (`Left failing:`, …);
    1  lessons not learned by the curator — the user's own, the repository's conventions
       (`ace bootstrap`), the team's — and learned ones marked helpful at least once;
    —  the rest (learned once, long ago, never found helpful, or a command that merely passed)
       is left out: the prompt-time search still finds it when a prompt calls for it, and a line
       that matches nothing the session meets is what the replay bench counts as noise. So is a
       model's rule of one part of the code (`scope` "code": what a later change to that code must
       keep) seen in one session only and never found helpful, however recent: it serves the
       session that touches that code, which the prompt's search and the domain shift find
       (replay: noise 5.52 → 4.95 lines a session, no recurring lesson lost; bench/README.md).

"Recent" is the sessions of the lessons updated last (`list_bullets(order="recent")`), and the
open ends are the newest summaries' (`recent_summaries`, whatever their age: the continuity block
has its own age rule). Cost: two indexed queries of at most `WINDOW` rows; stdlib only.

`unremembered` then drops what Claude Code's auto memory already put in the context: a lesson whose
text MEMORY.md's loaded head holds, or one learned from a note that head links
(`core/auto_memory.Loaded.holds`). Cost: one bounded read of MEMORY.md (≤ 25 KB) per directory.
"""

import re

TYPE_CHECKING = False  # not `typing.TYPE_CHECKING`: the hooks must not import `typing` (~3 ms)
if TYPE_CHECKING:
    from collections.abc import Sequence

    from ..core._types import Bullet
    from ..store.interfaces import Store

RECENT_SESSIONS = 3
WINDOW = 60
OPEN_END_WORDS = 2
NOT_FAILURES = ("working_command", "co_edit")
_OPEN_LABELS = ("Left failing:", "Ended while about to:", "Cut off mid-task", "Waiting on you:",
                "Left to do (agent said):", "Left to do (you said):")
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_.-]{4,}")
_COMMON = frozenset("""error failed fails failing fixed there their which where while would could should
about after before being every other these those using still first again tests check build""".split())


def _words(text: str) -> "set[str]":
    return {w.lower().strip(".-") for w in _WORD.findall(text or "")} - _COMMON


def _sessions(bullet: "Bullet") -> "list[str]":
    prov = bullet.get("provenance") or {}
    seen = prov.get("sessions") if isinstance(prov, dict) else None
    return [str(s) for s in seen if s] if isinstance(seen, list) else []


def select(store: "Store", project_id: "int | None", session_id: "str | None",
           ranked: "Sequence[Bullet]", exclude: "set[str]") -> "list[Bullet]":
    """`ranked` (best first), with the project's most recently updated lessons after it, cut to
    the digest's tiers (module doc), tier 0 first; none of the ids in `exclude`."""
    if project_id is None:
        return list(ranked)
    newest = store.list_bullets(project_id, include_global=False, order="recent", limit=WINDOW)
    recent: list[str] = []
    for b in newest:
        for sid in reversed(_sessions(b)):
            if sid != session_id and sid not in recent:
                recent.append(sid)
                break
        if len(recent) >= RECENT_SESSIONS:
            break
    open_words: set[str] = set()
    for row in store.recent_summaries(project_id, since=0.0, exclude_session=session_id, limit=RECENT_SESSIONS):
        if row.get("open_ends"):
            for line in str(row.get("text") or "").splitlines():
                if line.startswith(_OPEN_LABELS):
                    open_words |= _words(line)
    first, second = [], []
    seen = set(exclude)
    for b in [*ranked, *newest]:
        if b["id"] in seen:
            continue
        seen.add(b["id"])
        prov = b.get("provenance") if isinstance(b.get("provenance"), dict) else {}
        if prov.get("source") != "learning":
            second.append(b)  # not the learner's guess: the user's, the repository's, the team's
            continue
        sessions = _sessions(b)
        helped = (b.get("helpful") or 0) + (b.get("helpful_explicit") or 0) > 0
        if prov.get("scope") == "code" and len(sessions) < 2 and not helped:
            continue  # a rule of one part of the code: for the session that touches it (prompt, domain shift)
        if prov.get("kind") not in NOT_FAILURES and (
                len(sessions) >= 2 or set(sessions) & set(recent)
                or len(_words(b.get("content") or "") & open_words) >= OPEN_END_WORDS):
            first.append(b)
        elif helped:
            second.append(b)
    return first + second


def unremembered(bullets: "list[Bullet]", *roots: "str | None") -> "list[Bullet]":
    """`bullets` without those MEMORY.md already gives this session (module doc)."""
    from ..core.auto_memory import loaded

    memory = loaded(*roots)
    if not memory:
        return bullets
    kept = []
    for b in bullets:
        prov = b.get("provenance") if isinstance(b.get("provenance"), dict) else {}
        files = prov.get("files") if prov.get("kind") == "auto_memory" else None
        note = str(files[0]) if isinstance(files, list) and files else None
        if not memory.holds(str(b.get("content") or ""), note):
            kept.append(b)
    return kept
