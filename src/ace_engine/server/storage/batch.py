"""A push in a few statements: the batched path of `TeamDB.apply_deltas`, for one push or a group.

Contract: a `Push` is (client id, deltas, now, rules); `batchable(push)` says whether it may take this
path at all: every delta an ADD or a TAG, at most MAX_BATCH of them. `reads(tx, project_id, pushes)`
are the four queries batched pushes need, whatever their number: the idempotency keys already seen
(per client), which of their lessons exist, and for their TAGs the clients' counts and the mark
budgets of the day (per holder: the token). `db.TeamDB.apply_push` sends them in ONE round trip
(`Tx.all_many`) with the statements that take the project's row lock and bind the client ids
(`ops.lock_and_bind`), so they run after the lock. `plan(pushes, rows)` reads their rows and says
whether the pushes can be batched: every delta that is not a duplicate is an ADD of a lesson the
project does not have (nor an earlier delta of the group) or a TAG; otherwise None, and the caller
goes delta by delta through `ops.apply`, as before. `apply(tx, …)` then does what `ops._add` and
`ops._tag` do, push after push, with the same results, seqs, log bodies and rows, computed in
Python (a TAG sees the counts and budgets the group's earlier deltas left), and writes them with
one multi-row INSERT per table and one `last_seq` UPDATE, and the COMMIT, all in ONE round trip
(`Tx.pipeline(commit=True)`): the project's lock is held for two round trips per push — or per
group (`together`: the server's queued pushes to one project, `TeamDB.apply_pushes`).
The rules are `ops`'s (`grant`, `MARKS_PER_DAY` through `Rules`, the absolute counts with the max
kept), so the paths cannot drift apart: tests/test_team_batch.py applies the same random pushes
batched, grouped and delta by delta, and compares every table.

Cost: per push or group, two round trips (the reads, the writes); per delta, a few dict operations
and one `json.dumps` of its logged body.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any, NamedTuple

from . import ops
from .dialect import Row, TeamDBError, Tx
from .records import DeltaItem, DeltaResult, JSONObject

__all__ = ["Alone", "Plan", "Push", "apply", "batchable", "plan", "reads", "together"]


MAX_BATCH = 500  # a push's most deltas (the protocol's): its IN lists stay one statement each on SQLite


class Push(NamedTuple):
    """One push as the store applies it: who sends it, its deltas, its time and the caller's rules."""

    client_id: str
    items: Sequence[DeltaItem]
    now: float
    rules: ops.Rules


def batchable(push: Push) -> bool:
    """Whether `push` may take the batched path at all (its rows may still send it delta by delta: `plan`)."""
    return 0 < len(push.items) <= MAX_BATCH and all(op in ("ADD", "TAG") for _, op, *_ in push.items)


def _holder(push: Push) -> str:
    return f"t{push.rules.token_id}" if push.rules.token_id is not None else f"c{push.client_id}"


