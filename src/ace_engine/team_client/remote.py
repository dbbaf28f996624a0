"""Which team server a local project syncs with: `remotes.json`, the token files, the client id.

Contract: a binding lives only in the user's private data directory (`paths.ace_home()`), never
in a repository or a project config: a repository must not be able to point a machine at a
server (it would send the machine's lessons there). `remotes.json` maps a local project key
(`project.Project.key`) to `{url, project, token_file, created_at}`; the token itself is in its own
file under `remote-tokens/`, so the JSON can be shown, copied or logged without it. Every file is
0600 and written atomically (`files.atomic_write`), read without following a symlink. `client_id()`
is this machine's stable random id (created once, 0600): the server keeps each client's counts
apart with it, so a retry or a re-pull never double-counts.

`check_url` is the one place a server URL is accepted: http(s) only, no credentials, query or
fragment in it, and plain http only to this machine (127.0.0.1, localhost, ::1) unless the user
says `--insecure`: a token sent in clear over a network is a token given away.

Cost: stdlib only; a few small files read per call, nothing cached.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import secrets
import urllib.parse

from ..core import paths
from ..core.errors import AceError
from ..core.files import atomic_write, make_temp

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

REMOTES_FILE = "remotes.json"
TOKENS_DIR = "remote-tokens"
CLIENT_ID_FILE = "client_id"
LOOPBACK = ("127.0.0.1", "localhost", "::1")
_TOKEN = re.compile(r"[A-Za-z0-9_\-.~+/=]{8,512}")
_TOKEN_FILE = re.compile(r"[0-9a-f]{32}")
_CLIENT_ID = re.compile(r"[0-9a-f]{32}")
_MAX_FILE_BYTES = 1 << 20


class RemoteError(AceError, ValueError):
    """A remote that cannot be set, read or used; the message names the problem and the fix."""


class Remote:
    """The binding of one local project (`project_key`) to `project` on the server at `url`."""

    __slots__ = ("project_key", "url", "project", "token_file", "created_at")

    def __init__(self, project_key: str, url: str, project: str, token_file: str, created_at: float) -> None:
        self.project_key = project_key
        self.url = url
        self.project = project
        self.token_file = token_file
        self.created_at = created_at

    @property
    def identity(self) -> str:
        """What the sync cursors belong to (`sync_state.remote`): the server and its project."""
        return f"{self.url} {self.project}"

    def token(self) -> str:
        """The token, read from its 0600 file; RemoteError naming the fix when it is gone."""
        path = os.path.join(_tokens_dir(), self.token_file)
        try:
            text = _read(path).strip()
        except FileNotFoundError:
            raise RemoteError(f"the token of the remote {self.url} is missing ({path}); run "
                              f"`ace remote set {self.url} --token TOKEN` again") from None
        if not _TOKEN.fullmatch(text):
            raise RemoteError(f"the token file {path} is damaged; run `ace remote set {self.url} --token TOKEN` again")
        return text

    def as_dict(self) -> dict[str, Any]:
        return {"url": self.url, "project": self.project, "token_file": self.token_file,
                "created_at": self.created_at}


def _home() -> str:
    return paths.ensure_private_dir(paths.ace_home())


def _tokens_dir() -> str:
    return paths.ensure_private_dir(os.path.join(paths.ace_home(), TOKENS_DIR))


def remotes_path() -> str:
    return os.path.join(paths.ace_home(), REMOTES_FILE)


def _read(path: str) -> str:
    """A small private file's text, not followed through a symlink."""
    fd = paths.open_nofollow(path, os.O_RDONLY)
    with open(fd, "rb", closefd=True) as fh:
        data = fh.read(_MAX_FILE_BYTES + 1)
    if len(data) > _MAX_FILE_BYTES:
        raise RemoteError(f"{path} is larger than {_MAX_FILE_BYTES} bytes; it is not ace-engine's, remove it")
    return data.decode("utf-8", "replace")


def check_url(url: str, *, insecure: bool = False) -> str:
    """The server URL as stored (no trailing slash), or RemoteError saying what is wrong with it."""
    text = str(url).strip()
    parts = urllib.parse.urlsplit(text)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise RemoteError(f"{text!r} is not a server URL; give one like https://ace.example.com")
    if parts.username is not None or parts.password is not None:
        raise RemoteError("the URL holds a user name or password; give the URL without them and the "
                          "token with --token")
    if parts.query or parts.fragment:
        raise RemoteError(f"{text!r} has a query or fragment; give the server's base URL only")
    if parts.scheme == "http" and parts.hostname not in LOOPBACK and not insecure:
        raise RemoteError(f"{text} is plain http to another machine: the token would cross the network in clear. "
                          "Use https (put the server behind a TLS proxy), or pass --insecure if you accept that")
    return urllib.parse.urlunsplit((parts.scheme, parts.netloc.lower(), parts.path.rstrip("/"), "", ""))


