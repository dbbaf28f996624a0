"""`ace server run` and `ace server token create / list / revoke`: the team server's commands.

`run` serves `server.app.create_app` with uvicorn on `--host` (default 127.0.0.1: put a
TLS-terminating proxy in front; the server speaks plain HTTP) and `--port` (8765); `--workers N`
runs N processes on that one port (uvicorn's supervisor, `server.app.from_environment` in each):
they share everything through the database, as separate replicas do. Every option
also comes from the environment: ACE_SERVER_DATABASE, ACE_SERVER_HOST, ACE_SERVER_PORT,
ACE_SERVER_MAX_BODY_BYTES, ACE_SERVER_RATE, ACE_SERVER_BURST, ACE_SERVER_WORKERS,
ACE_SERVER_ACCESS_LOG. `--database` is `sqlite:///path`
(default: `team-server.db` in the data directory) or `postgresql://…`.

`token create` prints the new token once — only its SHA-256 is stored, so it cannot be shown
again — scoped to one project (`--project`, created if new) or to every project of the org
(`--all-projects`), with scope read < write < admin. `token list` never shows a secret (it has
none to show); `token revoke ID_OR_PREFIX` stops a token at once. They open the same `--database`
as `run`.

`run` binds its port before anything else: a port in use (or a host that does not resolve) is one
`error:` line naming the fix and exit code 1, and a database that cannot be opened (a wrong
PostgreSQL URL: one line, within seconds) is the same; nothing is left running or half-opened.

Starlette and uvicorn are imported inside `run` only, so `ace --help` stays fast and the token
commands work without the `server` extra; when they are missing, `run` says what to install.

Cost: nothing at import but click; `run` blocks serving until interrupted.
"""

from __future__ import annotations

import errno
import os
import socket
import time
from typing import Any

import click

from .common import extra_hint, json_option
from .output import emit_json, fail, iso, table, when

# An idle keep-alive connection is kept this long (uvicorn's default is 5 s). Longer than a proxy's
# own idle timeout towards the server (compose.yaml's Caddy: 30 s), so the proxy, not the server,
# closes idle connections: otherwise a request sent just as the server closes one fails.
KEEP_ALIVE_S = 75
# Plain echo for the token itself: it must come out exactly, on a line of its own.
say = click.echo

database_option = click.option(
    "--database", envvar="ACE_SERVER_DATABASE", default=None, metavar="URL",
    help="sqlite:///path or postgresql://user@host/db (env ACE_SERVER_DATABASE; default: team-server.db "
         "in the data directory).")


def _open(url: str | None) -> Any:
    from ..server.storage.db import TeamDB  # psycopg loads only for a postgresql:// URL

    return TeamDB.open(url)


@click.group("server")
def server() -> None:
    """Run the team server, and manage its access tokens."""


@server.command("run")
@database_option
@click.option("--host", envvar="ACE_SERVER_HOST", default="127.0.0.1", show_default=True,
              help="Address to listen on (env ACE_SERVER_HOST). Keep it local behind a TLS proxy.")
@click.option("--port", envvar="ACE_SERVER_PORT", type=click.IntRange(1, 65535), default=8765, show_default=True,
              help="Port (env ACE_SERVER_PORT).")
@click.option("--max-body-bytes", envvar="ACE_SERVER_MAX_BODY_BYTES", type=click.IntRange(1024), default=1 << 20,
              show_default=True, help="Largest request body; larger ones get 413 (env ACE_SERVER_MAX_BODY_BYTES).")
@click.option("--rate", envvar="ACE_SERVER_RATE", type=click.FloatRange(min=0.01), default=20.0, show_default=True,
              help="Requests per second per token (env ACE_SERVER_RATE).")
@click.option("--burst", envvar="ACE_SERVER_BURST", type=click.IntRange(1), default=40, show_default=True,
              help="Requests a token may make at once before the rate applies (env ACE_SERVER_BURST).")
