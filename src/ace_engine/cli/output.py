"""Printing for the CLI: rich tables for people, plain JSON with `--json` for scripts."""

import json
import sys
import time

import click
from rich.console import Console
from rich.table import Table

console = Console()


def emit_json(data) -> None:
    click.echo(json.dumps(data, indent=2, ensure_ascii=False, default=str))


def fail(message: str, code: int = 1) -> None:
    """Print an error that names the problem and the fix, then exit non-zero."""
    click.echo(f"error: {message}", err=True)  # plain: never wrapped, never parsed as markup
    sys.exit(code)


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


def table(title: str | None, columns: list[str], rows: list[list]) -> None:
    t = Table(title=title, title_justify="left", show_lines=False)
    for column in columns:
        t.add_column(column, overflow="fold")
    for row in rows:
        t.add_row(*[("-" if v is None else str(v)) for v in row])
    console.print(t)
