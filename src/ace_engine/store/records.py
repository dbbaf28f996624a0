"""The rows the local store's families hand back, as types: what a change, an injection, a summary,
a learning run or a history hit holds.

Types only, for mypy (like `core/_types.py`, whose records cross more layers: bullets, jobs, events,
trajectories): imported under `if TYPE_CHECKING:` so nothing here runs and the hooks pay nothing.
The values stay the dicts `StoreBase._rows` builds; a TypedDict names their keys. `dict[str, Any]`
is left only where a column holds JSON whose shape is its writer's contract (a change's `detail`,
a summary's `summary`, a run's `detail`).

Cost: none at run time.
"""

from typing import Any, NotRequired, TypedDict

from ..core._types import MessageRow, SessionSummary, ToolEventRow

JSONObject = dict[str, Any]  # a JSON column decoded: its shape is the writer's contract, not the store's


# -- lessons (playbook_sql) ---------------------------------------------------------------------------


class ChangeRow(TypedDict):
    """A `bullet_changes` row (`changes()`), `detail` decoded."""

    id: int
    bullet_id: str
    op: str  # ADD / UPDATE / TAG / REMOVE / MERGE / RESTORE / STATUS
    detail: JSONObject | None
    reason: str | None
    source: str | None  # user / learning / import / bootstrap / feedback / team
    session_id: str | None
    created_at: float


class InjectionRow(TypedDict):
    """A lesson shown to a session (`injected()`)."""

    hook: str
    bullet_id: str
    score: float | None
    rank: int | None
    created_at: float


class PinRow(TypedDict):
    """A lesson pinned to a session until `expires_at` (`pins()`)."""

    bullet_id: str
    pinned_at: float
    expires_at: float


class SituationRow(TypedDict):
    """A moment a lesson serves, kept as one of its search keys (`situations()`)."""

    id: int
    bullet_id: str
    kind: str  # prompt / error / command / file
    text: str
    session_id: str | None
    seen: int
    created_at: float
    last_seen_at: float


# -- jobs and the history the heuristics mine (jobs_sql) ---------------------------------------------


class RunCounts(TypedDict):
    """What learning did to the playbook: per task (`LearningRunRow`) or summed (`LearningTotals`)."""

    created: int
    updated: int
    merged: int
    pruned: int
    quarantined: int
    rejected: int
    helpful: int
    harmful: int


class RunRow(RunCounts):
    """A `learning_runs` row: one learned task's figures, `detail` decoded (`session_runs()`)."""

    id: int
    job_id: int | None
    project_id: int | None
    session_id: str | None
    agent_id: str | None
    source: str  # session / transcript / payload
    reflector: str | None
    task: str | None
    outcome: str | None
    learned: bool
    gate_reason: str | None
    steps: int
    candidates: int
    average_confidence: float | None
    duration_ms: float | None
    detail: JSONObject | None
    created_at: float


class LearningRunRow(RunRow):
    """`learning_runs()`, `learning_run_page()`: a run and its project's name."""

    project: str | None


class LearningTotals(RunCounts):
    """`learning_totals()`: the runs' sums (and two averages, None without runs)."""

    tasks: int
    learned: int
    average_confidence: float | None
    average_ms: float | None


class CommandRun(TypedDict):
    """One command's runs in a learned task (`record_command_runs()`), its normalized form as `command`."""

    command: str
    kind: str | None
    runs: int
    failures: int
    error: str | None


class CoEdit(TypedDict):
    """Two files edited together in `sessions` other sessions (`co_edit_counts()`)."""

    a: str
    b: str
    sessions: int


# -- the team sync's client side (sync_sql) ----------------------------------------------------------


class SyncState(TypedDict):
    """A project's `sync_state` row: the cursors and the last exchange with the team server."""

    project_id: int
    remote: str | None
    push_cursor: int
    pull_cursor: int
    last_error: str | None
    pushed_at: float | None
    pulled_at: float | None
    updated_at: float | None


class SyncFields(TypedDict, total=False):
    """What `set_sync_state()` may change of a project's row (the others keep their value)."""

    remote: str | None
    push_cursor: int
    pull_cursor: int
    last_error: str | None
    pushed_at: float | None
    pulled_at: float | None


