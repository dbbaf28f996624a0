"""The engine's own log: one line per problem, rotated at 5 MB with 2 backups.

Hooks must never fail because logging failed, so every function here swallows OSError.
Deliberately not the `logging` package: it costs several milliseconds to import in a hook.
"""

import os
import time

from . import paths

MAX_BYTES = 5 * 1024 * 1024
BACKUPS = 2


def _rotate(path: str) -> None:
    for i in range(BACKUPS, 0, -1):
        src = path if i == 1 else f"{path}.{i - 1}"
        if os.path.exists(src):
            os.replace(src, f"{path}.{i}")


def write(level: str, where: str, message: str) -> None:
    """Append one line `time level pid where: message` to the log; never raises."""
    try:
        path = paths.log_path()
        paths.ensure_private_dir(os.path.dirname(path))
        try:
            if os.path.getsize(path) >= MAX_BYTES:
                _rotate(path)
        except OSError:
            pass
        stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        one_line = " ".join(str(message).split())[:4000]
        line = f"{stamp} {level} {os.getpid()} {where}: {one_line}\n"
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        try:
            os.write(fd, line.encode("utf-8", "replace"))
        finally:
            os.close(fd)
    except Exception:
        pass


def error(where: str, message: str) -> None:
    write("ERROR", where, message)


def warning(where: str, message: str) -> None:
    write("WARN", where, message)


def tail(n: int = 10, level: str | None = "ERROR") -> list[str]:
    """The last `n` lines (of `level`, if given) across the current log file and its backups."""
    path = paths.log_path()
    lines: list[str] = []
    for candidate in [f"{path}.{i}" for i in range(BACKUPS, 0, -1)] + [path]:
        try:
            with open(candidate, encoding="utf-8", errors="replace") as fh:
                lines.extend(fh.read().splitlines())
        except OSError:
            continue
    if level:
        lines = [line for line in lines if f" {level} " in line]
    return lines[-n:]
