"""The team server's dashboard: the team's lessons in a browser, under `/ui/` of `ace server`.

`create_dashboard(db, *, limiter, now, review_client, prefix="/ui")` builds a Starlette app that
`server.app.create_app` mounts at `prefix`. Who may see what (`dashboard_auth`): a server token
signs in once and becomes a session kept in the team database (any replica serves it);
`dashboard_auth.guard` (`web.guard`'s pieces around that policy) checks it, the CSRF token and
the origin before any route runs. The routes then apply the API's own rules, in the API's order
(`auth.require_scope`, then `auth.resolve_project`): a project token sees its project only, an
org token its org's projects, anything else is the same 404 whether it exists or not; `read`
browses; `admin` also sees the review queue and decides (`TeamDB.decide` as `review_client`, the
path of `POST /v1/…/review/{id}`: an approval is logged as an ADD that clients pull; each form
carries the `content_hash` of the wording the page showed, and a lesson changed since is a 409
page, never a decision on text the admin did not see). What waits
in the review queue (quarantined or rejected content, never logged for pull) is shown to admin
tokens only, as in the API: other tokens see active and archived lessons whose wording was
logged (a held lesson archived by a REMOVE stays hidden), and a lesson's published versions only.

Pages (this package's `templates/team_*.html` on `web/`'s frame, stylesheet, script and macros):
`/` projects with counts (the sign-in form without a session), `/p/{project}` lessons (status,
section, text filter, 50 a page), `/p/{project}/lessons/{id}` one lesson (versions with their
client and time, per-client counts, its log), `/p/{project}/review` the queue, `/p/{project}/stats`
(`TeamDB.stats`: per-day bars drawn on the server, helpful rate, top lessons, clients). Clients
appear by the label of the token that owns them (`TeamDB.client_names`), not as bare ids. Text is
data: the Jinja2 environment is `web.render`'s (autoescape on every template, control characters made
visible), so a lesson holding `<script>` shows as text. Forms, parameters, redirects, flash messages
and refusals (`Refused`) are `web.page`'s, as for `ace ui`.

Cost: imports Starlette, Jinja2 and `web` when the server starts; a page is a few indexed
queries (`server.storage.views`) run in Starlette's thread pool.
"""

from __future__ import annotations

import datetime as _dt
import os
import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal
from urllib.parse import quote

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import HTMLResponse, Response
from starlette.routing import Route

from ..playbook import sections as sections_mod
from ..web import charts, render
from ..web.guard import secure_response
from ..web.page import Refused, flash, form, int_param, load_static, redirect, static_route, text_param
from . import dashboard_auth
from .auth import ApiError, Authenticator, Principal, require_scope, resolve_project, scope_allows
from .limits import RateLimiter
from .storage.db import NotFound, Stale, TeamDBError
from .storage.records import ProjectOverview, ProjectRow

if TYPE_CHECKING:
    import jinja2
    from starlette.types import ASGIApp

    from .storage.db import TeamDB

HERE = os.path.dirname(os.path.abspath(__file__))

_HASH = re.compile(r"[0-9a-f]{64}")  # a lesson's content hash, as the review forms carry it
PAGE_SIZE = 50
REVIEW_PAGE = 200  # the oldest this many of the queue are shown; deciding them brings the next
PUBLIC_STATUSES = ("active", "archived")  # what a pull can show; held content is the reviewers'
ALL_STATUSES = ("active", "quarantined", "archived", "rejected")
WINDOWS = (7, 30, 90)
SERIES: dict[Literal["created", "updated", "pruned", "quarantined"], str] = {
    "created": "#2da44e", "updated": "#4493f8", "pruned": "#8c959f", "quarantined": "#cf222e"}
FLASH = {
    "approved": "Approved: the lesson is active, logged for every client's next pull.",
    "rejected": "Rejected: it stays out of the team's playbook (a held update gives back what the team had).",
    "signed-out": "Signed out: this browser's session is over.",
}
Page = Callable[[Request], Response]


