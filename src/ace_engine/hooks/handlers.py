"""One handler per hook event: record what happened, answer what the event allows.

Each handler returns the JSON object to print, or None for no output. The record is saved first,
so capture never depends on injection (`inject`) or learning succeeding.
"""

from ..capture import records
from . import health, inject


def context_answer(event: str, context: str | None = None, system_message: str | None = None):
    """The answer for events that take `additionalContext`; None when there is nothing to say."""
    if not context and not system_message:
        return None
    answer: dict = {}
    if system_message:
        answer["systemMessage"] = system_message
    if context:
        answer["hookSpecificOutput"] = {"hookEventName": event, "additionalContext": context}
    return answer


def _record(hook, detail=None) -> dict:
    record = records.base_record(hook.event, hook.payload, hook.now, hook.project)
    if isinstance(detail, str):
        record["detail"] = records.short_text(detail)  # redacted: a spooled record is clean too
    return record


def session_start(hook):
    record = _record(hook, hook.payload.get("source"))
    hook.save(record)
    deferred = False
    if hook.store_error is None:
        from ..store import spool

        if spool.pending_files():
            try:  # a small spool now; a large one in a detached replay, outside our budget
                deferred = spool.replay_or_defer(hook.store())[1]
            except Exception as exc:  # kept in the spool for the next try
                hook.store_error = f"spool replay failed: {exc}"
    if hook.store_error is None:
        from .maintenance import maybe_start_gc

        maybe_start_gc(hook.cfg["retention.max_db_mb"])
    notice = health.notice_for(hook.session_id, hook.store_error, deferred=deferred)
    context = inject.safely(hook, "session-start injection", inject.session_start, record["detail"])
    return context_answer("SessionStart", context, notice)


def user_prompt_submit(hook):
    record = _record(hook)
    record["message"] = records.message("user", hook.payload.get("prompt"), hook.cfg)
    hook.save(record)
    # Feedback first: "that tip helped" means the bullets shown before this prompt.
    inject.safely(hook, "explicit feedback", _feedback, hook.payload.get("prompt"), injects=False)
    context = inject.safely(hook, "prompt injection", inject.prompt, hook.payload.get("prompt"))
    return context_answer("UserPromptSubmit", context)


def _feedback(hook, prompt):
    """"ace: ctx-… was wrong", "that tip helped": explicit marks (3×) on the named or last-shown bullets."""
    from ..playbook.feedback import apply_feedback

    return apply_feedback(hook.store(), hook.project, hook.session_id, prompt, hook.now)


def pre_tool_use(hook):
    hook.save(_record(hook, hook.payload.get("tool_name")))
    context = inject.safely(hook, "domain-shift injection", inject.domain_shift)
    return context_answer("PreToolUse", context)


def permission_request(hook):
    from .permission import decide

    verdict = decide(hook.payload.get("tool_name"), hook.payload.get("tool_input"), hook.session_id,
                     (hook.cwd, hook.project.root))
    hook.save(_record(hook, f"{verdict[0] if verdict else 'none'}:{hook.payload.get('tool_name')}"))
    if verdict is None:
        return None
    behavior, message = verdict
    decision = {"behavior": behavior}
    if behavior == "deny":
        decision["message"] = message
    return {"hookSpecificOutput": {"hookEventName": "PermissionRequest", "decision": decision}}


def post_tool_use(hook):
    record = _record(hook, hook.payload.get("tool_name"))
    record["tool_event"] = records.tool_event(hook.event, hook.payload, hook.cfg)
    hook.save(record)
    return None


def pre_compact(hook):
    hook.save(_record(hook, hook.payload.get("trigger")))
    inject.safely(hook, "pinning", inject.pin_for_compaction, injects=False)
    return None  # PreCompact takes no additionalContext


def stop(hook):
    if hook.payload.get("stop_hook_active") is True:
        return None  # Claude is already continuing because of a stop hook: do nothing at all
    record = _record(hook)
    if hook.event == "SubagentStop" and not hook.payload.get("agent_type"):
        # `/compact` runs its summarizer as an untyped subagent: its "final message" is the
        # conversation summary, not work done. Record that it happened, keep no message.
        record["detail"] = "compaction"
        hook.save(record)
        return None
    record["message"] = records.message(
        "assistant", hook.payload.get("last_assistant_message"), hook.cfg
    )
    hook.save(record)
    from ..jobs.queue import enqueue_from_hook  # a learning job for this turn; detached worker

    enqueue_from_hook(hook)
    return None


def session_end(hook):
    # Claude Code gives all SessionEnd hooks 1.5 s together: record, queue what no job covers yet
    # (e.g. a turn interrupted before Stop; ~1 ms, the worker is detached), and leave.
    hook.save(_record(hook, hook.payload.get("reason")))
    from ..jobs.queue import enqueue_from_hook

    enqueue_from_hook(hook)
    return None


HANDLERS = {
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
