"""Rendering bullets into the tagged blocks the hooks inject into Claude Code's context.

    <ace-patterns>
    Lessons from earlier sessions (ace playbook). Cite an id when one helps or misleads you.
    - [ctx-01jd8k2m3n4p5q6r7s8t ✓3 ✗0 conf 0.71] Run `python -m pytest` from the repo root …
    </ace-patterns>

One line per bullet with its full id and counters (✓ helpful, ✗ harmful, both implicit +
explicit marks) so the model can cite it and the feedback loop can tell what was used; a lesson
pulled from the team server says so after its id (`[ctx-… team ✓3 ✗0 conf 0.71]`), so the model
and the user know it was learned on another machine; a lesson whose anchor changed ends with its
caveat (`… (to re-check, the `build` script changed in package.json: …)`). Lesson text
is data, not instructions: every line goes through `escape.injected`, so no lesson can open or
close a tag (`</ace-patterns>`, `<system>`, `< system >`, `</system-reminder>`), start a line of
its own, or pose as a turn of the conversation (`Human:`, `System:`). Blocks stay
within a token budget and, whatever the budget, under `MAX_CHARS` (Claude Code cuts injected
context at 10,000 characters). Stdlib only: hooks import this.
"""

from __future__ import annotations

import re

from ..core.escape import injected
from ..core.fmt import estimate_tokens, tokens_of  # the one estimate (re-exported: callers read it here)
from ..playbook.sections import DEFAULT_SECTIONS, title

TYPE_CHECKING = False  # not `typing.TYPE_CHECKING`: hooks import this module and must not load `typing`
if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping, Sequence

    from ..core._types import Bullet

MAX_CHARS = 9_000
HEADER = "Lessons from earlier sessions (ace playbook). Cite an id when one helps or misleads you."
DIGEST_HEADER = "Playbook: lessons learned in earlier sessions (ace). Cite an id when one helps or misleads you."
_MIN_CONTENT_CHARS = 40  # a bullet cut shorter than this is not worth showing


def _escape_attr(value: object) -> str:
    return (str(value).replace("&", "&amp;").replace('"', "&quot;").replace("<", "&lt;").replace(">", "&gt;")
            .replace("\n", " "))


def escape_content(text: str) -> str:
    """One line of bullet text that cannot open or close any tag, start a line or fake a turn
    (`escape.injected`). `a < b` and `x -> y` stay readable."""
    return injected(text)


def _counters(bullet: Bullet) -> str:
    helpful = (bullet.get("helpful") or 0) + (bullet.get("helpful_explicit") or 0)
    harmful = (bullet.get("harmful") or 0) + (bullet.get("harmful_explicit") or 0)
    return f"✓{helpful} ✗{harmful} conf {float(bullet.get('confidence') or 0.0):.2f}"


def _content(bullet: Bullet) -> str:
    """The bullet's escaped text, and after it its caveat when what it rests on changed (`caveat`,
    set by the hooks from `store.rechecks`: playbook/staleness.py) — part of the line, so it counts
    in the budget and a cut keeps the lesson's own words first."""
    text = escape_content(bullet.get("content", ""))
    caveat = bullet.get("caveat")
    return f"{text} (to re-check, {escape_content(str(caveat))})" if caveat else text


def bullet_line(bullet: Bullet, max_content_chars: int | None = None) -> str:
    return _cut_line(bullet, _content(bullet), max_content_chars)


def _cut_line(bullet: Bullet, content: str, max_content_chars: int | None) -> str:
    """The line for already escaped `content`, cut to `max_content_chars` when given."""
    if max_content_chars is not None and len(content) > max_content_chars:
        content = content[: max(0, max_content_chars - 1)].rstrip() + "…"
    origin = " team" if bullet.get("origin") == "team" else ""
    return f"- [{injected(bullet['id'])}{origin} {_counters(bullet)}] {content}"


def _open_tag(tag: str, attrs: Mapping[str, object] | None) -> str:
    extra = "".join(f' {name}="{_escape_attr(value)}"' for name, value in (attrs or {}).items()
                    if re.fullmatch(r"[A-Za-z_][\w-]*", str(name)))
    return f"<{tag}{extra}>"


