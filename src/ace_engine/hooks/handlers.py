"""One handler per hook event: record what happened, answer what the event allows.

Each handler reads the parsed `HookInput` (`hook.input`), decides what its event calls for, and
calls narrow functions for it: `hooks.records` builds the record, `inject` the context to add,
`jobs.queue` the learning jobs. It returns the JSON object to print, or None for no output. The
record is saved first, so capture never depends on injection or learning succeeding.

Cost: stdlib only; each handler opens only what it uses (the store, the config, the project).
"""

from ..core import log
from ..redact.sanitize import short_text
from . import health, inject, records

TYPE_CHECKING = False  # not `typing.TYPE_CHECKING`: the hooks must not import `typing` (~3 ms)
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    from ..core._types import CaptureRecord
    from .engine import Hook

    Answer = dict[str, Any] | None


def context_answer(event: str, context: str | None = None, system_message: str | None = None) -> "Answer":
    """The answer for events that take `additionalContext`; None when there is nothing to say."""
    if not context and not system_message:
        return None
    answer: dict[str, Any] = {}
    if system_message:
        answer["systemMessage"] = system_message
    if context:
        answer["hookSpecificOutput"] = {"hookEventName": event, "additionalContext": context}
    return answer


def _record(hook: "Hook", detail: str | None = None) -> "CaptureRecord":
    record = records.base_record(hook.input, hook.now, hook.project)
    if hook.input.agent != "claude":  # another agent: the store records which agent's session it is
        record["session"]["agent"] = hook.input.agent
    if detail is not None:
        record["detail"] = short_text(detail)  # redacted: a spooled record is clean too
    return record


def _context(hook: "Hook") -> "inject.Context | None":
    """What an injection step needs, once the store is open; None when it could not be."""
    store = hook.store()
    if store is None:
        return None
    return inject.Context(store, hook.cfg, hook.project, hook.session_id, hook.now, hook.event)


def session_start(hook: "Hook") -> "Answer":
    record = _record(hook, hook.input.source)
    hook.save(record)
    deferred = False
    store = hook.store() if hook.store_error is None else None
    if store is not None:
        from ..store import spool

        if spool.pending_files():
            try:  # a small spool now; a large one in a detached replay, outside our budget
                deferred = spool.replay_or_defer(store)[1]
            except Exception as exc:  # noqa: BLE001 — kept in the spool for the next try; the hook goes on
                hook.store_error = f"spool replay failed: {exc}"
    if store is not None and hook.store_error is None:
        _note_first_head(hook, store)
    if hook.store_error is None:
        from .maintenance import maybe_start_gc

        maybe_start_gc(hook.cfg["retention.max_db_mb"])
    notice = health.notice_for(hook.session_id, hook.store_error, deferred=deferred)
    ctx = _context(hook)
    inject.safely(ctx, "anchor check", _check_anchors, injects=False)  # before the digest is chosen
    context = inject.safely(ctx, "session-start injection", inject.session_start, record["detail"])
    notice = notice or inject.safely(ctx, "learning notice", inject.learning_notice, record["detail"], injects=False)
    model = _model_notice(hook)  # said besides the others: it explains why lessons came from offline learning
    experiment = inject.safely(ctx, "experiment notice", _experiment_notice, injects=False)
    notice = "\n".join(part for part in (notice, model, experiment) if part) or None
    return context_answer("SessionStart", context, notice)


# Work the anchor check may do at SessionStart once a file it watches changed (re-reading and
# parsing files); what is left is re-read by the next check.
ANCHOR_CHECK_SECONDS = 0.02


def _check_anchors(ctx: "inject.Context") -> object:
    """Lessons whose anchors changed since the last check: archived (gone), or to re-check (changed:
    with a caveat, or demoted under `inject.recheck` = withhold) before the digest is chosen
    (`playbook/staleness.py`: one read and an lstat per anchor file when nothing changed)."""
    if ctx.project_id is None:
        return None
    import time

    from ..playbook import staleness

    return staleness.check(ctx.store, ctx.project_id, ctx.project.root, ctx.now,
                           deadline=time.perf_counter() + ANCHOR_CHECK_SECONDS,
                           withhold=staleness.withholds(ctx.cfg))


def _experiment_notice(ctx: "inject.Context") -> str | None:
    """Once per experiment not started by `ace experiment start` (which says it itself): that one runs."""
    if not ctx.cfg["inject.holdout"]:
        return None
    from ..experiment.arms import announcement

    return announcement(ctx.store, ctx.cfg, ctx.now)


def _model_notice(hook: "Hook") -> str | None:
    """Once per failure: learning fell back to offline because the model path failed, with the
    provider's own message and the fix (`llm/health.py`; ~2 ms of imports, at SessionStart only)."""
    try:
        if str(hook.cfg["llm.provider"]).strip().lower() in ("", "none", "off", "false", "0"):
            return None
        from ..llm import health as model_health

        return model_health.notice()
    except Exception as exc:  # noqa: BLE001 — advice only: never costs the session start
        log.error(hook.event, f"model-path notice failed: {type(exc).__name__}: {exc}")
        return None


def _note_first_head(hook: "Hook", store: "Any") -> None:
    """Keep the commit this session started on (continuity: its commits are those after it), read
    from git's files, no `git` process; a failure costs only that."""
    try:
        from ..continuity import head

        head.record(store, hook.session_id, hook.project.root)
    except Exception as exc:  # noqa: BLE001 — continuity never costs the session start
        log.error(hook.event, f"recording the session's first HEAD failed: {type(exc).__name__}: {exc}")


