"""Reading a repository's files without trusting them: the public readers every bootstrap scanner uses.

Contract: a reader never raises on a missing, unreadable or malformed file. It returns None (or
what it could read) and, where it parses, names the file and the problem in `problems` (a list
the caller passes in and shows the user). Files are read as UTF-8 with replacement, at most
`limit` characters, never executed or imported. YAML (CI workflows, pre-commit) is read line by
line: only `run:` / `script:` values and hook ids are needed, not a YAML library.

Cost: stdlib only; `tomllib` is imported on the first TOML file.
"""

from __future__ import annotations

import configparser
import json
import os
import re
from typing import Any, TypedDict


class Problem(TypedDict):
    """A file a scanner skipped, and why (shown by `ace bootstrap`)."""

    file: str
    problem: str


def read_text(root: str, rel: str, limit: int = 512_000) -> str | None:
    """The text of `rel` under `root` (at most `limit` characters), None when it can't be read."""
    try:
        with open(os.path.join(root, rel), encoding="utf-8", errors="replace") as fh:
            return fh.read(limit)
    except OSError:
        return None


def exists(root: str, rel: str) -> bool:
    return os.path.exists(os.path.join(root, rel))



def read_toml(root: str, rel: str, problems: list[Problem]) -> dict[str, Any] | None:
    """The parsed TOML of `rel`, None when missing or invalid (then noted in `problems`)."""
    text = read_text(root, rel)
    if text is None:
        return None
    import tomllib

    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        problems.append({"file": rel, "problem": f"invalid TOML ({exc})"})
        return None


def read_json(root: str, rel: str, problems: list[Problem], *, comments: bool = False) -> Any:
    """The parsed JSON of `rel` (`comments`: JSON with comments and trailing commas, as tsconfig),
    None when missing or invalid (then noted in `problems`)."""
    text = read_text(root, rel)
    if text is None:
        return None
    if comments:
        text = strip_json_comments(text)
    try:
        return json.loads(text)
    except ValueError as exc:
        problems.append({"file": rel, "problem": f"invalid JSON ({exc})"})
        return None


def read_ini(root: str, rel: str, problems: list[Problem]) -> configparser.ConfigParser | None:
    """A `configparser.ConfigParser` of `rel`, None when missing or unreadable (then noted in `problems`)."""
    text = read_text(root, rel)
    if text is None:
        return None
    parser = configparser.ConfigParser(interpolation=None, strict=False)
    try:
        parser.read_string(text)
    except configparser.Error as exc:
        problems.append({"file": rel, "problem": f"unreadable INI ({exc.__class__.__name__})"})
        return None
    return parser


def strip_json_comments(text: str) -> str:
    """JSON with comments and trailing commas (tsconfig, .eslintrc) → JSON; strings are kept."""
    out, i, n = [], 0, len(text)
    while i < n:
        ch = text[i]
        if ch == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            out.append(text[i:j + 1])
            i = j + 1
        elif text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j == -1 else j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            i = n if j == -1 else j + 2
        else:
            out.append(ch)
            i += 1
    return re.sub(r",(\s*[}\]])", r"\1", "".join(out))



# -- YAML, line by line ----------------------------------------------------------------------------

_BLOCK = re.compile(r"^[|>][+-]?\d*$")
_MAPPING_KEY = re.compile(r"^[\w.-]+[ \t]*:[ \t]*$")  # `name:` opening a nested mapping


def yaml_commands(text: str, keys: tuple[str, ...] = ("run",)) -> list[tuple[str, str]]:
    """(job, command line) of every `run:` (or other `keys`) value in a YAML file, without a YAML
    library: inline values, `|` / `>` blocks and `- item` lists under the key are understood."""
    out: list[tuple[str, str]] = []
    lines = text.splitlines()
    job, jobs_indent, job_indent = "", None, None
    key_rx = re.compile(r"^([ \t]*)(-[ \t]+)?(" + "|".join(map(re.escape, keys)) + r")[ \t]*:[ \t]*(.*)$")
    i = 0
    while i < len(lines):
        line = lines[i]
        stripped = line.strip()
        indent = len(line) - len(line.lstrip())
        if re.match(r"^jobs[ \t]*:", line):
            jobs_indent, job_indent = 0, None
        elif jobs_indent is not None and _MAPPING_KEY.match(stripped):
            if job_indent is None and indent > jobs_indent:
                job_indent = indent
            if indent == job_indent:
                job = stripped.rstrip(":").strip()
        elif jobs_indent is None and indent == 0 and _MAPPING_KEY.match(stripped) and not stripped.startswith("."):
            job = stripped.rstrip(":").strip()  # GitLab CI: top-level keys are jobs
        m = key_rx.match(line)
        if not m:
            i += 1
            continue
        key_indent = len(m.group(1)) + len(m.group(2) or "")
        value = _yaml_scalar(m.group(4))
        i += 1
        if value and not _BLOCK.match(value):
            out.extend((job, c) for c in _command_lines(value))
            continue
        block: list[str] = []
        while i < len(lines) and (not lines[i].strip() or len(lines[i]) - len(lines[i].lstrip()) > key_indent):
            block.append(lines[i])
            i += 1
        if value.startswith(">"):
            text_block = " ".join(b.strip() for b in block if b.strip())
            out.extend((job, c) for c in _command_lines(text_block))
        elif value:
            out.extend((job, c) for c in _command_lines(_dedent(block)))
        else:  # a list of commands (GitLab `script:`)
            for item in block:
                item = item.strip()
                if item.startswith("- "):
                    out.extend((job, c) for c in _command_lines(_yaml_scalar(item[2:])))
    return out


def _yaml_scalar(value: str) -> str:
    value = value.strip()
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
        return value[1:-1]
    return re.sub(r"[ \t]+#.*$", "", value)


def _dedent(block: list[str]) -> str:
    real = [b for b in block if b.strip()]
    if not real:
        return ""
    cut = min(len(b) - len(b.lstrip()) for b in real)
    return "\n".join(b[cut:] for b in block)


def _command_lines(text: str) -> list[str]:
    joined = re.sub(r"[ \t]*\\\n[ \t]*", " ", text)
    return [line.strip() for line in joined.splitlines() if line.strip() and not line.strip().startswith("#")]

