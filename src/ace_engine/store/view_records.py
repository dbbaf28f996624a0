"""The rows of the dashboard's reads (`views_sql.ViewsSQL`, what `ace ui` shows), as types.

Types only, for mypy, like `records.py` (the families' rows): imported under `if TYPE_CHECKING:`,
so nothing here runs. A session page's merged items (`session_items`) stay plain dicts: four kinds
of row in one list, told apart by their `kind`.

Cost: none at run time.
"""

from typing import TypedDict


class LessonFacets(TypedDict):
    """What the lesson filters offer: sections and statuses with their counts, the known domains."""

    sections: dict[str, int]
    statuses: dict[str, int]
    domains: list[str]


class TagMark(TypedDict):
    """A helpful / harmful mark a lesson got in a session (`lesson_injections`' `tags`)."""

    session_id: str
    source: str | None
    reason: str | None
    created_at: float
    tag: str | None
    explicit: bool


class LessonInjection(TypedDict):
    """Where a lesson was shown, and what happened next in that session."""

    id: int
    session_id: str | None
    hook: str
    score: float | None
    rank: int | None
    created_at: float
    session_status: str | None
    session_started: float | None
    project: str | None
    tags: list[TagMark]
    outcomes: list[str]


class ProvenanceCall(TypedDict):
    """A tool call a lesson's provenance names (`tool_events_by_id`); `success` as stored, 0 or 1."""

    id: int
    session_id: str
    tool_name: str
    success: int
    error: str | None
    created_at: float


class SessionBrief(TypedDict):
    """`sessions_by_id()`: a session's status, start and project name."""

    session_id: str
    status: str | None
    started_at: float | None
    project: str | None


class TagDay(TypedDict):
    """Helpful and harmful marks on one local day (`day`: days since the epoch, local time)."""

    day: int
    helpful: int
    harmful: int


class TimelineSession(TypedDict):
    """`sessions_timeline()`: a session with its counts and its first prompt (200 characters)."""

    session_id: str
    status: str | None
    started_at: float | None
    ended_at: float | None
    end_reason: str | None
    compactions: int
    source: str | None
    agent_type: str | None
    agent: str | None  # the coding agent (migration 10); None: Claude Code
    tool_calls: int
    failures: int
    prompts: int
    shown: int
    first_prompt: str | None


class SessionDay(TypedDict):
    """Sessions started on one local day."""

    day: int
    sessions: int


class InjectionDay(TypedDict):
    """Lessons shown on one local day, and in how many sessions."""

    day: int
    shown: int
    sessions: int


class HelpTotals(TypedDict):
    """`help_totals()`: across the playbook, lessons, how many were shown and the marks."""

    lessons: int
    active: int
    used: int
    shown: int
    helpful: int
    harmful: int
    helpful_explicit: int
    harmful_explicit: int


class JobAttention(TypedDict):
    """`jobs_needing_attention()`: a failed, running or queued job, `last_error` cut to 500."""

    id: int
    kind: str
    status: str
    session_id: str | None
    trigger: str | None
    attempts: int
    max_attempts: int
    not_before: float
    last_error: str | None
    created_at: float
    finished_at: float | None
    project: str | None
