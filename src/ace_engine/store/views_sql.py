"""The dashboard's reads (`ace ui`): every query its pages run, behind the store interface.

Contract: read-only; every list has a LIMIT (and an OFFSET where a page can go on), every filter
walks an index where the schema has one — the playbook's pages scan `bullets` at most (10,000 rows
cost a few milliseconds), the session pages walk the `(session_id, id)` indexes, the charts walk
`created_at` indexes over a bounded window. Rows are plain dicts; a bullet row has `domains` as a
list and `provenance` as a dict, as `playbook_sql` returns them, plus its project's `project` name.
Times are epoch seconds; a "day" is a local calendar day given by `utc_offset` (seconds east).

`ViewsSQLiteStore` is the local store with this family mixed in: `ace ui` opens it. It is not part
of `SQLiteStore`, which every hook imports: the dashboard's queries cost the hooks nothing.

Cost: imports `json` and the store (`store.sqlite`); never on a hook's path.
"""

from __future__ import annotations

import json

from ._base import StoreBase, like_escape
from .playbook_sql import BULLET_COLUMNS, _bullet, filter_clauses
from .sqlite import SQLiteStore

TYPE_CHECKING = False  # not `typing.TYPE_CHECKING`: the store's modules keep `typing` off the hook path
if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Any

    from ..core._types import SessionRow
    from . import view_records as shapes
    from ._base import SQLValue
    from .interfaces import BulletRow
    from .records import LearningRunRow, RunRow

_LESSON = ("SELECT b.rowid AS rowid, " + ", ".join(f"b.{c}" for c in BULLET_COLUMNS)
           + ", p.name AS project FROM bullets b LEFT JOIN projects p ON p.id = b.project_id")
_ORDERS = {
    "value": "b.confidence DESC, (b.helpful + 3 * b.helpful_explicit) DESC, b.updated_at DESC",
    "recent": "b.updated_at DESC, b.rowid DESC",
    "created": "b.created_at DESC, b.rowid DESC",
    "shown": "b.retrieval_count DESC, b.updated_at DESC",
    "harmful": "(b.harmful + 3 * b.harmful_explicit) DESC, b.updated_at DESC",
}
# Weighted as the confidence counts them: an explicit mark is worth three observed outcomes.
_NET_HARM = "(b.harmful + 3 * b.harmful_explicit) - (b.helpful + 3 * b.helpful_explicit)"
# Session markers worth a line on the timeline (tool calls and prompts have their own tables).
_MARKERS = ("SessionStart", "SessionEnd", "Stop", "SubagentStop", "PreCompact")
_TEXT_CHARS = 4000  # of a tool call's input / response shown on a page; the rest stays in the store
MAX_LIMIT = 500


def _limit(n: int) -> int:
    return max(1, min(int(n), MAX_LIMIT))


def _scope(project_id: int | None, every_scope: bool) -> tuple[str, tuple[SQLValue, ...]]:
    if every_scope:
        return "1", ()
    if project_id is None:
        return "b.project_id IS NULL", ()
    return "b.project_id = ?", (project_id,)


def _lessons(rows: list[Any]) -> list[BulletRow]:
    return [_bullet(r) for r in rows]


def _day(column: str) -> str:
    return f"CAST(({column} + ?) / 86400 AS INTEGER)"


