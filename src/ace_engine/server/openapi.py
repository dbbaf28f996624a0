"""The team server's API, described once: an OpenAPI 3.1 document, and the validator the routes use.

`document(version)` is what `GET /openapi.json` serves: every route with its parameters, request
and response JSON schemas and error answers. The same schemas are what the routes check requests
against (`check(schema_name_or_schema, value)`, a small validator for the JSON Schema subset used
here: type, properties, required, enum, const, min/maxLength, pattern, minimum/maximum,
items, min/maxItems, anyOf, oneOf, $ref), and `policy.py` checks each pushed delta against
`DELTA_OPS[op]`. Change a rule here and both the contract and the enforcement change.

A push request's `deltas` items are only required to be objects: a delta that breaks its own
schema is answered `rejected` with the reason while the rest of the batch goes on
(docs/team-server.md), so that part is per delta, not a 400 for the whole request.

Cost: stdlib only (`re`); `document()` builds a fresh dict (a few hundred entries) per call.
"""

from __future__ import annotations

import copy
import re
from typing import Any

MAX_DELTAS = 500
MAX_PULL = 1000
DEFAULT_PULL = 500
MAX_SEQ = 2**62  # a BIGINT with room: larger `after` values are refused, not overflowed
MAX_DAYS = 3650
MAX_COUNT = 10**9
MAX_RAW_CONTENT = 20_000  # before whitespace is collapsed and spans dropped; the lesson cap comes after
OPS = ("ADD", "UPDATE", "TAG", "MERGE", "QUARANTINE", "REMOVE")

_NO_CONTROLS = "^[^\\u0000-\\u001f\\u007f-\\u009f]*$"
_LESSON_ID = {"type": "string", "pattern": "^[cC][tT][xX]-[0-9A-Za-z-]{1,60}$",
              "description": "a lesson id (`ctx-` + letters, digits, dashes)"}
_INT = {"type": "integer", "minimum": 0, "maximum": MAX_COUNT}
_NULLABLE_INT = {"type": ["integer", "null"]}
_NULLABLE_STR = {"type": ["string", "null"]}
_STRINGS = {"type": "array", "items": {"type": "string"}}
_CONTENT_HASH = {"type": "string", "pattern": "^[0-9a-f]{64}$"}

_DELTA_FIELDS: dict[str, dict[str, Any]] = {
    "key": {"type": "string", "minLength": 1, "maxLength": 128, "pattern": _NO_CONTROLS,
            "description": "idempotency key, unique per client"},
    "op": {"type": "string", "enum": list(OPS)},
    "lesson_id": _LESSON_ID,
    "content": {"type": "string", "minLength": 1, "maxLength": MAX_RAW_CONTENT},
    "section": {"type": "string", "minLength": 1, "maxLength": 64},
    "domains": {"type": "array", "maxItems": 16, "items": {"type": "string", "maxLength": 64}},
    "base_version": {"type": "integer", "minimum": 0, "maximum": MAX_COUNT},
    "helpful": _INT,
    "harmful": _INT,
    "other_id": _LESSON_ID,
    "reason": {"type": "string", "maxLength": 500},
}
_OP_FIELDS = {
    "ADD": (("content", "section"), ("domains",)),
    "UPDATE": ((), ("content", "section", "domains", "base_version")),
    "TAG": ((), ("helpful", "harmful")),
    "MERGE": (("other_id",), ("content",)),
    "QUARANTINE": ((), ("reason",)),
    "REMOVE": ((), ("reason",)),
}


def _delta_schema(op: str) -> dict[str, Any]:
    required, optional = _OP_FIELDS[op]
    props = {name: _DELTA_FIELDS[name] for name in ("key", "op", "lesson_id", *required, *optional)}
    props["op"] = {"const": op}
    schema: dict[str, Any] = {"type": "object", "properties": props, "required": ["key", "op", "lesson_id", *required]}
    if op == "UPDATE":  # something to change
        schema["anyOf"] = [{"required": [name]} for name in ("content", "section", "domains")]
    return schema


DELTA_OPS: dict[str, dict[str, Any]] = {op: _delta_schema(op) for op in OPS}

_ERROR = {"type": "object", "required": ["error"], "properties": {"error": {
    "type": "object", "required": ["code", "message"],
    "properties": {"code": {"type": "string"}, "message": {"type": "string"}}}}}

