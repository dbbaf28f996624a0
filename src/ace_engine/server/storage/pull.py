"""The pull's page: logged deltas as JSON text, from this process's cache where it can.

Contract: `page(d, cache, project_id, after, limit)` answers `TeamDB.pull_page`: the logged deltas
after `after` (at most `limit`), each as JSON text (`delta_json`: the log's columns, then the stored
body's own members as the database holds them, never parsed and serialised again, then a TAG's
current `counts`), with the project's `last_seq` and whether `more` follow, in one read.
`LogCache` keeps those texts by (project, seq) in this process. A logged delta never changes
(nothing updates or deletes a `deltas` row) and seqs are gap-free, so the page is exactly seqs
after+1 … min(last_seq, after+limit): every client of a project pulls the same recent deltas, and
all but the first pull of each come from memory (only TAG counts are read every time). That holds
across replicas for the same reason. A project's pulls that miss the same rows (its clients all pull
a group of pushes the moment it commits) read them once: one fills the cache under the project's
fill lock (`LogCache.filling`), the others wait for it and take them from memory. Rows missing from
the cache are read as tuples (at most `limit` of them, and the page holds their texts anyway: a
stream saved nothing, and psycopg's left the connection unfit for the next pipeline, `Tx.stream`).
`counts(tx, …)`: the per-client counts of lessons, `{lesson: {client: [helpful, harmful]}}`.

On PostgreSQL the TAG counts come as JSON text the database builds (`json_object_agg`), read with
`last_seq` in one statement: a pull of a few hundred TAGs makes no dict per counter row and does
not serialise it again in Python (done in Python, that would be the pull's largest cost after the
log cache).

Cost: per pull, one round trip for `last_seq` and the counts (SQLite: a counts read when the page
has TAGs), and the log rows this process has not seen; memory: at most `LogCache.size` texts
(~300 B each).
"""

from __future__ import annotations

import json
import threading
from collections import deque

from .dialect import Dialect, Tx
from .records import JSONObject, PullPage

__all__ = ["LogCache", "counts", "delta_json", "deltas_after", "page"]

_dumps = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode
Entry = tuple[str, str, str]  # (delta_json text, op, lesson_id)


def delta_json(seq: int, op: str, lesson_id: str, key: str, client_id: str, created_at: float, body: str) -> str:
    """One LoggedDelta as JSON text WITHOUT its closing brace (a TAG's `counts` go there): the log's
    columns, then the stored body's own members (its text as stored, not parsed)."""
    head = (f'{{"seq":{int(seq)},"op":{_dumps(op)},"lesson_id":{_dumps(lesson_id)},"key":{_dumps(key)},'
            f'"client_id":{_dumps(client_id)},"created_at":{_dumps(created_at)}')
    inner = body.strip()[1:-1].strip()  # the object's members, without its braces
    return head + ("," + inner if inner else "")


class LogCache:
    """Logged deltas' JSON text by (project id, seq), the most recent `size` of them (module contract).
    Kept per project, by seq, so a page is looked up with int keys (no tuple per seq), and evicted
    oldest put first (`_order`)."""

    def __init__(self, size: int = 50_000) -> None:
        self.size = size
        self._rows: dict[int, dict[int, Entry]] = {}
        self._order: deque[tuple[int, int]] = deque()
        self._lock = threading.Lock()
        self._filling: dict[int, threading.Lock] = {}

    def filling(self, project_id: int) -> threading.Lock:
        """The project's fill lock: one pull of this process reads the log rows the cache misses, the
        others that miss them too wait for it and take them from the cache (`page`)."""
        with self._lock:
            if len(self._filling) > 10_000:
                self._filling.clear()  # a dropped lock only lets two fills of a project race: both correct
            return self._filling.setdefault(project_id, threading.Lock())

    def get(self, project_id: int, seqs: range) -> dict[int, Entry]:
        with self._lock:
            rows = self._rows.get(project_id)
            if not rows:
                return {}
            return {s: found for s in seqs if (found := rows.get(s)) is not None}

    def put(self, project_id: int, entries: dict[int, Entry]) -> None:
        with self._lock:
            rows = self._rows.setdefault(project_id, {})
            for seq, entry in entries.items():
                if seq not in rows:
                    self._order.append((project_id, seq))
                rows[seq] = entry
            while len(self._order) > self.size:
                old_project, old_seq = self._order.popleft()  # the oldest put first: old deltas are pulled least
                held = self._rows.get(old_project)
                if held is not None:
                    held.pop(old_seq, None)
                    if not held:
                        del self._rows[old_project]


