"""Claude Code's tools and the fields of their input: the one table every layer reads.

Which tool names a file (and in which field), which runs a shell command, which writes content:
capture, the hooks (domain shift, permission, the PreToolUse matcher) and learning (trajectory
steps, code patterns, heuristics) all ask here instead of keeping their own copy. A tool missing
from the table is simply "other": nothing breaks when Claude Code adds one.

Cost: stdlib only, no `typing` at run time; importing it builds one small dict (hooks import it).
"""

TYPE_CHECKING = False  # not `typing.TYPE_CHECKING`: the hooks must not import `typing`
if TYPE_CHECKING:
    from typing import Any


class Tool:
    """One tool: its `kind` and the names of the input fields that carry the facts we read.

    `kind`: shell / read / edit / agent / web. `path`: the field naming the file or place the call
    works on (Glob's is its pattern). `command`: the shell command. `content`: what an edit writes
    (Edit: `new_string`, with `old` = `old_string`; MultiEdit: its `edits` list). `query`: what a
    search or fetch looks for."""

    __slots__ = ("name", "kind", "path", "command", "content", "old", "query")

    def __init__(self, name: str, kind: str, *, path: str | None = None, command: str | None = None,
                 content: str | None = None, old: str | None = None, query: str | None = None):
        self.name = name
        self.kind = kind
        self.path = path
        self.command = command
        self.content = content
        self.old = old
        self.query = query


TOOLS: dict[str, Tool] = {t.name: t for t in (
    Tool("Bash", "shell", command="command"),
    # The order of these seven is the PreToolUse matcher's (`SHIFT_TOOLS`).
    Tool("Read", "read", path="file_path"),
    Tool("Glob", "read", path="pattern"),
    Tool("Grep", "read", path="path", query="pattern"),
    Tool("Edit", "edit", path="file_path", content="new_string", old="old_string"),
    Tool("Write", "edit", path="file_path", content="content"),
    Tool("MultiEdit", "edit", path="file_path", content="edits"),
    Tool("NotebookEdit", "edit", path="notebook_path", content="new_source"),
    Tool("LS", "read", path="path"),
    Tool("NotebookRead", "read", path="notebook_path"),  # older Claude Code versions
    Tool("Task", "agent", query="description"),
    Tool("Agent", "agent", query="description"),
    Tool("WebFetch", "web", query="url"),
    Tool("WebSearch", "web", query="query"),
)}


def _kind(kind: str) -> frozenset[str]:
    return frozenset(name for name, tool in TOOLS.items() if tool.kind == kind)


SHELL_TOOLS = _kind("shell")
READ_TOOLS = _kind("read")
EDIT_TOOLS = _kind("edit")
AGENT_TOOLS = _kind("agent")
WEB_TOOLS = _kind("web")
# Tools that act on one named file: a trajectory step lists it, a repeated failure names it.
FILE_TOOLS = EDIT_TOOLS | {"Read"}
# PreToolUse fires for these (the matcher written into settings): each names a file or place whose
# domain may differ from the session's current one (`hooks.inject.domain_shift`).
SHIFT_TOOLS = ("Read", "Glob", "Grep", "Edit", "Write", "MultiEdit", "NotebookEdit")


def _field(tool_name: object, tool_input: object, which: str) -> str | None:
    tool = TOOLS.get(tool_name) if isinstance(tool_name, str) else None
    name = getattr(tool, which) if tool is not None else None
    if name is None or not isinstance(tool_input, dict):
        return None
    value: Any = tool_input.get(name)
    return value if isinstance(value, str) and value else None


def path_of(tool_name: object, tool_input: object) -> str | None:
    """The file or place a call of `tool_name` works on, when its input names one."""
    return _field(tool_name, tool_input, "path")


def edit_pairs(tool_name: object, tool_input: object) -> list[tuple[str, str]]:
    """(old text, new text) of each change an edit call makes: one for Edit, one per entry of
    MultiEdit's `edits`, ("", what it writes) for Write and NotebookEdit. A change with neither side
    as text is left out; a missing side is ""."""
    tool = TOOLS.get(tool_name) if isinstance(tool_name, str) else None
    if tool is None or tool.kind != "edit" or not isinstance(tool_input, dict):
        return []
    if tool.content == "edits":  # MultiEdit: a list of Edit-shaped changes
        listed = tool_input.get("edits")
        items = [e for e in listed if isinstance(e, dict)] if isinstance(listed, list) else []
        old_field, new_field = TOOLS["Edit"].old, TOOLS["Edit"].content
    else:
        items, old_field, new_field = [tool_input], tool.old, tool.content
    pairs = []
    for item in items:
        old = item.get(old_field) if old_field else None
        new = item.get(new_field) if new_field else None
        if isinstance(old, str) or isinstance(new, str):
            pairs.append((old if isinstance(old, str) else "", new if isinstance(new, str) else ""))
    return pairs


