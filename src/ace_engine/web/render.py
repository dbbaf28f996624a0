"""Rendering for both dashboards: one Jinja2 environment and the filters their templates use.

Contract: `environment(own_templates, now=…, static=…, static_prefix=…)` loads a template from the
app's own folder first, then from `web/templates` (the frame `base.html`, `_macros.html`,
`_charts.html`). Autoescaping is on for every template whatever its name, and every value is first
passed through `escape.strip_controls` (control and direction-override characters made visible),
so stored text — a lesson, a prompt, a tool's output — always shows as text. The filters: `ago`,
`when`, `iso` (times as `core.fmt` writes them everywhere; `ago` relative to `now()`), `pct`,
`num`, `ms`, `size` (`core.fmt.size`: binary units), `short` (cut with an ellipsis) and `lesson`
(`lesson_html`: a lesson's words with its backtick spans as `<code>`, safely). Globals:
`static(name)` (a static file's hashed URL under `static_prefix`), `sparkline` and `url`
(`page.page_url`).

Cost: importing this imports Jinja2 and markupsafe; templates are compiled on first use and cached.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Sequence

import jinja2
import markupsafe

from ..core import escape, fmt
from . import charts, page

TEMPLATES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "templates")
STATIC = os.path.join(os.path.dirname(os.path.abspath(__file__)), "static")
_CODE_SPAN = re.compile(r"`([^`\n]+)`")


def environment(own_templates: str | Sequence[str], *, now: Callable[[], float], static: page.StaticFiles,
                static_prefix: str = "") -> jinja2.Environment:
    """The Jinja2 environment of an app whose own templates are in `own_templates`."""
    own = [own_templates] if isinstance(own_templates, str) else list(own_templates)
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader([*own, TEMPLATES]),
        autoescape=True,  # every template, whatever its name
        finalize=_visible,
        trim_blocks=True, lstrip_blocks=True,  # a missing key of a stored JSON field renders as nothing
    )
    env.filters.update(
        ago=lambda at: fmt.ago(at, now()),
        when=lambda at: fmt.stamp(at, missing="—"),
        iso=iso,
        pct=lambda v: "—" if v is None else f"{float(v) * 100:.0f}%",
        num=lambda v: f"{int(v or 0):,}",
        ms=lambda v: "—" if v is None else f"{float(v):,.1f} ms",
        size=fmt.size,
        short=short,
        lesson=lesson_html,
    )
    env.globals.update(static=lambda name: f"{static_prefix}/static/{static[name][0]}/{name}",
                       sparkline=charts.sparkline, url=page.page_url)
    return env


def iso(at: object) -> str:
    """A stored time for a `<time datetime>` attribute (`fmt.iso_utc`); empty for none or a bad
    value (what `fmt.stamp` refuses)."""
    return fmt.iso_utc(float(at)) if isinstance(at, (int, float)) and fmt.stamp(at, missing="") else ""


def short(text: str | None, n: int = 160) -> str:
    return text or "" if len(text or "") <= n else (text or "")[: n - 1] + "…"


def lesson_html(text: object, limit: int | None = None) -> markupsafe.Markup:
    """Lesson text as the dashboards show it — the one helper their templates use for a lesson's
    words: cut to `limit` characters, escaped (`escape.html`: controls made visible, `&<>"'`
    escaped), then each backtick span set as inline code (`<code>…</code>`). The spans are found
    in the escaped text, so nothing inside one can open a tag; an unpaired backtick (a cut span)
    stays a backtick."""
    shown = short(str(text or ""), limit) if limit else str(text or "")
    return markupsafe.Markup(_CODE_SPAN.sub(r"<code>\1</code>", escape.html(shown)))


def _visible(value: object) -> object:
    """Each value before it is escaped: control and direction-override characters shown as `\\xNN`
    (`escape.strip_controls`, as in the terminal). Markup — a macro's output, already built from
    escaped values — passes as it is."""
    if isinstance(value, str) and not isinstance(value, markupsafe.Markup):
        return escape.strip_controls(value)
    return value
