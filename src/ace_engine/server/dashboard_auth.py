"""Who may use the team server's dashboard (`/ui/`), and which requests may change anything.

Sign-in: the form of `GET /ui/` posts a server token (the API's own, from `ace server token
create`) to `/ui/signin`; the route checks it exactly as the API does (`auth.Authenticator`:
missing, unknown, expired and revoked tokens alike are refused) and opens a `Session` here: a
random id (32 bytes), kept in the team database by its SHA-256 (`TeamDB.open_session`) with the
token's id, a label, the session's own CSRF token and an expiry (`SESSION_TTL_S` from now, never
later than the token's own expiry) — so a browser signed in on one replica is served by any other
on the same database. The browser holds only the session id, in an HttpOnly, SameSite=Strict
cookie scoped to the dashboard's path (Secure, and named `__Secure-…`, when the request came over
https — through a proxy, uvicorn's forwarded-proto handling says so); the token itself is never
put in a cookie, a page or a URL. A restart signs no one out; signing out ends the session
everywhere.

`guard` builds the middleware stack around the dashboard app from `web.guard`'s pieces and this
dashboard's own two, so every request is checked before any route runs (no route can forget it):
- websockets are closed; every answer carries `web.guard`'s security headers (strict CSP, no
  framing, nosniff) and no-store unless a route says otherwise;
- `SessionAuth`: static files (`/static/…`: the package's CSS and JS) answer to anyone, GET and HEAD
  only; otherwise the session cookie is looked up with its token (one join per request), and a
  session whose token has been revoked or has expired since is ended (a revocation takes effect at
  the next click); without a session only the sign-in page (`GET /`, `GET /signin`) and the sign-in (`POST
  /signin`) answer; any other GET or HEAD is redirected (303) to the sign-in page, anything else is 401;
- methods other than GET, HEAD and POST: 405 (`web.guard.Methods`);
- `TokenRate`: a request with a session takes one unit of its token's rate from the API's
  `limits.RateLimiter` (the dashboard and the API share a token's bucket), a sign-in one from a
  bucket per client address; over it, 429 with Retry-After;
- POST, the only method that changes anything, passes `web.guard.FormCheck`: same-origin, a
  url-encoded form of at most `MAX_FORM_BYTES` (the server's `limits.BodyLimit` applies before),
  and — all but the sign-in, which has no session yet — the session's CSRF token (field `csrf` or
  header `X-CSRF-Token`); else 403 / 413 / 415. The route gets the form parsed (`request.state.form`).
No Host allow-list here: the team server is meant to be reached by its public name through a proxy.

Cost: stdlib plus `web.guard`; a request with a session costs one indexed join (and a rate take).
"""

from __future__ import annotations

import hashlib
import secrets
import threading
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING, Protocol
from urllib.parse import quote

from starlette.concurrency import run_in_threadpool

from ..web import guard as web_guard
from ..web.guard import cookie_value, plain, request_headers, see_other
from .auth import Principal
from .limits import RateLimiter, retry_after
from .storage.records import TokenRow
from .storage.shared import SessionRow

if TYPE_CHECKING:
    from starlette.types import ASGIApp, Receive, Scope, Send

SESSION_TTL_S = 12 * 3600.0
MAX_FORM_BYTES = 64 * 1024
TOUCH_EVERY_S = 60.0
COOKIE = "ace_team_ui"
PUBLIC_GET = ("/", "/signin")
NOT_SIGNED_IN = "401 Unauthorized: sign in on this dashboard's first page with a token of this server.\n"
CROSS_ORIGIN = ("403 Forbidden: a change must come from this dashboard's own pages (behind a proxy, the proxy "
                "must pass the Host header through).\n")


class TokenRows(Protocol):
    """The part of `TeamDB` the guard needs."""

    def token_by_id(self, token_id: int) -> TokenRow | None: ...
    def touch_token(self, token_id: int, now: float) -> None: ...


class SessionStore(Protocol):
    """The part of `TeamDB` that keeps the sessions (`server.storage.shared`)."""

    def open_session(self, id_hash: str, token_id: int, label: str, csrf: str, now: float,
                     expires_at: float) -> None: ...
    def session(self, id_hash: str, now: float) -> SessionRow | None: ...
    def end_session(self, id_hash: str) -> bool: ...


@dataclass(frozen=True)
class Session:
    id: str
    principal: Principal
    label: str
    csrf: str
    created_at: float
    expires_at: float


def _hash(session_id: str) -> str:
    return hashlib.sha256(session_id.encode("utf-8", "surrogatepass")).hexdigest()


class Sessions:
    """The open sessions, in the team database by the SHA-256 of their id (module docstring):
    every replica on that database sees the same ones. Thread-safe (each call one transaction)."""

    def __init__(self, store: SessionStore, ttl_s: float = SESSION_TTL_S) -> None:
        self.store = store
        self.ttl_s = float(ttl_s)

    def open(self, principal: Principal, label: str, token_expires_at: float | None, now: float) -> Session:
        expires = now + self.ttl_s
        if token_expires_at is not None:
            expires = min(expires, float(token_expires_at))
        session = Session(secrets.token_urlsafe(32), principal, label, secrets.token_urlsafe(32), now, expires)
        self.store.open_session(_hash(session.id), principal.token_id, label, session.csrf, now, expires)
        return session

    def get(self, session_id: str | None, now: float) -> Session | None:
        """The live session of `session_id` whose token is still valid, or None."""
        if not session_id or len(session_id) > 200:
            return None
        row = self.store.session(_hash(session_id), now)
        if row is None:
            return None
        principal = Principal(row["token_id"], row["org_id"], row["project_id"], row["scope"], row["prefix"])
        return Session(session_id, principal, row["label"], row["csrf"], row["created_at"], row["expires_at"])

    def end(self, session_id: str) -> bool:
        return self.store.end_session(_hash(session_id))


