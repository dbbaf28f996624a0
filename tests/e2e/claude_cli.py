"""Install and drive the real Claude Code CLI (pinned) offline, for end-to-end tests.

* :func:`ensure_claude_cli` installs ``@anthropic-ai/claude-code@2.1.197`` with npm into a
  cache directory (``$ACE_TEST_CACHE`` or ``~/.cache/ace-engine-tests/claude-code-2.1.197``),
  reuses it when the right version is already there, and returns the ``claude`` binary.  It
  raises :class:`ClaudeCliUnavailable` (the fixture turns it into a test *failure*, never a
  skip) when node/npm are missing or the install does not produce a working binary.
* :func:`run_claude` runs ``claude -p PROMPT --output-format json`` against a
  :class:`~model_server.ScriptedModelServer` with a throw-away ``HOME``.
* :func:`transcript_hook_problems` / :func:`debug_log_hook_problems` find every trace of a
  failing hook that Claude Code leaves behind.

Facts verified against 2.1.197 (the notes on its hooks kept beside the checkout, ../shared/claude-code-hooks.md):

* ``--permission-mode bypassPermissions`` / ``--dangerously-skip-permissions`` refuse to run as
  root, so tool permissions are granted with ``--allowedTools`` (no settings file is touched —
  ``ace install`` owns ``.claude/settings.json``).  Workspace trust must be pre-accepted in
  ``$HOME/.claude.json`` or project settings are ignored in ``-p`` mode.
* Hook failures land in the transcript as ``attachment`` entries (``hook_non_blocking_error``
  for exit codes other than 0/2 *and* for JSON output that fails the schema,
  ``hook_blocking_error``, ``hook_cancelled`` for timeouts, …) — except for SessionEnd hooks
  (they run after the transcript is closed), a SessionStart hook exiting 2, and stdout that
  starts with ``{`` but is not JSON (recorded as ``hook_success``!).  Those only show up in the
  ``--debug-file`` log, which :func:`run_claude` therefore always writes.
"""

from __future__ import annotations

import fcntl
import json
import os
import re
import shutil
import signal
import subprocess
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .model_server import describe_request

CLAUDE_CODE_PACKAGE = "@anthropic-ai/claude-code"
CLAUDE_CODE_VERSION = "2.1.197"

# Tools the scripted model may call; granted through --allowedTools.
DEFAULT_ALLOWED_TOOLS = ("Bash", "Read", "Edit", "Write", "Glob", "Grep")

OFFLINE_ENV = {
    "ANTHROPIC_API_KEY": "dummy",
    "DISABLE_TELEMETRY": "1",
    "DISABLE_ERROR_REPORTING": "1",
    "DISABLE_AUTOUPDATER": "1",
    "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
    # The MCP server's start (a Python process importing the mcp SDK) may take seconds on a loaded
    # machine; Claude Code's default start-up wait then drops its tools from the request (seen once
    # under a load of 15 on 2 cores). A generous wait keeps the test about behaviour, not speed.
    "MCP_TIMEOUT": "60000",
    # In -p mode Claude Code sends its first request once the MCP servers connect or after
    # MCP_CONNECT_TIMEOUT_MS (5 s by default), whichever is first: wait for ours (2.1.197's own names).
    "MCP_CONNECTION_NONBLOCKING": "0",
    "MCP_CONNECT_TIMEOUT_MS": "60000",
}

# Variables that must not leak from the developer's / CI environment into the CLI under test
# (e.g. when the tests themselves run inside a Claude Code session, or with a real key).
_STRIPPED_ENV_PREFIXES = ("ANTHROPIC_", "CLAUDE", "ACE_", "XDG_", "OTEL_", "MCP_")
_STRIPPED_ENV_NAMES = {"DEBUG", "NODE_OPTIONS", "HTTP_PROXY", "HTTPS_PROXY", "http_proxy",
                       "https_proxy", "ALL_PROXY", "all_proxy"}


class ClaudeCliUnavailable(RuntimeError):
    """The pinned Claude Code CLI could not be installed or run."""


# ---------------------------------------------------------------------------------------------
# installation


def default_cache_dir() -> Path:
    env = os.environ.get("ACE_TEST_CACHE")
    if env:
        return Path(env).expanduser()
    return Path.home() / ".cache" / "ace-engine-tests" / f"claude-code-{CLAUDE_CODE_VERSION}"


