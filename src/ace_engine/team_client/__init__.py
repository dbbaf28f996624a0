"""Team sync, the client side: push this machine's lessons to the project's team server, pull the
team's (docs/team-server.md, "Client side").

Contract:
- `bind(project, url, token, …)` checks the server (`/v1/health`) and the token on the project
  before saving the binding (`remote.py`: user data directory only, never a repository);
- `push(store, project)` sends the outbox (`outbox.py`) in batches of 500 and moves
  `sync_state.push_cursor` only on the server's answer: offline, nothing is lost;
- `pull(store, project, cfg)` applies the server's log page by page (`inbox.py`), each page and
  its cursor in one local transaction;
- `status(store, project)` reports the binding, the server's reachability, cursors, outbox size
  and the last error, without raising for an unreachable server;
- `after_learning(store, project, cfg, now)` is the learning worker's call after a job: push when
  the outbox holds something, pull at most every `remote.pull_minutes`; every error is caught and
  logged (offline is normal) and kept as `last_error`.
The cursors belong to one server and project (`sync_state.remote`): binding the local project to
another one starts both at 0 (a re-pull is idempotent, a re-push answered `duplicate`).

Errors are `RemoteError`s (`remote.py`, `client.py`) naming the problem and the fix. Cost: httpx
is imported only when a server is called; a project without a remote costs one small file read.
"""

from __future__ import annotations

import contextlib
import time
from typing import TYPE_CHECKING, Any

from ..core import log
from ..core.config import DEFAULTS, value_of
from ..core.project import Project
from . import outbox
from .remote import Remote, RemoteError, client_id, get_remote

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator, Mapping

    from ..core.config import Config
    from .client import TeamClient

__all__ = ["RemoteError", "after_learning", "bind", "client_id", "open_client", "pull", "push", "require_remote",
           "status"]

PULL_PAGE = 500


def open_client(remote: Remote) -> TeamClient:
    """A client for the remote's server with its token (close it, or use it in `with`)."""
    from .client import TeamClient  # httpx: only when a server is called

    return TeamClient(remote.url, remote.token())


def require_remote(project: Project, remote: Remote | None = None) -> Remote:
    """`remote`, else the project's binding; RemoteError with the fix when it has none."""
    remote = remote or get_remote(project.key)
    if remote is None:
        raise RemoteError(f"no team server is set for {project.name}; run `ace remote set URL --token TOKEN` "
                          "inside the repository")
    return remote


def _project_id(store: Any, project: Project, now: float) -> int:
    return int(store.ensure_project(project.key, project.root, project.remote, project.name, now))


def _state(store: Any, project_id: int, remote: Remote, now: float) -> dict[str, Any]:
    """The project's sync_state for `remote`; cursors start at 0 for a remote it was not bound to."""
    row = store.sync_state(project_id)
    if row is None or row["remote"] != remote.identity:
        store.set_sync_state(project_id, {"remote": remote.identity, "push_cursor": 0, "pull_cursor": 0,
                                          "last_error": None}, now)
        row = store.sync_state(project_id)
    return dict(row)


@contextlib.contextmanager
def _calling(store: Any, project_id: int, remote: Remote, client: TeamClient | None, what: str,
             now: float) -> Iterator[TeamClient]:
    """`client`, else one opened for `remote` and closed after the block; a RemoteError in the block
    is kept as the project's `last_error` ("push: …", "pull: …") and raised on."""
    own = client is None
    client = client or open_client(remote)
    try:
        yield client
    except RemoteError as exc:
        store.set_sync_state(project_id, {"last_error": f"{what}: {exc}"}, now)
        raise
    finally:
        if own:
            client.close()


