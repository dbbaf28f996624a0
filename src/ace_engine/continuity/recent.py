"""The `<ace-recent-context>` block: where the last sessions of this project left off, at SessionStart.

    <ace-recent-context>
    Where recent sessions of this project left off (ace). Check the current state before relying on it.
    ## yesterday 17:40 · branch fix-login · session 1a2b3c4d
    - Asked: the calc tests fail, fix calc.py and add subtract()
    - Left failing: tests `python -m pytest -q` — test_calc.py::test_sub - assert 5 == -1
    - Changed: calc.py (edited ×2), test_calc.py (edited)
    </ace-recent-context>

What a row holds was screened by the worker, field by field (`trust.py`: the lesson policy, the
provenance rule for what the user didn't write, someone else's words quoted after who said them);
rows written before that (summary version < `continuity.VERSION`) are not read at all.

Choosing: the project's summaries worth carrying over (`carry`), last active within
`continuity.max_age_days`, never the asking session; this branch's first (the branch is read from
`.git/HEAD`, no `git` process), then those with open ends, then the newest; at most
`continuity.sessions` of them. Rendering: each stored line passes `escape.injected` (the same
escaping as every lesson line: it can't open or close a tag, start a line or fake a turn), the
block stays within the token budget it is given and `render.MAX_CHARS`; an entry that doesn't fit
whole loses its least important lines first (`continuity.LABELS`: what was asked is kept longest,
then the open ends, then what was done). Nothing worth saying → no block at all.

Hook path: stdlib only, no `typing`; the rows are read before (`continuity.candidates`: one
indexed read of precomputed summaries), nothing is summarised here. The ids shown are kept in the
session's state so that a compaction brings back the same sessions (`recalled`).
"""


from ..core.escape import injected
from ..core.fmt import day_relative, estimate_tokens
from ..retrieval.render import MAX_CHARS
from . import LABELS, setting
from .head import read_head

TYPE_CHECKING = False  # not `typing.TYPE_CHECKING`: the hooks must not import `typing` (~3 ms)
if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Any

TAG = "ace-recent-context"
HEADER = "Where recent sessions of this project left off (ace). Check the current state before relying on it."
STATE_KEY = "recent_shown"
_PRIORITIES = tuple(sorted(LABELS.values(), key=lambda item: -len(item[0])))  # longest label first
_OTHER = 12


def current_branch(root: "str | None") -> "str | None":
    """The branch checked out at `root`, read from its HEAD file; None when detached or unknown."""
    read = read_head(root)
    head = read[1].strip() if read else ""
    return head[len("ref: refs/heads/"):] if head.startswith("ref: refs/heads/") else None


def rank(rows: "Sequence[dict[str, Any]]", branch: "str | None") -> "list[dict[str, Any]]":
    """This branch's sessions first, then those with open ends, then the newest."""
    return sorted(rows, key=lambda r: (r.get("branch") != branch, not r.get("open_ends"),
                                       -float(r.get("last_at") or 0.0)))


when = day_relative  # "today 14:05", "yesterday 17:40", "3 days ago" (local time)


def _priority(line: str) -> int:
    for prefix, priority in _PRIORITIES:
        if line.startswith(prefix):
            return priority
    return _OTHER


def short_ids(ids: "Sequence[str]", least: int = 8) -> "dict[str, str]":
    """Each id cut to `least` characters, or longer where that would make two of them read the same
    (`sess-0001` and `sess-0002` are not both `sess-000`)."""
    out = {}
    for sid in ids:
        n = least
        while n < len(sid) and any(o != sid and o[:n] == sid[:n] for o in ids):
            n += 1
        out[sid] = sid[:n]
    return out


def _entry(row: "dict[str, Any]", now: float, short: "str | None" = None) -> "tuple[str, list[tuple[int, str]]]":
    """(the entry's heading, its lines escaped and with their priorities)."""
    parts = [when(float(row.get("last_at") or now), now)]
    if row.get("branch"):
        parts.append(f"branch {row['branch']}")
    parts.append(f"session {short or str(row.get('session_id') or '')[:8]}")
    heading = "## " + injected(" · ".join(parts))
    lines = [(_priority(line), "- " + injected(line)) for line in str(row.get("text") or "").splitlines()
             if line.strip()]
    return heading, lines


def _fits(lines: "list[str]", budget: int) -> bool:
    text = "\n".join(lines)
    return len(text) <= MAX_CHARS and estimate_tokens(text) <= budget


def render(rows: "Sequence[dict[str, Any]]", budget_tokens: int, now: float,
           limit: "int | None" = None) -> "tuple[str, list[str]]":
    """The block for `rows` in the order given, within `budget_tokens`: (text, session ids shown);
    ('', []) when nothing fits or nothing is worth saying."""
    budget = max(0, int(budget_tokens or 0))
    opening, closing = f"<{TAG}>", f"</{TAG}>"
    out = [opening, HEADER]
    shown: list[str] = []
    short = short_ids([str(r.get("session_id") or "") for r in rows])
    for row in rows:
        if limit is not None and len(shown) >= limit:
            break
        heading, lines = _entry(row, now, short.get(str(row.get("session_id") or "")))
        if not lines:
            continue
        # Keep the most important lines that fit (at least one), shown in their stored order.
        order = sorted(range(len(lines)), key=lambda i: (lines[i][0], i))
        for keep in range(len(lines), 0, -1):
            kept = sorted(order[:keep])
            candidate = out + [heading] + [lines[i][1] for i in kept]
            if _fits(candidate + [closing], budget):
                out = candidate
                shown.append(str(row["session_id"]))
                break
    if not shown:
        return "", []
    return "\n".join(out + [closing]), shown


def block(rows: "Sequence[dict[str, Any]]", cfg: "Any", root: "str | None", now: float,
          budget_tokens: int) -> "tuple[str, list[str]]":
    """SessionStart (startup, clear): the block for the project's candidate rows
    (`continuity.candidates`), or ('', [])."""
    if not rows or budget_tokens <= 0:
        return "", []
    branch = current_branch(root) if any(r.get("branch") for r in rows) else None
    return render(rank(rows, branch), budget_tokens, now, int(setting(cfg, "continuity.sessions")))


def recalled(store: "Any", cfg: "Any", session_id: "str | None", now: float,
             budget_tokens: int) -> "tuple[str, list[str]]":
    """SessionStart(compact): the sessions this session was shown before, again, or ('', [])."""
    if not session_id or budget_tokens <= 0 or not setting(cfg, "continuity.enabled"):
        return "", []
    ids = (store.get_state(session_id, STATE_KEY) or "").split()
    if not ids:
        return "", []
    found = store.session_summaries(ids)
    rows = [found[i] for i in ids if i in found and found[i].get("text")]
    return render(rows, budget_tokens, now)
