"""The request guard both dashboards share, as small ASGI middlewares that `stack` composes.

Contract: each piece does one check before any route runs (so no route can forget it) and answers a
refusal itself with a short plain-text line; an app builds its guard with `stack(app, ...)`, outermost
first, from these pieces plus its own auth policy (`ui.auth.TokenCookie`: the per-run token and its
cookie; `server.dashboard_auth.SessionAuth`: a server token's sign-in and session):
- `HttpOnly`: HTTP requests go on; lifespan messages pass to the app; a websocket is closed (1008);
- `SecurityHeaders`: every answer, refusals included, carries the strict Content-Security-Policy
  (`CSP`: own scripts and styles only, no framing, no other origin), nosniff, a same-origin referrer
  policy and the cross-origin isolation headers, and `no-store` unless a route set a cache-control;
- `HostAllowList`: the Host header names one of the allowed hosts, else 421 — a page of another site
  that rebinds its name to 127.0.0.1 gets nothing;
- `Methods`: GET and HEAD read, POST changes; anything else is 405;
- `FormCheck`: a POST is same-origin, a url-encoded UTF-8 form of at most `limit` bytes with the
  CSRF token its policy names (`checked_form`), buffered, parsed into `request.state.form` and
  replayed to the route.
A change to CSP, CSRF or the form rules is made here, once, for both dashboards.

Cost: stdlib only at run time (hmac, urllib.parse; Starlette for type hints); a few header
comparisons per request and one buffered body per POST.
"""

from __future__ import annotations

import hmac
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING
from urllib.parse import parse_qsl

if TYPE_CHECKING:
    from starlette.responses import Response
    from starlette.types import ASGIApp, Message, Receive, Scope, Send

Layer = Callable[["ASGIApp"], "ASGIApp"]

LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "::1")
CSP = ("default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
       "form-action 'self'; base-uri 'none'; frame-ancestors 'none'")
SECURITY_HEADERS = [
    (b"content-security-policy", CSP.encode()),
    (b"x-content-type-options", b"nosniff"),
    # Not `no-referrer`: it makes a browser send `Origin: null` with a form. No page's URL holds a
    # secret (the ui's token is redirected away at once), so a same-origin Referer tells nothing.
    (b"referrer-policy", b"same-origin"),
    (b"x-frame-options", b"DENY"),
    (b"cross-origin-opener-policy", b"same-origin"),
    (b"cross-origin-resource-policy", b"same-origin"),
]
READ_METHODS = ("GET", "HEAD")
METHOD_NOT_ALLOWED = "405 Method Not Allowed: pages are read with GET and changed with POST.\n"


def stack(app: ASGIApp, *layers: Layer) -> ASGIApp:
    """`app` inside `layers`, the first the outermost (the first to see a request)."""
    for layer in reversed(layers):
        app = layer(app)
    return app


class HttpOnly:
    """HTTP goes on; lifespan passes to the app; a websocket is closed; anything else is dropped."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] in ("http", "lifespan"):
            await self.app(scope, receive, send)
        elif scope["type"] == "websocket":
            await send({"type": "websocket.close", "code": 1008})


class SecurityHeaders:
    """Every answer's start gets `headers` (the security headers) and `no-store` unless it has a cache-control."""

    def __init__(self, app: ASGIApp, headers: Sequence[tuple[bytes, bytes]] | None = None) -> None:
        self.app = app
        self.headers = list(SECURITY_HEADERS if headers is None else headers)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def secured(message: Message) -> None:
            if message["type"] == "http.response.start":
                found = list(message.get("headers") or [])
                if not any(k.lower() == b"cache-control" for k, _ in found):
                    found.append((b"cache-control", b"no-store"))
                message["headers"] = found + self.headers
            await send(message)

        await self.app(scope, receive, secured)


def secure_response(response: Response) -> Response:
    """`response` with the security headers and no-store: for an answer built outside the guard
    (Starlette's last-resort error handler runs outside every middleware)."""
    for name, value in SECURITY_HEADERS:
        response.headers[name.decode()] = value.decode()
    response.headers["cache-control"] = "no-store"
    return response


class HostAllowList:
    """421 with `refusal` unless the Host header names one of `hosts` (DNS-rebinding defence)."""

    def __init__(self, app: ASGIApp, hosts: Iterable[str] = LOOPBACK_HOSTS, *,
                 refusal: str = "421 Misdirected Request: this dashboard answers on its own address only.\n") -> None:
        self.app = app
        self.hosts = {h.lower().strip("[]") for h in hosts}
        self.refusal = refusal

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and host_name(request_headers(scope).get("host", ""))[0] not in self.hosts:
            await plain(send, 421, self.refusal)
            return
        await self.app(scope, receive, send)


class Methods:
    """405 for a method outside `allowed` (GET, HEAD and POST)."""

    def __init__(self, app: ASGIApp, allowed: Sequence[str] = ("GET", "HEAD", "POST"),
                 refusal: str = METHOD_NOT_ALLOWED) -> None:
        self.app = app
        self.allowed = tuple(allowed)
        self.refusal = refusal

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and str(scope["method"]).upper() not in self.allowed:
            await plain(send, 405, self.refusal, [(b"allow", ", ".join(self.allowed).encode())])
            return
        await self.app(scope, receive, send)


