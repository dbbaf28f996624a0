"""What an edit really changed: the lines of a hunk that differ, and the code they sit in.

An Edit call carries its whole `old_string` / `new_string`; showing the first line of each (what
this module replaces) shows `def eye(…)` → `def eye(…)` whenever the change is further down. Here:

    change(tool, tool_input) -> Change | None
        {"file", "removed": [lines], "added": [lines], "symbol": enclosing def / function / module
         or None, "code": True when a non-comment, non-docstring line changed, "deleted_only": bool,
         "lines": number of changed lines}
    describe(change, limit) -> "added `if dtype is None:` / `dtype = float`" (never A → A)

Only changed lines count: the lines both sides share are context. Comment and docstring lines
are kept only when nothing else changed (a change that only touched comments is shown as such).
Cost: one `difflib.SequenceMatcher` over the lines of one edit (a few hundred at most; inputs are
capped upstream), no I/O.
"""

from __future__ import annotations

import difflib
import re
from typing import Any, TypedDict

from ..capture.tools import edit_pairs
from .lesson_wording import code

# A definition line in the common languages: def / class (Python), func (Go), fn (Rust), function /
# class / const x = (JS/TS), def / defp / defmodule (Elixir), def (Ruby), methods in Java-like code.
_DEFINITION = re.compile(
    r"^\s*(?:(?:export\s+)?(?:default\s+)?(?:async\s+)?(?:def|defp|defmacro|defmodule|class|func|fn|pub\s+fn|"
    r"function|interface|struct|impl|module|trait)\s+([A-Za-z_][\w.!?]*)"
    r"|(?:export\s+)?(?:const|let)\s+([A-Za-z_]\w*)\s*=\s*(?:async\s*)?\("
    r"|(?:(?:public|private|protected|internal|static|final|override|suspend)\s+)+[\w<>\[\],. ]*?([A-Za-z_]\w*)\s*\()")
_COMMENT = re.compile(r"^\s*(?:#|//|/\*|\*|--|;|<!--|%)")
# A comment that tells a tool what to do is code: `//nolint:errcheck`, `# no-qa: E501` (spelled without the dash), `# type: ignore`,
# `// eslint-disable-next-line`, `// @ts-expect-error`, `# rubocop:disable`, `//go:build`, `# pragma`.
_DIRECTIVE = re.compile(r"(?:#|//|/\*|--)\s*(?:nolint|no[q]a|type:\s*ignore|pyright:|mypy:|eslint-disable|"
                        r"@ts-(?:ignore|expect-error|nocheck)|biome-ignore|rubocop:|go:(?:build|generate|embed)|"
                        r"pragma|NOSONAR|istanbul ignore|c8 ignore|prettier-ignore|deno-lint-ignore|swiftlint:|"
                        r"ktlint-disable|@Suppress|credo:|sobelow_skip|dialyzer)", re.IGNORECASE)
_DOCSTRING_FENCE = re.compile(r'^\s*[rRbBuU]?(?:"""|\'\'\')')
_MAX_SHOWN = 3


class Change(TypedDict):
    file: str
    removed: list[str]
    added: list[str]
    symbol: str | None
    code: bool
    deleted_only: bool
    lines: int


def _docstring_lines(lines: list[str]) -> set[int]:
    """Indexes of lines inside (or opening / closing) a triple-quoted string."""
    inside, found = False, set()
    for i, line in enumerate(lines):
        fences = len(re.findall(r'"""|\'\'\'', line))
        if inside or _DOCSTRING_FENCE.match(line):
            found.add(i)
        if fences % 2 == 1:
            inside = not inside
    return found


def _symbol(lines: list[str], before: int) -> str | None:
    """The nearest definition at or above line `before` (the code the change sits in)."""
    for line in reversed(lines[: before + 1]):
        m = _DEFINITION.match(line)
        if m:
            return next(g for g in m.groups() if g)
    return None


def change(tool: str, data: Any, file: str = "") -> Change | None:
    """The changed lines of one Edit / MultiEdit / Write call (see the module docstring)."""
    removed: list[str] = []
    added: list[str] = []
    prose_removed: list[str] = []
    prose_added: list[str] = []
    symbol = None
    for old, new in edit_pairs(tool, data):
        a, b = old.splitlines(), new.splitlines()
        skip_a, skip_b = _docstring_lines(a), _docstring_lines(b)
        matcher = difflib.SequenceMatcher(a=a, b=b, autojunk=False)
        for op, i1, i2, j1, j2 in matcher.get_opcodes():
            if op == "equal":
                continue
            if symbol is None:
                symbol = _symbol(a, i1 - 1 if i1 > 0 else 0) if a else _symbol(b, j1)
            for i in range(i1, i2):
                line = a[i].strip()
                if line:
                    (prose_removed if i in skip_a or _COMMENT.match(a[i]) and not _DIRECTIVE.search(a[i])
                     else removed).append(line)
            for j in range(j1, j2):
                line = b[j].strip()
                if line:
                    (prose_added if j in skip_b or _COMMENT.match(b[j]) and not _DIRECTIVE.search(b[j])
                     else added).append(line)
    code = bool(removed or added)
    if not code:
        removed, added = prose_removed, prose_added
    # Lines moved within the hunk (same text on both sides) say nothing about the change.
    common = set(removed) & set(added)
    removed = [x for x in removed if x not in common]
    added = [x for x in added if x not in common]
    if not removed and not added:
        return None
    return {"file": file, "removed": removed, "added": added, "symbol": symbol, "code": code,
            "deleted_only": bool(removed) and not added, "lines": len(removed) + len(added)}


def _span(lines: list[str], limit: int) -> str:
    shown = lines[:_MAX_SHOWN]
    text = " / ".join(" ".join(x.split()) for x in shown)
    if len(lines) > len(shown):  # a longer change: its first lines stand for it (a count is noise to a reader)
        text += " / …"
    return code(text, limit)


def describe(ch: Change, limit: int = 110, *, new_only: bool = False) -> str:
    """The change in a few words: `removed` → `added`, `added X`, or `removed X`; with `new_only`,
    a replacement shows only what it wrote (`→ X`): the rule is the new code, and two cut spans of
    similar lines can read the same."""
    if ch["removed"] and ch["added"]:
        before, after = _span(ch["removed"], limit // 2), _span(ch["added"], limit)
        a, b = re.sub(r"\W", "", before), re.sub(r"\W", "", after)
        if new_only or b.startswith(a) or a.startswith(b):
            return f"writing {after}"  # cut, the two sides would read the same
    if ch["removed"] and ch["added"]:
        return f"{_span(ch['removed'], limit // 2)} → {_span(ch['added'], limit)}"
    if ch["added"]:
        return f"added {_span(ch['added'], limit)}"
    return f"removed {_span(ch['removed'], limit)}"
