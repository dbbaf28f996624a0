"""A push in a few statements: the batched path of `TeamDB.apply_deltas`.

Contract: `plan(tx, …)` runs inside the push's transaction, after the project's row lock and the
client binding (`db.TeamDB.apply_push`). In ONE round trip (`Tx.all_many`) it reads the push's
idempotency keys already seen, which of its lessons exist, and for its TAGs the client's counts and
the day's mark budget; it decides whether the push can be batched: every delta that is not a
duplicate is an ADD of a lesson the project does not have (nor an earlier delta of the push) or a
TAG. Anything else (UPDATE, MERGE, QUARANTINE, REMOVE, an ADD of a known id, a push over 500)
returns None and the caller goes delta by delta through `ops.apply`, as before. `apply(tx, …)`
then does what `ops._add` and `ops._tag` do, with the same results, seqs, log bodies and rows,
computed in Python, and writes them with one multi-row INSERT per table and one `last_seq`
UPDATE, all in ONE round trip (`Tx.pipeline`): the project's lock is held for lock, bind, read,
write, commit — five round trips per push instead of ~7 per delta. The rules are `ops`'s (`grant`,
`MARKS_PER_DAY` through `Rules`, the absolute counts with the max kept), so the two paths cannot
drift apart: tests/test_team_batch.py applies the same random pushes both ways and compares every table.

Cost: per push, two round trips (the reads, the writes); per delta, a few dict operations and
one `json.dumps` of its logged body.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from . import ops
from .dialect import Tx
from .records import DeltaItem, DeltaResult, JSONObject

__all__ = ["Plan", "apply", "plan"]


def _marks(n: int) -> str:
    return ", ".join("?" * n)


MAX_BATCH = 500  # a push's most deltas (the protocol's): its IN lists stay one statement each


class Plan:
    """What `plan` read, in one round trip: the keys seen (key -> seq), the lessons that exist,
    and for the TAGs the client's counts and the holder's mark budget of the day."""

    __slots__ = ("seen", "existing", "counts", "spent", "holder", "day")

    def __init__(self, seen: dict[str, int | None], existing: set[str], counts: dict[str, tuple[int, int]],
                 spent: dict[str, tuple[int, int]], holder: str, day: int) -> None:
        self.seen = seen
        self.existing = existing
        self.counts = counts
        self.spent = spent
        self.holder = holder
        self.day = day


def plan(tx: Tx, project_id: int, client_id: str, items: Sequence[DeltaItem], now: float,
         rules: ops.Rules) -> Plan | None:
    """The reads a batched push needs (all sent at once: `Tx.all_many`), or None when this push
    must go delta by delta."""
    if not items or len(items) > MAX_BATCH or any(op not in ("ADD", "TAG") for _, op, *_ in items):
        return None
    keys = sorted({item[0] for item in items})
    ids = sorted({item[2] for item in items})
    tagged = sorted({item[2] for item in items if item[1] == "TAG"})
    holder = f"t{rules.token_id}" if rules.token_id is not None else f"c{client_id}"
    day = int(now // 86400)
    queries: list[tuple[str, Sequence[Any]]] = [
        (f"SELECT idem_key, seq FROM delta_keys WHERE project_id = ? AND client_id = ? "
         f"AND idem_key IN ({_marks(len(keys))})", (project_id, client_id, *keys)),
        (f"SELECT lesson_id FROM lessons WHERE project_id = ? AND lesson_id IN ({_marks(len(ids))})",
         (project_id, *ids))]
    if tagged:
        queries.append((f"SELECT lesson_id, helpful, harmful FROM counters WHERE project_id = ? AND client_id = ? "
                        f"AND lesson_id IN ({_marks(len(tagged))})", (project_id, client_id, *tagged)))
        if rules.marks_per_day is not None:
            queries.append((f"SELECT lesson_id, helpful, harmful FROM mark_budget WHERE project_id = ? AND holder = ? "
                            f"AND day = ? AND lesson_id IN ({_marks(len(tagged))})",
                            (project_id, holder, day, *tagged)))
    found = tx.all_many(queries) + [[], []]
    seen: dict[str, int | None] = {str(r["idem_key"]): r["seq"] for r in found[0]}
    existing = {str(r["lesson_id"]) for r in found[1]}
    known, keys_now = set(existing), set(seen)
    for key, op, lesson_id, _, _ in items:
        if key in keys_now:
            continue
        keys_now.add(key)
        if op == "ADD":
            if lesson_id in known:
                return None  # an ADD of a known id is an UPDATE: `ops` does that
            known.add(lesson_id)
    pairs = [{str(r["lesson_id"]): (int(r["helpful"]), int(r["harmful"])) for r in rows} for rows in found[2:4]]
    return Plan(seen, existing, pairs[0], pairs[1], holder, day)


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
    counts, spent, holder, day = dict(found.counts), dict(found.spent), found.holder, found.day
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
    with tx.pipeline():  # every write in one round trip: the project's lock is held meanwhile
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
