"""Session pages: a project's timeline, one session's story, and its live view (server-sent events).

Contract: the session page shows the session's prompts, tool calls (failed ones marked), the
lessons injected at each moment (grouped per hook call), and the session markers, in time order
(`views_sql.session_items`), at most `ITEMS` per page with a link to the next ones; then the
lessons learned from it and the learning runs over it. The live view (`/sessions/{id}/events`)
polls the store every `POLL_S` seconds for items after a cursor (the last id of each kind, sent
as the event id so a reconnecting browser resumes where it stopped), sends each as rendered,
escaped HTML, says when the session ends, and stops when the client goes away, the session has
ended, or after `MAX_STREAM_S`.

Cost: the timeline is one indexed query per page with a few indexed counts per session; the live
view opens one store for the stream and runs four indexed queries a second.
"""

from __future__ import annotations

import json
import time
from collections.abc import AsyncIterator
from functools import partial
from typing import TYPE_CHECKING, Any

import anyio
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse
from starlette.routing import Route

from ...web import charts
from ...web.page import int_param, text_param
from .. import site

if TYPE_CHECKING:
    from ..site import UIStore

ITEMS = 300
POLL_S = 1.0
HEARTBEAT_S = 15.0
MAX_STREAM_S = 3600.0
TIMELINE_PAGE = 30


def _project(value: str, projects: list[dict[str, Any]]) -> dict[str, Any] | None:
    if value.isdigit():
        return next((p for p in projects if p["id"] == int(value)), None)
    return projects[0] if projects and value != "none" else None


def timeline(request: Request) -> Response:
    page = int_param(request, "page", 1, 1, 100_000)
    chosen = text_param(request, "project", 20)
    with site.store(request) as store:
        projects = store.session_projects()
        project = _project(chosen, projects)
        project_id = project["id"] if project else None
        rows, total = store.sessions_timeline(project_id, limit=TIMELINE_PAGE, offset=(page - 1) * TIMELINE_PAGE)
        now = site.now(request)
        offset = charts.utc_offset(now)
        last = charts.day_number(now, offset)
        days = charts.day_axis(store.session_days(project_id, now - 30 * 86400, offset), ("sessions",),
                               last - 29, last)
        chart = charts.bars([charts.day_label(d["day"]) for d in days], {"sessions": [d["sessions"] for d in days]},
                            title="Sessions started per day, last 30 days")
        return site.render(request, store, "sessions.html", nav="sessions", projects=projects, project=project,
                          sessions=rows, total=total, page=page, page_size=TIMELINE_PAGE, chart=chart, days=days,
                          params={"project": str(project_id) if project else "none"})


def group(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Consecutive injections of one hook call (same hook, same time) become one `shown` item."""
    out: list[dict[str, Any]] = []
    for item in items:
        last = out[-1] if out else None
        if item["kind"] == "injection":
            if last and last["kind"] == "shown" and last["hook"] == item["hook"] and \
                    last["created_at"] == item["created_at"]:
                last["lessons"].append(item)
                continue
            out.append({"kind": "shown", "hook": item["hook"], "created_at": item["created_at"], "id": item["id"],
                        "lessons": [item]})
        else:
            out.append(item)
    return out


def _cursor(items: list[dict[str, Any]], start: tuple[int, int, int, int]) -> tuple[int, int, int, int]:
    kinds = {"message": 0, "tool": 1, "injection": 2, "marker": 3}
    cursor = list(start)
    for item in items:
        index = kinds[item["kind"]]
        cursor[index] = max(cursor[index], int(item["id"]))
    return cursor[0], cursor[1], cursor[2], cursor[3]


def _parse_cursor(text: str | None) -> tuple[int, int, int, int]:
    try:
        parts = [max(0, int(p)) for p in (text or "").split(".")]
    except ValueError:
        parts = []
    return (parts + [0, 0, 0, 0])[:4] if len(parts) == 4 else (0, 0, 0, 0)  # type: ignore[return-value]


def session(request: Request) -> Response:
    sid = request.path_params["id"]
    after = _parse_cursor(request.query_params.get("after"))
    with site.store(request) as store:
        row = store.session_view(sid)
        if row is None:
            return site.not_found(request, "session")
        items = store.session_items(sid, after=after, limit=ITEMS + 1)
        more = len(items) > ITEMS
        items = items[:ITEMS]
        cursor = _cursor(items, after)
        if not more:  # the live view starts after everything there is now
            cursor = (cursor[0], cursor[1], cursor[2], store.session_hook_max(sid, cursor[3]))
        return site.render(
            request, store, "session.html", nav="sessions", session=row, items=group(items), more=more,
            cursor=".".join(map(str, cursor)), first_page=after == (0, 0, 0, 0),
            learned=store.session_learned(sid), runs=store.session_runs(sid),
            failures=sum(1 for i in items if i["kind"] == "tool" and not i["success"]),
            live=row["status"] == "active" and not more)


async def events(request: Request) -> Response:
    """GET /sessions/{id}/events: the live view's event stream (`text/event-stream`)."""
    sid = request.path_params["id"]
    if request.method == "HEAD":  # the headers alone: no stream to keep open
        return Response(media_type="text/event-stream")
    start = _parse_cursor(request.headers.get("last-event-id") or request.query_params.get("after"))
    opened: UIStore = await anyio.to_thread.run_sync(request.app.state.open_store)
    try:
        row = await anyio.to_thread.run_sync(opened.session_view, sid)
    except BaseException:
        opened.close()
        raise
    if row is None:
        opened.close()
        return site.not_found(request, "session")
    templates = request.app.state.templates
    return StreamingResponse(_stream(request, opened, sid, start, templates), media_type="text/event-stream",
                             headers={"x-accel-buffering": "no"})


async def _stream(request: Request, store: UIStore, sid: str, cursor: tuple[int, int, int, int],
                  templates: Any) -> AsyncIterator[str]:
    started = last_sent = time.monotonic()
    fragment = templates.get_template("_items.html")
    try:
        yield "retry: 2000\n\n"
        while time.monotonic() - started < MAX_STREAM_S:
            if await request.is_disconnected():
                return
            # The status first, then the items: once it reads "ended", the items read after it hold
            # everything up to the end (the SessionEnd marker was written with the status).
            row = await anyio.to_thread.run_sync(store.session_view, sid)
            items = await anyio.to_thread.run_sync(partial(store.session_items, sid, after=cursor, limit=ITEMS))
            if items:
                cursor = _cursor(items, cursor)
                html = fragment.render(items=group(items))
                data = json.dumps({"html": html, "count": len(items)})
                yield f"id: {'.'.join(map(str, cursor))}\nevent: items\ndata: {data}\n\n"
                last_sent = time.monotonic()
            if (row is None or row["status"] != "active") and len(items) < ITEMS:
                yield "event: ended\ndata: {}\n\n"
                return
            if time.monotonic() - last_sent > HEARTBEAT_S:
                yield ": still here\n\n"
                last_sent = time.monotonic()
            await anyio.sleep(POLL_S)
    finally:
        store.close()


ROUTES = [
    Route("/sessions", timeline, methods=["GET"]),
    Route("/sessions/{id}", session, methods=["GET"]),
    Route("/sessions/{id}/events", events, methods=["GET"]),
]
