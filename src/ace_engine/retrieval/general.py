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


def _command(content: str) -> tuple[str, bool] | None:
    """(plain form, is a variant) of the lesson's one command, or None."""
    spans = content.split("`")[1:-1:2] if content.count("`") >= 2 else []  # the text between backticks
    found = [c.strip() for c in spans if " " in c.strip() and "\n" not in c and len(c) <= 200]
    if len(found) != 1:
        return None
    words = found[0].split()
    for i, word in enumerate(words):
        if i >= 1 and ("/" in word or _is_file(word)):
            return (" ".join(words[:i]), True) if i >= 2 else None
    return " ".join(words), False


def prefer_general(hits: Sequence[tuple[float, Any, Any]]) -> list[tuple[float, Any, Any]]:
    ranked = list(hits)
    forms = [_command(h[1]["content"]) for h in ranked]
    seen_variant: dict[str, int] = {}  # plain form → position of its best variant kept
    out: list[tuple[float, Any, Any]] = []
    for hit, form in zip(ranked, forms, strict=True):
        if form is not None and form[1]:
            if form[0] in seen_variant:
                continue  # a second one-off of the same command: the better one stands for both
            seen_variant[form[0]] = len(out)
        if form is not None and not form[1] and form[0] in seen_variant:
            # The general lesson ranked below a variant of it: it takes the variant's place.
            at = seen_variant[form[0]]
            out.insert(at, hit)
            for key, pos in seen_variant.items():
                if pos >= at:
                    seen_variant[key] = pos + 1
            continue
        out.append(hit)
    return out
