"""Where the commands of a lesson are: the text `commands_read` reads as a shell would.

`commands(text, programs)` yields every command text of a lesson, in order, as (text, is code): the
lines of fenced blocks (```` ``` ```` or `~~~`), inline code spans — a span with no word in it (`"`,
`|`) names a character, not a command — and in prose each clause from a word in `programs` (a known
installer's or runner's name) to the clause's end: a sentence end, a comma, a joining word between two
steps ("then", "and", "before", …), or a code span.

Cost: linear in the text (three regular expressions without backtracking on their own output). Loaded
with `commands_read`; imports only `re`.
"""

from __future__ import annotations

import re

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator

_FENCE = re.compile(r"^[ \t]*(```|~~~)[^\n]*\n(.*?)(?:^[ \t]*\1[ \t]*$|\Z)", re.MULTILINE | re.DOTALL)
_SPAN = re.compile(r"(`{1,3})([^`\n]+?)\1")
# Where a clause of prose ends: a sentence end, a comma, or a joining word between two steps.
_CLAUSE = re.compile(r"(?<=\S)[.!?:](?=\s|$)|,\s|\n|\s\((?!\))|"
                     r"\s(?:then|and then|and|or|afterwards|after that|before|so that|to make)\s")


def commands(text: str, programs: frozenset[str]) -> Iterator[tuple[str, bool]]:
    """The command texts of a lesson as (text, is code): the lines of fenced blocks, code spans, and
    in prose each clause from a word in `programs` to the clause's end. Linear in the text."""
    rest: list[str] = []
    last = 0
    for fence in _FENCE.finditer(text):
        rest.append(text[last:fence.start()])
        yield fence.group(2), True
        last = fence.end()
    rest.append(text[last:])
    for chunk in rest:
        prose: list[str] = []
        last = 0
        for span in _SPAN.finditer(chunk):
            prose.append(chunk[last:span.start()])
            prose.append(" ¶ ")  # a code span ends a clause of prose
            if re.search(r"\w", span.group(2)):  # `"`, `|`, a backslash: a character named, no command
                yield span.group(2), True
            last = span.end()
        prose.append(chunk[last:])
        yield from _prose("".join(prose), programs)


_WORD = re.compile(r"(?<![\w./$~-])(?:[\w.~/-]*/)?([\w][\w.+-]*)")


def _prose(text: str, programs: frozenset[str]) -> Iterator[tuple[str, bool]]:
    start = 0
    for stop in [*(m.start() for m in _CLAUSE.finditer(text)), len(text)]:
        clause = text[start:stop]
        start = stop + 1
        if "¶" in clause:
            clause = clause.rsplit("¶", 1)[1]
        for word in _WORD.finditer(clause):
            if word.group(1).lower() in programs:
                begin = word.start()
                if clause[:begin].endswith("="):  # `X=npx; $X …`: the assignment is part of it
                    begin = max(clause.rfind(" ", 0, begin), clause.rfind("\t", 0, begin)) + 1
                yield clause[begin:].strip(), False
                break
