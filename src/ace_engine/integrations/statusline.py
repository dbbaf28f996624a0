"""`ace statusline`: one short line for Claude Code's status line.

Contract: reads Claude Code's statusLine JSON on stdin (`session_id`, `cwd`,
`workspace.project_dir`, …; anything unreadable counts as no input) and prints exactly one
line, always exiting 0: `ace · 3 lessons shown · 2 learned today (1 waiting) · 2 to review ·
llm 3/200 calls` — the distinct lessons injected into this session, the lessons the learner added
to this project (and the global ones) since local midnight and how many of those are still
candidates waiting to recur (`ace patterns` lists them, `ace keep ID` keeps one), those held for
review (quarantined), and with a model configured today's model calls against the daily cap
(`llm ⚠ offline: <kind> · ace doctor` while the last model call failed: `llm/health.py`) — or,
when the hooks could not write the store (`hooks.health`), `ace ⚠ degraded:
<cause> · N spooled · ace doctor`.

Where a user hears that a session taught something. Learning runs in a detached worker after
Stop, so Stop's own answer cannot know what was learned (it would have to wait for the learner,
against the hook's budget). Two places can: this line, which Claude Code re-runs after each
message — so once the worker is done, the next refresh shows "(N waiting)" — but only for those
who enabled it (`ace install --statusline`); and the next SessionStart's `systemMessage`, which
every hook install reaches: `hooks.inject.learning_notice` says it there, once (it records when
it did, and announces only newer candidates). The status line is the running count; the
SessionStart line is the one-time news with how to keep a lesson.
Nothing is created: without a store it says so. The store is opened with a short busy timeout,
and a store that cannot be read is reported on the line, never raised.

Cost: stdlib and the store (no CLI framework): ~30 ms, most of it interpreter start-up — the
status line runs after every message; with a model configured, the config and two small JSON files
(the usage ledger, the model's health) besides, a few ms. `python -I -m ace_engine.integrations.statusline` is the
fast entry (`mcp_config.statusline_command`); `ace statusline` runs the same code.
"""

from __future__ import annotations

import json
import os
import sys
import time
from typing import Any, TextIO

from ..core import paths
from ..core.escape import one_line
from ..core.project import identify
from ..hooks import health
from ..store._base import StoreError, sqlite3

BUSY_TIMEOUT_MS = 100


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def _payload(raw: str) -> dict[str, Any]:
    try:
        data = json.loads(raw) if raw.strip() else {}
    except ValueError:
        return {}
    return data if isinstance(data, dict) else {}


def _midnight(now: float) -> float:
    local = time.localtime(now)
    return time.mktime((local.tm_year, local.tm_mon, local.tm_mday, 0, 0, 0, 0, 0, -1))


def _degraded() -> str | None:
    state = health.read()
    if not state:
        return None
    cause = state.get("cause") or health.diagnose(state.get("reason"))
    extra = "".join(f" · {n} {what}" for n, what in ((state.get("spooled") or 0, "spooled"),
                                                      (state.get("lost") or 0, "lost")) if n)
    return f"ace ⚠ degraded: {cause}{extra} · ace doctor"


def status_line(payload: dict[str, Any], now: float | None = None) -> str:
    now = time.time() if now is None else now
    degraded = _degraded()
    if degraded:
        return degraded
    if not os.path.exists(paths.db_path()):
        return "ace · nothing captured yet"
    workspace = payload.get("workspace")
    project_dir = workspace.get("project_dir") if isinstance(workspace, dict) else None
    cwd = project_dir or payload.get("cwd") or os.getcwd()
    session_id = payload.get("session_id") if isinstance(payload.get("session_id"), str) else None
    from ..store.history_sql import McpStore  # the store's reads (imports only the stdlib and the store)

    try:
        store = McpStore(busy_timeout_ms=BUSY_TIMEOUT_MS)
        try:
            project_id = store.project_id(identify(str(cwd)).key)
            shown = store.session_shown(session_id)[1] if session_id else 0
            learned = store.lessons_added_since(project_id, _midnight(now), source="learning")
            waiting = store.lessons_added_since(project_id, _midnight(now), source="learning", status="candidate") \
                if learned else 0
            review = store.waiting_review(project_id)
        finally:
            store.close()
    except (StoreError, sqlite3.Error, OSError) as exc:
        return f"ace ⚠ store unreadable: {health.diagnose(str(exc))} · ace doctor"
    today = f"{learned} learned today" + (f" ({waiting} waiting)" if waiting else "")
    parts = [f"{_plural(shown, 'lesson')} shown", today]
    if review:
        parts.append(f"{review} to review")
    model = _model_segment(str(cwd))
    if model:
        parts.append(model)
    return "ace · " + " · ".join(parts)


def _model_segment(cwd: str) -> str | None:
    """`llm 3/200 calls` (today's model calls against the daily cap), `llm cap reached`, or
    `llm ⚠ offline: login` while the last model call failed; None without a model."""
    from ..core import config

    try:
        cfg = config.load(identify(cwd).root)
    except config.ConfigError:
        return None
    if str(cfg["llm.provider"]).strip().lower() in ("", "none", "off", "false", "0"):
        return None
    from ..llm import health as model_health
    from ..llm.budget import meter, meter_text

    failure = model_health.failure()
    if failure:
        return f"llm ⚠ offline: {failure.get('kind') or 'failed'} · ace doctor"
    spent = meter(cfg["llm.max_calls_per_day"], cfg["llm.max_tokens_per_day"])
    if spent["reached"]:
        return f"llm cap reached ({meter_text(spent, short=True)})"
    return f"llm {meter_text(spent, short=True)}"


def main(stdin: TextIO | None = None, stdout: TextIO | None = None) -> int:
    stdin, stdout = stdin or sys.stdin, stdout or sys.stdout
    try:
        raw = stdin.read() if not stdin.isatty() else ""
    except (OSError, ValueError):
        raw = ""
    try:
        text = status_line(_payload(raw))
    except Exception as exc:  # noqa: BLE001 — a status line must print something and exit 0
        text = f"ace ⚠ {type(exc).__name__}"
    stdout.write(one_line(text) + "\n")  # one line, no terminal controls, whatever a cause string holds
    stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
