"""PermissionRequest: when Claude asks to run an `ace` command through Bash, allow the read-only
ones, deny the destructive ones with a reason, and give no opinion on anything else."""

import os
import shlex

READ_ONLY = {
    "search", "status", "patterns", "top", "doctor", "domains", "recall", "export",
    "sessions", "events", "show", "stats", "log", "jobs", "version", "--help", "--version", "-h",
}
READ_ONLY_PAIRS = {("config", "show"), ("cache", "recall")}
DESTRUCTIVE = {"clear", "rm", "gc", "uninstall", "reset"}
# Anything that could chain a second command or redirect output makes the request not ours.
SHELL_META = set(";&|<>`$(){}\n\\*?")


def _ace_argv(command: str) -> list[str] | None:
    """The arguments after `ace` when `command` is exactly one plain ace invocation."""
    if not command or any(ch in SHELL_META for ch in command):
        return None
    try:
        words = shlex.split(command)
    except ValueError:
        return None
    if not words:
        return None
    head = os.path.basename(words[0])
    if head in ("ace", "ace-cli"):
        return words[1:]
    if head.startswith("python") and words[1:3] in (["-m", "ace_engine.cli"], ["-m", "ace_engine"]):
        return words[3:]
    return None


def decide(tool_name, tool_input) -> tuple[str, str] | None:
    """('allow' | 'deny', message) for ace commands; None for anything else."""
    if tool_name != "Bash" or not isinstance(tool_input, dict):
        return None
    command = tool_input.get("command")
    argv = _ace_argv(command.strip()) if isinstance(command, str) else None
    if argv is None:
        return None
    sub = next((w for w in argv if not w.startswith("-") or w in ("--help", "--version", "-h")), None)
    if sub is None:
        return None
    rest = argv[argv.index(sub) + 1 :]
    if sub in DESTRUCTIVE:
        return "deny", (
            f"`ace {sub}` changes or deletes ace-engine data; only the user runs it, from a terminal."
        )
    if sub in READ_ONLY or (rest and (sub, rest[0]) in READ_ONLY_PAIRS):
        if "--fix" in rest:
            return None
        return "allow", f"`ace {sub}` is read-only"
    return None
