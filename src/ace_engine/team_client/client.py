"""The team server's HTTP API as Python calls (docs/team-server.md, "Protocol"), over httpx.

Contract: `TeamClient(url, token)` has one method per route the client uses — `health`,
`project`, `push`, `pull`, `stats`, `review`, `decide` — each returning the server's JSON answer
as a dict. Every failure is a `RemoteError` whose message names the problem and the fix
(`Unreachable` when the server could not be reached at all: offline is normal, the caller keeps
its outbox and tries later); `status` holds the HTTP status when there was one. Timeouts: 5 s to
connect, 30 s to read. Redirects are not followed (a redirect must not carry the token elsewhere),
and the token never appears in a message, a log line or an exception.

Cost: importing httpx (~60 ms); never imported by a hook.
"""

from __future__ import annotations

import urllib.parse
from typing import Any

import httpx

from .. import __version__
from ..core.closing import Closing
from .remote import RemoteError

CONNECT_SECONDS = 5.0
READ_SECONDS = 30.0
MAX_PUSH = 500  # deltas per push (the protocol's limit)
MAX_PULL = 1000
MAX_WAIT = 30  # the longest a pull may wait on the server (its `wait` parameter's maximum)
# What an unreachable server costs, said only where it is true: a failed push or pull loses nothing.
NOTHING_LOST = " Nothing is lost: local changes wait for the next push"
_SYNCING = ("pushing", "pulling")


class Unreachable(RemoteError):
    """The server could not be reached (refused, timed out, DNS, TLS); nothing was sent or answered."""


