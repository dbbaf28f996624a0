"""OpenAI-compatible chat completions through the `openai` SDK (`pip install ace-engine[llm]`).

Covers OpenAI itself and local servers that speak the same protocol — Ollama
(`http://localhost:11434/v1`), vLLM, LM Studio, llama.cpp — through `llm.base_url`. A local
server usually needs no key: when `llm.base_url` is set and the key variable is empty, a
placeholder is sent. No `response_format` is requested: not every local server accepts the
same one, and the reply is parsed robustly anyway.
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

DEFAULT_KEY_ENV = "OPENAI_API_KEY"
LOCAL_PLACEHOLDER_KEY = "not-needed"


class OpenAIProvider(Provider):
    name = "openai"

    model: str  # checked in __init__: this provider needs one

    def __init__(self, *, base_url: str | None = None, api_key_env: str | None = None,
                 env: Mapping[str, str] | None = None, **budgets: Any) -> None:
        super().__init__(**budgets)
        openai = load_sdk("openai")
        require_model(self.model, "name the model the endpoint serves", "qwen2.5-coder:7b")
        key_env, key = api_key(api_key_env, DEFAULT_KEY_ENV, env)
        if not key:
            if not base_url:
                raise missing_key(key_env, "export it, or set `llm.base_url` to a local OpenAI-compatible server")
            key = LOCAL_PLACEHOLDER_KEY
        self._errors = openai
        self.base_url = base_url or None
        self.client = openai.OpenAI(api_key=key, base_url=self.base_url, max_retries=0, timeout=self.timeout_s)

    def _call(self, system: str, user: str, max_tokens: int, timeout: float) -> Completion:
        errors = self._errors
        try:
            reply = self.client.chat.completions.create(
                model=self.model, max_tokens=max_tokens, timeout=timeout,
                messages=[{"role": "system", "content": system}, {"role": "user", "content": user}],
            )
        except errors.APITimeoutError:
            raise LLMTimeout(f"{self.base_url or 'the OpenAI API'} did not answer within {timeout:g}s; "
                             "raise `llm.timeout_s`") from None
        except errors.APIConnectionError as exc:
            raise unreachable(exc, self.base_url or "https://api.openai.com") from None
        except errors.APIStatusError as exc:
            raise LLMError(f"{self.base_url or 'the OpenAI API'} refused the call ({exc.status_code}): "
                           f"{short_error(exc)}; check `llm.model`, the key and `llm.base_url`") from None
        except errors.APIError as exc:
            raise LLMError(f"the call to {self.base_url or 'the OpenAI API'} failed: {short_error(exc)}; "
                           "check that the server runs and `llm.base_url`") from None
        choices = getattr(reply, "choices", None) or []
        text = (choices[0].message.content or "") if choices else ""
        usage = getattr(reply, "usage", None)
        return Completion(text, int(getattr(usage, "prompt_tokens", 0) or 0),
                          int(getattr(usage, "completion_tokens", 0) or 0), 0.0, getattr(reply, "model", self.model))