SCHEMAS: dict[str, dict[str, Any]] = {
    "Error": _ERROR,
    "Health": {"type": "object", "required": ["ok", "version"],
               "properties": {"ok": {"type": "boolean"}, "version": {"type": "string"}}},
    "Project": {"type": "object", "required": ["project", "last_seq", "lessons"], "properties": {
        "project": {"type": "string"}, "last_seq": {"type": "integer"},
        "lessons": {"type": "object", "required": ["active", "quarantined"],
                    "properties": {"active": {"type": "integer"}, "quarantined": {"type": "integer"}}}}},
    **{f"Delta{op.title()}": schema for op, schema in DELTA_OPS.items()},
    "Delta": {"description": "a pushed delta; its `op` says which fields it carries",
              "oneOf": [{"$ref": f"#/components/schemas/Delta{op.title()}"} for op in OPS]},
    "PushRequest": {"type": "object", "required": ["client_id", "deltas"], "properties": {
        "client_id": {"type": "string", "minLength": 1, "maxLength": 128, "pattern": _NO_CONTROLS},
        "deltas": {"type": "array", "maxItems": MAX_DELTAS, "items": {
            "type": "object", "description": "a `Delta`; one that does not fit its schema, or that the "
            "server's policy refuses, is answered `rejected` and the rest of the batch goes on"}}}},
    "PushResult": {"type": "object", "required": ["key", "status", "seq", "reason"], "properties": {
        "key": {"type": "string"},
        "status": {"type": "string", "enum": ["applied", "duplicate", "quarantined", "rejected"]},
        "seq": _NULLABLE_INT, "reason": _NULLABLE_STR}},
    "PushResponse": {"type": "object", "required": ["results", "last_seq"], "properties": {
        "results": {"type": "array", "items": {"$ref": "#/components/schemas/PushResult"}},
        "last_seq": {"type": "integer"}}},
    "LoggedDelta": {"type": "object", "required": ["seq", "op", "lesson_id", "client_id", "created_at"],
                    "description": "an applied delta as the server stored it (the `Delta` fields it kept)",
                    "properties": {
                        "seq": {"type": "integer"}, "op": {"type": "string", "enum": list(OPS)},
                        "lesson_id": {"type": "string"}, "client_id": {"type": "string"},
                        "created_at": {"type": "number"},
                        "counts": {"type": "object", "description": "TAG: {client_id: [helpful, harmful]}",
                                   "additionalProperties": {"type": "array", "items": {"type": "integer"}}}}},
    "PullResponse": {"type": "object", "required": ["deltas", "last_seq", "more"], "properties": {
        "deltas": {"type": "array", "items": {"$ref": "#/components/schemas/LoggedDelta"}},
        "last_seq": {"type": "integer"}, "more": {"type": "boolean"}}},
    "ReviewLesson": {"type": "object",
                     "required": ["lesson_id", "content", "section", "domains", "concerns", "origin_client",
                                  "created_at"],
                     "properties": {"lesson_id": {"type": "string"}, "content": {"type": "string"},
                                    "section": {"type": "string"}, "domains": _STRINGS,
                                    "concerns": {**_STRINGS, "description": "why the server holds it back"},
                                    "client_note": {**_NULLABLE_STR,
                                                    "description": "a client's QUARANTINE reason: its words, "
                                                                   "not a review reason"},
                                    "content_hash": {**_CONTENT_HASH,
                                                     "description": "what an approval names (`ReviewRequest`)"},
                                    "origin_client": _NULLABLE_STR, "created_at": {"type": "number"}}},
    "ReviewQueue": {"type": "object", "required": ["lessons"], "properties": {
        "lessons": {"type": "array", "items": {"$ref": "#/components/schemas/ReviewLesson"}}}},
    "ReviewRequest": {"type": "object", "required": ["action", "content_hash"],
                      "properties": {"action": {"type": "string", "enum": ["approve", "reject"]},
                                     "content_hash": {**_CONTENT_HASH, "description": (
                                         "the `content_hash` the review queue showed: a lesson changed since "
                                         "is not decided (409)")}}},
    "ReviewResponse": {"type": "object", "required": ["lesson_id", "status", "seq"], "properties": {
        "lesson_id": {"type": "string"}, "status": {"type": "string"}, "seq": _NULLABLE_INT}},
    "Stats": {"type": "object", "required": ["periods", "helpful", "harmful", "helpful_rate", "top", "clients"],
              "properties": {
                  "periods": {"type": "array", "items": {
                      "type": "object", "required": ["day", "created", "updated", "pruned", "quarantined"],
                      "properties": {"day": {"type": "string"}, "created": {"type": "integer"},
                                     "updated": {"type": "integer"}, "pruned": {"type": "integer"},
                                     "quarantined": {"type": "integer"}}}},
                  "helpful": {"type": "integer"}, "harmful": {"type": "integer"},
                  "helpful_rate": {"type": ["number", "null"]},
                  "top": {"type": "array", "items": {
                      "type": "object", "required": ["lesson_id", "content", "helpful", "harmful"],
                      "properties": {"lesson_id": {"type": "string"}, "content": {"type": "string"},
                                     "helpful": {"type": "integer"}, "harmful": {"type": "integer"}}}},
                  "clients": {"type": "integer"}}},
}

