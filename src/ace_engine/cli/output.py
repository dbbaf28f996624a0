"""Printing for the CLI: rich tables for people, plain JSON with `--json` for scripts.

Text is data (issue 7, part 8). Everything a view shows came, at some point, from a tool's output,
a transcript, a repository or an imported file, so stored text reaches the terminal only through
the functions here, and none of them lets it be read as rich markup or as a terminal escape:

* `table(title, columns, rows)` takes plain values; each becomes a rich `Text` built from
  `escape.terminal(..., markup=False)` (controls and ANSI escapes shown as `\\x1b`, never parsed).
  A cell may be a `Text` only when a view styles one with `styled()`, which cleans it the same way.
* `say(template, *values)` prints one line: `template` is markup the code wrote ("[bold]{}[/]"),
  each `{}` is filled with a value as literal text — inserted after the markup is parsed, so a
  value can neither open, close nor escape a tag, whatever brackets or backslashes it holds.
* `plain(text)` for `click.echo` and `fail()`: controls made visible, no markup involved.
* `fail(message)` and `CommandError(message)`: `error: <message>` on stderr and a non-zero exit;
  `cli/app.py` turns any `errors.AceError` a command lets through into a `CommandError`.
* `emit_json` (and `json_safe` for other JSON text) escapes, on top of what `json.dumps` does,
  the C1 controls, line separators, direction overrides and lone surrogates it leaves raw with
  `ensure_ascii=False` (the JSON value is unchanged).

Views never call `console.print` with stored text (tests/security/test_terminal_text.py checks the
sources); `console` stays exported for progress bars and spinners, whose text the code writes.
Cost: rich is imported with the CLI anyway; each value costs a few regex passes.
"""

from __future__ import annotations

import json
import re
import sys
import time
from typing import IO, Any, NoReturn

import click
from rich.console import Console
from rich.table import Table
from rich.text import Text

from .. import escape

console = Console()

# Placeholder for a `say` value while its template's markup is parsed: a private-use character
# no template contains and that rich neither strips nor treats as markup.
_SLOT = "\ue000"
# Characters json.dumps(ensure_ascii=False) leaves raw but a terminal may act on (C1 controls,
# U+2028/9, direction overrides) or cannot encode (lone surrogates); `\uXXXX` is the same JSON.
_JSON_RAW = re.compile("[\x7f-\x9f\u2028\u2029\u200e\u200f\u202a-\u202e\u2066-\u2069\ud800-\udfff]")


def plain(text: object) -> str:
    """`text` for `click.echo`: every control character and escape shown as `\\xNN`, tabs and
    newlines kept."""
    return escape.terminal(text, markup=False)


def styled(value: object, style: str = "") -> Text:
    """A table cell or `say` value with a style the code chose (`styled(status, "green")`); the
    value itself is literal text."""
    return Text(escape.terminal(value, markup=False), style=style)


def _text(value: object) -> Text:
    if isinstance(value, Text):  # made by styled(): already clean
        return value
    return Text("-" if value is None else escape.terminal(value, markup=False))


def say(template: str = "", *values: object) -> None:
    """Print one line: `template` is rich markup written in the code, each `{}` in it (in text,
    never inside a `[tag]`) is filled with the next value as literal text — never markup, never a
    terminal escape. A value may be `styled()`; the template's tags around its `{}` apply too."""
    parts = template.split("{}")
    if len(parts) - 1 != len(values):
        raise TypeError(f"say(): {len(parts) - 1} {{}} in the template, {len(values)} values")
    parsed = Text.from_markup(_SLOT.join(parts), emoji=False)
    out = Text()
    start = 0
    slots = iter(values)
    for at, char in enumerate(parsed.plain):
        if char != _SLOT:
            continue
        out.append_text(parsed[start:at])
        value = _text(next(slots)).copy()
        for span in parsed.spans:  # the template's styles around the slot apply to the value
            if span.start <= at < span.end:
                value.stylize(span.style)
        out.append_text(value)
        start = at + 1
    out.append_text(parsed[start:])
    console.print(out, highlight=False)


def json_safe(text: str) -> str:
    """JSON text (from `json.dumps(..., ensure_ascii=False)`) fit for a terminal: the characters
    that escaping leaves raw written as `\\uXXXX` — the same JSON value."""
    return _JSON_RAW.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def emit_json(data: Any) -> None:
    click.echo(json_safe(json.dumps(data, indent=2, ensure_ascii=False, default=str)))


def fail(message: str, code: int = 1) -> NoReturn:
    """Print an error that names the problem and the fix, then exit non-zero. The message may
    quote stored or user text: it is printed plain, controls made visible."""
    click.echo(f"error: {plain(message)}", err=True)  # plain: never wrapped, never parsed as markup
    sys.exit(code)


class CommandError(click.ClickException):
    """`fail()` as an exception, for click to show: the same `error: <message>` line, exit code 1."""

    def show(self, file: IO[Any] | None = None) -> None:
        click.echo(f"error: {plain(self.format_message())}", err=True, file=file)


def when(epoch: float | None) -> str:
    if not epoch:
        return "-"
    return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(epoch))


def iso(epoch: float | None) -> str | None:
    if epoch is None:
        return None
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(epoch))


def size(num: float) -> str:
    for unit in ("B", "KiB", "MiB", "GiB"):
        if num < 1024 or unit == "GiB":
            return f"{num:.0f} {unit}" if unit == "B" else f"{num:.1f} {unit}"
        num /= 1024
    return f"{num} B"


def table(title: str | None, columns: list[str], rows: list[list[Any]]) -> None:
    """A table of plain values (None shows as `-`); no value is read as markup."""
    t = Table(title=None if title is None else _text(title), title_justify="left", show_lines=False)
    for column in columns:
        t.add_column(_text(column), overflow="fold")
    for row in rows:
        t.add_row(*[_text(v) for v in row])
    console.print(t)
