"""The provider interface: one JSON answer for one prompt, within budgets.

A provider implements `_call` (one request, plain text back, with the usage it reports); this
class adds what every provider needs the same way:

* budgets — a cap on calls per learning job (`start_job` resets it), the shared daily call and
  token caps (`budget.UsageLedger`), a timeout and an output token cap per call;
* the API key — `api_key`: read from the environment variable `llm.api_key_env` names (else the
  provider's default), never from a file; `missing_key` is the error that says how to fix it;
* health — every failure is recorded with its own message (`health.py`: what `ace doctor`, `ace
  status` and the next SessionStart report, with the fix), and a call that works clears it;
* structured output — the schema is appended to the system prompt, the first fitting JSON
  object is taken from the reply, and an unusable reply gets exactly one retry with a
  "reply with JSON only" nudge naming what was wrong.

The budgets have no defaults here: `llm.get_provider` passes them from the config, whose table
(`config.SETTINGS`) is the one place they are written. The errors live in `errors.py`.
"""

from __future__ import annotations

import os
import time
from collections.abc import Mapping
from typing import Any, NamedTuple

from ..core.errors import BudgetExceeded, InvalidOutput, LLMError, LLMTimeout
from ..core.fmt import estimate_tokens
from . import health
from .budget import UsageLedger
from .structured import extract_json, schema_text

__all__ = ["Completion", "LLMError", "LLMTimeout", "BudgetExceeded", "InvalidOutput", "Provider", "api_key",
           "load_sdk", "missing_key", "require_model", "short_error", "unreachable"]


class Completion(NamedTuple):
    """One reply: its text and what it cost (tokens estimated when the provider doesn't say)."""

    text: str
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float = 0.0
    model: str | None = None
    seconds: float = 0.0


def api_key(api_key_env: str | None, default_env: str, env: Mapping[str, str] | None = None) -> tuple[str, str]:
    """(the variable's name, its value or ""): the one credential lookup of every provider. Only the
    name comes from the config (`llm.api_key_env`, else `default_env`); the key itself only from
    the environment (`env` in place of os.environ when given)."""
    key_env = api_key_env or default_env
    return key_env, (os.environ if env is None else env).get(key_env) or ""


def load_sdk(package: str) -> Any:
    """The provider SDK `package`, imported on first use; LLMError naming the install command for
    the way ace-engine was installed when it is missing."""
    import importlib

    try:
        return importlib.import_module(package)
    except ImportError:
        from ..core.install_route import extra_hint

        raise LLMError(f"the `{package}` package is not installed; `{extra_hint('llm', [package])}`") from None


def require_model(model: str | None, what: str, example: str) -> None:
    """LLMError unless `llm.model` is set: `what` to set it to, `example` a model name."""
    if not model:
        raise LLMError(f"`llm.model` is not set; {what}, e.g. in config.toml `[llm] model = \"{example}\"` "
                       "or ACE_LLM_MODEL")


def missing_key(key_env: str, fix: str) -> LLMError:
    """The error for an empty key variable, ending with how to `fix` it."""
    return LLMError(f"no API key: the environment variable `{key_env}` is empty; {fix}")


def short_error(exc: BaseException) -> str:
    """An SDK exception as one short line for a message or the log."""
    return " ".join(str(exc).split())[:300]


def unreachable(exc: BaseException, where: str) -> LLMError:
    """The error for a connection that failed (an SDK's APIConnectionError): what the transport
    said underneath ("[Errno 111] Connection refused"), since the SDK's own text ("Connection
    error.") names no cause."""
    cause: BaseException | None = exc
    while cause is not None and cause.__cause__ is not None:
        cause = cause.__cause__
    said = short_error(cause) if cause is not None and cause is not exc else short_error(exc)
    verb = "refused the connection" if "refused" in said.lower() else "could not be reached"
    return LLMError(f"the endpoint {where} {verb} ({said}); start the server or correct `llm.base_url`")


JSON_INSTRUCTIONS = ("Reply with exactly one JSON object and nothing else — no prose, no code fences. "
                     "It must match this JSON Schema:\n")
RETRY_NUDGE = ("\n\nYour previous reply could not be used: {problem}.\n"
               "Reply with JSON only: one JSON object matching the schema in the system prompt, "
               "starting with `{{` and ending with `}}`, no explanations.")


