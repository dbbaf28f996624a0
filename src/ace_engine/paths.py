"""Where ace-engine keeps its files: always outside the repository, owner-only.

`$ACE_HOME` wins; otherwise the platform's user data directory (XDG on Linux).
Kept stdlib-only and import-light: every hook process calls it.
"""

import os
import sys


def ace_home() -> str:
    home = os.environ.get("ACE_HOME")
    if home:
        return os.path.abspath(os.path.expanduser(home))
    if sys.platform == "darwin":
        base = os.path.expanduser("~/Library/Application Support")
    elif os.name == "nt":
        base = os.environ.get("LOCALAPPDATA") or os.path.expanduser("~\\AppData\\Local")
    else:
        base = os.environ.get("XDG_DATA_HOME") or os.path.expanduser("~/.local/share")
    return os.path.join(base, "ace-engine")


def user_config_path() -> str:
    """The user's config file: `$ACE_CONFIG`, else `$XDG_CONFIG_HOME/ace-engine/config.toml`."""
    explicit = os.environ.get("ACE_CONFIG")
    if explicit:
        return os.path.abspath(os.path.expanduser(explicit))
    base = os.environ.get("XDG_CONFIG_HOME") or os.path.expanduser("~/.config")
    return os.path.join(base, "ace-engine", "config.toml")


PROJECT_CONFIG_NAME = ".ace.toml"


def db_path() -> str:
    return os.path.join(ace_home(), "ace.db")


def log_path() -> str:
    return os.path.join(ace_home(), "logs", "ace.log")


def state_dir() -> str:
    return os.path.join(ace_home(), "state")


def spool_dir() -> str:
    """Records that could not reach the store wait here (JSON lines) until it is healthy again."""
    return os.path.join(ace_home(), "spool")


def ensure_private_dir(path: str) -> str:
    """Create `path` (and parents) owner-only; tighten it if it already exists with looser bits."""
    os.makedirs(path, mode=0o700, exist_ok=True)
    try:
        if os.stat(path).st_mode & 0o077:
            os.chmod(path, 0o700)
    except OSError:
        pass
    return path
