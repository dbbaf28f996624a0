"""File utilities: the one way ace-engine replaces a file's content (`atomic_write`), the one
bounded read of a file someone else wrote (`read_prefix`), and one line of JSON Lines someone else
wrote read as an object (`json_object`).

Contract of `atomic_write(path, data, mode=…)`:
- readers see the old content or the new, never a mix: the data goes to a temporary file in the
  same directory (same file system), is flushed (and fsynced unless the caller opts out), then
  renamed over `path`;
- the temporary file is created the way `tempfile.mkstemp` creates one — `O_CREAT | O_EXCL`,
  owner-only, an unpredictable name, and `O_NOFOLLOW` — so a file or symlink planted at a guessable
  name cannot redirect the write; it is removed if anything fails;
- the file gets `mode` exactly (umask aside) when given, else the permission bits of the file it
  replaces (a new file: 0666 less the umask);
- a symlink at `path` itself is replaced, not written through: resolve it first when writing
  through it is meant (`integrations.agent_files` does, inside the project).

Private directories are not made here: `paths.ensure_private_dir` is the one place that creates
and checks them (owner-only, below `$ACE_HOME` never through a symlink); callers pass a path in a
directory that already exists.

Cost: stdlib `os` only, nothing imported at call time — hooks write their health state through
this. `tempfile` itself is not used because importing it costs ~8 ms (`random`, `shutil`, …);
the few lines below do what `mkstemp` does.
"""

from __future__ import annotations

import os

TYPE_CHECKING = False  # not `typing.TYPE_CHECKING`: the hooks import this module, and not `typing`
if TYPE_CHECKING:
    from typing import Any

# Text is written as UTF-8 with surrogateescape: a file read with the same error handler (agent
# files that are not valid UTF-8) round-trips byte for byte.
ENCODING = ("utf-8", "surrogateescape")
TEMP_SUFFIX = ".ace-tmp"
_TEMP_ATTEMPTS = 100  # as `tempfile.TMP_MAX`'s purpose: give up rather than loop on a hostile directory


def _current_umask() -> int:
    umask = os.umask(0o022)
    os.umask(umask)
    return umask


def make_temp(directory: str, name: str) -> tuple[int, str]:
    """An exclusive, owner-only (0600), not-followed temporary file next to `name` in `directory`:
    (fd, path). Its name starts with a dot and ends with `TEMP_SUFFIX`."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
    flags |= getattr(os, "O_BINARY", 0)
    for _ in range(_TEMP_ATTEMPTS):
        tmp = os.path.join(directory, f".{name}.{os.urandom(6).hex()}{TEMP_SUFFIX}")
        try:
            return os.open(tmp, flags, 0o600), tmp
        except FileExistsError:
            continue
    raise FileExistsError(f"no free temporary file name in {directory} after {_TEMP_ATTEMPTS} attempts")


def atomic_write(path: str, data: str | bytes, *, mode: int | None = None, fsync: bool = True) -> None:
    """Replace `path` with `data` (text is encoded as `ENCODING`) in one rename; see the module
    contract. `fsync=False` skips the flush to disk, for state that is cheap to lose and written on
    a hook's path (the rename stays atomic)."""
    if isinstance(data, str):
        data = data.encode(*ENCODING)
    if mode is None:
        try:
            mode = os.stat(path).st_mode & 0o7777
        except FileNotFoundError:
            mode = 0o666 & ~_current_umask()
    fd, tmp = make_temp(os.path.dirname(path) or ".", os.path.basename(path))
    try:
        with open(fd, "wb", closefd=True) as fh:
            fh.write(data)
            fh.flush()
            if hasattr(os, "fchmod"):
                os.fchmod(fh.fileno(), mode)
            if fsync:
                os.fsync(fh.fileno())
        if not hasattr(os, "fchmod"):  # Windows: only the read-only bit means anything
            os.chmod(tmp, mode)
        os.replace(tmp, path)
    finally:
        if os.path.lexists(tmp):
            os.unlink(tmp)


def read_prefix(path: str, limit: int) -> str | None:
    """At most the first `limit` bytes of the regular file `path`, as text (undecodable bytes
    replaced); None when it is absent, a symlink, not a regular file (a FIFO is opened without
    blocking and refused), or unreadable. For files the user's tools or a repository wrote: never
    followed out through a link, never read past `limit`."""
    import stat

    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
    except OSError:
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        chunks, left = [], limit
        while left > 0:
            data = os.read(fd, min(left, 1 << 20))
            if not data:
                break
            chunks.append(data)
            left -= len(data)
    except OSError:
        return None
    finally:
        os.close(fd)
    return b"".join(chunks).decode("utf-8", "replace")


def json_object(line: str | bytes) -> dict[str, Any] | None:
    """The JSON object on one line of JSON Lines (a transcript, a CLI's `--json` events), or None
    when the line is not JSON or holds something else (a warning printed on the same stream, a
    bare list or number): readers skip such lines instead of failing on them."""
    import json

    try:
        value = json.loads(line)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None
