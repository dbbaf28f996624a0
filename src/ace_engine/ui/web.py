"""What the page modules share: the store of a request, rendering, forms, parameters, redirects.

Contract: a route opens the store with `with web.store(request) as store:` (one store per request,
closed after it; the SQLite store is cheap to open) and answers with `web.render(...)`, which adds
what every page needs (the CSRF token, the review count of the navigation, the flash message of a
`?done=` redirect). Query parameters are read through `text_param` / `int_param`, which bound and
clean them; POST forms arrive parsed and checked by `auth.Guard` (`web.form`). After a change, a
route redirects (303) to a page with `?done=KEY`, whose text is fixed here (`FLASH`): nothing the
request said is echoed back.

Cost: imported by the page modules only; Starlette's request and response types.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any, Protocol
from urllib.parse import urlencode

from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, RedirectResponse, Response

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
    done = request.query_params.get("done")
    html = state.templates.get_template(template).render(
        csrf=state.csrf, flash=FLASH.get(done or ""), path=request.url.path,
        review_count=store.review_count() if store is not None else None, **context)
    return HTMLResponse(html, status_code=status)


def form(request: Request) -> dict[str, str]:
    found: dict[str, str] = request.scope.get("state", {}).get("form") or {}
    return found


def text_param(request: Request, name: str, limit: int = 500) -> str:
    return " ".join(request.query_params.get(name, "").split())[:limit]


def int_param(request: Request, name: str, default: int, low: int, high: int) -> int:
    try:
        value = int(request.query_params.get(name, default))
    except ValueError:
        return default
    return max(low, min(high, value))


def page_url(path: str, params: dict[str, Any], **changes: Any) -> str:
    """`path` with the non-empty `params`, `changes` applied (pagination links keep the filters)."""
    merged = {**params, **changes}
    query = urlencode([(k, v) for k, v in merged.items() if v not in (None, "", 0) or k == "page" and v])
    return f"{path}?{query}" if query else path


def redirect(url: str, done: str | None = None) -> RedirectResponse:
    if done:
        url += ("&" if "?" in url else "?") + urlencode({"done": done})
    return RedirectResponse(url, status_code=303)


def wants_json(request: Request) -> bool:
    return "application/json" in request.headers.get("accept", "")


def not_found(request: Request, what: str) -> Response:
    if wants_json(request):
        return JSONResponse({"error": f"no such {what}"}, status_code=404)
    with store(request) as opened:
        return render(request, opened, "error.html", status=404, title="Not found",
                      message=f"There is no such {what} in this store.")