def user_prompt_submit(hook: "Hook") -> "Answer":
    prompt = hook.input.prompt
    record = _record(hook)
    record["message"] = records.message("user", prompt, hook.cfg)
    hook.save(record)
    ctx = _context(hook)
    # Feedback first: "that tip helped" means the bullets shown before this prompt.
    inject.safely(ctx, "explicit feedback", _feedback, prompt, injects=False)
    context = inject.safely(ctx, "prompt injection", inject.prompt, prompt)
    return context_answer("UserPromptSubmit", context)


def _feedback(ctx: "inject.Context", prompt: str | None) -> object:
    """"ace: ctx-… was wrong", "that tip helped": explicit marks (3×) on the named or last-shown bullets."""
    from ..playbook.feedback import apply_feedback

    return apply_feedback(ctx.store, ctx.project, ctx.session_id, prompt, ctx.now)


def pre_tool_use(hook: "Hook") -> "Answer":
    inp = hook.input
    hook.save(_record(hook, inp.tool_name))
    context = inject.safely(_context(hook), "domain-shift injection", inject.domain_shift, inp.tool_name,
                            inp.tool_input)
    return context_answer("PreToolUse", context)


def permission_request(hook: "Hook") -> "Answer":
    from .permission import decide

    inp = hook.input
    verdict = decide(inp.tool_name, inp.tool_input, hook.session_id, (hook.cwd, hook.project.root))
    hook.save(_record(hook, f"{verdict[0] if verdict else 'none'}:{inp.tool_name}"))
    if verdict is None:
        return None
    behavior, message = verdict
    decision = {"behavior": behavior}
    if behavior == "deny":
        decision["message"] = message
    return {"hookSpecificOutput": {"hookEventName": "PermissionRequest", "decision": decision}}


def post_tool_use(hook: "Hook") -> "Answer":
    record = _record(hook, hook.input.tool_name)
    try:
        record["tool_event"] = records.tool_event(hook.input, hook.cfg)
    except Exception as exc:  # noqa: BLE001 — fail closed: the call is recorded as dropped, not lost
        log.error(hook.event, f"capture failed, recording the call as dropped: {type(exc).__name__}: {exc}")
        hook.input.dropped = f"capture failed ({type(exc).__name__})"
        record["tool_event"] = records.tool_event(hook.input, hook.cfg)
    hook.save(record)
    return None


def after_tool(hook: "Hook") -> "Answer":
    """Gemini's AfterTool: the capture of PostToolUse, then the lessons PreToolUse would have
    brought for a file in a new domain — Gemini's BeforeTool takes no added context, its AfterTool
    appends it to the tool's result, so they arrive right after the call instead of before it."""
    post_tool_use(hook)
    inp = hook.input
    context = inject.safely(_context(hook), "domain-shift injection", inject.domain_shift, inp.tool_name,
                            inp.tool_input)
    return context_answer("PostToolUse", context)


def pre_compact(hook: "Hook") -> "Answer":
    hook.save(_record(hook, hook.input.trigger))
    inject.safely(_context(hook), "pinning", inject.pin_for_compaction, injects=False)
    return None  # PreCompact takes no additionalContext


def stop(hook: "Hook") -> "Answer":
    inp = hook.input
    if inp.stop_hook_active:
        return None  # Claude is already continuing because of a stop hook: do nothing at all
    record = _record(hook)
    subagent = hook.event == "SubagentStop"
    if subagent and not inp.agent_type:
        # `/compact` runs its summarizer as an untyped subagent: its "final message" is the
        # conversation summary, not work done. Record that it happened, keep no message.
        record["detail"] = "compaction"
        hook.save(record)
        return None
    record["message"] = records.message("assistant", inp.last_assistant_message, hook.cfg)
    hook.save(record)
    # A learning job for this turn — the main agent's, or the finished subagent's under its own id.
    agent_id, agent_type = (inp.agent_id, inp.agent_type) if subagent else (None, None)
    _queue_learning(hook, agent_id=agent_id, agent_type=agent_type)
    return None


def session_end(hook: "Hook") -> "Answer":
    # Claude Code gives all SessionEnd hooks 1.5 s together: record, queue what no job covers yet
    # (e.g. a turn interrupted before Stop; ~1 ms, the worker is detached), and leave.
    hook.save(_record(hook, hook.input.reason))
    _queue_learning(hook, leftovers=True)
    return None


def _queue_learning(hook: "Hook", *, leftovers: bool = False, agent_id: str | None = None,
                    agent_type: str | None = None) -> list[int]:
    """Queue this turn's learning job (of the main agent, or of subagent `agent_id`), or with
    `leftovers` a job per agent for events no job covers yet; make sure a detached worker runs
    them. Never raises: learning must never break a hook."""
    try:
        session_id = hook.session_id
        if not session_id or hook.store_error is not None or not hook.cfg["learning.enabled"]:
            return []
        store = hook.store()
        if store is None:
            return []
        from ..jobs import queue

        attempts = hook.cfg["learning.max_attempts"]
        if leftovers:
            jobs = queue.enqueue_leftovers(store, session_id, hook.event, hook.now, attempts)
        else:
            jobs = queue.enqueue_turn(store, session_id, agent_id, agent_type, hook.event, hook.now, attempts)
        if jobs:
            queue.start_worker(hook.project.key)
        return jobs
    except Exception as exc:  # noqa: BLE001 — learning must never break a hook
        log.error(hook.event, f"queueing the learning job failed: {type(exc).__name__}: {exc}")
        return []


HANDLERS: "dict[str, Callable[[Hook], Answer]]" = {
    "SessionStart": session_start,
    "UserPromptSubmit": user_prompt_submit,
    "PreToolUse": pre_tool_use,
    "PermissionRequest": permission_request,
    "PostToolUse": post_tool_use,
    "PostToolUseFailure": post_tool_use,
    "PreCompact": pre_compact,
    "Stop": stop,
    "SubagentStop": stop,
    "SessionEnd": session_end,
}
