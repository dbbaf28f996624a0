"""Codex's `apply_patch` call read as the Claude Code edit it amounts to.

Codex edits files with one tool whose input is a patch text (`*** Begin Patch` … `*** Update File:
path` / `*** Add File: path` / `*** Delete File: path`, hunks of ` `/`-`/`+` lines, `*** End Patch`).
Capture and learning read edits as Edit (`file_path`, `old_string`, `new_string`), MultiEdit
(`edits`) and Write (`file_path`, `content`), so `patch_call` turns the patch's first file into
that shape: an updated file with one hunk → Edit, several hunks → MultiEdit, an added file →
Write; a deletion stays `apply_patch`. The whole patch stays in the input (`patch`) and further
files are listed in `files`, so nothing the agent did is lost, only not modelled.
Untrusted text: nothing here is executed.

Cost: one pass over the patch's lines; stdlib only (the hooks import it).
"""

TYPE_CHECKING = False  # not `typing.TYPE_CHECKING`: the hooks must not import `typing`
if TYPE_CHECKING:
    from typing import Any

_FILE_MARKERS = (("*** Update File: ", "update"), ("*** Add File: ", "add"), ("*** Delete File: ", "delete"))


def patch_text(tool_input: object) -> str | None:
    """The patch a call carries: a string input, or the field holding `*** Begin Patch`."""
    if isinstance(tool_input, str):
        return tool_input
    if isinstance(tool_input, dict):
        for key in ("command", "input", "patch"):
            value = tool_input.get(key)
            if isinstance(value, str) and "*** " in value:
                return value
        for value in tool_input.values():
            if isinstance(value, str) and value.lstrip().startswith("*** Begin Patch"):
                return value
    return None


def parse(text: str) -> "list[dict[str, Any]]":
    """The files of a patch, in order: {path, op: update/add/delete, hunks: [(old, new)], content}."""
    files: list[dict[str, Any]] = []
    current: dict[str, Any] | None = None
    old: list[str] = []
    new: list[str] = []

    def close_hunk() -> None:
        if current is not None and (old or new):
            current["hunks"].append(("\n".join(old), "\n".join(new)))
        old.clear()
        new.clear()

    for line in text.splitlines():
        marker = next(((line[len(m):].strip(), op) for m, op in _FILE_MARKERS if line.startswith(m)), None)
        if marker is not None:
            close_hunk()
            current = {"path": marker[0], "op": marker[1], "hunks": [], "content": []}
            files.append(current)
            continue
        if current is None or line.startswith("*** "):  # Begin/End Patch, Move to, End of File
            continue
        if line.startswith("@@"):
            close_hunk()
        elif current["op"] == "add":
            current["content"].append(line[1:] if line.startswith("+") else line)
        elif line.startswith("-"):
            old.append(line[1:])
        elif line.startswith("+"):
            new.append(line[1:])
        elif line.startswith(" ") or line == "":
            old.append(line[1:])
            new.append(line[1:])
    close_hunk()
    for f in files:
        f["content"] = "\n".join(f["content"]) + ("\n" if f["content"] else "")
    return files


def patch_call(tool_input: object) -> "tuple[str, Any]":
    """("Edit" / "MultiEdit" / "Write", its input) for an `apply_patch` call; ("apply_patch", the
    input unchanged) when no patch with a file can be read from it."""
    text = patch_text(tool_input)
    files = parse(text) if text else []
    if not text or not files:
        return "apply_patch", tool_input
    first = files[0]
    base: dict[str, Any] = {"file_path": first["path"], "patch": text, "_agent_tool": "apply_patch"}
    if len(files) > 1:
        base["files"] = [f["path"] for f in files]
    if first["op"] == "add":
        return "Write", {**base, "content": first["content"]}
    hunks = first["hunks"]
    if first["op"] == "delete" or not hunks:
        return "apply_patch", tool_input  # a deletion (or a hunk-less update) is no Edit
    if len(hunks) == 1:
        return "Edit", {**base, "old_string": hunks[0][0], "new_string": hunks[0][1]}
    return "MultiEdit", {**base, "edits": [{"old_string": o, "new_string": n} for o, n in hunks]}
