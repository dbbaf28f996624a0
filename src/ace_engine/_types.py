"""The records that cross layers, as types: one place to read what a bullet, a job, a trajectory
or a hook's input holds.

Types only, for mypy: every module imports this under `if TYPE_CHECKING:` (with
`from __future__ import annotations` where the names appear in signatures), so nothing here is
imported at run time and the hooks pay nothing for it. The values themselves stay plain dicts
(rows from SQLite, JSON from Claude Code); these TypedDicts say which keys they carry.

Sections are owned by the layer that produces the record; keep each next to its siblings.
"""

from typing import Any, Literal, NotRequired, TypedDict

# -- capture (hook input and records) ---------------------------------------------------------------

# -- store rows: tool events, sessions --------------------------------------------------------------

# -- playbook: bullets and delta operations ---------------------------------------------------------

# -- jobs and learning: trajectories, reflections ---------------------------------------------------

__all__: list[str] = []
_ = (Any, Literal, NotRequired, TypedDict)  # used by the sections as they fill in
