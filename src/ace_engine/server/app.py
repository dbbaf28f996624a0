"""The team server's HTTP API: a Starlette app over a `server.storage.db.TeamDB`.

`create_app(db, *, max_body_bytes, rate_per_second, burst, now=time.time)` builds it; `ace server
run` serves it with uvicorn. `from_environment()` is the same app as a factory uvicorn's worker
processes call (`ace server run --workers N`): each opens its own `TeamDB` from the `ACE_SERVER_*`
variables the command set, and closes it at shutdown. Nothing a request needs lives in a process:
sessions, rate buckets, review decisions and the per-project sequence are in the database, so any
number of processes on one PostgreSQL answer as one server (docs/team-server.md, "Running several
replicas"). The routes, their schemas and error answers are the ones of
`openapi.document()` (served at `GET /openapi.json`) and docs/team-server.md, "Protocol". The
team's dashboard (`dashboard.py`) is mounted under `/ui/`, outside the API and its document.

Every route but `GET /v1/health` and `GET /openapi.json` goes through one path (`_Api.endpoint`),
in this order, so no route can skip a step:
1. body size (`limits.BodyLimit`, before anything is parsed): 413;
2. token (`auth.Authenticator`): 401 — before the body is even parsed, so an unauthenticated
   caller learns nothing, not even that its JSON was malformed;
3. rate (`limits.RateLimiter`, per token): 429 with `Retry-After`;
4. scope (`auth.require_scope`): 403, which says nothing about any project;
5. body and query against their schemas (`openapi.check`): 400;
6. project (`auth.resolve_project`): 404, the same answer whether it exists or not.
Then the route's own work, in the API's thread pool (`_Api._in_thread`; TeamDB is synchronous and
thread-safe).

Every pushed delta goes through `policy.screen` (redaction, private spans, content rules,
section, ids, the lesson safety policy) before `TeamDB.apply_deltas`, which applies
`policy.rules(token)` inside the push's transaction (content a delta publishes without carrying
it screened too; the client id bound to the token: another token's id is a 403 for the whole
push; marks budgeted per lesson, token and day); one transaction per push, a result per delta.
An approval names the `content_hash` the reviewer saw: a lesson changed since is a 409.
Errors are `{"error": {"code", "message"}}`, unknown routes included.

Steps 2 and 3 are one statement (`Authenticator.admit`: the token, the path's project and the rate
take). A push is screened in the thread pool, then waits on the event loop for its turn in this process's
queue of its project's pushes (`pushes.Pushes`): the pushes that arrive while one group is in the
database go together as the next (one transaction: group commit), so one project has one of this
process's transactions at its row lock at a time, and a burst of pushes holds neither pooled
connections nor threads while it waits.

Cost: Starlette and this package; a request costs one statement for its token and rate plus its
route's queries.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, NamedTuple, TypeAlias, TypeVar

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Mount, Route

from .. import __version__
from . import dashboard, openapi, policy
from .auth import ApiError, Authenticator, Principal, require_scope, resolve_project
from .changes import Changes
from .limits import DEFAULT_BURST, DEFAULT_MAX_BODY_BYTES, DEFAULT_RATE_PER_SECOND, BodyLimit, RateLimiter, retry_after
from .pushes import Pushes
from .storage.batch import Push
from .storage.db import ClientTaken, NotFound, Stale
from .storage.records import Decision, DeltaResult, ProjectRow, ProjectSummary, PullPage, Stats

if TYPE_CHECKING:
    from .storage.db import TeamDB

_INT = re.compile(r"-?[0-9]{1,20}")
_T = TypeVar("_T")
REQUEST_THREADS = 40  # the API's thread pool (anyio's default, which Starlette's run_in_threadpool used)
REVIEW_CLIENT = "server-review"  # the client id an admin's approval is logged under


@dataclass
class Ctx:
    """One authorised request, as a route sees it."""

    principal: Principal
    project: ProjectRow
    data: Any
    params: dict[str, int]
    path: dict[str, str]
    now: float


def _error(status: int, code: str, message: str, headers: dict[str, str] | None = None) -> JSONResponse:
    return JSONResponse({"error": {"code": code, "message": message}}, status_code=status, headers=headers)


def _constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _parse_json(raw: bytes) -> Any:
    try:
        return policy.repair_json(json.loads(raw.decode("utf-8"), parse_constant=_constant))
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise ApiError(400, "bad_json", f"the body is not valid UTF-8 JSON ({exc}); send a JSON object") from exc


def _query(request: Request, spec: dict[str, tuple[dict[str, Any], int]]) -> dict[str, int]:
    out = {}
    for name, (schema, default) in spec.items():
        text = request.query_params.get(name)
        if text is None:
            out[name] = default
            continue
        value = int(text) if _INT.fullmatch(text) else None
        why = openapi.check(schema, value, name) if value is not None else f"{name} must be an integer"
        if why:
            raise ApiError(400, "bad_request", why)
        out[name] = int(text)
    return out


class _Api:
    def __init__(self, db: TeamDB, limiter: RateLimiter, now: Callable[[], float],
                 max_wait_s: float = openapi.MAX_WAIT) -> None:
        self.db = db
        self.max_wait_s = float(max_wait_s)
        self.limiter = limiter
        self.now = now
        self.auth = Authenticator(db)
        self.changes = Changes(db.last_seqs)
        self.pushes = Pushes(db.apply_pushes)
        self._threads = ThreadPoolExecutor(max_workers=REQUEST_THREADS, thread_name_prefix="ace-api")

    async def _in_thread(self, fn: Callable[..., _T], *args: Any) -> _T:
        """`fn(*args)` on a thread of the API's pool. A plain executor, not Starlette's (anyio's)
        `run_in_threadpool`: that hands each call to its thread through a `queue.Queue`, whose
        Python-level lock and condition were ~8% of the server's CPU in a profile (--gil) under the
        load bench; the executor's queue is C. A cancelled request leaves its call to finish."""
        return await asyncio.get_running_loop().run_in_executor(self._threads, fn, *args)

    def close(self) -> None:
        self.pushes.close()
        self._threads.shutdown(wait=False)

    def endpoint(self, work: Callable[[Ctx], _Answer], *, scope: str, body: str | None = None,
                 query: str | None = None, create: bool = False) -> Callable[[Request], Awaitable[Response]]:
        """An ASGI endpoint running the six steps of the module docstring, then `work` in a thread."""

        async def handle(request: Request) -> Response:
            raw = await request.body() if body else b""  # within the limit: BodyLimit read it already
            try:
                result = await self._in_thread(self._run, work, request, raw, scope, body, query, create)
                if isinstance(result, _Pulled):
                    return _pull_response(await self._long_poll(result))
                if isinstance(result, _Pushing):
                    result = await self._store_push(result)
            except ApiError as exc:
                return _error(exc.status, exc.code, exc.message, exc.headers)
            return JSONResponse(result, headers=_NO_STORE)

        return handle

    async def _long_poll(self, pulled: _Pulled) -> PullPage:
        """The page, or — when it is empty and the pull may wait — the first page with a delta, or
        the empty one once the wait is over (`changes.Changes`)."""
        page, project_id, after, limit, wait = pulled
        if page["deltas"] or wait <= 0:
            return page
        deadline = time.monotonic() + min(float(wait), self.max_wait_s)
        while (left := deadline - time.monotonic()) > 0:
            await self.changes.wait(project_id, after, left)
            page = await self._in_thread(self.db.pull_page, project_id, after, limit)
            if page["deltas"]:
                break
        return page

    def _run(self, work: Callable[[Ctx], _Answer], request: Request, raw: bytes, scope: str, body: str | None,
             query: str | None, create: bool) -> _Answer:
        now = self.now()
        # The token, the path's project and the rate take in one statement (`resolve_project` below
        # uses that row): 401 before 429, as the take is made only for a live token.
        principal, wait = self.auth.admit(request.headers.get("authorization"), now,
                                          request.path_params["project"], self.limiter)
        if wait > 0:
            raise ApiError(429, "rate_limited", f"over this token's rate limit; retry in {wait:.1f} s",
                           {"Retry-After": retry_after(wait)})
        require_scope(principal, scope)
        data = None
        if body is not None:
            data = _parse_json(raw)
            why = openapi.check(body, data)
            if why:
                raise ApiError(400, "bad_request", why)
        params = _query(request, openapi.QUERY[query]) if query else {}
        path = dict(request.path_params)
        if "lesson_id" in path and (why := openapi.check(openapi.SCHEMAS["DeltaAdd"]["properties"]["lesson_id"],
                                                         path["lesson_id"], "lesson_id")):
            raise ApiError(400, "bad_request", why)
        project = resolve_project(self.db, principal, path["project"], now, create=create)
        return work(Ctx(principal, project, data, params, path, now))

    # -- the routes' work ---------------------------------------------------------------------------------

    def project(self, ctx: Ctx) -> ProjectSummary:
        return self.db.project_summary(ctx.project["id"])

    def push(self, ctx: Ctx) -> _Pushing:
        client_id = ctx.data["client_id"]
        if client_id == REVIEW_CLIENT:  # approvals are logged under it: no client may pose as the reviewer
            raise ApiError(403, "client_taken", f"client id {REVIEW_CLIENT!r} is the server's own (its reviewers' "
                           "approvals); keep the client id `ace remote set` gave this machine")
        results: list[dict[str, Any]] = []
        screened: list[tuple[int, policy.Verdict]] = []  # (index in results, verdict) of those to store
        items: list[tuple[str, str, str, dict[str, Any], str]] = []
        for delta in ctx.data["deltas"]:
            verdict = policy.screen(delta)
            if verdict.status == "rejected":
                results.append({"key": policy.result_key(delta), "status": "rejected", "seq": None,
                                "reason": verdict.reason})
                continue
            fields = dict(verdict.body)
            key, op, lesson_id = fields.pop("key"), fields.pop("op"), fields.pop("lesson_id")
            screened.append((len(results), verdict))
            results.append({"key": key})
            items.append((key, op, lesson_id, fields, verdict.status))
        return _Pushing(int(ctx.project["id"]), int(ctx.project["last_seq"]), results, screened,
                        Push(client_id, items, ctx.now, policy.rules(ctx.principal.token_id)))

    async def _store_push(self, pending: _Pushing) -> dict[str, Any]:
        """The screened push through this process's queue of its project's pushes (`pushes.Pushes`:
        several go to the database as one transaction), then each delta's answer in its place."""
        project_id, last_seq, results, screened, push = pending
        stored: list[DeltaResult] = []
        if push.items:
            try:
                stored, last_seq = await self.pushes.submit(project_id, push)
            except ClientTaken as exc:  # a token pushing as another token's client: nothing of it is applied
                raise ApiError(403, "client_taken", f"{exc}; keep the client id `ace remote set` gave this "
                               "machine, or revoke the token that used it before") from exc
            self.changes.notify(project_id, last_seq)  # wake this process's long-polling pulls
        for (at, verdict), out in zip(screened, stored, strict=True):
            status = str(out["status"])
            reason = (verdict.reason or out.get("reason")) if status == "quarantined" else out.get("reason")
            results[at].update(status=status, seq=out.get("seq"), reason=reason)
        return {"results": results, "last_seq": last_seq}

    def pull(self, ctx: Ctx) -> _Pulled:
        project_id, after, limit = int(ctx.project["id"]), ctx.params["after"], ctx.params["limit"]
        return _Pulled(self.db.pull_page(project_id, after, limit), project_id, after, limit, ctx.params["wait"])

    def review_queue(self, ctx: Ctx) -> dict[str, Any]:
        return {"lessons": self.db.review_queue(ctx.project["id"])}

    def review_decide(self, ctx: Ctx) -> Decision:
        lesson_id = ctx.path["lesson_id"]
        try:
            return self.db.decide(ctx.project["id"], lesson_id, ctx.data["action"] == "approve", REVIEW_CLIENT,
                                  ctx.now, content_hash=ctx.data["content_hash"])
        except NotFound as exc:
            raise ApiError(404, "not_found", f"no lesson {lesson_id!r} waiting for review in this project; "
                           "GET …/review lists them") from exc
        except Stale as exc:  # the pusher changed it after the reviewer read it: decide on what it says now
            raise ApiError(409, "changed", f"{exc} (GET …/review shows its content_hash)") from exc

    def stats(self, ctx: Ctx) -> Stats:
        return self.db.stats(ctx.project["id"], ctx.params["days"], ctx.now)


_NO_STORE = {"Cache-Control": "no-store"}


_Answer: TypeAlias = "Mapping[str, object] | _Pulled | _Pushing"  # what a route's work returns from the thread pool


class _Pushing(NamedTuple):
    """A push screened in the thread pool, on its way to the database (`_Api._store_push`)."""

    project_id: int
    last_seq: int
    results: list[dict[str, Any]]
    screened: list[tuple[int, policy.Verdict]]
    push: Push


class _Pulled(NamedTuple):
    """A pull's first page, and what a long-poll needs to ask again."""

    page: PullPage
    project_id: int
    after: int
    limit: int
    wait: int


def _pull_response(page: PullPage) -> Response:
    """A `PullResponse` written from the deltas' JSON text as the store gave it: no row is parsed
    or serialised again here (the pull was the server's largest cost: each delta is pulled by
    every client of the project)."""
    body = (f'{{"deltas":[{",".join(page["deltas"])}],"last_seq":{int(page["last_seq"])},'
            f'"more":{"true" if page["more"] else "false"}}}')
    return Response(body.encode("utf-8", "surrogatepass"), media_type="application/json", headers=_NO_STORE)


async def _health(request: Request) -> Response:
    return JSONResponse({"ok": True, "version": __version__})


def _http_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, HTTPException)
    if exc.status_code == 404:
        return _error(404, "not_found", f"no route {request.method} {request.url.path}; GET /openapi.json lists them")
    if exc.status_code == 405:
        return _error(405, "method_not_allowed", f"{request.method} is not allowed on {request.url.path}",
                      dict(exc.headers or {}))
    return _error(exc.status_code, "http_error", str(exc.detail), dict(exc.headers or {}))