def bind(store: Any, project: Project, url: str, token: str, *, name: str | None = None, insecure: bool = False,
         now: float | None = None, client: TeamClient | None = None) -> dict[str, Any]:
    """`ace remote set`: check URL and token against the server, then save the binding. Returns
    {url, project, created (the server made the project for it), server (its project answer), version}."""
    from .client import TeamClient
    from .remote import check_token, check_url, save_remote

    now = time.time() if now is None else now
    url = check_url(url, insecure=insecure)
    token = check_token(token)
    name = (name or project.name).strip()
    if not name:
        raise RemoteError("the server project needs a name; pass --project NAME")
    from .client import ServerRefused

    own = client is None
    client = client or TeamClient(url, token)
    created = False
    try:
        health = client.health()
        try:
            answer = client.project(name)
        except ServerRefused as missing:
            if missing.status != 404:
                raise
            # A project the server does not have yet: an org-wide write token creates it with an
            # empty push (a project-scoped or read token still gets the 404, with its fix).
            try:
                client.push(name, client_id(), [])
            except ServerRefused as exc:
                raise (missing if exc.status in (403, 404) else exc) from None
            answer, created = client.project(name), True
    finally:
        if own:
            client.close()
    remote = save_remote(project.key, url, name, token, now)
    _state(store, _project_id(store, project, now), remote, now)
    return {"url": url, "project": name, "created": created, "server": answer, "version": health.get("version")}


def push(store: Any, project: Project, *, remote: Remote | None = None, client: TeamClient | None = None,
         now: float | None = None) -> dict[str, Any]:
    """Send the outbox; returns {sent, applied, duplicate, quarantined, rejected, rejections, cursor, outbox}."""
    now = time.time() if now is None else now
    remote = require_remote(project, remote)
    project_id = _project_id(store, project, now)
    cursor = int(_state(store, project_id, remote, now)["push_cursor"])
    report: dict[str, Any] = {"sent": 0, "applied": 0, "duplicate": 0, "quarantined": 0, "rejected": 0,
                              "rejections": []}
    with _calling(store, project_id, remote, client, "push", now) as client:
        me = client_id()
        while True:
            batch = outbox.next_batch(store.team_sync, project_id, cursor)
            if not batch.read:
                break
            if batch.deltas:
                answer = client.push(remote.project, me, batch.deltas)
                report["sent"] += len(batch.deltas)
                for delta, result in zip(batch.deltas, answer["results"], strict=True):
                    status = str(result.get("status")) if isinstance(result, dict) else "?"
                    report[status] = report.get(status, 0) + 1
                    if status == "rejected":
                        report["rejections"].append({"key": delta["key"], "op": delta["op"],
                                                     "reason": result.get("reason")})
            cursor = batch.last_change
            store.set_sync_state(project_id, {"push_cursor": cursor, "pushed_at": now, "last_error": None}, now)
    for rejection in report["rejections"][:20]:
        log.warning("sync", f"push: {rejection['op']} {rejection['key']} rejected by the server: {rejection['reason']}")
    report["cursor"] = cursor
    report["outbox"] = store.outbox_size(project_id, cursor)
    return report


def pull(store: Any, project: Project, cfg: Config | Mapping[str, Any] | None = None, *, remote: Remote | None = None,
         client: TeamClient | None = None, now: float | None = None, from_start: bool = False,
         on_applied: Callable[[], object] | None = None) -> dict[str, Any]:
    """Apply the team's deltas after the pull cursor (all of them with `from_start`: idempotent);
    returns {applied, own, skipped, cursor, last_seq}."""
    from ..playbook.playbook import Playbook
    from . import inbox

    now = time.time() if now is None else now
    remote = require_remote(project, remote)
    project_id = _project_id(store, project, now)
    cursor = 0 if from_start else int(_state(store, project_id, remote, now)["pull_cursor"])
    hosts = tuple(value_of(cfg, "learning.trusted_hosts") or ())
    playbook = Playbook(store, project, trusted_hosts=hosts)
    report: dict[str, Any] = {"applied": 0, "own": 0, "skipped": 0}
    with _calling(store, project_id, remote, client, "pull", now) as client:
        me = client_id()
        while True:
            answer = client.pull(remote.project, cursor, PULL_PAGE)
            report["last_seq"] = answer.get("last_seq")
            cursor, counts = inbox.apply_page(store, playbook, answer["deltas"], project_id=project_id, client_id=me,
                                              cursor=cursor, now=now, replay=from_start, on_applied=on_applied)
            for key, n in counts.items():
                report[key] += n
            if not answer.get("more") or not answer["deltas"]:
                break
        behind = isinstance(report.get("last_seq"), int) and report["last_seq"] < cursor
        error = (f"pull: the server's log ends at seq {report['last_seq']}, before this machine's cursor {cursor} "
                 "(was the server restored from a backup?); run `ace pull --from-start`") if behind else None
        store.set_sync_state(project_id, {"pulled_at": now, "last_error": error}, now)
    report["cursor"] = cursor
    return report