class ServerRefused(RemoteError):
    """The server answered with an error status."""

    def __init__(self, message: str, status: int, code: str | None = None, retry_after: float | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.retry_after = retry_after


def _quote(name: str) -> str:
    return urllib.parse.quote(str(name), safe="")


class TeamClient(Closing):
    """Calls to the team server at `url` with `token` (None: only `health` works)."""

    def __init__(self, url: str, token: str | None, *, transport: httpx.BaseTransport | None = None,
                 timeout: httpx.Timeout | None = None) -> None:
        self.url = url.rstrip("/")
        headers = {"User-Agent": f"ace-engine/{__version__}", "Accept": "application/json"}
        if token:
            headers["Authorization"] = f"Bearer {token}"
        self._http = httpx.Client(
            base_url=self.url, headers=headers, follow_redirects=False, transport=transport,
            timeout=timeout or httpx.Timeout(READ_SECONDS, connect=CONNECT_SECONDS))

    def close(self) -> None:
        self._http.close()

    # -- routes ----------------------------------------------------------------------------------------

    def health(self) -> dict[str, Any]:
        answer = self._call("GET", "/v1/health", what="the health check")
        if answer.get("ok") is not True:
            raise RemoteError(f"{self.url} answered the health check without ok: true; is it an ace server? "
                              "Check the URL")
        return answer

    def project(self, project: str) -> dict[str, Any]:
        return self._call("GET", f"/v1/projects/{_quote(project)}", project=project, what="reading the project")

    def push(self, project: str, client_id: str, deltas: list[dict[str, Any]]) -> dict[str, Any]:
        if len(deltas) > MAX_PUSH:
            raise ValueError(f"at most {MAX_PUSH} deltas per push")
        answer = self._call("POST", f"/v1/projects/{_quote(project)}/deltas", project=project, what="pushing",
                            json={"client_id": client_id, "deltas": deltas})
        results = answer.get("results")
        if not isinstance(results, list) or len(results) != len(deltas):
            raise RemoteError(f"{self.url} answered a push of {len(deltas)} deltas with "
                              f"{len(results) if isinstance(results, list) else 'no'} results; nothing is marked "
                              "pushed, the next push sends them again")
        return answer

    def pull(self, project: str, after: int, limit: int = 500, wait: int = 0) -> dict[str, Any]:
        """Deltas after `after`. `wait` > 0 long-polls: with nothing new, the server holds the
        request up to `wait` seconds (at most MAX_WAIT) and answers as soon as a delta is logged,
        so a client that follows the team asks once per change, not once per poll interval."""
        params = {"after": int(after), "limit": max(1, min(int(limit), MAX_PULL))}
        extra: dict[str, Any] = {}
        if wait > 0:
            params["wait"] = min(int(wait), MAX_WAIT)
            extra["timeout"] = httpx.Timeout(READ_SECONDS + params["wait"], connect=CONNECT_SECONDS)
        answer = self._call("GET", f"/v1/projects/{_quote(project)}/deltas", project=project, what="pulling",
                            params=params, **extra)
        if not isinstance(answer.get("deltas"), list):
            raise RemoteError(f"{self.url} answered a pull without a list of deltas; is it an ace server?")
        return answer

    def stats(self, project: str, days: int = 30) -> dict[str, Any]:
        return self._call("GET", f"/v1/projects/{_quote(project)}/stats", project=project,
                          what="reading the statistics", params={"days": int(days)})

    def review(self, project: str) -> dict[str, Any]:
        return self._call("GET", f"/v1/projects/{_quote(project)}/review", project=project,
                          what="reading the review queue")

    def decide(self, project: str, lesson_id: str, approve: bool, content_hash: str) -> dict[str, Any]:
        """Approve or reject the lesson whose `content_hash` the reviewer saw (409 if it changed since)."""
        return self._call("POST", f"/v1/projects/{_quote(project)}/review/{_quote(lesson_id)}", project=project,
                          what="reviewing a lesson", json={"action": "approve" if approve else "reject",
                                                           "content_hash": content_hash})

    # -- transport and errors --------------------------------------------------------------------------

    def _call(self, method: str, path: str, *, what: str, project: str | None = None,
              **kwargs: Any) -> dict[str, Any]:
        try:
            response = self._http.request(method, path, **kwargs)
        except httpx.TimeoutException as exc:
            raise Unreachable(f"{self.url} did not answer in time ({what}: {type(exc).__name__}); the server may be "
                              f"down or overloaded.{NOTHING_LOST if what in _SYNCING else ''}") from None
        except httpx.HTTPError as exc:
            raise Unreachable(f"cannot reach {self.url} ({what}: {_reason(exc)}); check the URL and that the server "
                              f"runs (`ace remote status`).{NOTHING_LOST if what in _SYNCING else ''}") from None
        if response.status_code >= 300:
            raise self._refused(response, what, project)
        try:
            answer = response.json()
        except ValueError:
            raise RemoteError(f"{self.url} answered {what} with something that is not JSON (HTTP "
                              f"{response.status_code}); is the URL an ace server?") from None
        if not isinstance(answer, dict):
            raise RemoteError(f"{self.url} answered {what} with JSON that is not an object; is the URL an ace server?")
        return answer

    def _refused(self, response: httpx.Response, what: str, project: str | None) -> ServerRefused:
        status = response.status_code
        code, detail = None, ""
        try:
            error = response.json().get("error") or {}
            code, detail = error.get("code"), str(error.get("message") or "")[:300]
        except (ValueError, AttributeError):
            pass
        said = f" ({detail})" if detail else ""
        retry_after = None
        if status == 401:
            message = (f"the server refused the token (401){said}: run `ace remote set {self.url} --token NEW` "
                       "with a valid token (`ace server token create` on the server)")
        elif status == 403:
            message = (f"the token may not do this (403, {what}){said}: ask the server's admin for a token with "
                       "the `write` scope (push) or `admin` (review), then `ace remote set` it")
        elif status == 404:
            message = (f"the server has no project {project!r} this token can see (404){said}: check the name "
                       "(`ace remote set URL --token TOKEN --project NAME`) or ask for a token of that project")
        elif status == 413:
            message = f"the server refused a request as too large (413, {what}){said}; push fewer changes at once"
        elif status == 429:
            retry_after = _seconds(response.headers.get("Retry-After"))
            message = (f"the server is rate-limiting this token (429, {what}); try again in "
                       f"{retry_after or 'a few'} seconds")
        elif 300 <= status < 400:
            message = (f"{self.url} redirects ({status}) to {response.headers.get('Location', '?')}; ace does not "
                       "follow redirects with a token: set that URL instead (`ace remote set`)")
        elif status >= 500:
            message = (f"the server failed ({status}, {what}){said}; nothing is lost, the next push or pull tries "
                       "again. Tell its admin if it lasts")
        else:
            message = f"the server refused {what} ({status}){said}"
        return ServerRefused(message, status, code, retry_after)


def _reason(exc: httpx.HTTPError) -> str:
    text = str(exc) or type(exc).__name__
    return " ".join(text.split())[:200]


def _seconds(value: str | None) -> float | None:
    try:
        return max(0.0, float(value)) if value is not None else None
    except ValueError:
        return None
