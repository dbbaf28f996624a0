"""Language-model providers for reflection: optional, budgeted, JSON in and out.

Nothing here is needed for ace-engine to work, and nothing leaves the machine unless
`llm.provider` says so:

* `none` (default) — no model; learning uses the offline heuristic reflector;
* `claude-cli` — Claude Code in headless mode, with the user's own login (`claude_cli.py`);
* `anthropic` — the Anthropic Messages API via the `anthropic` SDK (`anthropic_api.py`);
* `openai` — any OpenAI-compatible endpoint via the `openai` SDK, e.g. a local Ollama or vLLM
  (`openai_compat.py`).

Every provider answers `complete_json(system, user, schema_hint, *, max_tokens, timeout) -> dict`
within the budgets of `base.Provider`. Callers catch `FAILURES` and fall back. The settings
(`llm.*`) and their defaults are rows of `config.SETTINGS`; nothing here restates them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..core.config import value_of as _setting
from ..core.errors import BudgetExceeded, InvalidOutput, LLMError, LLMTimeout
from .base import Completion, Provider, short_error
from .budget import UsageLedger, usage_summary
from .structured import extract_json, validate

if TYPE_CHECKING:
    from collections.abc import Mapping

    from ..core.config import Config

PROVIDERS = ("none", "claude-cli", "anthropic", "openai")

# What a caller with a fallback catches: every way a model call can fail to give a usable answer.
FAILURES = (LLMError, BudgetExceeded, InvalidOutput)

__all__ = ["Completion", "LLMError", "LLMTimeout", "Provider", "BudgetExceeded", "UsageLedger", "usage_summary",
           "InvalidOutput", "extract_json", "validate", "PROVIDERS", "FAILURES", "get_provider", "short_error"]


def get_provider(cfg: Config | Mapping[str, Any], *, env: Mapping[str, str] | None = None,
                 ledger: UsageLedger | None = None) -> Provider | None:
    """The provider `cfg` (a `config.Config` or a plain dict of dotted keys) asks for, or None.

    Raises LLMError naming the problem and the fix when the provider is unknown or can't be set
    up (binary or SDK missing, no model, no key). `env` replaces os.environ for the provider
    (keys, and the environment of the `claude` subprocess)."""
    name = str(_setting(cfg, "llm.provider")).strip().lower()
    if name in ("", "none", "off", "false", "0"):
        return None
    budgets: dict[str, Any] = {
        "model": _setting(cfg, "llm.model") or None,
        "timeout_s": _setting(cfg, "llm.timeout_s"),
        "max_tokens": _setting(cfg, "llm.max_tokens"),
        "max_calls_per_job": _setting(cfg, "llm.max_calls_per_job"),
        "max_calls_per_day": _setting(cfg, "llm.max_calls_per_day"),
        "max_tokens_per_day": _setting(cfg, "llm.max_tokens_per_day"),
        "ledger": ledger if ledger is not None else UsageLedger(),
    }
    if name in ("claude-cli", "claude", "claude-code"):
        from .claude_cli import ClaudeCliProvider

        return ClaudeCliProvider(claude_path=_setting(cfg, "llm.claude_path") or None, env=env, **budgets)
    if name == "anthropic":
        from .anthropic_api import AnthropicProvider

        return AnthropicProvider(base_url=_setting(cfg, "llm.base_url") or None,
                                 api_key_env=_setting(cfg, "llm.api_key_env") or None, env=env, **budgets)
    if name in ("openai", "openai-compatible"):
        from .openai_compat import OpenAIProvider

        return OpenAIProvider(base_url=_setting(cfg, "llm.base_url") or None,
                              api_key_env=_setting(cfg, "llm.api_key_env") or None, env=env, **budgets)
    raise LLMError(f"unknown `llm.provider` {name!r}; use one of: {', '.join(PROVIDERS)}")