class _Block:
    """Lines added while they fit both the token budget and the character cap."""

    def __init__(self, tag: str, attrs: Mapping[str, object] | None, header: str, budget_tokens: int) -> None:
        self.open = _open_tag(tag, attrs)
        self.close = f"</{tag}>"
        self.lines = [header]
        self.budget = max(0, int(budget_tokens or 0))

    def text(self, extra: Sequence[str] = ()) -> str:
        return "\n".join([self.open, *self.lines, *extra, self.close])

    def fits(self, extra: Sequence[str]) -> bool:
        candidate = self.text(extra)
        return len(candidate) <= MAX_CHARS and estimate_tokens(candidate) <= self.budget

    def longest_cut(self, bullet: Bullet) -> str | None:
        """The bullet's line with its content cut to the most characters that still fit (at
        least `_MIN_CONTENT_CHARS`), or None."""
        content = _content(bullet)  # once, not once per probe
        lo, hi, best = _MIN_CONTENT_CHARS, len(content), None
        while lo <= hi:
            mid = (lo + hi) // 2
            line = _cut_line(bullet, content, mid)
            if self.fits([line]):
                best, lo = line, mid + 1
            else:
                hi = mid - 1
        return best


def render_patterns(tag: str, hits: Iterable[Bullet] | None, budget_tokens: int,
                    attrs: Mapping[str, object] | None = None) -> tuple[str, list[Bullet]]:
    """A `<tag …>` block of `hits` in order, within `budget_tokens` (estimated) and `MAX_CHARS`.

    Returns (text, the bullets actually shown). A bullet that doesn't fit is skipped (a shorter
    later one may); the first one is cut with `…` rather than dropped when at least
    `_MIN_CONTENT_CHARS` of it fit. Nothing to show → ('', [])."""
    block = _Block(tag, attrs, HEADER, budget_tokens)
    shown: list[Bullet] = []
    for bullet in hits or ():
        if not isinstance(bullet, dict) or not bullet.get("id"):
            continue
        line = bullet_line(bullet)
        if block.fits([line]):
            block.lines.append(line)
            shown.append(bullet)
            continue
        if not shown:
            cut = block.longest_cut(bullet)
            if cut is not None:
                block.lines.append(cut)
                shown.append(bullet)
    if not shown:
        return "", []
    return block.text(), shown


def render_digest(bullets: Iterable[Bullet] | None, budget_tokens: int, *,
                  tag: str = "ace-playbook") -> tuple[str, list[Bullet]]:
    """The session-start `<ace-playbook>` digest: bullets taken most valuable first (the order
    given) while they fit, shown grouped under their section's title (sections in the playbook's
    order). Returns (text, the bullets shown in display order); nothing → ('', [])."""
    block = _Block(tag, None, DIGEST_HEADER, budget_tokens)
    chosen: dict[str, list[Bullet]] = {}
    # The block's size so far (its tags and header, the chosen lines and their section titles, each
    # with its newline), kept as it grows: the same test as `block.fits` on the whole text, without
    # laying the text out again for every bullet tried (at 10,000 lessons, ~100 are tried).
    empty = block.text()
    length, ascii_chars = len(empty), len(empty.encode("ascii", "ignore"))
    rendered: dict[str, str] = {}  # each bullet's line is escaped once

    def line_of(bullet: Bullet) -> str:
        line = rendered.get(bullet["id"])
        if line is None:
            line = rendered[bullet["id"]] = bullet_line(bullet)
        return line

    def lines_for(groups: dict[str, list[Bullet]]) -> list[str]:
        order = [s for s in DEFAULT_SECTIONS if s in groups] + [s for s in groups if s not in DEFAULT_SECTIONS]
        out: list[str] = []
        for section in order:
            out.append(f"## {title(section)}")
            out.extend(line_of(b) for b in groups[section])
        return out

    for bullet in bullets or ():
        if not isinstance(bullet, dict) or not bullet.get("id"):
            continue
        section = bullet.get("section") or "strategies_and_hard_rules"
        added = [line_of(bullet)] + ([] if section in chosen else [f"## {title(section)}"])
        more = sum(len(x) + 1 for x in added)
        more_ascii = sum(len(x.encode("ascii", "ignore")) + 1 for x in added)
        if length + more <= MAX_CHARS and tokens_of(length + more, ascii_chars + more_ascii) <= block.budget:
            chosen.setdefault(section, []).append(bullet)
            length, ascii_chars = length + more, ascii_chars + more_ascii
    if not chosen:
        return "", []
    lines = lines_for(chosen)
    order = [s for s in DEFAULT_SECTIONS if s in chosen] + [s for s in chosen if s not in DEFAULT_SECTIONS]
    shown = [b for s in order for b in chosen[s]]
    return block.text(lines), shown
