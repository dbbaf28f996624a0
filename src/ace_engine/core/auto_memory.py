"""Claude Code's auto memory, located and read: where its notes live, what of them each session
loads, and a bounded read of one note. Nothing here writes, and nothing here turns it off.

Layout (Claude Code's documentation): a directory per repository, `<claude home>/projects/<folder>/
memory/` — the folder is the repository's root with every character that is not a letter or a
digit written as `-` (the transcripts' own folder rule), `<claude home>` is `$CLAUDE_CONFIG_DIR`,
else `~/.claude`. The user's settings may move it (`autoMemoryDirectory`, accepted from user
settings only here: a repository's files never choose what is read). `MEMORY.md` is the index,
whose first `INDEX_LINES` lines and at most `INDEX_BYTES` load into every session; the other
`*.md` files are topic notes the agent reads on demand.

Trust: a note is text the agent wrote, maybe led by what it read — it is data, read with
`O_NOFOLLOW`, regular files only, at most `NOTE_BYTES`, never executed or parsed as config.

Cost: stdlib only (the SessionStart hook uses `index_head`): one `open` + one bounded `read` of
MEMORY.md, one of the user's settings file.
"""

import os
import re

from . import files

INDEX = "MEMORY.md"
INDEX_LINES = 200
INDEX_BYTES = 25 * 1024
NOTE_BYTES = 64 * 1024
SETTINGS_BYTES = 256 * 1024
_FOLDER = re.compile(r"[^A-Za-z0-9]")
# A note's path as the agent writes it: `…/.claude/projects/<folder>/memory/<name>.md`.
_NOTE_PATH = re.compile(r"(?:^|/)\.claude/projects/[^/]+/memory/[^/]+\.md$")
_LINK = re.compile(r"\]\(\s*(?:\./)?([^()\s/]+\.md)\s*\)")
_NOT_WORD = re.compile(r"[\W_]+")


def claude_home() -> str:
    return os.path.expanduser(os.environ.get("CLAUDE_CONFIG_DIR") or os.path.join("~", ".claude"))


def folder_name(root: str) -> str:
    """The projects folder Claude Code names after a directory."""
    return _FOLDER.sub("-", root.rstrip("/") or "/")


def read_bounded(path: str, limit: int) -> "str | None":
    """At most `limit` bytes of the regular file `path` (not through a symlink), as text; None if
    it is absent, not a regular file, or unreadable (`files.read_prefix`)."""
    return files.read_prefix(path, limit)


def configured_directory() -> "str | None":
    """`autoMemoryDirectory` from the user's Claude Code settings (absolute or `~/…`), else None."""
    text = read_bounded(os.path.join(claude_home(), "settings.json"), SETTINGS_BYTES)
    if not text:
        return None
    import json

    try:
        value = json.loads(text).get("autoMemoryDirectory")
    except (ValueError, AttributeError, RecursionError):  # not an object, or nested past the parser
        return None
    if not isinstance(value, str) or not (value.startswith("/") or value.startswith("~/")):
        return None
    return os.path.expanduser(value)


def directories(*roots: "str | None") -> "list[str]":
    """Where the auto memory of a repository with these roots (main worktree first) may be."""
    found = [d for d in (configured_directory(),) if d]
    base = os.path.join(claude_home(), "projects")
    found += [os.path.join(base, folder_name(r), "memory") for r in roots if r]
    return list(dict.fromkeys(found))


def is_note(path: "str | None", extra: "tuple[str, ...]" = ()) -> bool:
    """Whether an agent's write to `path` is a write into its auto memory."""
    if not path or not path.endswith(".md"):
        return False
    if _NOTE_PATH.search(path.replace("\\", "/")):
        return True
    parent = os.path.dirname(os.path.normpath(path))
    if os.path.basename(parent) == "memory" and \
            os.path.dirname(os.path.dirname(parent)) == os.path.join(claude_home(), "projects"):
        return True
    return any(parent == os.path.normpath(d) for d in (*extra, configured_directory()) if d)


def index_head(directory: str) -> str:
    """What of `directory`'s MEMORY.md each session loads: its first INDEX_LINES lines, INDEX_BYTES at most."""
    text = read_bounded(os.path.join(directory, INDEX), INDEX_BYTES) or ""
    return "\n".join(text.splitlines()[:INDEX_LINES])


def norm(text: str) -> str:
    """Text compared for "already said": case, punctuation and spacing ignored."""
    return " ".join(_NOT_WORD.sub(" ", text.lower()).split())


class Loaded:
    """What MEMORY.md puts in a session's context: its normalized text and the notes it links."""

    __slots__ = ("text", "notes")

    def __init__(self, heads: "list[str]") -> None:
        self.text = " " + " ".join(norm(h) for h in heads if h) + " "
        self.notes = {m.group(1) for h in heads for m in _LINK.finditer(h)}

    def __bool__(self) -> bool:
        return bool(self.text.strip() or self.notes)

    def holds(self, content: str, note: "str | None" = None) -> bool:
        """A lesson MEMORY.md already gives: its text is there, or it was learned from a note the index links."""
        if note and os.path.basename(note) in self.notes:
            return True
        said = norm(content)
        return bool(said) and f" {said} " in self.text


def loaded(*roots: "str | None") -> Loaded:
    return Loaded([index_head(d) for d in directories(*roots)])
