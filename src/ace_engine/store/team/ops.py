"""What each pushed delta does to the team state, inside the transaction `TeamDB` opened.

Contract: `apply(tx, …)` runs one delta against `lessons` / `lesson_versions` / `counters` and,
when the change is public, logs it in `deltas` with the project's next `seq`; it returns
`{"status": "applied"|"quarantined"|"rejected", "seq": int|None, "reason": str|None}`. The caller
holds the project's row lock (`lock_project`), has checked the idempotency key, redacted the body
and run the safety policy (`held=True`: the policy flagged its content). `decide` is the
reviewer's answer. The rules (docs/team-server.md, "Protocol"):

- ADD of a new id: the lesson at version 1, logged as ADD. An ADD of a known id is an UPDATE.
- UPDATE: the given fields replace the current ones at version + 1; every version is kept in
  `lesson_versions`, so a concurrent edit (`base_version` older than the current version) keeps
  both and the later one is current (the log says `"concurrent": true`). An archived lesson stays
  archived.
- Held content (`held`, or any content change to a lesson already in review) is not logged: the
  lesson waits in the review queue (`quarantined`) with its `concerns`; for a lesson the team had,
  `held_status` / `held_version` remember what it had, and a rejection restores it.
- TAG: the client's absolute counts; the server keeps the max per (lesson, client).
- MERGE: `other_id` archived into `lesson_id`, with optional new content (held like an UPDATE's).
- QUARANTINE: the lesson goes to the review queue, logged so other clients hold it too;
  REMOVE: archived, logged.
- Any op but ADD on an id the server does not have: rejected, "unknown lesson".

Cost: a handful of indexed statements per delta.
"""

from __future__ import annotations

import json
from typing import Any

from .dialect import NotFound, Tx

__all__ = ["OPS", "apply", "decide", "lock_project"]

OPS = ("ADD", "UPDATE", "TAG", "MERGE", "QUARANTINE", "REMOVE")
IN_REVIEW = ("quarantined", "rejected")
Result = dict[str, Any]


def lock_project(tx: Tx, project_id: int) -> int:
    """Take the project's row lock (every writer of a project queues here, so reading then writing
    is race-free and the seq stays gap-free); returns its last_seq. NotFound if there is none."""
    last = tx.value("UPDATE projects SET last_seq = last_seq WHERE id = ? RETURNING last_seq", (project_id,))
    if last is None:
        raise NotFound(f"no team project with id {project_id}; create it first (ensure_project)")
    return int(last)


def _log(tx: Tx, project_id: int, client_id: str, key: str | None, op: str, lesson_id: str,
         body: dict[str, Any], now: float) -> int:
    seq = int(tx.value("UPDATE projects SET last_seq = last_seq + 1 WHERE id = ? RETURNING last_seq", (project_id,)))
    tx.execute("INSERT INTO deltas(project_id, seq, client_id, idem_key, op, lesson_id, body, created_at) "
               "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
               (project_id, seq, client_id, key or f"review:{seq}", op, lesson_id, json.dumps(body), now))
    return seq


def _lesson(tx: Tx, project_id: int, lesson_id: str) -> dict[str, Any] | None:
    row = tx.one("SELECT lesson_id, section, content, domains, status, version, concerns, held_status, "
                 "held_version FROM lessons WHERE project_id = ? AND lesson_id = ?", (project_id, lesson_id))
    if row is not None:
        row["domains"] = tx.json(row["domains"])
        row["concerns"] = tx.json(row["concerns"])
    return row


def _version(tx: Tx, project_id: int, lesson_id: str, fields: dict[str, Any], client_id: str,
             seq: int | None, now: float) -> None:
    tx.execute("INSERT INTO lesson_versions(project_id, lesson_id, version, content, section, domains, client_id, "
               "seq, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
               (project_id, lesson_id, fields["version"], fields["content"], fields["section"],
                json.dumps(fields["domains"]), client_id, seq, now))


def _result(status: str, seq: int | None = None, reason: str | None = None) -> Result:
    return {"status": status, "seq": seq, "reason": reason}


def _concerns(body: dict[str, Any]) -> list[str]:
    return [str(c) for c in body.get("concerns") or []]


