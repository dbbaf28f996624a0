"""A push in a few statements: the batched path of `TeamDB.apply_deltas`, and the pull's JSON rows.

Contract: `plan(tx, …)` runs inside the push's transaction, after the project's row lock and the
client binding (`db.TeamDB.apply_push`). It reads, in one statement each, the push's idempotency
keys already seen and which of its lessons exist, and decides whether the push can be batched:
every delta that is not a duplicate is an ADD of a lesson the project does not have (nor an
earlier delta of the push) or a TAG. Anything else (UPDATE, MERGE, QUARANTINE, REMOVE, an ADD
of a known id) returns None and the caller goes delta by delta through `ops.apply`, as before.
`apply(tx, …)` then does what `ops._add` and `ops._tag` do, with the same results, seqs, log
bodies and rows, but computes them in Python from one read of the counters and mark budgets it
needs, and writes each table with one `Tx.many` (psycopg pipelines the rows) and `last_seq` with
one UPDATE — a handful of round trips per push instead of ~7 per delta, while holding the
project's lock. The rules are `ops`'s (`grant`, `MARKS_PER_DAY` through `Rules`, the absolute
counts with the max kept), so the two paths cannot drift apart: tests run every op on both.

`delta_json(…)`: one logged delta as JSON text, built from its stored body's text (a pull never
parses a body to serialise it again). `LogCache`: those texts by (project, seq), in this process.
A logged delta never changes (nothing updates or deletes a `deltas` row) and seqs are gap-free,
so a pull after `after` needs exactly seqs after+1 … min(last_seq, after+limit): every client of a
project pulls the same recent deltas, and all but the first pull of each are served from memory
(only a TAG's current counts are read each time). Correct across replicas for the same reason.

Cost: per push, 4-5 reads plus one write per table touched; per delta, a few dict operations and
one `json.dumps` of its logged body.
"""

from __future__ import annotations

import json
import threading
from collections import OrderedDict
from collections.abc import Sequence
from typing import Any

from . import ops
from .dialect import Tx
from .records import DeltaItem, DeltaResult, JSONObject

__all__ = ["LogCache", "Plan", "apply", "delta_json", "plan"]

_dumps = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode


def _marks(n: int) -> str:
    return ", ".join("?" * n)


class Plan:
    """What `plan` read: the keys seen (key -> seq) and the lessons that exist."""

    __slots__ = ("seen", "existing")

    def __init__(self, seen: dict[str, int | None], existing: set[str]) -> None:
        self.seen = seen
        self.existing = existing


def plan(tx: Tx, project_id: int, client_id: str, items: Sequence[DeltaItem]) -> Plan | None:
    """The reads a batched push needs, or None when this push must go delta by delta."""
    keys = sorted({item[0] for item in items})
    seen: dict[str, int | None] = {}
    for start in range(0, len(keys), 500):
        chunk = keys[start:start + 500]
        for row in tx.all(f"SELECT idem_key, seq FROM delta_keys WHERE project_id = ? AND client_id = ? "
                          f"AND idem_key IN ({_marks(len(chunk))})", (project_id, client_id, *chunk)):
            seen[str(row["idem_key"])] = row["seq"]
    ids = sorted({item[2] for item in items if item[0] not in seen})
    existing: set[str] = set()
    for start in range(0, len(ids), 500):
        chunk = ids[start:start + 500]
        existing |= {str(r["lesson_id"]) for r in tx.all(
            f"SELECT lesson_id FROM lessons WHERE project_id = ? AND lesson_id IN ({_marks(len(chunk))})",
            (project_id, *chunk))}
    known, keys_now = set(existing), set(seen)
    for key, op, lesson_id, _, _ in items:
        if key in keys_now:
            continue
        keys_now.add(key)
        if op == "ADD" and lesson_id not in known:
            known.add(lesson_id)
        elif op != "TAG":
            return None
    return Plan(seen, existing)


def _pairs(tx: Tx, sql: str, params: tuple[Any, ...], ids: list[str]) -> dict[str, tuple[int, int]]:
    out: dict[str, tuple[int, int]] = {}
    for start in range(0, len(ids), 500):
        chunk = ids[start:start + 500]
        for row in tx.all(sql.format(_marks(len(chunk))), (*params, *chunk)):
            out[str(row["lesson_id"])] = (int(row["helpful"]), int(row["harmful"]))
    return out


