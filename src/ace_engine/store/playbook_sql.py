"""The playbook's tables behind the store interface: bullets (and their FTS5 index), the change
log, domain counts, injections, pins, per-session state and vectors.

Contract: methods take and return plain dicts (a bullet's `domains` as a list, `provenance` as a
dict); SQL stays here. Writes that belong together (a bullet and its change-log row) run in one
`transaction()`, usually the caller's. The injecting hooks read through `list_bullets`,
`fts_candidates`, `domain_counts`, `pins` and write through `record_injections`.

One piece, past 400 lines, because these tables change together in one transaction (a bullet, its FTS row,
its change-log row, its domain counts); split, one transaction's SQL would live in several files.

A lesson's content is written in its one normal form (`core.escape.normalized`: NFKC, no tag, bidi
or zero-width characters) by `insert_bullet` and `update_bullet`, whatever door it came through; the
store's connection then redacts it like every string.

Cost: imports `json` (already loaded by every hook), `_base` and `core.escape` (regexes compiled on
first use; `unicodedata` only for non-ASCII content).
"""

from __future__ import annotations

import json

from ..core.escape import normalized
from ._base import StoreBase, like_escape

TYPE_CHECKING = False  # not `typing.TYPE_CHECKING`: the hooks must not import `typing` (~3 ms)
if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping, Sequence
    from typing import Any

    from ..core._types import Bullet, BulletFields
    from ._base import SQLValue
    from .interfaces import BulletRow
    from .records import ChangeRow, InjectionRow, PinRow

BULLET_COLUMNS = (
    "id", "project_id", "section", "content", "domains", "helpful", "harmful", "helpful_explicit",
    "harmful_explicit", "confidence", "status", "provenance", "content_key", "created_at",
    "updated_at", "last_used_at", "retrieval_count", "origin",  # origin: schema migration 7 (team sync)
    "agent",  # migration 10: the coding agent whose session taught it
)
_SELECT = "SELECT b.rowid AS rowid, " + ", ".join(f"b.{c}" for c in BULLET_COLUMNS) + " FROM bullets b"


def filter_clauses(statuses: Sequence[str] | None, section: str | None,
                   domain: str | None) -> tuple[list[str], tuple[SQLValue, ...]]:
    """The WHERE clauses (and their parameters) of a lesson listing filtered by status, section and
    domain — `list_bullets` and the dashboard's pages (`views_sql`) filter the same way. A domain
    matches whole (its LIKE wildcards escaped: `python_x` does not match `python-x`)."""
    clauses: list[str] = []
    params: tuple[SQLValue, ...] = ()
    if statuses:
        clauses.append(f"b.status IN ({','.join('?' * len(statuses))})")
        params += tuple(statuses)
    if section:
        clauses.append("b.section = ?")
        params += (section,)
    if domain:
        clauses.append("(' ' || b.domains || ' ') LIKE ? ESCAPE '\\'")
        params += ("% " + like_escape(domain) + " %",)
    return clauses, params


_MISSING_VECTOR = ("LEFT JOIN bullet_vectors v ON v.bullet_id = b.id AND v.model = ? AND v.content_key = b.content_key"
                   " WHERE b.status IN ('active', 'candidate') AND v.bullet_id IS NULL")


def _pack_scope(project_id: int | None, include_global: bool) -> str:
    if project_id is None:
        return "global"
    return f"{project_id}+global" if include_global else str(project_id)


def _bullet(row: Any) -> BulletRow:  # a `_SELECT` row (a dict), its columns decoded
    row = dict(row)
    row["domains"] = row["domains"].split() if row["domains"] else []
    try:
        row["provenance"] = json.loads(row["provenance"] or "{}")
    except ValueError:
        row["provenance"] = {}
    return row


def _maybe(row: dict[str, Any] | None) -> BulletRow | None:
    return None if row is None else _bullet(row)


