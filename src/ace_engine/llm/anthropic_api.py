"""The Anthropic Messages API through the `anthropic` SDK (`pip install ace-engine[llm]`).

The key is read from the environment variable named by `llm.api_key_env` (default
`ANTHROPIC_API_KEY`) and never stored in config. The SDK's own retries are off: the timeout is
the whole budget of a call, and a failed job falls back to the offline reflector anyway.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .base import (
    Completion,
    LLMError,
    LLMTimeout,
    Provider,
    api_key,
    load_sdk,
    missing_key,
    require_model,
    short_error,
    unreachable,
)

DEFAULT_KEY_ENV = "ANTHROPIC_API_KEY"


class AnthropicProvider(Provider):
    name = "anthropic"

    model: str  # checked in __init__: this provider needs one

    def __init__(self, *, base_url: str | None = None, api_key_env: str | None = None,
                 env: Mapping[str, str] | None = None, **budgets: Any) -> None:
        super().__init__(**budgets)
        anthropic = load_sdk("anthropic")
        require_model(self.model, "set it to an Anthropic model name", "claude-sonnet-4-5")
        key_env, key = api_key(api_key_env, DEFAULT_KEY_ENV, env)
        if not key:
            raise missing_key(key_env, "export it (or name another one in `llm.api_key_env`)")
        self._errors = anthropic
        self.base_url = base_url or None
        self.client = anthropic.Anthropic(api_key=key, base_url=base_url or None, max_retries=0,
                                          timeout=self.timeout_s)

    def _call(self, system: str, user: str, max_tokens: int, timeout: float) -> Completion:
        errors = self._errors
        try:
            message = self.client.messages.create(
                model=self.model, max_tokens=max_tokens, system=system,
                messages=[{"role": "user", "content": user}], timeout=timeout,
            )
        except errors.APITimeoutError:
            raise LLMTimeout(f"the Anthropic API did not answer within {timeout:g}s; raise `llm.timeout_s`") from None
        except errors.APIConnectionError as exc:
            raise unreachable(exc, self.base_url or "https://api.anthropic.com") from None
        except errors.APIStatusError as exc:
            raise LLMError(f"the Anthropic API refused the call ({exc.status_code}): {short_error(exc)}; "
                           "check `llm.model`, the key and `llm.base_url`") from None
        except errors.APIError as exc:
            raise LLMError(f"the Anthropic API call failed: {short_error(exc)}; "
                           "check the network and `llm.base_url`") from None
        text = "".join(getattr(block, "text", "") for block in message.content if getattr(block, "type", "") == "text")
        usage = getattr(message, "usage", None)
        return Completion(text, int(getattr(usage, "input_tokens", 0) or 0),
                          int(getattr(usage, "output_tokens", 0) or 0), 0.0, getattr(message, "model", self.model))