class _Writes:
    """The rows a batched push writes, per table, in the order the deltas came."""

    def __init__(self) -> None:
        self.lessons: list[tuple[Any, ...]] = []
        self.versions: list[tuple[Any, ...]] = []
        self.log: list[tuple[Any, ...]] = []
        self.counters: list[tuple[Any, ...]] = []
        self.budget: list[tuple[Any, ...]] = []
        self.keys: list[tuple[Any, ...]] = []

    def flush(self, tx: Tx) -> None:
        _insert(tx, "lessons(project_id, lesson_id, section, content, domains, status, origin_client, version, "
                "concerns, created_at, updated_at)", "?, ?, ?, ?, ?, ?, ?, 1, ?, ?, ?", self.lessons)
        _insert(tx, "lesson_versions(project_id, lesson_id, version, content, section, domains, client_id, seq, "
                "created_at)", "?, ?, 1, ?, ?, ?, ?, ?, ?", self.versions)
        _insert(tx, "deltas(project_id, seq, client_id, idem_key, op, lesson_id, body, created_at)",
                "?, ?, ?, ?, ?, ?, ?, ?", self.log)
        # One upsert statement may not touch a row twice: a lesson marked twice in one push is one row,
        # its budget the sum of the grants, its counts the last (absolute) ones.
        budget: dict[tuple[Any, ...], list[Any]] = {}
        for row in self.budget:
            found = budget.setdefault(row[:4], [*row[:4], 0, 0])
            found[4] += row[4]
            found[5] += row[5]
        _insert(tx, "mark_budget(project_id, lesson_id, holder, day, helpful, harmful)", "?, ?, ?, ?, ?, ?",
                [tuple(r) for r in budget.values()],
                " ON CONFLICT (project_id, lesson_id, holder, day) DO UPDATE SET helpful = mark_budget.helpful + "
                "excluded.helpful, harmful = mark_budget.harmful + excluded.harmful")
        counters = {row[:3]: row for row in self.counters}
        _insert(tx, "counters(project_id, lesson_id, client_id, helpful, harmful, updated_at)", "?, ?, ?, ?, ?, ?",
                list(counters.values()),
                " ON CONFLICT (project_id, lesson_id, client_id) DO UPDATE SET helpful = excluded.helpful, "
                "harmful = excluded.harmful, updated_at = excluded.updated_at")
        _insert(tx, "delta_keys(project_id, client_id, idem_key, seq, status, created_at)", "?, ?, ?, ?, ?, ?",
                self.keys)


ROWS_PER_INSERT = 250  # 11 columns at most: far under SQLite's 32,766 parameters per statement


def _insert(tx: Tx, table: str, row: str, rows: list[tuple[Any, ...]], tail: str = "") -> None:
    """`rows` into `table` with multi-row INSERTs (one statement, parsed once, per ROWS_PER_INSERT rows)."""
    for start in range(0, len(rows), ROWS_PER_INSERT):
        chunk = rows[start:start + ROWS_PER_INSERT]
        values = ", ".join([f"({row})"] * len(chunk))
        tx.execute(f"INSERT INTO {table} VALUES {values}{tail}", [v for r in chunk for v in r])