def apply(tx: Tx, project_id: int, client_id: str, key: str, op: str, lesson_id: str,
          body: dict[str, Any], held: bool, now: float) -> Result:
    """One delta (see the module contract); the caller records the key."""
    lesson = _lesson(tx, project_id, lesson_id)
    if op == "ADD" and lesson is None:
        return _add(tx, project_id, client_id, key, lesson_id, body, held, now)
    if lesson is None:
        return _result("rejected", reason="unknown lesson")
    if op in ("ADD", "UPDATE"):
        return _update(tx, project_id, client_id, key, lesson, body, held, now)
    if op == "TAG":
        return _tag(tx, project_id, client_id, key, lesson_id, body, now)
    if op == "MERGE":
        return _merge(tx, project_id, client_id, key, lesson, body, held, now)
    reason = str(body["reason"]) if body.get("reason") else None
    logged: dict[str, Any] = {"reason": reason} if reason else {}
    if op == "QUARANTINE":
        concerns = [reason or f"quarantined by client {client_id}"]
        tx.execute("UPDATE lessons SET status = 'quarantined', concerns = ?, held_status = NULL, held_version = NULL, "
                   "updated_at = ? WHERE project_id = ? AND lesson_id = ?",
                   (json.dumps(concerns), now, project_id, lesson_id))
    else:  # REMOVE
        _archive(tx, project_id, lesson_id, now)
    return _result("applied", _log(tx, project_id, client_id, key, op, lesson_id, logged, now))


def _add(tx: Tx, project_id: int, client_id: str, key: str, lesson_id: str, body: dict[str, Any],
         held: bool, now: float) -> Result:
    if not body.get("content") or not body.get("section"):
        return _result("rejected", reason="an ADD needs content and section")
    fields = {"content": str(body["content"]), "section": str(body["section"]),
              "domains": [str(d) for d in body.get("domains") or []], "version": 1}
    tx.execute("INSERT INTO lessons(project_id, lesson_id, section, content, domains, status, origin_client, version, "
               "concerns, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, 1, ?, ?, ?)",
               (project_id, lesson_id, fields["section"], fields["content"], json.dumps(fields["domains"]),
                "quarantined" if held else "active", client_id, json.dumps(_concerns(body)) if held else None,
                now, now))
    seq = None if held else _log(tx, project_id, client_id, key, "ADD", lesson_id, fields, now)
    _version(tx, project_id, lesson_id, fields, client_id, seq, now)
    return _result("quarantined" if held else "applied", seq)


def _new_fields(lesson: dict[str, Any], body: dict[str, Any]) -> dict[str, Any]:
    return {"content": str(body.get("content") or lesson["content"]),
            "section": str(body.get("section") or lesson["section"]),
            "domains": [str(d) for d in body["domains"]] if body.get("domains") is not None else lesson["domains"],
            "version": int(lesson["version"]) + 1}


def _hold(tx: Tx, project_id: int, client_id: str, lesson: dict[str, Any], fields: dict[str, Any],
          body: dict[str, Any], held: bool, now: float) -> Result:
    """New content that waits for a reviewer: the lesson goes (or stays) in the review queue."""
    if lesson["status"] in IN_REVIEW:
        was, was_version = lesson["held_status"], lesson["held_version"]
    else:  # the team has it: remember what it had, for a rejection to restore
        was, was_version = lesson["status"], lesson["version"]
    concerns = _concerns(body) if held else (lesson["concerns"] or [])
    tx.execute("UPDATE lessons SET content = ?, section = ?, domains = ?, version = ?, status = 'quarantined', "
               "concerns = ?, held_status = ?, held_version = ?, updated_at = ? WHERE project_id = ? AND lesson_id = ?",
               (fields["content"], fields["section"], json.dumps(fields["domains"]), fields["version"],
                json.dumps(concerns), was, was_version, now, project_id, lesson["lesson_id"]))
    _version(tx, project_id, lesson["lesson_id"], fields, client_id, None, now)
    return _result("quarantined")


def _publish(tx: Tx, project_id: int, lesson_id: str, fields: dict[str, Any], now: float) -> None:
    tx.execute("UPDATE lessons SET content = ?, section = ?, domains = ?, version = ?, updated_at = ? "
               "WHERE project_id = ? AND lesson_id = ?",
               (fields["content"], fields["section"], json.dumps(fields["domains"]), fields["version"], now,
                project_id, lesson_id))


def _update(tx: Tx, project_id: int, client_id: str, key: str, lesson: dict[str, Any], body: dict[str, Any],
            held: bool, now: float) -> Result:
    fields = _new_fields(lesson, body)
    if held or lesson["status"] in IN_REVIEW:
        return _hold(tx, project_id, client_id, lesson, fields, body, held, now)
    _publish(tx, project_id, lesson["lesson_id"], fields, now)
    logged = dict(fields)
    base = body.get("base_version")
    if isinstance(base, int) and not isinstance(base, bool):
        logged["base_version"] = base
        if base < lesson["version"]:
            logged["concurrent"] = True
    seq = _log(tx, project_id, client_id, key, "UPDATE", lesson["lesson_id"], logged, now)
    _version(tx, project_id, lesson["lesson_id"], fields, client_id, seq, now)
    return _result("applied", seq)


def _count(value: Any) -> int:
    try:
        return max(0, int(value or 0))
    except (TypeError, ValueError):
        return 0


