"""Printing for the CLI: rich tables for people, plain JSON with `--json` for scripts.

Text is data. Everything a view shows came, at some point, from a tool's output,
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

Layout: every listing goes through `table()`, so no command can forget these rules.
A table is drawn only when it fits the terminal without cutting its short columns (ids, times,
names) and leaves each long-text column (a lesson, an event's content; any column with a value
over `LONG_CELL` characters, or those named in `body=`) at least `MIN_BODY` cells; otherwise the
same rows print as a list, one record per block: the first column and the short fields on one
line, the long text wrapped under it in full, in reading order. `--wide` (`common.wide_option`)
forces the table. A listing longer than the screen goes through a pager (`click.echo_via_pager`:
$PAGER, else `less`, with `LESS=-FRX` unless set, as git does) only when stdout is a terminal and
`ace --no-pager` was not given; piped output and `--json` never page. `details()` shows one
record's fields as an aligned key/value grid, `quote()` stored text as an indented paragraph.
`plural(n, word)` is the one way a count is written next to its noun ("1 bullet", "3 bullets").

Cost: rich is imported with the CLI anyway; each value costs a few regex passes, a listing one
measuring pass over its cells.
"""

from __future__ import annotations

import json
import os
import re
import sys
from collections.abc import Collection, Sequence
from typing import IO, Any, NoReturn

import click
from rich.cells import cell_len
from rich.console import Console, Group, RenderableType
from rich.table import Table
from rich.text import Text

from ..core import escape, fmt

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
    return fmt.stamp(epoch, seconds=True)


def iso(epoch: float | None) -> str | None:
    return None if epoch is None else fmt.iso_utc(epoch)


size = fmt.size  # bytes in KiB / MiB, as every surface writes them


def clip(text: str | None, limit: int) -> str:
    """`text` on one line, cut to `limit` characters with a visible `…` when longer (never an id:
    ids are shown whole)."""
    one = " ".join((text or "").split())
    return one if len(one) <= limit else one[:limit - 1] + "…"


def plural(count: int, word: str, many: str | None = None) -> str:
    """`count` and its noun: "1 bullet", "0 bullets", "2 entries" (`many` for irregular plurals)."""
    return f"{count} {word if count == 1 else (many or word + 's')}"


# -- listings ------------------------------------------------------------------------------------

LONG_CELL = 40  # a column holding a value longer than this is long text (wrapped, never cut)
MIN_BODY = 40  # a table is drawn only when every long-text column keeps at least this many cells
WIDE_KEY = "ace.wide"  # click `Context.meta` flags (shared by a command and its group)
NO_PAGER_KEY = "ace.no_pager"


def _flag(key: str) -> bool:
    ctx = click.get_current_context(silent=True)
    return bool(ctx is not None and ctx.meta.get(key))


def _restyled(text: Text, style: str) -> Text:
    out = text.copy()
    out.stylize(style)
    return out


def _indented(text: Text, width: int, indent: int = 2) -> Text:
    """`text` wrapped to `width` with every line indented (no padding after the words)."""
    out = Text()
    for number, line in enumerate(text.wrap(console, max(width - indent, 20), overflow="fold")):
        if number:
            out.append("\n")
        out.append(" " * indent)
        out.append_text(line)
    return out


def _width(text: Text) -> int:
    return max((cell_len(line) for line in text.plain.split("\n")), default=0)


def _fits(heads: list[Text], cells: list[list[Text]], long: set[int], width: int) -> bool:
    """Whether a table of these cells fits `width` with its short columns at their full width and
    each long one at `MIN_BODY` cells (or its own width, when less). Each column costs its
    padding (2) and a border (1); the table one more border."""
    need = 1
    for i, head in enumerate(heads):
        natural = max([_width(head)] + [_width(row[i]) for row in cells])
        need += 3 + (min(natural, MIN_BODY) if i in long else natural)
    return need <= width


def _grid(title: Text | None, heads: list[Text], cells: list[list[Text]], long: set[int], fits: bool) -> Table:
    t = Table(title=title, title_justify="left", show_lines=False)
    for i, head in enumerate(heads):
        # When the table fits, short columns never wrap (an id is never folded); a forced `--wide`
        # table at any width folds what it must instead of cutting it.
        t.add_column(head, overflow="fold", no_wrap=fits and i not in long)
    for row in cells:
        t.add_row(*row)
    return t


