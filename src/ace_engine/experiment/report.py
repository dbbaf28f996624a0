"""With vs without: the holdout's sessions compared, per outcome, per repository and per lesson.

Contract: `gather(store, project_id, now)` reads every session given an arm (of one project, or
all) and computes its outcomes (`outcomes.session_outcomes`); a session is left out while it may
still run, and when it started before its experiment did (part of it was lived under the old rule).
`compare(sessions, lessons, min_per_arm)` is pure: for each outcome, each arm's value and number of
sessions, the difference with lessons minus without and its 95 % interval (`stats`: Newcombe's for a
rate, a bootstrap for a mean), and a verdict — "not enough sessions yet" while either arm has fewer
than `min_per_arm` (`MIN_PER_ARM`, 10) sessions with a value, else "helps" / "hurts" when the interval
excludes 0 (every outcome is lower-is-better), else "no clear difference". `by_project` repeats
it per repository; `lessons` gives, per lesson whose covered failure recurred at least once, the
sessions it was available in per arm, how many it was shown in, and in how many its failure came back.

What it cannot say: which arm a session is in is random, so a difference is the lessons' effect —
but on few sessions, a real effect can hide in a wide interval, and one repository's task mix
(a week of refactoring in one arm) can move a figure by chance; the interval is what says how much.
Many outcomes and lessons are shown at once: one in twenty intervals excludes 0 with no effect at all.

Cost: one `session_events` read per session and a signature match per failure (outcomes.py), a
read of its transcript for the tokens (tokens.py), then
a 2000-draw bootstrap per outcome; CLI and dashboard only.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from . import stats
from .arms import HOLDOUT, INJECT
from .outcomes import OUTCOMES, Lesson, session_outcomes
from .tokens import transcript_tokens

if TYPE_CHECKING:
    from ..store.interfaces import Store

MIN_PER_ARM = 10
NOT_ENOUGH = "not enough sessions yet"


def lessons_of(store: Store, project_id: int | None) -> list[Lesson]:
    """The project's lessons, whatever their status now, with the texts that say what they cover."""
    rows = store.list_bullets(project_id, include_global=False, statuses=None, order="created")
    texts: dict[str, list[str]] = {row["id"]: [row["content"]] for row in rows}
    for bullet_id, text in store.situation_texts(list(texts)):
        texts[bullet_id].append(text)
    return [{"id": row["id"], "created_at": float(row["created_at"]), "texts": texts[row["id"]]} for row in rows]


def gather(store: Store, project_id: int | None, now: float) -> tuple[list[dict[str, Any]], dict[str, str]]:
    """(sessions with their arm and outcomes, lesson id → its content)."""
    lessons: dict[int | None, list[Lesson]] = {}
    content: dict[str, str] = {}
    out = []
    for row in store.arm_sessions(project_id):
        if row["started_at"] < row["experiment_started_at"]:
            continue
        pid = row["project_id"]
        if pid not in lessons:
            lessons[pid] = lessons_of(store, pid)
            for b in store.get_bullets([lesson["id"] for lesson in lessons[pid]]):
                content[b["id"]] = b["content"]
        events = store.session_events(row["session_id"])
        session = store.session(row["session_id"])
        ended = bool(session and session.get("ended_at"))
        result = session_outcomes(events["tool_events"], events["messages"], lessons[pid], row["started_at"], now,
                                  ended=ended)
        if not result["complete"]:
            continue
        result["tokens"] = transcript_tokens(session.get("transcript_path") if session else None)
        shown = sorted({r["bullet_id"] for r in store.injected(row["session_id"])})
        available = [lesson["id"] for lesson in lessons[pid] if lesson["created_at"] < row["started_at"]]
        out.append({"session_id": row["session_id"], "arm": row["arm"], "project": row["project"],
                    "started_at": row["started_at"], "outcomes": result, "shown": shown, "available": available})
    return out, content


def _verdict(low: float, high: float) -> str:
    if high < 0:
        return "helps"
    if low > 0:
        return "hurts"
    return "no clear difference"