def check_token(token: str) -> str:
    token = str(token).strip()
    if not _TOKEN.fullmatch(token):
        raise RemoteError("that does not look like a token (8-512 characters of letters, digits and -_.~+/=); "
                          "copy the whole token `ace server token create` printed")
    return token


def load_remotes() -> dict[str, dict[str, Any]]:
    """{project key: {url, project, token_file, created_at}}; {} when none is set."""
    path = remotes_path()
    try:
        text = _read(path)
    except FileNotFoundError:
        return {}
    except OSError as exc:
        raise RemoteError(f"cannot read {path} ({exc.strerror or exc}); fix its permissions or remove it "
                          "and run `ace remote set` again") from exc
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise RemoteError(f"{path} is not valid JSON ({exc}); remove it and run `ace remote set` again") from exc
    if not isinstance(data, dict) or not isinstance(data.get("remotes", {}), dict):
        raise RemoteError(f"{path} is not a remotes file; remove it and run `ace remote set` again")
    return {k: v for k, v in data.get("remotes", {}).items() if isinstance(v, dict)}


def _write_remotes(remotes: dict[str, dict[str, Any]]) -> None:
    _home()
    atomic_write(remotes_path(), json.dumps({"version": 1, "remotes": remotes}, indent=2, sort_keys=True) + "\n",
                 mode=0o600)


def get_remote(project_key: str) -> Remote | None:
    """The project's binding, or None. A damaged entry is a RemoteError with the fix."""
    entry = load_remotes().get(project_key)
    if entry is None:
        return None
    try:
        url = check_url(str(entry["url"]), insecure=True)  # `set` checked the scheme with the user's consent
        token_file = str(entry["token_file"])
        project = str(entry["project"])
    except (KeyError, RemoteError) as exc:
        raise RemoteError(f"the remote of this project in {remotes_path()} is damaged ({exc}); run "
                          "`ace remote set URL --token TOKEN` again") from exc
    if not _TOKEN_FILE.fullmatch(token_file) or not project:
        raise RemoteError(f"the remote of this project in {remotes_path()} is damaged; run "
                          "`ace remote set URL --token TOKEN` again")
    return Remote(project_key, url, project, token_file, float(entry.get("created_at") or 0.0))


def save_remote(project_key: str, url: str, project: str, token: str, now: float) -> Remote:
    """Bind `project_key` to `project` at `url` (already checked): the token to its own 0600 file,
    then the entry (without the token) to `remotes.json`. Replaces an earlier binding."""
    token = check_token(token)
    name = hashlib.sha256(f"{project_key}\n{url}\n{project}".encode()).hexdigest()[:32]
    atomic_write(os.path.join(_tokens_dir(), name), token + "\n", mode=0o600)
    remotes = load_remotes()
    old = remotes.get(project_key)
    remote = Remote(project_key, url, project, name, now)
    remotes[project_key] = remote.as_dict()
    _write_remotes(remotes)
    if old and old.get("token_file") != name:
        _remove_token(str(old.get("token_file", "")))
    return remote


def remove_remote(project_key: str) -> bool:
    """Forget the project's binding and its token; False when there was none."""
    remotes = load_remotes()
    old = remotes.pop(project_key, None)
    if old is None:
        return False
    _write_remotes(remotes)
    _remove_token(str(old.get("token_file", "")))
    return True


def _remove_token(name: str) -> None:
    if not _TOKEN_FILE.fullmatch(name):  # never a path taken from the file
        return
    try:
        os.unlink(os.path.join(_tokens_dir(), name))
    except FileNotFoundError:
        pass


def client_id() -> str:
    """This machine's stable random client id (32 hex digits), created on first use."""
    path = os.path.join(_home(), CLIENT_ID_FILE)
    try:
        text = _read(path).strip()
    except FileNotFoundError:
        # Written whole to a temporary file, then linked into place: a reader never sees a half
        # file, and two processes creating it at once agree on the first one's id.
        fd, tmp = make_temp(os.path.dirname(path), CLIENT_ID_FILE)
        try:
            with open(fd, "w", encoding="ascii", closefd=True) as fh:
                fh.write(secrets.token_hex(16) + "\n")
            try:
                os.link(tmp, path)
            except FileExistsError:
                pass
        finally:
            os.unlink(tmp)
        text = _read(path).strip()
    if not _CLIENT_ID.fullmatch(text):
        raise RemoteError(f"{path} is damaged; remove it (a new client id is made, and the server then counts "
                          "this machine's marks afresh)")
    return text
