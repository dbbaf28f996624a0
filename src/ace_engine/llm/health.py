"""The model path's health: the last model failure, its true cause and fix, told to the user once.

Learning falls back to the offline reflector whenever a model call fails (`learning/pipeline.py`),
which keeps lessons coming but hides the failure: the cause would be only in `ace.log`. So every
failure of a provider — set-up (binary, SDK, key), the daily cap, a refusal, a timeout, an unusable
reply — is recorded here by the one place every call goes through (`base.Provider`, `get_provider`),
with the provider's own message ("claude exited 1 without a result: 'Not logged in · Please run
/login'") and the fix that goes with it (`fix_for`). A later successful call clears it.

Read by `ace status`, `ace doctor` (red while the last call failed), `ace stats` (why a task says
"fallback from llm:…"), the status line and the dashboard; `notice` gives the next SessionStart its
one-time `systemMessage`: a failure is told once — a new cause, or the same one after the path
worked again, is told again.

The state is one small JSON file next to the usage ledger (`$ACE_HOME/state/llm-health.json`),
written atomically without a lock; a write that fails is given up, and two workers failing at the
same moment may tell the same failure twice (the advice is best effort, learning goes on).

Cost: stdlib only (the SessionStart hook reads it): one small file read; a write only when the
state changes (a success after a success writes nothing).
"""

from __future__ import annotations

import json
import os
import time

from ..core import paths
from ..core.escape import one_line
from ..core.files import atomic_write

FILE_NAME = "llm-health.json"
MAX_CAUSE = 400

__all__ = ["FILE_NAME", "path_for", "read", "record_failure", "record_success", "fix_for", "notice", "failure"]


def path_for(ledger_path: str | None = None) -> str:
    """The state file: next to the usage ledger at `ledger_path`, else in `$ACE_HOME/state`."""
    directory = os.path.dirname(ledger_path) if ledger_path else paths.state_dir()
    return os.path.join(directory, FILE_NAME)


def read(path: str | None = None) -> dict | None:
    """{provider, ok, cause, fix, kind, at, told, ok_at}, or None when nothing was ever recorded."""
    try:
        with open(path or path_for(), encoding="utf-8") as fh:
            data = json.load(fh)
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def failure(path: str | None = None) -> dict | None:
    """The recorded failure while the path is failing (the last call failed), else None."""
    state = read(path)
    return state if state and not state.get("ok") and state.get("cause") else None


def _write(path: str, state: dict) -> None:
    try:
        paths.ensure_private_dir(os.path.dirname(path))
        atomic_write(path, json.dumps(state, sort_keys=True), mode=0o600, fsync=False)
    except OSError:
        pass  # advice only: a full disk must not turn a model failure into a learning failure


def kind_of(cause: str) -> str:
    """A short name for the kind of failure `cause` describes (what `fix_for` keys on)."""
    text = cause.lower()
    if "not logged in" in text or "/login" in text or "invalid api key" in text or "authentication" in text \
            or "unauthorized" in text or "(401)" in text:
        return "login"
    if "budget reached" in text:
        return "budget"
    if "max_calls_per_job" in text:
        return "job-budget"
    if "package is not installed" in text:
        return "sdk"
    if "cli not found" in text or "cannot run" in text:
        return "binary"
    if "did not answer within" in text:
        return "timeout"
    if "refused the connection" in text or "connection refused" in text or "could not be reached" in text \
            or "connection error" in text or "name or service not known" in text:
        return "unreachable"
    if "no api key" in text or "is empty" in text:
        return "key"
    if "`llm.model` is not set" in text or "unknown `llm.provider`" in text:
        return "config"
    if "json" in text or "after one retry" in text:
        return "output"
    return "other"


def fix_for(provider: str, cause: str) -> str:
    """The exact fix for `cause`, a failure of `provider`, as a user would type or do it."""
    kind = kind_of(cause)
    if kind == "login":
        if provider.startswith("codex"):
            return "run `codex login` in a terminal, then `ace doctor`"
        if provider.startswith("claude"):
            return "run `claude /login` in a terminal (or `claude auth login`), then `ace doctor`"
        return "check the API key in the variable `llm.api_key_env` names, then `ace doctor`"
    if kind == "budget":
        return ("the daily cap is reached: learning is offline until tomorrow (UTC), or raise "
                "`llm.max_calls_per_day` / `llm.max_tokens_per_day` (`ace config set …`)")
    if kind == "job-budget":
        return "one task needed more calls than `llm.max_calls_per_job` allows: raise it (`ace config set …`)"
    if kind == "sdk":
        start = cause.find("`", cause.find("not installed"))
        command = cause[start:].strip(" ;") if start >= 0 else ""
        package = cause.split("`")[1] if cause.count("`") >= 2 else "the provider's"
        return (f"install the {package} SDK (ace-engine's [llm] extra): {command}" if command
                else "install ace-engine's [llm] extra")
    if kind == "binary":
        name = "codex" if provider.startswith("codex") else "claude"
        return (f"install the `{name}` CLI, or set `llm.{name}_path` to it (`ace config set llm.{name}_path PATH`), "
                "or `ace config set llm.provider none`")
    if kind == "timeout":
        return "raise `llm.timeout_s` (`ace config set llm.timeout_s 300`), or check the network"
    if kind == "unreachable":
        return "start the server at `llm.base_url` or correct it (`ace config set llm.base_url URL`)"
    if kind == "key":
        return "export the variable named above where ace-engine runs (keys are never read from a file)"
    if kind == "config":
        return "`ace config show` lists the llm.* settings; `ace config set llm.model NAME`"
    if kind == "output":
        return "the model did not answer with JSON; try another `llm.model` (`ace config set llm.model NAME`)"
    return f"check that {provider} works by hand; `ace doctor` runs one real call"


def record_failure(provider: str, cause: str, *, path: str | None = None, now: float | None = None) -> dict:
    """Record that `provider` failed with `cause` (its own message). Told again only when it is news:
    a new kind of failure, or the first failure after the path worked."""
    path = path or path_for()
    now = time.time() if now is None else now
    cause = one_line(str(cause))[:MAX_CAUSE]  # a CLI's output: no terminal controls reach a notice or a terminal
    before = read(path) or {}
    kind = kind_of(cause)
    same = not before.get("ok", True) and before.get("kind") == kind and before.get("provider") == provider
    state = {"provider": provider, "ok": False, "cause": cause, "kind": kind, "fix": fix_for(provider, cause),
             "at": now, "since": before.get("since", now) if same else now,
             "told": bool(before.get("told")) if same else False, "ok_at": before.get("ok_at")}
    _write(path, state)
    return state


def record_success(provider: str, *, path: str | None = None, now: float | None = None) -> None:
    """A call of `provider` worked: a recorded failure is over. Writes only when one was recorded."""
    path = path or path_for()
    before = read(path)
    if before is not None and before.get("ok") and before.get("provider") == provider:
        return
    _write(path, {"provider": provider, "ok": True, "ok_at": time.time() if now is None else now,
                  "last_failure": {k: before.get(k) for k in ("cause", "at")} if before and before.get("cause")
                  else (before or {}).get("last_failure")})


def notice(path: str | None = None) -> str | None:
    """The one-time line for the user about a failing model path (then marked told), or None."""
    path = path or path_for()
    state = failure(path)
    if state is None or state.get("told"):
        return None
    state["told"] = True
    _write(path, state)
    return (f"ace-engine is learning offline: the model ({state.get('provider')}) failed: {state['cause'][:240]}. "
            f"Fix: {state.get('fix')}.")
