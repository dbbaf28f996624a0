"""Re-screening: stored lessons put through today's safety policy when it is newer than theirs.

The policy (`safety.concerns` and the provenance rule, `Playbook.screen`) runs on every lesson that
*enters* the playbook. A lesson stored by an older ace-engine — or before a rule was added — stays
`active` with the old verdict: upgrading would leave a `bash -c "$(curl … raw.githubusercontent.com
…)"` lesson learned by the old filter in every SessionStart. So the store records the policy
version its lessons were screened under (`store.policy_version()`, `policy_version.POLICY_VERSION`),
and when that is older:

- `rescreen(store)` runs every active bullet of every project and of the global scope through the
  policy with the hosts the curator would trust there (user-level `learning.trusted_hosts`, from
  the project's config as the learning worker loads it, plus the project's exact git remote host;
  global lessons, injected into every project, get the user-level hosts only), quarantines the
  flagged ones (`Playbook.quarantine`, reason "re-screened under safety policy vN: …", concerns in
  the provenance for `ace review`), then records the version. Interrupted, it simply runs again:
  quarantined bullets are not active any more.
- the hooks inject nothing meanwhile (`hooks.inject.screened`) and start `main` detached;
- `ensure_screened(store)` is what the learning worker, `ace sync` and `ace doctor --fix` call
  first: one query when the store is current, else it waits for a running re-screen (the lock)
  and runs one itself if still needed.

Cost: ~0.3 ms per active lesson (10,000 lessons: ~3 s), plus one config load per project; only
when the policy version changed, never on a hook's path (the hook only spawns `main`).
"""

from __future__ import annotations

import time

from ..core import config as config_mod
from ..core import log
from ..core.background import named_lock
from ..store.policy_version import POLICY_VERSION
from . import safety
from .playbook import Playbook

TYPE_CHECKING = False  # not `typing.TYPE_CHECKING`: the types are for mypy, nothing loads `typing` for them
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable
    from typing import Any

    from ..core._types import Bullet, ProjectRow
    from ..core.config import Config
    from ..store.interfaces import MetaStore, SessionsStore, Store
    from ..store.sqlite import SQLiteStore

    LoadConfig = Callable[[str | None], Config]

# What can reach the agent or a synced file. (Quarantined, archived and candidate lessons never do;
# a candidate is screened when it is promoted, `Playbook.promote`.)
SCREENED_STATUSES = ("active",)
SOURCE = "rescreen"


def outdated(store: MetaStore) -> bool:
    """Were the stored lessons last screened under an older policy than this code's? One query."""
    return store.policy_version() < POLICY_VERSION


def _hosts_by_scope(store: SessionsStore, scopes: Iterable[int | None],
                    load_config: LoadConfig) -> dict[int | None, tuple[str, ...]]:
    """Trusted hosts per scope (project id, None for global), as the curator would have them."""
    user_hosts = tuple(load_config(None)["learning.trusted_hosts"] or ())
    projects: dict[int | None, ProjectRow] = {row["id"]: row for row in store.list_projects()}
    out: dict[int | None, tuple[str, ...]] = {}
    for scope in scopes:
        row = projects.get(scope)
        if row is None:  # the global scope, or a project whose row is gone
            out[scope] = user_hosts
            continue
        # The learning worker loads the project's config (a trusted `.ace.toml` may add hosts;
        # config.py ignores the key in an untrusted one); the remote host is the project's own.
        cfg_hosts = tuple(load_config(row["root"])["learning.trusted_hosts"] or ())
        remote = safety.remote_host(row["remote"])
        out[scope] = cfg_hosts + ((remote,) if remote else ())
    return out


def rescreen(store: Store, *, now: float | None = None, load_config: LoadConfig = config_mod.load) -> dict[str, Any]:
    """Quarantine every active lesson the current policy flags; record the policy version.
    Returns {"version", "screened", "quarantined": [{"id", "concerns"}]}. The caller holds the
    re-screen lock (`ensure_screened` / `main` do)."""
    now = now or time.time()
    bullets = store.bullets_in_every_scope(SCREENED_STATUSES)
    scopes: dict[int | None, list[Bullet]] = {}
    for bullet in bullets:
        scopes.setdefault(bullet["project_id"], []).append(bullet)
    hosts = _hosts_by_scope(store.sessions, scopes, load_config)
    reason_head = f"re-screened under safety policy v{POLICY_VERSION}: "
    quarantined: list[dict[str, Any]] = []
    for scope, members in scopes.items():
        # project=None: the playbook then trusts exactly `hosts[scope]` and registers no project;
        # operations by id work on any scope.
        playbook = Playbook(store, None, trusted_hosts=hosts[scope])
        with playbook:  # domain counts refreshed once per scope
            for bullet in members:
                # Both checks: the pattern list and the provenance rule on the origins the lesson
                # recorded (a lesson learned before origins existed: its source's default).
                concerns = playbook.screen(bullet["content"], bullet["provenance"] or {})
                if not concerns:
                    continue
                with store.transaction():  # the concerns and the status change land together
                    store.update_bullet(bullet["id"], {"provenance": {**bullet["provenance"], "concerns": concerns}})
                    playbook.quarantine(bullet["id"], source=SOURCE, reason=reason_head + "; ".join(concerns), now=now)
                quarantined.append({"id": bullet["id"], "concerns": concerns})
    store.set_policy_version(POLICY_VERSION)
    if quarantined:
        log.warning("rescreen", f"safety policy v{POLICY_VERSION}: {len(quarantined)} of {len(bullets)} "
                    "stored lessons quarantined (`ace review`): " + ", ".join(q["id"] for q in quarantined[:20]))
    return {"version": POLICY_VERSION, "screened": len(bullets), "quarantined": quarantined}


def ensure_screened(store: Store, *, now: float | None = None) -> dict[str, Any] | None:
    """Re-screen first if the store is outdated; None when it was current (one query). Waits for
    a re-screen another process runs (the hooks start one in the background), then checks again."""
    if not outdated(store.meta):
        return None
    lock = named_lock("rescreen")  # the one a hook hands to the child running `main`
    lock.acquire(blocking=True)
    try:
        if not outdated(store.meta):  # the one we waited for did it
            return None
        return rescreen(store, now=now)
    finally:
        lock.release()


def main(lock_fd: int | None = None) -> None:
    """Entry point of the detached re-screen a hook starts (`maintenance.maybe_start_rescreen`),
    holding the inherited lock for its whole life."""
    from ..store.detached import run_detached

    def work(store: SQLiteStore) -> None:
        if outdated(store.meta):
            result = rescreen(store)
            log.write("INFO", "rescreen", f"{result['screened']} stored lessons re-screened under safety policy "
                                          f"v{result['version']}: {len(result['quarantined'])} quarantined")

    run_detached(named_lock("rescreen"), lock_fd, work, area="rescreen", failure="re-screen of stored lessons failed")
