"""Claude Code: the agent every other one is adapted to. Its events are ours, its tools are
`capture.tools.TOOLS`, its answers pass as the handlers give them (`hooks.events.EVENTS` holds each
event's budget, timeout and whether it takes context). Its hooks run as `launch.py EVENT` and are
installed by `ace install` itself (`integrations.claude_settings`, or the plugin), not by an
`installer` of this row; its transcripts are read by `observe.transcript`, the reader of last resort.

Cost: stdlib only; a dict.
"""

from .base import Agent

_EVENTS = ("SessionStart", "UserPromptSubmit", "PreToolUse", "PermissionRequest", "PostToolUse",
           "PostToolUseFailure", "PreCompact", "Stop", "SubagentStop", "SessionEnd")

AGENT = Agent(
    "claude",
    events={e: e for e in _EVENTS},
    context_events=frozenset({"SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse",
                              "PostToolUseFailure", "Stop"}),
    readers=("transcript",),
    scopes=("project", "user", "local"),
)
