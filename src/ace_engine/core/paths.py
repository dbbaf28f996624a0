"""Where ace-engine keeps its files: always outside the repository, owner-only.

`$ACE_HOME` wins; otherwise the platform's user data directory (XDG on Linux).

Contract of the directories handed out here (`ensure_private_dir`, `fallback_dir`):
- what ace-engine creates, it creates 0700; a directory it did not create is never chmodded;
- an existing directory owned by another user, or writable by group or others, is refused
  (`UnsafeDirError`, a `PermissionError` whose message names the fix) — like git's
  `safe.directory`, a shared or foreign directory must not hold data that agents later obey;
- below `$ACE_HOME` nothing is followed through a symlink: every component is checked with
  `lstat`. `$ACE_HOME` itself may be a symlink the user made (it is theirs to choose), but its
  target must pass the same owner and mode checks.

`read_optional(path, error, fix)` is the one way a file the user may or may not have written (a config
or settings file) is read: missing is None, unreadable is `error` naming the file and the fix; with a
`limit`, only a regular file that small is read (bounded: never a device, a FIFO or a huge file whole).

Cost: stdlib-only (`os`, `stat`, `sys`); a `mkdir` attempt and a `stat` per directory component,
uncached, so a directory removed meanwhile is simply recreated. Every hook process calls this.
"""

import os
import stat
import sys

from .errors import AceError

PROJECT_CONFIG_NAME = ".ace.toml"
CONFIG_BYTES = 64 * 1024  # a config file is small data: a larger one is refused unread (`read_optional`)

class UnsafeDirError(AceError, PermissionError):
    """A directory ace-engine would keep data in is not private to the current user."""


def ace_home() -> str:
    home = os.environ.get("ACE_HOME")
    if home:
        return os.path.abspath(os.path.expanduser(home))
    if sys.platform == "darwin":
        base = os.path.expanduser("~/Library/Application Support")
    elif os.name == "nt":
        base = os.environ.get("LOCALAPPDATA") or os.path.expanduser("~\\AppData\\Local")
    else:
        base = os.environ.get("XDG_DATA_HOME") or os.path.expanduser("~/.local/share")
    return os.path.join(base, "ace-engine")


def user_config_path() -> str:
    """The user's config file: `$ACE_CONFIG`, else `$XDG_CONFIG_HOME/ace-engine/config.toml`."""
    explicit = os.environ.get("ACE_CONFIG")
    if explicit:
        return os.path.abspath(os.path.expanduser(explicit))
    base = os.environ.get("XDG_CONFIG_HOME") or os.path.expanduser("~/.config")
    return os.path.join(base, "ace-engine", "config.toml")


def db_path() -> str:
    return os.path.join(ace_home(), "ace.db")


def log_path() -> str:
    return os.path.join(ace_home(), "logs", "ace.log")


def state_dir() -> str:
    return os.path.join(ace_home(), "state")


def spool_dir() -> str:
    """Records that could not reach the store wait here (JSON lines) until it is healthy again."""
    return os.path.join(ace_home(), "spool")


def _uid() -> int | None:
    return os.geteuid() if hasattr(os, "geteuid") else None


def check_private(path: str, st: os.stat_result, *, strict: bool = False) -> None:
    """Raise UnsafeDirError unless `st` (of `path`) is a directory the current user owns that no
    one else can write to (`strict`: that no one else can even read or enter)."""
    if stat.S_ISLNK(st.st_mode):
        raise UnsafeDirError(f"{path} is a symlink; ace-engine does not follow symlinks in its data "
                             f"directories. Remove it (ace-engine recreates the directory)")
    if not stat.S_ISDIR(st.st_mode):
        raise UnsafeDirError(_not_a_directory(path))
    uid = _uid()
    if uid is not None and st.st_uid != uid:
        raise UnsafeDirError(f"{path} is owned by uid {st.st_uid}, not by you (uid {uid}); ace-engine "
                             f"will not keep its data there. Set ACE_HOME to a directory you own (mode 0700)")
    loose = st.st_mode & (0o077 if strict else 0o022)
    if uid is not None and loose:
        who = "group or others" if strict else "group or others (write)"
        raise UnsafeDirError(f"{path} is accessible to {who} (mode {st.st_mode & 0o7777:o}); ace-engine "
                             f"will not keep its data there. Use a private directory: `chmod 700 {path}` "
                             f"if it is yours alone, or set ACE_HOME elsewhere")


def _not_a_directory(path: str) -> str:
    """What to say when a data directory's place holds something else (a file, a device): never
    "remove it" — the user's own file may sit there (`ACE_HOME=/etc/passwd`)."""
    if path == ace_home():
        where = "ACE_HOME" if os.environ.get("ACE_HOME") else "ace-engine's data directory"
        return (f"{where} ({path}) is a file, not a directory; ace-engine keeps its data in a directory. "
                f"Set ACE_HOME to a directory you own (ace-engine creates it if missing), or unset it to use the "
                f"default")
    return (f"{path} is a file, not a directory; ace-engine keeps a directory there. Move that file elsewhere "
            f"(ace-engine then creates the directory), or set ACE_HOME to another directory")


def _ensure_root(path: str) -> None:
    """Make sure the top directory exists (created 0700 if missing) and is safe to use."""
    try:
        os.mkdir(path, 0o700)
    except FileNotFoundError:
        os.makedirs(os.path.dirname(path), exist_ok=True)  # parents are ordinary user dirs
        try:
            os.mkdir(path, 0o700)
        except FileExistsError:
            pass
    except FileExistsError:
        pass
    except NotADirectoryError as exc:  # a parent is a file: `ACE_HOME=/etc/passwd/data`
        raise UnsafeDirError(f"{path} cannot be created: a part of its path is a file, not a directory. Set "
                             f"ACE_HOME to a directory you own (ace-engine creates it if missing)") from exc
    check_private(path, os.stat(path))


