"""The agents other than Claude Code at the hook boundary: their payloads in, their answers out.

A hook installed for another agent runs `launch.py AGENT EVENT` with the agent's own event name
(`codex PostToolUse`, `gemini AfterTool`). The engine asks `event_for` which of our events it is
handled as, `adapt` turns the agent's payload into the payload Claude Code would have sent for
it, so `HookInput.parse`, capture, redaction, learning, injection and continuity run unchanged, and
`answer` rewrites the handler's Claude-shaped answer into the shape the agent accepts for that
event, or None. What each agent sends and accepts is its module's (`agents.registry.get`): this
file only dispatches, and does not change when an agent is added.

Cost: imported only by a hook started for one of these agents; stdlib only; that agent's module
alone is imported.
"""

from ..agents.registry import find

TYPE_CHECKING = False  # not `typing.TYPE_CHECKING`: the hooks must not import `typing`
if TYPE_CHECKING:
    from typing import Any


def event_for(agent: str, native: str) -> str:
    """Our event for the agent's `native` event; "" when we do not handle it."""
    found = find(agent)
    return found.event_for(native) if found is not None else ""


def adapt(agent: str, native: str, event: str, payload: "dict[str, Any]") -> "tuple[str, dict[str, Any]]":
    """(our event, a Claude-Code-shaped payload) for the agent's `payload` of `native`."""
    found = find(agent)
    return found.adapt(native, event, payload) if found is not None else (event, payload)


def answer(agent: str, native: str, obj: "dict[str, Any] | None") -> "dict[str, Any] | None":
    """The handler's answer as the agent accepts it for `native`; None when nothing is left."""
    found = find(agent)
    return found.answer(native, obj) if found is not None else None


def handler_name(agent: str, native: str) -> str:
    """The `hooks.handlers` function the agent's `native` event runs, when not its event's own ("")."""
    found = find(agent)
    return found.handlers.get(native, "") if found is not None else ""


def empty_answer(agent: str) -> str:
    """What the agent's hook prints when there is nothing to answer ("" = nothing)."""
    found = find(agent)
    return found.empty_answer if found is not None else ""