def status(store: Any, project: Project, *, check: bool = True, now: float | None = None) -> dict[str, Any]:
    """The binding and where sync stands; `check` asks the server (an error is reported, not raised)."""
    now = time.time() if now is None else now
    remote = get_remote(project.key)
    out: dict[str, Any] = {"project": project.name, "remote": None}
    if remote is None:
        return out
    project_id = _project_id(store, project, now)
    state = store.sync_state(project_id) or {}
    same = state.get("remote") == remote.identity
    push_cursor = int(state.get("push_cursor") or 0) if same else 0
    out.update({
        "remote": {"url": remote.url, "project": remote.project, "since": remote.created_at},
        "client_id": client_id(),
        "push_cursor": push_cursor, "pull_cursor": int(state.get("pull_cursor") or 0) if same else 0,
        "outbox": store.outbox_size(project_id, push_cursor),
        "pushed_at": state.get("pushed_at") if same else None, "pulled_at": state.get("pulled_at") if same else None,
        "last_error": state.get("last_error") if same else None,
    })
    if check:
        try:
            with open_client(remote) as client:
                out["server"] = {"reachable": True, "version": client.health().get("version")}
                out["server"]["project"] = client.project(remote.project)
        except RemoteError as exc:
            out.setdefault("server", {"reachable": False})
            out["server"]["error"] = str(exc)
    return out


def _minutes(cfg: Config | Mapping[str, Any] | None) -> float:
    try:
        return float(value_of(cfg, "remote.pull_minutes"))
    except (TypeError, ValueError):
        return float(DEFAULTS["remote.pull_minutes"])


def after_learning(store: Any, project: Project | str, cfg: Config | Mapping[str, Any] | None,
                   now: float) -> dict[str, Any] | None:
    """The learning worker's sync after a job (see the module contract). `project` is a Project or
    a project key of the store. Returns what was done ({push?, pull?, error?}), None without a
    remote. Never raises."""
    try:
        if isinstance(project, str):
            project_id = store.project_id(project)
            row = store.project_row(project_id) if project_id is not None else None
            if row is None:
                return None
            key, project = project, Project(row["root"], row["remote"])
            project.key = key  # the store's key for it, whatever the directory says today
        remote = get_remote(project.key)
        if remote is None:
            return None
        project_id = _project_id(store, project, now)
        state = _state(store, project_id, remote, now)
        done: dict[str, Any] = {}
        if store.outbox_size(project_id, int(state["push_cursor"])):
            done["push"] = push(store, project, remote=remote, now=now)
        minutes = _minutes(cfg)
        if minutes >= 0 and now - float(state.get("pulled_at") or 0.0) >= minutes * 60:
            done["pull"] = pull(store, project, cfg, remote=remote, now=now)
        return done
    except RemoteError as exc:  # offline, a revoked token…: kept as last_error, retried next time
        log.write("INFO", "sync", f"team sync after learning: {exc}")
        return {"error": str(exc)}
    except Exception as exc:  # noqa: BLE001 — the worker must go on learning whatever the sync does
        log.error("sync", f"team sync after learning failed: {type(exc).__name__}: {exc}")
        return {"error": f"{type(exc).__name__}: {exc}"}
