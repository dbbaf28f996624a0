"""What the providers behind a vendor SDK (`anthropic_api`, `openai_compat`) share: the SDK loaded
on first use, `llm.model` required, the key read from the environment (never kept on the instance),
and the SDK's errors turned into LLMError / LLMTimeout that name the endpoint and the fix.

A subclass names its `sdk` package, its `default_key_env`, its `label` and `default_url` (what the
messages say) and its `model_hint`, and implements `connect` (the SDK's client) and `_call` (one
request, through `call_sdk`, which maps the SDK's exceptions).

Cost: importing the SDK once per provider; nothing per call beyond the SDK's own.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from .base import LLMError, LLMTimeout, Provider, api_key, load_sdk, require_model, short_error, unreachable


class SdkProvider(Provider):
    """A provider speaking to an HTTP API through the SDK package `sdk`."""

    sdk = ""
    default_key_env = ""
    label = ""  # the API as the messages name it ("the Anthropic API")
    default_url = ""  # where it is when `llm.base_url` is empty
    failed_fix = "check the network and `llm.base_url`"
    model_hint = ("", "")  # what to set `llm.model` to, and an example (`base.require_model`)

    model: str  # checked in __init__: these providers need one

    def __init__(self, *, base_url: str | None = None, api_key_env: str | None = None,
                 env: Mapping[str, str] | None = None, **budgets: Any) -> None:
        super().__init__(**budgets)
        self._sdk = load_sdk(self.sdk)
        require_model(self.model, *self.model_hint)
        self.base_url = base_url or None
        key_env, key = api_key(api_key_env, self.default_key_env, env)
        self.client = self.connect(key_env, key)

    def connect(self, key_env: str, key: str) -> Any:
        """The SDK's client for `key` (read from `key_env`, maybe empty): the subclass's part."""
        raise NotImplementedError

    def where(self) -> str:
        """The endpoint as the messages name it."""
        return self.label

    def call_sdk(self, request: Callable[[], Any], timeout: float) -> Any:
        """`request()` (one SDK call), its SDK exceptions as LLMTimeout or LLMError with the fix."""
        errors = self._sdk
        try:
            return request()
        except errors.APITimeoutError:
            raise LLMTimeout(f"{self.where()} did not answer within {timeout:g}s; raise `llm.timeout_s`") from None
        except errors.APIConnectionError as exc:
            raise unreachable(exc, self.base_url or self.default_url) from None
        except errors.APIStatusError as exc:
            raise LLMError(f"{self.where()} refused the call ({exc.status_code}): {short_error(exc)}; "
                           "check `llm.model`, the key and `llm.base_url`") from None
        except errors.APIError as exc:
            raise LLMError(f"the call to {self.where()} failed: {short_error(exc)}; {self.failed_fix}") from None
