"""The team server's storage: `TeamDB`, one interface over SQLite and PostgreSQL.

Contract (docs/team-server.md, "Storage interface"): `TeamDB.open(url, now=…)` opens `None` (the
data directory's `team-server.db`), `sqlite:///path` or `postgresql://…` (search_path and other
libpq settings ride in the URL: `?options=-csearch_path%3Dteam`), migrates it under a lock so two
servers starting at once do not race, and makes sure the `default` org exists (`default_org`).
Thread-safe (SQLite: a connection per thread; PostgreSQL: the pool). Every method returns plain
JSON-ready dicts and lists; every method that writes time takes `now` (seconds since the epoch).
Errors are `TeamDBError` (`NotFound` for a project or review entry that is not there).

`apply_delta` is one transaction (`apply_deltas`: a whole push in one): the project's row
lock, then the idempotency key (a key seen before answers `duplicate` with its original seq and
changes nothing; keys live in `delta_keys`, so held and rejected deltas are remembered too),
then the op (`ops.apply`), whose logged change takes `projects.last_seq + 1` (`UPDATE …
RETURNING`) in that same transaction: seqs are gap-free
and ordered per project whatever the number of concurrent pushers. Should two pushes of one key
still collide on a unique constraint, the loser answers `duplicate` too. `apply_pushes` applies
several pushes to one project (a server process's queue of them) in one such transaction, each
answered as if alone.

Policy is the caller's: it redacts, checks ids and sections, runs the safety policy and passes
`status="quarantined"` (with the reasons in `body["concerns"]`) for content the policy flagged,
and `ops.Rules` for the rest (the screen of content a delta publishes without carrying it, the
pushing token, the daily mark budget). Given a token, a push first binds its client id to that
token in the project (`client_tokens`): a client id another live token owns is refused
(`ClientTaken`), so no token pushes as — or pre-spends the idempotency keys of — another
token's client. A token created after the owner was revoked or expired takes the id over (a
machine's token rotated). The review queue shows each lesson's `content_hash`; `decide` can be
bound to it (`Stale` when the lesson changed since).

One piece, past 400 lines, because `TeamDB` is the storage interface the server sees: what each delta
does is already in `ops`, the dashboard's reads in `views`, the two engines in `dialect`; what stays is
one method per transaction.

Cost: opening runs one migration transaction (a no-op when current); each call one transaction
of a few indexed statements. `stats` reads the window's deltas grouped by day in SQL.
"""

from __future__ import annotations

import datetime as _dt
import time
from collections.abc import Sequence
from typing import Literal, cast

from ...core.closing import Closing
from . import batch, ops, pull, shared, views
from .dialect import Conflict, Dialect, NotFound, TeamDBError, Tx, open_dialect
from .ops import ClientTaken, Rules, Stale, content_hash
from .records import (
    ClientActivity,
    Decision,
    DeltaItem,
    DeltaResult,
    JSONObject,
    LessonPage,
    LessonState,
    LogEntry,
    ProjectOverview,
    ProjectRow,
    ProjectSummary,
    PullPage,
    ReviewEntry,
    SectionCount,
    Stats,
    StatsDay,
    TokenListRow,
    TokenRow,
    as_int,
)
from .schema import META_TABLE, MIGRATIONS, render, statements

__all__ = ["ClientTaken", "NotFound", "Rules", "Stale", "TeamDB", "TeamDBError", "content_hash"]

_TOKEN_COLUMNS = ("t.id, t.org_id, t.project_id, t.scope, t.expires_at, t.revoked_at, t.prefix, t.label, "
                  "t.created_at, t.last_used_at")
TOUCH_EVERY_S = 60.0
_TOKEN_WITH_PROJECT = (f"SELECT {_TOKEN_COLUMNS}, p.id AS p_id, p.name AS p_name, p.last_seq AS p_last_seq "
                       "FROM tokens t LEFT JOIN projects p ON p.org_id = t.org_id AND p.name = ? "
                       "WHERE t.token_hash = ?")


