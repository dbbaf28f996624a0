"""Codex CLI in non-interactive mode (`codex exec`): uses the user's own Codex login.

Modelled on `claude_cli.py`; how it is run, and why (flags as documented by `codex exec --help`,
Codex CLI 0.169):

* the whole prompt goes on stdin (`-` as the prompt argument): Codex has no system-prompt flag,
  so the system text comes first, then the task, fenced as the reflector's prompt fences it;
  nothing shows up in `ps` and nothing hits the argv length limit;
* the final message is read from the file `--output-last-message` writes, and the token usage
  from the `turn.completed` event of `--json` (a `turn.failed` or `error` event is the cause of a
  failure, quoted as Codex said it);
* no tools (`NO_TOOLS`: shell, web search, browser, MCP servers… disabled) and `--sandbox
  read-only` besides (a reflection must not act on what the task text asks), `--ephemeral` (no
  session file in the user's history), `--skip-git-repo-check` and a fresh empty working directory
  (no AGENTS.md or `.codex/` of any repository pulled in), `--color never`;
* `ACE_DISABLED=1` in its environment: ace-engine's own Codex hooks return at once, so learning
  never captures (and learns from) itself;
* the binary is `llm.codex_path` — user-level config only, absolute or a bare name looked up on
  the absolute entries of PATH (`agent_cli.find_cli`); the process group is killed at the timeout.

Codex takes no per-call output cap from the command line: `llm.max_tokens` is not enforced for this
provider (the daily token cap still is, from the usage Codex reports).

Cost: one `codex` process per call (its start-up, then the model's answer).
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Mapping
from typing import Any

from ..core.files import json_object
from .agent_cli import CliProvider, find_cli
from .base import Completion, LLMError

PROMPT_JOIN = "\n\n---\n\n"

# A reflection needs no tool and must not act on what the (untrusted) task text asks: no shell, no web
# search, no browser or computer use, no MCP server of the user's config, no image reading, no
# sub-agents. Verified with 0.169 against the request it sends (tests/e2e/test_model_path_e2e.py):
# `apply_patch` and `request_user_input` remain, harmless in a read-only sandbox with no user. Codex
# refuses an unknown feature name ("Unknown feature flag: …") rather than ignoring it: should a later
# version rename one, the call fails and says so — never runs with the tool on.
NO_TOOLS = ("--disable", "shell_tool", "--disable", "unified_exec", "--disable", "browser_use",
            "--disable", "computer_use", "--disable", "in_app_browser", "--disable", "apps",
            "--disable", "sleep_tool", "--disable", "tool_suggest", "--disable", "goals",
            "--disable", "multi_agent", "--disable", "view_image", "--disable", "image_generation",
            "-c", 'web_search="disabled"', "-c", "mcp_servers={}", "-c", "include_apply_patch_tool=false")


def find_codex(configured: str | None = None) -> str | None:
    """The `codex` binary: `llm.codex_path` when set, else `codex` on PATH."""
    return find_cli("codex", configured, "llm.codex_path")


def parse_events(stdout: str) -> dict[str, Any]:
    """{text, usage, error} from the JSONL events of `codex exec --json` (lines that aren't JSON
    are skipped: Codex prints warnings on the same streams)."""
    out: dict[str, Any] = {"text": None, "usage": {}, "error": None}
    for line in stdout.splitlines():
        line = line.strip()
        if not line.startswith("{"):
            continue
        event = json_object(line)
        if event is None:
            continue
        kind = event.get("type")
        if kind == "turn.completed" and isinstance(event.get("usage"), dict):
            out["usage"] = event["usage"]
        elif kind == "item.completed" and isinstance(event.get("item"), dict):
            item = event["item"]
            if item.get("type") in ("agent_message", "assistant_message") and isinstance(item.get("text"), str):
                out["text"] = item["text"]
        elif kind == "turn.failed":
            error = event.get("error")
            out["error"] = str(error.get("message") if isinstance(error, dict) else error)
        elif kind == "error" and event.get("message"):
            out["error"] = str(event["message"])
    return out


class CodexCliProvider(CliProvider):
    name = "codex-cli"
    program, path_key, product = "codex", "llm.codex_path", "Codex CLI"
    install = "install Codex (npm install -g @openai/codex)"

    def __init__(self, *, codex_path: str | None = None, env: Mapping[str, str] | None = None,
                 **budgets: Any) -> None:
        super().__init__(configured=codex_path, env=env, **budgets)

    def command(self, last_message_file: str) -> list[str]:
        args = [self.binary, "exec", "--json", "--color", "never", "--sandbox", "read-only", "--ephemeral",
                "--skip-git-repo-check", "--output-last-message", last_message_file, *NO_TOOLS]
        if self.model:
            args += ["--model", self.model]
        return [*args, "-"]

    def _call(self, system: str, user: str, max_tokens: int, timeout: float) -> Completion:
        env = dict(self.env)
        env["ACE_DISABLED"] = "1"
        with tempfile.TemporaryDirectory(prefix="ace-llm-") as workdir:
            last = os.path.join(workdir, ".last-message.txt")
            returncode, stdout, stderr = self.run(self.command(last), cwd=workdir, env=env,
                                                  stdin=system.rstrip() + PROMPT_JOIN + user, timeout=timeout)
            try:
                with open(last, encoding="utf-8", errors="replace") as fh:
                    text: str | None = fh.read()
            except OSError:
                text = None
        events = parse_events(stdout)
        if events["error"] or returncode != 0:
            said = next((line.strip() for line in (stderr or "").splitlines() if line.startswith("Error")), "")
            detail = events["error"] or said or " ".join(((stderr or "") + " " + (stdout or "")).split())[-300:]
            raise LLMError(f"codex exited {returncode}: {detail[:300]!r}; check that `codex exec hello` works "
                           "in a terminal (login, model, network)")
        text = text if text and text.strip() else events["text"]
        if not text:
            raise LLMError(f"codex gave no final message (stderr ended {(stderr or '').strip()[-200:]!r})")
        usage = events["usage"]
        return Completion(text, int(usage.get("input_tokens") or 0), int(usage.get("output_tokens") or 0),
                          0.0, self.model)
