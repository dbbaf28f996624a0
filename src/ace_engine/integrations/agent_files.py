"""`ace sync`: the playbook's top lessons in the instruction files agents read at the project
root — `CLAUDE.md` (Claude Code), `AGENTS.md` (Codex and others), `.github/copilot-instructions.md`
(GitHub Copilot) — between two markers:

    <!-- ACE_SECTION_START -->
    ## Lessons learned (ace-engine)
    …
    <!-- ACE_SECTION_END -->

Nothing outside the markers is ever changed. A file without the markers gets the section appended
on a new line (after a blank line when the file ends with a newline, as text files do), plus a
final newline; `--remove` takes out exactly what was added, so sync + remove gives back the
original bytes. A file that is missing is
created — except `.github/copilot-instructions.md` when the project has no `.github/` directory
(a repository that doesn't use GitHub shouldn't grow one); a file left empty by `--remove` is
deleted (sync created it). Files with more than one START or END marker, or an END before the
START, are refused, and then no file is written at all.

Writes are atomic (a private temporary file created with O_EXCL in the same directory, then
rename) and keep the file's permission bits; a symlinked file (`AGENTS.md -> CLAUDE.md` is common)
is written through the link, and written once when two names lead to the same file. Line endings
follow the file (CRLF files get CRLF), and bytes that aren't valid UTF-8 are carried through
unchanged.

The files live in a repository, which is untrusted: every target is resolved (symlinks in the
file and in its parent directories) and must stay inside the project root, else `SyncError` and
nothing at all is written — a committed `CLAUDE.md -> ../../.bashrc` or `.github ->
~/.config/autostart` cannot make `ace sync` (or `--remove`) touch a file outside the project.
Inside the project, `ace sync` still writes only into a regular file it creates or a plain
Markdown file of the work tree: never under a `.git` directory (a committed `AGENTS.md ->
.git/config` would break git), never into an executable file (`CLAUDE.md -> .git/hooks/post-checkout`,
or a `CLAUDE.md` with an execute bit: Markdown in a script runs its backticks), and a symlink only
when its target is a Markdown file (`*.md`, `*.markdown`) of the work tree. The file is opened with
O_NOFOLLOW and checked after the open (regular, no execute bit); just before the write the path
must still be that file (same device and inode), and the write is a temp file + rename in its
directory (`files.atomic_write`). Any refusal is a `SyncError` that names the file, the problem
and the fix, and nothing at all is written.
Lesson text is escaped for Markdown (`escape.markdown`): no HTML comment (so no fake marker), no
tag, no line break, no conversation turn.
"""

import os
import stat
from collections.abc import Mapping, Sequence
from typing import Any

from ..core.errors import SyncError
from ..core.escape import markdown
from ..core.files import atomic_write
from ..playbook.sections import DEFAULT_SECTIONS, title

START = "<!-- ACE_SECTION_START -->"
END = "<!-- ACE_SECTION_END -->"
TARGETS = ("CLAUDE.md", "AGENTS.md", ".github/copilot-instructions.md")
HEADING = "## Lessons learned (ace-engine)"
INTRO = ("Maintained by `ace sync` from this project's playbook: edit outside the ACE markers, the text between "
         "them is replaced. Say \"ctx-… helped\" or \"ctx-… was wrong\" to give feedback on a lesson.")
EMPTY = "_No lessons yet: they appear here as ace-engine learns from your sessions (then run `ace sync`)._"
_ENCODING = ("utf-8", "surrogateescape")  # any bytes round-trip unchanged


# -- the text of the section (pure functions) --------------------------------------------------------


def newline_of(text: str) -> str:
    """The file's line ending: CRLF when most of its lines end that way, else LF."""
    crlf = text.count("\r\n")
    return "\r\n" if crlf and crlf > text.count("\n") - crlf else "\n"


def render_block(bullets: Sequence[Mapping[str, Any]], nl: str = "\n") -> str:
    """The whole marked section, START to END inclusive: bullets grouped by section (the
    playbook's order), oldest first within one, so re-syncing an unchanged playbook changes nothing
    and a new lesson is a one-line diff."""
    groups: dict[str, list[Mapping[str, Any]]] = {}
    for bullet in bullets:
        groups.setdefault(bullet.get("section") or DEFAULT_SECTIONS[0], []).append(bullet)
    lines = [START, HEADING, "", INTRO, ""]
    if not groups:
        lines += [EMPTY, ""]
    order = [s for s in DEFAULT_SECTIONS if s in groups] + sorted(s for s in groups if s not in DEFAULT_SECTIONS)
    for section in order:
        lines += [f"### {title(section)}", ""]
        for bullet in sorted(groups[section], key=lambda b: (b.get("created_at") or 0, b["id"])):
            # `markdown`: no HTML comment (so no fake marker), tag, new line or conversation turn.
            lines.append(f"- [{markdown(bullet['id'])}] {markdown(bullet.get('content', ''))}")
        lines.append("")
    lines.append(END)
    return nl.join(lines)


