""""Does it pay?": the holdout's with-vs-without report (`experiment.report`), as `ace report` shows it.

Contract: the figures are `experiment.report.build`'s over every repository (or the one `?project=`
names, by its store id), and the plot is a forest plot drawn here as numbers (`forest`), put into
inline SVG by the template: one row per outcome, the difference with lessons minus without as a dot
and its 95 % interval as a bar, around a line at 0. Each row has its own scale (the outcomes have
different units; the row's numbers are printed beside it), so what the eye reads is the one thing
comparable across rows: which side of 0 the interval lies on, or whether it crosses it. Left of
0 is better with lessons (every outcome is lower-is-better).

Cost: the report's (one `session_events` read per session in an experiment, a bootstrap per
outcome): fine for the few hundred sessions an experiment holds.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from ...experiment import report
from ...web.page import int_param
from .. import site

# Wide and short: the dashboard's charts are drawn at the page's width and at most 14em high, so a row
# label sits left of its interval instead of above it.
WIDTH, ROW, PAD = 1000, 26, 24
PLOT_L, PLOT_R = 420, 980  # the plot's x range inside the SVG; the labels end left of it


def forest(rows: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """The forest plot's geometry: per outcome with a difference, the x of its low, dot and high on a
    scale symmetric around 0 (the row's largest bound reaches the edge), and the x of 0."""
    zero = (PLOT_L + PLOT_R) / 2
    half = (PLOT_R - PLOT_L) / 2
    out = []
    for n, row in enumerate(r for r in rows if r.get("diff") is not None):
        reach = max(abs(row["low"]), abs(row["high"]), abs(row["diff"])) or 1.0
        x = [round(zero + half * v / reach, 1) for v in (row["low"], row["diff"], row["high"])]
        out.append({"y": PAD + n * ROW + ROW / 2, "low": x[0], "dot": x[1], "high": x[2], "what": row["what"],
                    "verdict": row["verdict"]})
    return {"width": WIDTH, "height": PAD + max(1, len(out)) * ROW + 8, "zero": zero, "rows": out,
            "left": PLOT_L, "right": PLOT_R}


def page(request: Request) -> Response:
    project_id = int_param(request, "project", 0, 0, 2**62) or None
    with site.store(request) as store:
        data = report.build(store, project_id, site.now(request))
        projects = store.list_projects()
        return site.render(request, store, "pays.html", nav="help", data=data, plot=forest(data["outcomes"]),
                           projects=projects, project_id=project_id)


ROUTES = [Route("/pays", page, methods=["GET"])]