def _ensure_child(path: str, *, strict: bool = False) -> None:
    """One directory below a checked root: created 0700, or an existing real directory that
    passes the checks. Never followed through a symlink."""
    try:
        os.mkdir(path, 0o700)
    except FileExistsError:
        pass
    check_private(path, os.lstat(path), strict=strict)


def ensure_private_dir(path: str) -> str:
    """Create `path` owner-only where missing and check what exists (see the module contract);
    returns `path`. Raises UnsafeDirError (or another OSError) when it cannot be used."""
    path = os.path.abspath(path)
    home = ace_home()
    if path == home or path.startswith(home.rstrip(os.sep) + os.sep):
        _ensure_root(home)
        current = home
        for part in os.path.relpath(path, home).split(os.sep):
            if part in ("", "."):
                continue
            current = os.path.join(current, part)
            _ensure_child(current)
    else:  # a store or file the caller placed elsewhere on purpose (tests, `--db`)
        _ensure_root(path)
    return path


def _fallback_candidates() -> list[tuple[str, str]]:
    """(top, leaf) pairs, most preferred first."""
    import zlib  # builtin C module: microseconds, and only on the degraded path

    home = ace_home()
    tag = f"{os.path.basename(home) or 'home'}-{zlib.crc32(home.encode('utf-8', 'replace')):08x}"
    uid = _uid()
    bases = []
    runtime = os.environ.get("XDG_RUNTIME_DIR")
    if runtime and os.path.isabs(runtime):
        bases.append((runtime, "ace-engine"))
    bases.append((os.environ.get("TMPDIR") or "/tmp", f"ace-engine-{uid if uid is not None else 'user'}"))
    return [(os.path.join(base, name), os.path.join(base, name, tag))
            for base, name in bases if os.path.isdir(base)]


def fallback_dir() -> str | None:
    """A private directory OUTSIDE `$ACE_HOME` for records that cannot be kept in it (read-only,
    full or refused `$ACE_HOME`): `$XDG_RUNTIME_DIR/ace-engine/<home-id>`, else
    `$TMPDIR/ace-engine-<uid>/<home-id>` (`/tmp` by default). Each level must be ours, private
    (0700) and not a symlink — in a sticky `/tmp` only its owner can replace it; None when no
    such directory can be had. `<home-id>` keeps two `$ACE_HOME`s from replaying each other's
    records."""
    for top, leaf in _fallback_candidates():
        try:
            _ensure_child(top, strict=True)
            _ensure_child(leaf, strict=True)
            return leaf
        except OSError:
            continue
    return None


def existing_fallback_dirs() -> list[str]:
    """The fallback directories that exist (and pass the checks) for this `$ACE_HOME`; creates
    nothing. Readers (replay, `ace doctor`, the log tail) look in all of them."""
    found = []
    for top, leaf in _fallback_candidates():
        try:
            check_private(top, os.lstat(top), strict=True)
            check_private(leaf, os.lstat(leaf), strict=True)
            found.append(leaf)
        except OSError:
            continue
    return found


def read_optional(path: str, error: type[Exception], fix: str, *, limit: int | None = None,
                  follow: bool = True) -> bytes | None:
    """The bytes of `path`, None when it does not exist; `error` ("<path>: cannot be read (<why>);
    <fix>") when it exists but cannot be read.

    With `limit` (small data: a config file), the file is read only as a regular file of at most
    `limit` bytes, by a bounded read: a FIFO (opened without blocking), a device (`/dev/zero`,
    `/dev/urandom`), a directory or a larger file is `error` without reading it; `follow=False` also
    refuses a symlink (a repository's file may point anywhere)."""
    if limit is None:
        try:
            with open(path, "rb") as fh:
                return fh.read()
        except FileNotFoundError:
            return None
        except OSError as exc:
            raise error(f"{path}: cannot be read ({exc.strerror}); {fix}") from exc
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        if not follow:
            flags |= getattr(os, "O_NOFOLLOW", 0)  # and said plainly below, where the OS lacks it
            if stat.S_ISLNK(os.lstat(path).st_mode):
                raise error(f"{path}: is a symbolic link, read only as a regular file; ignored ({fix})")
        fd = os.open(path, flags)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise error(f"{path}: cannot be read ({exc.strerror}); {fix}") from exc
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise error(f"{path}: not a regular file (a FIFO, a device or a directory); ignored ({fix})")
        if st.st_size > limit:
            raise error(f"{path}: {st.st_size} bytes, over the {limit}-byte limit of this file; ignored ({fix})")
        chunks: list[bytes] = []
        size = 0
        while size <= limit:
            chunk = os.read(fd, limit + 1 - size)
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
        if size > limit:  # grew while read
            raise error(f"{path}: over the {limit}-byte limit of this file; ignored ({fix})")
        return b"".join(chunks)
    except OSError as exc:
        raise error(f"{path}: cannot be read ({exc.strerror}); {fix}") from exc
    finally:
        os.close(fd)


def open_nofollow(path: str, flags: int, mode: int = 0o600) -> int:
    """`os.open` that refuses to follow a symlink at `path` (O_NOFOLLOW where the OS has it)."""
    return os.open(path, flags | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0), mode)
