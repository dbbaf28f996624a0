"""Claude Code in headless mode (`claude -p --output-format json`): uses the user's own login.

How it is run, and why (verified against Claude Code 2.1.197):

* the prompt goes on stdin and the system prompt in a file (`--system-prompt-file`), so neither
  shows up in `ps` and neither hits the argv length limit;
* `ACE_DISABLED=1` in its environment: ace-engine's hooks — installed in the user's settings or
  through the plugin — return at once, so learning never captures (and learns from) itself.
  Not `--bare`, which would also skip the user's OAuth login (it accepts only an API key);
* `--tools ""` (no tools: a reflection needs none and must not act), `--no-session-persistence`
  (no transcript in the user's history), `--strict-mcp-config` (no MCP servers started, not even
  a repository's `.mcp.json`), `--disable-slash-commands`, `--setting-sources user` (only the
  user's own settings: never a repository's `.claude/settings*.json`, its hooks or its env), and
  a fresh empty working directory (no CLAUDE.md or `.claude/` of any repository pulled in);
* the binary is `llm.claude_path` — user-level config only (a project file can't set it without
  `ace trust`), absolute or a bare name looked up on the absolute entries of PATH; a relative
  path is refused, never resolved against the working directory;
* `CLAUDE_CODE_MAX_OUTPUT_TOKENS` caps the reply; the process group is killed at the timeout.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import tempfile
from collections.abc import Mapping
from typing import Any

from .base import Completion, LLMError, LLMTimeout, Provider


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


def find_claude(configured: str | None = None) -> str | None:
    """The `claude` binary: `llm.claude_path` when set, else `claude` on PATH (`find_cli`)."""
    return find_cli("claude", configured, "llm.claude_path")


def parse_result(stdout: str) -> dict[str, Any]:
    """The `{"type": "result", …}` object of `--output-format json` (the last such line)."""
    for line in reversed(stdout.strip().splitlines()):
        line = line.strip()
        if not line.startswith("{"):
            continue
        try:
            value = json.loads(line)
        except ValueError:
            continue
        if isinstance(value, dict) and value.get("type") == "result":
            return value
    raise LLMError(f"claude printed no result object (stdout began {stdout.strip()[:200]!r})")


class ClaudeCliProvider(Provider):
    name = "claude-cli"

    def __init__(self, *, claude_path: str | None = None, env: Mapping[str, str] | None = None,
                 **budgets: Any) -> None:
        super().__init__(**budgets)
        binary = find_claude(claude_path)
        if not binary:
            where = f"`{claude_path}` (llm.claude_path)" if claude_path else "`claude` on PATH"
            raise LLMError(f"Claude Code CLI not found: {where}; install Claude Code or set `llm.claude_path`, "
                           "or choose another `llm.provider`")
        self.binary: str = binary
        self.env = dict(os.environ if env is None else env)

    def command(self, system_file: str) -> list[str]:
        args = [self.binary, "-p", "--output-format", "json", "--system-prompt-file", system_file,
                "--tools", "", "--no-session-persistence", "--strict-mcp-config", "--disable-slash-commands",
                "--setting-sources", "user"]
        if self.model:
            args += ["--model", self.model]
        return args

    def _call(self, system: str, user: str, max_tokens: int, timeout: float) -> Completion:
        env = dict(self.env)
        for name in ("CLAUDE_PROJECT_DIR", "CLAUDE_ENV_FILE"):  # the hook's session, not this one
            env.pop(name, None)
        env["ACE_DISABLED"] = "1"
        env["CLAUDE_CODE_MAX_OUTPUT_TOKENS"] = str(max_tokens)
        with tempfile.TemporaryDirectory(prefix="ace-llm-") as workdir:
            system_file = os.path.join(workdir, ".system-prompt.txt")
            with open(system_file, "w", encoding="utf-8") as fh:
                fh.write(system)
            try:
                proc = subprocess.Popen(self.command(system_file), cwd=workdir, env=env, stdin=subprocess.PIPE,
                                        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                        encoding="utf-8", errors="replace", start_new_session=True)
            except OSError as exc:
                raise LLMError(f"cannot run {self.binary}: {exc}; check `llm.claude_path`") from exc
            try:
                stdout, stderr = proc.communicate(user, timeout=timeout)
            except subprocess.TimeoutExpired:
                kill_group(proc)
                proc.communicate()
                raise LLMTimeout(f"claude did not answer within {timeout:g}s; raise `llm.timeout_s`") from None
            finally:
                if proc.poll() is None:
                    kill_group(proc)
        try:
            result = parse_result(stdout)
        except LLMError:
            detail = (stderr or stdout).strip()[-300:]
            raise LLMError(f"claude exited {proc.returncode} without a result: {detail!r}") from None
        if result.get("is_error") or result.get("subtype") != "success":
            raise LLMError(f"claude reported an error ({result.get('subtype')}): {str(result.get('result'))[:300]!r}; "
                           "check that `claude -p hello` works in a terminal (login, model, network)")
        usage = result.get("usage") or {}
        input_tokens = sum(int(usage.get(k) or 0) for k in
                           ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens"))
        return Completion(str(result.get("result") or ""), input_tokens, int(usage.get("output_tokens") or 0),
                          float(result.get("total_cost_usd") or 0.0), self.model)


def kill_group(proc: subprocess.Popen[str]) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)  # the group this provider started, nothing else
    except (ProcessLookupError, PermissionError, AttributeError):
        try:
            proc.kill()
        except OSError:
            pass
