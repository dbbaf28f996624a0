"""The state server replicas share: dashboard sessions and rate-limit buckets, in the team database.

Contract: each function takes the `Dialect` of a `TeamDB` (whose methods of the same name delegate
here) and runs one transaction, so any number of server processes on one database see the same
sessions and the same buckets (docs/team-server.md, "Running several replicas").

- `take_rate(d, bucket, rate, burst, now)`: one token-bucket take for `bucket`, in ONE upsert
  (`INSERT … ON CONFLICT DO UPDATE … RETURNING`): the row lock serialises concurrent takes from
  every replica, so a token's burst is spent once whatever the replica. Returns 0.0 when allowed,
  else the seconds until a take would be. A bucket that has refilled is the same as none: every
  `PRUNE_EVERY`-th take of a process deletes those (`prune_rates`). Replicas' clocks may differ a
  little: a bucket's `at` never goes back, and a refill is never negative.
  A take commits without waiting for its WAL flush on PostgreSQL (`Dialect.relaxed`, a condition of
  the statement itself): every request takes from its token's one bucket, and waiting for a disk
  flush (~5 ms here) while holding that row's lock serialised all of a token's requests on the
  disk. What a database crash can lose is the last fraction of a second of takes (a token gets
  those requests back), never a delta: a later synchronous commit flushes the WAL before it.
- `token_take(d, select_sql, params, rate, burst, now)`: the token row `select_sql` reads (its
  columns `id`, `revoked_at`, `expires_at` and any others) and, when that token is live at `now`,
  the take of its bucket `t<id>`, in ONE statement on PostgreSQL (a data-modifying CTE): a request
  is authenticated and rate-limited in one round trip. The row comes back with `r_wait` (seconds
  to wait, 0.0 when allowed; None when no take was made: no such token, or a dead one). SQLite
  runs the two as before (in process: nothing to save).
- `open_session`, `session`, `end_session`: a dashboard session by the SHA-256 of its id (the
  database never holds an id a browser could present). `session` answers only a live session whose
  token is still valid (not revoked, not expired): one indexed join; a dead one is deleted.
  Opening a session deletes expired ones first (an indexed range delete).

Cost: a take is one upsert on a primary key (with the token's read: one statement); a session
lookup one join on two primary keys.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from typing import Any, TypedDict

from .dialect import Dialect, Row

__all__ = ["PRUNE_EVERY", "SessionRow", "end_session", "open_session", "prune_rates", "session", "take_rate",
           "token_take"]

PRUNE_EVERY = 1000
_takes = itertools.count(1)


class SessionRow(TypedDict):
    """A live dashboard session and its token, as `session` finds it."""

    token_id: int
    label: str
    csrf: str
    created_at: float
    expires_at: float
    org_id: int
    project_id: int | None
    scope: str
    prefix: str


def _take_sql(d: Dialect, source: str = "WHERE") -> str:
    """The take's upsert; `source`: what its row is selected from, up to its WHERE (`token_take`)."""
    least, greatest = d.least, d.greatest
    refill = f"{least}(?, rate_buckets.tokens + {greatest}(0.0, ? - rate_buckets.at) * ?)"
    allowed = f"CASE WHEN {refill} >= 1.0 THEN 1 ELSE 0 END"
    return (f"INSERT INTO rate_buckets(bucket, tokens, at, ok) SELECT ?, ?, ?, 1 {source} {d.relaxed} "
            f"ON CONFLICT (bucket) DO UPDATE SET ok = {allowed}, tokens = {refill} - {allowed}, "
            f"at = {greatest}(rate_buckets.at, ?) RETURNING tokens, ok")


def _wait(tokens: Any, ok: Any, rate: float) -> float:
    return 0.0 if int(ok) else max(0.0, (1.0 - float(tokens)) / float(rate))


def _pruned(d: Dialect, rate: float, burst: float, now: float) -> None:
    if next(_takes) % PRUNE_EVERY == 0:
        prune_rates(d, rate, burst, now)


def take_rate(d: Dialect, bucket: str, rate: float, burst: float, now: float) -> float:
    """0.0 if a request of `bucket` may go on (one token taken), else the seconds to wait."""
    fill = (float(burst), float(now), float(rate))
    params = (bucket, float(burst) - 1.0, float(now), *fill, *fill, *fill, float(now))
    with d.single() as tx:  # one statement: its own transaction, no BEGIN / COMMIT round trips
        row = tx.one(_take_sql(d), params)
    _pruned(d, rate, burst, now)
    assert row is not None  # an upsert with RETURNING always returns its row
    return _wait(row["tokens"], row["ok"], rate)