def _internal(request: Request, exc: Exception) -> Response:
    # The traceback goes to the server's log (uvicorn); the client learns nothing about the inside.
    return _error(500, "internal", "the server failed on this request; its log has the details")


def create_app(db: TeamDB, *, max_body_bytes: int = DEFAULT_MAX_BODY_BYTES,
               rate_per_second: float = DEFAULT_RATE_PER_SECOND, burst: int = DEFAULT_BURST,
               now: Callable[[], float] = time.time, close_db: bool = False,
               max_wait_s: float = openapi.MAX_WAIT) -> Starlette:
    """The team server's ASGI app over `db` (see the module docstring); `close_db`: the app owns
    `db` and closes it when the server shuts down; `max_wait_s`: the longest a pull's `wait` holds
    (the document's maximum; a test server may cut it short)."""
    # One bucket per token, for the API and the dashboard, in the database: shared by every replica.
    limiter = RateLimiter(rate_per_second, burst, store=db)
    api = _Api(db, limiter, now, max_wait_s)
    doc = openapi.document(__version__)

    async def spec(request: Request) -> Response:
        return JSONResponse(doc)

    base = "/v1/projects/{project}"
    routes = [
        Route("/v1/health", _health, methods=["GET"]),
        Route("/openapi.json", spec, methods=["GET"]),
        Route(base, api.endpoint(api.project, scope="read"), methods=["GET"]),
        Route(f"{base}/deltas", api.endpoint(api.push, scope="write", body="PushRequest", create=True),
              methods=["POST"]),
        Route(f"{base}/deltas", api.endpoint(api.pull, scope="read", query="pull"), methods=["GET"]),
        Route(f"{base}/review", api.endpoint(api.review_queue, scope="admin"), methods=["GET"]),
        Route(f"{base}/review/{{lesson_id}}", api.endpoint(api.review_decide, scope="admin", body="ReviewRequest"),
              methods=["POST"]),
        Route(f"{base}/stats", api.endpoint(api.stats, scope="read", query="stats"), methods=["GET"]),
        # The team's lessons in a browser (server/dashboard.py): its own sign-in, sessions and CSRF;
        # not part of the API, nor of its OpenAPI document. The body limit below applies to it too.
        Mount("/ui", app=dashboard.create_dashboard(db, limiter=limiter, now=now, review_client=REVIEW_CLIENT)),
    ]
    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        try:
            yield
        finally:
            api.close()
            if close_db:
                db.close()

    return Starlette(routes=routes, middleware=[Middleware(BodyLimit, max_bytes=max_body_bytes)],
                     exception_handlers={HTTPException: _http_error, Exception: _internal}, lifespan=lifespan)


def from_environment() -> Starlette:
    """The app of one worker process of `ace server run --workers N`, from the `ACE_SERVER_*`
    variables that command set (ACE_SERVER_DATABASE, _MAX_BODY_BYTES, _RATE, _BURST)."""
    from .storage.db import TeamDB

    env = os.environ
    db = TeamDB.open(env.get("ACE_SERVER_DATABASE") or None)
    return create_app(db, max_body_bytes=int(env.get("ACE_SERVER_MAX_BODY_BYTES") or DEFAULT_MAX_BODY_BYTES),
                      rate_per_second=float(env.get("ACE_SERVER_RATE") or DEFAULT_RATE_PER_SECOND),
                      burst=int(env.get("ACE_SERVER_BURST") or DEFAULT_BURST), close_db=True)
