"""How ace-engine writes times, sizes and token counts for people and budgets: one definition of each.

Contract: pure functions of their arguments (a time is passed in as epoch seconds, "now" too where
the text depends on it); local time unless the name says UTC. Each format exists once, here, and
every surface — the CLI, the hooks' injected blocks, MCP answers, the dashboards, exports —
calls it:

- `stamp(at)`: a local time to the minute, `2026-11-20 14:05` (`seconds=True` adds `:07`);
- `iso_utc(at)`: `2026-11-20T14:05:07Z`, for files and JSON;
- `short_stamp(at, now)`: `14:05` on the day of `now`, else `stamp(at)`;
- `day_relative(at, now)`: `today 14:05`, `yesterday 17:40`, `3 days ago`;
- `ago(at, now)`: `5 minutes ago`, `2 days ago`, `just now`;
- `size(n)`: bytes in binary units, `812 B`, `3.4 KiB`, `1.2 MiB`;
- `estimate_tokens(text)`: the one token estimate (3.5 ASCII characters per token).

Cost: on every hook's path, so it imports `time` only (not `math`, nor `__future__`:
the annotations are evaluated, and cost nothing) and defines functions.
"""

import time

__all__ = ["CHARS_PER_TOKEN", "ago", "day_relative", "estimate_tokens", "iso_utc", "tokens_of", "short_stamp", "size",
           "stamp"]

CHARS_PER_TOKEN = 3.5

_MINUTE = "%Y-%m-%d %H:%M"
_SECOND = "%Y-%m-%d %H:%M:%S"


def _when(at: object) -> float | None:
    """`at` as epoch seconds, or None for a missing or non-numeric value (a bool is not a time)."""
    if isinstance(at, bool) or not isinstance(at, (int, float)) or not at:
        return None
    return float(at)


def stamp(at: object, *, seconds: bool = False, missing: str = "-") -> str:
    """A stored time in local time, to the minute (or second); `missing` for none or a bad value."""
    moment = _when(at)
    if moment is None:
        return missing
    try:
        return time.strftime(_SECOND if seconds else _MINUTE, time.localtime(moment))
    except (OverflowError, OSError, ValueError):
        return missing


def iso_utc(at: float) -> str:
    """`at` as ISO 8601 in UTC, to the second, with `Z`."""
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(at))


def short_stamp(at: float | None, now: float | None = None) -> str:
    """The clock alone (`14:05`) for a time on the local day of `now`, else `stamp(at)`; `-` for none."""
    if not at:
        return "-"
    moment = time.localtime(at)
    if now is not None and moment[:3] == time.localtime(now)[:3]:
        return time.strftime("%H:%M", moment)
    return time.strftime(_MINUTE, moment)


def day_relative(at: float, now: float) -> str:
    """`today 14:05`, `yesterday 17:40`, `3 days ago` — counted in local calendar days."""
    then, today = time.localtime(at), time.localtime(now)
    days = round((time.mktime(today[:3] + (0, 0, 0, 0, 0, -1)) - time.mktime(then[:3] + (0, 0, 0, 0, 0, -1))) / 86400)
    clock = time.strftime("%H:%M", then)
    if days <= 0:
        return f"today {clock}"
    if days == 1:
        return f"yesterday {clock}"
    return f"{days} days ago"


_SPANS = ((86400 * 365, "year"), (86400 * 30, "month"), (86400, "day"), (3600, "hour"), (60, "minute"))


def ago(at: object, now: float, *, missing: str = "never") -> str:
    """How long before `now` `at` was, in its largest whole unit: `1 hour ago`, `just now`."""
    moment = _when(at)
    if moment is None:
        return missing
    elapsed = max(0.0, now - moment)
    for span, unit in _SPANS:
        if elapsed >= span:
            n = int(elapsed // span)
            return f"{n} {unit}{'s' if n != 1 else ''} ago"
    return "just now"


def size(num: float | None) -> str:
    """A byte count in binary units (KiB = 1024 bytes): whole bytes, else one decimal."""
    value = float(num or 0)
    for unit in ("B", "KiB", "MiB"):
        if value < 1024:
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    return f"{value:.1f} GiB"


def estimate_tokens(text: str) -> int:
    """Tokens `text` will take, estimated without a tokenizer (hooks cannot load one).

    Claude's tokenizer gives about 4 characters per token on English prose and about 3 on code,
    paths and ids; 3.5 per ASCII character sits between and errs high on prose, so a block we
    think fits does fit. Other characters (✓, accents, CJK) are counted as one token each, which
    is close for CJK and an overestimate for the rest."""
    if not text:
        return 0
    return tokens_of(len(text), len(text.encode("ascii", "ignore")))


def tokens_of(length: int, ascii_chars: int) -> int:
    """`estimate_tokens` of a text of `length` characters, `ascii_chars` of them ASCII: the estimate
    is additive, so a block grown line by line is counted without joining it again."""
    tokens = ascii_chars / CHARS_PER_TOKEN + (length - ascii_chars)
    whole = int(tokens)
    return whole if whole == tokens else whole + 1  # the ceiling, without importing `math`