def find_section(text: str, name: str = "the file") -> tuple[int, int] | None:
    """(start, end) offsets of the marked section, START through END; None when there is none.
    SyncError when the markers are unbalanced, duplicated or out of order."""
    starts, ends = text.count(START), text.count(END)
    if starts == 0 and ends == 0:
        return None
    start, end = text.find(START), text.find(END)
    if starts != 1 or ends != 1 or end < start:
        raise SyncError(
            f"{name}: the ACE markers are unbalanced ({starts} × {START}, {ends} × {END}"
            f"{', END before START' if starts == ends == 1 else ''}); nothing was changed. Fix the file by hand: "
            "keep exactly one START … END pair, or delete the markers and what is between them, then re-run")
    return start, end + len(END)


def with_section(text: str, bullets: Sequence[Mapping[str, Any]], name: str = "the file") -> str:
    """`text` with its marked section replaced by the current one, or with one appended."""
    span = find_section(text, name)
    nl = newline_of(text)
    block = render_block(bullets, nl)
    if span is not None:
        start, end = span
        return text[:start] + block + text[end:]
    if not text:
        return block + nl
    # A line break before the section (a blank line when the text ends with one) and one after;
    # `without_section` takes exactly these away. Adding a blank line after a last line without
    # a newline too would make "abc" and "abc\n" look the same, and --remove couldn't restore both.
    return text + nl + block + nl


def _block_newline(text: str, start: int) -> str:
    after = start + len(START)
    return "\r\n" if text.startswith("\r\n", after) else "\n"


def without_section(text: str, name: str = "the file") -> str:
    """`text` without its marked section and the line breaks `with_section` added around it."""
    span = find_section(text, name)
    if span is None:
        return text
    start, end = span
    nl = _block_newline(text, start)
    before, after = text[:start], text[end:]
    if after.startswith(nl):
        after = after[len(nl):]
    elif after.startswith("\n"):
        after = after[1:]
    if not after:
        # At the end of the file, as appended: drop the line break put before the section.
        if before.endswith(nl):
            before = before[: -len(nl)]
        return before
    # Elsewhere (moved by hand): the section's own lines go; a blank line on each side becomes one.
    if before.endswith(nl + nl) and after.startswith(nl):
        after = after[len(nl):]
    return before + after


# -- the files --------------------------------------------------------------------------------------


_MARKDOWN = (".md", ".markdown")
_EXECUTABLE = stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH
_FIX = ("`ace sync` writes only plain Markdown files of the work tree: replace it with a regular, non-executable "
        "Markdown file (or remove it), then re-run")


def _read(path: str, shown: str) -> tuple[str | None, tuple[int, int] | None]:
    """(the text, (device, inode)) of the real file `path`; (None, None) when it is missing.
    Opened without following a symlink (the path is already resolved: a link here now is a swap)
    and checked after the open, so what is read is what was checked."""
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0)
    flags |= getattr(os, "O_NONBLOCK", 0)  # a FIFO planted at the name must not hang the open
    try:
        fd = os.open(path, flags)
    except FileNotFoundError:
        return None, None
    except OSError as exc:
        if os.path.islink(path):
            raise SyncError(f"{shown}: was replaced by a symlink while `ace sync` ran; nothing was written. "
                            "Re-run when nothing else changes the file") from exc
        raise SyncError(f"{shown}: cannot be read ({exc.strerror}); check its permissions") from exc
    with open(fd, "rb", closefd=True) as fh:
        info = os.fstat(fh.fileno())
        _check_file(info, shown)
        return fh.read().decode(*_ENCODING), (info.st_dev, info.st_ino)


def _check_file(info: os.stat_result, shown: str) -> None:
    if not stat.S_ISREG(info.st_mode):
        raise SyncError(f"{shown}: exists but is not a regular file; nothing was written. Move it aside, then re-run")
    if info.st_mode & _EXECUTABLE:
        raise SyncError(f"{shown}: is an executable file, not plain Markdown; nothing was written. {_FIX}")


def _git_part(rel: str) -> bool:
    """Does a path relative to the work tree go through a `.git` directory (or file)? Compared
    without case: on a case-insensitive file system `.GIT/config` is git's own config."""
    return any(part.lower() == ".git" for part in rel.replace("\\", "/").split("/"))


