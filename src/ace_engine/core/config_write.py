"""Writing a setting into a TOML config file (`ace config set`, `ace install`'s model choice,
`ace experiment start`): the one writer, so every file ace-engine edits keeps its user's comments.

`write_value(path, key, value)` replaces the key's line, or adds it to its table, or appends the
table; when that edit would not read back as exactly the old values plus this one, the file is
written anew from its values. Values are checked against their setting by the caller
(`config.parse_value`); reading goes through `config.read_toml_bytes` (bounded, regular files only).

Cost: one bounded read, one parse to check the edit, one atomic write.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from .config import _flatten, read_toml_bytes
from .errors import ConfigError

if TYPE_CHECKING:
    from collections.abc import Mapping


def toml_literal(value: object) -> str:
    """`value` (of a setting's type) as a TOML value."""
    import json

    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, str):  # a JSON string is a TOML basic string, once DEL is escaped too
        return json.dumps(value, ensure_ascii=False).replace("\x7f", "\\u007f")
    if isinstance(value, list):
        return "[" + ", ".join(toml_literal(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{ " + ", ".join(f"{toml_literal(str(k))} = {toml_literal(v)}" for k, v in value.items()) + " }"
    raise ConfigError(f"cannot write {value!r} to a config file")


def write_value(path: str, key: str, value: object, *, new_mode: int = 0o600) -> None:
    """Set `key` to `value` in the TOML file at `path` (created if missing), atomically. The file's
    other lines, comments included, stay as they are: the key's line is replaced, or added to its
    table, or the table is appended. When that edit would not read back as exactly the old values
    plus this one (a value spread over several lines, an inline table), the file is written anew
    from its values, comments lost. A new file is created with `new_mode` (owner-only by default;
    the CLI writes a project's .ace.toml, repository content, 0o644)."""
    from .files import atomic_write

    found = read_toml_bytes(path)
    old = found[0] if found else {}
    text = found[1].decode("utf-8") if found else ""
    expected = {**old, key: value}
    edited = _edit_toml(text, key, value)
    try:
        import tomllib

        ok = _flatten(tomllib.loads(edited)) == expected
    except ValueError:  # TOMLDecodeError
        ok = False
    if not ok:
        edited = _dump_toml(expected)
    directory = os.path.dirname(path)
    if directory:
        os.makedirs(directory, mode=0o700, exist_ok=True)
    atomic_write(path, edited, mode=None if found else new_mode)


def _edit_toml(text: str, key: str, value: object) -> str:
    import re

    header_rx = re.compile(r"^\s*\[\s*([A-Za-z0-9_.\- ]+?)\s*\]\s*(?:#.*)?$")
    key_rx = re.compile(r"^(\s*)([A-Za-z0-9_\-]+(?:\s*\.\s*[A-Za-z0-9_\-]+)*)\s*=")
    table, leaf = key.rsplit(".", 1) if "." in key else ("", key)
    lines = text.splitlines(keepends=True)
    if lines and not lines[-1].endswith("\n"):
        lines[-1] += "\n"
    current, table_end = "", None
    for number, line in enumerate(lines):
        head = header_rx.match(line)
        if head:
            current = re.sub(r"\s*\.\s*", ".", head.group(1))
            table_end = number + 1 if current == table else table_end
            continue
        found = key_rx.match(line)
        if not found:
            continue
        name = re.sub(r"\s*\.\s*", ".", found.group(2))
        if (f"{current}.{name}" if current else name) == key:
            lines[number] = f"{found.group(1)}{found.group(2)} = {toml_literal(value)}\n"
            return "".join(lines)
        if current == table:
            table_end = number + 1
    if table_end is not None:
        lines.insert(table_end, f"{leaf} = {toml_literal(value)}\n")
        return "".join(lines)
    if not table:
        return f"{key} = {toml_literal(value)}\n" + "".join(lines)
    gap = "\n" if lines and lines[-1].strip() else ""
    return "".join(lines) + f"{gap}[{table}]\n{leaf} = {toml_literal(value)}\n"


def _dump_toml(flat: Mapping[str, object]) -> str:
    tables: dict[str, list[str]] = {}
    for key, value in sorted(flat.items()):
        table, leaf = key.rsplit(".", 1) if "." in key else ("", key)
        tables.setdefault(table, []).append(f"{leaf} = {toml_literal(value)}")
    out = tables.pop("", [])
    for table, rows in tables.items():
        out += ([""] if out else []) + [f"[{table}]", *rows]
    return "\n".join(out) + "\n"
