"""Which agents a lesson came from, by the names the store records (`sessions.agent`,
`session_summaries.agent`, `bullets.agent`: `registry.NAMES`).

Contract: `lesson_agents(bullet, by_session)` lists, first, the agent a lesson was learned from, then the
others whose sessions confirmed it (`by_session`: the store's `session_agents` of its provenance
sessions) — none for a lesson nobody's session taught (added by hand, bootstrapped, imported from
a playbook file). The list never decides anything: every agent gets a repository's lessons.

Cost: no imports beyond the registry.
"""

from __future__ import annotations

from .registry import DEFAULT

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping
    from typing import Any

# Lesson sources whose lessons come from an agent's session (others: the user, a file, a peer).
_FROM_SESSIONS = ("learning", "transcript", "mcp", "import")


def _sessions(provenance: Mapping[str, Any]) -> Iterable[str]:
    found = [*(provenance.get("sessions") or []), provenance.get("session_id")]
    found += [e.get("session_id") for e in provenance.get("evidence_log") or [] if isinstance(e, dict)]
    return [s for s in dict.fromkeys(found) if isinstance(s, str)]


def provenance_sessions(bullet: Mapping[str, Any]) -> list[str]:
    """The sessions a lesson's provenance names (learned in, confirmed in)."""
    prov = bullet.get("provenance")
    return list(_sessions(prov)) if isinstance(prov, dict) else []


def lesson_agents(bullet: Mapping[str, Any], by_session: Mapping[str, str]) -> list[str]:
    """The agents (store names) a lesson came from: the one that taught it first, then others."""
    prov = bullet.get("provenance") if isinstance(bullet.get("provenance"), dict) else {}
    first = bullet.get("agent")
    if not first and (prov or {}).get("source") in _FROM_SESSIONS and (prov or {}).get("imported_from") is None:
        sessions = provenance_sessions(bullet)
        first = next((by_session[s] for s in sessions if s in by_session), None) or (DEFAULT if sessions else None)
    others = [by_session[s] for s in provenance_sessions(bullet) if s in by_session]
    return list(dict.fromkeys([a for a in [first, *others] if a]))
