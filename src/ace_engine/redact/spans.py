"""The redactor's shared plumbing: the marker a secret becomes, lazily compiled patterns, and
applying a rule's found spans to the text.

Contract: `MARK` is the one spelling of the marker's head; `marker(kind)` is `[REDACTED:<kind>]`.
`rx(pattern, flags)` returns the compiled pattern, compiling it on first use (one cache for every
rule module, keyed by the pattern itself, so two modules can never get each other's regex).
`apply_spans(text, spans)` replaces each `(start, end, kind)` span by its marker, earliest first,
skipping spans that overlap an earlier one or already hold a marker; it returns the very same
object when nothing was replaced, so callers can tell cheaply. `finds(text, needle)` yields the
positions of a literal needle.

Cost: imports only `re` (this module is on the hooks' import path); nothing compiles at import.
A cached pattern costs one dict lookup; a pattern literal's hash is computed once by Python.
"""

import re

TYPE_CHECKING = False  # not `typing.TYPE_CHECKING`: hooks import this module and must not load `typing`
if TYPE_CHECKING:
    from collections.abc import Iterator

MARK = "[REDACTED:"

_compiled: dict[str, re.Pattern[str]] = {}
_compiled_flags: dict[tuple[str, int], re.Pattern[str]] = {}


def marker(kind: str) -> str:
    """What a secret of `kind` is replaced with: `[REDACTED:kind]`."""
    return MARK + kind + "]"


def rx(pattern: str, flags: int = 0) -> re.Pattern[str]:
    """`pattern` compiled with `flags`, compiled on first use and cached for the process."""
    if flags:
        key = (pattern, flags)
        found = _compiled_flags.get(key)
        if found is None:
            found = _compiled_flags[key] = re.compile(pattern, flags)
        return found
    found = _compiled.get(pattern)
    if found is None:
        found = _compiled[pattern] = re.compile(pattern)
    return found


def apply_spans(text: str, spans: "list[tuple[int, int, str]]", *, marked_anywhere: bool = True) -> str:
    """`text` with every `(start, end, kind)` span replaced by `marker(kind)` (sorts `spans`).

    A span overlapping an earlier one is skipped, and so is a span that already holds a marker:
    anywhere in it (`marked_anywhere`, the default: a wider match never swallows an earlier
    marker's kind) or, with `marked_anywhere=False`, only one that starts with a marker (a value
    that merely contains one, such as a cookie header around a redacted token, is replaced whole).
    """
    if not spans:
        return text
    spans.sort()
    out: list[str] = []
    last = 0
    for s, e, kind in spans:
        if s < last:
            continue
        if (MARK in text[s:e]) if marked_anywhere else text.startswith(MARK, s, e):
            continue
        out.append(text[last:s])
        out.append(MARK + kind + "]")
        last = e
    if not out:
        return text
    out.append(text[last:])
    return "".join(out)


def finds(text: str, needle: str) -> "Iterator[int]":
    """Every position where `needle` occurs in `text`, in order (overlapping ones included)."""
    i = text.find(needle)
    while i >= 0:
        yield i
        i = text.find(needle, i + 1)
