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

import os
import tempfile
from collections.abc import Mapping
from typing import Any

from ..core.files import json_object
from .agent_cli import CliProvider, find_cli
from .base import Completion, LLMError


def find_claude(configured: str | None = None) -> str | None:
    """The `claude` binary: `llm.claude_path` when set, else `claude` on PATH (`find_cli`)."""
    return find_cli("claude", configured, "llm.claude_path")


def parse_result(stdout: str) -> dict[str, Any]:
    """The `{"type": "result", …}` object of `--output-format json` (the last such line)."""
    for line in reversed(stdout.strip().splitlines()):
        line = line.strip()
        if not line.startswith("{"):
            continue
        value = json_object(line)
        if value is not None and value.get("type") == "result":
            return value
    raise LLMError(f"claude printed no result object (stdout began {stdout.strip()[:200]!r})")


class ClaudeCliProvider(CliProvider):
    name = "claude-cli"
    program, path_key, product, install = "claude", "llm.claude_path", "Claude Code CLI", "install Claude Code"

    def __init__(self, *, claude_path: str | None = None, env: Mapping[str, str] | None = None,
                 **budgets: Any) -> None:
        super().__init__(configured=claude_path, env=env, **budgets)

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
            returncode, stdout, stderr = self.run(self.command(system_file), cwd=workdir, env=env, stdin=user,
                                                  timeout=timeout)
        try:
            result = parse_result(stdout)
        except LLMError:
            detail = (stderr or stdout).strip()[-300:]
            raise LLMError(f"claude exited {returncode} without a result: {detail!r}") from None
        if result.get("is_error") or result.get("subtype") != "success":
            raise LLMError(f"claude reported an error ({result.get('subtype')}): {str(result.get('result'))[:300]!r}; "
                           "check that `claude -p hello` works in a terminal (login, model, network)")
        usage = result.get("usage") or {}
        input_tokens = sum(int(usage.get(k) or 0) for k in
                           ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens"))
        return Completion(str(result.get("result") or ""), input_tokens, int(usage.get("output_tokens") or 0),
                          float(result.get("total_cost_usd") or 0.0), self.model)

