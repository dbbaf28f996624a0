"""Language-model providers for reflection: optional, budgeted, JSON in and out.

Nothing here is needed for ace-engine to work, and nothing leaves the machine unless
`llm.provider` says so:

* `none` (default) — no model; learning uses the offline heuristic reflector;
* `claude-cli` — Claude Code in headless mode, with the user's own login (`claude_cli.py`);
* `anthropic` — the Anthropic Messages API via the `anthropic` SDK (`anthropic_api.py`);
* `openai` — any OpenAI-compatible endpoint via the `openai` SDK, e.g. a local Ollama or vLLM
  (`openai_compat.py`).

Every provider answers `complete_json(system, user, schema_hint, *, max_tokens, timeout) -> dict`
within the budgets of `base.Provider`. Callers catch `FAILURES` and fall back.
"""

from .base import Completion, LLMError, LLMTimeout, Provider, short_error
from .budget import BudgetExceeded, UsageLedger, usage_summary
from .structured import InvalidOutput, extract_json, validate

PROVIDERS = ("none", "claude-cli", "anthropic", "openai")

# What a caller with a fallback catches: every way a model call can fail to give a usable answer.
FAILURES = (LLMError, BudgetExceeded, InvalidOutput)

__all__ = ["Completion", "LLMError", "LLMTimeout", "Provider", "BudgetExceeded", "UsageLedger", "usage_summary",
           "InvalidOutput", "extract_json", "validate", "PROVIDERS", "FAILURES", "get_provider", "short_error"]


def _setting(cfg, key: str, default=None):
    try:
        value = cfg[key]
    except KeyError:
        return default
    return default if value in (None, "") else value


def get_provider(cfg, *, env: dict | None = None, ledger: UsageLedger | None = None) -> Provider | None:
    """The provider `cfg` (a `config.Config` or a plain dict of dotted keys) asks for, or None.

    Raises LLMError naming the problem and the fix when the provider is unknown or can't be set
    up (binary or SDK missing, no model, no key). `env` replaces os.environ for the provider
    (keys, and the environment of the `claude` subprocess)."""
    name = str(_setting(cfg, "llm.provider", "none")).strip().lower()
    if name in ("", "none", "off", "false", "0"):
        return None
    budgets = {
        "model": _setting(cfg, "llm.model"),
        "timeout_s": float(_setting(cfg, "llm.timeout_s", 120.0)),
        "max_tokens": int(_setting(cfg, "llm.max_tokens", 4000)),
        "max_calls_per_job": int(_setting(cfg, "llm.max_calls_per_job", 3)),
        "max_calls_per_day": int(_setting(cfg, "llm.max_calls_per_day", 0)),
        "max_tokens_per_day": int(_setting(cfg, "llm.max_tokens_per_day", 0)),
        "ledger": ledger if ledger is not None else UsageLedger(),
    }
    if name in ("claude-cli", "claude", "claude-code"):
        from .claude_cli import ClaudeCliProvider

        return ClaudeCliProvider(claude_path=_setting(cfg, "llm.claude_path"), env=env, **budgets)
    if name == "anthropic":
        from .anthropic_api import AnthropicProvider

        return AnthropicProvider(base_url=_setting(cfg, "llm.base_url"), api_key_env=_setting(cfg, "llm.api_key_env"),
                                 env=env, **budgets)
    if name in ("openai", "openai-compatible"):
        from .openai_compat import OpenAIProvider

        return OpenAIProvider(base_url=_setting(cfg, "llm.base_url"), api_key_env=_setting(cfg, "llm.api_key_env"),
                              env=env, **budgets)
    raise LLMError(f"unknown `llm.provider` {name!r}; use one of: {', '.join(PROVIDERS)}")
