"""`ace trust`: the user's explicit, revocable approval of one project config file's exact content.

A project's `.ace.toml` is repository content. The keys it may set on its own are harmless
(`config.PROJECT_KEYS`); user-level keys in it (a model endpoint, a binary to run, trusted
hosts…) take effect only once the user ran `ace trust` on it — the way direnv's `allow` and
mise's `trust` work. What is recorded is the sha256 of the file's bytes and the file's real path:
the same bytes elsewhere are not trusted, and any edit (a `git pull`, a checkout) voids the
trust until the user looks again and re-runs `ace trust`.

The record is `$ACE_HOME/trust.json`, owner-only (0600 in a private directory), written
atomically, read without following a symlink; one that another user could have written is not
believed. `note_ignored` logs "ignored, not trusted" once per file content (a marker file under
`state/`), not on every hook.

Cost: only `config.load` of a project file that sets a user-level key comes here (hashlib, one
small read); nothing else does.
"""

import json
import os
import stat
import time

from . import paths
from .files import atomic_write

FILE_NAME = "trust.json"


def trust_path() -> str:
    return os.path.join(paths.ace_home(), FILE_NAME)


def digest(data: bytes) -> str:
    import hashlib

    return hashlib.sha256(data).hexdigest()


def real_path(path: str) -> str:
    return os.path.realpath(os.path.abspath(path))


def _read() -> dict[str, dict]:
    """{real path: {"sha256", "trusted_at"}}; empty when missing, damaged or not safely ours."""
    try:
        fd = paths.open_nofollow(trust_path(), os.O_RDONLY)
    except OSError:
        return {}
    with os.fdopen(fd, "rb") as fh:
        st = os.fstat(fh.fileno())
        uid = os.geteuid() if hasattr(os, "geteuid") else None
        if not stat.S_ISREG(st.st_mode) or (uid is not None and (st.st_uid != uid or st.st_mode & 0o022)):
            return {}  # someone else could have written it: trust nothing from it
        try:
            data = json.loads(fh.read(1024 * 1024).decode("utf-8"))
        except (ValueError, UnicodeDecodeError):
            return {}
    files = data.get("files") if isinstance(data, dict) else None
    if not isinstance(files, dict):
        return {}
    return {k: v for k, v in files.items() if isinstance(v, dict) and isinstance(v.get("sha256"), str)}


def _write(files: dict[str, dict]) -> None:
    home = paths.ensure_private_dir(paths.ace_home())
    target = os.path.join(home, FILE_NAME)
    atomic_write(target, json.dumps({"version": 1, "files": files}, indent=1, sort_keys=True), mode=0o600)


def is_trusted(path: str, data: bytes) -> bool:
    """True when the user ran `ace trust` on this file and its content is still `data`."""
    entry = _read().get(real_path(path))
    return entry is not None and entry.get("sha256") == digest(data)


def trust(path: str, data: bytes, now: float | None = None) -> dict:
    """Record `data` (the file's current bytes) as trusted for `path`; replaces an older record."""
    files = _read()
    entry = {"sha256": digest(data), "trusted_at": time.time() if now is None else now}
    files[real_path(path)] = entry
    _write(files)
    return {"path": real_path(path), **entry}


def revoke(path: str) -> bool:
    """Forget the trust of `path`; False when there was none."""
    files = _read()
    if files.pop(real_path(path), None) is None:
        return False
    _write(files)
    return True


def entries() -> list[dict]:
    """Every record, with `state`: trusted (content unchanged), changed (void) or missing."""
    found = []
    for path, entry in sorted(_read().items()):
        from .errors import ConfigError

        try:  # a config file is small data: never read whole (`paths.read_optional`)
            data = paths.read_optional(path, ConfigError, "", limit=paths.CONFIG_BYTES, follow=False)
            state = "missing" if data is None else "trusted" if digest(data) == entry["sha256"] else "changed"
        except ConfigError:
            state = "changed"
        found.append({"path": path, "sha256": entry["sha256"], "trusted_at": entry.get("trusted_at"), "state": state})
    return found


def note_ignored(path: str, data: bytes, keys: list[str]) -> None:
    """Log, once per file content, that user-level keys of an untrusted project file were ignored."""
    marker_name = "untrusted-config-" + digest(real_path(path).encode("utf-8", "replace") + b"\0" + data)[:24]
    try:
        marker = os.path.join(paths.ensure_private_dir(paths.state_dir()), marker_name)
        os.close(paths.open_nofollow(marker, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
    except FileExistsError:
        return  # said already
    except OSError:
        pass  # cannot remember: say it anyway
    from . import log

    log.warning("config", f"{path} sets user-level key(s) {', '.join(sorted(keys))}: ignored, the file is not "
                          f"trusted. Fix: {ignored_fix(path)}")


def ignored_fix(path: str) -> str:
    """What to do about user-level keys ignored in a project file."""
    return (f"move them to your user config ({paths.user_config_path()}) or set them as ACE_* variables; "
            f"or, if you wrote or reviewed {path}, run `ace trust` in the project (any later edit voids it)")
