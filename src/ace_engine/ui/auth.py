"""Who may use the dashboard, and which requests may change anything: one ASGI middleware, `Guard`.

Contract, checked on every request before any route runs (so no route can forget it):
- the Host must be one of `allowed_hosts` (loopback names by default): a page of another site that
  rebinds its name to 127.0.0.1 gets 421 and nothing else;
- `?token=…` in a GET is checked against the per-run token (`new_token`, printed by `ace ui`): a
  valid one sets an HttpOnly, SameSite=Strict cookie and redirects (303) to the same URL without
  the token, so it leaves the address bar and the history; an invalid one is a 401;
- without a valid cookie every path (pages, the JSON and event-stream endpoints, static files,
  unknown paths) answers 401 with a short plain-text line that shows nothing of the store;
- GET and HEAD only read. POST is the only method that changes anything; it needs a same-origin
  request (the `Origin` header equal to this server's own origin, or, without one or with an opaque
  `null`, `Sec-Fetch-Site: same-origin`) and the per-run CSRF token (form field `csrf` or header
  `X-CSRF-Token`), else 403. Its body must be a small url-encoded form, parsed here into
  `request.state.form`. Other methods get 405.
Every answer carries a strict Content-Security-Policy (own scripts and styles only, no framing, no
other origin), a same-origin referrer policy and `nosniff`; pages are `no-store` unless a route says otherwise.

Cost: stdlib only (hmac, secrets, urllib.parse); a few header comparisons per request.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from collections.abc import Awaitable, Callable, MutableMapping, Sequence
from typing import Any
from urllib.parse import parse_qsl, urlencode

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "::1")
MAX_FORM_BYTES = 256 * 1024
CSP = ("default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
       "form-action 'self'; base-uri 'none'; frame-ancestors 'none'")
SECURITY_HEADERS = [
    (b"content-security-policy", CSP.encode()),
    (b"x-content-type-options", b"nosniff"),
    # Not `no-referrer`: it makes a browser send `Origin: null` with a form. No page's URL holds the
    # token (it is redirected away at once), so a same-origin Referer tells nothing.
    (b"referrer-policy", b"same-origin"),
    (b"x-frame-options", b"DENY"),
    (b"cross-origin-opener-policy", b"same-origin"),
    (b"cross-origin-resource-policy", b"same-origin"),
]
NOT_SIGNED_IN = "401 Unauthorized: open the address `ace ui` printed (it carries this run's token).\n"


def new_token() -> str:
    """A per-run secret: 32 random bytes, URL-safe."""
    return secrets.token_urlsafe(32)


def same_secret(a: str | None, b: str) -> bool:
    return a is not None and hmac.compare_digest(a.encode(), b.encode())


def host_name(host: str) -> tuple[str, str]:
    """(name, port) of a Host header value: `127.0.0.1:8080`, `[::1]:8080`, `localhost`."""
    host = host.strip().lower()
    if host.startswith("["):
        name, _, rest = host[1:].partition("]")
        return name, rest.lstrip(":")
    name, _, port = host.partition(":")
    return name, port


class Guard:
    """The middleware described in the module docstring; `token` and `csrf` are this run's."""

    def __init__(self, app: ASGIApp, *, token: str, csrf: str,
                 allowed_hosts: Sequence[str] = LOOPBACK_HOSTS) -> None:
        self.app = app
        self.token = token
        self.csrf = csrf
        self.allowed_hosts = {h.lower().strip("[]") for h in allowed_hosts}
        # The cookie holds a value derived from the token, never the token itself.
        self.cookie_value = hmac.new(token.encode(), b"ace-ui-cookie", hashlib.sha256).hexdigest()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await self.app(scope, receive, send)
            return
        if scope["type"] != "http":  # no websockets here
            if scope["type"] == "websocket":
                await send({"type": "websocket.close", "code": 1008})
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers") or []}
        host = headers.get("host", "")
        name, port = host_name(host)
        if name not in self.allowed_hosts:
            await plain(send, 421, "421 Misdirected Request: this dashboard answers on its loopback address only.\n")
            return
        cookie_name = f"ace_ui_{port or 'default'}"  # cookies ignore ports: one per run's port
        method = scope["method"].upper()
        query = parse_qsl(scope.get("query_string", b"").decode("latin-1"), keep_blank_values=True)
        given = [v for k, v in query if k == "token"]
        if given:
            if method in ("GET", "HEAD") and len(given) == 1 and same_secret(given[0], self.token):
                rest = urlencode([(k, v) for k, v in query if k != "token"])
                # Never `//host` (nor with backslashes): a browser would take that for another site.
                raw = scope.get("raw_path") or scope["path"].encode()
                location = "/" + raw.decode("latin-1").lstrip("/\\")
                await _redirect(send, location + (f"?{rest}" if rest else ""),
                                f"{cookie_name}={self.cookie_value}; Path=/; HttpOnly; SameSite=Strict")
                return
            await plain(send, 401, NOT_SIGNED_IN)
            return
        if not same_secret(cookie_value(headers.get("cookie", ""), cookie_name), self.cookie_value):
            await plain(send, 401, NOT_SIGNED_IN)
            return
        if method in ("GET", "HEAD"):
            await self.app(scope, receive, secured(send))
            return
        if method != "POST":
            await plain(send, 405, "405 Method Not Allowed: pages are read with GET and changed with POST.\n",
                         [(b"allow", b"GET, HEAD, POST")])
            return
        checked = await checked_form(scope, receive, send, headers, self.csrf, MAX_FORM_BYTES,
                                     "403 Forbidden: a change must come from this dashboard's own pages.\n")
        if checked is None:
            return
        form, body = checked
        scope.setdefault("state", {})["form"] = form
        await self.app(scope, replay_body(body), secured(send))


