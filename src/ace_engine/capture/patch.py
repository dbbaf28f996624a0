"""Codex CLI's `apply_patch` envelope, split into the Edit / Write calls it amounts to.

The format (Codex `codex-rs/apply-patch/apply_patch_tool_instructions.md`): `*** Begin Patch`,
then per file `*** Add File: P` (every line `+`), `*** Delete File: P`, or `*** Update File: P`
(optionally `*** Move to: Q`) with hunks opened by `@@` whose lines are ` ` context, `-` removed,
`+` added; `*** End Patch`. Each hunk of an update becomes one Edit (old text: context and removed
lines; new text: context and added lines), an added file one Write, a deleted file one Edit with
both sides empty (the file was touched; no text to learn from). Anything else is ignored: the
patch is untrusted text and a malformed one yields what could be read of it.

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
