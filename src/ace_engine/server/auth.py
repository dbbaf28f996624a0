"""Tokens, scopes and the 401 / 403 / 404 rules of the team server.

A token is `ace_` + 32 random bytes in urlsafe base64 (`new_token`). The server stores only its
SHA-256 (`hash_token`; 256 random bits need no slow hash) and a short display `prefix`; the token
itself is printed once by `ace server token create` and never stored.

The rules, in the order the routes apply them (docs/team-server.md, "Protocol"):
- `authenticate`: a missing, malformed, unknown, expired or revoked token → 401 (one message for
  all: the answer must not tell which).
- `require_scope`: `read` < `write` < `admin`; too low → 403. Checked before the project is looked
  up, so a 403 says nothing about any project.
- `resolve_project`: a project the token does not cover, or that does not exist → 404 with the
  same message either way (a token of project A must not learn that B exists). An org-level token
  covers every project of its org; an org-level `write` (or `admin`) token pushing to a project
  that does not exist creates it.

`ApiError(status, code, message)` carries an HTTP answer up to `app.py`, which renders it as
`{"error": {"code", "message"}}`.

Cost: stdlib only (hashlib, secrets); one lookup per request (`token_with_project`: the token and
the path's project in one statement; `admit`: with the rate take too, `token_take`), and a
`touch_token` write at most once a minute per token.
"""

from __future__ import annotations

import hashlib
import secrets
import threading
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

from ..core.errors import AceError
from .storage.records import ProjectRow, TokenRow

if TYPE_CHECKING:
    from .limits import RateLimiter

SCOPES = ("read", "write", "admin")
TOKEN_PREFIX = "ace_"
PREFIX_CHARS = 12  # `ace_` + 8 characters: enough to tell tokens apart in a list, useless to guess one
TOUCH_EVERY_S = 60.0
# A project name: what a path segment can carry, without controls, slashes or backslashes.
MAX_PROJECT_NAME = 128


