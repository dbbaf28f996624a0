"""The engine's own log: one line per problem, rotated at 5 MB with 2 backups.

Contract: every line goes through the redactor (`redact.redactor.redact`, imported only when a
line is actually written, so a hook that logs nothing pays nothing); the file is opened
owner-only (0600) without following a symlink; when `$ACE_HOME` cannot take it (read-only,
full, refused as unsafe), the line goes to `ace.log` in the private fallback directory outside
it (`paths.fallback_dir`), so a degraded hook still leaves its cause somewhere. Hooks must never
fail because logging failed, so every function here swallows errors.

Deliberately not the `logging` package: it costs several milliseconds to import in a hook.
"""

import os
import time

from . import paths
from .fmt import iso_utc

MAX_BYTES = 5 * 1024 * 1024
BACKUPS = 2
FALLBACK_NAME = "ace.log"


def _rotate(path: str) -> None:
    for i in range(BACKUPS, 0, -1):
        src = path if i == 1 else f"{path}.{i - 1}"
        if os.path.lexists(src):
            os.replace(src, f"{path}.{i}")  # renames a symlink itself, never its target


def _append(path: str, line: bytes) -> None:
    try:
        if os.lstat(path).st_size >= MAX_BYTES:
            _rotate(path)
    except OSError:
        pass
    fd = paths.open_nofollow(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    try:
        os.write(fd, line)
    finally:
        os.close(fd)


def _line(level: str, where: str, message: str) -> bytes:
    stamp = iso_utc(time.time())
    text = f"{where}: {' '.join(str(message).split())}"
    try:
        from ..redact.redactor import redact

        text = redact(text)
    except Exception:  # noqa: BLE001 — a redactor bug must not cost the line; keep it short
        text = text[:200]
    return f"{stamp} {level} {os.getpid()} {text[:4000]}\n".encode("utf-8", "replace")


def write(level: str, where: str, message: str) -> None:
    """Append one line `time level pid where: message` to the log; never raises."""
    try:
        line = _line(level, where, message)
    except Exception:  # noqa: BLE001
        return
    try:
        path = paths.log_path()
        paths.ensure_private_dir(os.path.dirname(path))
        _append(path, line)
        return
    except Exception:  # noqa: BLE001 — $ACE_HOME unusable: try outside it
        pass
    try:
        fallback = paths.fallback_dir()
        if fallback:
            _append(os.path.join(fallback, FALLBACK_NAME), line)
    except Exception:  # noqa: BLE001
        pass


def error(where: str, message: str) -> None:
    write("ERROR", where, message)


def warning(where: str, message: str) -> None:
    write("WARN", where, message)


def _read_lines(path: str) -> list[str]:
    try:
        fd = paths.open_nofollow(path, os.O_RDONLY)
    except OSError:
        return []
    with open(fd, encoding="utf-8", errors="replace") as fh:
        return fh.read().splitlines()


def tail(n: int = 10, level: str | None = "ERROR") -> list[str]:
    """The last `n` lines (of `level`, if given) across the log, its backups and the fallback
    log outside `$ACE_HOME`, in time order."""
    path = paths.log_path()
    lines: list[str] = []
    for candidate in [f"{path}.{i}" for i in range(BACKUPS, 0, -1)] + [path]:
        lines.extend(_read_lines(candidate))
    extra: list[str] = []
    for fallback in paths.existing_fallback_dirs():
        extra.extend(_read_lines(os.path.join(fallback, FALLBACK_NAME)))
    if extra:
        lines = sorted(lines + extra, key=lambda line: line[:20])  # ISO stamps sort as text
    if level:
        lines = [line for line in lines if f" {level} " in line]
    return lines[-n:]