async def checked_form(scope: Scope, receive: Receive, send: Send, headers: dict[str, str], csrf: str | None,
                       limit: int, cross_origin: str) -> tuple[dict[str, str], bytes] | None:
    """A POSTed form after the rules every change on either dashboard obeys (this one and the team
    server's), in order: from this origin (403 `cross_origin`), at most `limit` bytes (413),
    url-encoded (415), UTF-8 (400), carrying the CSRF token `csrf` in the form or the
    X-CSRF-Token header (403; `csrf` None: no token is due yet, e.g. a sign-in form). Returns
    (form, raw body), or None when refused — the answer is sent."""
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


def cookie_value(header: str, name: str) -> str | None:
    for part in header.split(";"):
        key, _, value = part.strip().partition("=")
        if key == name:
            return value
    return None


async def read_body(receive: Receive, limit: int) -> bytes | None:
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


def replay_body(body: bytes) -> Receive:
    sent = False

    async def receive() -> Message:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        return {"type": "http.disconnect"}

    return receive


def secured(send: Send) -> Send:
    async def wrapped(message: Message) -> None:
        if message["type"] == "http.response.start":
            headers = list(message.get("headers") or [])
            if not any(k.lower() == b"cache-control" for k, _ in headers):
                headers.append((b"cache-control", b"no-store"))
            message["headers"] = headers + SECURITY_HEADERS
        await send(message)

    return wrapped


async def plain(send: Send, status: int, text: str, extra: list[tuple[bytes, bytes]] | None = None) -> None:
    body = text.encode()
    await send({"type": "http.response.start", "status": status, "headers": [
        (b"content-type", b"text/plain; charset=utf-8"), (b"content-length", str(len(body)).encode()),
        (b"cache-control", b"no-store"), *(extra or []), *SECURITY_HEADERS]})
    await send({"type": "http.response.body", "body": body})


async def _redirect(send: Send, location: str, cookie: str) -> None:
    await send({"type": "http.response.start", "status": 303, "headers": [
        (b"location", location.encode("latin-1")), (b"set-cookie", cookie.encode()),
        (b"content-length", b"0"), (b"cache-control", b"no-store"), *SECURITY_HEADERS]})
    await send({"type": "http.response.body", "body": b""})
