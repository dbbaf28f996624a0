"""The one rule for peers' helpful / harmful marks, shared by both ends of the team protocol.

Contract: a lesson's helpful (and harmful) count grows by at most `MARKS_PER_DAY` a UTC day from one
peer, and by `TEAM_MARKS_PER_DAY` from the whole team as a client sees it. The server applies it per
token (`server/storage/ops.py`), the client that pulls per client id and for the team
(`team_client/inbox.py`); `grant` is the arithmetic both use.

Cost: two constants and one function; no imports.
"""

MARKS_PER_DAY = 5
TEAM_MARKS_PER_DAY = 15


def grant(want: int, have: int, spent: int, limit: int) -> int:
    """How much of a count's growth from `have` to `want` a peer may add today, `spent` of `limit` used."""
    return max(0, min(want - have, limit - spent))
