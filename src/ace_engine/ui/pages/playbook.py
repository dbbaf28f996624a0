"""Playbook pages: the list with its filters, search, a lesson's page, its actions, the review queue.

Contract: search is `retrieval.search.search` itself — the ranking the hooks use, with the
project's configuration — and shows each hit's score and `why`; over "all projects" it runs once
per project (the most recently active `SEARCH_PROJECTS`) and keeps each lesson's best score.
Every change is a `playbook.Playbook` operation with source `user` (so the change log, the
counters' weights and the safety policy apply): tag (explicit), edit, archive, restore, and the
review queue's approve (a quarantined lesson: `restore(reviewed=True)`, the user's review; a
candidate: `promote`) and reject (archive).

Cost: a list page is two queries over `bullets`; a search costs what a prompt's search costs in a
hook, once per project searched.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from ...agents import lessons as agents_mod
from ...agents import registry
from ...core.errors import AceError
from ...playbook import safety
from ...playbook import sections as sections_mod
from ...playbook.playbook import STATUSES, Playbook
from ...web import charts
from ...web.page import Refused, form, int_param, redirect, text_param, wants_json
from .. import site

if TYPE_CHECKING:
    from ...core._types import ScoredBullet
    from ..site import UIStore

SEARCH_PROJECTS = 8
SEARCH_K = 20
REVIEW_PAGE = 100
ORDERS = {"value": "most valuable", "recent": "recently changed", "created": "newest", "shown": "most shown",
          "harmful": "most harmful"}
ACTIONS = ("tag", "edit", "archive", "restore", "approve", "reject")


def _scope(value: str, projects: list[dict[str, Any]]) -> tuple[int | None, bool]:
    """(project id, every scope) for the `scope` parameter: '' all, 'global', or a project's id."""
    if value == "global":
        return None, False
    if value.isdigit() and any(p["id"] == int(value) for p in projects):
        return int(value), False
    return None, True


def search_lessons(request: Request, store: UIStore, query: str, projects: list[dict[str, Any]], *,
                   scope: tuple[int | None, bool] = (None, True), section: str = "", domain: str = "",
                   weak: bool = False, k: int = SEARCH_K) -> list[ScoredBullet]:
    """The hooks' search for `query` in the chosen scope, best first (see the module docstring)."""
    from ...retrieval.search import search

    project_id, every = scope
    roots = {p["id"]: p["root"] for p in projects}
    targets: list[int | None] = [project_id] if not every else [p["id"] for p in projects[:SEARCH_PROJECTS]]
    best: dict[str, ScoredBullet] = {}
    for target in targets or [None]:
        cfg = site.config(request, roots.get(target) if target is not None else None)
        for hit in search(store, target, query, k=k * 2 if section else k, cfg=cfg,
                          domains_allowed=[domain] if domain else None, threshold=0.0 if weak else None,
                          now=site.now(request)):
            if section and hit["section"] != section:
                continue
            if hit["id"] not in best or hit["score"] > best[hit["id"]]["score"]:
                best[hit["id"]] = hit
    names = {p["id"]: p["name"] for p in projects}
    hits = sorted(best.values(), key=lambda h: (-h["score"], h["id"]))[:k]
    for hit in hits:
        hit["project"] = names.get(hit["project_id"]) if hit["project_id"] is not None else None  # type: ignore
    return hits


def index(request: Request) -> Response:
    params = {name: text_param(request, name, 200) for name in ("q", "section", "domain", "status", "scope",
                                                                     "order")}
    params["weak"] = "1" if request.query_params.get("weak") == "1" else ""
    page = int_param(request, "page", 1, 1, 100_000)
    with site.store(request) as store:
        projects = store.session_projects()
        facets = store.lesson_facets()
        scope = _scope(params["scope"], projects)
        context: dict[str, Any] = {"hits": None, "lessons": [], "total": 0}
        if params["q"]:
            context["hits"] = search_lessons(request, store, params["q"], projects, scope=scope,
                                             section=params["section"], domain=params["domain"],
                                             weak=bool(params["weak"]))
        else:
            status = params["status"] or "active"
            context["lessons"], context["total"] = store.lesson_page(
                project_id=scope[0], every_scope=scope[1], statuses=() if status == "any" else (status,),
                section=params["section"] or None, domain=params["domain"] or None,
                order=params["order"] if params["order"] in ORDERS else "value",
                limit=site.PAGE_SIZE, offset=(page - 1) * site.PAGE_SIZE)
        sections = list(dict.fromkeys([*sections_mod.DEFAULT_SECTIONS, *facets["sections"]]))
        return site.render(request, store, "playbook.html", nav="playbook", params=params, page=page,
                          page_size=site.PAGE_SIZE, projects=projects, facets=facets, sections=sections,
                          titles=sections_mod.TITLES, statuses=STATUSES, orders=ORDERS, q=params["q"], **context)


