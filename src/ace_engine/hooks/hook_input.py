"""The hook payload, parsed once: `HookInput` holds every field ace-engine reads, typed and checked.

Claude Code sends a JSON object on stdin whose keys depend on the event; a malformed or hostile
payload may put any JSON value anywhere. `HookInput.parse` is the only code that looks into the
raw dict: after it, the handlers, capture, injection and the job queue read attributes whose types
hold (a string field is a non-empty `str` or None; flags are `bool`). The values are not yet
safe to store: `hooks.records` repairs, redacts and caps every string it writes.

Rules: a string field that is missing, not a string or empty is None. `tool_input`,
`tool_response` and `error` keep whatever JSON value came (capture records them as given).
`is_interrupt` is the value's truth; `stop_hook_active` is true only for JSON `true`.
`duration_ms` is a number (not a bool) or None.

Cost: one pass over a fixed list of keys; stdlib only, no `typing` at run time.
"""

TYPE_CHECKING = False  # not `typing.TYPE_CHECKING`: the hooks must not import `typing` (~3 ms)
if TYPE_CHECKING:
    from typing import Any


def _text(payload: "dict[str, Any]", key: str) -> str | None:
    value = payload.get(key)
    return value if isinstance(value, str) and value else None


class HookInput:
    """One hook's payload. `event` is the event this process was started for (argv), which wins
    over the payload's own `hook_event_name` (kept only to warn when they differ)."""

    __slots__ = ("event", "session_id", "cwd", "transcript_path", "hook_event_name", "permission_mode", "source",
                 "prompt", "tool_name", "tool_use_id", "agent_id", "agent_type", "last_assistant_message", "trigger",
                 "reason", "tool_input", "tool_response", "error", "is_interrupt", "duration_ms", "stop_hook_active",
                 "agent", "dropped")

    def __init__(self, event: str, *, session_id: str | None = None, cwd: str | None = None,
                 transcript_path: str | None = None, hook_event_name: str | None = None,
                 permission_mode: str | None = None, source: str | None = None, prompt: str | None = None,
                 tool_name: str | None = None, tool_use_id: str | None = None, agent_id: str | None = None,
                 agent_type: str | None = None, last_assistant_message: str | None = None,
                 trigger: str | None = None, reason: str | None = None, tool_input: "Any" = None,
                 tool_response: "Any" = None, error: "Any" = None, is_interrupt: bool = False,
                 duration_ms: "int | float | None" = None, stop_hook_active: bool = False):
        self.event = event
        self.session_id = session_id  # Claude Code's conversation id
        self.cwd = cwd  # as given; `engine.resolve_cwd` finds the directory to use
        self.transcript_path = transcript_path
        self.hook_event_name = hook_event_name
        self.permission_mode = permission_mode
        self.source = source  # SessionStart: startup / resume / clear / compact
        self.prompt = prompt  # UserPromptSubmit
        self.tool_name = tool_name  # tool events and PermissionRequest
        self.tool_use_id = tool_use_id
        self.agent_id = agent_id  # set when a subagent did it
        self.agent_type = agent_type
        self.last_assistant_message = last_assistant_message  # Stop / SubagentStop
        self.trigger = trigger  # PreCompact: manual / auto
        self.reason = reason  # SessionEnd
        self.tool_input = tool_input  # a JSON value: a dict from Claude Code, anything from a fuzzer
        self.tool_response = tool_response
        self.error = error  # PostToolUseFailure
        self.is_interrupt = is_interrupt
        self.duration_ms = duration_ms
        self.stop_hook_active = stop_hook_active  # Claude already continues because of a Stop hook
        # Which agent sent it: a store name of `agents.registry` (set by the engine from argv, never
        # from the payload); the payload itself has already been adapted to Claude Code's shape.
        self.agent = "claude"
        # Why this call's record cannot be kept whole (the payload was over the stdin cap, the budget
        # ran out), set by the engine: capture then records the drop itself (`records.tool_event`).
        self.dropped: str | None = None

    @classmethod
    def parse(cls, event: str, payload: "dict[str, Any]") -> "HookInput":
        """The input of `event` from its decoded payload (any dict: unknown keys are ignored)."""
        duration = payload.get("duration_ms")
        return cls(
            event,
            session_id=_text(payload, "session_id"),
            cwd=_text(payload, "cwd"),
            transcript_path=_text(payload, "transcript_path"),
            hook_event_name=_text(payload, "hook_event_name"),
            permission_mode=_text(payload, "permission_mode"),
            source=_text(payload, "source"),
            prompt=_text(payload, "prompt"),
            tool_name=_text(payload, "tool_name"),
            tool_use_id=_text(payload, "tool_use_id"),
            agent_id=_text(payload, "agent_id"),
            agent_type=_text(payload, "agent_type"),
            last_assistant_message=_text(payload, "last_assistant_message"),
            trigger=_text(payload, "trigger"),
            reason=_text(payload, "reason"),
            tool_input=payload.get("tool_input"),
            tool_response=payload.get("tool_response"),
            error=payload.get("error"),
            is_interrupt=bool(payload.get("is_interrupt")),
            duration_ms=duration if isinstance(duration, (int, float)) and not isinstance(duration, bool) else None,
            stop_hook_active=payload.get("stop_hook_active") is True,
        )

    def __repr__(self) -> str:
        return f"HookInput({self.event!r}, session_id={self.session_id!r}, tool_name={self.tool_name!r})"
