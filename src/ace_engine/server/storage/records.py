"""The team store's records: what `TeamDB` takes and returns, named once.

Contract: where a record is sent as JSON its shape is the API's contract, so it is a `TypedDict`
whose keys are the schema's in `server/openapi.py` (`Project` → `ProjectSummary`, `PushResult` →
`DeltaResult`, `ReviewLesson` → `ReviewEntry`, `ReviewResponse` → `Decision`, `Stats` → `Stats`);
the dashboard's rows are TypedDicts too (they are rendered key by key, as dicts). `JSONObject` is a
delta's body as a client sent it (checked against `openapi.DELTA_OPS` by the caller) and as the log
stores it: the one JSON boundary, hence `dict[str, Any]`. `SQLParam` is what a statement binds.

Cost: types only; importing this module runs nothing.
"""

from __future__ import annotations

from typing import Any, SupportsInt, TypedDict

__all__ = ["ClientActivity", "Decision", "DeltaItem", "DeltaResult", "JSONObject", "LessonFields", "LessonPage",
           "LessonState", "LogEntry", "PageRow", "ProjectOverview", "ProjectRow", "ProjectSummary", "PullPage",
           "ReviewEntry", "SQLParam", "SectionCount", "Stats", "StatsDay", "TeamLesson", "TokenListRow", "TokenRow",
           "TopLesson", "VersionRow", "as_int"]

JSONObject = dict[str, Any]  # a delta's body: the client's JSON, and what the log keeps of it
SQLParam = str | int | float | None
DeltaItem = tuple[str, str, str, JSONObject, str]  # (key, op, lesson_id, body, status) of one pushed delta


def as_int(value: SupportsInt | None) -> int:
    """A count from SQL as an int: PostgreSQL's SUM(bigint) is a numeric (Decimal), an empty SUM NULL."""
    return int(value or 0)


class ProjectRow(TypedDict):
    id: int
    org_id: int
    name: str
    last_seq: int


class TokenRow(TypedDict):
    """A token as the server checks it (never its hash)."""

    id: int
    org_id: int
    project_id: int | None
    scope: str
    expires_at: float | None
    revoked_at: float | None
    prefix: str
    label: str | None
    created_at: float
    last_used_at: float | None


class TokenListRow(TokenRow):
    org: str
    project: str | None


class DeltaResult(TypedDict):
    """What one pushed delta did (`PushResult` without its key)."""

    status: str  # applied | duplicate | quarantined | rejected
    seq: int | None
    reason: str | None


class PullPage(TypedDict):
    """A page of the log as the pull route sends it: each delta already JSON text (`TeamDB.pull_page`)."""

    deltas: list[str]
    last_seq: int
    more: bool


class Decision(TypedDict):
    """A reviewer's answer (`ReviewResponse`)."""

    lesson_id: str
    status: str
    seq: int | None


class LessonFields(TypedDict):
    """What a version of a lesson says."""

    content: str
    section: str
    domains: list[str]
    version: int


class TeamLesson(TypedDict):
    """A lesson's row as the delta ops read it (`ops`)."""

    lesson_id: str
    section: str
    content: str
    domains: list[str]
    status: str
    version: int
    concerns: list[str] | None
    held_status: str | None
    held_version: int | None
    client_note: str | None


class ReviewEntry(TypedDict):
    """A lesson waiting for a reviewer (`ReviewLesson`)."""

    lesson_id: str
    content: str
    section: str
    domains: list[str]
    concerns: list[str]
    client_note: str | None
    origin_client: str
    created_at: float
    content_hash: str


class VersionRow(TypedDict):
    version: int
    content: str
    section: str
    domains: list[str]
    client_id: str
    seq: int | None
    created_at: float


class ProjectSummary(TypedDict):
    """`GET /v1/projects/{project}` (`Project`)."""

    project: str
    last_seq: int
    lessons: dict[str, int]  # active, quarantined


class StatsDay(TypedDict):
    day: str  # ISO date, UTC
    created: int
    updated: int
    pruned: int
    quarantined: int


class TopLesson(TypedDict):
    lesson_id: str
    content: str
    helpful: int
    harmful: int


class Stats(TypedDict):
    """`GET …/stats` (`Stats`)."""

    periods: list[StatsDay]
    helpful: int
    harmful: int
    helpful_rate: float | None
    top: list[TopLesson]
    clients: int


class ProjectOverview(TypedDict):
    """A project on the dashboard's overview."""

    id: int
    name: str
    last_seq: int
    created_at: float
    last_change_at: float | None
    lessons: dict[str, int]  # every status -> count
    total: int


class PageRow(TypedDict):
    """A lesson on a page of the dashboard's list."""

    lesson_id: str
    section: str
    content: str
    domains: list[str]
    status: str
    origin_client: str
    version: int
    created_at: float
    updated_at: float
    helpful: int
    harmful: int


class LessonState(PageRow):
    """A lesson's team state (`TeamDB.lesson`): a page row's fields, and its review state, per-client
    counts and every version."""

    concerns: list[str] | None
    client_note: str | None
    content_hash: str
    counts: dict[str, list[int]]  # client_id -> [helpful, harmful]
    versions: list[VersionRow]


class LessonPage(TypedDict):
    rows: list[PageRow]
    total: int


class SectionCount(TypedDict):
    section: str
    n: int


class LogEntry(TypedDict):
    """A logged delta of one lesson, on its dashboard page."""

    seq: int
    op: str
    client_id: str
    created_at: float
    body: JSONObject


class ClientActivity(TypedDict):
    """What one client did in a project (the dashboard's clients page)."""

    client_id: str
    name: str | None
    pushed: int
    applied: int
    held: int
    rejected: int
    first_at: float | None
    last_at: float | None
    helpful: int
    harmful: int