def create_dashboard(db: TeamDB, *, limiter: RateLimiter, now: Callable[[], float] = time.time,
                     review_client: str = "server-review", prefix: str = "/ui",
                     sessions: dashboard_auth.Sessions | None = None) -> Starlette:
    """The dashboard app over `db`, to be mounted at `prefix` (see the module docstring)."""
    static = load_static(render.STATIC)
    env = render.environment(os.path.join(HERE, "templates"), now=now, static=static, static_prefix=prefix)
    env.filters["seg"] = lambda value: quote(str(value), safe="")  # one path segment of a URL
    env.filters["day"] = lambda iso: charts.day_label(_day_number(str(iso)))
    pages = _Pages(db, env, sessions or dashboard_auth.Sessions(db), now, review_client, prefix)
    routes = [
        Route("/", pages.wrap(pages.home), methods=["GET"]),
        Route("/signin", pages.wrap(pages.signin_page), methods=["GET"]),
        Route("/signin", pages.wrap(pages.signin), methods=["POST"]),
        Route("/signout", pages.wrap(pages.signout), methods=["POST"]),
        Route("/p/{project}", pages.wrap(pages.lessons), methods=["GET"]),
        Route("/p/{project}/lessons/{lesson_id}", pages.wrap(pages.lesson), methods=["GET"]),
        Route("/p/{project}/review", pages.wrap(pages.review), methods=["GET"]),
        Route("/p/{project}/review/{lesson_id}", pages.wrap(pages.decide), methods=["POST"]),
        Route("/p/{project}/stats", pages.wrap(pages.stats), methods=["GET"]),
        Route("/static/{digest}/{name}", static_route(static), methods=["GET"]),
    ]

    def guard(app: ASGIApp) -> ASGIApp:
        return dashboard_auth.guard(app, db=db, sessions=pages.sessions, limiter=limiter, now=now)

    async def not_found(request: Request, exc: Exception) -> Response:
        return await run_in_threadpool(pages.error, request, 404, "Not found", "There is no such page.")

    async def failed(request: Request, exc: Exception) -> Response:
        # The traceback goes to the server's log; the page tells nothing of the inside.
        answer = pages.error(request, 500, "Something failed",
                             "The server failed on this page; its log has the details.")
        return secure_response(answer)  # this answer does not pass through the guard

    app = Starlette(routes=routes, middleware=[Middleware(guard)],
                    exception_handlers={404: not_found, Exception: failed})
    app.state.sessions = pages.sessions
    return app


def _day_number(iso: str) -> int:
    return (_dt.date.fromisoformat(iso) - _dt.date(1970, 1, 1)).days