def _token_and_project(row: JSONObject | None) -> tuple[TokenRow | None, ProjectRow | None]:
    """A `_TOKEN_WITH_PROJECT` row split into the token and its path's project (None: not found)."""
    if row is None:
        return None, None
    project: ProjectRow | None = None
    if row["p_id"] is not None:
        project = {"id": int(row["p_id"]), "org_id": int(row["org_id"]), "name": str(row["p_name"]),
                   "last_seq": int(row["p_last_seq"])}
    for extra in ("p_id", "p_name", "p_last_seq"):
        del row[extra]
    return cast("TokenRow", row), project


class TeamDB(Closing):
    """See the module contract."""

    def __init__(self, dialect: Dialect) -> None:
        self._d = dialect
        self.dialect = dialect.name
        self.default_org = 0
        self.batched = True  # False: every push delta by delta (the tests hold both paths to one result)
        self.log_cache = pull.LogCache()

    @classmethod
    def open(cls, url: str | None = None, *, now: float | None = None,
             migrations: list[tuple[str, str]] = MIGRATIONS) -> TeamDB:
        db = cls(open_dialect(url))
        try:
            db._migrate(migrations)
            db.default_org = db.ensure_org("default", now)
        except BaseException:
            db.close()
            raise
        return db

    def close(self) -> None:
        self._d.close()

    def _migrate(self, migrations: list[tuple[str, str]]) -> int:
        """Bring the schema to `len(migrations)` under the migration lock; returns the version found."""
        latest = len(migrations)
        with self._d.write() as tx:
            self._d.migration_lock(tx)
            tx.execute(META_TABLE)
            found = int(tx.value("SELECT value FROM team_meta WHERE key = 'schema_version'") or 0)
            if found > latest:
                raise TeamDBError(f"the team database is at schema v{found}, newer than this ace-engine "
                                  f"(v{latest}); upgrade ace-engine on this server")
            for number in range(found + 1, latest + 1):
                for statement in statements(render(migrations[number - 1][1], self._d.id_type, self._d.json_type)):
                    tx.execute(statement)
            if found != latest:
                tx.execute("INSERT INTO team_meta(key, value) VALUES ('schema_version', ?) "
                           "ON CONFLICT (key) DO UPDATE SET value = excluded.value", (str(latest),))
        return found

    def schema_version(self) -> int:
        with self._d.read() as tx:
            return int(tx.value("SELECT value FROM team_meta WHERE key = 'schema_version'") or 0)

    # -- orgs and projects ---------------------------------------------------------------------------

    def ensure_org(self, name: str, now: float | None = None) -> int:
        with self._d.write() as tx:
            tx.execute("INSERT INTO orgs(name, created_at) VALUES (?, ?) ON CONFLICT (name) DO NOTHING",
                       (name, time.time() if now is None else now))
            return int(tx.value("SELECT id FROM orgs WHERE name = ?", (name,)))

    def ensure_project(self, org_id: int, name: str, now: float) -> ProjectRow:
        with self._d.write() as tx:
            tx.execute("INSERT INTO projects(org_id, name, created_at) VALUES (?, ?, ?) "
                       "ON CONFLICT (org_id, name) DO NOTHING", (org_id, name, now))
            found = self._project(tx, org_id, name)
        assert found is not None  # just inserted, or there already
        return found

    def find_project(self, org_id: int, name: str) -> ProjectRow | None:
        with self._d.read() as tx:
            return self._project(tx, org_id, name)

    @staticmethod
    def _project(tx: Tx, org_id: int, name: str) -> ProjectRow | None:
        return cast("ProjectRow | None", tx.one(
            "SELECT id, org_id, name, last_seq FROM projects WHERE org_id = ? AND name = ?", (org_id, name)))

    # -- tokens ---------------------------------------------------------------------------------------

    def create_token(self, token_hash: str, prefix: str, org_id: int, project_id: int | None, scope: str,
                     label: str | None, now: float, expires_at: float | None = None) -> int:
        with self._d.write() as tx:
            return int(tx.value(
                "INSERT INTO tokens(token_hash, prefix, org_id, project_id, scope, label, created_at, expires_at) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?) RETURNING id",
                (token_hash, prefix, org_id, project_id, scope, label, now, expires_at)))

    def token_by_hash(self, token_hash: str) -> TokenRow | None:
        with self._d.read() as tx:
            return cast("TokenRow | None", tx.one(f"SELECT {_TOKEN_COLUMNS} FROM tokens t WHERE t.token_hash = ?",
                                                  (token_hash,)))

    def token_with_project(self, token_hash: str, name: str) -> tuple[TokenRow | None, ProjectRow | None]:
        """`token_by_hash`, and the project `name` of the token's org (None: no such project), in
        one statement: every API request needs both."""
        with self._d.read() as tx:
            row = tx.one(_TOKEN_WITH_PROJECT, (name, token_hash))
        return _token_and_project(row)

    def token_take(self, token_hash: str, name: str, rate: float, burst: float,
                   now: float) -> tuple[TokenRow | None, ProjectRow | None, float | None]:
        """`token_with_project`, and when the token is live at `now` one take of its rate bucket
        (`take_rate` of `t<id>`): the seconds to wait (0.0: go on), None when nothing was taken. One
        statement on PostgreSQL (`shared.token_take`): a request's auth and rate in one round trip."""
        row = shared.token_take(self._d, _TOKEN_WITH_PROJECT, (name, token_hash), rate, burst, now)
        wait = None if row is None else row.pop("r_wait")
        token, project = _token_and_project(row)
        return token, project, wait

    def touch_token(self, token_id: int, now: float) -> None:
        """Record a use; at most one write a minute per token (the condition is in the UPDATE)."""
        with self._d.single() as tx:
            tx.execute("UPDATE tokens SET last_used_at = ? WHERE id = ? AND "
                       "(last_used_at IS NULL OR last_used_at < ?)", (now, token_id, now - TOUCH_EVERY_S))

    def list_tokens(self, org_id: int | None = None) -> list[TokenListRow]:
        """Every token (of `org_id`), oldest first, with its org and project names; never a hash."""
        where = "" if org_id is None else "WHERE t.org_id = ? "
        with self._d.read() as tx:
            rows = tx.all(f"SELECT {_TOKEN_COLUMNS}, o.name AS org, p.name AS project FROM tokens t "
                          f"JOIN orgs o ON o.id = t.org_id LEFT JOIN projects p ON p.id = t.project_id "
                          f"{where}ORDER BY t.id", () if org_id is None else (org_id,))
        return cast("list[TokenListRow]", rows)

    def revoke_token(self, token_id_or_prefix: int | str, now: float) -> bool:
        """Revoke one live token by id (an int or its digits) or by its prefix; False when no live
        token matches. A prefix two live tokens share is refused: revoke those by id."""
        with self._d.write() as tx:
            if isinstance(token_id_or_prefix, int) or token_id_or_prefix.isdigit():
                ids = [int(token_id_or_prefix)]
            else:
                ids = [int(r["id"]) for r in tx.all("SELECT id FROM tokens WHERE prefix = ? AND revoked_at IS NULL",
                                                    (token_id_or_prefix,))]
                if len(ids) > 1:
                    raise TeamDBError(f"{len(ids)} live tokens start with {token_id_or_prefix}; revoke one by its "
                                      f"id (ace server token list)")
            if not ids:
                return False
            return tx.execute("UPDATE tokens SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL",
                              (now, ids[0])) == 1

    # -- deltas ---------------------------------------------------------------------------------------

    def apply_delta(self, project_id: int, client_id: str, key: str, op: str, lesson_id: str,
                    body: JSONObject, status: str, now: float, rules: Rules = ops.NO_RULES) -> DeltaResult:
        """One pushed delta, one transaction (see the module contract and `ops`); returns
        {"status": "applied"|"duplicate"|"quarantined"|"rejected", "seq": int|None, "reason": str|None}."""
        return self.apply_deltas(project_id, client_id, [(key, op, lesson_id, body, status)], now, rules)[0]

    def apply_deltas(self, project_id: int, client_id: str, items: Sequence[DeltaItem],
                     now: float, rules: Rules = ops.NO_RULES) -> list[DeltaResult]:
        """A push's deltas, `(key, op, lesson_id, body, status)` each: `apply_push`'s results."""
        return self.apply_push(project_id, client_id, items, now, rules)[0]

    def apply_push(self, project_id: int, client_id: str, items: Sequence[DeltaItem],
                   now: float, rules: Rules = ops.NO_RULES) -> tuple[list[DeltaResult], int]:
        """A push's deltas in ONE transaction, and the project's last_seq after it: the project's
        lock is taken and the commit (a disk flush) paid once per push instead of once per delta —
        the lock is held through the commit, so what the push does while holding it bounds a
        project's throughput whatever the number of pushers. With `rules.token_id`, the client id
        is bound to that token first (`ClientTaken` otherwise). A push of new lessons' ADDs and of
        TAGs (the bulk of what clients push) is batched (`batch`: a few statements per push); any
        other goes delta by delta as `apply_delta` describes (a key repeated within the push
        answers `duplicate`). A storage error rolls the whole push back, and the client's retry is
        safe (idempotency keys). Should a concurrent push of the same keys collide on a unique
        constraint, the push is redone delta by delta, where the loser of each key answers
        `duplicate`."""
        for _, op, _, _, status in items:
            if op not in ops.OPS:
                raise TeamDBError(f"unknown delta op {op!r}; the server knows {', '.join(ops.OPS)}")
            if status not in ("active", "quarantined"):
                raise TeamDBError(f"apply_delta status must be 'active' or 'quarantined', not {status!r}")
        push = batch.Push(client_id, items, now, rules)
        batched = self.batched and batch.batchable(push)
        try:
            with self._d.write() as tx:
                # One round trip takes the lock, binds the client id and reads what a batched push needs.
                first = ops.lock_and_bind(tx, project_id, [(client_id, rules.token_id, now)]
                                          if rules.token_id is not None else [])
                rows = tx.all_many(first + (batch.reads(tx, project_id, [push]) if batched else []))
                last = ops.locked_seq(project_id, rows[0])
                if rules.token_id is not None and ops.owners(rows[len(first) - 1]).get(client_id) != rules.token_id:
                    ops.bind_client(tx, project_id, client_id, rules.token_id, now)  # take over, or ClientTaken
                found = batch.plan([push], rows[len(first):]) if batched else None
                if found is not None:
                    done, last = batch.apply(tx, project_id, [push], found, last)
                    return done[0], last
                results = [self._apply_one(tx, project_id, client_id, item, now, rules) for item in items]
                return results, int(tx.value("SELECT last_seq FROM projects WHERE id = ?", (project_id,)))
        except Conflict:
            if len(items) > 1:
                results = [self.apply_push(project_id, client_id, [item], now, rules)[0][0] for item in items]
                return results, self._last_seq(project_id)
            with self._d.read() as tx:  # a concurrent push of the same key committed first
                seen = self._seen(tx, project_id, client_id, items[0][0])
            if seen is None:
                raise
            return [seen], self._last_seq(project_id)

    def apply_pushes(self, project_id: int,
                     pushes: Sequence[batch.Push]) -> list[tuple[list[DeltaResult], int] | TeamDBError]:
        """Several pushes to one project, each answered as `apply_push` would (its results and the
        project's last_seq, or the TeamDBError it raised), in ONE transaction when they allow
        (`batch.together`: the lock, the flush and the round trips paid once for the group, so a
        project's pushes queued in a server process do not pass its lock one by one); otherwise,
        or on any storage error (nothing of the group committed), each alone in turn."""
        if len(pushes) > 1 and self.batched and all(
                batch.batchable(p) and all(i[4] in ("active", "quarantined") for i in p.items) for p in pushes):
            try:
                with self._d.write() as tx:
                    done, last = batch.together(tx, project_id, pushes)
                return [(results, last) for results in done]
            except TeamDBError:  # `batch.Alone` among them: the group cannot go together
                pass
        out: list[tuple[list[DeltaResult], int] | TeamDBError] = []
        for push in pushes:
            try:
                out.append(self.apply_push(project_id, *push))
            except TeamDBError as exc:
                out.append(exc)
        return out

    def last_seqs(self, project_ids: Sequence[int]) -> dict[int, int]:
        """{project id: last_seq} of the given projects, in one query (the long-poll's check)."""
        ids = [int(p) for p in project_ids][:1000]
        if not ids:
            return {}
        with self._d.read() as tx:
            rows = tx.all(f"SELECT id, last_seq FROM projects WHERE id IN ({', '.join('?' * len(ids))})", ids)
        return {int(r["id"]): int(r["last_seq"]) for r in rows}

    def _last_seq(self, project_id: int) -> int:
        with self._d.read() as tx:
            return int(tx.value("SELECT last_seq FROM projects WHERE id = ?", (project_id,)) or 0)

    def _apply_one(self, tx: Tx, project_id: int, client_id: str,
                   item: DeltaItem, now: float, rules: Rules) -> DeltaResult:
        key, op, lesson_id, body, status = item
        seen = self._seen(tx, project_id, client_id, key)
        if seen is not None:
            return seen
        result = ops.apply(tx, project_id, client_id, key, op, lesson_id, body, status == "quarantined", now, rules)
        tx.execute("INSERT INTO delta_keys(project_id, client_id, idem_key, seq, status, created_at) "
                   "VALUES (?, ?, ?, ?, ?, ?)", (project_id, client_id, key, result["seq"], result["status"], now))
        return result

    @staticmethod
    def _seen(tx: Tx, project_id: int, client_id: str, key: str) -> DeltaResult | None:
        row = tx.one("SELECT seq FROM delta_keys WHERE project_id = ? AND client_id = ? AND idem_key = ?",
                     (project_id, client_id, key))
        return None if row is None else {"status": "duplicate", "seq": row["seq"], "reason": None}

    def deltas_after(self, project_id: int, after_seq: int, limit: int) -> list[JSONObject]:
        """The logged deltas with seq > `after_seq`, at most `limit`, in seq order: each the stored
        body plus seq, op, lesson_id, key, client_id, created_at; a TAG also carries the lesson's
        current per-client counts, `counts: {client_id: [helpful, harmful]}` (`pull.deltas_after`)."""
        return pull.deltas_after(self._d, project_id, after_seq, limit)

    def pull_page(self, project_id: int, after_seq: int, limit: int) -> PullPage:
        """`deltas_after`'s page as JSON text, one string per delta, with the project's `last_seq`
        and whether `more` follow (`pull.page`: from this process's log cache where it can)."""
        return pull.page(self._d, self.log_cache, project_id, after_seq, limit)

    # -- review ---------------------------------------------------------------------------------------

    def review_queue(self, project_id: int) -> list[ReviewEntry]:
        """The lessons waiting for a reviewer (status quarantined), oldest change first, each with
        the `content_hash` an approval names, the server's `concerns` and the client's `client_note`."""
        with self._d.read() as tx:
            rows = tx.all("SELECT lesson_id, content, section, domains, concerns, client_note, origin_client, "
                          "created_at FROM lessons WHERE project_id = ? AND status = 'quarantined' "
                          "ORDER BY updated_at, lesson_id", (project_id,))
            for row in rows:
                row["domains"] = tx.json(row["domains"])
                row["concerns"] = tx.json(row["concerns"]) or []
                row["content_hash"] = content_hash(row["content"], row["section"], row["domains"])
            return cast("list[ReviewEntry]", rows)

    def decide(self, project_id: int, lesson_id: str, approve: bool, client_id: str, now: float,
               content_hash: str | None = None) -> Decision:
        """Approve (active, an ADD logged as `client_id`) or reject a lesson in review; see `ops.decide`
        (`content_hash`: what the reviewer saw; Stale when the lesson changed since)."""
        with self._d.write() as tx:
            ops.lock_project(tx, project_id)
            return ops.decide(tx, project_id, lesson_id, approve, client_id, now, content_hash)

    # -- reading the team state -----------------------------------------------------------------------

    def lesson(self, project_id: int, lesson_id: str) -> LessonState | None:
        """A lesson's team state: its fields, the summed and per-client counts, and every version."""
        with self._d.read() as tx:
            row = tx.one("SELECT lesson_id, section, content, domains, status, origin_client, version, concerns, "
                         "client_note, created_at, updated_at FROM lessons WHERE project_id = ? AND lesson_id = ?",
                         (project_id, lesson_id))
            if row is None:
                return None
            row["domains"] = tx.json(row["domains"])
            row["concerns"] = tx.json(row["concerns"])
            row["content_hash"] = content_hash(row["content"], row["section"], row["domains"])
            counts = pull.counts(tx, project_id, [lesson_id]).get(lesson_id, {})
            row["counts"] = counts
            row["helpful"] = sum(c[0] for c in counts.values())
            row["harmful"] = sum(c[1] for c in counts.values())
            versions = tx.all("SELECT version, content, section, domains, client_id, seq, created_at "
                              "FROM lesson_versions WHERE project_id = ? AND lesson_id = ? ORDER BY version, id",
                              (project_id, lesson_id))
            for version in versions:
                version["domains"] = tx.json(version["domains"])
            row["versions"] = versions
            return cast("LessonState", row)

    def project_summary(self, project_id: int) -> ProjectSummary:
        with self._d.read() as tx:
            project = tx.one("SELECT name, last_seq FROM projects WHERE id = ?", (project_id,))
            if project is None:
                raise NotFound(f"no team project with id {project_id}")
            by_status = {r["status"]: as_int(r["n"]) for r in tx.all(
                "SELECT status, COUNT(*) AS n FROM lessons WHERE project_id = ? GROUP BY status", (project_id,))}
        return {"project": project["name"], "last_seq": int(project["last_seq"]),
                "lessons": {"active": by_status.get("active", 0), "quarantined": by_status.get("quarantined", 0)}}

    def stats(self, project_id: int, days: int, now: float) -> Stats:
        """The `/stats` answer for the `days` UTC days ending with `now`'s: per day the lessons
        created (ADD logged, approvals included), updated (UPDATE, MERGE), pruned (REMOVE) and held
        for review (quarantined pushes); the team's helpful / harmful sums and rate over every
        counter; the top 5 active lessons by net helpful (helpful − harmful > 0); and the number
        of distinct clients that ever pushed to the project."""
        days = max(1, min(int(days), 3660))
        today = int(now // 86400)
        first = today - days + 1
        window = (project_id, first * 86400.0, (today + 1) * 86400.0)
        day = self._d.day_sql
        periods: dict[int, StatsDay] = {d: {"day": (_dt.date(1970, 1, 1) + _dt.timedelta(days=d)).isoformat(),
                       "created": 0, "updated": 0, "pruned": 0, "quarantined": 0} for d in range(first, today + 1)}
        column: dict[str, Literal["created", "updated", "pruned"]] = {"ADD": "created", "UPDATE": "updated",
                                                                       "MERGE": "updated", "REMOVE": "pruned"}
        with self._d.read() as tx:
            for row in tx.all(f"SELECT {day} AS day, op, COUNT(*) AS n FROM deltas WHERE project_id = ? "
                              f"AND created_at >= ? AND created_at < ? GROUP BY {day}, op", window):
                if row["op"] in column and int(row["day"]) in periods:
                    periods[int(row["day"])][column[row["op"]]] += as_int(row["n"])
            for row in tx.all(f"SELECT {day} AS day, COUNT(*) AS n FROM delta_keys WHERE project_id = ? "
                              f"AND created_at >= ? AND created_at < ? AND status = 'quarantined' GROUP BY {day}",
                              window):
                if int(row["day"]) in periods:
                    periods[int(row["day"])]["quarantined"] += as_int(row["n"])
            sums = tx.one("SELECT SUM(helpful) AS helpful, SUM(harmful) AS harmful FROM counters WHERE project_id = ?",
                          (project_id,)) or {}
            top = tx.all("SELECT c.lesson_id, l.content, SUM(c.helpful) AS helpful, SUM(c.harmful) AS harmful "
                         "FROM counters c JOIN lessons l ON l.project_id = c.project_id AND l.lesson_id = c.lesson_id "
                         "WHERE c.project_id = ? AND l.status = 'active' GROUP BY c.lesson_id, l.content "
                         "HAVING SUM(c.helpful) - SUM(c.harmful) > 0 "
                         "ORDER BY SUM(c.helpful) - SUM(c.harmful) DESC, SUM(c.helpful) DESC, c.lesson_id LIMIT 5",
                         (project_id,))
            clients = tx.value("SELECT COUNT(DISTINCT client_id) FROM delta_keys WHERE project_id = ?", (project_id,))
        helpful, harmful = as_int(sums.get("helpful")), as_int(sums.get("harmful"))
        return {"periods": list(periods.values()), "helpful": helpful, "harmful": harmful,
                "helpful_rate": helpful / (helpful + harmful) if helpful + harmful else None,
                "top": [{"lesson_id": r["lesson_id"], "content": r["content"], "helpful": as_int(r["helpful"]),
                         "harmful": as_int(r["harmful"])} for r in top],
                "clients": as_int(clients)}

    # -- state the replicas share (`shared`) ----------------------------------------------------------

    def take_rate(self, bucket: str, rate: float, burst: float, now: float) -> float:
        return shared.take_rate(self._d, bucket, rate, burst, now)

    def open_session(self, id_hash: str, token_id: int, label: str, csrf: str, now: float,
                     expires_at: float) -> None:
        shared.open_session(self._d, id_hash, token_id, label, csrf, now, expires_at)

    def session(self, id_hash: str, now: float) -> shared.SessionRow | None:
        return shared.session(self._d, id_hash, now)

    def end_session(self, id_hash: str) -> bool:
        return shared.end_session(self._d, id_hash)

    # -- the dashboard's reads (`views`) --------------------------------------------------------------

    def token_by_id(self, token_id: int) -> TokenRow | None:
        return views.token_by_id(self._d, token_id)

    def projects_overview(self, org_id: int, project_id: int | None = None) -> list[ProjectOverview]:
        return views.projects_overview(self._d, org_id, project_id)

    def lesson_page(self, project_id: int, *, statuses: Sequence[str], status: str | None = None,
                    section: str | None = None, query: str = "", published_only: bool = False, limit: int = 50,
                    offset: int = 0) -> LessonPage:
        return views.lesson_page(self._d, project_id, statuses=statuses, status=status, section=section, query=query,
                                 published_only=published_only, limit=limit, offset=offset)

    def sections(self, project_id: int, statuses: tuple[str, ...],
                 published_only: bool = False) -> list[SectionCount]:
        return views.sections(self._d, project_id, statuses, published_only)

    def lesson_log(self, project_id: int, lesson_id: str, limit: int = 100) -> list[LogEntry]:
        return views.lesson_log(self._d, project_id, lesson_id, limit)

    def clients(self, project_id: int) -> list[ClientActivity]:
        return views.clients(self._d, project_id)

    def client_names(self, project_id: int) -> dict[str, str]:
        return views.client_names(self._d, project_id)
