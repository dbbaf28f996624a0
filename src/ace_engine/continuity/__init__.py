"""Continuity: the next session knows what the last ones asked, did and left open.

Lessons are one half of memory; this is the other. After each Stop the learning worker writes a
summary of the session (`summarize.py`: offline, from the captured tool calls and messages, with
an optional LLM narrative from `narrative.py`) into `session_summaries`. At SessionStart (startup,
clear) the hook reads the few worth carrying over and injects `<ace-recent-context>` next to the
lesson digest (`recent.py`), within the same budget; after a compaction the block comes back with
the pins. `ace recent` and `ace session ID` show the same summaries.

The settings are rows of `core.config.SETTINGS` (`continuity.*`); `setting(cfg, key)` reads one
(`core.config.value_of`: the table's default for a config that lacks it). Cost: importing this
package defines two dicts (the hooks import it, and `core.config` with it).
"""

from ..core.config import DEFAULTS as _CONFIG_DEFAULTS
from ..core.config import value_of

TYPE_CHECKING = False  # not `typing.TYPE_CHECKING`: the hooks must not import `typing` (~3 ms)
if TYPE_CHECKING:
    from typing import Any

# The `continuity.*` settings' defaults: a view of the one table, not a copy.
DEFAULTS: "dict[str, Any]" = {key: value for key, value in _CONFIG_DEFAULTS.items() if key.startswith("continuity.")}

# The labels that start a summary's lines (`summarize.lines` writes them), with the rank a line
# keeps when the block is cut to fit (0 is kept longest): what was asked names the session, then
# the open ends (a failing check or an unfinished task before uncommitted files), then what was done.
# `recent.py` reads a stored line's rank from its label.
LABELS: "dict[str, tuple[str, int]]" = {
    "asked": ("Asked:", 0),
    "interrupted": ("Cut off mid-task", 1),
    "stopped": ("Ended while about to:", 1),
    "failing": ("Left failing:", 1),
    "waiting": ("Waiting on you:", 1),
    "next": ("Left to do (agent said):", 2),
    "user": ("Left to do (you said):", 2),
    "uncommitted": ("Uncommitted when it ended:", 3),
    "last": ("Last asked:", 4),
    "narrative": ("In short:", 5),
    "changed": ("Changed:", 6),
    "commits": ("Commits:", 7),
    "passed": ("Passed at the end:", 8),
    "fixed": ("Fixed along the way:", 9),
    "unfixed": ("Failed, not retried:", 10),
    "also": ("Also asked:", 11),
}


# The summary's shape (`summarize.VERSION`). 2: every field screened on its own and someone else's
# words quoted (trust.py). The hook injects only rows of this version or later: a row written by an
# older version was screened line by line only.
VERSION = 2


def label(name: str) -> str:
    return LABELS[name][0]


setting = value_of  # `cfg[key]`, or the table's default when `cfg` lacks the key


def candidates(store: "Any", cfg: "Any", project_id: "int | None", session_id: "str | None",
               now: float) -> "list[dict[str, Any]]":
    """The SessionStart read: the project's summaries worth carrying over, last active within
    `continuity.max_age_days`, not the asking session's (newest first, at most 12). Here rather
    than in `recent.py` so that a project with none costs the hook one indexed query and no more
    imports."""
    if project_id is None or not setting(cfg, "continuity.enabled"):
        return []
    since = now - float(setting(cfg, "continuity.max_age_days")) * 86400
    return store.recent_summaries(project_id, since=since, exclude_session=session_id, limit=12, min_version=VERSION)
