"""The records that cross layers, as types: one place to read what a bullet, a job, a trajectory
or a hook's input holds.

Types only, for mypy: every module imports this under `if TYPE_CHECKING:` (with
`from __future__ import annotations` where the names appear in signatures), so nothing here is
imported at run time and the hooks pay nothing for it. The values themselves stay plain dicts
(rows from SQLite, JSON from Claude Code); these TypedDicts say which keys they carry.

Sections are owned by the layer that produces the record; keep each next to its siblings. One piece, past
400 lines, on purpose: it is the one place a reader looks a cross-layer record up; declarations only, so its
length is the number of records, and it costs nothing at run time.
"""

from typing import Any, Literal, NotRequired, TypedDict

# -- capture (hook input and records) ---------------------------------------------------------------
# The hook input itself is `hooks.hook_input.HookInput` (a `__slots__` class: it validates at run
# time). What follows is the record `hooks.records` builds from it — the one thing a hook hands
# the store (`apply`) or the spool; every string in it is already redacted and capped.


class RecordSession(TypedDict):
    cwd: str | None  # as the payload said, not the resolved working directory
    transcript_path: str | None
    permission_mode: str | None
    agent_type: str | None
    agent: NotRequired[str | None]  # the coding agent whose hook wrote it (codex / gemini); absent: Claude Code


class RecordProject(TypedDict):
    key: str | None
    root: str | None
    remote: str | None
    name: str | None


class ToolEvent(TypedDict):
    """A PostToolUse / PostToolUseFailure call: the `tool_event` part of its record."""

    tool_use_id: str  # Claude Code's, or `ace-noid-…` when the payload had none
    tool_name: str
    input: str | None  # redacted, capped JSON text (or the text itself)
    response: str | None
    success: bool
    exit_code: int | None
    error: str | None
    is_interrupt: bool
    duration_ms: int | float | None


class CapturedMessage(TypedDict):
    role: Literal["user", "assistant"]
    text: str


class CaptureRecord(TypedDict):
    """One hook's record (version `v` 1)."""

    v: int
    at: float
    event: str
    session_id: str | None
    agent_id: str | None
    agent_type: str | None
    detail: str | None  # source / tool name / trigger / reason / permission verdict
    project: RecordProject | None
    session: RecordSession
    tool_event: NotRequired[ToolEvent | None]
    message: NotRequired[CapturedMessage | None]
    duration_ms: NotRequired[float]  # the hook's own run time, set when it is saved


# -- store rows: tool events, sessions --------------------------------------------------------------
# What `store.capture_sql` reads back from the capture tables (SQLite rows as dicts; 0/1 columns
# that mean yes/no come back as bool). A PostgreSQL backend returns the same keys.


class ProjectRow(TypedDict):
    """`list_projects()`; `project_row()` adds `created_at` and `last_seen_at`."""

    id: int
    key: str  # git:<normalized remote> or path:<root>
    root: str
    remote: str | None
    name: str
    created_at: NotRequired[float]
    last_seen_at: NotRequired[float]


class ToolEventRow(TypedDict):
    """One captured tool call (`session_events`, `job_tool_events`, `tool_events_before`)."""

    id: NotRequired[int]  # not in `session_events`
    tool_use_id: str
    tool_name: str
    input: str | None  # redacted, capped JSON text
    response: str | None  # redacted, capped text
    success: bool
    exit_code: int | None
    error: str | None
    is_interrupt: bool
    duration_ms: float | None
    agent_id: NotRequired[str | None]  # None: the main agent (not in `tool_events_before`)
    agent_type: NotRequired[str | None]
    created_at: float


class MessageRow(TypedDict):
    """A prompt (role user) or a turn's final message (role assistant)."""

    id: NotRequired[int]  # job_messages / last_prompt_before
    role: Literal["user", "assistant"]
    text: str
    agent_id: NotRequired[str | None]  # session_events
    created_at: float


