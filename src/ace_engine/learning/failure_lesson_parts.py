"""The pieces every failure lesson is made of: the signature as a code span (its rule name kept
through a cut), "it fails with …", the candidate record with its steps, an episode's evidence line.

    sig_span(sig, root, limit) -> "`…`"        fails_with(sig, root, limit) -> "it fails with `…`"
    candidate(content, kind, confidence, evidence, steps, section, files) -> Candidate
    evidence(episode) -> "step 3: … → failed: …; step 5: …"
    TRANSIENT: failures of the network or the machine (no change fixes them)

Shared by `failure_lessons` and `command_fix_lessons`. Pure string work; no I/O.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from . import episodes as ep
from .lesson_wording import code, cut, local, sentence

if TYPE_CHECKING:
    from ..core._types import Candidate

Step = Mapping[str, Any]

# Failures of the network or the machine: no code edit fixes them.
TRANSIENT = re.compile(r"failed to download|Could not resolve host|Connection (?:refused|reset|timed out)|"
                       r"\bE(?:CONNREFUSED|TIMEDOUT|NOTFOUND|AI_AGAIN)\b|network is unreachable|"
                       r"Temporary failure in name resolution|503 Service|rate limit|cannot lock ref|"
                       r"Unable to create '.*\.lock'", re.IGNORECASE)

def sig_span(sig: str | None, root: str | None, limit: int = 150) -> str:
    """The signature as a code span within about `limit`: a longer one keeps its head (the error
    class) and its end (the telling part: the missing name, the rule `(wrapcheck)`), cut in the
    middle at word boundaries."""
    text = " ".join(local(sig or "", root).split())
    if len(text) <= limit:
        return code(text, limit)
    head = cut(text, int(limit * 0.55))
    rest = text[-int(limit * 0.42):]
    rest = rest[rest.find(" ") + 1:] if " " in rest[:-8] else rest
    return code(f"{head} {rest}" if head.endswith("…") else f"{head} … {rest}", limit + 12)


def fails_with(sig: str | None, root: str | None, limit: int = 150) -> str:
    return f"it fails with {sig_span(sig, root, limit)}" if sig else "it fails"


def candidate(content: str, kind: str, confidence: float, evidence: str, steps: Sequence[Step],
               section: str = "troubleshooting_and_pitfalls", files: Sequence[str] = (), limit: int = 280) -> Candidate:
    cand: Candidate = {"content": sentence(content, min(limit, 400)), "section": section, "kind": kind,
                       "confidence": confidence, "evidence": evidence[:800],
                       "source_steps": [s["step"] for s in steps]}
    if files:
        cand["files"] = list(files)[:10]
    return cand


def evidence(e: ep.Episode) -> str:
    parts = [f"step {f['step']}: {f['action'][:120]} → {f['result'][:120]}" for f in e["fails"][:2]]
    parts += [f"step {s['step']}: {s['action'][:100]}" for s in e["fixes"][:3]]
    parts.append(f"step {e['passed']['step']}: {e['passed']['action'][:100]} → {e['passed']['result'][:80]}")
    return "; ".join(parts)