def _tag(tx: Tx, project_id: int, client_id: str, key: str, lesson_id: str, body: dict[str, Any],
         now: float) -> Result:
    # Absolute counts, max kept: a retry, a replay or an older value never lowers or double-counts.
    tx.execute("INSERT INTO counters(project_id, lesson_id, client_id, helpful, harmful, updated_at) "
               "VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (project_id, lesson_id, client_id) DO UPDATE SET "
               "helpful = CASE WHEN excluded.helpful > counters.helpful "
               "THEN excluded.helpful ELSE counters.helpful END, "
               "harmful = CASE WHEN excluded.harmful > counters.harmful "
               "THEN excluded.harmful ELSE counters.harmful END, "
               "updated_at = excluded.updated_at",
               (project_id, lesson_id, client_id, _count(body.get("helpful")), _count(body.get("harmful")), now))
    kept = tx.one("SELECT helpful, harmful FROM counters WHERE project_id = ? AND lesson_id = ? AND client_id = ?",
                  (project_id, lesson_id, client_id))
    assert kept is not None  # just written, in this transaction
    logged = {"helpful": int(kept["helpful"]), "harmful": int(kept["harmful"])}
    return _result("applied", _log(tx, project_id, client_id, key, "TAG", lesson_id, logged, now))


def _archive(tx: Tx, project_id: int, lesson_id: str, now: float) -> None:
    tx.execute("UPDATE lessons SET status = 'archived', held_status = NULL, held_version = NULL, updated_at = ? "
               "WHERE project_id = ? AND lesson_id = ?", (now, project_id, lesson_id))


def _merge(tx: Tx, project_id: int, client_id: str, key: str, lesson: dict[str, Any], body: dict[str, Any],
           held: bool, now: float) -> Result:
    other_id = str(body.get("other_id") or "")
    if not other_id or other_id == lesson["lesson_id"]:
        return _result("rejected", reason="a MERGE needs other_id, another lesson")
    if _lesson(tx, project_id, other_id) is None:
        return _result("rejected", reason="unknown lesson")
    _archive(tx, project_id, other_id, now)
    logged: dict[str, Any] = {"other_id": other_id}
    status, fields = "applied", None
    if body.get("content"):
        fields = _new_fields(lesson, {"content": body["content"]})
        if held or lesson["status"] in IN_REVIEW:  # the merge goes on; its content waits for review
            status = _hold(tx, project_id, client_id, lesson, fields, body, held, now)["status"]
            fields = None
        else:
            _publish(tx, project_id, lesson["lesson_id"], fields, now)
            logged.update(fields)
    seq = _log(tx, project_id, client_id, key, "MERGE", lesson["lesson_id"], logged, now)
    if fields is not None:
        _version(tx, project_id, lesson["lesson_id"], fields, client_id, seq, now)
    return _result(status, seq)


def decide(tx: Tx, project_id: int, lesson_id: str, approve: bool, client_id: str, now: float) -> Result:
    """The reviewer's answer for a lesson in the review queue (quarantined, or rejected before):
    approve makes it active and logs an ADD of its current content; reject restores what the team
    had before a held update (and drops the held versions), or else marks it rejected; nothing logged.
    Returns {"lesson_id", "status", "seq"}; NotFound when the lesson is not in review."""
    lesson = _lesson(tx, project_id, lesson_id)
    if lesson is None or lesson["status"] not in IN_REVIEW:
        raise NotFound(f"lesson {lesson_id} is not in the review queue of project {project_id}")
    if approve:
        tx.execute("UPDATE lessons SET status = 'active', concerns = NULL, held_status = NULL, held_version = NULL, "
                   "updated_at = ? WHERE project_id = ? AND lesson_id = ?", (now, project_id, lesson_id))
        logged = {"content": lesson["content"], "section": lesson["section"], "domains": lesson["domains"],
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
        tx.execute("UPDATE lessons SET status = 'rejected', updated_at = ? WHERE project_id = ? AND lesson_id = ?",
                   (now, project_id, lesson_id))
        return {"lesson_id": lesson_id, "status": "rejected", "seq": None}
    tx.execute("UPDATE lessons SET content = ?, section = ?, domains = ?, version = ?, status = ?, concerns = NULL, "
               "held_status = NULL, held_version = NULL, updated_at = ? WHERE project_id = ? AND lesson_id = ?",
               (had["content"], had["section"], json.dumps(tx.json(had["domains"])), lesson["held_version"],
                lesson["held_status"], now, project_id, lesson_id))
    tx.execute("DELETE FROM lesson_versions WHERE project_id = ? AND lesson_id = ? AND version > ? AND seq IS NULL",
               (project_id, lesson_id, lesson["held_version"]))
    return {"lesson_id": lesson_id, "status": lesson["held_status"], "seq": None}