class FormCheck:
    """A POST passes `checked_form` (same origin, `limit` bytes, url-encoded, UTF-8, the CSRF token
    `csrf(scope)` names — None: none is due, as for a sign-in); the route gets the parsed form in
    `request.state.form` and the body replayed. Other methods pass untouched."""

    def __init__(self, app: ASGIApp, *, csrf: Callable[[Scope], str | None], limit: int, cross_origin: str) -> None:
        self.app = app
        self.csrf = csrf
        self.limit = limit
        self.cross_origin = cross_origin

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or str(scope["method"]).upper() != "POST":
            await self.app(scope, receive, send)
            return
        checked = await checked_form(scope, receive, send, request_headers(scope), self.csrf(scope), self.limit,
                                     self.cross_origin)
        if checked is None:
            return
        form, body = checked
        scope.setdefault("state", {})["form"] = form
        await self.app(scope, replay_body(body), send)


async def checked_form(scope: Scope, receive: Receive, send: Send, headers: dict[str, str], csrf: str | None,
                       limit: int, cross_origin: str) -> tuple[dict[str, str], bytes] | None:
    """A POSTed form after the rules every change on either dashboard obeys, in order: from this
    origin (403 `cross_origin`), at most `limit` bytes (413), url-encoded (415), UTF-8 (400), carrying
    the CSRF token `csrf` in the form or the X-CSRF-Token header (403; `csrf` None: no token is due
    yet). Returns (form, raw body), or None when refused — the answer is sent."""
    own = f"{scope.get('scheme', 'http')}://{headers.get('host', '').strip().lower()}"
    if not same_origin(headers, own):
        await plain(send, 403, cross_origin)
        return None
    body = await read_body(receive, limit)
    if body is None:
        await plain(send, 413, "413 Payload Too Large: a form of this dashboard is small.\n")
        return None
    kind = headers.get("content-type", "").split(";")[0].strip().lower()
    if body and kind != "application/x-www-form-urlencoded":
        await plain(send, 415, "415 Unsupported Media Type: send a url-encoded form.\n")
        return None
    try:
        form = dict(parse_qsl(body.decode("utf-8"), keep_blank_values=True))
    except UnicodeDecodeError:
        await plain(send, 400, "400 Bad Request: the form is not UTF-8.\n")
        return None
    if csrf is not None and not (same_secret(form.get("csrf"), csrf) or same_secret(headers.get("x-csrf-token"), csrf)):
        await plain(send, 403, "403 Forbidden: the form's CSRF token is missing or stale; reload the page.\n")
        return None
    return form, body


def same_origin(headers: dict[str, str], own: str) -> bool:
    """The request comes from a page of this very origin: its Origin says so, or (a browser that
    sent none) its Sec-Fetch-Site does. A request with neither is refused."""
    origin = (headers.get("origin") or "").strip().lower()
    if origin and origin != "null":
        return origin == own
    # No origin, or an opaque one (what a browser sends when the referrer policy hides it): only the
    # browser's own Sec-Fetch-Site, which no page can set, can say the request is same-origin.
    return headers.get("sec-fetch-site") == "same-origin"


def same_secret(a: str | None, b: str) -> bool:
    return a is not None and hmac.compare_digest(a.encode(), b.encode())


def request_headers(scope: Scope) -> dict[str, str]:
    """The request's headers, names lower-cased (the last of a repeated name wins)."""
    return {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers") or []}


def host_name(host: str) -> tuple[str, str]:
    """(name, port) of a Host header value: `127.0.0.1:8080`, `[::1]:8080`, `localhost`."""
    host = host.strip().lower()
    if host.startswith("["):
        name, _, rest = host[1:].partition("]")
        return name, rest.lstrip(":")
    name, _, port = host.partition(":")
    return name, port


def cookie_value(header: str, name: str) -> str | None:
    for part in header.split(";"):
        key, _, value = part.strip().partition("=")
        if key == name:
            return value
    return None


async def read_body(receive: Receive, limit: int) -> bytes | None:
    """The whole request body, or None past `limit` bytes (what was read is dropped)."""
    chunks, size = [], 0
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            break
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > limit:
            return None
        chunks.append(chunk)
        if not message.get("more_body"):
            break
    return b"".join(chunks)


def replay_body(body: bytes, then: Receive | None = None) -> Receive:
    """A `receive` that gives the app the already-read `body` once, then a disconnect — or, with
    `then` (the server's own `receive`), whatever the connection says next (the disconnect when it comes)."""
    sent = False

    async def receive() -> Message:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        if then is not None:
            return await then()
        return {"type": "http.disconnect"}

    return receive


async def plain(send: Send, status: int, text: str, extra: Sequence[tuple[bytes, bytes]] = ()) -> None:
    """A refusal: `text` as plain text, never cached (`SecurityHeaders`, outside, adds the rest)."""
    body = text.encode()
    await send({"type": "http.response.start", "status": status, "headers": [
        (b"content-type", b"text/plain; charset=utf-8"), (b"content-length", str(len(body)).encode()),
        (b"cache-control", b"no-store"), *extra]})
    await send({"type": "http.response.body", "body": body})


async def see_other(send: Send, location: str, extra: Sequence[tuple[bytes, bytes]] = ()) -> None:
    """A 303 to `location` (a path of this site) with no body, never cached."""
    await send({"type": "http.response.start", "status": 303, "headers": [
        (b"location", location.encode("latin-1")), *extra, (b"content-length", b"0"),
        (b"cache-control", b"no-store")]})
    await send({"type": "http.response.body", "body": b""})
