"""The dashboard as one Starlette app: `create_app(open_store, token=…)`.

Contract: `open_store()` returns a store with the dashboard's reads (`store/views_sql.py`); the app
opens one per request and closes it. `token` is this run's secret (`auth.new_token`): `auth.guard`
(`web.guard`'s pieces with this dashboard's token policy) wraps every route, static files and
unknown paths included, so nothing answers without it. Pages are rendered on the server by
`web.render`'s Jinja2 environment (autoescape on every template, control characters made visible),
so stored text always shows as text; this app's own templates are in `templates/`, the shared frame
and the static files in `web/`. Changes go through `playbook.Playbook` (the safety policy applies to
the dashboard as to every other path). `now` gives the time (tests pass a fixed clock).

Cost: importing this module imports Starlette and Jinja2 (the `server` extra); `ace ui` imports
it only when run.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Sequence
from typing import Any

from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from ..store._base import StoreError
from ..web import page, render
from . import auth, site
from .pages import health, helpfulness, pays, playbook, sessions

HERE = os.path.dirname(os.path.abspath(__file__))


def create_app(open_store: site.OpenStore, *, token: str, now: Callable[[], float] = time.time,
               allowed_hosts: Sequence[str] = auth.LOOPBACK_HOSTS) -> Starlette:
    """The dashboard over the store `open_store()` opens, reachable only with `token`."""
    csrf = auth.new_token()
    static = page.load_static(render.STATIC)
    routes = [*playbook.ROUTES, *sessions.ROUTES, *helpfulness.ROUTES, *pays.ROUTES, *health.ROUTES,
              Route("/static/{digest}/{name}", page.static_route(static), methods=["GET"])]
    app = Starlette(routes=routes,
                    middleware=[Middleware(auth.guard, token=token, csrf=csrf, allowed_hosts=allowed_hosts)],
                    exception_handlers={404: _not_found, StoreError: _store_error})
    app.state.open_store = open_store
    app.state.now = now
    app.state.csrf = csrf
    app.state.templates = render.environment(os.path.join(HERE, "templates"), now=now, static=static)
    app.state.config_cache = {}
    return app


async def _not_found(request: Request, exc: Any) -> Response:
    from starlette.concurrency import run_in_threadpool

    return await run_in_threadpool(site.not_found, request, "page")


async def _store_error(request: Request, exc: Exception) -> Response:
    html = request.app.state.templates.get_template("error.html").render(
        csrf=request.app.state.csrf, flash=None, path=request.url.path, review_count=None,
        title="The store cannot be used", message=f"{exc} — `ace doctor` names the cause and the fix.")
    return Response(html, status_code=503, media_type="text/html")
