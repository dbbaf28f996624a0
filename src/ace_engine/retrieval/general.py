"""The general lesson before its one-off variants, in a list of hits.

Contract. `prefer_general(hits)` takes ranked hits (score, bullet, …) and returns them re-ordered:
a lesson whose command is the plain form of another hit's command ("run the suite with `mix
test`" against "ran `mix test test/dispatch_test.exs`") moves just above the first such variant,
and variants of one plain form that differ only by their path-like argument (a file, a branch
`feat/x`) collapse into the best of them. A command's plain form is its words up to the first
that names a path, a file or a branch (holds `/`, or ends in a file extension): `git push
--set-upstream origin feat/eta` → `git push --set-upstream origin`. Lessons without a command, or
with several, are left where they are. Learning stops producing such variants (learning/commands);
this is for playbooks that hold them already, imported or learned before.

Cost: string methods over the few hits returned (k ≤ ~10); no import at all.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Any



def _is_file(word: str) -> bool:
    """Ends in a file extension (`x_test.exs`, `app.py`); str methods, not a regex: a hook
    imports this module, and compiling a pattern costs more than this whole check."""
    stem, dot, ext = word.rpartition(".")
    return bool(dot and stem and 1 <= len(ext) <= 5 and ext.isalnum() and ext.isascii())


def _commands(content: str) -> list[tuple[str, bool]]:
    """(plain form, is a variant) of each command the lesson quotes: a backticked span of two
    words or more (a lone word is as likely an identifier as a command)."""
    spans = content.split("`")[1:-1:2] if content.count("`") >= 2 else []  # the text between backticks
    out = []
    for span in spans:
        words = span.split()
        if len(words) < 2 or "\n" in span or len(span) > 200:
            continue
        cut = next((i for i, w in enumerate(words) if i >= 1 and ("/" in w or _is_file(w))), None)
        if cut is None:
            out.append((" ".join(words), False))
        elif cut >= 2:
            out.append((" ".join(words[:cut]), True))
    return out


def _variant_of(content: str) -> str | None:
    """The plain form a one-off lesson is a variant of: it quotes exactly one command, with a path."""
    found = _commands(content)
    return found[0][0] if len(found) == 1 and found[0][1] else None


def prefer_general(hits: Sequence[tuple[float, Any, Any]]) -> list[tuple[float, Any, Any]]:
    seen_variant: dict[str, int] = {}  # plain form → position of its best variant kept
    out: list[tuple[float, Any, Any]] = []
    for hit in hits:
        content = hit[1]["content"]
        variant = _variant_of(content)
        if variant is not None:
            if variant in seen_variant:
                continue  # a second one-off of the same command: the better one stands for both
            seen_variant[variant] = len(out)
            out.append(hit)
            continue
        general = [form for form, is_variant in _commands(content) if not is_variant and form in seen_variant]
        if general:
            # The general lesson ranked below a variant of it: it takes the first such variant's place.
            at = min(seen_variant[form] for form in general)
            out.insert(at, hit)
            for key, pos in seen_variant.items():
                if pos >= at:
                    seen_variant[key] = pos + 1
            continue
        out.append(hit)
    return out