class PlaybookSQL(StoreBase):
    # -- bullets -----------------------------------------------------------------------------------

    def insert_bullet(self, b: Bullet) -> None:
        agent = b.get("agent") or self._agent_of(b["provenance"] or {})
        self.conn.execute(
            f"INSERT INTO bullets({', '.join(BULLET_COLUMNS)}) VALUES ({', '.join('?' * len(BULLET_COLUMNS))})",
            tuple(
                " ".join(b["domains"]) if c == "domains"
                else json.dumps(b["provenance"], ensure_ascii=False) if c == "provenance"
                else agent if c == "agent"
                else normalized(b["content"]) if c == "content"
                else b.get(c)
                for c in BULLET_COLUMNS
            ),
        )

    def _agent_of(self, provenance: Mapping[str, Any]) -> str | None:
        """The agent a new lesson came from: its provenance's `agent`, else that of the session it
        was learned in (the captured session's, else its summary's)."""
        agent = provenance.get("agent")
        if isinstance(agent, str) and agent:
            return agent[:40]
        session = provenance.get("session_id") or next(iter(provenance.get("sessions") or ()), None)
        if not isinstance(session, str):
            return None
        row = self.conn.execute(
            "SELECT agent FROM sessions WHERE session_id = ? AND agent IS NOT NULL"
            " UNION ALL SELECT agent FROM session_summaries WHERE session_id = ? AND agent IS NOT NULL LIMIT 1",
            (session, session)).fetchone()
        return row[0] if row else None

    def update_bullet(self, bullet_id: str, fields: BulletFields) -> None:
        values: dict[str, Any] = dict(fields)  # the columns as stored, in the order given
        if "domains" in fields:
            values["domains"] = " ".join(fields["domains"])
        if "provenance" in fields:
            values["provenance"] = json.dumps(fields["provenance"], ensure_ascii=False)
        if "content" in fields:
            values["content"] = normalized(fields["content"])
        sets = ", ".join(f"{k}=?" for k in values)
        self.conn.execute(f"UPDATE bullets SET {sets} WHERE id=?", (*values.values(), bullet_id))

    def get_bullet(self, bullet_id: str) -> BulletRow | None:
        return _maybe(self._one(f"{_SELECT} WHERE b.id=?", (bullet_id,)))

    def get_bullets(self, ids: Sequence[str]) -> list[BulletRow]:
        if not ids:
            return []
        marks = ",".join("?" * len(ids))
        found = {r["id"]: _bullet(r) for r in self._rows(f"{_SELECT} WHERE b.id IN ({marks})", tuple(ids))}
        return [found[i] for i in ids if i in found]

    def find_by_prefix(self, prefix: str) -> list[str]:
        return [r[0] for r in self.conn.execute("SELECT id FROM bullets WHERE id LIKE ? LIMIT 5", (prefix + "%",))]

    def find_by_content_key(self, content_key: str, project_id: int | None) -> BulletRow | None:
        return _maybe(self._one(
            f"{_SELECT} WHERE b.content_key=? AND b.project_id IS ? ORDER BY b.status='active' DESC LIMIT 1",
            (content_key, project_id),
        ))

    def _scope(self, project_id: int | None, include_global: bool) -> tuple[str, tuple[SQLValue, ...]]:
        if project_id is None:
            return "b.project_id IS NULL", ()
        if include_global:
            return "(b.project_id = ? OR b.project_id IS NULL)", (project_id,)
        return "b.project_id = ?", (project_id,)

    def list_bullets(self, project_id: int | None, *, include_global: bool = True,
                     statuses: Sequence[str] | None = ("active",), section: str | None = None,
                     domain: str | None = None,
                     min_helpful: int = 0, order: str = "value", limit: int | None = None) -> list[BulletRow]:
        if order == "value" and limit and include_global and project_id is not None:
            # `project OR global` defeats the ranking index (a full scan and sort: ~10 ms at 10k
            # bullets, on the SessionStart path). Two indexed top-N queries merged are exact.
            rows = [row for scope in (project_id, None) for row in self.list_bullets(
                scope, include_global=False, statuses=statuses, section=section, domain=domain,
                min_helpful=min_helpful, order=order, limit=limit)]
            rows.sort(key=lambda b: (-b["confidence"], -(b["helpful"] + 3 * b["helpful_explicit"]), -b["updated_at"]))
            return rows[:limit]
        where, params = self._scope(project_id, include_global)
        more, more_params = filter_clauses(statuses, section, domain)
        clauses, params = [where, *more], params + more_params
        if min_helpful:
            clauses.append("(b.helpful + b.helpful_explicit) >= ?")
            params += (min_helpful,)
        orders = {
            "value": "b.confidence DESC, (b.helpful + 3 * b.helpful_explicit) DESC, b.updated_at DESC",
            "recent": "b.updated_at DESC",
            "created": "b.created_at, b.rowid",  # insertion order breaks ties within a millisecond
            "helpful": "(b.helpful + b.helpful_explicit) DESC, b.confidence DESC",
        }
        sql = f"{_SELECT} WHERE {' AND '.join(clauses)} ORDER BY {orders[order]}"
        if limit:
            sql += f" LIMIT {int(limit)}"
        return [_bullet(r) for r in self._rows(sql, params)]

    def count_bullets(self, project_id: int | None, include_global: bool = True,
                      statuses: Sequence[str] = ("active",)) -> int:
        where, params = self._scope(project_id, include_global)
        marks = ",".join("?" * len(statuses))
        return self.conn.execute(
            f"SELECT COUNT(*) FROM bullets b WHERE {where} AND b.status IN ({marks})", params + tuple(statuses)
        ).fetchone()[0]

    def fts_candidates(self, match: str, project_id: int | None, *, include_global: bool = True,
                       limit: int = 60, statuses: Sequence[str] = ("active",),
                       order: str = "bm25") -> list[BulletRow]:
        """Bullets matching an FTS5 expression, each with its `bm25` (lower is better): active
        ones (what may be injected) unless `statuses` says otherwise (the curator's duplicate
        check also looks at candidates). `order="bm25"`: best BM25 first, which scores every
        match (~2 µs each); `order="newest"`: the newest matches, in the index's own order, so
        only the rows returned are scored and the cost does not grow with the matches."""
        where, params = self._scope(project_id, include_global)
        marks = ",".join("?" * len(statuses))
        by = "bullets_fts.rowid DESC" if order == "newest" else "bm25"
        sql = (
            f"SELECT bm25(bullets_fts, 1.0, 0.6) AS bm25, sub.* FROM bullets_fts "
            f"JOIN ({_SELECT} WHERE {where} AND b.status IN ({marks})) sub ON sub.rowid = bullets_fts.rowid "
            f"WHERE bullets_fts MATCH ? ORDER BY {by} LIMIT ?"
        )
        return [_bullet(r) for r in self._rows(sql, params + tuple(statuses) + (match, limit))]

    def fts_doc_counts(self, terms: Sequence[str], cap: int) -> list[int]:
        """For each FTS5 expression in `terms`, how many bullets (any scope or status) match it,
        counted up to `cap`: a cheap way for retrieval to tell rare search terms from common ones."""
        counts: list[int] = []
        one = "(SELECT count(*) FROM (SELECT 1 FROM bullets_fts WHERE bullets_fts MATCH ? LIMIT ?))"
        for start in range(0, len(terms), 50):
            chunk = terms[start:start + 50]
            params: list[str | int] = []
            for term in chunk:
                params += [term, cap]
            counts.extend(self.conn.execute(f"SELECT {', '.join([one] * len(chunk))}", params).fetchone())
        return counts

    def delete_bullets(self, project_id: int | None, include_global: bool = False) -> int:
        """Delete a scope's bullets for good, history included (see `purge_bullets`)."""
        where, params = self._scope(project_id, include_global)
        ids = [r[0] for r in self.conn.execute(f"SELECT b.id FROM bullets b WHERE {where}", params)]
        return self.purge_bullets(ids)

    def purge_bullets(self, ids: Sequence[str]) -> int:
        """Delete bullets with every row that refers to them (change log, injections, pins,
        vectors, situations) and their full-text index entries, with `secure_delete` on so the text is
        overwritten rather than left in free pages; then the FTS index is merged (`optimize`),
        because FTS5 only marks deleted entries until its segments are merged. Call `reclaim()`
        after the transaction to give the space back. Returns how many bullets were deleted."""
        if not ids:
            return 0
        self.conn.execute("PRAGMA secure_delete=ON")  # stays on for this connection: later deletes too
        deleted = 0
        with self.transaction():
            for start in range(0, len(ids), 500):
                chunk = list(ids[start:start + 500])
                marks = ",".join("?" * len(chunk))
                for table in ("injections", "pins", "bullet_vectors", "bullet_changes", "team_counts",
                              "lesson_situations", "lesson_anchors"):
                    self.conn.execute(f"DELETE FROM {table} WHERE bullet_id IN ({marks})", chunk)
                deleted += self.conn.execute(f"DELETE FROM bullets WHERE id IN ({marks})", chunk).rowcount
            # The packs hold the deleted bullets' ids and sign codes: rebuilt on the next search.
            self.conn.execute("DELETE FROM vector_packs")
            self.conn.execute("INSERT INTO bullets_fts(bullets_fts) VALUES ('optimize')")
        return deleted

    # -- domains -----------------------------------------------------------------------------------

    def refresh_domain_counts(self, project_id: int | None) -> None:
        key = project_id or 0
        where, params = self._scope(project_id, False)
        counts: dict[str, int] = {}
        for (domains,) in self.conn.execute(
            f"SELECT b.domains FROM bullets b WHERE {where} AND b.status = 'active'", params
        ):
            for domain in domains.split():
                counts[domain] = counts.get(domain, 0) + 1
        self.conn.execute("DELETE FROM domain_counts WHERE project_id = ?", (key,))
        self.conn.executemany(
            "INSERT INTO domain_counts(project_id, domain, bullets) VALUES (?,?,?)",
            [(key, d, n) for d, n in counts.items()],
        )

    def domain_counts(self, project_id: int | None, include_global: bool = True) -> dict[str, int]:
        keys = [project_id or 0] + ([0] if include_global and project_id else [])
        counts: dict[str, int] = {}
        for domain, n in self.conn.execute(
            f"SELECT domain, bullets FROM domain_counts WHERE project_id IN ({','.join('?' * len(keys))})", keys
        ):
            counts[domain] = counts.get(domain, 0) + n
        return counts

    # -- change log --------------------------------------------------------------------------------

    def log_change(self, bullet_id: str, op: str, detail: Mapping[str, Any] | None, reason: str | None,
                   source: str | None, session_id: str | None, now: float) -> None:
        self.conn.execute(
            "INSERT INTO bullet_changes(bullet_id, op, detail, reason, source, session_id, created_at)"
            " VALUES (?,?,?,?,?,?,?)",
            (bullet_id, op, json.dumps(detail, ensure_ascii=False) if detail else None, reason, source,
             session_id, now),
        )

    def changes(self, bullet_id: str | None = None, project_id: int | None = None,
                limit: int = 100) -> list[ChangeRow]:
        if bullet_id:
            rows = self._rows("SELECT * FROM bullet_changes WHERE bullet_id=? ORDER BY id DESC LIMIT ?",
                              (bullet_id, limit))
        elif project_id is not None:
            rows = self._rows(
                "SELECT c.* FROM bullet_changes c JOIN bullets b ON b.id = c.bullet_id"
                " WHERE b.project_id = ? OR b.project_id IS NULL ORDER BY c.id DESC LIMIT ?", (project_id, limit))
        else:
            rows = self._rows("SELECT * FROM bullet_changes ORDER BY id DESC LIMIT ?", (limit,))
        for row in rows:
            row["detail"] = json.loads(row["detail"]) if row["detail"] else None
        return rows

    # -- injections, pins, session state -----------------------------------------------------------

    def record_injections(self, session_id: str | None, project_id: int | None, hook: str,
                          shown: Sequence[tuple[str, float, int]], now: float) -> None:
        """Record what a hook showed (bullet id, score, rank) and bump the bullets' usage."""
        with self.transaction():
            self.conn.executemany(
                "INSERT INTO injections(session_id, project_id, hook, bullet_id, score, rank, created_at)"
                " VALUES (?,?,?,?,?,?,?)",
                [(session_id, project_id, hook, bid, score, rank, now) for bid, score, rank in shown],
            )
            self.conn.executemany(
                "UPDATE bullets SET retrieval_count = retrieval_count + 1, last_used_at = ? WHERE id = ?",
                [(now, bid) for bid, _, _ in shown],
            )

    def injected(self, session_id: str, since: float | None = None) -> list[InjectionRow]:
        sql = "SELECT hook, bullet_id, score, rank, created_at FROM injections WHERE session_id = ?"
        params: tuple[str | float, ...] = (session_id,)
        if since is not None:
            sql += " AND created_at >= ?"
            params += (since,)
        return self._rows(sql + " ORDER BY id", params)

    def set_pins(self, session_id: str, bullet_ids: Iterable[str], now: float, ttl_seconds: float) -> None:
        with self.transaction():
            self.conn.executemany(
                "INSERT OR REPLACE INTO pins(session_id, bullet_id, pinned_at, expires_at) VALUES (?,?,?,?)",
                [(session_id, bid, now, now + ttl_seconds) for bid in bullet_ids],
            )

    def pins(self, session_id: str, now: float) -> list[PinRow]:
        return self._rows(
            "SELECT bullet_id, pinned_at, expires_at FROM pins WHERE session_id = ? AND expires_at > ?"
            " ORDER BY pinned_at, rowid", (session_id, now))

    def get_state(self, session_id: str, key: str) -> str | None:
        row = self.conn.execute("SELECT value FROM session_state WHERE session_id=? AND key=?",
                                (session_id, key)).fetchone()
        return row[0] if row else None

    def set_state(self, session_id: str, key: str, value: str | None) -> None:
        with self.transaction():
            self.conn.execute(
                "INSERT OR REPLACE INTO session_state(session_id, key, value) VALUES (?,?,?)",
                (session_id, key, value))

    # -- vectors (semantic search) -----------------------------------------------------------------

    def vectors(self, model: str, project_id: int | None,
                include_global: bool = True) -> list[tuple[str, bytes]]:
        where, params = self._scope(project_id, include_global)
        return self.conn.execute(
            f"SELECT v.bullet_id, v.vector FROM bullet_vectors v JOIN bullets b ON b.id = v.bullet_id"
            f" WHERE {where} AND b.status='active' AND v.model = ? AND v.content_key = b.content_key",
            params + (model,),
        ).fetchall()

    def bullets_missing_vectors(self, model: str, limit: int = 1000) -> list[BulletRow]:
        """Active and candidate bullets without a vector of `model` for their current content."""
        return [_bullet(r) for r in self._rows(f"{_SELECT} {_MISSING_VECTOR} LIMIT ?", (model, limit))]

    def missing_vector_count(self, model: str) -> int:
        """How many bullets `bullets_missing_vectors` would return without a limit."""
        return int(self.conn.execute(f"SELECT count(*) FROM bullets b {_MISSING_VECTOR}", (model,)).fetchone()[0])

    def put_vectors(self, model: str, items: Iterable[tuple[str, str, bytes]]) -> None:
        with self.transaction():
            self.conn.executemany(
                "INSERT OR REPLACE INTO bullet_vectors(bullet_id, model, content_key, vector) VALUES (?,?,?,?)",
                [(bid, model, key, blob) for bid, key, blob in items],
            )

    def vectors_of(self, model: str, ids: Sequence[str] = (),
                   rowids: Sequence[int] = ()) -> list[tuple[str, bytes]]:
        """(id, vector) of those bullets (by id, or by rowid as a pack holds them) that are active
        and have a current vector of `model`."""
        out: list[tuple[str, bytes]] = []
        for column, keys in (("b.id", list(ids)), ("b.rowid", list(rowids))):
            for start in range(0, len(keys), 500):
                chunk = keys[start:start + 500]
                marks = ",".join("?" * len(chunk))
                out += self.conn.execute(
                    f"SELECT b.id, v.vector FROM bullets b JOIN bullet_vectors v ON v.bullet_id = b.id AND v.model = ?"
                    f" WHERE {column} IN ({marks}) AND b.status = 'active' AND v.content_key = b.content_key",
                    [model, *chunk]).fetchall()
        return out

    def vector_stamp(self) -> str:
        """Moves whenever a bullet is added or a vector written (both tables' max rowid; REPLACE
        takes a new rowid), which is when a pack may be missing something."""
        row = self.conn.execute("SELECT (SELECT coalesce(max(rowid), 0) FROM bullets),"
                                " (SELECT coalesce(max(rowid), 0) FROM bullet_vectors)").fetchone()
        return f"{row[0]}:{row[1]}"

    def vector_codes(self, model: str, project_id: int | None, include_global: bool,
                     width: int, prefer: str | None = None) -> list[tuple[int, bytes]]:
        """(bullet rowid, first `width` bytes of the vector) of the scope's bullets that are not
        archived and have a current vector of `model` — or of `prefer` when they have a current
        one of that too (a lesson folded with its situations): what a pack is built from."""
        where, params = self._scope(project_id, include_global)
        return self.conn.execute(
            f"SELECT b.rowid, substr(coalesce(f.vector, v.vector), 1, ?) FROM bullet_vectors v"
            f" JOIN bullets b ON b.id = v.bullet_id LEFT JOIN bullet_vectors f ON f.bullet_id = b.id"
            f" AND f.model = ? AND f.content_key = b.content_key"
            f" WHERE {where} AND b.status != 'archived' AND v.model = ? AND v.content_key = b.content_key"
            " ORDER BY b.rowid", (width, prefer or "") + params + (model,)).fetchall()

    def vector_pack(self, model: str, project_id: int | None,
                    include_global: bool = True) -> tuple[str, bytes, bytes] | None:
        """(stamp, ids, codes) of the scope's pack (schema migration 6), or None."""
        row = self.conn.execute("SELECT stamp, ids, codes FROM vector_packs WHERE scope = ? AND model = ?",
                                (_pack_scope(project_id, include_global), model)).fetchone()
        return (str(row[0]), bytes(row[1]), bytes(row[2])) if row else None

    def put_vector_pack(self, model: str, project_id: int | None, include_global: bool, stamp: str,
                        ids: bytes, codes: bytes) -> None:
        with self.transaction():
            self.conn.execute("INSERT OR REPLACE INTO vector_packs(scope, model, stamp, ids, codes) VALUES (?,?,?,?,?)",
                              (_pack_scope(project_id, include_global), model, stamp, ids, codes))

    # -- the re-screen (playbook/rescreen.py) -------------------------------------------------------

    def bullets_in_every_scope(self, statuses: Sequence[str] = ("active",)) -> list[BulletRow]:
        """The bullets of every project and the global scope with one of `statuses`, in insertion
        order (for the re-screen, which must not miss a bullet whose project row is gone)."""
        marks = ",".join("?" * len(statuses))
        return [_bullet(r) for r in self._rows(f"{_SELECT} WHERE b.status IN ({marks}) ORDER BY b.rowid",
                                               tuple(statuses))]

    # -- pruning (learning/curator.py): which bullets to let go --------------------------------------

    def low_confidence_bullets(self, project_id: int | None, below: float, min_observations: int) -> list[str]:
        return [r[0] for r in self.conn.execute(
            "SELECT id FROM bullets WHERE project_id IS ? AND status = 'active' AND confidence < ?"
            " AND helpful + harmful + helpful_explicit + harmful_explicit >= ?",
            (project_id, below, min_observations))]

    def stale_bullets(self, project_id: int | None, unused_since: float) -> list[str]:
        """Active bullets not used since `unused_since` whose record is poor: never marked helpful,
        or more harmful than helpful (explicit marks weigh 3x); and candidates not observed again
        (not updated) since then — a candidate is never used, only re-observed."""
        return [r[0] for r in self.conn.execute(
            "SELECT id FROM bullets WHERE project_id IS ? AND ((status = 'active'"
            " AND COALESCE(last_used_at, created_at) < ?"
            " AND (helpful + helpful_explicit = 0"
            " OR helpful + 3 * helpful_explicit < harmful + 3 * harmful_explicit))"
            " OR (status = 'candidate' AND updated_at < ?))",
            (project_id, unused_since, unused_since))]

    def playbook_size(self, project_id: int | None) -> tuple[int, int]:
        """(active bullets, their total characters) of one scope."""
        n, chars = self.conn.execute(
            "SELECT COUNT(*), COALESCE(SUM(LENGTH(content)), 0) FROM bullets"
            " WHERE project_id IS ? AND status = 'active'", (project_id,)).fetchone()
        return n, chars

    def least_valuable_bullets(self, project_id: int | None, limit: int,
                               exclude: Sequence[str] = ()) -> list[tuple[str, int]]:
        """(id, length) of the active bullets worth least: lowest confidence, fewest helpful marks,
        longest unused, first."""
        rows = self.conn.execute(
            "SELECT id, LENGTH(content) FROM bullets WHERE project_id IS ? AND status = 'active'"
            " ORDER BY confidence, helpful + 3 * helpful_explicit, COALESCE(last_used_at, created_at), id LIMIT ?",
            (project_id, limit + len(exclude))).fetchall()
        skip = set(exclude)
        return [(r[0], r[1]) for r in rows if r[0] not in skip][:limit]

    def last_injection_batch(self, session_id: str) -> list[str]:
        """The bullets of the most recent injection in a session (one hook call): what "that tip"
        refers to."""
        row = self.conn.execute(
            "SELECT created_at, hook FROM injections WHERE session_id = ? ORDER BY id DESC LIMIT 1", (session_id,)
        ).fetchone()
        if row is None:
            return []
        return [r[0] for r in self.conn.execute(
            "SELECT bullet_id FROM injections WHERE session_id = ? AND created_at = ? AND hook = ? ORDER BY rank",
            (session_id, row[0], row[1]))]
