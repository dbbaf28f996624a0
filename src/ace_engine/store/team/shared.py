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
- `open_session`, `session`, `end_session`: a dashboard session by the SHA-256 of its id (the
  database never holds an id a browser could present). `session` answers only a live session whose
  token is still valid (not revoked, not expired): one indexed join; a dead one is deleted.
  Opening a session deletes expired ones first (an indexed range delete).

Cost: a take is one upsert on a primary key; a session lookup one join on two primary keys.
"""

from __future__ import annotations

import itertools
from typing import TypedDict

from .dialect import Dialect

__all__ = ["PRUNE_EVERY", "SessionRow", "end_session", "open_session", "prune_rates", "session", "take_rate"]

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


def _take_sql(d: Dialect) -> str:
    least, greatest = d.least, d.greatest
    refill = f"{least}(?, rate_buckets.tokens + {greatest}(0.0, ? - rate_buckets.at) * ?)"
    allowed = f"CASE WHEN {refill} >= 1.0 THEN 1 ELSE 0 END"
    return ("INSERT INTO rate_buckets(bucket, tokens, at, ok) VALUES (?, ?, ?, 1) "
            f"ON CONFLICT (bucket) DO UPDATE SET ok = {allowed}, tokens = {refill} - {allowed}, "
            f"at = {greatest}(rate_buckets.at, ?) RETURNING tokens, ok")


def take_rate(d: Dialect, bucket: str, rate: float, burst: float, now: float) -> float:
    """0.0 if a request of `bucket` may go on (one token taken), else the seconds to wait."""
    fill = (float(burst), float(now), float(rate))
    params = (bucket, float(burst) - 1.0, float(now), *fill, *fill, *fill, float(now))
    with d.single() as tx:  # one statement: its own transaction, no BEGIN / COMMIT round trips
        row = tx.one(_take_sql(d), params)
    if next(_takes) % PRUNE_EVERY == 0:
        prune_rates(d, rate, burst, now)
    assert row is not None  # an upsert with RETURNING always returns its row
    if int(row["ok"]):
        return 0.0
    return max(0.0, (1.0 - float(row["tokens"])) / float(rate))


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