def api_search(request: Request) -> Response:
    """The command palette's search: JSON hits (the same search as the page's)."""
    query = text_param(request, "q", 500)
    if not query:
        return JSONResponse({"results": []})
    with site.store(request) as store:
        projects = store.session_projects()
        hits = search_lessons(request, store, query, projects, scope=_scope(text_param(request, "scope"), projects),
                              k=8)
    return JSONResponse({"results": [
        {"id": h["id"], "content": h["content"][:240], "section": h["section"], "score": h["score"], "why": h["why"],
         "url": f"/lessons/{h['id']}"} for h in hits]})


# -- one lesson --------------------------------------------------------------------------------------

def _provenance_sessions(prov: dict[str, Any]) -> list[str]:
    found = [*(prov.get("sessions") or []), prov.get("session_id")]
    found += [e.get("session_id") for e in prov.get("evidence_log") or [] if isinstance(e, dict)]
    return [s for s in dict.fromkeys(found) if isinstance(s, str) and s and not s.startswith("job:")]


def _provenance_events(prov: dict[str, Any]) -> list[int]:
    found = list(prov.get("tool_event_ids") or [])
    for entry in prov.get("evidence_log") or []:
        if isinstance(entry, dict):
            found += list(entry.get("tool_event_ids") or [])
    return [i for i in dict.fromkeys(found) if isinstance(i, int) and not isinstance(i, bool)]


def _lesson_context(request: Request, store: UIStore, bullet: dict[str, Any]) -> dict[str, Any]:
    prov = bullet["provenance"] if isinstance(bullet["provenance"], dict) else {}
    now = site.now(request)
    offset = charts.utc_offset(now)
    last = charts.day_number(now, offset)
    days = charts.day_axis(store.tag_days(now - 90 * 86400, offset, bullet["id"]), ("helpful", "harmful"),
                           last - 89, last)
    chart = None
    if any(d["helpful"] or d["harmful"] for d in days):
        chart = charts.bars([charts.day_label(d["day"]) for d in days],
                            {"helpful": [d["helpful"] for d in days], "harmful": [d["harmful"] for d in days]},
                            title="Helpful and harmful marks per day, last 90 days")
    injections, shown_total = store.lesson_injections(bullet["id"], limit=50)
    agents = agents_mod.lesson_agents(bullet, store.session_agents(agents_mod.provenance_sessions(bullet)))
    return {
        "agents": [registry.label(a) for a in agents],
        "lesson": bullet, "prov": prov, "history": store.changes(bullet_id=bullet["id"], limit=100),
        "injections": injections, "shown_total": shown_total, "chart": chart, "days": days,
        "prov_sessions": _provenance_sessions(prov), "sessions": store.sessions_by_id(_provenance_sessions(prov)),
        "events": store.tool_events_by_id(_provenance_events(prov)),
        "sections": list(dict.fromkeys([*sections_mod.DEFAULT_SECTIONS, bullet["section"]])),
        "titles": sections_mod.TITLES, "nav": "playbook", "error": None,
    }


def lesson(request: Request) -> Response:
    with site.store(request) as store:
        bullet = store.lesson(request.path_params["id"])
        if bullet is None:
            return site.not_found(request, "lesson")
        return site.render(request, store, "lesson.html", **_lesson_context(request, store, dict(bullet)))


