"""Claude Code's tools and the fields of their input: the one table every layer reads.

Which tool names a file (and in which field), which runs a shell command, which writes content:
capture, the hooks (domain shift, permission, the PreToolUse matcher) and learning (trajectory
steps, code patterns, heuristics) all ask here instead of keeping their own copy. A tool missing
from the table is simply "other": nothing breaks when Claude Code adds one. Other agents' tools
are mapped onto these by their own tables (`agents.tools`).

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
