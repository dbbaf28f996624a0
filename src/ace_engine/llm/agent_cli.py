"""What the providers that run an agent's own CLI (`claude_cli`, `codex_cli`) share: finding the
binary, and running it once within a timeout.

* `find_cli` — the binary a setting names (`llm.claude_path`, `llm.codex_path`: absolute, `~/…`,
  or a bare name looked up on the absolute entries of PATH), else the CLI's own name on PATH; a
  relative path is refused, never resolved against the working directory (a repository's);
* `CliProvider` — a provider whose `__init__` finds its binary (LLMError naming the setting and
  how to install the CLI when it is missing), and whose `run` starts it in its own process group
  in a given directory, writes the prompt to its stdin, and kills the whole group at the timeout.

Cost: `find_cli` is one PATH lookup; `run` is one process of the CLI.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
from collections.abc import Mapping
from typing import Any

from .base import LLMError, LLMTimeout, Provider


def _absolute_path_dirs() -> str:
    """$PATH without relative entries (`.`, empty, `bin`): those would resolve against whatever
    the working directory is — in a hook or `ace learn`, a repository."""
    return os.pathsep.join(d for d in os.environ.get("PATH", os.defpath).split(os.pathsep) if os.path.isabs(d))


def find_cli(name: str, configured: str | None = None, key: str = "llm.claude_path") -> str | None:
    """The `name` binary: `configured` (the setting `key`) when set (an absolute path, `~/…`, or a
    bare name looked up on PATH), else `name` on PATH. Raises LLMError for a relative path:
    resolved against the working directory, it would run whatever a repository puts there."""
    if configured:
        path = os.path.expanduser(configured)
        if os.path.isabs(path):
            return path if os.path.isfile(path) and os.access(path, os.X_OK) else None
        if os.sep in path or (os.altsep and os.altsep in path):
            raise LLMError(f"`{key}` {configured!r} is a relative path; ace-engine never resolves it "
                           "against the working directory (a repository's). Set an absolute path, or a bare "
                           "command name found on PATH")
        return shutil.which(path, path=_absolute_path_dirs())
    return shutil.which(name, path=_absolute_path_dirs())


def kill_group(proc: subprocess.Popen[str]) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)  # the group this provider started, nothing else
    except (ProcessLookupError, PermissionError, AttributeError):
        try:
            proc.kill()
        except OSError:
            pass


class CliProvider(Provider):
    """A provider that runs the CLI `program` (found through the setting `path_key`); `product`
    and `install` name it and how to get it in the error for a missing binary."""

    program = ""
    path_key = ""
    product = ""
    install = ""

    def __init__(self, *, configured: str | None, env: Mapping[str, str] | None, **budgets: Any) -> None:
        super().__init__(**budgets)
        binary = find_cli(self.program, configured, self.path_key)
        if not binary:
            where = f"`{configured}` ({self.path_key})" if configured else f"`{self.program}` on PATH"
            raise LLMError(f"{self.product} not found: {where}; {self.install} or set `{self.path_key}`, "
                           "or choose another `llm.provider`")
        self.binary: str = binary
        self.env = dict(os.environ if env is None else env)

    def run(self, args: list[str], *, cwd: str, env: Mapping[str, str], stdin: str,
            timeout: float) -> tuple[int, str, str]:
        """(exit code, stdout, stderr) of `args` run in `cwd` with `stdin` written to it; LLMTimeout
        when it has not finished within `timeout` seconds (its process group killed then)."""
        try:
            proc = subprocess.Popen(args, cwd=cwd, env=dict(env), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                    stderr=subprocess.PIPE, text=True, encoding="utf-8", errors="replace",
                                    start_new_session=True)
        except OSError as exc:
            raise LLMError(f"cannot run {self.binary}: {exc}; check `{self.path_key}`") from exc
        try:
            stdout, stderr = proc.communicate(stdin, timeout=timeout)
        except subprocess.TimeoutExpired:
            kill_group(proc)
            proc.communicate()
            raise LLMTimeout(f"{self.program} did not answer within {timeout:g}s; raise `llm.timeout_s`") from None
        finally:
            if proc.poll() is None:
                kill_group(proc)
        return proc.returncode, stdout, stderr