@click.option("--workers", envvar="ACE_SERVER_WORKERS", type=click.IntRange(1, 64), default=1, show_default=True,
              help="Server processes on this port; they share sessions and limits through the database "
                   "(env ACE_SERVER_WORKERS).")
@click.option("--access-log/--no-access-log", envvar="ACE_SERVER_ACCESS_LOG", default=True, show_default=True,
              help="A log line per request (env ACE_SERVER_ACCESS_LOG). Behind a proxy that logs requests, "
                   "off saves ~5% of the server's CPU.")
def run(database: str | None, host: str, port: int, max_body_bytes: int, rate: float, burst: int,
        workers: int, access_log: bool) -> None:
    """Serve the team API (plain HTTP: terminate TLS in a proxy in front of it)."""
    try:
        import uvicorn

        from ..server.app import create_app
    except ImportError as exc:
        fail(f"the team server needs its extra ({exc.name} is missing): {extra_hint('server')}")
    sock = _listen(host, port)  # before the database: a port in use is one line, and nothing opened
    try:
        db = _open(database)
    except BaseException:
        sock.close()
        raise
    if host not in ("127.0.0.1", "localhost", "::1"):
        say(f"Listening on {host}:{port} in plain HTTP: put a TLS-terminating proxy in front of it.", err=True)
    if workers > 1:  # the database was opened (and migrated) once here; each worker opens its own
        db.close()
        try:
            _run_workers(sock, database, host, port, max_body_bytes, rate, burst, workers, access_log)
        finally:
            sock.close()
        return
    try:
        app = create_app(db, max_body_bytes=max_body_bytes, rate_per_second=rate, burst=burst)
        config = uvicorn.Config(app, host=host, port=port, log_level="info", server_header=False,
                                timeout_keep_alive=KEEP_ALIVE_S, access_log=access_log)
        uvicorn.Server(config).run(sockets=[sock])
    finally:
        sock.close()
        db.close()


def _run_workers(sock: socket.socket, database: str | None, host: str, port: int, max_body_bytes: int,
                 rate: float, burst: int, workers: int, access_log: bool) -> None:
    """`workers` processes serving `sock`, each with its own database connections (opened in the
    child: a pool does not survive a fork). The settings reach them through the environment."""
    import uvicorn
    from uvicorn.supervisors import Multiprocess

    os.environ.update({"ACE_SERVER_DATABASE": database or "", "ACE_SERVER_MAX_BODY_BYTES": str(max_body_bytes),
                       "ACE_SERVER_RATE": repr(rate), "ACE_SERVER_BURST": str(burst)})
    config = uvicorn.Config("ace_engine.server.app:from_environment", factory=True, host=host, port=port,
                            workers=workers, log_level="info", server_header=False, timeout_keep_alive=KEEP_ALIVE_S,
                            access_log=access_log)
    Multiprocess(config, sockets=[sock]).run()


def _listen(host: str, port: int) -> socket.socket:
    """A socket bound to host:port for uvicorn, or one `error:` line naming the fix (exit 1)."""
    try:
        family, kind, proto, _, address = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM,
                                                             flags=socket.AI_PASSIVE)[0]
    except socket.gaierror as exc:
        fail(f"cannot listen on {host}:{port}: the host does not resolve ({exc.strerror}); give an address "
             "of this machine with --host (or ACE_SERVER_HOST)")
    sock = socket.socket(family, kind, proto)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(address)
    except OSError as exc:
        sock.close()
        if exc.errno == errno.EADDRINUSE:
            fail(f"port {port} on {host} is already in use (another ace server?); stop it, or pick another "
                 "port with --port (or ACE_SERVER_PORT)")
        fail(f"cannot listen on {host}:{port}: {exc.strerror or exc}; give another --host or --port")
    sock.set_inheritable(True)
    return sock


@server.group("token")
def token_group() -> None:
    """Create, list and revoke the server's access tokens."""


