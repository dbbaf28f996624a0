"""The model tokens of a session, where its transcript records them (Claude Code, Codex CLI).

Contract: `transcript_tokens(path)` is the session's total model tokens — input (cache writes and
reads included) plus output — summed over a Claude Code transcript's assistant messages
(`message.usage`, counted once per API response: the lines of one response share its `requestId`
or message id), or a Codex rollout's last `token_count` total; None when the file records none or
cannot be read. The hooks capture no token counts, so this is the only source; a transcript moved
or deleted since (or never written: an imported session) leaves the session out of this outcome.

Untrusted input: the file is read as data only — JSON lines, numbers taken where they are
non-negative integers, everything else skipped; a symlink is refused and the read is capped at
`MAX_BYTES`, so a huge or hostile file costs a bounded read, never the report.

Cost: one sequential read of the transcript (a few MB for a long session); report time only.
"""

from __future__ import annotations

import os
import stat
from typing import Any

from ..core import paths
from ..core.files import json_object

MAX_BYTES = 64 * 1024 * 1024
_KEYS = ("input_tokens", "output_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")


def _count(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 0


def _lines(path: str) -> list[bytes] | None:
    try:
        fd = paths.open_nofollow(path, os.O_RDONLY)
    except OSError:
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):  # a directory, a FIFO, a device: not a transcript
            return None
        with os.fdopen(os.dup(fd), "rb") as handle:
            return handle.read(MAX_BYTES).splitlines()
    except OSError:
        return None
    finally:
        os.close(fd)


def transcript_tokens(path: str | None) -> int | None:
    if not path:
        return None
    lines = _lines(path)
    if lines is None:
        return None
    claude: dict[str, int] = {}
    codex: int | None = None
    for n, line in enumerate(lines):
        entry = json_object(line)
        if entry is None:
            continue
        message = entry.get("message")
        if isinstance(message, dict) and isinstance(message.get("usage"), dict):
            usage = message["usage"]
            key = str(entry.get("requestId") or message.get("id") or f"line-{n}")
            claude[key] = sum(_count(usage.get(k)) for k in _KEYS)
            continue
        payload = entry.get("payload")
        if isinstance(payload, dict) and payload.get("type") == "token_count":
            info = payload.get("info")
            total = info.get("total_token_usage") if isinstance(info, dict) else None
            if isinstance(total, dict) and _count(total.get("total_tokens")):
                codex = _count(total.get("total_tokens"))
    if claude:
        return sum(claude.values())
    return codex
