"""Codex CLI's `apply_patch` envelope, split into the Edit / Write calls it amounts to.

The format (Codex `codex-rs/apply-patch/apply_patch_tool_instructions.md`): `*** Begin Patch`,
then per file `*** Add File: P` (every line `+`), `*** Delete File: P`, or `*** Update File: P`
(optionally `*** Move to: Q`) with hunks opened by `@@` whose lines are ` ` context, `-` removed,
`+` added; `*** End Patch`. Each hunk of an update becomes one Edit (old text: context and removed
lines; new text: context and added lines), an added file one Write, a deleted file one Edit with
both sides empty (the file was touched; no text to learn from). Anything else is ignored: the
patch is untrusted text and a malformed one yields what could be read of it.

`edits` serves transcripts (each call recorded on its own); `patch_call` a hook payload, which
records one tool call: the patch's first file as Edit (one hunk), MultiEdit (several) or Write
(added), with the whole patch kept in the input (`patch`) and the other files listed (`files`);
a deletion stays `apply_patch`.

Cost: one pass over the patch's lines; stdlib only, no imports.
"""

from __future__ import annotations

TYPE_CHECKING = False  # the hooks may read patches too: no `typing` at run time
if TYPE_CHECKING:
    from typing import Any

_FILE_OPS = (("*** Add File: ", "add"), ("*** Update File: ", "update"), ("*** Delete File: ", "delete"))


def edits(patch: object) -> list[tuple[str, dict[str, Any]]]:
    """[(tool, input)] — ("Write", {file_path, content}) or ("Edit", {file_path, old_string,
    new_string}) — for each added file and each hunk of an updated one, in the patch's order."""
    if not isinstance(patch, str):
        return []
    out: list[tuple[str, dict[str, Any]]] = []
    path: str | None = None
    op = ""
    old: list[str] = []
    new: list[str] = []

    def flush() -> None:
        if path is None:
            return
        if op == "add":
            out.append(("Write", {"file_path": path, "content": "\n".join(new) + ("\n" if new else "")}))
        elif op == "update" and (old or new):
            out.append(("Edit", {"file_path": path, "old_string": "\n".join(old), "new_string": "\n".join(new)}))
        old.clear()
        new.clear()

    for line in patch.splitlines():
        started = next(((line[len(mark):].strip(), kind) for mark, kind in _FILE_OPS if line.startswith(mark)), None)
        if started is not None:
            flush()
            path, op = started
            if op == "delete":
                out.append(("Edit", {"file_path": path, "old_string": "", "new_string": ""}))
                path = None
            continue
        if line.startswith("*** Move to: ") and path is not None:
            path = line[len("*** Move to: "):].strip() or path
            continue
        if line.startswith("***"):  # Begin / End Patch, End of File
            continue
        if path is None:
            continue
        if line.startswith("@@"):
            if op == "update":
                flush()
            continue
        mark, text = line[:1], line[1:]
        if mark == "+":
            new.append(text)
        elif mark == "-" and op == "update":
            old.append(text)
        elif op == "update":  # context (" "), or a bare empty line some models write for an empty one
            old.append(text if mark == " " else line)
            new.append(text if mark == " " else line)
    flush()
    return out


def patch_text(tool_input: object) -> str | None:
    """The patch a call carries: a string input, or the field holding it (Codex's hooks: `command`)."""
    if isinstance(tool_input, str):
        return tool_input
    if isinstance(tool_input, dict):
        for key in ("command", "input", "patch"):
            value = tool_input.get(key)
            if isinstance(value, str) and "*** " in value:
                return value
    return None


def patch_call(tool_input: object) -> tuple[str, Any]:
    """("Edit" / "MultiEdit" / "Write", its input) for a hook's `apply_patch` call; ("apply_patch",
    the input unchanged) for a deletion or when no file can be read from it."""
    text = patch_text(tool_input)
    calls = edits(text) if text else []
    if not calls:
        return "apply_patch", tool_input
    first = calls[0][1]["file_path"]
    own = [(tool, data) for tool, data in calls if data["file_path"] == first]
    base: dict[str, Any] = {"file_path": first, "patch": text, "_agent_tool": "apply_patch"}
    files = list(dict.fromkeys(data["file_path"] for _, data in calls))
    if len(files) > 1:
        base["files"] = files
    tool, data = own[0]
    if len(own) == 1:
        if tool == "Edit" and not data["old_string"] and not data["new_string"]:
            return "apply_patch", tool_input  # a deletion is no edit
        return tool, {**base, **data}
    changes = [{"old_string": d["old_string"], "new_string": d["new_string"]} for t, d in own if t == "Edit"]
    return "MultiEdit", {**base, "edits": changes}