@token_group.command("create")
@database_option
@click.option("--project", "project_name", default=None, help="The project the token covers (created if new).")
@click.option("--all-projects", is_flag=True, help="Cover every project of the org instead of one.")
@click.option("--scope", type=click.Choice(["read", "write", "admin"]), required=True,
              help="read: pull and stats; write: + push; admin: + review.")
@click.option("--expires", "expires_days", type=click.FloatRange(min=0, min_open=True), default=None,
              metavar="DAYS", help="Expire after DAYS days (default: never).")
@click.option("--org", default="default", show_default=True, help="The organisation.")
@click.option("--label", default="", help="A note to tell tokens apart in `token list`.")
@json_option
def token_create(database: str | None, project_name: str | None, all_projects: bool, scope: str,
                 expires_days: float | None, org: str, label: str, as_json: bool) -> None:
    """Create a token and print it once (only its hash is kept)."""
    from ..server import auth

    if bool(project_name) == all_projects:
        fail("give --project NAME (one project) or --all-projects (every project of the org), not both or neither")
    if project_name is not None and not auth.valid_project_name(project_name):
        fail(f"{project_name!r} is not a usable project name: 1-{auth.MAX_PROJECT_NAME} characters, "
             "no slashes or control characters")
    now = time.time()
    token = auth.new_token()
    expires_at = now + expires_days * 86400 if expires_days else None
    db = _open(database)
    try:
        org_id = db.ensure_org(org)
        project_id = db.ensure_project(org_id, project_name, now)["id"] if project_name else None
        token_id = db.create_token(auth.hash_token(token), auth.token_prefix(token), org_id, project_id, scope,
                                   label, now, expires_at)
    finally:
        db.close()
    info = {"id": token_id, "token": token, "prefix": auth.token_prefix(token), "org": org,
            "project": project_name, "scope": scope, "label": label, "expires_at": iso(expires_at)}
    if as_json:
        emit_json(info)
        return
    say("New token (shown once; only its hash is stored):")
    say(token)
    covers = f"project {project_name!r}" if project_name else f"every project of org {org!r}"
    expiry = f", expires {when(expires_at)}" if expires_at else ""
    say(f"id {token_id}, scope {scope}, covers {covers}{expiry}. Revoke: ace server token revoke {token_id}")


@token_group.command("list")
@database_option
@json_option
def token_list(database: str | None, as_json: bool) -> None:
    """List the tokens (ids, prefixes, scopes, use; never a secret)."""
    db = _open(database)
    try:
        rows = db.list_tokens()
    finally:
        db.close()
    rows = [{k: v for k, v in row.items() if k != "token_hash"} for row in rows]  # never, even if a store gave it
    if as_json:
        emit_json(rows)
        return
    if not rows:
        say("No tokens. Create one: ace server token create --project NAME --scope write")
        return
    columns = ["id", "prefix", "org", "project", "scope", "label", "created", "expires", "last used", "revoked"]
    table(None, columns, [[r.get("id"), r.get("prefix"), r.get("org"), r.get("project") or "(all)",
                           r.get("scope"), r.get("label") or "", when(r.get("created_at")),
                           when(r.get("expires_at")), when(r.get("last_used_at")), when(r.get("revoked_at"))]
                          for r in rows])


@token_group.command("revoke")
@database_option
@click.argument("token_ref", metavar="ID_OR_PREFIX")
@json_option
def token_revoke(database: str | None, token_ref: str, as_json: bool) -> None:
    """Revoke a token by id or prefix; it stops working at once."""
    db = _open(database)
    try:
        done = db.revoke_token(token_ref, time.time())
    finally:
        db.close()
    if as_json:
        emit_json({"token": token_ref, "revoked": done})
        raise SystemExit(0 if done else 1)
    if not done:
        fail(f"no active token {token_ref!r}; `ace server token list` shows ids and prefixes")
    say(f"Token {token_ref} revoked.")


COMMANDS = [server]