MAX_WAIT = 30  # seconds a pull may wait for the next delta (under the usual proxies' 60 s idle timeout)
# Query parameters, by route: name -> (schema, default).
QUERY: dict[str, dict[str, tuple[dict[str, Any], int]]] = {
    "pull": {"after": ({"type": "integer", "minimum": 0, "maximum": MAX_SEQ}, 0),
             "limit": ({"type": "integer", "minimum": 1, "maximum": MAX_PULL}, DEFAULT_PULL),
             # long-poll: with nothing after `after`, wait up to this many seconds for a delta
             "wait": ({"type": "integer", "minimum": 0, "maximum": MAX_WAIT}, 0)},
    "stats": {"days": ({"type": "integer", "minimum": 1, "maximum": MAX_DAYS}, 30)},
}
PROJECT_PARAM = {"type": "string", "minLength": 1, "maxLength": 128,
                 "pattern": "^[^\\u0000-\\u001f\\u007f-\\u009f/\\\\]+$"}


def _ref(name: str) -> dict[str, Any]:
    return {"$ref": f"#/components/schemas/{name}"}


def _json(name: str, description: str) -> dict[str, Any]:
    return {"description": description, "content": {"application/json": {"schema": _ref(name)}}}


_ERRORS = {
    "400": "malformed request: not JSON, or a field or parameter outside its schema",
    "401": "missing, unknown, expired or revoked token",
    "403": "the token's scope is too low (or, for a push, its client id belongs to another token)",
    "404": "no such project for this token (whether it exists or not)",
    "409": "the lesson changed since the review queue showed it; reload and decide again",
    "413": "request body over the server's limit",
    "429": "over the token's rate limit; `Retry-After` says when to come back",
}


def _operation(op_id: str, summary: str, ok: str, *, scope: str | None, body: str | None = None,
               query: str | None = None, lesson: bool = False, project: bool = True,
               conflict: bool = False) -> dict[str, Any]:
    params: list[dict[str, Any]] = []
    if project:
        params.append({"name": "project", "in": "path", "required": True, "schema": PROJECT_PARAM})
    if lesson:
        params.append({"name": "lesson_id", "in": "path", "required": True, "schema": _LESSON_ID})
    for name, (schema, default) in QUERY.get(query or "", {}).items():
        params.append({"name": name, "in": "query", "required": False, "schema": {**schema, "default": default}})
    responses: dict[str, Any] = {"200": _json(ok, "success")}
    if scope is not None:
        codes = ["401", "403", "404", "429"]
        if body or params:
            codes.insert(0, "400")
        if body:
            codes.append("413")
        if conflict:
            codes.append("409")
        for code in sorted(codes):
            responses[code] = _json("Error", _ERRORS[code])
            if code == "429":
                responses[code]["headers"] = {"Retry-After": {"schema": {"type": "string"}}}
    op: dict[str, Any] = {"operationId": op_id, "summary": summary, "responses": responses}
    if scope is None:
        op["security"] = []
    else:
        op["description"] = f"Needs a token of scope `{scope}` (read < write < admin) that covers the project."
    if params:
        op["parameters"] = params
    if body:
        op["requestBody"] = {"required": True, "content": {"application/json": {"schema": _ref(body)}}}
    return op