@dataclass
class _Pages:
    db: TeamDB
    env: jinja2.Environment
    sessions: dashboard_auth.Sessions
    now: Callable[[], float]
    review_client: str
    prefix: str
    auth: Authenticator = field(init=False)

    def __post_init__(self) -> None:
        self.auth = Authenticator(self.db)

    # -- plumbing -------------------------------------------------------------------------------------

    def wrap(self, page: Page) -> Callable[[Request], Any]:
        """An endpoint running `page` in the thread pool (TeamDB is synchronous), its `Refused`,
        `ApiError` and database errors rendered as pages."""

        async def endpoint(request: Request) -> Response:
            return await run_in_threadpool(self._run, page, request)

        return endpoint

    def _run(self, page: Page, request: Request) -> Response:
        try:
            return page(request)
        except Refused as exc:
            return self.error(request, exc.status, exc.title, exc.message)
        except ApiError as exc:
            title = {403: "Not allowed", 404: "Not found"}.get(exc.status, "Refused")
            return self.error(request, exc.status, title, exc.message)
        except TeamDBError as exc:
            return self.error(request, 503, "The team database cannot be used", f"{exc}")

    @staticmethod
    def session(request: Request) -> dashboard_auth.Session | None:
        return dashboard_auth.session_of(request.scope)

    def principal(self, request: Request) -> Principal:
        session = self.session(request)
        if session is None:  # the guard lets no such request through; say so rather than assume
            raise Refused("Sign in first.", status=401, title="Not signed in")
        return session.principal

    def render(self, request: Request, template: str, *, status: int = 200, **context: Any) -> HTMLResponse:
        session = self.session(request)
        html = self.env.get_template(template).render(
            base=self.prefix, session=session, csrf=session.csrf if session else "",
            flash=flash(request, FLASH), titles=sections_mod.TITLES,
            **{"project": None, "nav": "", **context})
        return HTMLResponse(html, status_code=status)

    def error(self, request: Request, status: int, title: str, message: str) -> HTMLResponse:
        return self.render(request, "team_error.html", status=status, title=title, message=message)

    def project(self, request: Request, need: str) -> tuple[Principal, ProjectRow, ProjectOverview]:
        """(principal, project, its overview) for the `{project}` of the path: the API's 403 then 404."""
        principal = self.principal(request)
        require_scope(principal, need)
        project = resolve_project(self.db, principal, request.path_params["project"], self.now())
        overview = self.db.projects_overview(principal.org_id, int(project["id"]))
        if not overview:
            raise NotFound(f"project {project['id']} vanished")
        return principal, project, overview[0]

    def project_page(self, request: Request, template: str, overview: ProjectOverview, principal: Principal,
                     **context: Any) -> HTMLResponse:
        admin = scope_allows(principal.scope, "admin")
        # Clients are shown by the label of the token that owns them (`_team_macros.html`).
        return self.render(request, template, project=overview, admin=admin,
                           purl=f"{self.prefix}/p/{quote(overview['name'], safe='')}",
                           review_count=overview["lessons"]["quarantined"] if admin else 0,
                           names=self.db.client_names(int(overview["id"])), review_client=self.review_client,
                           **context)

    # -- sign-in --------------------------------------------------------------------------------------

    def home(self, request: Request) -> Response:
        session = self.session(request)
        if session is None:
            return self.signin_form(request)
        principal = session.principal
        projects = self.db.projects_overview(principal.org_id, principal.project_id)
        return self.render(request, "team_projects.html", nav="projects", projects=projects,
                           admin=scope_allows(principal.scope, "admin"))

    def signin_form(self, request: Request, *, status: int = 200, error: str | None = None,
                    wanted: str | None = None) -> HTMLResponse:
        wanted = wanted or dashboard_auth.safe_next(request.query_params.get("next"), self.prefix)
        return self.render(request, "team_signin.html", status=status, error=error, next=wanted,
                           session_hours=f"{self.sessions.ttl_s / 3600:g}")

    def signin_page(self, request: Request) -> Response:
        if self.session(request) is not None:
            return redirect(f"{self.prefix}/")
        return self.signin_form(request)

    def signin(self, request: Request) -> Response:
        given = form(request)
        wanted = dashboard_auth.safe_next(given.get("next"), self.prefix)
        now = self.now()
        try:
            principal = self.auth.authenticate(f"Bearer {given.get('token', '').strip()}", now)
        except ApiError:
            return self.signin_form(request, status=401, wanted=wanted,
                                    error="This token is unknown, expired or revoked. Use a token of this server "
                                          "(`ace server token create`), pasted whole.")
        row = self.db.token_by_id(principal.token_id)
        old = self.session(request)
        if old is not None:
            self.sessions.end(old.id)
        label = (row["label"] if row else None) or f"token #{principal.token_id}"
        session = self.sessions.open(principal, label, row["expires_at"] if row else None, now)
        answer = redirect(wanted or f"{self.prefix}/")
        answer.headers.append("set-cookie", dashboard_auth.session_cookie(request.scope, session, now))
        return answer

    def signout(self, request: Request) -> Response:
        session = self.session(request)
        if session is not None:
            self.sessions.end(session.id)
        answer = redirect(f"{self.prefix}/", "signed-out")
        answer.headers.append("set-cookie", dashboard_auth.session_cookie(request.scope, None, self.now()))
        return answer

    # -- pages ----------------------------------------------------------------------------------------

    def lessons(self, request: Request) -> Response:
        principal, project, overview = self.project(request, "read")
        admin = scope_allows(principal.scope, "admin")
        statuses = ALL_STATUSES if admin else PUBLIC_STATUSES
        sections = self.db.sections(int(project["id"]), statuses, published_only=not admin)
        params = {"q": text_param(request, "q", 200), "status": text_param(request, "status", 20),
                  "section": text_param(request, "section", 100)}
        if params["status"] not in statuses:
            params["status"] = ""
        if params["section"] not in {s["section"] for s in sections}:
            params["section"] = ""
        page = int_param(request, "page", 1, 1, 1_000_000)
        found = self.db.lesson_page(int(project["id"]), statuses=statuses, status=params["status"] or None,
                                    section=params["section"] or None, query=params["q"],
                                    published_only=not admin, limit=PAGE_SIZE, offset=(page - 1) * PAGE_SIZE)
        return self.project_page(request, "team_lessons.html", overview, principal, nav="lessons",
                                 rows=found["rows"], total=found["total"], page=page, page_size=PAGE_SIZE,
                                 params=params, statuses=statuses, sections=sections)

    def lesson(self, request: Request) -> Response:
        principal, project, overview = self.project(request, "read")
        admin = scope_allows(principal.scope, "admin")
        lesson_id = request.path_params["lesson_id"]
        found = self.db.lesson(int(project["id"]), lesson_id)
        if found is None or not (admin or found["status"] in PUBLIC_STATUSES and any(
                v["version"] == found["version"] and v["seq"] is not None for v in found["versions"])):
            raise Refused(f"There is no lesson {lesson_id!r} in this project for this token.", status=404,
                          title="Not found")
        versions = [v for v in found["versions"] if admin or v["seq"] is not None]
        clients = sorted(found["counts"].items(), key=lambda kv: (-kv[1][0] - kv[1][1], kv[0]))
        log = self.db.lesson_log(int(project["id"]), lesson_id, 100)
        return self.project_page(request, "team_lesson.html", overview, principal, nav="lessons", lesson=found,
                                 versions=list(reversed(versions)), clients=clients, log=log)

    def review(self, request: Request) -> Response:
        principal, project, overview = self.project(request, "admin")
        queue = self.db.review_queue(int(project["id"]))
        return self.project_page(request, "team_review.html", overview, principal, nav="review",
                                 queue=queue[:REVIEW_PAGE], waiting=len(queue))

    def decide(self, request: Request) -> Response:
        principal, project, overview = self.project(request, "admin")
        given = form(request)
        action, seen = given.get("action"), given.get("content_hash") or ""
        if action not in ("approve", "reject"):
            raise Refused("The form's action must be approve or reject.", status=400, title="Bad request")
        if not _HASH.fullmatch(seen):
            raise Refused("The form must name the content hash the page showed; reload the page.", status=400,
                          title="Bad request")
        lesson_id = request.path_params["lesson_id"]
        try:
            self.db.decide(int(project["id"]), lesson_id, action == "approve", self.review_client, self.now(),
                           content_hash=seen)
        except NotFound as exc:
            raise Refused(f"No lesson {lesson_id!r} is waiting for review in this project (another reviewer "
                          "may have decided it already).", status=404, title="Not found") from exc
        except Stale as exc:  # the pusher changed it after this page was shown: never approve unseen text
            raise Refused(f"Lesson {lesson_id} was changed after this page showed it, so nothing was decided. "
                          "Reload the review queue and decide on what it says now.", status=409,
                          title="Changed since you read it") from exc
        purl = f"{self.prefix}/p/{quote(overview['name'], safe='')}"
        back = f"{purl}/lessons/{quote(lesson_id, safe='')}" if given.get("back") == "lesson" else f"{purl}/review"
        return redirect(back, "approved" if action == "approve" else "rejected")

    def stats(self, request: Request) -> Response:
        principal, project, overview = self.project(request, "read")
        days = int_param(request, "days", 30, 1, 365)
        days = min(WINDOWS, key=lambda w: abs(w - days))
        found = self.db.stats(int(project["id"]), days, self.now())
        periods = found["periods"]
        labels = [charts.day_label(_day_number(p["day"])) for p in periods]
        chart = charts.bars(labels, {name: [p[name] for p in periods] for name in SERIES},
                            title=f"Lessons created, updated, pruned and held for review per day (UTC), "
                                  f"last {days} days")
        totals = {name: sum(p[name] for p in periods) for name in SERIES}
        return self.project_page(request, "team_stats.html", overview, principal, nav="stats", stats=found,
                                 chart=chart, colors=SERIES, totals=totals, days=days, windows=WINDOWS,
                                 clients=self.db.clients(int(project["id"])))
