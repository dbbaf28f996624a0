"""OpenAI-compatible chat completions through the `openai` SDK (`pip install ace-engine[llm]`).

Covers OpenAI itself and local servers that speak the same protocol — Ollama
(`http://localhost:11434/v1`), vLLM, LM Studio, llama.cpp — through `llm.base_url`. A local
server usually needs no key: when `llm.base_url` is set and the key variable is empty, a
placeholder is sent. No `response_format` is requested: not every local server accepts the
same one, and the reply is parsed robustly anyway.

Cost: one HTTP request per call (the SDK imported once).
"""

from __future__ import annotations

from typing import Any

from .base import Completion, missing_key
from .sdk_provider import SdkProvider

DEFAULT_KEY_ENV = "OPENAI_API_KEY"
LOCAL_PLACEHOLDER_KEY = "not-needed"


class OpenAIProvider(SdkProvider):
    name = "openai"
    sdk, default_key_env, label, default_url = "openai", DEFAULT_KEY_ENV, "the OpenAI API", "https://api.openai.com"
    failed_fix = "check that the server runs and `llm.base_url`"

    model_hint = ("name the model the endpoint serves", "qwen2.5-coder:7b")

    def connect(self, key_env: str, key: str) -> Any:
        if not key:
            if not self.base_url:
                raise missing_key(key_env, "export it, or set `llm.base_url` to a local OpenAI-compatible server")
            key = LOCAL_PLACEHOLDER_KEY
        return self._sdk.OpenAI(api_key=key, base_url=self.base_url, max_retries=0, timeout=self.timeout_s)

    def where(self) -> str:
        return self.base_url or self.label

    def _call(self, system: str, user: str, max_tokens: int, timeout: float) -> Completion:
        reply = self.call_sdk(lambda: self.client.chat.completions.create(
            model=self.model, max_tokens=max_tokens, timeout=timeout,
            messages=[{"role": "system", "content": system}, {"role": "user", "content": user}],
        ), timeout)
        choices = getattr(reply, "choices", None) or []
        text = (choices[0].message.content or "") if choices else ""
        usage = getattr(reply, "usage", None)
        return Completion(text, int(getattr(usage, "prompt_tokens", 0) or 0),
                          int(getattr(usage, "completion_tokens", 0) or 0), 0.0, getattr(reply, "model", self.model))