def document(version: str) -> dict[str, Any]:
    """The OpenAPI 3.1 document of every route (served at `GET /openapi.json`)."""
    base = "/v1/projects/{project}"
    return {
        "openapi": "3.1.0",
        "info": {"title": "ace-engine team server", "version": version,
                 "description": "Lessons travel between the machines of a team; raw events never do."},
        "paths": {
            "/v1/health": {"get": _operation("health", "Is the server up", "Health", scope=None, project=False)},
            "/openapi.json": {"get": {"operationId": "openapi", "summary": "This document", "security": [],
                                      "responses": {"200": {"description": "the OpenAPI document", "content": {
                                          "application/json": {"schema": {"type": "object"}}}}}}},
            base: {"get": _operation("project", "A project's sequence and lesson counts", "Project", scope="read")},
            f"{base}/deltas": {
                "post": _operation("push", "Push deltas (at most 500)", "PushResponse", scope="write",
                                   body="PushRequest"),
                "get": _operation("pull", "Deltas after a sequence number, in order", "PullResponse",
                                  scope="read", query="pull")},
            f"{base}/review": {"get": _operation("review_queue", "Lessons waiting for review", "ReviewQueue",
                                                 scope="admin")},
            f"{base}/review/{{lesson_id}}": {"post": _operation(
                "review_decide", "Approve or reject a quarantined lesson", "ReviewResponse", scope="admin",
                body="ReviewRequest", lesson=True, conflict=True)},
            f"{base}/stats": {"get": _operation("stats", "Team statistics", "Stats", scope="read", query="stats")},
        },
        "components": {
            "schemas": copy.deepcopy(SCHEMAS),
            "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer",
                                           "description": "a token from `ace server token create`"}},
        },
        "security": [{"bearer": []}],
    }


# -- the validator ------------------------------------------------------------------------------------------

_TYPES: dict[str, Any] = {
    "object": lambda v: isinstance(v, dict),
    "array": lambda v: isinstance(v, list),
    "string": lambda v: isinstance(v, str),
    "boolean": lambda v: isinstance(v, bool),
    "null": lambda v: v is None,
    "integer": lambda v: (isinstance(v, int) and not isinstance(v, bool)) or (isinstance(v, float) and v.is_integer()),
    "number": lambda v: isinstance(v, int | float) and not isinstance(v, bool),
}
_patterns: dict[str, re.Pattern[str]] = {}


def _pattern(text: str) -> re.Pattern[str]:
    if text not in _patterns:
        # JSON Schema's `$` is the end of the string; Python's also matches before a final newline.
        _patterns[text] = re.compile(text[:-1] + r"\Z" if text.endswith("$") else text)
    return _patterns[text]


def check(schema: dict[str, Any] | str, value: Any, where: str = "") -> str | None:
    """Why `value` does not fit `schema` (a schema, or the name of one in `SCHEMAS`), or None."""
    if isinstance(schema, str):
        schema = SCHEMAS[schema]
    label = where or "the body"
    if "$ref" in schema:
        return check(schema["$ref"].rsplit("/", 1)[-1], value, where)
    kinds = schema.get("type")
    if kinds is not None:
        kinds = [kinds] if isinstance(kinds, str) else kinds
        if not any(_TYPES[k](value) for k in kinds):
            return f"{label} must be {' or '.join(kinds)}"
    if "const" in schema and value != schema["const"]:
        return f"{label} must be {schema['const']!r}"
    if "enum" in schema and value not in schema["enum"]:
        return f"{label} must be one of {', '.join(map(str, schema['enum']))}"
    if isinstance(value, str):
        if len(value) < schema.get("minLength", 0):
            return f"{label} must not be empty" if schema["minLength"] == 1 else f"{label} is too short"
        if "maxLength" in schema and len(value) > schema["maxLength"]:
            return f"{label} is longer than {schema['maxLength']} characters"
        if "pattern" in schema and not _pattern(schema["pattern"]).search(value):
            return f"{label} must be {schema.get('description') or 'text without control characters'}"
    if _TYPES["number"](value):
        if "minimum" in schema and value < schema["minimum"]:
            return f"{label} must be at least {schema['minimum']}"
        if "maximum" in schema and value > schema["maximum"]:
            return f"{label} must be at most {schema['maximum']}"
    if isinstance(value, list):
        if "maxItems" in schema and len(value) > schema["maxItems"]:
            return f"{label} has more than {schema['maxItems']} items"
        if "minItems" in schema and len(value) < schema["minItems"]:
            return f"{label} has fewer than {schema['minItems']} items"
        for i, item in enumerate(value):
            if "items" in schema and (why := check(schema["items"], item, f"{where or 'item'}[{i}]")):
                return why
    if isinstance(value, dict):
        for name in schema.get("required", ()):
            if name not in value:
                return f"{(where + '.') if where else ''}{name} is required"
        for name, sub in schema.get("properties", {}).items():
            if name in value and (why := check(sub, value[name], f"{where}.{name}" if where else name)):
                return why
    if "oneOf" in schema and sum(check(sub, value, where) is None for sub in schema["oneOf"]) != 1:
        return f"{label} must fit exactly one of its forms"
    if "anyOf" in schema and all(check(sub, value, where) for sub in schema["anyOf"]):
        names = [name for sub in schema["anyOf"] for name in sub.get("required", ())]
        return f"{label} needs one of: {', '.join(names)}" if names else f"{label} fits none of its forms"
    return None
