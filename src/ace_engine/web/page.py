"""What a page route of either dashboard uses: its form, its query parameters, flash messages,
redirects, the refusal exception, and the static files served from memory.

Contract: a POST's form arrives parsed and checked by `guard.FormCheck` (`form(request)`); query
parameters are read through `text_param` / `int_param`, which bound and clean them. After a
change a route redirects (303, `redirect`) to a page with `?done=KEY`; the page shows `flash(request,
FLASH)`, the text each app fixes in its own table, so nothing the request said is echoed back. A
route that cannot do what was asked raises `Refused` (status, title, message), which its app
renders as a page. Static files are read once (`load_static`) and served under their content hash
with a year's cache (`static_route`): a changed file gets a new URL.

Cost: Starlette's request and response types; static files are held in memory (two small files).
"""

from __future__ import annotations

import hashlib
import mimetypes
import os
from collections.abc import Callable, Mapping
from typing import Any
from urllib.parse import urlencode

from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from ..core.errors import AceError

STATIC_CACHE = "private, max-age=31536000, immutable"
StaticFiles = dict[str, tuple[str, bytes, str]]


class Refused(AceError):
    """A request a page cannot carry out, answered as a page of its own: `status`, `title`, and
    `message` saying why (fixed text and what the store holds, never the request's own words)."""

    def __init__(self, message: str, *, status: int = 409, title: str = "Refused") -> None:
        super().__init__(message)
        self.status, self.title, self.message = status, title, message


def form(request: Request) -> dict[str, str]:
    """The POSTed form, as `guard.FormCheck` parsed it (empty for any other request)."""
    found: dict[str, str] = request.scope.get("state", {}).get("form") or {}
    return found


def flash(request: Request, table: Mapping[str, str]) -> str | None:
    """The fixed text of the `?done=` key a redirect added, or None."""
    return table.get(request.query_params.get("done") or "")


def redirect(url: str, done: str | None = None) -> RedirectResponse:
    """303 to `url` (a path of this site), with `?done=done` for the page's flash message."""
    if done:
        url += ("&" if "?" in url else "?") + urlencode({"done": done})
    return RedirectResponse(url, status_code=303)


def text_param(request: Request, name: str, limit: int = 500) -> str:
    """A query parameter with its whitespace runs made single spaces, cut to `limit` characters."""
    return " ".join(request.query_params.get(name, "").split())[:limit]


def int_param(request: Request, name: str, default: int, low: int, high: int) -> int:
    """A query parameter as an integer within [low, high]; `default` when it is not one."""
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


def wants_json(request: Request) -> bool:
    return "application/json" in request.headers.get("accept", "")


def load_static(directory: str) -> StaticFiles:
    """name → (content hash, bytes, content type) of each static file, read once."""
    files = {}
    for name in sorted(os.listdir(directory)):
        with open(os.path.join(directory, name), "rb") as fh:
            data = fh.read()
        kind = mimetypes.guess_type(name)[0] or "application/octet-stream"
        files[name] = (hashlib.sha256(data).hexdigest()[:16], data, f"{kind}; charset=utf-8")
    return files


def static_route(files: StaticFiles) -> Callable[[Request], Response]:
    """The endpoint of `/static/{digest}/{name}`: the file when the digest is its current one."""

    def serve(request: Request) -> Response:
        found = files.get(request.path_params["name"])
        if found is None or found[0] != request.path_params["digest"]:
            return Response("not found\n", status_code=404, media_type="text/plain")
        return Response(found[1], media_type=found[2], headers={"cache-control": STATIC_CACHE})

    return serve
