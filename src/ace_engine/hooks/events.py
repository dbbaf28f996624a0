"""What each hook event may answer and how long it may take.

`budget` is the engine's own hard deadline (seconds); `timeout` is what `ace install` and the
plugin write into Claude Code's settings (seconds), comfortably above the budget so Claude Code
never has to cancel us. All SessionEnd hooks together get 1.5 s from Claude Code.
"""

from ..capture.tools import SHELL_TOOLS, SHIFT_TOOLS

EVENTS: dict[str, dict] = {
    "SessionStart": {"budget": 8.0, "timeout": 15, "context": True},
    "UserPromptSubmit": {"budget": 5.0, "timeout": 10, "context": True},
    "PreToolUse": {"budget": 3.0, "timeout": 5, "context": True},
    "PermissionRequest": {"budget": 3.0, "timeout": 5, "context": False},
    "PostToolUse": {"budget": 5.0, "timeout": 10, "context": True},
    "PostToolUseFailure": {"budget": 5.0, "timeout": 10, "context": True},
    "PreCompact": {"budget": 5.0, "timeout": 10, "context": False},
    "Stop": {"budget": 5.0, "timeout": 10, "context": True},
    "SubagentStop": {"budget": 5.0, "timeout": 10, "context": False},
    "SessionEnd": {"budget": 1.2, "timeout": 2, "context": False},
}

# Matchers written into settings (from the tool table): the other events fire for everything.
MATCHERS: dict[str, str | None] = {
    "PreToolUse": "|".join(SHIFT_TOOLS),  # a file or place that may shift the session's domain
    "PermissionRequest": "|".join(sorted(SHELL_TOOLS)),  # `ace` commands run through a shell
}