def _playbook(request: Request, store: UIStore, bullet: dict[str, Any]) -> Playbook:
    """Operations screened as the curator screens lessons of that project: the user's
    `learning.trusted_hosts` and the project's own git remote host (as `ace keep` does)."""
    project = store.project_row(bullet["project_id"]) if bullet["project_id"] is not None else None
    remote = safety.remote_host(project["remote"]) if project else None
    hosts = tuple(site.config(request, project["root"] if project else None)["learning.trusted_hosts"] or ())
    return Playbook(store, None, trusted_hosts=hosts + ((remote,) if remote else ()))


def act(request: Request) -> Response:
    """POST /lessons/{id}/{action}: one change, then back to the lesson (or the review queue)."""
    action = request.path_params["action"]
    if action not in ACTIONS:
        return site.not_found(request, "action")
    data = form(request)
    at = site.now(request)
    with site.store(request) as store:
        bullet = store.get_bullet(request.path_params["id"])
        if bullet is None:
            return site.not_found(request, "lesson")
        bid, was = bullet["id"], bullet["status"]
        back = "/review" if data.get("back") == "review" else f"/lessons/{bid}"
        pb = _playbook(request, store, dict(bullet))
        try:
            if action == "tag":
                verdict = data.get("verdict", "")
                if verdict not in ("helpful", "harmful"):
                    raise Refused("mark a lesson helpful or harmful")
                tagged = pb.tag(bid, verdict, explicit=True, source="user", reason="marked in ace ui", now=at)
                if wants_json(request):
                    return JSONResponse({"id": tagged["id"], "helpful": tagged["helpful"], "harmful": tagged["harmful"],
                                         "helpful_explicit": tagged["helpful_explicit"],
                                         "harmful_explicit": tagged["harmful_explicit"],
                                         "confidence": tagged["confidence"]})
                done = verdict
            elif action == "edit":
                domains = [d for d in data.get("domains", "").replace(",", " ").split() if d]
                updated = pb.update(bid, content=data.get("content"), section=data.get("section") or None,
                                    domains=domains if domains and domains != bullet["domains"] else None,
                                    source="user", reason="edited in ace ui", now=at)
                done = ("unchanged" if updated["updated_at"] == bullet["updated_at"]
                        else "held" if updated["status"] == "quarantined" != was else "edited")
            elif action in ("archive", "reject"):
                if action == "reject" and was not in ("quarantined", "candidate"):
                    raise Refused(f"{bid} is {was}: only quarantined lessons and candidates wait for review")
                pb.remove(bid, source="user", reason=f"{'rejected' if action == 'reject' else 'archived'} in ace ui",
                          now=at)
                done = "rejected" if action == "reject" else "archived"
            elif action == "approve" and was == "quarantined":
                pb.restore(bid, source="user", reason="approved in ace ui", reviewed=True, now=at)
                done = "approved"
            elif action == "approve" and was == "candidate":
                kept = pb.promote(bid, source="user", reason="kept in ace ui", now=at)
                done = "promoted" if kept["status"] == "active" else "promoted-held"
            elif action == "approve":
                raise Refused(f"{bid} is {was}: only quarantined lessons and candidates wait for review")
            else:  # restore an archived lesson; a flagged one needs the review's approval
                pb.restore(bid, source="user", reason="restored in ace ui", now=at)
                done = "approved"
        except AceError as exc:
            if wants_json(request):
                return JSONResponse({"error": str(exc)}, status_code=409)
            context = _lesson_context(request, store, dict(store.lesson(bid) or bullet))
            context["error"] = str(exc)
            return site.render(request, store, "lesson.html", status=409, **context)
    return redirect(back, done)


def review(request: Request) -> Response:
    with site.store(request) as store:
        queue = store.review_queue(limit=REVIEW_PAGE)
        return site.render(request, store, "review.html", nav="review", queue=queue, titles=sections_mod.TITLES,
                          totals=store.lesson_facets()["statuses"])


ROUTES = [
    Route("/", index, methods=["GET"]),
    Route("/api/search", api_search, methods=["GET"]),
    Route("/review", review, methods=["GET"]),
    Route("/lessons/{id}", lesson, methods=["GET"]),
    Route("/lessons/{id}/{action}", act, methods=["POST"]),
]