def _records(title: Text | None, heads: list[Text], cells: list[list[Text]], long: set[int],
             bare: set[int], label_first: bool = False) -> Group:
    """The list layout, one block per row: the first column (bold) and the `bare` short fields on
    one line, then the labelled short fields (`label: value`) — on that line when it has room,
    else on their own indented line — then each long field wrapped under it, indented, the first
    without its label unless `label_first`. Empty fields (`-`, "") are left out."""
    parts: list[RenderableType] = []
    width = console.width
    if title is not None:
        parts.append(_restyled(title, "bold"))
    for number, row in enumerate(cells):
        if long and number:
            parts.append(Text())
        lead, meta = _restyled(row[0], "bold"), Text()
        for i, value in enumerate(row[1:], 1):
            if i in long or value.plain.strip() in ("", "-"):
                continue
            if i in bare or not heads[i].plain:
                lead.append(" · ", style="dim")
                lead.append_text(value)
                continue
            if meta.plain:
                meta.append(" · ", style="dim")
            meta.append_text(_restyled(heads[i], "dim"))
            meta.append(": ", style="dim")
            meta.append_text(value)
        if meta.plain and _width(lead) + 3 + _width(meta) <= width:
            parts.append(Text.assemble(lead, (" · ", "dim"), meta))
        else:
            parts.append(lead)
            if meta.plain:
                parts.append(_indented(meta, width))
        shown = 0
        for i in sorted(long):
            value = row[i]
            if value.plain.strip() in ("", "-"):
                continue
            text = value.copy()
            if shown or label_first:
                label = Text(f"{heads[i].plain}: ", style="dim")
                text = label.append_text(text)
            parts.append(_indented(text, width))
            shown += 1
    return Group(*parts)


def _show(renderable: RenderableType) -> None:
    """Print `renderable`; through the pager when it is longer than the screen and stdout is a
    terminal (never when piped, never with `ace --no-pager`)."""
    paging = not _flag(NO_PAGER_KEY) and sys.stdout.isatty() and console.is_terminal and not console.is_dumb_terminal
    if not paging:
        console.print(renderable)
        return
    with console.capture() as captured:
        console.print(renderable)
    text = captured.get()
    if text.count("\n") >= console.height - 1:
        # As git does: unless the user chose less's options, keep colours (-R) and leave the text on
        # the screen after quitting (-X); -F: a screenful after all (resized) is just printed.
        default_less = "LESS" not in os.environ
        if default_less:
            os.environ["LESS"] = "-FRX"
        try:
            click.echo_via_pager(text)
        finally:
            if default_less:
                os.environ.pop("LESS", None)
    else:
        sys.stdout.write(text)
        sys.stdout.flush()


def table(title: str | None, columns: list[str], rows: Sequence[Sequence[Any]], *,
          body: Collection[str] | None = None, bare: Collection[str] = (), label_body: bool = False) -> None:
    """A listing of plain values (None shows as `-`; no value is read as markup): a table when it
    fits, else a list (see the module's Layout). `body` names the long-text columns (default: any
    column holding a value over `LONG_CELL` characters); `bare` the short columns the list shows
    without their label (a section name, counters that say what they are); `label_body`: the list
    labels the first long column too (when no one column is "the" content)."""
    heads = [_text(column) for column in columns]
    cells = [[_text(v) for v in row] for row in rows]
    if body is None:
        long = {i for i in range(len(columns)) if any(_width(row[i]) > LONG_CELL for row in cells)}
    else:
        long = {i for i, column in enumerate(columns) if column in body}
    long.discard(0)  # the first column leads each record: it is never body text
    heading = None if title is None else _text(title)
    fits = _fits(heads, cells, long, console.width)
    if fits or _flag(WIDE_KEY):
        _show(_grid(heading, heads, cells, long, fits))
    else:
        _show(_records(heading, heads, cells, long, {i for i, column in enumerate(columns) if column in bare},
                       label_body))


def quote(text: object, indent: int = 4) -> None:
    """Stored text (an injected block, a lesson) as an indented paragraph: wrapped to the
    terminal, every line indented, nothing read as markup."""
    _show(_indented(_text(text), console.width, indent))


def details(title: str | None, pairs: Sequence[tuple[str, Any]]) -> None:
    """One record's fields: names in a column, values wrapped beside them (never cut)."""
    grid = Table.grid(padding=(0, 2))
    grid.add_column(no_wrap=True, style="bold")
    grid.add_column(overflow="fold")
    for name, value in pairs:
        grid.add_row(_text(name), _text(value))
    _show(Group(_restyled(_text(title), "bold"), grid) if title is not None else grid)