def compare_outcome(name: str, kind: str, sessions: Sequence[Mapping[str, Any]], min_per_arm: int) -> dict[str, Any]:
    values = {arm: [s["outcomes"][name] for s in sessions if s["arm"] == arm and s["outcomes"].get(name) is not None]
              for arm in (INJECT, HOLDOUT)}
    with_, without = values[INJECT], values[HOLDOUT]
    row: dict[str, Any] = {"outcome": name, "kind": kind, "n_with": len(with_), "n_without": len(without),
                           "with": None, "without": None, "diff": None, "low": None, "high": None}
    if with_:
        row["with"] = round(stats.mean([float(v) for v in with_]), 4)
    if without:
        row["without"] = round(stats.mean([float(v) for v in without]), 4)
    if len(with_) < min_per_arm or len(without) < min_per_arm:
        row["verdict"] = NOT_ENOUGH
        return row
    if kind == "rate":
        diff, low, high = stats.newcombe(sum(map(bool, with_)), len(with_), sum(map(bool, without)), len(without))
    else:
        diff, low, high = stats.bootstrap_diff([float(v) for v in with_], [float(v) for v in without])
    row.update(diff=round(diff, 4), low=round(low, 4), high=round(high, 4), verdict=_verdict(low, high))
    return row


def _outcome_rows(sessions: Sequence[Mapping[str, Any]], min_per_arm: int) -> list[dict[str, Any]]:
    return [{**compare_outcome(name, kind, sessions, min_per_arm), "what": what} for name, what, kind in OUTCOMES]


def lesson_rows(sessions: Sequence[Mapping[str, Any]], content: Mapping[str, str],
                min_per_arm: int) -> list[dict[str, Any]]:
    """Per lesson whose failure recurred somewhere: in how many sessions of each arm it was there
    (written before the session began), shown, and followed by its failure."""
    recurred_somewhere = {i for s in sessions for i in s["outcomes"]["covered_ids"]}
    rows = []
    for lesson_id in sorted(recurred_somewhere):
        row: dict[str, Any] = {"id": lesson_id, "content": content.get(lesson_id, "")}
        for arm, label in ((INJECT, "with"), (HOLDOUT, "without")):
            there = [s for s in sessions if s["arm"] == arm and lesson_id in s["available"]]
            row[f"n_{label}"] = len(there)
            row[f"recurred_{label}"] = sum(1 for s in there if lesson_id in s["outcomes"]["covered_ids"])
        row["shown"] = sum(1 for s in sessions if s["arm"] == INJECT and lesson_id in s["shown"])
        if row["n_with"] >= min_per_arm and row["n_without"] >= min_per_arm:
            diff, low, high = stats.newcombe(row["recurred_with"], row["n_with"], row["recurred_without"],
                                             row["n_without"])
            row.update(diff=round(diff, 4), low=round(low, 4), high=round(high, 4), verdict=_verdict(low, high))
        else:
            row.update(diff=None, low=None, high=None, verdict=NOT_ENOUGH)
        rows.append(row)
    return rows


def compare(sessions: Sequence[Mapping[str, Any]], content: Mapping[str, str] | None = None,
            min_per_arm: int = MIN_PER_ARM) -> dict[str, Any]:
    """The report (see the module's docstring) as JSON-ready data."""
    counts = {arm: sum(1 for s in sessions if s["arm"] == arm) for arm in (INJECT, HOLDOUT)}
    projects = sorted({str(s["project"]) for s in sessions})
    return {
        "min_per_arm": min_per_arm,
        "sessions_with": counts[INJECT],
        "sessions_without": counts[HOLDOUT],
        "enough": min(counts.values()) >= min_per_arm,
        "outcomes": _outcome_rows(sessions, min_per_arm),
        "by_project": [{"project": p, **{k: v for k, v in compare(
            [s for s in sessions if str(s["project"]) == p], content, min_per_arm).items()
            if k in ("sessions_with", "sessions_without", "enough", "outcomes")}} for p in projects]
        if len(projects) > 1 else [],
        "lessons": lesson_rows(sessions, content or {}, min_per_arm),
    }


def build(store: Store, project_id: int | None, now: float, min_per_arm: int = MIN_PER_ARM) -> dict[str, Any]:
    """`gather` then `compare`, with the experiments that ran."""
    sessions, content = gather(store, project_id, now)
    return {**compare(sessions, content, min_per_arm), "experiments": store.experiments(),
            "running": store.running_experiment()}