def cookie_name(scope: Scope) -> str:
    # `__Secure-`: a browser takes the cookie only over https, so plain http cannot overwrite it.
    return f"__Secure-{COOKIE}" if scope.get("scheme") == "https" else COOKIE


def session_cookie(scope: Scope, session: Session | None, now: float) -> str:
    """The Set-Cookie value that stores `session`'s id (None: that removes it)."""
    path = scope.get("root_path") or "/"
    value, age = (session.id, max(0, int(session.expires_at - now))) if session else ("", 0)
    secure = "; Secure" if scope.get("scheme") == "https" else ""
    return f"{cookie_name(scope)}={value}; Path={path}; Max-Age={age}; HttpOnly; SameSite=Strict{secure}"


def route_path(scope: Scope) -> str:
    """The path inside the dashboard's mount (`/ui/p/x` → `/p/x`; the mount itself → `/`)."""
    path, root = str(scope["path"]), str(scope.get("root_path") or "")
    if root and path.startswith(root):
        path = path[len(root):]
    return path or "/"


def safe_next(value: str | None, root: str) -> str | None:
    """`value` when it is a page of this dashboard (a path under `root`), else None: never another site."""
    if not value or len(value) > 2000 or not value.startswith(root + "/"):
        return None
    if "//" in value or "\\" in value or any(ord(c) < 32 or ord(c) == 127 for c in value):
        return None
    return value


def guard(app: ASGIApp, *, db: TokenRows, sessions: Sessions, limiter: RateLimiter,
          now: Callable[[], float]) -> ASGIApp:
    """`app` behind the whole guard described in the module docstring."""
    return web_guard.stack(
        app,
        web_guard.HttpOnly,
        web_guard.SecurityHeaders,
        partial(SessionAuth, db=db, sessions=sessions, now=now),
        web_guard.Methods,
        partial(TokenRate, limiter=limiter, now=now),
        partial(web_guard.FormCheck, csrf=_csrf_due, limit=MAX_FORM_BYTES, cross_origin=CROSS_ORIGIN),
    )


def _csrf_due(scope: Scope) -> str | None:
    """The session's CSRF token; None for a sign-in, which has no session yet."""
    session: Session | None = scope.get("state", {}).get("session")
    return session.csrf if session is not None and not _signing_in(scope) else None


def _signing_in(scope: Scope) -> bool:
    return str(scope["method"]).upper() == "POST" and route_path(scope) == "/signin"


def session_of(scope: Scope) -> Session | None:
    """The session `SessionAuth` found for this request, or None."""
    found: Session | None = scope.get("state", {}).get("session")
    return found


class SessionAuth:
    """The session of the request's cookie (`request.state.session`), or the sign-in (module docstring)."""

    def __init__(self, app: ASGIApp, *, db: TokenRows, sessions: Sessions, now: Callable[[], float]) -> None:
        self.app = app
        self.db = db
        self.sessions = sessions
        self.now = now
        self._touched: dict[int, float] = {}
        self._lock = threading.Lock()

    def _session(self, session_id: str | None, now: float) -> Session | None:
        """The live session of the cookie, or None (`Sessions.get` ends one whose token is no longer valid)."""
        session = self.sessions.get(session_id, now)
        if session is None:
            return None
        token_id = session.principal.token_id
        with self._lock:  # last_used_at needs minute precision, as for the API
            due = now - self._touched.get(token_id, float("-inf")) >= TOUCH_EVERY_S
            if due:
                self._touched[token_id] = now
        if due:
            self.db.touch_token(token_id, now)
        return session

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        path, method = route_path(scope), str(scope["method"]).upper()
        if path.startswith("/static/"):
            if method not in web_guard.READ_METHODS:
                await plain(send, 405, "405 Method Not Allowed\n", [(b"allow", b"GET, HEAD")])
                return
            await self.app(scope, receive, send)
            return
        cookie = cookie_value(request_headers(scope).get("cookie", ""), cookie_name(scope))
        session = await run_in_threadpool(self._session, cookie, self.now()) if cookie else None
        scope.setdefault("state", {})["session"] = session
        if session is None and not _signing_in(scope) and not (method in web_guard.READ_METHODS and path in PUBLIC_GET):
            if method in web_guard.READ_METHODS:
                root = str(scope.get("root_path") or "")
                raw = (scope.get("raw_path") or str(scope["path"]).encode()).decode("latin-1")
                query = (scope.get("query_string") or b"").decode("latin-1")
                wanted = safe_next(raw + (f"?{query}" if query else ""), root)
                await see_other(send, f"{root}/" + (f"?next={quote(wanted, safe='')}" if wanted else ""))
                return
            await plain(send, 401, NOT_SIGNED_IN)
            return
        await self.app(scope, receive, send)


class TokenRate:
    """One unit of the rate of the session's token (or, for a sign-in, of the client's address) per
    request; 429 with Retry-After over it. Static files and sign-in pages take none."""

    def __init__(self, app: ASGIApp, *, limiter: RateLimiter, now: Callable[[], float]) -> None:
        self.app = app
        self.limiter = limiter
        self.now = now

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        session = session_of(scope)
        key: object = session.principal.token_id if session else None
        if _signing_in(scope):
            client = scope.get("client") or ("", 0)
            key = ("ui-signin", client[0])
        # A shared limiter takes from the database: off the event loop, like every query.
        if key is not None and (wait := await run_in_threadpool(self.limiter.take, key, self.now())) > 0:
            await plain(send, 429, f"429 Too Many Requests: over this token's rate limit; retry in {wait:.1f} s.\n",
                         [(b"retry-after", retry_after(wait).encode())])
            return
        await self.app(scope, receive, send)