@contextmanager
def _file_lock(path: Path) -> Iterator[None]:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)  # parallel test workers install only once
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def _binary_version(path: Path) -> str | None:
    if not path.is_file() or not os.access(path, os.X_OK):
        return None
    try:
        proc = subprocess.run(
            [str(path), "--version"], capture_output=True, text=True, timeout=60,
            env={"PATH": os.environ.get("PATH", ""), "HOME": os.environ.get("HOME", "/tmp"),
                 "DISABLE_AUTOUPDATER": "1"},
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    if proc.returncode != 0:
        return None
    return proc.stdout.strip()


def _candidate_binaries(prefix: Path) -> list[Path]:
    scope = prefix / "node_modules" / "@anthropic-ai"
    # The native binary from the platform package works even when npm did not run the
    # package's postinstall (which copies it over the bin/claude.exe placeholder).
    native = sorted(scope.glob("claude-code-*/claude")) if scope.is_dir() else []
    return native + [
        scope / "claude-code" / "bin" / "claude.exe",
        prefix / "node_modules" / ".bin" / "claude",
    ]


def find_claude_binary(prefix: Path, version: str = CLAUDE_CODE_VERSION) -> Path | None:
    """Return a working ``claude`` of exactly ``version`` installed under ``prefix``."""
    pkg_json = prefix / "node_modules" / "@anthropic-ai" / "claude-code" / "package.json"
    try:
        if json.loads(pkg_json.read_text())["version"] != version:
            return None
    except (OSError, ValueError, KeyError):
        return None
    for candidate in _candidate_binaries(prefix):
        reported = _binary_version(candidate)
        if reported and reported.split()[0] == version:
            return candidate
    return None


def ensure_claude_cli(cache_dir: Path | None = None, version: str = CLAUDE_CODE_VERSION) -> Path:
    """Install (once) and return the pinned ``claude`` binary, or raise ClaudeCliUnavailable."""
    prefix = Path(cache_dir or default_cache_dir()).expanduser().resolve()
    with _file_lock(prefix.parent / f".{prefix.name}.lock"):
        found = find_claude_binary(prefix, version)
        if found:
            return found
        npm, node = shutil.which("npm"), shutil.which("node")
        if not npm or not node:
            raise ClaudeCliUnavailable(
                f"node/npm not found on PATH (node={node}, npm={npm}); the e2e tests need them "
                f"to install {CLAUDE_CODE_PACKAGE}@{version} (Node >= 18, < 22 is fine)."
            )
        prefix.mkdir(parents=True, exist_ok=True)
        cmd = [npm, "install", "--no-audit", "--no-fund", "--prefix", str(prefix),
               f"{CLAUDE_CODE_PACKAGE}@{version}"]
        try:
            proc = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
        except subprocess.TimeoutExpired as exc:
            raise ClaudeCliUnavailable(f"`{' '.join(cmd)}` timed out after 600 s") from exc
        found = find_claude_binary(prefix, version)
        if proc.returncode != 0 or not found:
            raise ClaudeCliUnavailable(
                f"could not install {CLAUDE_CODE_PACKAGE}@{version} into {prefix}\n"
                f"command: {' '.join(cmd)}\nexit code: {proc.returncode}\n"
                f"stdout:\n{proc.stdout[-4000:]}\nstderr:\n{proc.stderr[-4000:]}\n"
                f"binaries tried: {[str(p) for p in _candidate_binaries(prefix)]}"
            )
        return found


# ---------------------------------------------------------------------------------------------
# home / project preparation


def project_slug(project_dir: os.PathLike[str] | str) -> str:
    """Claude Code's directory name for a project: every non-alphanumeric char becomes '-'."""
    return re.sub(r"[^A-Za-z0-9]", "-", str(Path(project_dir).resolve()))


def transcript_path_for(home: Path, project_dir: Path, session_id: str) -> Path:
    return Path(home) / ".claude" / "projects" / project_slug(project_dir) / f"{session_id}.jsonl"


def accept_workspace_trust(home: Path, project_dir: Path) -> Path:
    """Mark ``project_dir`` as trusted in ``$HOME/.claude.json`` (other keys are kept)."""
    config_path = Path(home) / ".claude.json"
    try:
        config = json.loads(config_path.read_text())
        if not isinstance(config, dict):
            config = {}
    except (OSError, ValueError):
        config = {}
    projects = config.setdefault("projects", {})
    entry = projects.setdefault(str(Path(project_dir).resolve()), {})
    entry["hasTrustDialogAccepted"] = True
    config.setdefault("hasCompletedOnboarding", True)
    Path(home).mkdir(parents=True, exist_ok=True)
    config_path.write_text(json.dumps(config, indent=2))
    return config_path


def claude_env(home: Path, server_url: str, extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment for an offline ``claude`` run (also right for ``claude plugin …``)."""
    env = {
        k: v for k, v in os.environ.items()
        if not k.startswith(_STRIPPED_ENV_PREFIXES) and k not in _STRIPPED_ENV_NAMES
    }
    env.update(OFFLINE_ENV)
    env["HOME"] = str(home)
    env["ANTHROPIC_BASE_URL"] = server_url
    env["NO_PROXY"] = env["no_proxy"] = "127.0.0.1,localhost"
    if extra:
        env.update(extra)
    return env


# ---------------------------------------------------------------------------------------------
# running


@dataclass
class ClaudeResult:
    args: list[str]
    returncode: int
    stdout: str
    stderr: str
    duration: float
    project_dir: Path
    home: Path
    debug_log: Path
    json: dict[str, Any] | None = None
    server_requests: list[Any] = field(default_factory=list)  # requests made during this run

    @property
    def session_id(self) -> str | None:
        return (self.json or {}).get("session_id")

    @property
    def result_text(self) -> str | None:
        return (self.json or {}).get("result")

    @property
    def is_error(self) -> bool:
        return bool((self.json or {}).get("is_error", True))

    @property
    def transcript_path(self) -> Path | None:
        if not self.session_id:
            return None
        return transcript_path_for(self.home, self.project_dir, self.session_id)

    def transcript(self) -> list[dict[str, Any]]:
        path = self.transcript_path
        return read_jsonl(path) if path else []

    def hook_problems(self) -> list[Any]:
        """Every hook failure Claude Code recorded for this run (transcript + debug log)."""
        problems: list[Any] = []
        if self.transcript_path and self.transcript_path.exists():
            problems += transcript_hook_problems(self.transcript_path)
        problems += debug_log_hook_problems(self.debug_log)
        return problems

    def describe(self) -> str:
        requests = "\n".join(describe_request(r) for r in self.server_requests)
        return (
            f"claude {' '.join(self.args[1:])!r} -> exit {self.returncode} in {self.duration:.1f}s\n"
            f"stdout:\n{self.stdout[-3000:]}\nstderr:\n{self.stderr[-3000:]}\n"
            f"model server requests:\n{requests or '<none>'}"
        )

    def check(self) -> ClaudeResult:
        """Assert the run completed normally; return self for chaining."""
        assert self.returncode == 0 and self.json is not None and not self.is_error, self.describe()
        return self


def run_claude(
    claude_bin: os.PathLike[str] | str,
    project_dir: os.PathLike[str] | str,
    home: os.PathLike[str] | str,
    server: Any,
    prompt: str,
    *,
    resume: str | None = None,
    extra_args: Sequence[str] = (),
    env: Mapping[str, str] | None = None,
    timeout: float = 120,
    script: list[Any] | None = None,
    allowed_tools: Sequence[str] | None = DEFAULT_ALLOWED_TOOLS,
) -> ClaudeResult:
    """Run ``claude -p PROMPT --output-format json`` in ``project_dir`` against ``server``.

    ``script`` (optional) is installed on the server first (``server.set_script``).  ``env``
    is added on top of the offline environment (e.g. ``{"ACE_HOME": ...}``); hooks inherit it.
    """
    project_dir = Path(project_dir).resolve()
    home = Path(home).resolve()
    accept_workspace_trust(home, project_dir)
    if script is not None:
        server.set_script(script)
    debug_dir = home / "debug-logs"
    debug_dir.mkdir(parents=True, exist_ok=True)
    debug_log = debug_dir / f"claude-{time.time_ns()}.log"

    args = [str(claude_bin), "-p", prompt, "--output-format", "json", "--debug-file", str(debug_log)]
    if resume:
        args += ["--resume", resume]
    if allowed_tools:
        args += ["--allowedTools", " ".join(allowed_tools)]
    args += list(extra_args)

    first_request = len(server.requests)
    started = time.monotonic()
    proc = subprocess.Popen(
        args, cwd=project_dir, env=claude_env(home, server.url, env),
        stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        start_new_session=True,
    )
    try:
        stdout, stderr = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        _kill_group(proc)
        stdout, stderr = proc.communicate()
        raise AssertionError(
            f"claude timed out after {timeout}s: {args!r}\nstdout:\n{stdout[-3000:]}\n"
            f"stderr:\n{stderr[-3000:]}\ndebug log tail:\n{_tail(debug_log)}"
        ) from None
    finally:
        if proc.poll() is None:
            _kill_group(proc)
    duration = time.monotonic() - started

    parsed = None
    for line in reversed(stdout.strip().splitlines()):
        try:
            candidate = json.loads(line)
        except ValueError:
            continue
        if isinstance(candidate, dict) and candidate.get("type") == "result":
            parsed = candidate
            break
    return ClaudeResult(
        args=args, returncode=proc.returncode, stdout=stdout, stderr=stderr, duration=duration,
        project_dir=project_dir, home=home, debug_log=debug_log, json=parsed,
        server_requests=list(server.requests[first_request:]),
    )


def run_claude_command(
    claude_bin: os.PathLike[str] | str,
    args: Sequence[str],
    *,
    home: os.PathLike[str] | str,
    server_url: str,
    cwd: os.PathLike[str] | str | None = None,
    env: Mapping[str, str] | None = None,
    timeout: float = 120,
) -> subprocess.CompletedProcess[str]:
    """Run a non-session subcommand (``claude plugin marketplace add …``) in the test env."""
    return subprocess.run(
        [str(claude_bin), *args], cwd=cwd, env=claude_env(Path(home), server_url, env),
        stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=timeout,
    )


def _kill_group(proc: subprocess.Popen[str]) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)  # only the group this harness started
    except (ProcessLookupError, PermissionError):
        pass


def _tail(path: Path, chars: int = 3000) -> str:
    try:
        return path.read_text(errors="replace")[-chars:]
    except OSError:
        return "<no debug log>"


# ---------------------------------------------------------------------------------------------
# transcript / debug-log inspection


def read_jsonl(path: os.PathLike[str] | str) -> list[dict[str, Any]]:
    entries = []
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            line = line.strip()
            if line:
                try:
                    entries.append(json.loads(line))
                except ValueError:
                    entries.append({"type": "<unparseable>", "raw": line})
    return entries


HOOK_PROBLEM_ATTACHMENTS = frozenset({
    "hook_non_blocking_error",  # exit code other than 0/2, or JSON output failing the schema
    "hook_blocking_error",  # exit code 2
    "hook_cancelled",  # timeout
    "hook_error_during_execution",  # spawn failure and the like
    "hook_stopped_continuation",  # {"continue": false}
})


def _looks_like_invalid_json(stdout: str) -> bool:
    text = (stdout or "").strip()
    if not text.startswith("{"):
        return False
    try:
        json.loads(text)
    except ValueError:
        return True
    return False


def transcript_hook_problems(path: os.PathLike[str] | str) -> list[dict[str, Any]]:
    """Transcript entries that show a hook failing (empty list = all hooks were fine).

    * ``attachment`` entries whose ``attachment.type`` is in :data:`HOOK_PROBLEM_ATTACHMENTS`;
    * ``hook_success`` attachments whose stdout starts with ``{`` but is not valid JSON (Claude
      Code silently treats it as plain text);
    * ``system`` entries saying an operation was "blocked by hook" (UserPromptSubmit exit 2).
    """
    problems = []
    for entry in read_jsonl(path):
        if entry.get("type") == "<unparseable>":
            problems.append(entry)
            continue
        attachment = entry.get("attachment")
        if entry.get("type") == "attachment" and isinstance(attachment, dict):
            kind = attachment.get("type")
            if kind in HOOK_PROBLEM_ATTACHMENTS:
                problems.append(attachment)
            elif kind == "hook_success" and _looks_like_invalid_json(attachment.get("stdout", "")):
                problems.append(dict(attachment, type="hook_success_invalid_json"))
        elif entry.get("type") == "system" and "blocked by hook" in str(entry.get("content", "")):
            problems.append(entry)
    return problems


_DEBUG_PROBLEM_PATTERNS = [
    re.compile(r'"Hook [^"]*\) error:'),  # non-zero exit / schema failure (any event)
    re.compile(r"Hook JSON output validation failed"),
    re.compile(r"Failed to parse hook output as JSON"),
    re.compile(r"SessionEnd:\S+ \[.*\] completed with status (?!0\b)\d+"),
    re.compile(r"(?i)hook[^\n]*timed out"),
]


def debug_log_hook_problems(path: os.PathLike[str] | str) -> list[str]:
    """Lines of a ``--debug-file`` log that show a hook failing (covers SessionEnd too)."""
    try:
        lines = Path(path).read_text(errors="replace").splitlines()
    except OSError:
        return []
    return [line for line in lines if any(p.search(line) for p in _DEBUG_PROBLEM_PATTERNS)]


def hook_attachments(path: os.PathLike[str] | str) -> list[dict[str, Any]]:
    """All hook-related attachments of a transcript (successes included)."""
    return [
        e["attachment"] for e in read_jsonl(path)
        if e.get("type") == "attachment" and isinstance(e.get("attachment"), dict)
        and str(e["attachment"].get("type", "")).startswith("hook_")
    ]
