"""Shared fixtures, and the guard that keeps every test away from the user's real data.

Every test runs with `HOME`, the XDG directories, `ACE_HOME` and `ACE_CONFIG` pinned inside its
own temporary directory (autouse `_private_environment`), so nothing — a CLI command, a hook
process, a background worker, the log — can reach the real `~/.local/share/ace-engine`,
`~/.config/ace-engine` or `~/.claude`. `pytest_sessionfinish` proves it: it fingerprints those
real locations before the session and fails the run when any of them changed.
"""

import os
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, os.path.dirname(__file__))

# The user's real locations, resolved before any test pins the environment.
_REAL_HOME = Path(os.path.expanduser("~"))
_REAL_XDG_DATA = Path(os.environ.get("XDG_DATA_HOME") or _REAL_HOME / ".local" / "share")
_REAL_XDG_CONFIG = Path(os.environ.get("XDG_CONFIG_HOME") or _REAL_HOME / ".config")
REAL_USER_PLACES = (
    _REAL_XDG_DATA / "ace-engine",
    _REAL_XDG_CONFIG / "ace-engine",
    _REAL_HOME / ".claude",
    _REAL_HOME / ".claude.json",
)
# The Claude Code CLI that the e2e tests install is test tooling, cached under the real home so
# that it is downloaded once per machine, not once per test.
os.environ.setdefault(
    "ACE_TEST_CACHE", str(_REAL_HOME / ".cache" / "ace-engine-tests" / "claude-code-2.1.197")
)
# npm's own cache, for the same reason (a pinned HOME would hide ~/.npm).
os.environ.setdefault("npm_config_cache", str(_REAL_HOME / ".npm"))


def fingerprint(places=REAL_USER_PLACES) -> dict[str, tuple]:
    """Every file and directory under `places` with its size and mtime (absent places: absent)."""
    seen: dict[str, tuple] = {}
    for place in places:
        if not os.path.lexists(place):
            continue
        stack = [str(place)]
        while stack:
            path = stack.pop()
            try:
                st = os.lstat(path)
            except OSError:
                continue
            seen[path] = (st.st_size, st.st_mtime_ns, st.st_mode)
            if os.path.isdir(path) and not os.path.islink(path):
                try:
                    stack.extend(os.path.join(path, name) for name in os.listdir(path))
                except OSError:
                    pass
    return seen


_BEFORE = fingerprint()


def pytest_sessionfinish(session, exitstatus):
    after = fingerprint()
    if after != _BEFORE:
        changed = sorted(set(after) ^ set(_BEFORE) | {p for p in after if p in _BEFORE and after[p] != _BEFORE[p]})
        sys.stderr.write("\nERROR: the test session touched the user's real data or settings:\n  "
                         + "\n  ".join(changed[:20]) + "\n")
        session.exitstatus = 1


@pytest.fixture(autouse=True)
def _private_environment(tmp_path_factory, monkeypatch):
    """Pin HOME, XDG_*, ACE_HOME and ACE_CONFIG to a private temporary tree for every test."""
    base = tmp_path_factory.mktemp("env")
    home = base / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    for name, sub in (("XDG_DATA_HOME", ".local/share"), ("XDG_CONFIG_HOME", ".config"),
                      ("XDG_CACHE_HOME", ".cache"), ("XDG_STATE_HOME", ".local/state")):
        monkeypatch.setenv(name, str(home / sub))
    monkeypatch.setenv("ACE_HOME", str(base / "ace-home"))
    (base / "run").mkdir(mode=0o700)  # the private fallback spool/log outside ACE_HOME lives here
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(base / "run"))
    monkeypatch.delenv("ACE_CONFIG", raising=False)
    monkeypatch.delenv("CLAUDE_PROJECT_DIR", raising=False)
    return home


# -- running the CLI ------------------------------------------------------------------------------------

WIDE_COLUMNS = {"COLUMNS": "250"}  # wide tables: ids and paths are not folded


def ace(*args, input=None, env=None, cwd=None, catch_exceptions=False, process=False, timeout=120):
    """Run `ace ARGS` (arguments str()-ed) with `env` over a wide terminal (`WIDE_COLUMNS`; a None
    value unsets a variable) and `input` on stdin, in `cwd` when given.

    In-process by default, through click's CliRunner: a `click.testing.Result` (`exit_code`,
    `output`, `stdout`, `stderr`, `exception`); an exception propagates unless `catch_exceptions`.
    `process=True` runs a real `python -m ace_engine.cli` (what only a process shows: its umask,
    environment, imports, exit path): a `subprocess.CompletedProcess` (`returncode`, `stdout`,
    `stderr`, text)."""
    argv = [str(a) for a in args]
    env = {**WIDE_COLUMNS, **(env or {})}
    if process:
        full = {**os.environ, **env}
        return subprocess.run([sys.executable, "-m", "ace_engine.cli", *argv], input=input, capture_output=True,
                              text=True, cwd=cwd, timeout=timeout,
                              env={k: v for k, v in full.items() if v is not None})
    from click.testing import CliRunner

    from ace_engine.cli.app import cli

    old = os.getcwd()
    if cwd is not None:
        os.chdir(cwd)
    try:
        return CliRunner().invoke(cli, argv, input=input, env=env, catch_exceptions=catch_exceptions)
    finally:
        os.chdir(old)


# -- a scripted model -------------------------------------------------------------------------------------


@pytest.fixture
def scripted_chat():
    """Start scripted chat-model servers (`llm_servers.ScriptedChatServer`: OpenAI and Anthropic
    endpoints, one scripted reply per request): `start(replies, delay=0.0)` returns a started
    server; all are stopped after the test. (The end-to-end tests drive Claude Code's agent loop
    with `e2e.model_server.ScriptedModelServer`, their `model_server` fixture.)"""
    from llm_servers import ScriptedChatServer

    servers = []

    def start(replies, delay=0.0):
        server = ScriptedChatServer(replies, delay).start()
        servers.append(server)
        return server

    yield start
    for server in servers:
        server.stop()


@pytest.fixture
def ace_home(tmp_path, monkeypatch):
    """A private ACE_HOME and config dir for one test; the real user's data is never touched."""
    home = tmp_path / "ace-home"
    monkeypatch.setenv("ACE_HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg-config"))
    monkeypatch.delenv("ACE_CONFIG", raising=False)
    for key in list(os.environ):
        if key.startswith("ACE_") and key not in ("ACE_HOME", "ACE_TEST_CACHE", "ACE_PYTHON"):
            monkeypatch.delenv(key)
    return home


@pytest.fixture
def git_project(tmp_path):
    """A small git repository with an origin remote."""
    root = tmp_path / "proj"
    root.mkdir()
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    subprocess.run(["git", "-C", str(root), "remote", "add", "origin", "git@github.com:Acme/Widget.git"], check=True)
    (root / "app.py").write_text("print('hi')\n")
    return root