class ViewsSQL(StoreBase):
    # -- playbook -------------------------------------------------------------------------------------

    def lesson_page(self, *, project_id: int | None = None, every_scope: bool = True,
                    statuses: Sequence[str] = (), section: str | None = None, domain: str | None = None,
                    order: str = "value", limit: int = 50, offset: int = 0) -> tuple[list[BulletRow], int]:
        """One page of lessons filtered by scope, status, section and domain, and how many match."""
        where, params = _scope(project_id, every_scope)
        more, more_params = filter_clauses(statuses, section, domain)
        params += more_params
        sql_where = " AND ".join([where, *more])
        total = self._count(f"SELECT COUNT(*) FROM bullets b WHERE {sql_where}", params)
        rows = self._rows(f"{_LESSON} WHERE {sql_where} ORDER BY {_ORDERS.get(order, _ORDERS['value'])}"
                          " LIMIT ? OFFSET ?", params + (_limit(limit), max(0, int(offset))))
        return _lessons(rows), total

    def lesson_facets(self) -> shapes.LessonFacets:
        """What the filters offer: sections and statuses with their counts, the known domains."""
        sections: dict[str, int] = {}
        statuses: dict[str, int] = {}
        for section, status, n in self.conn.execute(
                "SELECT section, status, COUNT(*) FROM bullets GROUP BY section, status"):
            sections[section] = sections.get(section, 0) + n
            statuses[status] = statuses.get(status, 0) + n
        domains = [r[0] for r in self.conn.execute(
            "SELECT domain FROM domain_counts GROUP BY domain ORDER BY SUM(bullets) DESC, domain LIMIT 200")]
        return {"sections": sections, "statuses": statuses, "domains": domains}

    def lesson(self, bullet_id: str) -> BulletRow | None:
        rows = self._rows(f"{_LESSON} WHERE b.id = ?", (bullet_id,))
        return _bullet(rows[0]) if rows else None

    def lesson_injections(self, bullet_id: str, limit: int = 50) -> tuple[list[shapes.LessonInjection], int]:
        """Where a lesson was shown, newest first, each with what happened next in that session:
        the helpful / harmful marks it got there (`tags`) and the outcome learning saw (`outcomes`)."""
        total = self._count("SELECT COUNT(*) FROM injections WHERE bullet_id = ?", (bullet_id,))
        rows = self._rows(
            "SELECT i.id, i.session_id, i.hook, i.score, i.rank, i.created_at, s.status AS session_status,"
            " s.started_at AS session_started, p.name AS project FROM injections i"
            " LEFT JOIN sessions s ON s.session_id = i.session_id LEFT JOIN projects p ON p.id = s.project_id"
            " WHERE i.bullet_id = ? ORDER BY i.id DESC LIMIT ?", (bullet_id, _limit(limit)))
        sessions = list(dict.fromkeys(r["session_id"] for r in rows if r["session_id"]))
        tags: dict[str, list[shapes.TagMark]] = {}
        if sessions:
            marks = ",".join("?" * len(sessions))
            for change in self._rows(
                    "SELECT session_id, detail, source, reason, created_at FROM bullet_changes"
                    f" WHERE bullet_id = ? AND op = 'TAG' AND session_id IN ({marks}) ORDER BY id",
                    (bullet_id, *sessions)):
                detail = _json(change.pop("detail"))
                change.update(tag=detail.get("tag"), explicit=bool(detail.get("explicit")))
                tags.setdefault(change["session_id"], []).append(change)
        outcomes = self.session_outcomes(sessions)
        for row in rows:
            sid = row["session_id"]
            row["tags"] = [t for t in tags.get(sid, []) if t["created_at"] >= row["created_at"]]
            row["outcomes"] = outcomes.get(sid, [])
        return rows, total

    def session_outcomes(self, session_ids: Sequence[str]) -> dict[str, list[str]]:
        """The outcome of each learning run of these sessions (success / failure / unknown)."""
        ids = list(session_ids)[:MAX_LIMIT]
        if not ids:
            return {}
        found: dict[str, list[str]] = {}
        for sid, outcome in self.conn.execute(
                f"SELECT session_id, outcome FROM learning_runs WHERE session_id IN ({','.join('?' * len(ids))})"
                " ORDER BY id", ids):
            found.setdefault(sid, []).append(outcome or "unknown")
        return found

    def tool_events_by_id(self, ids: Sequence[int]) -> list[shapes.ProvenanceCall]:
        """The tool calls a lesson's provenance names (it keeps their ids), oldest first."""
        ids = [int(i) for i in ids if isinstance(i, int) and not isinstance(i, bool)][:100]
        if not ids:
            return []
        return self._rows(
            "SELECT id, session_id, tool_name, success, error, created_at FROM tool_events"
            f" WHERE id IN ({','.join('?' * len(ids))}) ORDER BY id", ids)

    def sessions_by_id(self, session_ids: Sequence[str]) -> dict[str, shapes.SessionBrief]:
        ids = [s for s in dict.fromkeys(session_ids) if isinstance(s, str)][:100]
        if not ids:
            return {}
        rows = self._rows(
            "SELECT s.session_id, s.status, s.started_at, p.name AS project FROM sessions s"
            f" LEFT JOIN projects p ON p.id = s.project_id WHERE s.session_id IN ({','.join('?' * len(ids))})",
            ids)
        return {r["session_id"]: r for r in rows}

    def tag_days(self, since: float, utc_offset: int, bullet_id: str | None = None) -> list[shapes.TagDay]:
        """Helpful and harmful marks per day since `since` (one lesson's, or all of them):
        [{day, helpful, harmful}] with `day` the local day number, oldest first."""
        sql = (f"SELECT {_day('created_at')} AS day, json_extract(detail, '$.tag') AS tag,"
               " SUM(COALESCE(json_extract(detail, '$.count'), 1)) AS n FROM bullet_changes")
        params: tuple[SQLValue, ...] = (utc_offset,)
        if bullet_id is not None:  # the (bullet_id, id) index, then the few rows in the window
            sql += " WHERE bullet_id = ? AND op = 'TAG' AND created_at >= ?"
            params += (bullet_id, since)
        else:  # the created_at index
            sql += " WHERE created_at >= ? AND op = 'TAG'"
            params += (since,)
        days: dict[int, shapes.TagDay] = {}
        for day, tag, n in self.conn.execute(sql + " GROUP BY day, tag ORDER BY day", params):
            counts = days.setdefault(day, {"day": day, "helpful": 0, "harmful": 0})
            if tag == "helpful":
                counts["helpful"] += int(n or 0)
            elif tag == "harmful":
                counts["harmful"] += int(n or 0)
        return list(days.values())

    # -- review ---------------------------------------------------------------------------------------

    def review_count(self) -> int:
        """Lessons waiting for a person: quarantined ones and candidates."""
        return self._count("SELECT COUNT(*) FROM bullets WHERE status IN ('quarantined', 'candidate')")

    def review_queue(self, limit: int = 100) -> dict[str, list[BulletRow]]:
        """Quarantined lessons (held by the safety policy) and candidates, newest first."""
        out = {}
        for status in ("quarantined", "candidate"):
            out[status] = _lessons(self._rows(f"{_LESSON} WHERE b.status = ? ORDER BY b.updated_at DESC LIMIT ?",
                                              (status, _limit(limit))))
        return out

    # -- sessions -------------------------------------------------------------------------------------

    def session_projects(self) -> list[dict[str, Any]]:
        """Every project with its number of sessions and the start of its latest, most recent first."""
        return self._rows(
            "SELECT p.id, p.name, p.root, p.key, COUNT(s.session_id) AS sessions, MAX(s.started_at) AS last_started"
            " FROM projects p LEFT JOIN sessions s ON s.project_id = p.id GROUP BY p.id"
            " ORDER BY last_started IS NULL, last_started DESC, p.id LIMIT 200")

    def sessions_timeline(self, project_id: int | None, *, limit: int = 30,
                          offset: int = 0) -> tuple[list[shapes.TimelineSession], int]:
        """A project's sessions, newest first (None: sessions of no project), each with its counts
        (tool calls, failed ones, prompts, lessons shown) and its first prompt."""
        total = self._count("SELECT COUNT(*) FROM sessions WHERE project_id IS ?", (project_id,))
        rows = self._rows(
            "SELECT s.session_id, s.status, s.started_at, s.ended_at, s.end_reason, s.compactions, s.source,"
            " s.agent_type, s.agent,"
            " (SELECT COUNT(*) FROM tool_events t WHERE t.session_id = s.session_id) AS tool_calls,"
            " (SELECT COUNT(*) FROM tool_events t WHERE t.session_id = s.session_id AND t.success = 0) AS failures,"
            " (SELECT COUNT(*) FROM messages m WHERE m.session_id = s.session_id AND m.role = 'user') AS prompts,"
            " (SELECT COUNT(*) FROM injections i WHERE i.session_id = s.session_id) AS shown,"
            " (SELECT substr(m.text, 1, 200) FROM messages m WHERE m.session_id = s.session_id AND m.role = 'user'"
            "  ORDER BY m.id LIMIT 1) AS first_prompt"
            " FROM sessions s WHERE s.project_id IS ? ORDER BY s.started_at DESC LIMIT ? OFFSET ?",
            (project_id, _limit(limit), max(0, int(offset))))
        return rows, total

    def session_days(self, project_id: int | None, since: float, utc_offset: int) -> list[shapes.SessionDay]:
        """Sessions started per local day since `since` for one project: [{day, sessions}]."""
        return self._rows(
            f"SELECT {_day('started_at')} AS day, COUNT(*) AS sessions FROM sessions"
            " WHERE project_id IS ? AND started_at >= ? GROUP BY day ORDER BY day", (utc_offset, project_id, since))

    def session_view(self, session_id: str) -> SessionRow | None:
        return self._one(
            "SELECT s.*, p.name AS project, p.root AS project_root, p.remote AS project_remote FROM sessions s"
            " LEFT JOIN projects p ON p.id = s.project_id WHERE s.session_id = ?", (session_id,))

    def session_items(self, session_id: str, *, after: Sequence[int] = (0, 0, 0, 0),
                      limit: int = 300) -> list[dict[str, Any]]:
        """A session's prompts and final messages, tool calls, lessons shown and markers (start,
        stop, compaction, end) after the ids in `after` (see `session_cursor`), in time order, at
        most `limit`. The first `limit` of each kind, merged, are exactly the first `limit` of all."""
        n = _limit(limit)
        after_msg, after_tool, after_inj, after_hook = (list(after) + [0, 0, 0, 0])[:4]
        messages = self._rows(
            "SELECT 'message' AS kind, id, role, text, agent_id, created_at FROM messages"
            " WHERE session_id = ? AND id > ? ORDER BY id LIMIT ?", (session_id, after_msg, n))
        tools = self._rows(
            f"SELECT 'tool' AS kind, id, tool_name, substr(input, 1, {_TEXT_CHARS}) AS input, LENGTH(input) AS"
            f" input_chars, substr(response, 1, {_TEXT_CHARS}) AS response, LENGTH(response) AS response_chars,"
            " success, exit_code, error, is_interrupt, duration_ms, agent_id, agent_type, created_at"
            " FROM tool_events WHERE session_id = ? AND id > ? ORDER BY id LIMIT ?", (session_id, after_tool, n))
        shown = self._rows(
            "SELECT 'injection' AS kind, i.id, i.hook, i.bullet_id, i.score, i.rank, i.created_at,"
            " b.content, b.section, b.status FROM injections i LEFT JOIN bullets b ON b.id = i.bullet_id"
            " WHERE i.session_id = ? AND i.id > ? ORDER BY i.id LIMIT ?", (session_id, after_inj, n))
        markers = self._rows(
            "SELECT 'marker' AS kind, id, event, detail, agent_id, duration_ms, created_at FROM hook_events"
            f" WHERE session_id = ? AND id > ? AND event IN ({','.join('?' * len(_MARKERS))}) ORDER BY id LIMIT ?",
            (session_id, after_hook, *_MARKERS, n))
        for tool in tools:
            tool["success"] = bool(tool["success"])
        import heapq  # here, not at the top: store.sqlite (on every hook's path) imports this module

        order = {"marker": 0, "message": 1, "injection": 2, "tool": 3}
        merged = heapq.merge(markers, messages, shown, tools,
                             key=lambda r: (r["created_at"], order[r["kind"]], r["id"]))
        return [item for _, item in zip(range(n), merged, strict=False)]

    def session_hook_max(self, session_id: str, after: int) -> int:
        """The last hook event id of a session past `after` (the live view's cursor moves over
        events it does not show)."""
        row = self.conn.execute("SELECT MAX(id) FROM hook_events WHERE session_id = ? AND id > ?",
                                (session_id, after)).fetchone()
        return int(row[0] or after)

    def session_learned(self, session_id: str, limit: int = 50) -> list[BulletRow]:
        """Lessons whose provenance names this session: what it taught (a scan of `bullets`'
        provenance text, then checked properly on the decoded provenance)."""
        pattern = '%"' + like_escape(session_id) + '"%'
        rows = _lessons(self._rows(f"{_LESSON} WHERE b.provenance LIKE ? ESCAPE '\\' ORDER BY b.created_at"
                                   " LIMIT ?", (pattern, _limit(limit) * 2)))
        return [b for b in rows if session_id in (b["provenance"].get("sessions") or [])
                or b["provenance"].get("session_id") == session_id][:_limit(limit)]

    def session_runs(self, session_id: str, limit: int = 20) -> list[RunRow]:
        """The learning runs over this session (what each created, merged, pruned, quarantined)."""
        rows = self._rows("SELECT * FROM learning_runs WHERE session_id = ? ORDER BY id DESC LIMIT ?",
                          (session_id, _limit(limit)))
        for row in rows:
            row["detail"] = _json(row["detail"])
        return rows

    # -- does it help? --------------------------------------------------------------------------------

    def help_totals(self) -> shapes.HelpTotals:
        """Across the playbook: lessons, how many were ever shown, times shown, the marks."""
        row: shapes.HelpTotals = self._one(
            "SELECT COUNT(*) AS lessons, COALESCE(SUM(status = 'active'), 0) AS active,"
            " COALESCE(SUM(retrieval_count > 0), 0) AS used, COALESCE(SUM(retrieval_count), 0) AS shown,"
            " COALESCE(SUM(helpful), 0) AS helpful, COALESCE(SUM(harmful), 0) AS harmful,"
            " COALESCE(SUM(helpful_explicit), 0) AS helpful_explicit,"
            " COALESCE(SUM(harmful_explicit), 0) AS harmful_explicit FROM bullets")
        return row

    def injection_days(self, since: float, utc_offset: int) -> list[shapes.InjectionDay]:
        """Lessons shown per local day since `since`: [{day, shown, sessions}]. Injection ids grow
        with time, so the window is found by its first id (a search on the primary key)."""
        low, high = self.conn.execute("SELECT COALESCE(MIN(id), 0), COALESCE(MAX(id), 0) + 1 FROM injections"
                                      ).fetchone()
        while low < high:  # the smallest id whose created_at >= since (high: none is)
            middle = (low + high) // 2
            row = self.conn.execute("SELECT created_at FROM injections WHERE id >= ? ORDER BY id LIMIT 1",
                                    (middle,)).fetchone()
            if row is None or row[0] >= since:
                high = middle
            else:
                low = middle + 1
        return self._rows(
            f"SELECT {_day('created_at')} AS day, COUNT(*) AS shown, COUNT(DISTINCT session_id) AS sessions"
            " FROM injections WHERE id >= ? AND created_at >= ? GROUP BY day ORDER BY day",
            (utc_offset, low, since))

    def lessons_most_shown(self, limit: int = 25) -> list[BulletRow]:
        return _lessons(self._rows(f"{_LESSON} WHERE b.retrieval_count > 0 ORDER BY {_ORDERS['shown']} LIMIT ?",
                                   (_limit(limit),)))

    def lessons_never_used(self, created_before: float, limit: int = 25) -> tuple[list[BulletRow], int]:
        """Active lessons never shown though older than `created_before`: oldest first, and how many."""
        where = "b.status = 'active' AND b.retrieval_count = 0 AND b.created_at < ?"
        total = self._count(f"SELECT COUNT(*) FROM bullets b WHERE {where}", (created_before,))
        rows = self._rows(f"{_LESSON} WHERE {where} ORDER BY b.created_at LIMIT ?", (created_before, _limit(limit)))
        return _lessons(rows), total

    def lessons_hurting(self, min_harmful: int = 2, limit: int = 25) -> tuple[list[BulletRow], int]:
        """Lessons not archived with more (weighted) harmful than helpful marks, at least
        `min_harmful` of them: the worst first, and how many."""
        where = (f"b.status != 'archived' AND {_NET_HARM} > 0"
                 " AND b.harmful + b.harmful_explicit >= ?")
        total = self._count(f"SELECT COUNT(*) FROM bullets b WHERE {where}", (min_harmful,))
        rows = self._rows(f"{_LESSON} WHERE {where} ORDER BY {_NET_HARM} DESC, b.updated_at DESC LIMIT ?",
                          (min_harmful, _limit(limit)))
        return _lessons(rows), total

    def learning_run_page(self, *, limit: int = 25, offset: int = 0) -> tuple[list[LearningRunRow], int]:
        total = self._count("SELECT COUNT(*) FROM learning_runs")
        rows = self._rows(
            "SELECT r.*, p.name AS project FROM learning_runs r LEFT JOIN projects p ON p.id = r.project_id"
            " ORDER BY r.id DESC LIMIT ? OFFSET ?", (_limit(limit), max(0, int(offset))))
        for row in rows:
            row["learned"] = bool(row["learned"])
            row["detail"] = _json(row["detail"])
        return rows, total

    # -- health ---------------------------------------------------------------------------------------

    def table_counts(self) -> dict[str, int]:
        """Rows per table of note (each a COUNT over its smallest index)."""
        tables = ("projects", "sessions", "tool_events", "messages", "hook_events", "bullets", "bullet_changes",
                  "injections", "jobs", "learning_runs")
        row = self.conn.execute("SELECT " + ", ".join(f"(SELECT COUNT(*) FROM {t})" for t in tables)).fetchone()
        return dict(zip(tables, (int(n) for n in row), strict=True))

    def oldest_event(self) -> float | None:
        found: float | None = self.conn.execute("SELECT MIN(created_at) FROM hook_events").fetchone()[0]
        return found

    def hook_durations(self, limit: int = 5000) -> list[tuple[str, float]]:
        """(event, milliseconds) of the most recent hook runs that recorded their duration."""
        return [(r[0], float(r[1])) for r in self.conn.execute(
            "SELECT event, duration_ms FROM hook_events WHERE duration_ms IS NOT NULL ORDER BY id DESC LIMIT ?",
            (max(1, min(int(limit), 20000)),))]

    def job_states(self) -> dict[str, int]:
        return {str(s): int(n) for s, n in self.conn.execute("SELECT status, COUNT(*) FROM jobs GROUP BY status")}

    def jobs_needing_attention(self, limit: int = 20) -> list[shapes.JobAttention]:
        """Failed, running and queued jobs, newest first, with their last error."""
        return self._rows(
            "SELECT j.id, j.kind, j.status, j.session_id, j.trigger, j.attempts, j.max_attempts, j.not_before,"
            " substr(j.last_error, 1, 500) AS last_error, j.created_at, j.finished_at, p.name AS project"
            " FROM jobs j LEFT JOIN projects p ON p.id = j.project_id"
            " WHERE j.status IN ('failed', 'running', 'queued') ORDER BY j.id DESC LIMIT ?", (_limit(limit),))


def _json(text: str | None) -> dict[str, Any]:
    if not text:
        return {}
    try:
        value = json.loads(text)
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


class ViewsSQLiteStore(SQLiteStore, ViewsSQL):
    """The local store with the dashboard's reads (what `ace ui` opens)."""