class ApiError(AceError):
    """An HTTP error answer: `status`, a machine `code` and a message that names the fix."""

    def __init__(self, status: int, code: str, message: str, headers: dict[str, str] | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message
        self.headers = headers or {}


class TokenStore(Protocol):
    """The part of `server.storage.db.TeamDB` this module needs."""

    def token_by_hash(self, token_hash: str) -> TokenRow | None: ...
    def token_with_project(self, token_hash: str, name: str) -> tuple[TokenRow | None, ProjectRow | None]: ...
    def token_take(self, token_hash: str, name: str, rate: float, burst: float,
                   now: float) -> tuple[TokenRow | None, ProjectRow | None, float | None]: ...
    def touch_token(self, token_id: int, now: float) -> None: ...
    def find_project(self, org_id: int, name: str) -> ProjectRow | None: ...
    def ensure_project(self, org_id: int, name: str, now: float) -> ProjectRow: ...


@dataclass(frozen=True)
class Principal:
    """Who is asking: a valid token's id, org, project (None: every project of the org) and scope."""

    token_id: int
    org_id: int
    project_id: int | None
    scope: str
    prefix: str
    # The project of the request's path as read with the token (one statement for both), so
    # `resolve_project` need not read it again; `looked_up` is the name it was read under.
    looked_up: str | None = field(default=None, compare=False)
    project_row: ProjectRow | None = field(default=None, compare=False)


def new_token() -> str:
    return TOKEN_PREFIX + secrets.token_urlsafe(32)


def hash_token(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8", "surrogatepass")).hexdigest()


def token_prefix(token: str) -> str:
    return token[:PREFIX_CHARS]


def scope_allows(have: str, need: str) -> bool:
    """`read` < `write` < `admin`; an unknown scope allows nothing."""
    if have not in SCOPES or need not in SCOPES:
        return False
    return SCOPES.index(have) >= SCOPES.index(need)


def valid_project_name(name: str) -> bool:
    return (0 < len(name) <= MAX_PROJECT_NAME and name == name.strip()
            and not any(c in "/\\" or ord(c) < 32 or 0x7F <= ord(c) < 0xA0 for c in name))


_UNAUTHORIZED = ("missing, unknown, expired or revoked token; send `Authorization: Bearer <token>` "
                 "with a token from `ace server token create`")


def _unauthorized() -> ApiError:
    return ApiError(401, "unauthorized", _UNAUTHORIZED, {"WWW-Authenticate": 'Bearer realm="ace"'})


class Authenticator:
    """Turns an `Authorization` header into a `Principal`, or raises the 401. Thread-safe."""

    def __init__(self, db: TokenStore) -> None:
        self.db = db
        self._touched: dict[int, float] = {}
        self._lock = threading.Lock()

    def authenticate(self, header: str | None, now: float, project: str | None = None) -> Principal:
        """The token's principal, or the 401. `project`: the path's project, read with the token
        in one statement (the API's routes: every one names a project)."""
        return self._principal(header, now, project, None)[0]

    def admit(self, header: str | None, now: float, project: str, limiter: RateLimiter) -> tuple[Principal, float]:
        """`authenticate`, then one take of the token's rate (`limiter.take`): the principal and the
        seconds to wait (0.0: go on). When the limiter keeps its buckets in this store, the token,
        the path's project and the take are one round trip (`TokenStore.token_take`)."""
        if limiter.store is not self.db:
            principal = self.authenticate(header, now, project)
            return principal, limiter.take(principal.token_id, now)
        return self._principal(header, now, project, limiter)

    def _principal(self, header: str | None, now: float, project: str | None,
                   limiter: RateLimiter | None) -> tuple[Principal, float]:
        if not header:
            raise _unauthorized()
        kind, _, token = header.partition(" ")
        token = token.strip()
        if kind.lower() != "bearer" or not token.startswith(TOKEN_PREFIX) or len(token) > 200:
            raise _unauthorized()
        found: ProjectRow | None = None
        looked_up = project if project is not None and valid_project_name(project) else None
        wait: float | None = None
        if looked_up is not None and limiter is not None:
            row, found, wait = self.db.token_take(hash_token(token), looked_up, limiter.rate, limiter.burst, now)
        elif looked_up is not None:
            row, found = self.db.token_with_project(hash_token(token), looked_up)
        else:
            row = self.db.token_by_hash(hash_token(token))
        if row is None or row.get("revoked_at") is not None:
            raise _unauthorized()
        expires = row.get("expires_at")
        if expires is not None and float(expires) <= now:
            raise _unauthorized()
        token_id = int(row["id"])
        with self._lock:  # last_used_at needs minute precision, not a write per request
            due = now - self._touched.get(token_id, float("-inf")) >= TOUCH_EVERY_S
            if due:
                self._touched[token_id] = now
        if due:
            self.db.touch_token(token_id, now)
        if limiter is not None and wait is None:  # no take made with the read (an invalid project name)
            wait = limiter.take(token_id, now)
        project_id = row.get("project_id")
        principal = Principal(token_id, int(row["org_id"]), None if project_id is None else int(project_id),
                              str(row["scope"]), str(row.get("prefix") or ""), looked_up, found)
        return principal, wait or 0.0


def require_scope(principal: Principal, need: str) -> None:
    if not scope_allows(principal.scope, need):
        raise ApiError(403, "forbidden", f"this token has scope `{principal.scope}`; this needs `{need}` "
                       f"(create one with `ace server token create --scope {need}`)")


def not_found(name: str) -> ApiError:
    # One message whether the project exists or not: the token must not learn which.
    return ApiError(404, "not_found", f"no project {name!r} for this token; check the project name "
                    "and that the token was created for it")


def resolve_project(db: TokenStore, principal: Principal, name: str, now: float, *,
                    create: bool = False) -> ProjectRow:
    """The project `name` as the token sees it, or the 404. `create`: an org-level token with
    write scope creates a project it does not find (the caller passes it for a push only)."""
    if not valid_project_name(name):
        raise not_found(name)
    project = principal.project_row if principal.looked_up == name else db.find_project(principal.org_id, name)
    if principal.project_id is not None:
        if project is None or int(project["id"]) != principal.project_id:
            raise not_found(name)
        return project
    if project is None:
        if not (create and scope_allows(principal.scope, "write")):
            raise not_found(name)
        project = db.ensure_project(principal.org_id, name, now)
    return project
