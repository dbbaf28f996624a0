"""The registry of agents: one row per agent, the one place the rest of the code learns which
agents there are.

Contract: `ROWS` holds (store name, module in `ace_engine.agents`, how views name it). `NAMES`
lists the store names (`sessions.agent`, `session_summaries.agent`, `bullets.agent` record them);
`HOOKED` those whose hooks run as `launch.py AGENT EVENT` (every agent but Claude Code, whose hooks
run as `launch.py EVENT`). `get(name)` is the agent's `base.Agent`, its module imported on first
use; `label(name)` names an agent for people without importing any module (an unknown name is
shown as recorded, cut to 40 characters; None is Claude Code: everything recorded before agents
were came from it). `agents()` imports every module (the CLI's loops, never a hook).

Cost: a tuple and two dicts at import; stdlib only, no `typing` (the hooks import this).
"""

TYPE_CHECKING = False  # not `typing.TYPE_CHECKING`: the hooks must not import `typing`
if TYPE_CHECKING:
    from .base import Agent

# (store name, module, label). The first row is the default agent.
ROWS: tuple[tuple[str, str, str], ...] = (
    ("claude", "claude_code", "Claude Code"),
    ("codex", "codex", "Codex CLI"),
    ("antigravity", "antigravity", "Antigravity CLI"),
    ("gemini", "gemini", "Gemini CLI"),
)
DEFAULT = ROWS[0][0]
NAMES: tuple[str, ...] = tuple(row[0] for row in ROWS)
HOOKED: tuple[str, ...] = NAMES[1:]
LABELS: dict[str, str] = {name: label for name, _, label in ROWS}
_MODULES: dict[str, str] = {name: module for name, module, _ in ROWS}


def get(name: str) -> "Agent":
    """The agent `name` (a store name); KeyError for one not in `ROWS`."""
    module = __import__(f"ace_engine.agents.{_MODULES[name]}", fromlist=["AGENT"])
    return module.AGENT


def find(name: object) -> "Agent | None":
    """The agent `name`, or None for anything not in `ROWS`."""
    return get(name) if isinstance(name, str) and name in _MODULES else None


def agents() -> "list[Agent]":
    """Every agent, in `ROWS` order (imports each module)."""
    return [get(name) for name in NAMES]


def label(name: str | None) -> str:
    """How a view names `name`."""
    agent = name or DEFAULT
    return LABELS.get(agent, agent[:40])
