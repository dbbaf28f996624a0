"""Language-model providers for reflection: optional, budgeted, JSON in and out.

Nothing here is needed for ace-engine to work, and nothing leaves the machine unless
`llm.provider` says so:

* `none` (default) — no model; learning uses the offline heuristic reflector;
* `claude-cli` — Claude Code in headless mode, with the user's own login (`claude_cli.py`), a
  small fast model by default (`llm.claude_model`);
* `codex-cli` — Codex CLI's `codex exec`, with the user's own login (`codex_cli.py`);
* `anthropic` — the Anthropic Messages API via the `anthropic` SDK (`anthropic_api.py`);
* `openai` — any OpenAI-compatible endpoint via the `openai` SDK, e.g. a local Ollama or vLLM
  (`openai_compat.py`).

Each provider is one row of `REGISTRY` (its module, its class, the settings its constructor
reads beyond the shared budgets, and the setting that names its default model): adding one is its
module and its row. Every provider answers `complete_json(system, user, schema_hint, *, max_tokens, timeout) -> dict`
within the budgets of `base.Provider`. Callers catch `FAILURES` and fall back; the failure is
recorded with its true cause (`health.py`) for `ace doctor`, `ace status` and SessionStart. The settings
(`llm.*`) and their defaults are rows of `config.SETTINGS`; nothing here restates them.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from ..core.config import value_of as _setting
from ..core.errors import BudgetExceeded, InvalidOutput, LLMError, LLMTimeout
from . import health
from .base import Completion, Provider, short_error
from .budget import UsageLedger, usage_summary
from .structured import extract_json, validate

if TYPE_CHECKING:
    from collections.abc import Mapping

    from ..core.config import Config

class Row:
    """A provider: `module`.`cls` built with the shared budgets, plus `{keyword: setting}` of
    `settings`; `default_model` is the setting read when `llm.model` is empty (None: no such); `sdk`
    the package it needs from the `llm` extra (None: it runs a CLI instead)."""

    __slots__ = ("module", "cls", "settings", "default_model", "sdk")

    def __init__(self, module: str, cls: str, settings: dict[str, str], default_model: str | None = None,
                 sdk: str | None = None):
        self.module, self.cls, self.settings, self.default_model, self.sdk = module, cls, settings, default_model, sdk


REGISTRY: dict[str, Row] = {
    "claude-cli": Row("claude_cli", "ClaudeCliProvider", {"claude_path": "llm.claude_path"}, "llm.claude_model"),
    "codex-cli": Row("codex_cli", "CodexCliProvider", {"codex_path": "llm.codex_path"}, "llm.codex_model"),
    "anthropic": Row("anthropic_api", "AnthropicProvider",
                     {"base_url": "llm.base_url", "api_key_env": "llm.api_key_env"}, sdk="anthropic"),
    "openai": Row("openai_compat", "OpenAIProvider",
                  {"base_url": "llm.base_url", "api_key_env": "llm.api_key_env"}, sdk="openai"),
}
PROVIDERS = ("none", *REGISTRY)
ALIASES = {"claude": "claude-cli", "claude-code": "claude-cli", "codex": "codex-cli", "openai-compatible": "openai"}

# What a caller with a fallback catches: every way a model call can fail to give a usable answer.
FAILURES = (LLMError, BudgetExceeded, InvalidOutput)

__all__ = ["Completion", "LLMError", "LLMTimeout", "Provider", "BudgetExceeded", "UsageLedger", "usage_summary",
           "InvalidOutput", "extract_json", "validate", "PROVIDERS", "FAILURES", "get_provider", "short_error",
           "provider_name", "health", "REGISTRY"]


def provider_name(cfg: Config | Mapping[str, Any]) -> str | None:
    """The canonical name of the provider `cfg` asks for (`claude-cli` for `claude`…), None for none."""
    name = str(_setting(cfg, "llm.provider")).strip().lower()
    if name in ("", "none", "off", "false", "0"):
        return None
    return ALIASES.get(name, name)


def get_provider(cfg: Config | Mapping[str, Any], *, env: Mapping[str, str] | None = None,
                 ledger: UsageLedger | None = None) -> Provider | None:
    """The provider `cfg` (a `config.Config` or a plain dict of dotted keys) asks for, or None.

    Raises LLMError naming the problem and the fix when the provider is unknown or can't be set
    up (binary or SDK missing, no model, no key) — recorded first as the model path's failure
    (`health.py`), so that the fallback it causes is explained. `env` replaces os.environ for the
    provider (keys, and the environment of the `claude` / `codex` subprocess)."""
    name = provider_name(cfg)
    if name is None:
        return None
    ledger = ledger if ledger is not None else UsageLedger()
    try:
        return _build(name, cfg, env, ledger)
    except LLMError as exc:
        health.record_failure(name, str(exc), path=health.path_for(ledger.path))
        raise


def _build(name: str, cfg: Config | Mapping[str, Any], env: Mapping[str, str] | None,
           ledger: UsageLedger) -> Provider:
    budgets: dict[str, Any] = {
        "model": _setting(cfg, "llm.model") or None,
        "timeout_s": _setting(cfg, "llm.timeout_s"),
        "max_tokens": _setting(cfg, "llm.max_tokens"),
        "max_calls_per_job": _setting(cfg, "llm.max_calls_per_job"),
        "max_calls_per_day": _setting(cfg, "llm.max_calls_per_day"),
        "max_tokens_per_day": _setting(cfg, "llm.max_tokens_per_day"),
        "ledger": ledger,
    }
    row = REGISTRY.get(name)
    if row is None:
        raise LLMError(f"unknown `llm.provider` {name!r}; use one of: {', '.join(PROVIDERS)}")
    if row.default_model:
        budgets["model"] = budgets["model"] or _setting(cfg, row.default_model) or None
    cls = getattr(importlib.import_module(f"{__name__}.{row.module}"), row.cls)
    own = {keyword: _setting(cfg, setting) or None for keyword, setting in row.settings.items()}
    return cls(**own, env=env, **budgets)
