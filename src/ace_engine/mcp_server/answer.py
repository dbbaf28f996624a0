"""What every MCP tool answer is made of: checked arguments, escaped lines, and a token budget.

Contract: a tool's arguments arrive as JSON from the model; `text_arg`, `int_arg`, `choice_arg`
and `since_arg` turn each into the value the tool uses or raise `ToolError`, whose message names
the argument, what was wrong and what to send instead — before the tool reads or writes
anything, so a bad call writes nothing. `Answer` collects the lines of an answer while they fit
its token budget (`retrieval.render.estimate_tokens`, the hooks' estimate): an item (a lesson
and its explanation, a failure and what followed) is kept whole or left out, and a cut answer
ends by saying how many items were left out and how to ask for them. Every stored text goes
through `line()`: one line, capped, escaped as injected text (`escape.injected`) — lesson text,
prompts and tool output are data, and no answer can open a tag or pose as a turn.

Cost: stdlib plus `escape` and the renderer's token estimate.
"""

from __future__ import annotations

import re
from datetime import datetime
from typing import Any

from ..core.errors import AceError
from ..core.escape import injected
from ..core.fmt import estimate_tokens, short_stamp

DEFAULT_TOKENS = 2000  # the budget of one answer (~7,000 characters), far below Claude Code's MCP cap
_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(m|min|minutes?|h|hours?|d|days?|w|weeks?)\s*$", re.IGNORECASE)
_UNIT_SECONDS = {"m": 60, "h": 3600, "d": 86400, "w": 7 * 86400}


class ToolError(AceError):
    """A tool call that cannot be answered as asked; the message says why and what to send."""


# -- arguments ---------------------------------------------------------------------------------------


def text_arg(args: dict[str, Any], name: str, *, required: bool = True, max_chars: int = 2000,
             default: str = "") -> str:
    value = args.get(name)
    if value is None:
        if required:
            raise ToolError(f"`{name}` is required: give it as a string")
        return default
    if not isinstance(value, str):
        raise ToolError(f"`{name}` must be a string, not {type(value).__name__} ({_show(value)})")
    value = value.strip()
    if required and not value:
        raise ToolError(f"`{name}` is empty: give a non-empty string")
    if len(value) > max_chars:
        raise ToolError(f"`{name}` is {len(value):,} characters long; at most {max_chars:,} are accepted")
    return value


def int_arg(args: dict[str, Any], name: str, default: int, low: int, high: int) -> int:
    value = args.get(name)
    if value is None:
        return default
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, str) and value.strip().lstrip("-").isdigit():
        value = int(value.strip())
    if isinstance(value, bool) or not isinstance(value, int):
        raise ToolError(f"`{name}` must be a whole number from {low} to {high}, not {_show(value)}")
    if not low <= value <= high:
        raise ToolError(f"`{name}` must be from {low} to {high}; got {value}")
    return value


def choice_arg(args: dict[str, Any], name: str, choices: tuple[str, ...]) -> str:
    value = args.get(name)
    if not isinstance(value, str) or value.strip().lower() not in choices:
        raise ToolError(f"`{name}` must be one of {', '.join(choices)}; got {_show(value)}")
    return value.strip().lower()


def since_arg(args: dict[str, Any], name: str, now: float) -> float | None:
    """A point in time: a duration back from now (`30m`, `24h`, `7d`, `2w`) or a date / date and
    time (`2026-11-01`, `2026-11-01T14:00`, local time). None when not given."""
    value = args.get(name)
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    if isinstance(value, str):
        m = _DURATION.match(value)
        if m:
            return now - float(m.group(1)) * _UNIT_SECONDS[m.group(2)[0].lower()]
        try:
            return datetime.fromisoformat(value.strip()).timestamp()
        except ValueError:
            pass
    raise ToolError(f"`{name}` must be a duration back from now (`24h`, `7d`, `2w`) or a date "
                    f"(`2026-11-01`, `2026-11-01T14:00`); got {_show(value)}")


def unknown_args(args: dict[str, Any], known: tuple[str, ...]) -> None:
    extra = sorted(set(args) - set(known))
    if extra:
        raise ToolError(f"unknown argument{'s' if len(extra) > 1 else ''} {', '.join(f'`{e}`' for e in extra)}; "
                        f"this tool takes {', '.join(f'`{k}`' for k in known)}")


def _show(value: object) -> str:
    text = repr(value)
    return injected(text if len(text) <= 60 else text[:57] + "...")


# -- lines -------------------------------------------------------------------------------------------


def line(text: object, max_chars: int = 400) -> str:
    """Stored text as one safe line: escaped as injected text, cut at `max_chars` with `…`."""
    out = injected(text)
    return out if len(out) <= max_chars else out[: max_chars - 1].rstrip() + "…"


when = short_stamp  # a local time, short: `14:05` today, `2026-11-20 14:05` otherwise; `-` for none


def plural(n: int, word: str, many: str | None = None) -> str:
    return f"{n:,} {word if n == 1 else (many or word + 's')}"


class Answer:
    """The lines of one answer, kept while they fit `budget` tokens; an item is all or nothing."""

    def __init__(self, budget: int = DEFAULT_TOKENS) -> None:
        self.budget = budget
        self.lines: list[str] = []
        self.used = 0
        self.kept = 0
        self.left_out = 0

    def head(self, *lines: str) -> None:
        """Lines that always open the answer (the budget leaves room for them)."""
        for text in lines:
            self.lines.append(text)
            self.used += estimate_tokens(text) + 1

    def item(self, lines: list[str]) -> bool:
        """Add one result's lines if they all fit; else count it as left out."""
        cost = sum(estimate_tokens(text) + 1 for text in lines)
        if self.left_out or self.used + cost > self.budget:
            self.left_out += 1
            return False
        self.lines.extend(lines)
        self.used += cost
        self.kept += 1
        return True

    def text(self, how_to_narrow: str) -> str:
        if self.left_out:
            more = plural(self.left_out, "more result")
            self.lines.append(f"(cut to fit the {self.budget:,}-token answer budget: {more} not shown; "
                              f"{how_to_narrow})")
        return "\n".join(self.lines)