class OutboxChange(TypedDict):
    """`changes_after()`: a change to push (`detail` decoded) and its lesson as it is now."""

    id: int
    bullet_id: str
    op: str
    detail: JSONObject | None
    reason: str | None
    source: str | None
    created_at: float
    status: str
    origin: str | None
    content: str
    section: str
    domains: list[str]
    helpful: int
    harmful: int
    helpful_explicit: int
    harmful_explicit: int


# -- continuity (continuity_sql) ---------------------------------------------------------------------


class SummaryInput(TypedDict):
    """What `put_session_summary()` writes (`continuity.update.row_for` builds it)."""

    session_id: str
    project_id: int | None
    version: int
    kind: str  # offline / llm
    summary: JSONObject
    text: str
    branch: str | None
    open_ends: int
    carry: bool
    last_at: float
    agent: NotRequired[str | None]  # which coding agent the session ran in (migration 10); else the session's


class SummaryRow(SummaryInput):
    """A `session_summaries` row, `summary` decoded (a dict; `{}` for a damaged one)."""

    created_at: float
    updated_at: float


class CarriedSummary(TypedDict):
    """`recent_summaries()`: the plain columns SessionStart reads (no JSON to decode on a hook)."""

    session_id: str
    branch: str | None
    open_ends: int
    last_at: float
    text: str
    kind: str


class ContinuityEvents(TypedDict):
    """`continuity_events()`: what a session's summary is made of, in capture order."""

    tool_events: list[ToolEventRow]
    messages: list[MessageRow]


# -- the captured history as `ace mcp` and `ace statusline` ask about it (history_sql) ---------------


class ToolHit(TypedDict):
    """A tool call a history search found (`tool_events_matching`, `tool_events_after`)."""

    id: int
    session_id: str
    agent_id: str | None
    tool_use_id: str
    tool_name: str
    input: str | None
    response: str | None
    success: bool
    exit_code: int | None
    error: str | None
    is_interrupt: bool
    duration_ms: float | None
    created_at: float


class MessageHit(TypedDict):
    """A prompt or final message a history search found (`messages_matching`)."""

    id: int
    session_id: str
    agent_id: str | None
    role: str
    text: str
    created_at: float


class SessionHead(TypedDict):
    """`session_heads()`: when a session started, its status and its first prompt (200 characters)."""

    session_id: str
    started_at: float | None
    ended_at: float | None
    status: str | None
    first_prompt: str | None


class CommandStatsHit(TypedDict):
    """`command_stats_like()`: a `command_stats` row without its project, `last_error` cut to 500
    (the heuristics' `command_history` reads `CommandStats`, the whole row)."""

    command: str
    kind: str | None
    runs: int
    failures: int
    sessions_failed: int
    last_error: str | None
    last_session: str | None
    last_ok_at: float | None
    last_fail_at: float | None


class CommandStats(CommandStatsHit):
    """A `command_stats` row: how a normalized command fared in the project so far."""

    project_id: int


class ProjectSession(SessionSummary):
    """`project_sessions()`: a captured session (`origin` "captured"), or one known only from a
    learned transcript (`origin` "transcript", its counts from its summary)."""

    origin: str


class TranscriptSessionHit(TypedDict):
    """`transcript_sessions_matching()`: a session known only from a learned transcript."""

    session_id: str
    text: str
    last_at: float


class ExperimentRow(TypedDict):
    """An experiment (`ace experiment start`): the share held out; `stopped_at` None while it runs."""

    id: int
    share: float
    started_at: float
    stopped_at: float | None
    announced_at: float | None


class ArmRow(TypedDict):
    """The arm a session was given (`holdout`: no injection; `inject`: as usual), once."""

    session_id: str
    experiment_id: int
    project_id: int | None
    arm: str
    assigned_at: float
    hook: str | None


class ArmSession(TypedDict):
    """`arm_sessions()`: a session with its arm, its start, its project and its experiment's start."""

    session_id: str
    experiment_id: int
    arm: str
    assigned_at: float
    hook: str | None
    started_at: float
    project_id: int | None
    project: str | None
    experiment_started_at: float


class AnchorRow(TypedDict):
    """One thing a lesson rests on (`lesson_anchors`): what it is, where, its fingerprint and state."""

    bullet_id: str
    project_id: int | None
    kind: str  # file / symbol / script / make / just / mix / ci / dep / config / flag / command
    name: str
    file: str  # project-relative; '' for a command
    value: str | None
    state: str  # ok / gone / changed / unchecked
    detail: str | None
    created_at: float
    checked_at: float | None
    status: NotRequired[str]  # the lesson's status, on the reads that join it