def counts(tx: Tx, project_id: int, lesson_ids: list[str]) -> dict[str, dict[str, list[int]]]:
    found: dict[str, dict[str, list[int]]] = {}
    for start in range(0, len(lesson_ids), 500):
        chunk = lesson_ids[start:start + 500]
        among, args = tx.among(chunk)  # one statement text whatever the page (PostgreSQL): parsed once
        for row in tx.all(f"SELECT lesson_id, client_id, helpful, harmful FROM counters WHERE project_id = ? "
                          f"AND lesson_id {among} ORDER BY client_id", (project_id, *args)):
            found.setdefault(row["lesson_id"], {})[row["client_id"]] = [int(row["helpful"]), int(row["harmful"])]
    return found


def deltas_after(d: Dialect, project_id: int, after_seq: int, limit: int) -> list[JSONObject]:
    """`TeamDB.deltas_after`: a page as parsed rows (what `page`'s JSON text is tested against)."""
    with d.read() as tx:
        rows = tx.all("SELECT seq, op, lesson_id, idem_key, client_id, body, created_at FROM deltas "
                      "WHERE project_id = ? AND seq > ? ORDER BY seq LIMIT ?",
                      (project_id, after_seq, max(0, int(limit))))
        tagged = sorted({r["lesson_id"] for r in rows if r["op"] == "TAG"})
        found = counts(tx, project_id, tagged)
        out: list[JSONObject] = []
        for row in rows:
            delta: JSONObject = {"seq": row["seq"], "op": row["op"], "lesson_id": row["lesson_id"],
                                 "key": row["idem_key"], "client_id": row["client_id"],
                                 "created_at": row["created_at"], **tx.json(row["body"])}
            if row["op"] == "TAG":
                delta["counts"] = found.get(row["lesson_id"], {})
            out.append(delta)
        return out


# PostgreSQL: the project's `last_seq` (the row without a lesson) and the page's TAG counts, each
# lesson's as JSON text built by the database, for the lessons the log's TAGs in the page's seq range
# name, in ONE statement: one snapshot, so the range holds no TAG past that `last_seq`; and a plain
# query, not a pipeline (psycopg's pipeline loop in Python was the pull's largest cost).
_HEAD_AND_COUNTS = ("SELECT NULL AS lesson_id, last_seq, NULL AS counts FROM projects WHERE id = ? UNION ALL "
                    "SELECT lesson_id, NULL, json_object_agg(client_id, json_build_array(helpful, harmful) "
                    "ORDER BY client_id)::text FROM counters WHERE project_id = ? AND lesson_id IN (SELECT lesson_id "
                    "FROM deltas WHERE project_id = ? AND seq > ? AND seq <= ? AND op = 'TAG') GROUP BY lesson_id")


def _fetch(tx: Tx, d: Dialect, cache: LogCache, project_id: int, first: int, last: int) -> dict[int, Entry]:
    """Log rows `first`..`last` as cache entries, put in the cache."""
    body = d.json_text.format("body")
    fetched = {int(r[0]): (delta_json(r[0], r[1], r[2], r[3], r[4], r[5], r[6] if isinstance(r[6], str) else "{}"),
                           str(r[1]), str(r[2]))
               for r in tx.tuples(f"SELECT seq, op, lesson_id, idem_key, client_id, created_at, {body} "
                                  "FROM deltas WHERE project_id = ? AND seq >= ? AND seq <= ? ORDER BY seq",
                                  (project_id, first, last))}
    cache.put(project_id, fetched)
    return fetched


def page(d: Dialect, cache: LogCache, project_id: int, after_seq: int, limit: int) -> PullPage:
    """The pull's page (module contract)."""
    limit = max(0, int(limit))
    after_seq = max(0, int(after_seq))
    counted: dict[str, str] | None = None  # lesson -> its counts as JSON text
    with d.read() as tx:
        if d.name == "postgresql":
            rows = tx.tuples(_HEAD_AND_COUNTS, (project_id, project_id, project_id, after_seq, after_seq + limit))
            last = next((int(r[1]) for r in rows if r[0] is None), 0)
            counted = {str(r[0]): str(r[2]) for r in rows if r[0] is not None}
        else:
            last = int(tx.value("SELECT last_seq FROM projects WHERE id = ?", (project_id,)) or 0)
        wanted = range(after_seq + 1, min(last, after_seq + limit) + 1)
        found = cache.get(project_id, wanted) if wanted else {}
        if any(s not in found for s in wanted):
            with cache.filling(project_id):  # after a push, the project's clients all pull its deltas at once
                found.update(cache.get(project_id, wanted))  # the pull waited for may have read them
                missing = [s for s in wanted if s not in found]
                if missing:
                    found.update(_fetch(tx, d, cache, project_id, missing[0], missing[-1]))
        entries = [found[s] for s in wanted if s in found]
        if counted is None:
            tagged = sorted({lesson for _, op, lesson in entries if op == "TAG"})
            counted = {k: _dumps(v) for k, v in (counts(tx, project_id, tagged) if tagged else {}).items()}
    deltas = [text + (f',"counts":{counted.get(lesson, "{}")}}}' if op == "TAG" else "}")
              for text, op, lesson in entries]
    return {"deltas": deltas, "last_seq": last, "more": last > after_seq + limit}
