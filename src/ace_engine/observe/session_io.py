"""Reading any agent's session file safely — the primitives the Claude Code, Codex and Gemini
readers share (`observe.transcript`, `observe.session_files`):

    opened(path, hint)   the file open as text, or a TranscriptError naming it and the fix (missing,
                         a directory, a FIFO or device that would block, no permission, an I/O error)
    too_deep(value)      does a parsed line nest past MAX_DEPTH (checked iteratively, before anything
                         recursive reads it)
    shrink(value)        strings longer than every capture cap cut (head and tail kept)
    epoch(stamp)         an ISO-8601 time as epoch seconds

Pure apart from `opened`'s one open; stdlib and the capture caps only.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime
from typing import Any, TextIO

from ..core.errors import AceError
from ..redact.sanitize import cap

MAX_DEPTH = 100  # containers nested deeper than this are no Claude Code entry (theirs nest < 10)
_LONGEST = 64_000  # above every capture cap (`capture.max_*_chars`): cap() keeps head and tail


class TranscriptError(AceError, ValueError):
    """A file that is not a Claude Code transcript we can read; the message says what to give."""


def epoch(stamp: object) -> float | None:
    """An ISO-8601 time (`2025-10-29T00:59:38.317Z`) as epoch seconds, else None."""
    if not isinstance(stamp, str):
        return None
    try:
        return datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None


def shrink(value: Any) -> Any:
    if isinstance(value, str):
        return cap(value, _LONGEST) if len(value) > _LONGEST else value
    if isinstance(value, dict):
        return {k: shrink(v) for k, v in value.items()}
    if isinstance(value, list):
        return [shrink(v) for v in value]
    return value


def too_deep(value: Any, limit: int = MAX_DEPTH) -> bool:
    """Does `value` nest containers deeper than `limit`? Iterative: it must not recurse itself."""
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if depth > limit:
            return True
        if isinstance(item, dict):
            stack.extend((v, depth + 1) for v in item.values() if isinstance(v, (dict, list)))
        elif isinstance(item, list):
            stack.extend((v, depth + 1) for v in item if isinstance(v, (dict, list)))
    return False


@contextmanager
def opened(path: str, hint: str) -> Iterator[TextIO]:
    """`path` open for reading as text, for every agent's session file; any failure to open or
    read it (missing, a directory, a FIFO or device, which would block, no permission, an I/O
    error) is a TranscriptError that names it and `hint`."""
    try:
        if not os.path.isdir(path) and not stat.S_ISREG(os.stat(path).st_mode):
            raise TranscriptError(f"{path} is not a regular file; {hint}")
        with open(path, encoding="utf-8", errors="replace") as fh:
            yield fh
    except FileNotFoundError:
        raise TranscriptError(f"{path} does not exist; {hint}") from None
    except IsADirectoryError:
        raise TranscriptError(f"{path} is a directory; {hint}, or use --all-transcripts") from None
    except OSError as exc:
        raise TranscriptError(f"cannot read {path} ({exc.strerror or exc}); check its permissions") from None
