"""Which reflector learns: the LLM one when configured and available, else the offline heuristics.

`get_reflector(cfg)`: with `learning.reflector` = `auto` (default) or `llm`, `llm_reflector` is
asked for one through `make_reflector(cfg, offline)`, which returns a Reflector — fed the
heuristic reflector's candidates as hints — when a provider is configured and available, else
None; `heuristic`, an import error (no optional dependency) or None give the
`HeuristicReflector`. Kept apart from `reflector.py` (the interface) so that the reflectors
import the interface and only this module imports the reflectors: no cycle.

`describe(cfg)` says which reflector learning would use and why, and the spending caps, without
calling a model (for `ace install`).

Cost: the LLM reflector (and the `llm` package) is imported only when the config asks for it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..core import log

if TYPE_CHECKING:
    from ..core.config import Config
    from .reflector import Reflector


def heuristic(cfg: Config | None = None) -> Reflector:
    """The offline heuristic reflector, with the thresholds of `cfg` (slow steps, co-edits)."""
    from .heuristics import HeuristicReflector

    return HeuristicReflector.from_config(cfg) if cfg is not None else HeuristicReflector()


def get_reflector(cfg: Config) -> Reflector:
    """The LLM reflector when configured and available, else the heuristic one."""
    choice = cfg["learning.reflector"].lower()
    if choice in ("auto", "llm"):
        try:
            from .llm_reflector import make_reflector
        except ImportError:
            return heuristic(cfg)
        try:
            found = make_reflector(cfg, offline=heuristic(cfg))
        except Exception as exc:  # noqa: BLE001 — a broken provider must not stop learning
            log.warning("learning", f"LLM reflector unavailable, using heuristics: {type(exc).__name__}: {exc}")
            found = None
        if found is not None:
            return found
    return heuristic(cfg)


BUDGET_KEYS = ("llm.max_calls_per_job", "llm.max_calls_per_day", "llm.max_tokens_per_day")


def describe(cfg: Config) -> dict[str, Any]:
    """{reflector: "llm" | "heuristic", provider, model, problem, choice, budget: {key: value},
    claude_on_path}: what learning would use with `cfg`. Builds the provider (which checks its
    binary, SDK, model and key) but calls no model."""
    from .. import llm
    from ..llm.claude_cli import find_claude

    choice = str(cfg["learning.reflector"]).lower()
    out: dict[str, Any] = {"reflector": "heuristic", "provider": None, "model": None, "problem": None,
                           "choice": choice, "budget": {key: cfg[key] for key in BUDGET_KEYS},
                           "claude_on_path": bool(find_claude(None))}
    if choice not in ("auto", "llm"):
        return out
    try:
        provider = llm.get_provider(cfg)
    except Exception as exc:  # noqa: BLE001 — as in get_reflector: whatever stops the provider, learning goes offline
        out["provider"] = str(cfg["llm.provider"])
        out["problem"] = llm.short_error(exc)
        return out
    if provider is not None:
        out.update(reflector="llm", provider=provider.name, model=provider.model)
    return out
