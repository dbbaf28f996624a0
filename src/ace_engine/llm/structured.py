"""Structured output from a chat model: find the JSON object in a reply and check its shape.

Models wrap JSON in prose or code fences, emit an example object before the real one, or cut
the reply short. `extract_json` returns the first JSON object in the text that fits the schema
(or, failing that, the first object at all) so one stray `{…}` in the prose doesn't lose the
answer. `validate` checks a small, well-known subset of JSON Schema — type, required,
properties, items, enum, maxItems — enough to reject replies the caller couldn't use, without
a schema library.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from ..core.errors import InvalidOutput

MAX_SCAN_CHARS = 400_000  # a reply larger than this is cut before scanning: the scan is quadratic at worst

_TYPES = {
    "object": dict,
    "array": list,
    "string": str,
    "boolean": bool,
    "null": type(None),
}

__all__ = ["InvalidOutput", "extract_json", "validate", "json_objects", "schema_text"]


def _type_ok(value: object, expected: str) -> bool:
    if expected == "integer":
        return isinstance(value, int) and not isinstance(value, bool)
    if expected == "number":
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    python_type = _TYPES.get(expected)
    return python_type is None or isinstance(value, python_type)


def validate(value: object, schema: dict[str, Any] | None, path: str = "$") -> list[str]:
    """Problems of `value` against `schema` (empty list = valid), each naming where it is."""
    if not schema:
        return []
    problems: list[str] = []
    expected = schema.get("type")
    if expected is not None:
        options = expected if isinstance(expected, list) else [expected]
        if not any(_type_ok(value, t) for t in options):
            return [f"{path}: expected {' or '.join(options)}, got {type(value).__name__}"]
    if "enum" in schema and value not in schema["enum"]:
        problems.append(f"{path}: {value!r} is not one of {schema['enum']}")
    if isinstance(value, dict):
        for key in schema.get("required", ()):
            if key not in value:
                problems.append(f"{path}: missing required key {key!r}")
        for key, sub in (schema.get("properties") or {}).items():
            if key in value:
                problems.extend(validate(value[key], sub, f"{path}.{key}"))
    elif isinstance(value, list):
        if "maxItems" in schema and len(value) > schema["maxItems"]:
            problems.append(f"{path}: at most {schema['maxItems']} items, got {len(value)}")
        items = schema.get("items")
        if items:
            for index, item in enumerate(value):
                problems.extend(validate(item, items, f"{path}[{index}]"))
    return problems


def json_objects(text: str) -> Iterator[dict[str, Any]]:
    """Every top-level JSON object in `text`, in order (code fences and prose are skipped)."""
    text = text[:MAX_SCAN_CHARS]
    decoder = json.JSONDecoder()
    index = text.find("{")
    while index != -1:
        try:
            value, end = decoder.raw_decode(text, index)
        except ValueError:
            index = text.find("{", index + 1)
            continue
        if isinstance(value, dict):
            yield value
        index = text.find("{", end)


def extract_json(text: str, schema: dict[str, Any] | None = None) -> dict[str, Any]:
    """The first JSON object in `text` that satisfies `schema`.

    Raises InvalidOutput naming the problem when there is no object, or when none fits (then
    with the first object's problems, which is what a retry prompt should mention)."""
    if not isinstance(text, str) or not text.strip():
        raise InvalidOutput("the reply was empty")
    first_problems = None
    for candidate in json_objects(text):
        problems = validate(candidate, schema)
        if not problems:
            return candidate
        if first_problems is None:
            first_problems = problems
    if first_problems is None:
        raise InvalidOutput("the reply held no JSON object")
    shown = "; ".join(first_problems[:5]) + (f" (+{len(first_problems) - 5} more)" if len(first_problems) > 5 else "")
    raise InvalidOutput(f"the JSON object does not match the schema: {shown}")


def schema_text(schema: dict[str, Any] | None) -> str:
    """The schema as compact JSON for a prompt."""
    return json.dumps(schema or {"type": "object"}, separators=(",", ":"), ensure_ascii=False)