def command_of(tool_name: object, tool_input: object) -> str | None:
    """The shell command a call of `tool_name` runs, when it is a shell tool with a command."""
    return _field(tool_name, tool_input, "command")


# -- Codex CLI's and Gemini CLI's tools (issue 25) ------------------------------------------------------
# Read from their sessions (`ace learn --transcript`), each call becomes the Claude Code tool above
# that does the same thing, its input renamed field by field, so everything downstream reads one
# shape. Names and fields from their source: Codex `codex-rs/core/src/tools/spec.rs` (shell's
# `command` is an argv list; `shell_command` a string; unified exec's `exec_command` a `cmd`),
# Gemini `packages/core/src/tools/definitions/base-declarations.ts`. `apply_patch` (Codex) is no
# single tool here: `capture.patch.edits` splits it into Edit / Write calls per file.
# agent → their tool name → (our tool, {our field: their field}).
AGENT_TOOL_MAP: dict[str, dict[str, tuple[str, dict[str, str]]]] = {
    "codex": {
        "shell": ("Bash", {"command": "command"}),
        "container.exec": ("Bash", {"command": "command"}),
        "local_shell": ("Bash", {"command": "command"}),
        "shell_command": ("Bash", {"command": "command"}),
        "exec_command": ("Bash", {"command": "cmd"}),
        "read_file": ("Read", {"file_path": "file_path"}),
        "list_dir": ("LS", {"path": "dir_path"}),
        "grep_files": ("Grep", {"pattern": "pattern", "path": "path"}),
        "view_image": ("Read", {"file_path": "path"}),
        "web_search": ("WebSearch", {"query": "query"}),
    },
    "gemini": {
        "run_shell_command": ("Bash", {"command": "command", "description": "description"}),
        "read_file": ("Read", {"file_path": "file_path"}),
        "read_many_files": ("Glob", {"pattern": "include"}),
        "list_directory": ("LS", {"path": "dir_path"}),
        "glob": ("Glob", {"pattern": "pattern", "path": "dir_path"}),
        "grep_search": ("Grep", {"pattern": "pattern", "path": "dir_path"}),
        "search_file_content": ("Grep", {"pattern": "pattern", "path": "path"}),  # its name before 0.20
        "write_file": ("Write", {"file_path": "file_path", "content": "content"}),
        "replace": ("Edit", {"file_path": "file_path", "old_string": "old_string", "new_string": "new_string"}),
        "web_fetch": ("WebFetch", {"url": "prompt"}),
        "google_web_search": ("WebSearch", {"query": "query"}),
    },
}
# Older field names, tried when the current one is missing (Gemini renamed `absolute_path` and `path`).
_FORMER_FIELDS = {"file_path": ("absolute_path", "path"), "dir_path": ("path",)}
_SHELLS = ("bash", "sh", "zsh", "/bin/bash", "/bin/sh", "/bin/zsh", "/usr/bin/bash", "/usr/bin/zsh")


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
    known = AGENT_TOOL_MAP.get(agent, {}).get(name)
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


# A hook payload's call (`hooks.agents`): the same table, applied so that nothing of the call is lost.
PATCH_TOOLS = frozenset({"apply_patch", "applypatch"})  # Codex's file edits: one patch text


def to_canonical(agent: str, tool_name: object, tool_input: object) -> tuple[object, object]:
    """(name, input) of an agent's tool call in a hook payload, as the Claude Code tool it matches.

    Unlike `canonical_call` (transcripts), a name that already is ours (Codex's hooks report its
    shell as `Bash`) or that the table does not know passes unchanged, and the fields the table
    does not rename are kept beside the renamed ones, with the agent's own name as `_agent_tool`.
    Codex's `apply_patch` becomes the edit it makes (`capture.patch.patch_call`)."""
    if not isinstance(tool_name, str) or tool_name in TOOLS:
        return tool_name, tool_input
    if agent == "codex" and tool_name in PATCH_TOOLS:
        from .patch import patch_call

        return patch_call(tool_input)
    known = AGENT_TOOL_MAP.get(agent, {}).get(tool_name)
    if known is None or not isinstance(tool_input, dict):
        return tool_name, tool_input
    ours, renamed = canonical_call(agent, tool_name, tool_input)
    read = {f for theirs in known[1].values() for f in (theirs, *_FORMER_FIELDS.get(theirs, ()))}
    kept = {k: v for k, v in tool_input.items() if k not in read}
    return ours, {**kept, **renamed, "_agent_tool": tool_name}
