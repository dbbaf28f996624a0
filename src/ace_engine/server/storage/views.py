"""The team dashboard's reads (`server/dashboard.py`): what `TeamDB`'s protocol methods do not answer.

Contract: each function takes the `Dialect` of a `TeamDB` (whose methods of the same name delegate
here), opens one read transaction and returns plain JSON-ready dicts and lists. Statements use
`?` placeholders and SQL both engines read alike (`LIKE … ESCAPE`, `LOWER`, correlated
subqueries); JSON columns come back parsed (`Tx.json`). Nothing here writes.

- `token_by_id`: a token's row (no hash), so a dashboard session can see a revocation at once.
- `projects_overview`: the projects an org token (or one project token) covers, each with its
  lesson counts per status and the time of its last logged change.
- `lesson_page`: one page of a project's lessons among `statuses` (with `published_only`, only
  those whose current wording was logged for pull), filtered by status, section and a text query
  (every word of it must occur in the content or the id, case-insensitively: `LOWER(…) LIKE
  '%word%'`, with `%`, `_` and the escape character taken literally; SQLite folds ASCII letters
  only), newest change first, with the team's helpful / harmful sums.
- `sections`: the sections used among `statuses`, with counts.
- `lesson_log`: the logged deltas of one lesson, newest first.
- `clients`: per client of a project, what it pushed (applied / held / rejected, first and last
  push) and the helpful / harmful counts it reported, with `name`: its token's label.
- `client_names`: {client_id: the label of the token that owns it (or its prefix)} of a project.

Cost: a lesson page is a COUNT and a LIMIT/OFFSET over `lessons` (its `(project_id, status)`
index; the text filter scans the project's rows: a few ms at 10,000 lessons) plus one grouped
query over `counters` for the page's ids. `lesson_log` and `clients` scan the project's rows of
`deltas` / `delta_keys` (no per-lesson or per-client index exists).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import cast

from .dialect import Dialect, Tx
from .records import (
    ClientActivity,
    LessonPage,
    LogEntry,
    PageRow,
    ProjectOverview,
    SectionCount,
    SQLParam,
    TokenRow,
    as_int,
)

__all__ = ["token_by_id", "projects_overview", "lesson_page", "sections", "lesson_log", "clients", "client_names"]

MAX_WORDS = 8  # a text query's words past this many are ignored (each is one more LIKE)
# The lesson's current wording was logged (a client could pull it): not so for content held for
# review, even once a REMOVE or a MERGE has archived it.
PUBLISHED = ("EXISTS (SELECT 1 FROM lesson_versions v WHERE v.project_id = lessons.project_id "
             "AND v.lesson_id = lessons.lesson_id AND v.version = lessons.version AND v.seq IS NOT NULL)")
_ESCAPE = "!"


def _marks(values: Sequence[object]) -> str:
    return ", ".join("?" * len(values))


def token_by_id(d: Dialect, token_id: int) -> TokenRow | None:
    with d.read() as tx:
        return cast("TokenRow | None", tx.one(
            "SELECT id, org_id, project_id, scope, expires_at, revoked_at, prefix, label, created_at, "
            "last_used_at FROM tokens WHERE id = ?", (token_id,)))


def projects_overview(d: Dialect, org_id: int, project_id: int | None = None) -> list[ProjectOverview]:
    """The projects of `org_id` (only `project_id` when given), by name, each with `lessons`
    ({status: n}, every status present), `total` and `last_change_at` (None: nothing logged yet)."""
    where, params = "p.org_id = ?", [org_id]
    if project_id is not None:
        where += " AND p.id = ?"
        params.append(project_id)
    with d.read() as tx:
        projects = tx.all(f"SELECT p.id, p.name, p.last_seq, p.created_at, "
                          f"(SELECT MAX(x.created_at) FROM deltas x WHERE x.project_id = p.id) AS last_change_at "
                          f"FROM projects p WHERE {where} ORDER BY p.name", params)
        counts = tx.all(f"SELECT l.project_id, l.status, COUNT(*) AS n FROM lessons l JOIN projects p "
                        f"ON p.id = l.project_id WHERE {where} GROUP BY l.project_id, l.status", params)
    by_project: dict[int, dict[str, int]] = {}
    for row in counts:
        by_project.setdefault(int(row["project_id"]), {})[str(row["status"])] = as_int(row["n"])
    for project in projects:
        found = by_project.get(int(project["id"]), {})
        project["lessons"] = {s: found.get(s, 0) for s in ("active", "quarantined", "archived", "rejected")}
        project["total"] = sum(found.values())
    return cast("list[ProjectOverview]", projects)


def _like(word: str) -> str:
    """`word` as a LIKE pattern matching it anywhere, its wildcards and the escape taken literally."""
    literal = word.lower().replace(_ESCAPE, _ESCAPE * 2).replace("%", _ESCAPE + "%").replace("_", _ESCAPE + "_")
    return f"%{literal}%"


def _filters(project_id: int, statuses: Sequence[str], status: str | None, section: str | None,
             query: str, published_only: bool) -> tuple[str, list[SQLParam]]:
    if not statuses:
        return "1 = 0", []
    where = [f"project_id = ? AND status IN ({_marks(statuses)})"]
    params: list[SQLParam] = [project_id, *statuses]
    if published_only:
        where.append(PUBLISHED)
    if status:
        where.append("status = ?")
        params.append(status)
    if section:
        where.append("section = ?")
        params.append(section)
    for word in query.split()[:MAX_WORDS]:
        where.append(f"(LOWER(content) LIKE ? ESCAPE '{_ESCAPE}' OR LOWER(lesson_id) LIKE ? ESCAPE '{_ESCAPE}')")
        params += [_like(word), _like(word)]
    return " AND ".join(where), params


def _sums(tx: Tx, project_id: int, lesson_ids: list[str]) -> dict[str, tuple[int, int]]:
    if not lesson_ids:
        return {}
    rows = tx.all(f"SELECT lesson_id, SUM(helpful) AS helpful, SUM(harmful) AS harmful FROM counters "
                  f"WHERE project_id = ? AND lesson_id IN ({_marks(lesson_ids)}) GROUP BY lesson_id",
                  (project_id, *lesson_ids))
    return {str(r["lesson_id"]): (as_int(r["helpful"]), as_int(r["harmful"])) for r in rows}


def lesson_page(d: Dialect, project_id: int, *, statuses: Sequence[str], status: str | None = None,
                section: str | None = None, query: str = "", published_only: bool = False, limit: int = 50,
                offset: int = 0) -> LessonPage:
    """`{"rows": [...], "total": n}`: see the module contract."""
    where, params = _filters(project_id, statuses, status, section, query, published_only)
    with d.read() as tx:
        total = as_int(tx.value(f"SELECT COUNT(*) FROM lessons WHERE {where}", params))
        rows = tx.all(f"SELECT lesson_id, section, content, domains, status, origin_client, version, created_at, "
                      f"updated_at FROM lessons WHERE {where} ORDER BY updated_at DESC, lesson_id LIMIT ? OFFSET ?",
                      (*params, max(0, int(limit)), max(0, int(offset))))
        sums = _sums(tx, project_id, [str(r["lesson_id"]) for r in rows])
        for row in rows:
            row["domains"] = tx.json(row["domains"]) or []
            row["helpful"], row["harmful"] = sums.get(str(row["lesson_id"]), (0, 0))
    return {"rows": cast("list[PageRow]", rows), "total": total}


def sections(d: Dialect, project_id: int, statuses: Sequence[str],
             published_only: bool = False) -> list[SectionCount]:
    if not statuses:
        return []
    published = f" AND {PUBLISHED}" if published_only else ""
    with d.read() as tx:
        rows = tx.all(f"SELECT section, COUNT(*) AS n FROM lessons WHERE project_id = ? "
                      f"AND status IN ({_marks(statuses)}){published} GROUP BY section ORDER BY section",
                      (project_id, *statuses))
    return [{"section": r["section"], "n": as_int(r["n"])} for r in rows]


def lesson_log(d: Dialect, project_id: int, lesson_id: str, limit: int = 100) -> list[LogEntry]:
    """The lesson's logged deltas (seq, op, client_id, created_at, body), newest first; a MERGE
    that archived this lesson into another is the other lesson's, and not listed."""
    with d.read() as tx:
        rows = tx.all("SELECT seq, op, client_id, created_at, body FROM deltas WHERE project_id = ? AND lesson_id = ? "
                      "ORDER BY seq DESC LIMIT ?", (project_id, lesson_id, max(0, int(limit))))
        for row in rows:
            row["body"] = tx.json(row["body"]) or {}
    return cast("list[LogEntry]", rows)


