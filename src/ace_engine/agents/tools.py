"""Another agent's tool call as the Claude Code tool that does the same thing.

Each call becomes the tool of `capture.tools.TOOLS` it matches, its input renamed field by field
through the agent's own table (`Agent.tools`: their tool name → (our tool, {our field: their
field})), so everything downstream reads one shape. `canonical_call` serves transcripts,
`to_canonical` hook payloads (nothing of the call lost); `command_text` makes an argv list one line.

Cost: stdlib only, no `typing` at run time; the agent's module is imported on first use.
"""

from ..capture.tools import TOOLS
from .registry import find

TYPE_CHECKING = False  # not `typing.TYPE_CHECKING`: the hooks must not import `typing`
if TYPE_CHECKING:
    from typing import Any

# Older field names, tried when the current one is missing (Gemini renamed `absolute_path` and `path`).
_FORMER_FIELDS = {"file_path": ("absolute_path", "path"), "dir_path": ("path",)}
_SHELLS = ("bash", "sh", "zsh", "/bin/bash", "/bin/sh", "/bin/zsh", "/usr/bin/bash", "/usr/bin/zsh")


def tool_map(agent: str) -> "dict[str, tuple[str, dict[str, str]]]":
    """The agent's tool table ({} for an agent not in the registry, or Claude Code)."""
    found = find(agent)
    return found.tools if found is not None else {}


def command_text(value: object) -> str | None:
    """A shell command as one line: Codex's argv lists (`["bash", "-lc", "pytest -q"]`) give the
    script they run; any other list is joined shell-quoted."""
    if isinstance(value, str):
        return value
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value) or not value:
        return None
    if len(value) == 3 and value[0] in _SHELLS and value[1] in ("-lc", "-c"):
        return value[2]
    import shlex  # only when a list comes: the hooks never pay for it

    return shlex.join(value)


def canonical_call(agent: str, name: str, tool_input: object) -> "tuple[str, dict[str, Any]]":
    """(our tool name, its input) for a call of `agent`'s tool `name`: a known tool becomes ours,
    its fields renamed (a command list made one line); any other keeps its name, prefixed with
    the agent (`codex:update_plan`) so it is never mistaken for ours, and its input as given."""
    given: dict[str, Any] = tool_input if isinstance(tool_input, dict) else {}
    known = tool_map(agent).get(name)
    if known is None:
        return (name if name.startswith("mcp__") else f"{agent}:{name}"), dict(given)
    ours, fields = known
    out: dict[str, Any] = {}
    for our_field, their_field in fields.items():
        value = given.get(their_field)
        for former in _FORMER_FIELDS.get(their_field, ()) if value is None else ():
            value = given.get(former)
            if value is not None:
                break
        if value is not None:
            out[our_field] = command_text(value) if our_field == "command" else value
    return ours, out


def to_canonical(agent: str, tool_name: object, tool_input: object) -> "tuple[object, object]":
    """(name, input) of an agent's tool call in a hook payload, as the Claude Code tool it matches.

    Unlike `canonical_call` (transcripts), a name that already is ours (Codex's hooks report its
    shell as `Bash`) or that the table does not know passes unchanged, and the fields the table
    does not rename are kept beside the renamed ones, with the agent's own name as `_agent_tool`.
    A patch tool (`Agent.patch_tools`: Codex's `apply_patch`) becomes the edit it makes
    (`capture.patch.patch_call`)."""
    if not isinstance(tool_name, str) or tool_name in TOOLS:
        return tool_name, tool_input
    found = find(agent)
    if found is not None and tool_name in found.patch_tools:
        from ..capture.patch import patch_call

        return patch_call(tool_input)
    known = found.tools.get(tool_name) if found is not None else None
    if known is None or not isinstance(tool_input, dict):
        return tool_name, tool_input
    ours, renamed = canonical_call(agent, tool_name, tool_input)
    read = {f for theirs in known[1].values() for f in (theirs, *_FORMER_FIELDS.get(theirs, ()))}
    kept = {k: v for k, v in tool_input.items() if k not in read}
    return ours, {**kept, **renamed, "_agent_tool": tool_name}