def apply(tx: Tx, project_id: int, client_id: str, items: Sequence[DeltaItem], found: Plan, last_seq: int,
          now: float, rules: ops.Rules) -> tuple[list[DeltaResult], int]:
    """The push `plan` accepted, applied (module contract); returns its results and the new last_seq."""
    tagged = sorted({item[2] for item in items if item[1] == "TAG" and item[0] not in found.seen})
    counts = _pairs(tx, "SELECT lesson_id, helpful, harmful FROM counters WHERE project_id = ? AND client_id = ? "
                    "AND lesson_id IN ({})", (project_id, client_id), tagged) if tagged else {}
    holder = f"t{rules.token_id}" if rules.token_id is not None else f"c{client_id}"
    day = int(now // 86400)
    budgeted = tagged if rules.marks_per_day is not None else []
    spent = _pairs(tx, "SELECT lesson_id, helpful, harmful FROM mark_budget WHERE project_id = ? AND holder = ? "
                   "AND day = ? AND lesson_id IN ({})", (project_id, holder, day), budgeted) if budgeted else {}
    seen, existing = dict(found.seen), set(found.existing)
    out: list[DeltaResult] = []
    w = _Writes()
    for key, op, lesson_id, body, status in items:
        if key in seen:
            out.append({"status": "duplicate", "seq": seen[key], "reason": None})
            continue
        if op == "ADD":
            result = _add(w, project_id, client_id, key, lesson_id, body, status == "quarantined", last_seq, now)
            if result["status"] != "rejected":
                existing.add(lesson_id)
        elif lesson_id not in existing:
            result = {"status": "rejected", "seq": None, "reason": "unknown lesson"}
        else:
            result = _tag(w, project_id, client_id, key, lesson_id, body, counts, spent, holder, day, last_seq,
                          now, rules)
        if result["seq"] is not None:
            last_seq = int(result["seq"])
        seen[key] = result["seq"]
        w.keys.append((project_id, client_id, key, result["seq"], result["status"], now))
        out.append(result)
    w.flush(tx)
    if w.log:
        tx.execute("UPDATE projects SET last_seq = ? WHERE id = ?", (last_seq, project_id))
    return out, last_seq


def _add(w: _Writes, project_id: int, client_id: str, key: str, lesson_id: str, body: JSONObject, held: bool,
         last_seq: int, now: float) -> DeltaResult:
    """`ops._add` for a lesson the project does not have, as rows to write."""
    if not body.get("content") or not body.get("section"):
        return {"status": "rejected", "seq": None, "reason": "an ADD needs content and section"}
    domains = [str(d) for d in body.get("domains") or []]
    fields = {"content": str(body["content"]), "section": str(body["section"]), "domains": domains, "version": 1}
    concerns = json.dumps([str(c) for c in body.get("concerns") or []]) if held else None
    w.lessons.append((project_id, lesson_id, fields["section"], fields["content"], json.dumps(domains),
                      "quarantined" if held else "active", client_id, concerns, now, now))
    seq = None if held else last_seq + 1
    if seq is not None:
        w.log.append((project_id, seq, client_id, key, "ADD", lesson_id, json.dumps(fields), now))
    w.versions.append((project_id, lesson_id, fields["content"], fields["section"], json.dumps(domains), client_id,
                       seq, now))
    return {"status": "quarantined" if held else "applied", "seq": seq, "reason": None}


def _tag(w: _Writes, project_id: int, client_id: str, key: str, lesson_id: str, body: JSONObject,
         counts: dict[str, tuple[int, int]], spent: dict[str, tuple[int, int]], holder: str, day: int,
         last_seq: int, now: float, rules: ops.Rules) -> DeltaResult:
    """`ops._tag` from the counts and budgets read once for the push (updated as it goes)."""
    asked = (ops.count(body.get("helpful")), ops.count(body.get("harmful")))
    old = counts.get(lesson_id, (0, 0))
    kept = (max(old[0], asked[0]), max(old[1], asked[1]))
    if rules.marks_per_day is not None and kept != old:
        used = spent.get(lesson_id, (0, 0))
        granted = (ops.grant(kept[0], old[0], used[0], rules.marks_per_day),
                   ops.grant(kept[1], old[1], used[1], rules.marks_per_day))
        if any(granted):
            w.budget.append((project_id, lesson_id, holder, day, granted[0], granted[1]))
            spent[lesson_id] = (used[0] + granted[0], used[1] + granted[1])
        kept = (old[0] + granted[0], old[1] + granted[1])
    counts[lesson_id] = kept
    w.counters.append((project_id, lesson_id, client_id, kept[0], kept[1], now))
    seq = last_seq + 1
    w.log.append((project_id, seq, client_id, key, "TAG", lesson_id,
                  json.dumps({"helpful": kept[0], "harmful": kept[1]}), now))
    return {"status": "applied", "seq": seq, "reason": None}


def delta_json(seq: int, op: str, lesson_id: str, key: str, client_id: str, created_at: float, body: str) -> str:
    """One LoggedDelta as JSON text WITHOUT its closing brace (a TAG's `counts` go there): the log's
    columns, then the stored body's own members (its text as stored, not parsed)."""
    head = (f'{{"seq":{int(seq)},"op":{_dumps(op)},"lesson_id":{_dumps(lesson_id)},"key":{_dumps(key)},'
            f'"client_id":{_dumps(client_id)},"created_at":{_dumps(created_at)}')
    inner = body.strip()[1:-1].strip()  # the object's members, without its braces
    return head + ("," + inner if inner else "")


Entry = tuple[str, str, str]  # (delta_json text, op, lesson_id)


class LogCache:
    """Logged deltas' JSON text by (project id, seq), the most recent `size` of them (module contract)."""

    def __init__(self, size: int = 50_000) -> None:
        self.size = size
        self._rows: OrderedDict[tuple[int, int], Entry] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, project_id: int, seqs: range) -> dict[int, Entry]:
        with self._lock:
            rows = self._rows
            return {s: found for s in seqs if (found := rows.get((project_id, s))) is not None}

    def put(self, project_id: int, entries: dict[int, Entry]) -> None:
        with self._lock:
            for seq, entry in entries.items():
                self._rows[(project_id, seq)] = entry
            while len(self._rows) > self.size:
                self._rows.popitem(last=False)  # the oldest put first: old deltas are pulled least