class HookEventRow(TypedDict):
    event: str
    detail: str | None  # source / trigger / reason / tool name
    agent_id: str | None
    created_at: float
    duration_ms: float | None


class SessionEvents(TypedDict):
    """`session_events()`: everything captured for one session, in order."""

    hook_events: list[HookEventRow]
    tool_events: list[ToolEventRow]
    messages: list[MessageRow]


class SessionSummary(TypedDict):
    """A row of `list_sessions()`: the session with its project and event counts."""

    session_id: str
    project: str | None
    project_root: str | None
    cwd: str | None
    source: str | None
    status: str  # active / ended
    started_at: float
    ended_at: float | None
    end_reason: str | None
    compactions: int
    transcript_path: str | None
    tool_events: int
    tool_failures: int
    messages: int
    hook_events: int
    agent: NotRequired[str | None]  # the coding agent (migration 10); None: Claude Code


class SessionRow(TypedDict):
    """`session()`: the `sessions` row and its project."""

    session_id: str
    project_id: int | None
    cwd: str | None
    transcript_path: str | None
    agent_type: str | None
    source: str | None  # SessionStart source of the first start
    permission_mode: str | None
    started_at: float
    ended_at: float | None
    end_reason: str | None
    status: str
    compactions: int
    project: str | None
    project_root: str | None
    project_remote: str | None


class StoreCounts(TypedDict):
    sessions: int
    tool_events: int
    messages: int
    hook_events: int
    projects: int


class GcReport(TypedDict):
    """What `gc()` removed (or, dry run, would remove) and the sizes around it."""

    tool_events: int
    messages: int
    hook_events: int
    sessions: int
    kept_running: int
    bytes_before: int
    bytes_after: int
    file_bytes_before: int
    file_bytes_after: int
    target_bytes: int


# -- playbook: bullets and delta operations ---------------------------------------------------------
# A bullet as the store returns it (`domains` a list, `provenance` a dict); search adds its score.
# A delta is what `Playbook.apply` takes: the op and the keyword arguments of that operation
# (`Playbook.add`, `update`, …); `reviewed` is never read from a delta.


class Bullet(TypedDict):
    """A `bullets` row (`get_bullet`, `list_bullets`, …); `Playbook` operations return it updated."""

    id: str  # ctx-…, stable forever
    project_id: int | None  # None: global
    section: str
    content: str
    domains: list[str]
    helpful: int
    harmful: int
    helpful_explicit: int
    harmful_explicit: int
    confidence: float
    status: str  # active / candidate / quarantined / archived (`playbook.STATUSES`)
    provenance: dict[str, Any]  # source, sessions, files, evidence, concerns, merged, imported …
    content_key: str  # normalized content, for exact dedup
    created_at: float
    updated_at: float
    last_used_at: float | None
    retrieval_count: int
    origin: NotRequired[str | None]  # None: learned here; "team": pulled from the project's team server
    agent: NotRequired[str | None]  # the coding agent whose session taught it (claude / codex / gemini…)
    rowid: NotRequired[int]  # the store's row id (FTS join), on rows read back
    bm25: NotRequired[float]  # `fts_candidates`: FTS5 rank (lower is better)
    caveat: NotRequired[str]  # added by the hooks: what changed under it (an anchor to re-check)


class BulletFields(TypedDict, total=False):
    """The columns a delta operation changes (`store.update_bullet`); `{**bullet, **fields}` is the result."""

    section: str
    content: str
    content_key: str
    domains: list[str]
    helpful: int
    harmful: int
    helpful_explicit: int
    harmful_explicit: int
    confidence: float
    status: str
    provenance: dict[str, Any]
    retrieval_count: int
    updated_at: float


class ImportItem(TypedDict):
    """One validated item of an import file (`playbook.transfer.parse`), before the trust rules."""

    index: int  # its position in the file, for messages
    content: str
    section: str
    domains: list[str] | None  # None: derived from the content
    scope: str  # project / global
    status: str
    provenance: dict[str, Any]
    original_id: str | None
    helpful: int
    harmful: int
    helpful_explicit: int
    harmful_explicit: int


