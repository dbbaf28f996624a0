"""The Anthropic Messages API through the `anthropic` SDK (`pip install ace-engine[llm]`).

The key is read from the environment variable named by `llm.api_key_env` (default
`ANTHROPIC_API_KEY`) and never stored in config. The SDK's own retries are off: the timeout is
the whole budget of a call, and a failed job falls back to the offline reflector anyway.

Cost: one HTTPS request per call (the SDK imported once).
"""

from __future__ import annotations

from typing import Any

from .base import Completion, missing_key
from .sdk_provider import SdkProvider

DEFAULT_KEY_ENV = "ANTHROPIC_API_KEY"


class AnthropicProvider(SdkProvider):
    name = "anthropic"
    sdk, default_key_env, label, default_url = "anthropic", DEFAULT_KEY_ENV, "the Anthropic API", \
        "https://api.anthropic.com"

    model_hint = ("set it to an Anthropic model name", "claude-sonnet-4-5")

    def connect(self, key_env: str, key: str) -> Any:
        if not key:
            raise missing_key(key_env, "export it (or name another one in `llm.api_key_env`)")
        return self._sdk.Anthropic(api_key=key, base_url=self.base_url, max_retries=0, timeout=self.timeout_s)

    def _call(self, system: str, user: str, max_tokens: int, timeout: float) -> Completion:
        message = self.call_sdk(lambda: self.client.messages.create(
            model=self.model, max_tokens=max_tokens, system=system,
            messages=[{"role": "user", "content": user}], timeout=timeout,
        ), timeout)
        text = "".join(getattr(block, "text", "") for block in message.content if getattr(block, "type", "") == "text")
        usage = getattr(message, "usage", None)
        return Completion(text, int(getattr(usage, "input_tokens", 0) or 0),
                          int(getattr(usage, "output_tokens", 0) or 0), 0.0, getattr(message, "model", self.model))
