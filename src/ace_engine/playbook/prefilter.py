"""Literal prefilters for the lesson safety policy's rules: which words a rule cannot match without.

`required(pattern, flags)` reads a regular expression's parse tree and returns the lower-case
literals of which every match contains at least one (a tuple), or None when it finds no such set
(then the rule must always run). `safety.concerns` checks them with `in` on the lower-cased text
before running a rule, so a lesson that names no trigger word skips the rule's regex altogether:
the same verdicts, since a rule skipped this way could not have matched.

How: a literal run (`sudo`) is required (and, right before an alternation whose every branch
starts with literals, the run followed by one of those: the parser factors `nc|ncat` into `n` then
`c|cat`); a group requires what its body requires; a repeat of at
least one requires what its body requires; an alternation requires the union of what each branch
requires (none if one branch requires nothing); a sequence requires the best of its parts' sets
(longest shortest literal, then fewest literals). Everything else (classes, anchors, lookarounds,
optional parts) requires nothing. Only sound for an ASCII text matched case-insensitively against
its `str.lower()` copy: Python's IGNORECASE also folds `ſ`, `K`, `ı` and `İ` onto ASCII letters, so
the caller runs every rule on a text that is not ASCII (safety.py does). A pattern literal that is
not ASCII breaks a run and requires nothing, for the same reason.

Cost: stdlib only (`re._parser`, the parser `re.compile` itself uses); run once per rule when the
rules are compiled (well under a millisecond each); the checks cost one substring search per
literal. If the parser's shape ever changes, a rule gets no prefilter (None) and simply always
runs: slower, never a different verdict.
"""

from __future__ import annotations

TYPE_CHECKING = False  # not `typing.TYPE_CHECKING`: hooks import the policy and must not load `typing`
if TYPE_CHECKING:
    from typing import Any

_REPEATS = ("MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT")


Need = tuple[tuple[tuple[str, ...], ...], ...]  # alternatives, each all of its sets, each any of its words


def required(pattern: str, flags: int = 0) -> Need | None:
    """What a text must hold for `pattern` to match it, or None (nothing known: always run).

    A pattern `a|b|…` gives one entry per alternative; an entry is the sets of lower-case words
    the alternative needs (each set: one of its words at least; all the sets). `may(need, low)`
    is the check."""
    try:
        import importlib

        parser = importlib.import_module("re._parser")  # first use only (Python ≥ 3.11; no stubs)

        items = list(parser.parse(pattern, flags))
        branches = [list(b) for b in items[0][1][1]] if len(items) == 1 and str(items[0][0]) == "BRANCH" else [items]
        out = []
        for branch in branches:
            sets = _all(branch)
            if not sets:
                return None  # an alternative that needs nothing: the pattern needs nothing
            out.append(tuple(tuple(sorted(s)) for s in sorted(sets, key=_score, reverse=True)))
    except Exception:  # noqa: BLE001 — any surprise from a private parser: no prefilter, same verdicts
        return None
    return tuple(out)


def may(need: Need | None, low: str) -> bool:
    """Can a pattern needing `need` match the text whose lower-case copy is `low`?"""
    return need is None or any(all(any(w in low for w in words) for words in alt) for alt in need)


def _all(items: list[Any]) -> list[frozenset[str]]:
    """Every set a sequence of parse items needs (its literal runs and its parts' needs)."""
    sets: list[frozenset[str]] = []
    run: list[str] = []
    for op, arg in items:
        name = str(op)
        if name == "LITERAL" and arg < 128:
            run.append(chr(arg).lower())
            continue
        if name == "BRANCH" and run:
            # The parser takes a common first letter out of an alternation (`nc|ncat|netcat` is `n`
            # then `c|cat|etcat`): a run right before it needs one of the run + a branch's leading
            # literals, a far more telling set than the run alone (unless a branch leads with none).
            leads = [_lead(list(branch)) for branch in arg[1]]
            if all(leads):
                sets.append(frozenset("".join(run) + lead for lead in leads))
        if run:
            sets.append(frozenset(["".join(run)]))
            run = []
        need = _item(name, arg)
        if need:
            sets.append(need)
    if run:
        sets.append(frozenset(["".join(run)]))
    return sets


def _lead(items: list[Any]) -> str:
    """The lower-case literal run a sequence of parse items starts with ('' if none)."""
    lead = []
    for op, arg in items:
        if str(op) != "LITERAL" or arg >= 128:
            break
        lead.append(chr(arg).lower())
    return "".join(lead)


def _score(need: frozenset[str]) -> tuple[int, int]:
    return (min(len(s) for s in need), -len(need))


def _need(items: list[Any]) -> frozenset[str] | None:
    """What a sequence of parse items requires (None: nothing): the most telling of the sets it
    needs (`_all`), the first of equals."""
    return max(_all(items), key=_score, default=None)


def _item(name: str, arg: Any) -> frozenset[str] | None:
    if name == "SUBPATTERN":
        return _need(list(arg[-1]))
    if name == "ATOMIC_GROUP":
        return _need(list(arg))
    if name in _REPEATS:
        low, _high, body = arg
        return _need(list(body)) if low >= 1 else None
    if name == "BRANCH":
        union: set[str] = set()
        for branch in arg[1]:
            need = _need(list(branch))
            if not need:
                return None  # a branch that requires nothing: the alternation requires nothing
            union |= need
        return frozenset(union)
    return None  # classes, anchors, lookarounds, any character, back references: nothing required


class Plan:
    """The needs of a list of patterns, ready for many texts: `present(low)` looks for every word
    once (one substring search each); `may(i, found)` then says whether pattern `i` can match,
    with set operations only (first the union of each alternative's most telling set: one
    `isdisjoint` rules out most patterns for most texts). The same answers as `may(need, low)`."""

    __slots__ = ("lazy", "rules", "words")

    def __init__(self, needs: list[Need | None]) -> None:
        self.words = tuple(sorted({w for need in needs if need for alt in need for ws in alt for w in ws}))
        self.rules: list[tuple[frozenset[str], tuple[tuple[frozenset[str], ...], ...]] | None] = [
            None if not need else (frozenset(w for alt in need for w in alt[0]),
                                   tuple(tuple(frozenset(ws) for ws in alt) for alt in need))
            for need in needs]
        # The same sets as tuples, for `may_in`: longest words first (the rarest, so `any` stops early).
        self.lazy: list[tuple[tuple[str, ...], tuple[tuple[tuple[str, ...], ...], ...]] | None] = [
            None if rule is None else (_longest_first(rule[0]), tuple(tuple(_longest_first(ws) for ws in alt)
                                                                      for alt in rule[1]))
            for rule in self.rules]

    def may_in(self, index: int, low: str) -> bool:
        """`may(index, present(low))`, looking only for the words pattern `index` needs, and for its
        alternatives' further words only once one of their most telling ones is there: for most
        texts most rules are ruled out by a few dozen substring searches instead of every word's."""
        rule = self.lazy[index]
        if rule is None:
            return True
        first, alts = rule
        if not any(w in low for w in first):
            return False
        return any(all(any(w in low for w in ws) for ws in alt) for alt in alts)

    def present(self, low: str) -> frozenset[str]:
        return frozenset([w for w in self.words if w in low])

    def may(self, index: int, found: frozenset[str]) -> bool:
        rule = self.rules[index]
        if rule is None:
            return True
        first, alts = rule
        if first.isdisjoint(found):
            return False
        return any(all(not ws.isdisjoint(found) for ws in alt) for alt in alts)


def _longest_first(words: frozenset[str]) -> tuple[str, ...]:
    return tuple(sorted(words, key=lambda w: (-len(w), w)))