class ScoredBullet(Bullet):
    """A bullet `retrieval.search` / `top` returns: its score, the parts and a short `why`."""

    score: float
    score_parts: dict[str, float]
    why: str


class _DeltaMeta(TypedDict):
    """What every delta operation may carry: who made it, why, in which session, and when."""

    source: NotRequired[str]
    reason: NotRequired[str | None]
    session_id: NotRequired[str | None]
    now: NotRequired[float | None]


class AddDelta(_DeltaMeta):
    op: Literal["ADD", "add"]
    content: str
    section: str
    domains: NotRequired[list[str] | str | None]
    scope: NotRequired[Literal["project", "global"]]
    provenance: NotRequired[dict[str, Any] | None]
    helpful: NotRequired[int]
    harmful: NotRequired[int]
    status: NotRequired[str]


class UpdateDelta(_DeltaMeta):
    op: Literal["UPDATE", "update"]
    id: str
    content: NotRequired[str | None]
    section: NotRequired[str | None]
    domains: NotRequired[list[str] | str | None]
    provenance: NotRequired[dict[str, Any] | None]


class TagDelta(_DeltaMeta):
    op: Literal["TAG", "tag"]
    id: str
    tag: Literal["helpful", "harmful", "neutral"]
    explicit: NotRequired[bool]
    count: NotRequired[int]


class MergeDelta(_DeltaMeta):
    op: Literal["MERGE", "merge"]
    keep: str
    other: str
    content: NotRequired[str | None]


class StatusDelta(_DeltaMeta):
    """QUARANTINE, REMOVE (archive) and RESTORE: a status change of one bullet."""

    op: Literal["QUARANTINE", "REMOVE", "RESTORE", "quarantine", "remove", "restore"]
    id: str


Delta = AddDelta | UpdateDelta | TagDelta | MergeDelta | StatusDelta

# -- jobs and learning: trajectories, reflections ---------------------------------------------------
# A trajectory is the ACE plugin's learn payload plus what `observe.trajectory` adds; a payload's
# unknown keys are kept at run time (mypy sees the keys below). A reflection is what a reflector
# returns once `learning.reflector.normalize` has checked its shape.


class JobRow(TypedDict):
    """A `jobs` row as the store returns it, `payload` and `result` decoded from JSON."""

    id: int
    kind: str  # session (captured events) / transcript / payload
    dedup_key: str
    project_id: int | None
    session_id: str | None
    agent_id: str  # '' = the main agent
    agent_type: str | None
    trigger: str | None  # Stop / SubagentStop / SessionEnd / cli
    tool_from: int  # tool_events.id range (from, to]
    tool_to: int
    msg_from: int  # messages.id range (from, to]
    msg_to: int
    tool_events: int
    messages: int
    window_from: float  # which injections belong to the task
    window_to: float
    payload: Any
    status: Literal["queued", "running", "done", "failed", "skipped"]
    attempts: int
    max_attempts: int
    not_before: float
    lease_until: float | None
    worker_pid: int | None
    last_error: str | None
    reason: str | None
    result: Any  # the job's summary (`pipeline.summarize`) once done
    created_at: float
    started_at: float | None
    finished_at: float | None
    project: NotRequired[str | None]  # `list_jobs`: the project's name


class StepChange(TypedDict):
    old: str
    new: str


