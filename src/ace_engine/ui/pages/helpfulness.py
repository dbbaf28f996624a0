""""Does it help?": how often lessons are shown, how it went after, and what learning did.

Contract: the figures come from the store as the feedback loop left it — `retrieval_count` (times
shown), the helpful / harmful counters (observed outcomes and explicit marks apart), the TAG rows of
the change log per day (the helpful rate over time: helpful / (helpful + harmful) of the marks given
that day), the injections per day, and `learning_runs`. A lesson "keeps hurting" when its weighted
harmful marks (explicit ones ×3, as the confidence counts them) exceed its helpful ones, with at
least two harmful marks; "never used" means active, never shown, and older than a week.

Cost: a handful of queries over `bullets` (a scan: ~10 ms at 10,000 lessons), the change log's
and the injections' windows of `days` days, one page of learning runs.
"""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from ...web import charts
from ...web.page import int_param
from .. import site

WINDOWS = (7, 30, 90, 365)
NEVER_USED_AFTER_S = 7 * 86400
RUNS_PAGE = 25


def rate(helpful: int, harmful: int) -> float | None:
    return helpful / (helpful + harmful) if helpful + harmful else None


def page(request: Request) -> Response:
    days_wanted = int_param(request, "days", 30, 1, 365)
    days_wanted = min(WINDOWS, key=lambda w: abs(w - days_wanted))
    runs_page = int_param(request, "runs", 1, 1, 100_000)
    now = site.now(request)
    offset = charts.utc_offset(now)
    last = charts.day_number(now, offset)
    first = last - days_wanted + 1
    since = first * 86400 - offset
    with site.store(request) as store:
        totals = store.help_totals()
        marks = charts.day_axis(store.tag_days(since, offset), ("helpful", "harmful"), first, last)
        shown = charts.day_axis(store.injection_days(since, offset), ("shown", "sessions"), first, last)
        labels = [charts.day_label(d["day"]) for d in marks]
        rates = [rate(d["helpful"], d["harmful"]) for d in marks]
        window = {"helpful": sum(d["helpful"] for d in marks), "harmful": sum(d["harmful"] for d in marks),
                  "shown": sum(d["shown"] for d in shown)}
        window["rate"] = rate(window["helpful"], window["harmful"])
        never, never_total = store.lessons_never_used(now - NEVER_USED_AFTER_S, limit=25)
        hurting, hurting_total = store.lessons_hurting(limit=25)
        runs, runs_total = store.learning_run_page(limit=RUNS_PAGE, offset=(runs_page - 1) * RUNS_PAGE)
        helpful_all = totals["helpful"] + totals["helpful_explicit"]
        harmful_all = totals["harmful"] + totals["harmful_explicit"]
        return site.render(
            request, store, "help.html", nav="help", totals=totals, window=window, days=days_wanted,
            windows=WINDOWS, overall_rate=rate(helpful_all, harmful_all), helpful_all=helpful_all,
            harmful_all=harmful_all,
            rate_chart=charts.line(labels, rates, title=f"Helpful rate per day, last {days_wanted} days"),
            marks_chart=charts.bars(labels, {"helpful": [d["helpful"] for d in marks],
                                             "harmful": [d["harmful"] for d in marks]},
                                    title=f"Helpful and harmful outcomes per day, last {days_wanted} days"),
            shown_chart=charts.bars(labels, {"shown": [d["shown"] for d in shown]},
                                    title=f"Lessons shown per day, last {days_wanted} days"),
            spark=[d["shown"] for d in shown], table=list(zip(labels, marks, shown, rates, strict=True)),
            most_shown=store.lessons_most_shown(limit=25), never=never, never_total=never_total,
            hurting=hurting, hurting_total=hurting_total, runs=runs, runs_total=runs_total, runs_page=runs_page,
            runs_size=RUNS_PAGE, rate=rate)


ROUTES = [Route("/help", page, methods=["GET"])]
