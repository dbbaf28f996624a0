"""Each session's arm while an experiment runs: `holdout` (no injection at all) or `inject`.

Contract: `arm_for(store, cfg, session_id, project_id, now, hook)` is the one check every injecting
hook makes (through `hooks.inject.safely`), for every agent (Claude Code, Codex, Gemini), and the MCP
server's lesson tools too (`mcp_server.lessons`: a lesson fetched by asking is one all the same). With
`inject.holdout` at 0 (the default) it reads nothing and answers None. Else the session's arm is
read from the store; a session without one is given one now — normally at its SessionStart, but
whichever hook comes first for a session assigns it, so an agent that skips SessionStart is held
out too. The arm is `choose(experiment_id, session_id, share)`: a hash of the two, so the same
session in the same experiment always lands in the same arm, and sessions are spread evenly
whatever their ids look like; it is recorded with the experiment's id, and never changes after.

The share is the user's setting (user-level: a repository's `.ace.toml` cannot set it). When the
setting is on and no experiment row runs (the user set it with `ace config set` or `ACE_INJECT_HOLDOUT`),
one is started here with that share, and SessionStart tells the user once (`announcement`).

Cost: off, one dict lookup. On, a primary-key read per hook; the first hook of a session adds one
small-table read, a sha256 and one insert. Stdlib only (hashlib on first assignment).
"""

TYPE_CHECKING = False  # not `typing.TYPE_CHECKING`: the hooks must not import `typing` (~3 ms)
if TYPE_CHECKING:
    from ..core.config import Config
    from ..store.interfaces import ExperimentStore

HOLDOUT = "holdout"
INJECT = "inject"
ARMS = (INJECT, HOLDOUT)


def share_of(cfg: "Config") -> float:
    """The configured share, clamped to 0..1 (a share of 1 holds every session out)."""
    try:
        value = float(cfg["inject.holdout"])
    except (TypeError, ValueError):
        return 0.0
    return min(1.0, max(0.0, value)) if value == value else 0.0  # NaN: off


def choose(experiment_id: int, session_id: str, share: float) -> str:
    """The arm of `session_id` in experiment `experiment_id`: holdout for a `share` of sessions."""
    import hashlib

    digest = hashlib.sha256(f"ace-holdout:{experiment_id}:{session_id}".encode("utf-8", "surrogatepass")).digest()
    point = int.from_bytes(digest[:8], "big") / 2**64  # uniform on [0, 1)
    return HOLDOUT if point < share else INJECT


def arm_for(store: "ExperimentStore", cfg: "Config", session_id: str | None, project_id: int | None, now: float,
            hook: str | None) -> str | None:
    """The session's arm, assigned and recorded if it has none yet; None when no experiment runs
    (or there is no session: nothing to compare)."""
    share = share_of(cfg)
    if share <= 0.0 or not session_id:
        return None
    found = store.session_arm(session_id)
    if found is not None:
        return found["arm"]
    running = store.ensure_experiment(share, now)  # its share, should the setting have changed since
    arm = choose(running["id"], session_id, running["share"])
    return store.set_session_arm(session_id, running["id"], project_id, arm, now, hook)["arm"]


def announcement(store: "ExperimentStore", cfg: "Config", now: float) -> str | None:
    """One line for the user, once per experiment, when one runs that no one announced yet (the
    CLI's `ace experiment start` announces its own); None otherwise."""
    share = share_of(cfg)
    if share <= 0.0:
        return None
    running = store.running_experiment()
    if running is None or running["announced_at"] is not None or not store.announce_experiment(running["id"], now):
        return None
    return (f"ace is running an experiment: {round(running['share'] * 100)} % of sessions get no lessons, so "
            f"`ace report` can tell whether they help; `ace experiment stop` ends it.")