class Provider:
    """Base of the providers. Not thread-safe: one instance per worker."""

    name = "base"

    def __init__(self, *, model: str | None, timeout_s: float, max_tokens: int, max_calls_per_job: int,
                 max_calls_per_day: int, max_tokens_per_day: int, ledger: UsageLedger | None = None) -> None:
        self.model = model or None
        self.timeout_s = timeout_s
        self.max_tokens = max_tokens
        self.max_calls_per_job = max_calls_per_job
        self.daily_caps = (max_calls_per_day, max_tokens_per_day)  # what the shared ledger checks
        self.ledger = ledger
        self.calls = 0
        self.usage: dict[str, Any] = {}
        self.start_job()

    # -- budgets ---------------------------------------------------------------------------------

    def start_job(self) -> None:
        """Begin a new learning job: the per-job call cap and the job's usage start from zero."""
        self.calls = 0
        self.usage = {"calls": 0, "input_tokens": 0, "output_tokens": 0, "cost_usd": 0.0, "seconds": 0.0}

    def _check_budget(self) -> None:
        if self.max_calls_per_job and self.calls >= self.max_calls_per_job:
            raise BudgetExceeded(f"this job already made {self.calls} LLM calls (`llm.max_calls_per_job` = "
                                 f"{self.max_calls_per_job}); raise it to allow more")
        if self.ledger is not None:
            self.ledger.check(*self.daily_caps)

    def _account(self, done: Completion) -> None:
        self.usage["calls"] += 1
        self.usage["input_tokens"] += done.input_tokens
        self.usage["output_tokens"] += done.output_tokens
        self.usage["cost_usd"] = round(self.usage["cost_usd"] + done.cost_usd, 6)
        self.usage["seconds"] = round(self.usage["seconds"] + done.seconds, 3)
        if self.ledger is not None:
            try:
                self.ledger.record(self.name, done.input_tokens, done.output_tokens, done.cost_usd)
            except OSError as exc:  # a full disk must not fail the job that already paid for the call
                from ..core import log

                log.warning("llm", f"usage not recorded: {exc}")

    # -- calls -----------------------------------------------------------------------------------

    # -- health: the last failure and its true cause, for `ace doctor`, `ace status` and SessionStart --

    def _health_path(self) -> str | None:
        """Where this provider's failures are recorded (next to its ledger); None: not recorded."""
        return health.path_for(self.ledger.path) if self.ledger is not None else None

    def record_failure(self, exc: BaseException) -> None:
        where = self._health_path()
        if where is not None:
            health.record_failure(self.name, str(exc), path=where)

    def complete(self, system: str, user: str, *, max_tokens: int | None = None,
                 timeout: float | None = None) -> Completion:
        """One budgeted call; plain text back. Raises BudgetExceeded, LLMTimeout or LLMError — each
        recorded with its message (`health.py`) first; a call that works clears the record."""
        try:
            self._check_budget()
        except BudgetExceeded as exc:
            self.record_failure(exc)
            raise
        self.calls += 1  # counted before the call: a call that times out still cost something
        started = time.monotonic()
        try:
            done = self._call(system, user, int(max_tokens or self.max_tokens), float(timeout or self.timeout_s))
        except LLMError as exc:
            self.record_failure(exc)
            raise
        where = self._health_path()
        if where is not None:
            health.record_success(self.name, path=where)
        done = done._replace(seconds=round(time.monotonic() - started, 3),
                             input_tokens=done.input_tokens or estimate_tokens(system) + estimate_tokens(user),
                             output_tokens=done.output_tokens or estimate_tokens(done.text or ""))
        self._account(done)
        return done

    def complete_json(self, system: str, user: str, schema_hint: dict[str, Any], *, max_tokens: int | None = None,
                      timeout: float | None = None) -> dict[str, Any]:
        """A JSON object matching `schema_hint` (a JSON Schema subset, see `structured.validate`).

        One retry with a nudge when the reply is unusable; then InvalidOutput. Budget, timeout and
        transport errors are raised as they come (no retry: the job has a fallback)."""
        full_system = f"{system.rstrip()}\n\n{JSON_INSTRUCTIONS}{schema_text(schema_hint)}"
        done = self.complete(full_system, user, max_tokens=max_tokens, timeout=timeout)
        try:
            return extract_json(done.text, schema_hint)
        except InvalidOutput as exc:
            problem = str(exc)
        done = self.complete(full_system, user + RETRY_NUDGE.format(problem=problem),
                             max_tokens=max_tokens, timeout=timeout)
        try:
            return extract_json(done.text, schema_hint)
        except InvalidOutput as exc:
            snippet = " ".join((done.text or "").split())[:200]
            failed = InvalidOutput(f"{self.name}: {exc} (after one retry; reply began {snippet!r})")
            self.record_failure(failed)
            raise failed from None

    def _call(self, system: str, user: str, max_tokens: int, timeout: float) -> Completion:
        raise NotImplementedError

    def describe(self) -> str:
        return f"{self.name}" + (f" ({self.model})" if self.model else "")
