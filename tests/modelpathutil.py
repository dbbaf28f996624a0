"""Helpers for the model-path tests: a stand-in agent CLI on PATH, `ace` run in a real terminal (a pty),
and the user config file the CLI writes."""

from __future__ import annotations

import os
import re
import select
import subprocess
import sys
import time
from pathlib import Path

SYSTEM_PATH = "/usr/bin:/bin"  # sh, git: no `claude` or `codex` of the machine

LOGGED_IN = '{"loggedIn": true, "authMethod": "claude.ai", "apiProvider": "firstParty"}'
LOGGED_OUT = '{"loggedIn": false, "authMethod": "none", "apiProvider": "firstParty"}'


def fake_claude(bindir: Path, *, logged_in: bool, answer: str | None = None, calls_log: Path | None = None) -> Path:
    """A `claude` that answers `auth status` as Claude Code 2.1.197 does, and `-p` either with
    `answer` (a result object) or as a logged-out Claude Code does: "Not logged in · Please run
    /login" and exit 1. Each `-p` call appends its argv to `calls_log`."""
    bindir.mkdir(parents=True, exist_ok=True)
    status, rc = (LOGGED_IN, 0) if logged_in else (LOGGED_OUT, 1)
    log = f'echo "$@" >> {calls_log}\n' if calls_log else ""
    if answer is None:
        reply = 'echo "Not logged in · Please run /login"\nexit 1'
    else:
        reply = ("cat > /dev/null\n"
                 f"echo '{{\"type\":\"result\",\"subtype\":\"success\",\"is_error\":false,\"result\":\"{answer}\","
                 "\"usage\":{\"input_tokens\":20,\"output_tokens\":2},\"total_cost_usd\":0.0001}'")
    script = (f"#!/bin/sh\nif [ \"$1\" = auth ]; then echo '{status}'; exit {rc}; fi\n"
              "if [ \"$1\" = --version ]; then echo '2.1.197 (Claude Code)'; exit 0; fi\n"
              f"{log}{reply}\n")
    path = bindir / "claude"
    path.write_text(script)
    path.chmod(0o755)
    return path


def user_config(home_env: dict[str, str] | None = None) -> Path:
    """The user config file `ace config set` writes (XDG_CONFIG_HOME is pinned by the conftest)."""
    base = (home_env or os.environ).get("XDG_CONFIG_HOME") or os.path.join(os.environ["HOME"], ".config")
    return Path(base) / "ace-engine" / "config.toml"


def ace_process(*args: str, env: dict[str, str], cwd: Path, stdin: str | None = "",
                whole_env: bool = False) -> subprocess.CompletedProcess:
    """`ace ARGS` as a real process, stdin a pipe (no terminal), with `env` over os.environ (or
    `env` alone: `whole_env`, for an environment built by the e2e helpers)."""
    base = {} if whole_env else dict(os.environ)
    return subprocess.run([sys.executable, "-m", "ace_engine.cli", *args], input=stdin, capture_output=True,
                          text=True, cwd=cwd, timeout=180, env={**base, "COLUMNS": "250", **env})


def ace_in_terminal(*args: str, env: dict[str, str], cwd: Path, answer: bytes = b"\r",
                    prompt: bytes = b"Learn with it?", timeout: float = 120, whole_env: bool = False
                    ) -> tuple[int, str]:
    """`ace ARGS` on a pseudo-terminal (stdin and stdout a tty, as in a shell); `answer` is typed
    when `prompt` shows. (exit code, everything the terminal showed)."""
    import pty

    pid, fd = pty.fork()
    if pid == 0:  # the child: exec at once, nothing of pytest runs here
        os.chdir(cwd)
        os.execve(sys.executable, [sys.executable, "-m", "ace_engine.cli", *args],
                  {**({} if whole_env else os.environ), "COLUMNS": "250", **env})
    out, typed, deadline, status = b"", False, time.monotonic() + timeout, None
    while time.monotonic() < deadline:
        ready, _, _ = select.select([fd], [], [], 1.0)
        if not ready:
            done, code = os.waitpid(pid, os.WNOHANG)
            if done:
                status = code
                break
            continue
        try:
            data = os.read(fd, 4096)
        except OSError:  # the child closed the terminal
            break
        if not data:
            break
        out += data
        if not typed and prompt in out:
            os.write(fd, answer)
            typed = True
    if status is None:
        if time.monotonic() >= deadline:
            os.kill(pid, 9)  # the child this helper started, stuck: the test fails on its output
        status = os.waitpid(pid, 0)[1]
    os.close(fd)
    text = out.decode("utf-8", "replace").replace("\r\n", "\n")
    return os.waitstatus_to_exitcode(status), ANSI.sub("", text)


ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