def allowed(root: str, rel: str, real: str) -> None:
    """SyncError unless target `rel` (resolved to `real`, already inside the project) may be
    written: not under `.git`, and a symlinked target must lead to a Markdown file."""
    real_root = os.path.realpath(root)
    inner = os.path.relpath(real, real_root)
    if _git_part(inner):
        raise SyncError(f"{rel}: leads into the git directory ({inner}) through a symlink; nothing was written. {_FIX}")
    linked = real != os.path.join(real_root, *rel.split("/"))
    if linked and not real.lower().endswith(_MARKDOWN):
        raise SyncError(f"{rel}: is a symlink to {inner}, which is not a Markdown file; nothing was written. {_FIX}")


def _inside(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


def contained(root: str, rel: str) -> str:
    """The real path of target `rel` under `root`, every symlink resolved (the file's own and its
    parents', dangling ones too); SyncError when that leaves the project root."""
    real_root = os.path.realpath(root)
    path = os.path.join(root, *rel.split("/"))
    real = os.path.realpath(path)
    if not _inside(real, real_root):
        raise SyncError(f"{path} leads outside the project ({real}) through a symlink; nothing was written. "
                        f"`ace sync` only writes inside {real_root}: replace the link with a regular file "
                        "(or remove it), then re-run")
    return real


def plan(root: str, bullets: Sequence[Mapping[str, Any]], *, remove: bool = False,
         targets: Sequence[str] = TARGETS) -> list[dict]:
    """What `sync` would do to each target, computed without writing anything:
    [{"file" (relative), "path" (real path), "action", "reason"?, "text"? (the new content),
    "_id"? ((device, inode) of the file read, None when missing: `sync` checks it again)}],
    action one of created / updated / unchanged / removed / deleted / absent / skipped.
    SyncError (naming the file) when any target can't be changed safely."""
    seen: dict[str, str] = {}
    out = []
    for rel in targets:
        path = os.path.join(root, *rel.split("/"))
        entry: dict = {"file": rel, "path": path}
        out.append(entry)
        real = contained(root, rel)  # before anything else: a link out of the project refuses the whole sync
        allowed(root, rel, real)  # then one into .git or to a file that isn't Markdown, dangling or not
        if os.path.islink(path) and not os.path.exists(path):
            entry.update(action="skipped", reason="a symlink to a missing file")
            continue
        entry["path"] = real
        if real in seen:
            entry.update(action="skipped", reason=f"the same file as {seen[real]}")
            continue
        seen[real] = rel
        text, entry["_id"] = _read(real, rel)
        if remove:
            if text is None or find_section(text, rel) is None:
                entry["action"] = "absent"
                continue
            new = without_section(text, rel)
            entry.update(action="deleted" if new == "" else "removed", text=new)
            continue
        if text is None:
            if not os.path.isdir(os.path.dirname(real)):
                entry.update(action="skipped", reason=f"{os.path.dirname(rel)}/ doesn't exist (not created)")
                continue
            entry.update(action="created", text=with_section("", bullets, rel))
            continue
        new = with_section(text, bullets, rel)
        entry.update(action="unchanged" if new == text else "updated", text=None if new == text else new)
    return out


def sync(root: str, bullets: Sequence[Mapping[str, Any]], *, remove: bool = False,
         targets: Sequence[str] = TARGETS) -> list[dict]:
    """Write (or with `remove`, take out) the marked section in each target; all files are checked
    before the first is written. Returns `plan`'s entries without the file texts."""
    entries = plan(root, bullets, remove=remove, targets=targets)
    for entry in entries:
        _unchanged(entry)  # every file, before the first write: all or nothing
    for entry in entries:
        text = entry.pop("text", None)
        entry.pop("_id", None)
        if entry["action"] == "deleted":
            os.unlink(entry["path"])
        elif text is not None:
            atomic_write(entry["path"], text)
    return entries


def _unchanged(entry: Mapping[str, Any]) -> None:
    """SyncError when the file `plan` checked is no longer the one at its path (swapped for a
    link, another file or a directory since), or a new one appeared where none was."""
    if entry.get("text") is None and entry["action"] != "deleted":
        return
    try:
        info = os.lstat(entry["path"])
    except FileNotFoundError:
        info = None
    now = (info.st_dev, info.st_ino) if info is not None else None
    if now != entry.get("_id") or (info is not None and stat.S_ISLNK(info.st_mode)):
        raise SyncError(f"{entry['file']}: changed while `ace sync` ran; nothing was written. "
                        "Re-run when nothing else changes the file")
    if info is not None:
        _check_file(info, entry["file"])