def clients(d: Dialect, project_id: int) -> list[ClientActivity]:
    """Every client that pushed to (or counted in) the project: `client_id`, `pushed`, `applied`,
    `held`, `rejected` (its delta keys by outcome; `duplicate` answers store no key), `first_at`,
    `last_at`, `helpful`, `harmful` (the counts it reported, summed over lessons); most recent first."""
    with d.read() as tx:
        pushes = tx.all("SELECT client_id, status, COUNT(*) AS n, MIN(created_at) AS first_at, "
                        "MAX(created_at) AS last_at FROM delta_keys WHERE project_id = ? GROUP BY client_id, status",
                        (project_id,))
        marks = tx.all("SELECT client_id, SUM(helpful) AS helpful, SUM(harmful) AS harmful FROM counters "
                       "WHERE project_id = ? GROUP BY client_id", (project_id,))
    names = client_names(d, project_id)
    found: dict[str, ClientActivity] = {}

    def entry(client_id: str) -> ClientActivity:
        return found.setdefault(client_id, {"client_id": client_id, "name": names.get(client_id), "pushed": 0,
                                            "applied": 0, "held": 0, "rejected": 0, "first_at": None,
                                            "last_at": None, "helpful": 0, "harmful": 0})

    for row in pushes:
        item = entry(str(row["client_id"]))
        n = as_int(row["n"])
        item["pushed"] += n
        status = str(row["status"])
        if status == "applied":
            item["applied"] += n
        elif status == "quarantined":
            item["held"] += n
        elif status == "rejected":
            item["rejected"] += n
        first, last = float(row["first_at"]), float(row["last_at"])
        item["first_at"] = first if item["first_at"] is None else min(item["first_at"], first)
        item["last_at"] = last if item["last_at"] is None else max(item["last_at"], last)
    for row in marks:
        item = entry(str(row["client_id"]))
        item["helpful"], item["harmful"] = as_int(row["helpful"]), as_int(row["harmful"])
    return sorted(found.values(), key=lambda c: (-(c["last_at"] or 0.0), c["client_id"]))


def client_names(d: Dialect, project_id: int) -> dict[str, str]:
    """Each bound client id of the project with the label of its token (`token <prefix>…` when the
    token has none); ids pushed before tokens owned them are absent."""
    with d.read() as tx:
        rows = tx.all("SELECT c.client_id, t.label, t.prefix FROM client_tokens c LEFT JOIN tokens t "
                      "ON t.id = c.token_id WHERE c.project_id = ?", (project_id,))
    return {str(r["client_id"]): str(r["label"]) if r["label"] else f"token {r['prefix'] or '?'}…" for r in rows}
