"""The commit checked out at a work tree, read from git's files: the session's first HEAD, at SessionStart.

Commits "of this session" are those between the HEAD a session started on and the HEAD when its
summary is written (`git rev-list first..last`, in the worker: `update.git_state`), never a date
window — a cloned repository whose commits carry future dates must not pass for the session's work.
The SessionStart hook records the first one (`record(store, session_id, root)`: the first write
wins, a resume or a compaction keeps it) without a `git` process: `HEAD`, then the loose ref it
names (in the worktree's git dir, then the common one), then `packed-refs`. Anything else — an
unborn branch, a ref outside `refs/`, a value that isn't a hexadecimal object name — gives None
and nothing is recorded (the summary then lists only the commits the session's own `git commit`
calls reported).

Hook path: stdlib only, no `typing`. Cost: a few small file reads (packed-refs only when the ref
isn't loose) and, inside a git work tree, one INSERT OR IGNORE.
"""

import os

TYPE_CHECKING = False  # not `typing.TYPE_CHECKING`: the hooks must not import `typing` (~3 ms)
if TYPE_CHECKING:
    from typing import Any

STATE_KEY = "first_head"
_HEX = frozenset("0123456789abcdef")


def _object_name(text: str) -> "str | None":
    value = text.strip().lower()
    return value if len(value) in (40, 64) and set(value) <= _HEX else None


def _first_line(path: str) -> "str | None":
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            return fh.readline(200)
    except OSError:
        return None


def read_head(root: "str | None") -> "tuple[str, str] | None":
    """(git dir, the first line of its HEAD file) of the work tree at `root`; None outside a work
    tree or when HEAD cannot be read."""
    if not root:
        return None
    from ..core.project import find_git_root

    found = find_git_root(root)
    if not found:
        return None
    head = _first_line(os.path.join(found[1], "HEAD"))
    return None if head is None else (found[1], head)


def head_commit(root: "str | None") -> "str | None":
    """The object name HEAD points to in the work tree at `root`, or None (see the docstring)."""
    read = read_head(root)
    if read is None:
        return None
    from ..core.project import common_dir

    git_dir, head = read
    if not head.startswith("ref:"):
        return _object_name(head)
    ref = head[4:].strip()
    parts = ref.split("/")
    if not ref.startswith("refs/") or any(p in ("", ".", "..") for p in parts) or "\\" in ref:
        return None
    common = common_dir(git_dir)
    for base in dict.fromkeys((git_dir, common)):
        line = _first_line(os.path.join(base, *parts))
        if line is not None:
            return _object_name(line)
    try:
        with open(os.path.join(common, "packed-refs"), encoding="utf-8", errors="replace") as fh:
            for line in fh:
                sha, _, name = line.rstrip("\n").partition(" ")
                if name == ref:
                    return _object_name(sha)
    except OSError:
        pass
    return None


def record(store: "Any", session_id: "str | None", root: "str | None") -> "str | None":
    """Keep the HEAD this session started on (the first SessionStart's; later ones change
    nothing); the object name, or None when there is none to keep."""
    if not session_id:
        return None
    sha = head_commit(root)
    if sha is not None:
        store.note_first_head(session_id, sha)
    return sha
