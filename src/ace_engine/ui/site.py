"""What `ace ui`'s page modules share on top of `web.page`: the store of a request, its config, rendering.

Contract: a route opens the store with `with site.store(request) as store:` (one store per request,
closed after it; the SQLite store is cheap to open) and answers with `site.render(...)`, which adds
what every page needs (the CSRF token, the review count of the navigation, the flash message of a
`?done=` redirect, whose text is fixed here in `FLASH`: nothing the request said is echoed back).
Forms, query parameters and redirects are `web.page`'s (`form`, `text_param`, `int_param`, `redirect`).

Cost: imported by the page modules only; Starlette's request and response types.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any, Protocol

from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response

from ..agents import registry as agents
from ..web.page import flash, wants_json

if TYPE_CHECKING:
    from contextlib import AbstractContextManager

    from ..core.config import Config
    from ..store.interfaces import Store, ViewsStore

    class UIStore(Store, ViewsStore, Protocol):
        """A store with the dashboard's reads (`store/views_sql.py`)."""


PAGE_SIZE = 50
CONFIG_TTL_S = 5.0
FLASH = {
    "helpful": "Marked helpful (an explicit mark: it counts three times an observed outcome).",
    "harmful": "Marked harmful (an explicit mark: it counts three times an observed outcome).",
    "archived": "Archived: it is no longer injected; its history stays.",
    "edited": "Saved.",
    "unchanged": "Nothing changed.",
    "held": "Saved, and held back for review: the safety policy flags the new wording.",
    "approved": "Approved: the lesson is active and will be injected.",
    "promoted": "Kept: the candidate is active and will be injected.",
    "promoted-held": "Held back for review instead: the safety policy flags this lesson.",
    "rejected": "Rejected: the lesson is archived.",
}


class OpenStore(Protocol):
    def __call__(self) -> UIStore: ...


def store(request: Request) -> AbstractContextManager[UIStore]:
    opened: UIStore = request.app.state.open_store()
    return _Closing(opened)


class _Closing:
    """`with` over a store that is closed afterwards, whether or not it is a context manager."""

    def __init__(self, opened: UIStore) -> None:
        self.opened = opened

    def __enter__(self) -> UIStore:
        return self.opened

    def __exit__(self, *exc: object) -> None:
        self.opened.close()


def now(request: Request) -> float:
    return float(request.app.state.now())


def config(request: Request, root: str | None) -> Config:
    """The layered config as a hook in that project sees it (a few seconds' cache per root)."""
    from ..core import config as config_mod

    cache: dict[str | None, tuple[float, Config]] = request.app.state.config_cache
    hit = cache.get(root)
    if hit is not None and time.monotonic() - hit[0] < CONFIG_TTL_S:
        return hit[1]
    loaded = config_mod.load(root)
    cache[root] = (time.monotonic(), loaded)
    return loaded


def render(request: Request, store: UIStore | None, template: str, *, status: int = 200,
           **context: Any) -> HTMLResponse:
    state = request.app.state
    html = state.templates.get_template(template).render(
        csrf=state.csrf, flash=flash(request, FLASH), path=request.url.path, agent_names=agents.LABELS,
        review_count=store.review_count() if store is not None else None, **context)
    return HTMLResponse(html, status_code=status)


def not_found(request: Request, what: str) -> Response:
    if wants_json(request):
        return JSONResponse({"error": f"no such {what}"}, status_code=404)
    with store(request) as opened:
        return render(request, opened, "error.html", status=404, title="Not found",
                      message=f"There is no such {what} in this store.")
