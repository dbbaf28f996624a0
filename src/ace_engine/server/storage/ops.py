"""What each pushed delta does to the team state, inside the transaction `TeamDB` opened.

Contract: `apply(tx, …)` runs one delta against `lessons` / `lesson_versions` / `counters` and,
when the change is public, logs it in `deltas` with the project's next `seq`; it returns
`{"status": "applied"|"quarantined"|"rejected", "seq": int|None, "reason": str|None}`. The caller
holds the project's row lock (`lock_project`), has checked the idempotency key, redacted the body
and run the safety policy on the content the delta carries (`held=True`: the policy flagged it).
`Rules` carries the rest of the caller's policy into the transaction: `screen` (the concerns of
content a delta would publish without carrying it, e.g. a section-only UPDATE), the pushing
`token` (whose marks are budgeted together) and `marks_per_day`. `decide` is the reviewer's
answer, bound to the `content_hash` the reviewer saw. The rules (docs/team-server.md, "Protocol"):

- ADD of a new id: the lesson at version 1, logged as ADD. An ADD of a known id is an UPDATE.
- UPDATE: the given fields replace the current ones at version + 1; every version is kept in
  `lesson_versions`, so a concurrent edit (`base_version` older than the current version) keeps
  both and the later one is current (the log says `"concurrent": true`). An archived lesson stays
  archived. An UPDATE that keeps the content publishes that content again: it is screened
  (`Rules.screen`), and content that was never published (held, then removed or rejected) is
  held again — a held lesson's content reaches the log only through an approval.
- Held content (`held`, or any change to a lesson in review) is not logged: the lesson waits in
  the review queue (`quarantined`) with its `concerns`; for a lesson the team had,
  `held_status` / `held_version` remember what it had, and a rejection restores it.
- TAG: the client's absolute counts; the server keeps the max per (lesson, client), and accepts
  at most `marks_per_day` more helpful (and harmful) marks per lesson, token and UTC day.
- MERGE: `other_id` archived into `lesson_id`, with optional new content (held like an UPDATE's).
- QUARANTINE: the lesson goes to the review queue, logged so other clients hold it too. Only the
  server writes `concerns`: the client's reason is kept as `client_note`. REMOVE: archived, logged.
- Any op but ADD on an id the server does not have: rejected, "unknown lesson".

Cost: a handful of indexed statements per delta; `content_hash` is one SHA-256.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, cast

from ...playbook.mark_budget import MARKS_PER_DAY, TEAM_MARKS_PER_DAY, grant
from .dialect import NotFound, Row, TeamDBError, Tx
from .records import Decision, DeltaResult, JSONObject, LessonFields, SQLParam, TeamLesson

__all__ = ["MARKS_PER_DAY", "OPS", "TEAM_MARKS_PER_DAY", "ClientTaken", "Rules", "Stale", "apply", "bind_client",
           "content_hash", "count", "decide", "grant", "lock_and_bind", "lock_project",
           "locked_seq", "owners"]

OPS = ("ADD", "UPDATE", "TAG", "MERGE", "QUARANTINE", "REMOVE")
IN_REVIEW = ("quarantined", "rejected")
NEVER_APPROVED = "its content was held for review and never approved"
CLIENT_HELD = "a client quarantined it (see the client's note)"
Result = DeltaResult


class ClientTaken(TeamDBError):
    """The client id pushes under another live token in this project."""


class Stale(TeamDBError):
    """The lesson in review changed since the reviewer saw it (its content hash differs)."""


@dataclass(frozen=True)
class Rules:
    """The caller's policy for what a delta's body alone does not show (module contract)."""

    screen: Callable[[str], list[str]] | None = None
    token_id: int | None = None
    marks_per_day: int | None = None


NO_RULES = Rules()


def content_hash(content: str, section: str, domains: list[str]) -> str:
    """The SHA-256 hex of what a lesson publishes: the review queue shows it, an approval names it."""
    text = json.dumps([content, section, [str(d) for d in domains]], ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


LOCK_SQL = "UPDATE projects SET last_seq = last_seq WHERE id = ? RETURNING last_seq"


def lock_project(tx: Tx, project_id: int) -> int:
    """Take the project's row lock (every writer of a project queues here, so reading then writing
    is race-free and the seq stays gap-free); returns its last_seq. NotFound if there is none."""
    return locked_seq(project_id, [{"last_seq": v} for v in [tx.value(LOCK_SQL, (project_id,))] if v is not None])


def locked_seq(project_id: int, rows: Sequence[Row]) -> int:
    """The last_seq `LOCK_SQL` returned (its rows); NotFound if the project is not there."""
    if not rows:
        raise NotFound(f"no team project with id {project_id}; create it first (ensure_project)")
    return int(rows[0]["last_seq"])


def lock_and_bind(tx: Tx, project_id: int,
                  binds: Sequence[tuple[str, int, float]]) -> list[tuple[str, Sequence[SQLParam]]]:
    """The first statements of a push (or of a group of pushes), to send in one round trip with
    their reads (`Tx.all_many`): the project's lock (`LOCK_SQL`), then for each `(client_id,
    token_id, now)` the client id bound to its token if it has no owner yet (one multi-row
    `ON CONFLICT DO NOTHING`), and the owners read back — `owners(…)` on those rows; a client id
    another token owns still needs `bind_client` (take it over, or ClientTaken)."""
    out: list[tuple[str, Sequence[SQLParam]]] = [(LOCK_SQL, (project_id,))]
    if binds:
        first: dict[str, tuple[Any, ...]] = {}  # one row per client id (the first push's token)
        for client_id, token_id, now in binds:
            first.setdefault(client_id, (project_id, client_id, token_id, now))
        rows = list(first.values())
        among, args = tx.among(sorted(first))
        out += [("INSERT INTO client_tokens(project_id, client_id, token_id, created_at) VALUES "
                 f"{', '.join(['(?, ?, ?, ?)'] * len(rows))} ON CONFLICT (project_id, client_id) DO NOTHING",
                 [v for row in rows for v in row]),
                (f"SELECT client_id, token_id FROM client_tokens WHERE project_id = ? AND client_id {among}",
                 (project_id, *args))]
    return out


def owners(rows: Sequence[Row]) -> dict[str, int]:
    """{client id: owning token} as `lock_and_bind` read them back."""
    return {str(r["client_id"]): int(r["token_id"]) for r in rows}


def bind_client(tx: Tx, project_id: int, client_id: str, token_id: int, now: float) -> None:
    """Bind `client_id` to `token_id` in the project (module contract); ClientTaken if another owns it."""
    row = tx.one("SELECT c.token_id, t.created_at, t.revoked_at, t.expires_at FROM client_tokens c "
                 "LEFT JOIN tokens t ON t.id = c.token_id WHERE c.project_id = ? AND c.client_id = ?",
                 (project_id, client_id))
    if row is None:
        tx.execute("INSERT INTO client_tokens(project_id, client_id, token_id, created_at) VALUES (?, ?, ?, ?)",
                   (project_id, client_id, token_id, now))
        return
    if int(row["token_id"]) == token_id:
        return
    owner_gone = row["created_at"] is None or row["revoked_at"] is not None or (
        row["expires_at"] is not None and float(row["expires_at"]) <= now)
    mine = tx.value("SELECT created_at FROM tokens WHERE id = ?", (token_id,))
    if owner_gone and mine is not None and (row["created_at"] is None or float(mine) >= float(row["created_at"])):
        tx.execute("UPDATE client_tokens SET token_id = ?, created_at = ? WHERE project_id = ? AND client_id = ?",
                   (token_id, now, project_id, client_id))
        return
    raise ClientTaken(f"client id {client_id} pushes with another token in this project; each machine pushes "
                      f"with its own client id and token")


def _log(tx: Tx, project_id: int, client_id: str, key: str | None, op: str, lesson_id: str,
         body: JSONObject | LessonFields, now: float) -> int:
    seq = int(tx.value("UPDATE projects SET last_seq = last_seq + 1 WHERE id = ? RETURNING last_seq", (project_id,)))
    tx.execute("INSERT INTO deltas(project_id, seq, client_id, idem_key, op, lesson_id, body, created_at) "
               "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
               (project_id, seq, client_id, key or f"review:{seq}", op, lesson_id, json.dumps(body), now))
    return seq


def _lesson(tx: Tx, project_id: int, lesson_id: str) -> TeamLesson | None:
    row = tx.one("SELECT lesson_id, section, content, domains, status, version, concerns, held_status, "
                 "held_version, client_note FROM lessons WHERE project_id = ? AND lesson_id = ?",
                 (project_id, lesson_id))
    if row is not None:
        row["domains"] = tx.json(row["domains"])
        row["concerns"] = tx.json(row["concerns"])
    return cast("TeamLesson | None", row)


def _version(tx: Tx, project_id: int, lesson_id: str, fields: LessonFields, client_id: str,
             seq: int | None, now: float) -> None:
    tx.execute("INSERT INTO lesson_versions(project_id, lesson_id, version, content, section, domains, client_id, "
               "seq, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
               (project_id, lesson_id, fields["version"], fields["content"], fields["section"],
                json.dumps(fields["domains"]), client_id, seq, now))


def _result(status: str, seq: int | None = None, reason: str | None = None) -> Result:
    return {"status": status, "seq": seq, "reason": reason}


def _concerns(body: JSONObject) -> list[str]:
    return [str(c) for c in body.get("concerns") or []]


def apply(tx: Tx, project_id: int, client_id: str, key: str, op: str, lesson_id: str,
          body: JSONObject, held: bool, now: float, rules: Rules = NO_RULES) -> Result:
    """One delta (see the module contract); the caller records the key."""
    lesson = _lesson(tx, project_id, lesson_id)
    if op == "ADD" and lesson is None:
        return _add(tx, project_id, client_id, key, lesson_id, body, held, now)
    if lesson is None:
        return _result("rejected", reason="unknown lesson")
    if op in ("ADD", "UPDATE"):
        return _update(tx, project_id, client_id, key, lesson, body, held, now, rules)
    if op == "TAG":
        return _tag(tx, project_id, client_id, key, lesson_id, body, now, rules)
    if op == "MERGE":
        return _merge(tx, project_id, client_id, key, lesson, body, held, now)
    reason = str(body["reason"]) if body.get("reason") else None
    logged: JSONObject = {"reason": reason} if reason else {}
    if op == "QUARANTINE":
        # Review reasons are the server's: a client's words are its note, shown as such, and never
        # replace the concerns of a lesson already in review.
        concerns = lesson["concerns"] if lesson["status"] in IN_REVIEW and lesson["concerns"] else [CLIENT_HELD]
        if lesson["status"] in IN_REVIEW:
            tx.execute("UPDATE lessons SET status = 'quarantined', concerns = ?, client_note = ?, updated_at = ? "
                       "WHERE project_id = ? AND lesson_id = ?",
                       (json.dumps(concerns), reason, now, project_id, lesson_id))
        else:
            tx.execute("UPDATE lessons SET status = 'quarantined', concerns = ?, client_note = ?, held_status = NULL, "
                       "held_version = NULL, updated_at = ? WHERE project_id = ? AND lesson_id = ?",
                       (json.dumps(concerns), reason, now, project_id, lesson_id))
    else:  # REMOVE
        _archive(tx, project_id, lesson_id, now)
    return _result("applied", _log(tx, project_id, client_id, key, op, lesson_id, logged, now))


def _add(tx: Tx, project_id: int, client_id: str, key: str, lesson_id: str, body: JSONObject,
         held: bool, now: float) -> Result:
    if not body.get("content") or not body.get("section"):
        return _result("rejected", reason="an ADD needs content and section")
    fields: LessonFields = {"content": str(body["content"]), "section": str(body["section"]),
              "domains": [str(d) for d in body.get("domains") or []], "version": 1}
    tx.execute("INSERT INTO lessons(project_id, lesson_id, section, content, domains, status, origin_client, version, "
               "concerns, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, 1, ?, ?, ?)",
               (project_id, lesson_id, fields["section"], fields["content"], json.dumps(fields["domains"]),
                "quarantined" if held else "active", client_id, json.dumps(_concerns(body)) if held else None,
                now, now))
    seq = None if held else _log(tx, project_id, client_id, key, "ADD", lesson_id, fields, now)
    _version(tx, project_id, lesson_id, fields, client_id, seq, now)
    return _result("quarantined" if held else "applied", seq)


def _new_fields(lesson: TeamLesson, body: JSONObject) -> LessonFields:
    return {"content": str(body.get("content") or lesson["content"]),
            "section": str(body.get("section") or lesson["section"]),
            "domains": [str(d) for d in body["domains"]] if body.get("domains") is not None else lesson["domains"],
            "version": int(lesson["version"]) + 1}


def _hold(tx: Tx, project_id: int, client_id: str, lesson: TeamLesson, fields: LessonFields,
          concerns: list[str] | None, now: float) -> Result:
    """New content that waits for a reviewer: the lesson goes (or stays) in the review queue.
    `concerns`: why (the policy's), or None to keep those of the lesson already in review."""
    if lesson["status"] in IN_REVIEW:
        was, was_version = lesson["held_status"], lesson["held_version"]
    else:  # the team has it: remember what it had, for a rejection to restore
        was, was_version = lesson["status"], lesson["version"]
    if concerns is None:
        concerns = lesson["concerns"] or []
    tx.execute("UPDATE lessons SET content = ?, section = ?, domains = ?, version = ?, status = 'quarantined', "
               "concerns = ?, held_status = ?, held_version = ?, updated_at = ? WHERE project_id = ? AND lesson_id = ?",
               (fields["content"], fields["section"], json.dumps(fields["domains"]), fields["version"],
                json.dumps(concerns), was, was_version, now, project_id, lesson["lesson_id"]))
    _version(tx, project_id, lesson["lesson_id"], fields, client_id, None, now)
    return _result("quarantined", reason="held for review: " + "; ".join(concerns) if concerns else None)


def _published(tx: Tx, project_id: int, lesson: TeamLesson) -> bool:
    """Was the lesson's current wording ever logged for pull (its version has a seq)?"""
    return tx.value("SELECT 1 FROM lesson_versions WHERE project_id = ? AND lesson_id = ? AND version = ? "
                    "AND seq IS NOT NULL LIMIT 1", (project_id, lesson["lesson_id"], lesson["version"])) is not None


def _kept_content_concerns(tx: Tx, project_id: int, lesson: TeamLesson, rules: Rules) -> list[str]:
    """Why the lesson's current content may not be published again by a delta that keeps it."""
    concerns = rules.screen(str(lesson["content"])) if rules.screen is not None else []
    if not concerns and not _published(tx, project_id, lesson):
        concerns = list(lesson["concerns"] or []) or [NEVER_APPROVED]
    return concerns


def _publish(tx: Tx, project_id: int, lesson_id: str, fields: LessonFields, now: float) -> None:
    tx.execute("UPDATE lessons SET content = ?, section = ?, domains = ?, version = ?, updated_at = ? "
               "WHERE project_id = ? AND lesson_id = ?",
               (fields["content"], fields["section"], json.dumps(fields["domains"]), fields["version"], now,
                project_id, lesson_id))


def _update(tx: Tx, project_id: int, client_id: str, key: str, lesson: TeamLesson, body: JSONObject,
            held: bool, now: float, rules: Rules = NO_RULES) -> Result:
    fields = _new_fields(lesson, body)
    if held:
        return _hold(tx, project_id, client_id, lesson, fields, _concerns(body), now)
    if lesson["status"] in IN_REVIEW:
        return _hold(tx, project_id, client_id, lesson, fields, None, now)
    if not body.get("content"):  # section / domains only: the kept content is published again
        concerns = _kept_content_concerns(tx, project_id, lesson, rules)
        if concerns:
            return _hold(tx, project_id, client_id, lesson, fields, concerns, now)
    _publish(tx, project_id, lesson["lesson_id"], fields, now)
    logged: JSONObject = dict(fields)
    base = body.get("base_version")
    if isinstance(base, int) and not isinstance(base, bool):
        logged["base_version"] = base
        if base < lesson["version"]:
            logged["concurrent"] = True
    seq = _log(tx, project_id, client_id, key, "UPDATE", lesson["lesson_id"], logged, now)
    _version(tx, project_id, lesson["lesson_id"], fields, client_id, seq, now)
    return _result("applied", seq)


def count(value: object) -> int:
    """A TAG's count as the server keeps it: a whole number ≥ 0 (anything else is 0)."""
    if not isinstance(value, (int, float, str)):  # JSON: null, a list, an object
        return 0
    try:
        return max(0, int(value or 0))
    except (TypeError, ValueError):
        return 0


def _day(now: float) -> int:
    return int(now // 86400)


def _bounded(tx: Tx, project_id: int, lesson_id: str, holder: str, old: tuple[int, int], asked: tuple[int, int],
             limit: int, now: float) -> tuple[int, int]:
    """The counts to keep: `asked`, less whatever exceeds the holder's budget for the lesson today."""
    day = _day(now)
    used = tx.one("SELECT helpful, harmful FROM mark_budget WHERE project_id = ? AND lesson_id = ? AND holder = ? "
                  "AND day = ?", (project_id, lesson_id, holder, day))
    spent = (int(used["helpful"]), int(used["harmful"])) if used else (0, 0)
    granted = tuple(grant(want, have, s, limit) for want, have, s in zip(asked, old, spent, strict=True))
    if any(granted):
        tx.execute("INSERT INTO mark_budget(project_id, lesson_id, holder, day, helpful, harmful) "
                   "VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (project_id, lesson_id, holder, day) DO UPDATE SET "
                   "helpful = mark_budget.helpful + excluded.helpful, harmful = mark_budget.harmful + excluded.harmful",
                   (project_id, lesson_id, holder, day, granted[0], granted[1]))
    return old[0] + granted[0], old[1] + granted[1]


def _tag(tx: Tx, project_id: int, client_id: str, key: str, lesson_id: str, body: JSONObject,
         now: float, rules: Rules = NO_RULES) -> Result:
    # Absolute counts, max kept: a retry, a replay or an older value never lowers or double-counts.
    asked = (count(body.get("helpful")), count(body.get("harmful")))
    row = tx.one("SELECT helpful, harmful FROM counters WHERE project_id = ? AND lesson_id = ? AND client_id = ?",
                 (project_id, lesson_id, client_id))
    old = (int(row["helpful"]), int(row["harmful"])) if row else (0, 0)
    kept = (max(old[0], asked[0]), max(old[1], asked[1]))
    if rules.marks_per_day is not None and kept != old:
        # One token's marks grow by a bounded amount a day, whatever client ids it pushes as.
        holder = f"t{rules.token_id}" if rules.token_id is not None else f"c{client_id}"
        kept = _bounded(tx, project_id, lesson_id, holder, old, kept, rules.marks_per_day, now)
    tx.execute("INSERT INTO counters(project_id, lesson_id, client_id, helpful, harmful, updated_at) "
               "VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (project_id, lesson_id, client_id) DO UPDATE SET "
               "helpful = excluded.helpful, harmful = excluded.harmful, updated_at = excluded.updated_at",
               (project_id, lesson_id, client_id, kept[0], kept[1], now))
    logged = {"helpful": kept[0], "harmful": kept[1]}
    return _result("applied", _log(tx, project_id, client_id, key, "TAG", lesson_id, logged, now))


def _archive(tx: Tx, project_id: int, lesson_id: str, now: float) -> None:
    tx.execute("UPDATE lessons SET status = 'archived', held_status = NULL, held_version = NULL, updated_at = ? "
               "WHERE project_id = ? AND lesson_id = ?", (now, project_id, lesson_id))


def _merge(tx: Tx, project_id: int, client_id: str, key: str, lesson: TeamLesson, body: JSONObject,
           held: bool, now: float) -> Result:
    other_id = str(body.get("other_id") or "")
    if not other_id or other_id == lesson["lesson_id"]:
        return _result("rejected", reason="a MERGE needs other_id, another lesson")
    if _lesson(tx, project_id, other_id) is None:
        return _result("rejected", reason="unknown lesson")
    _archive(tx, project_id, other_id, now)
    logged: JSONObject = {"other_id": other_id}
    status, fields = "applied", None
    if body.get("content"):
        fields = _new_fields(lesson, {"content": body["content"]})
        if held or lesson["status"] in IN_REVIEW:  # the merge goes on; its content waits for review
            status = _hold(tx, project_id, client_id, lesson, fields, _concerns(body) if held else None, now)["status"]
            fields = None
        else:
            _publish(tx, project_id, lesson["lesson_id"], fields, now)
            logged.update(fields)
    seq = _log(tx, project_id, client_id, key, "MERGE", lesson["lesson_id"], logged, now)
    if fields is not None:
        _version(tx, project_id, lesson["lesson_id"], fields, client_id, seq, now)
    return _result(status, seq)


def decide(tx: Tx, project_id: int, lesson_id: str, approve: bool, client_id: str, now: float,
           seen_hash: str | None = None) -> Decision:
    """The reviewer's answer for a lesson in the review queue (quarantined, or rejected before):
    approve makes it active and logs an ADD of its current content; reject restores what the team
    had before a held update (and drops the held versions), or else marks it rejected; nothing logged.
    `seen_hash`: the `content_hash` the reviewer was shown; Stale when the lesson has changed since
    (a pusher's edit between the review page and the click is never what gets approved).
    Returns {"lesson_id", "status", "seq"}; NotFound when the lesson is not in review."""
    lesson = _lesson(tx, project_id, lesson_id)
    if lesson is None or lesson["status"] not in IN_REVIEW:
        raise NotFound(f"lesson {lesson_id} is not in the review queue of project {project_id}")
    if seen_hash is not None and seen_hash != content_hash(lesson["content"], lesson["section"], lesson["domains"]):
        raise Stale(f"lesson {lesson_id} changed since it was shown for review; reload the review queue and "
                    f"decide on what it says now")
    if approve:
        tx.execute("UPDATE lessons SET status = 'active', concerns = NULL, client_note = NULL, held_status = NULL, "
                   "held_version = NULL, updated_at = ? WHERE project_id = ? AND lesson_id = ?",
                   (now, project_id, lesson_id))
        logged: JSONObject = {"content": lesson["content"], "section": lesson["section"], "domains": lesson["domains"],
                  "version": lesson["version"]}
        seq = _log(tx, project_id, client_id, None, "ADD", lesson_id, logged, now)
        tx.execute("UPDATE lesson_versions SET seq = ? WHERE project_id = ? AND lesson_id = ? AND version = ? "
                   "AND seq IS NULL", (seq, project_id, lesson_id, lesson["version"]))
        return {"lesson_id": lesson_id, "status": "active", "seq": seq}
    had = None
    if lesson["held_status"] is not None:
        had = tx.one("SELECT content, section, domains FROM lesson_versions WHERE project_id = ? AND lesson_id = ? "
                     "AND version = ? ORDER BY id DESC LIMIT 1", (project_id, lesson_id, lesson["held_version"]))
    if had is None:
        tx.execute("UPDATE lessons SET status = 'rejected', client_note = NULL, updated_at = ? "
                   "WHERE project_id = ? AND lesson_id = ?", (now, project_id, lesson_id))
        return {"lesson_id": lesson_id, "status": "rejected", "seq": None}
    tx.execute("UPDATE lessons SET content = ?, section = ?, domains = ?, version = ?, status = ?, concerns = NULL, "
               "client_note = NULL, held_status = NULL, held_version = NULL, updated_at = ? "
               "WHERE project_id = ? AND lesson_id = ?",
               (had["content"], had["section"], json.dumps(tx.json(had["domains"])), lesson["held_version"],
                lesson["held_status"], now, project_id, lesson_id))
    tx.execute("DELETE FROM lesson_versions WHERE project_id = ? AND lesson_id = ? AND version > ? AND seq IS NULL",
               (project_id, lesson_id, lesson["held_version"]))
    return {"lesson_id": lesson_id, "status": str(lesson["held_status"]), "seq": None}