def token_take(d: Dialect, select_sql: str, select_params: Sequence[Any], rate: float, burst: float,
               now: float) -> Row | None:
    """The token row `select_sql` finds, with `r_wait` (module docstring); None: no such token."""
    if d.name != "postgresql":  # no data-modifying CTE: the read, then the take (in process: no round trips)
        with d.read() as tx:
            row = tx.one(select_sql, select_params)
        if row is None:
            return None
        live = row["revoked_at"] is None and (row["expires_at"] is None or float(row["expires_at"]) > now)
        row["r_wait"] = take_rate(d, f"t{int(row['id'])}", rate, burst, now) if live else None
        return row
    fill = (float(burst), float(now), float(rate))
    # The take's row is drawn from the token, when it is live (the bucket name as `bucket_name` spells it).
    upsert = _take_sql(d, "FROM tok WHERE tok.revoked_at IS NULL AND (tok.expires_at IS NULL OR "
                          "tok.expires_at > ?) AND").replace("SELECT ?, ?, ?, 1", "SELECT 't' || tok.id, ?, ?, 1")
    sql = (f"WITH tok AS ({select_sql}), took AS ({upsert}) "
           "SELECT tok.*, took.tokens AS r_tokens, took.ok AS r_ok FROM tok LEFT JOIN took ON TRUE")
    params = (*select_params, float(burst) - 1.0, float(now), float(now), *fill, *fill, *fill, float(now))
    with d.single() as tx:  # one statement, its own transaction
        row = tx.one(sql, params)
    if row is None:
        return None
    tokens, ok = row.pop("r_tokens"), row.pop("r_ok")
    if ok is not None:
        _pruned(d, rate, burst, now)
    row["r_wait"] = None if ok is None else _wait(tokens, ok, rate)
    return row


def prune_rates(d: Dialect, rate: float, burst: float, now: float) -> int:
    """Delete the buckets that have refilled since (the same as no bucket); returns how many."""
    with d.single() as tx:
        return tx.execute("DELETE FROM rate_buckets WHERE at < ?", (now - float(burst) / float(rate),))


def open_session(d: Dialect, id_hash: str, token_id: int, label: str, csrf: str, now: float,
                 expires_at: float) -> None:
    with d.write() as tx:
        tx.execute("DELETE FROM ui_sessions WHERE expires_at <= ?", (now,))
        tx.execute("INSERT INTO ui_sessions(id_hash, token_id, label, csrf, created_at, expires_at) "
                   "VALUES (?, ?, ?, ?, ?, ?)", (id_hash, token_id, label, csrf, now, expires_at))


def session(d: Dialect, id_hash: str, now: float) -> SessionRow | None:
    """The live session of `id_hash` with its token's fields, or None (a dead one is deleted)."""
    with d.read() as tx:
        row = tx.one("SELECT s.token_id, s.label, s.csrf, s.created_at, s.expires_at, t.org_id, t.project_id, "
                     "t.scope, t.prefix, t.revoked_at, t.expires_at AS token_expires_at FROM ui_sessions s "
                     "LEFT JOIN tokens t ON t.id = s.token_id WHERE s.id_hash = ?", (id_hash,))
    if row is None:
        return None
    expired = row["token_expires_at"] is not None and float(row["token_expires_at"]) <= now
    if row["org_id"] is None or row["revoked_at"] is not None or expired or float(row["expires_at"]) <= now:
        end_session(d, id_hash)
        return None
    return {"token_id": int(row["token_id"]), "label": str(row["label"]), "csrf": str(row["csrf"]),
            "created_at": float(row["created_at"]), "expires_at": float(row["expires_at"]),
            "org_id": int(row["org_id"]), "project_id": None if row["project_id"] is None else int(row["project_id"]),
            "scope": str(row["scope"]), "prefix": str(row["prefix"] or "")}


def end_session(d: Dialect, id_hash: str) -> bool:
    with d.write() as tx:
        return tx.execute("DELETE FROM ui_sessions WHERE id_hash = ?", (id_hash,)) == 1