def reads(tx: Tx, project_id: int, pushes: Sequence[Push]) -> list[tuple[str, Sequence[Any]]]:
    """The four reads batched pushes need (`batchable` ones, one or a group of them), whatever their
    number, to send at once with the lock (`Tx.all_many`, `db.apply_push`): the keys seen, the
    lessons that exist, the TAGs' counts and mark budgets. With several clients, holders or days
    a read may return more rows than the pairs asked for (a cross product); `plan` keeps the pairs.
    Their texts do not depend on the pushes' sizes on PostgreSQL past ANY_FROM values (`Tx.among`)."""
    clients, client_args = tx.among(sorted({p.client_id for p in pushes}))
    keys, key_args = tx.among(sorted({item[0] for p in pushes for item in p.items}))
    ids, id_args = tx.among(sorted({item[2] for p in pushes for item in p.items}))
    queries: list[tuple[str, Sequence[Any]]] = [
        (f"SELECT client_id, idem_key, seq FROM delta_keys WHERE project_id = ? AND client_id {clients} "
         f"AND idem_key {keys}", (project_id, *client_args, *key_args)),
        (f"SELECT lesson_id FROM lessons WHERE project_id = ? AND lesson_id {ids}", (project_id, *id_args))]
    tagged = sorted({item[2] for p in pushes for item in p.items if item[1] == "TAG"})
    if tagged:
        tags, tag_args = tx.among(tagged)
        tagging, tagging_args = tx.among(sorted({p.client_id for p in pushes if any(i[1] == "TAG" for i in p.items)}))
        queries.append((f"SELECT client_id, lesson_id, helpful, harmful FROM counters WHERE project_id = ? "
                        f"AND client_id {tagging} AND lesson_id {tags}", (project_id, *tagging_args, *tag_args)))
        budgeted = [p for p in pushes if p.rules.marks_per_day is not None]
        if budgeted:
            holders, holder_args = tx.among(sorted({_holder(p) for p in budgeted}))
            days, day_args = tx.among(sorted({int(p.now // 86400) for p in budgeted}))
            queries.append((f"SELECT holder, day, lesson_id, helpful, harmful FROM mark_budget WHERE project_id = ? "
                            f"AND holder {holders} AND day {days} AND lesson_id {tags}",
                            (project_id, *holder_args, *day_args, *tag_args)))
    return queries


class Plan:
    """What `plan` read, in one round trip, for a group of pushes: the keys seen ((client, key) ->
    seq), the lessons that exist, the counts ((client, lesson) -> counts) and the mark budgets spent
    ((holder, day, lesson) -> marks); `apply` carries them on from push to push of the group."""

    __slots__ = ("seen", "existing", "counts", "spent")

    def __init__(self, seen: dict[tuple[str, str], int | None], existing: set[str],
                 counts: dict[tuple[str, str], tuple[int, int]],
                 spent: dict[tuple[str, int, str], tuple[int, int]]) -> None:
        self.seen = seen
        self.existing = existing
        self.counts = counts
        self.spent = spent


def plan(pushes: Sequence[Push], rows: Sequence[Sequence[Row]]) -> Plan | None:
    """What the `reads` found (`rows`, in their order), or None when these pushes must go delta by
    delta (and a group, each push alone): an ADD of a lesson that exists or that an earlier delta
    of the group adds (that is an UPDATE: `ops` does it)."""
    found = [*rows, [], []]
    asked = {(p.client_id, item[0]) for p in pushes for item in p.items}
    seen = {pair: r["seq"] for r in found[0] if (pair := (str(r["client_id"]), str(r["idem_key"]))) in asked}
    existing = {str(r["lesson_id"]) for r in found[1]}
    known, keys_now = set(existing), set(seen)
    for push in pushes:
        for key, op, lesson_id, _, _ in push.items:
            if (push.client_id, key) in keys_now:
                continue
            keys_now.add((push.client_id, key))
            if op == "ADD":
                if lesson_id in known:
                    return None
                known.add(lesson_id)
    counts = {(str(r["client_id"]), str(r["lesson_id"])): (int(r["helpful"]), int(r["harmful"])) for r in found[2]}
    spent = {(str(r["holder"]), int(r["day"]), str(r["lesson_id"])): (int(r["helpful"]), int(r["harmful"]))
             for r in found[3]}
    return Plan(seen, existing, counts, spent)


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
        tx.insert_rows("lessons", _LESSONS, self.lessons)
        tx.insert_rows("lesson_versions", _VERSIONS, self.versions)
        tx.insert_rows("deltas", _LOG, self.log)
        # One upsert statement may not touch a row twice: a lesson marked twice in one push is one row,
        # its budget the sum of the grants, its counts the last (absolute) ones.
        budget: dict[tuple[Any, ...], list[Any]] = {}
        for row in self.budget:
            found = budget.setdefault(row[:4], [*row[:4], 0, 0])
            found[4] += row[4]
            found[5] += row[5]
        tx.insert_rows("mark_budget", _BUDGET, [tuple(r) for r in budget.values()],
                       " ON CONFLICT (project_id, lesson_id, holder, day) DO UPDATE SET helpful = mark_budget.helpful "
                       "+ excluded.helpful, harmful = mark_budget.harmful + excluded.harmful")
        counters = {row[:3]: row for row in self.counters}
        tx.insert_rows("counters", _COUNTERS, list(counters.values()),
                       " ON CONFLICT (project_id, lesson_id, client_id) DO UPDATE SET helpful = excluded.helpful, "
                       "harmful = excluded.harmful, updated_at = excluded.updated_at")
        tx.insert_rows("delta_keys", _KEYS, self.keys)


# Each table's columns as the rows below hold them (`Tx.insert_rows`).
_LESSONS = ("project_id", "lesson_id", "section", "content",
            "domains", "status", "origin_client", "version",
            "concerns", "created_at", "updated_at")
_VERSIONS = ("project_id", "lesson_id", "version", "content",
             "section", "domains", "client_id", "seq",
             "created_at")
_LOG = ("project_id", "seq", "client_id", "idem_key", "op",
        "lesson_id", "body", "created_at")
_BUDGET = ("project_id", "lesson_id", "holder", "day",
           "helpful", "harmful")
_COUNTERS = ("project_id", "lesson_id", "client_id", "helpful",
             "harmful", "updated_at")
_KEYS = ("project_id", "client_id", "idem_key", "seq",
         "status", "created_at")


def apply(tx: Tx, project_id: int, pushes: Sequence[Push], found: Plan,
          last_seq: int) -> tuple[list[list[DeltaResult]], int]:
    """The pushes `plan` accepted, applied in their order (module contract), written in one round trip
    with the COMMIT; returns each push's results and the new last_seq."""
    seen, existing = dict(found.seen), set(found.existing)
    counts, spent = dict(found.counts), dict(found.spent)
    out: list[list[DeltaResult]] = []
    w = _Writes()
    for push in pushes:
        client_id, now, rules = push.client_id, push.now, push.rules
        holder, day = _holder(push), int(now // 86400)
        results: list[DeltaResult] = []
        for key, op, lesson_id, body, status in push.items:
            if (client_id, key) in seen:
                results.append({"status": "duplicate", "seq": seen[(client_id, key)], "reason": None})
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
            seen[(client_id, key)] = result["seq"]
            w.keys.append((project_id, client_id, key, result["seq"], result["status"], now))
            results.append(result)
        out.append(results)
    with tx.pipeline(commit=True):  # every write and the commit in one round trip: the lock is held meanwhile
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
                      "quarantined" if held else "active", client_id, 1, concerns, now, now))
    seq = None if held else last_seq + 1
    if seq is not None:
        w.log.append((project_id, seq, client_id, key, "ADD", lesson_id, json.dumps(fields), now))
    w.versions.append((project_id, lesson_id, 1, fields["content"], fields["section"], json.dumps(domains),
                       client_id, seq, now))
    return {"status": "quarantined" if held else "applied", "seq": seq, "reason": None}


def _tag(w: _Writes, project_id: int, client_id: str, key: str, lesson_id: str, body: JSONObject,
         counts: dict[tuple[str, str], tuple[int, int]], spent: dict[tuple[str, int, str], tuple[int, int]],
         holder: str, day: int, last_seq: int, now: float, rules: ops.Rules) -> DeltaResult:
    """`ops._tag` from the counts and budgets read once for the push (updated as it goes)."""
    asked = (ops.count(body.get("helpful")), ops.count(body.get("harmful")))
    old = counts.get((client_id, lesson_id), (0, 0))
    kept = (max(old[0], asked[0]), max(old[1], asked[1]))
    if rules.marks_per_day is not None and kept != old:
        used = spent.get((holder, day, lesson_id), (0, 0))
        granted = (ops.grant(kept[0], old[0], used[0], rules.marks_per_day),
                   ops.grant(kept[1], old[1], used[1], rules.marks_per_day))
        if any(granted):
            w.budget.append((project_id, lesson_id, holder, day, granted[0], granted[1]))
            spent[(holder, day, lesson_id)] = (used[0] + granted[0], used[1] + granted[1])
        kept = (old[0] + granted[0], old[1] + granted[1])
    counts[(client_id, lesson_id)] = kept
    w.counters.append((project_id, lesson_id, client_id, kept[0], kept[1], now))
    seq = last_seq + 1
    w.log.append((project_id, seq, client_id, key, "TAG", lesson_id,
                  json.dumps({"helpful": kept[0], "harmful": kept[1]}), now))
    return {"status": "applied", "seq": seq, "reason": None}


class Alone(TeamDBError):
    """A group of pushes that cannot go together (`together`): roll back, and apply each alone. A
    TeamDBError like every refusal of this storage (`core/errors`), caught by `TeamDB.apply_pushes`."""


def together(tx: Tx, project_id: int, pushes: Sequence[Push]) -> tuple[list[list[DeltaResult]], int]:
    """A group of `batchable` pushes in this ONE transaction, in their order, as if each had been
    applied alone in turn: the lock, every client id's binding and the group's reads in one round
    trip, the writes and the COMMIT in another, whatever the group's size. Alone (raise it out of
    the transaction: it rolls back) when a client id is not yet bound to its token, or `plan`
    refuses the group."""
    binds = [(p.client_id, p.rules.token_id, p.now) for p in pushes if p.rules.token_id is not None]
    first = ops.lock_and_bind(tx, project_id, binds)
    rows = tx.all_many(first + reads(tx, project_id, pushes))
    last = ops.locked_seq(project_id, rows[0])
    owners = ops.owners(rows[len(first) - 1]) if binds else {}
    if any(owners.get(client_id) != token_id for client_id, token_id, _ in binds):
        raise Alone
    found = plan(pushes, rows[len(first):])
    if found is None:
        raise Alone
    return apply(tx, project_id, pushes, found, last)
