"""The dashboard as one Starlette app: `create_app(open_store, token=…)`.

Contract: `open_store()` returns a store with the dashboard's reads (`store/views_sql.py`); the app
opens one per request and closes it. `token` is this run's secret (`auth.new_token`): `auth.Guard`
wraps every route, static files and unknown paths included, so nothing answers without it. Pages
are rendered on the server by Jinja2 with autoescaping on for every template, and with every value
first passed through `escape.strip_controls` (control and bidirectional-override characters made
visible), so stored text — a lesson, a prompt, a tool's output — always shows as text. Changes go
through `playbook.Playbook` (the safety policy applies to the dashboard as to every other path).
Static files are served from memory under a content hash, with a year's cache. `now` gives the
time (tests pass a fixed clock).

Cost: importing this module imports Starlette and Jinja2 (the `server` extra); `ace ui` imports
it only when run.
"""

from __future__ import annotations

import hashlib
import mimetypes
import os
import re
import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import jinja2
import markupsafe
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from ..core import escape
from ..store._base import StoreError
from . import charts, web
from .auth import LOOPBACK_HOSTS, Guard, new_token
from .pages import health, helpfulness, playbook, sessions

if TYPE_CHECKING:
    from starlette.types import ASGIApp

HERE = os.path.dirname(os.path.abspath(__file__))
STATIC_CACHE = "private, max-age=31536000, immutable"


def create_app(open_store: web.OpenStore, *, token: str, now: Callable[[], float] = time.time,
               allowed_hosts: Sequence[str] = LOOPBACK_HOSTS) -> Starlette:
    """The dashboard over the store `open_store()` opens, reachable only with `token`."""
    csrf = new_token()
    static = load_static(os.path.join(HERE, "static"))
    templates = template_env(now, static)
    routes = [*playbook.ROUTES, *sessions.ROUTES, *helpfulness.ROUTES, *health.ROUTES,
              Route("/static/{digest}/{name}", static_route(static), methods=["GET"])]

    def guard(app: ASGIApp) -> ASGIApp:
        return Guard(app, token=token, csrf=csrf, allowed_hosts=allowed_hosts)

    app = Starlette(routes=routes, middleware=[Middleware(guard)],
                    exception_handlers={404: _not_found, StoreError: _store_error})
    app.state.open_store = open_store
    app.state.now = now
    app.state.csrf = csrf
    app.state.templates = templates
    app.state.config_cache = {}
    return app


def template_env(now: Callable[[], float], static: dict[str, tuple[str, bytes, str]]) -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(os.path.join(HERE, "templates")),
        autoescape=True,  # every template, whatever its name
        finalize=_visible,
        trim_blocks=True, lstrip_blocks=True,  # a missing key of a stored JSON field renders as nothing
    )

    def ago(at: object) -> str:
        if not isinstance(at, (int, float)) or not at:
            return "never"
        seconds = max(0.0, now() - float(at))
        for size, unit in ((86400 * 365, "year"), (86400 * 30, "month"), (86400, "day"), (3600, "hour"),
                           (60, "minute")):
            if seconds >= size:
                n = int(seconds // size)
                return f"{n} {unit}{'s' if n != 1 else ''} ago"
        return "just now"

    env.filters.update(
        ago=ago,
        when=lambda at: _time("%Y-%m-%d %H:%M", at, "—"),
        iso=lambda at: _time("%Y-%m-%dT%H:%M:%S%z", at, ""),
        pct=lambda v: "—" if v is None else f"{float(v) * 100:.0f}%",
        num=lambda v: f"{int(v or 0):,}",
        ms=lambda v: "—" if v is None else f"{float(v):,.1f} ms",
        size=_size,
        short=_short,
        lesson=lesson_html,
    )
    env.globals.update(static=lambda name: f"/static/{static[name][0]}/{name}", sparkline=charts.sparkline,
                       url=web.page_url)
    return env


_CODE_SPAN = re.compile(r"`([^`\n]+)`")


def _short(text: str | None, n: int = 160) -> str:
    return text or "" if len(text or "") <= n else (text or "")[: n - 1] + "…"


def lesson_html(text: object, limit: int | None = None) -> markupsafe.Markup:
    """Lesson text as the dashboard shows it — the one helper its templates use for a lesson's
    words: cut to `limit` characters, escaped (`escape.html`: controls made visible, `&<>"'`
    escaped), then each backtick span set as inline code (`<code>…</code>`). The spans are found
    in the escaped text, so nothing inside one can open a tag; an unpaired backtick (a cut span)
    stays a backtick."""
    shown = _short(str(text or ""), limit) if limit else str(text or "")
    return markupsafe.Markup(_CODE_SPAN.sub(r"<code>\1</code>", escape.html(shown)))


def _visible(value: object) -> object:
    """Each value before it is escaped: control and direction-override characters shown as `\\xNN`
    (`escape.strip_controls`, as in the terminal). Markup — a macro's output, already built from
    escaped values — passes as it is."""
    if isinstance(value, str) and not isinstance(value, markupsafe.Markup):
        return escape.strip_controls(value)
    return value


def _time(form: str, at: object, missing: str) -> str:
    """A stored time (epoch seconds) in local time; `missing` for none or a value that is not one."""
    if isinstance(at, bool) or not isinstance(at, (int, float)) or not at:
        return missing
    try:
        return time.strftime(form, time.localtime(float(at)))
    except (OverflowError, OSError, ValueError):
        return missing


def _size(n: float | None) -> str:
    value = float(n or 0)
    for unit in ("B", "KB", "MB", "GB"):
        if value < 1024 or unit == "GB":
            return f"{value:,.0f} {unit}" if unit == "B" else f"{value:,.1f} {unit}"
        value /= 1024
    return f"{value:,.1f} GB"


def load_static(directory: str) -> dict[str, tuple[str, bytes, str]]:
    """name → (content hash, bytes, content type) of each static file, read once."""
    files = {}
    for name in sorted(os.listdir(directory)):
        with open(os.path.join(directory, name), "rb") as fh:
            data = fh.read()
        kind = mimetypes.guess_type(name)[0] or "application/octet-stream"
        files[name] = (hashlib.sha256(data).hexdigest()[:16], data, f"{kind}; charset=utf-8")
    return files


def static_route(files: dict[str, tuple[str, bytes, str]]) -> Callable[[Request], Response]:
    def serve(request: Request) -> Response:
        found = files.get(request.path_params["name"])
        if found is None or found[0] != request.path_params["digest"]:
            return Response("not found\n", status_code=404, media_type="text/plain")
        return Response(found[1], media_type=found[2], headers={"cache-control": STATIC_CACHE})

    return serve


async def _not_found(request: Request, exc: Any) -> Response:
    from starlette.concurrency import run_in_threadpool

    return await run_in_threadpool(web.not_found, request, "page")


async def _store_error(request: Request, exc: Exception) -> Response:
    html = request.app.state.templates.get_template("error.html").render(
        csrf=request.app.state.csrf, flash=None, path=request.url.path, review_count=None,
        title="The store cannot be used", message=f"{exc} — `ace doctor` names the cause and the fix.")
    return Response(html, status_code=503, media_type="text/html")
