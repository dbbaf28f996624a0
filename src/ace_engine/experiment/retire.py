"""Lessons that don't pay: shown often, yet the failure they cover comes back as often as without them.

Contract: `unpaid(rows, min_sessions)` is pure: over `report.lesson_rows` (per lesson: sessions of
each arm it was available in, how many of them its failure came back in, how many it was shown in),
the lessons shown in at least `min_sessions` sessions, available to at least `min_sessions` held-out
sessions of which at least one met the failure (so it is a failure that happens), whose failure came
back at least as often with the lesson available as without — with the reason, for the lesson's
history. The rates compared are per session the lesson was available in, in both arms (not per
session it was shown in: a lesson is shown where its failure is likely, which would tilt the
comparison against it).

`check(store, project_id, now)` is what the curator's prune step calls: at most once a day per
project (a `session_state` row under the project's owner key) and only when an experiment ever
ran, it builds the report's rows (`report.gather`, every arm session's events) and returns
`unpaid`'s answer; else []. The curator archives them with the reason (learning/curator.py).

Cost: nothing without an experiment (one small-table read); with one, one `session_events` read per
arm session once a day, in the learning worker.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from . import report

if TYPE_CHECKING:
    from ..store.interfaces import Store

CHECK_EVERY_S = 86400
STATE_KEY = "unpaid_checked_at"


def unpaid(rows: Sequence[Mapping[str, Any]], min_sessions: int = report.MIN_PER_ARM) -> list[tuple[str, str]]:
    out = []
    for r in rows:
        if r["shown"] < min_sessions or r["n_with"] < min_sessions or r["n_without"] < min_sessions \
                or not r["recurred_without"]:
            continue
        with_rate, without_rate = r["recurred_with"] / r["n_with"], r["recurred_without"] / r["n_without"]
        if with_rate >= without_rate:
            out.append((str(r["id"]), f"does not pay: shown in {r['shown']} sessions, the failure it covers came back "
                                      f"in {r['recurred_with']} of {r['n_with']} sessions with it and "
                                      f"{r['recurred_without']} of {r['n_without']} held out without it"))
    return out


def check(store: Store, project_id: int | None, now: float,
          min_sessions: int = report.MIN_PER_ARM) -> list[tuple[str, str]]:
    if project_id is None or not store.experiments():
        return []
    owner = f"ace:project:{project_id}"  # the per-project owner of `session_state` rows (hooks/inject.py's too)
    try:
        last = float(store.get_state(owner, STATE_KEY) or 0.0)
    except ValueError:
        last = 0.0
    if now - last < CHECK_EVERY_S:
        return []
    store.set_state(owner, STATE_KEY, repr(now))
    sessions, content = report.gather(store, project_id, now)
    return unpaid(report.lesson_rows(sessions, content, min_sessions), min_sessions)
