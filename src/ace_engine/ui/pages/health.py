"""Health: the store's size against its retention caps, the spool and degraded state, the jobs queue,
the hooks' own run times as recorded with each hook event, and the model budget (today's calls and tokens
against the daily caps, and why learning is offline when the last model call failed).

Contract: read-only. Sizes are the store's file on disk (database + WAL, what the automatic gc
compares with `retention.max_db_mb`) and its live bytes; the spool and the degraded state are read
from `$ACE_HOME` as `ace doctor` reads them (`store/spool.py`, `hooks/health.py`); latency is the
median, 95th percentile and maximum of the last `LATENCY_SAMPLE` hook runs that recorded a
duration, per event, next to that event's deadline (`hooks/events.py`). An integrity check reads
the whole file, so it is left to `ace doctor`.

Cost: a few COUNTs, three PRAGMAs, one walk back over the newest hook events, a directory listing.
"""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from .. import site

LATENCY_SAMPLE = 5000
COUNT_SPOOL_LINES_UNDER = 4 * 1024 * 1024  # counting records reads the files: only when small


def _percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(share * (len(ordered) - 1))))]


def latency(samples: list[tuple[str, float]]) -> list[dict[str, Any]]:
    """Per hook event: runs sampled, median, p95, max (ms) and the event's deadline (ms)."""
    from ...hooks.events import EVENTS

    per: dict[str, list[float]] = {}
    for event, ms in samples:
        per.setdefault(event, []).append(ms)
    return [{"event": event, "runs": len(values), "p50": _percentile(values, 0.5), "p95": _percentile(values, 0.95),
             "max": max(values), "budget_ms": EVENTS.get(event, {}).get("budget", 0) * 1000 or None}
            for event, values in sorted(per.items())]


def _spool() -> dict[str, Any]:
    from ...store import spool

    files = spool.pending_files()
    size = spool.pending_bytes()
    return {"files": len(files), "bytes": size,
            "records": spool.count_pending() if size < COUNT_SPOOL_LINES_UNDER else None,
            "dirs": spool.spool_dirs()}


def model_budget(cfg: Any) -> dict[str, Any]:
    """{provider, meter, failure}: learning with a model — today's calls and tokens against the
    daily caps (`llm/budget.py`, shared by every project on the machine) and the recorded failure
    while the last model call failed (`llm/health.py`)."""
    from ... import llm
    from ...llm.budget import meter

    name = llm.provider_name(cfg)
    return {"provider": name, "meter": meter(cfg["llm.max_calls_per_day"], cfg["llm.max_tokens_per_day"]),
            "failure": llm.health.failure() if name else None}


def page(request: Request) -> Response:
    from ...core import paths
    from ...hooks import health

    cfg = site.config(request, None)
    with site.store(request) as store:
        file_bytes = store.file_bytes()
        cap = float(cfg["retention.max_db_mb"]) * 1024 * 1024
        return site.render(
            request, store, "health.html", nav="health", store_path=store.path, home=paths.ace_home(),
            file_bytes=file_bytes, live_bytes=store.live_bytes(), cap_bytes=cap,
            max_age_days=cfg["retention.max_age_days"], oldest=store.oldest_event(), counts=store.table_counts(),
            schema=store.schema_version(), policy=store.policy_version(), jobs=store.job_states(),
            attention=store.jobs_needing_attention(limit=20), latency=latency(store.hook_durations(LATENCY_SAMPLE)),
            spool=_spool(), degraded=health.read(), model=model_budget(cfg))


ROUTES = [Route("/health", page, methods=["GET"])]
