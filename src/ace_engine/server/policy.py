"""The server's safety choke point: every pushed delta passes `screen` before it is stored.

The server trusts no client (docs/team-server.md): a delta is checked against its op's schema
(`openapi.DELTA_OPS`), its lesson ids must be ids (`playbook.ids.looks_like_id`), its section a
known one (`playbook.sections.normalize`), and every text it carries goes through the same steps
as a local lesson, in this order: `<private>…</private>` spans dropped (`redact.sanitize.strip_private`),
secrets replaced (`redact.redactor.redact`), whitespace and length rules (`playbook.playbook.
clean_content`). Then the lesson safety policy (`playbook.safety.concerns`) decides: flagged
content is `quarantined` (the review queue, never the pull log), the rest `active`. Anything
malformed is `rejected` with a reason naming the fault; the caller goes on with the next delta.

`screen(delta)` returns a `Verdict(status, body, reason)`: `body` is the cleaned delta (`key`, `op`,
`lesson_id` and only the fields its op takes, plus `concerns` when quarantined), never the
client's dict. A delta's own fields do not tell the whole change: `rules(token_id)` gives the
store what it needs to screen the rest inside the push's transaction (`server.storage.ops.Rules`):
`kept_content_concerns` for content a delta publishes again without carrying it (a section- or
domains-only UPDATE), the pushing token (the client id is bound to it), and the daily budget of
helpful / harmful marks per lesson and token (`ops.MARKS_PER_DAY`). A `QUARANTINE` or `REMOVE`
reason is the client's note, never a review reason (only the server writes those).

`repair_json` makes every string of a parsed request storable (lone surrogates and NULs would
break PostgreSQL); the app runs it on each request body before anything else.

Cost: stdlib plus the playbook and capture modules; a delta is screened in well under 1 ms, its
content redacted once (not again by the safety policy's secret rule when that is known to change nothing).
"""

from __future__ import annotations

import re
from typing import Any, NamedTuple

from ..playbook import domains as domain_mod
from ..playbook import safety, sections
from ..playbook.ids import looks_like_id
from ..playbook.playbook import PlaybookError, clean_content
from ..redact.redactor import redact
from ..redact.sanitize import repair_utf8, strip_private
from . import openapi
from .storage.ops import MARKS_PER_DAY, Rules

_SPACE = re.compile(r"\s+")
MAX_REASON = 500


class Verdict(NamedTuple):
    status: str  # "active", "quarantined" or "rejected" (the `status` TeamDB.apply_delta takes, or refused)
    body: dict[str, Any]
    reason: str | None


def repair_json(value: Any) -> Any:
    """`value` (parsed JSON) with every string, keys included, made valid UTF-8 without NULs."""
    if isinstance(value, str):
        return repair_utf8(value)
    if isinstance(value, list):
        return [repair_json(v) for v in value]
    if isinstance(value, dict):
        return {repair_utf8(str(k)): repair_json(v) for k, v in value.items()}
    return value


def result_key(delta: Any) -> str:
    """The key a result is reported under, even for a delta too broken to have a valid one."""
    key = delta.get("key") if isinstance(delta, dict) else None
    return key[:128] if isinstance(key, str) else ""


def _reject(body: dict[str, Any], reason: str) -> Verdict:
    return Verdict("rejected", body, reason)


def _text(value: str) -> str:
    """A pushed text made safe: private spans dropped, secrets replaced."""
    return redact(strip_private(value))


def _content(value: str) -> tuple[str, bool]:
    """The content as stored (PlaybookError: empty, or over the lesson length), and whether it is
    known to be a fixed point of `redact`: the redaction changed nothing and neither did the
    cleaning, so redacting it again would give it back (`safety.concerns(redaction_fixed=…)` then
    skips its own redaction: one redaction per delta, the same verdicts)."""
    private_free = strip_private(value)
    redacted = redact(private_free)
    cleaned = clean_content(redacted)
    return cleaned, redacted == private_free and cleaned == redacted


def _domains(values: list[str]) -> list[str]:
    out: list[str] = []
    for value in values:
        name = domain_mod.normalize(_text(value))
        if name and name not in out:
            out.append(name)
    return out


def kept_content_concerns(content: str) -> list[str]:
    """Why content a delta would publish again (not carrying it) must wait for review."""
    return safety.concerns(content, ())


def rules(token_id: int | None) -> Rules:
    """What the store applies inside a push's transaction for `token_id` (module docstring)."""
    return Rules(screen=kept_content_concerns, token_id=token_id, marks_per_day=MARKS_PER_DAY)


def screen(delta: Any, *, extra_sections: tuple[str, ...] = (), trusted_hosts: tuple[str, ...] = ()) -> Verdict:
    """The verdict on one pushed delta (see the module docstring)."""
    if not isinstance(delta, dict):
        return _reject({}, "a delta must be a JSON object")
    op = delta.get("op")
    if op not in openapi.DELTA_OPS:
        return _reject({}, f"unknown op {op!r}; use one of {', '.join(openapi.OPS)}")
    why = openapi.check(openapi.DELTA_OPS[op], delta, "delta")
    if why:
        return _reject({}, why)
    lesson_id = delta["lesson_id"]
    body: dict[str, Any] = {"key": delta["key"], "op": op, "lesson_id": lesson_id}
    if not looks_like_id(lesson_id):
        return _reject(body, f"{lesson_id!r} is not a lesson id (ctx-…)")
    fixed = False
    try:
        if "content" in delta:
            body["content"], fixed = _content(delta["content"])
        if "section" in delta:
            body["section"] = sections.normalize(delta["section"], extra_sections)
    except (PlaybookError, sections.SectionError) as exc:  # both messages name the fault and the fix
        return _reject(body, str(exc))
    if "domains" in delta:
        body["domains"] = _domains(delta["domains"])
    elif op == "ADD":
        body["domains"] = []
    if op == "UPDATE" and "base_version" in delta:
        body["base_version"] = int(delta["base_version"])
    if op == "TAG":
        body["helpful"] = int(delta.get("helpful", 0))
        body["harmful"] = int(delta.get("harmful", 0))
    if op == "MERGE":
        other = delta["other_id"]
        if not looks_like_id(other) or other == lesson_id:
            return _reject(body, f"other_id {other!r} must be another lesson's id")
        body["other_id"] = other
    if op in ("QUARANTINE", "REMOVE") and "reason" in delta:
        body["reason"] = _SPACE.sub(" ", _text(delta["reason"])).strip()[:MAX_REASON]
    if "content" in body:
        concerns = safety.concerns(body["content"], trusted_hosts, redaction_fixed=fixed)
        if concerns:
            body["concerns"] = concerns
            return Verdict("quarantined", body, "held for review: " + "; ".join(concerns))
    return Verdict("active", body, None)
