"""`ace ui`: the local web dashboard over this machine's store (`ui/`), served by uvicorn.

Contract: binds a loopback address only (127.0.0.1 by default; `--host` accepts 127.0.0.1,
localhost or ::1 and refuses anything else), on `--port` or a free port, and prints one line with
the URL to open: `http://127.0.0.1:PORT/?token=…`, the token being new for each run (`ui.auth`).
`--open` opens it in the default browser once the server is up. The access log is off (a first
request carries the token in its query). Starlette, uvicorn and Jinja2 come with the `server`
extra; without them the command says which install is missing.

Cost: the web stack is imported only when the command runs.
"""

from __future__ import annotations

import socket
import threading
import time

import click

from .common import extra_hint
from .output import fail

LOOPBACK = {"127.0.0.1": socket.AF_INET, "localhost": socket.AF_INET, "::1": socket.AF_INET6}
STARTUP_WAIT_S = 10.0


def _bind(host: str, port: int) -> socket.socket:
    family = LOOPBACK[host]
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind(("127.0.0.1" if host == "localhost" else host, port))
    except OSError as exc:
        sock.close()
        fail(f"cannot listen on {host} port {port}: {exc.strerror or exc}; pick another with `--port N` "
             "(or leave it out for a free one)")
    sock.listen(128)  # connections wait in the backlog until uvicorn accepts them
    return sock


@click.command("ui")
@click.option("--port", type=click.IntRange(0, 65535), default=0, show_default="a free port",
              help="Port to listen on.")
@click.option("--open", "open_browser", is_flag=True, help="Open the dashboard in the default browser.")
@click.option("--host", default="127.0.0.1", show_default=True,
              help="Loopback address to bind: 127.0.0.1, localhost or ::1 (nothing else is accepted).")
def ui(port: int, open_browser: bool, host: str) -> None:
    """Open the local web dashboard: the playbook with search and review, sessions with what was
    injected when, whether lessons help, and the store's health. It listens on this machine only
    and prints a URL with a token new to this run; without the token nothing answers."""
    host = host.strip().lower().strip("[]")
    if host not in LOOPBACK:
        fail(f"`ace ui` listens on this machine only; --host {host!r} is not a loopback address "
             "(use 127.0.0.1, localhost or ::1; the team server serves a team)")
    try:
        import jinja2  # noqa: F401  -- checked here so the error names the extra, not a traceback
        import starlette  # noqa: F401
        import uvicorn
    except ImportError as exc:
        fail(f"`ace ui` needs the web stack ({exc.name} is not installed): {extra_hint('server')}")
    from ..store.views_sql import ViewsSQLiteStore
    from ..ui.app import create_app
    from ..ui.auth import new_token

    ViewsSQLiteStore(busy_timeout_ms=5000).close()  # opens (and migrates) now: a broken store fails here, clearly

    token = new_token()
    app = create_app(lambda: ViewsSQLiteStore(busy_timeout_ms=5000), token=token)
    sock = _bind(host, port)
    bound = sock.getsockname()[1]
    shown = f"[{host}]" if host == "::1" else ("127.0.0.1" if host == "localhost" else host)
    url = f"http://{shown}:{bound}/?token={token}"
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", access_log=False, lifespan="off",
                                          timeout_graceful_shutdown=2, server_header=False))
    click.echo(f"ace ui: open {url}")
    click.echo("(the address carries this run's token; Ctrl-C stops the dashboard)", err=True)
    if open_browser:
        threading.Thread(target=_open_when_up, args=(server, url), daemon=True).start()
    server.run(sockets=[sock])


def _open_when_up(server: object, url: str) -> None:
    import webbrowser

    deadline = time.monotonic() + STARTUP_WAIT_S
    while not getattr(server, "started", False) and time.monotonic() < deadline:
        time.sleep(0.05)
    webbrowser.open(url)


COMMANDS = [ui]
