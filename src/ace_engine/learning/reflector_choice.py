"""Which reflector learns: the LLM one when configured and available, else the offline heuristics.

`get_reflector(cfg)`: with `learning.reflector` = `auto` (default) or `llm`, `llm_reflector` is
asked for one through `make_reflector(cfg)`, which returns a Reflector when a provider is
configured and available, else None; `heuristic`, an import error (no optional dependency) or
None give the `HeuristicReflector`. Kept apart from `reflector.py` (the interface) so that the
reflectors import the interface and only this module imports the reflectors: no cycle.

Cost: the LLM reflector (and the `llm` package) is imported only when the config asks for it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .. import log

if TYPE_CHECKING:
    from ..config import Config
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
            found = make_reflector(cfg)
        except Exception as exc:  # noqa: BLE001 — a broken provider must not stop learning
            log.warning("learning", f"LLM reflector unavailable, using heuristics: {type(exc).__name__}: {exc}")
            found = None
        if found is not None:
            return found
    return heuristic(cfg)