class TrajectoryStep(TypedDict):
    """One tool call of a trajectory: the plugin's {step, tool, action, result} and the facts mined."""

    step: int  # 1-based position in the task
    tool: str
    action: str
    result: str
    success: bool
    kind: str  # edit / read / test / build / lint / readonly / agent / web / other … (`commands.kind`)
    files: list[str]
    command: str | None
    error: str | None  # the error signature of a failed step
    exit_code: int | None
    duration_ms: float | None
    interrupted: bool
    tool_event_id: int | None
    tool_use_id: NotRequired[str | None]
    at: NotRequired[float | None]
    change: NotRequired[StepChange]  # Edit / MultiEdit: first changed line, before and after
    written: NotRequired[dict[str, Any]]  # an edit's tool input (JSON), for the code-pattern detector; never rendered
    failure: NotRequired[str]  # a failed step: failed / cancelled / refused / tool (`trajectory.failure_class`)
    output: NotRequired[str]  # a failed step's output, capped, for the miners (never rendered whole)
    said: NotRequired[str]  # a refused step: Claude Code's rejection with the words the user typed (only then)
    background: NotRequired[bool]  # a Bash call run in the background: its exit says nothing of the outcome


class TrajectoryResult(TypedDict):
    success: bool | None  # None: nothing says how it went
    output: str
    summary: str


class ProjectInfo(TypedDict, total=False):
    id: int | None
    key: str
    root: str
    name: str


class Trajectory(TypedDict):
    """What the agent did for one task (see `learning.reflector`'s docstring for the whole shape)."""

    task: str
    prompts: list[str]
    trajectory: list[TrajectoryStep]
    result: TrajectoryResult
    playbook_used: list[str]  # bullet ids shown to the agent during the task
    cited: list[str]  # bullet ids the agent named in its messages
    git: dict[str, Any]
    agent_id: str
    files: list[str]  # edited
    files_read: list[str]
    interrupted: bool
    source: str  # session / transcript / payload
    tool_event_ids: list[int]
    session_id: NotRequired[str | None]
    agent_type: NotRequired[str | None]
    continuation: NotRequired[bool]  # no prompt of its own: the task was looked up
    started_at: NotRequired[float | None]
    project: NotRequired[ProjectInfo]
    job_id: NotRequired[int]
    previous: NotRequired[dict[str, Any]]  # {task, commands} of the turn before
    carried: NotRequired[list[TrajectoryStep]]  # failures the turn before ended on (`trajectory.carried`)
    cwd: NotRequired[str | None]  # where the session ran: paths in its commands are relative to it
    history: NotRequired[dict[str, Any]]  # {co_edits, commands} from past sessions
    reflector: NotRequired[str | None]  # which reflector produced the lessons
    # what the agent wrote vs. what came back, per event in order (`observe/origins.py`): the
    # learner's evidence for the origins of a lesson's risky parts; set by the learner, never a payload's
    origin_evidence: NotRequired[list[dict[str, Any]]]
    agent: NotRequired[str | None]  # the coding agent of the session (claude / codex / gemini)
    # turns joined into one task (`observe/tasks.join`): where each starts {first, prompts, task}
    turns: NotRequired[list[dict[str, Any]]]


class Candidate(TypedDict):
    """A lesson a reflector proposes; the curator decides what becomes of it."""

    content: str
    section: str
    evidence: str
    domains: NotRequired[list[str]]
    confidence: NotRequired[float]
    source_steps: NotRequired[list[int]]
    files: NotRequired[list[str]]
    kind: NotRequired[str]  # which heuristic found it
    agrees: NotRequired[bool]  # a model's lesson that confirms or rewrites an offline candidate of the same steps
    basis: NotRequired[str]  # a model's lesson: what shows it (one of `llm_prompt_text.BASES`)
    recurs: NotRequired[str]  # a model's lesson: how often it will matter (often, sometimes, rarely)
    scope: NotRequired[str]  # a model's lesson: who needs it next (repository, code, task)


class BulletTag(TypedDict):
    bullet_id: str
    tag: Literal["helpful", "harmful", "neutral"]
    reason: str


class Reflection(TypedDict):
    candidates: list[Candidate]
    tags: list[BulletTag]
    analysis: NotRequired[dict[str, str]]  # the LLM reflector's reasoning, error identification, root cause
    usage: NotRequired[dict[str, Any]]  # the LLM reflector's token and call counts
    reflector: NotRequired[str]


__all__: list[str] = []
_ = (Any, Literal, NotRequired, TypedDict)  # used by the sections as they fill in
