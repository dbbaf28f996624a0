"""Who may use `ace ui`, and which requests may change anything: its guard, built from `web.guard`.

Contract, checked on every request before any route runs (so no route can forget it), in this order
(`guard`): websockets closed; every answer carries `web.guard`'s security headers; the Host must be
one of `allowed_hosts` (loopback names by default; else 421, the DNS-rebinding defence); then this
dashboard's own auth policy, `TokenCookie`:
- `?token=…` in a GET is checked against the per-run token (`new_token`, printed by `ace ui`): a
  valid one sets an HttpOnly, SameSite=Strict cookie and redirects (303) to the same URL without
  the token, so it leaves the address bar and the history; an invalid one is a 401;
- without a valid cookie every path (pages, the JSON and event-stream endpoints, static files,
  unknown paths) answers 401 with a short plain-text line that shows nothing of the store;
then GET and HEAD read and POST changes (else 405), and a POST passes `web.guard.FormCheck` with
the per-run CSRF token and at most `MAX_FORM_BYTES`.

Cost: stdlib (hmac, secrets, urllib.parse) plus `web.guard`; a few header comparisons per request.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from collections.abc import Sequence
from functools import partial
from typing import TYPE_CHECKING
from urllib.parse import parse_qsl, urlencode

from ..web import guard as web_guard
from ..web.guard import LOOPBACK_HOSTS, cookie_value, plain, request_headers, same_secret, see_other

if TYPE_CHECKING:
    from starlette.types import ASGIApp, Receive, Scope, Send

MAX_FORM_BYTES = 256 * 1024
NOT_SIGNED_IN = "401 Unauthorized: open the address `ace ui` printed (it carries this run's token).\n"
NOT_LOOPBACK = "421 Misdirected Request: this dashboard answers on its loopback address only.\n"
CROSS_ORIGIN = "403 Forbidden: a change must come from this dashboard's own pages.\n"

__all__ = ["LOOPBACK_HOSTS", "NOT_SIGNED_IN", "TokenCookie", "guard", "new_token"]


def new_token() -> str:
    """A per-run secret: 32 random bytes, URL-safe."""
    return secrets.token_urlsafe(32)


def guard(app: ASGIApp, *, token: str, csrf: str, allowed_hosts: Sequence[str] = LOOPBACK_HOSTS) -> ASGIApp:
    """`app` behind the whole guard described in the module docstring."""
    return web_guard.stack(
        app,
        web_guard.HttpOnly,
        web_guard.SecurityHeaders,
        partial(web_guard.HostAllowList, hosts=allowed_hosts, refusal=NOT_LOOPBACK),
        partial(TokenCookie, token=token),
        web_guard.Methods,
        partial(web_guard.FormCheck, csrf=lambda scope: csrf, limit=MAX_FORM_BYTES, cross_origin=CROSS_ORIGIN),
    )


class TokenCookie:
    """The per-run token, exchanged once for a cookie (see the module docstring)."""

    def __init__(self, app: ASGIApp, *, token: str) -> None:
        self.app = app
        self.token = token
        # The cookie holds a value derived from the token, never the token itself.
        self.cookie_value = hmac.new(token.encode(), b"ace-ui-cookie", hashlib.sha256).hexdigest()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = request_headers(scope)
        port = web_guard.host_name(headers.get("host", ""))[1]
        cookie_name = f"ace_ui_{port or 'default'}"  # cookies ignore ports: one per run's port
        query = parse_qsl(scope.get("query_string", b"").decode("latin-1"), keep_blank_values=True)
        given = [v for k, v in query if k == "token"]
        if given:
            if scope["method"] in web_guard.READ_METHODS and len(given) == 1 and same_secret(given[0], self.token):
                rest = urlencode([(k, v) for k, v in query if k != "token"])
                # Never `//host` (nor with backslashes): a browser would take that for another site.
                raw = scope.get("raw_path") or scope["path"].encode()
                location = "/" + raw.decode("latin-1").lstrip("/\\")
                cookie = f"{cookie_name}={self.cookie_value}; Path=/; HttpOnly; SameSite=Strict"
                await see_other(send, location + (f"?{rest}" if rest else ""), [(b"set-cookie", cookie.encode())])
                return
            await plain(send, 401, NOT_SIGNED_IN)
            return
        if not same_secret(cookie_value(headers.get("cookie", ""), cookie_name), self.cookie_value):
            await plain(send, 401, NOT_SIGNED_IN)
            return
        await self.app(scope, receive, send)
