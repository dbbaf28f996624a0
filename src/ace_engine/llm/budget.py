"""Spend limits for model calls: a per-day ledger shared by every process on the machine.

Learning runs in detached worker processes, one per project, so a per-process counter can't stop
a runaway loop; the ledger is a small JSON file under `$ACE_HOME/state/` updated under a file
lock. It keeps calls, tokens and (when the provider reports it) dollars per UTC day and per
provider, for the last `KEEP_DAYS` days — `ace stats` shows them through `usage_summary`.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from ..core import paths
from ..core.errors import BudgetExceeded
from ..core.files import atomic_write

KEEP_DAYS = 62
FILE_NAME = "llm-usage.json"

__all__ = ["BudgetExceeded", "UsageLedger", "usage_summary", "today", "meter", "meter_text", "short_count"]


def today(now: float | None = None) -> str:
    return time.strftime("%Y-%m-%d", time.gmtime(time.time() if now is None else now))


@contextmanager
def _locked(path: str) -> Iterator[None]:
    """An exclusive lock on `path`.lock (POSIX); elsewhere best effort without a lock."""
    paths.ensure_private_dir(os.path.dirname(path))
    fd = os.open(path + ".lock", os.O_RDWR | os.O_CREAT, 0o600)
    try:
        try:
            import fcntl
        except ImportError:  # pragma: no cover - Windows: concurrent updates may lose a count
            pass
        else:
            fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # closing releases the lock


class UsageLedger:
    """Daily totals `{day: {calls, input_tokens, output_tokens, cost_usd, providers: {name: calls}}}`."""

    def __init__(self, path: str | None = None) -> None:
        self.path = path or os.path.join(paths.state_dir(), FILE_NAME)

    def _read(self) -> dict[str, Any]:
        try:
            with open(self.path, encoding="utf-8") as fh:
                data = json.load(fh)
            return data if isinstance(data, dict) else {}
        except (OSError, ValueError):
            return {}  # missing or damaged: start over rather than block learning forever

    def _write(self, data: dict[str, Any]) -> None:
        atomic_write(self.path, json.dumps(data, sort_keys=True), mode=0o600)

    def day(self, day: str | None = None) -> dict[str, Any]:
        entry = self._read().get(day or today()) or {}
        return {"calls": int(entry.get("calls", 0)), "input_tokens": int(entry.get("input_tokens", 0)),
                "output_tokens": int(entry.get("output_tokens", 0)), "cost_usd": float(entry.get("cost_usd", 0.0)),
                "providers": dict(entry.get("providers") or {})}

    def check(self, max_calls: int, max_tokens: int, now: float | None = None) -> None:
        """Raise BudgetExceeded when today's calls or tokens reached their cap (0 = no cap)."""
        spent = self.day(today(now))
        if max_calls and spent["calls"] >= max_calls:
            raise BudgetExceeded(f"daily LLM call budget reached ({spent['calls']}/{max_calls} calls today); "
                                 "learning falls back to the offline reflector — "
                                 "raise `llm.max_calls_per_day` to allow more")
        tokens = spent["input_tokens"] + spent["output_tokens"]
        if max_tokens and tokens >= max_tokens:
            raise BudgetExceeded(f"daily LLM token budget reached ({tokens}/{max_tokens} tokens today); "
                                 "learning falls back to the offline reflector — "
                                 "raise `llm.max_tokens_per_day` to allow more")

    def record(self, provider: str, input_tokens: int, output_tokens: int, cost_usd: float = 0.0,
               now: float | None = None) -> None:
        with _locked(self.path):
            data = self._read()
            key = today(now)
            entry = data.setdefault(key, {})
            entry["calls"] = int(entry.get("calls", 0)) + 1
            entry["input_tokens"] = int(entry.get("input_tokens", 0)) + max(0, int(input_tokens))
            entry["output_tokens"] = int(entry.get("output_tokens", 0)) + max(0, int(output_tokens))
            entry["cost_usd"] = round(float(entry.get("cost_usd", 0.0)) + max(0.0, float(cost_usd or 0.0)), 6)
            providers = entry.setdefault("providers", {})
            providers[provider] = int(providers.get(provider, 0)) + 1
            for old in sorted(data)[:-KEEP_DAYS]:
                del data[old]
            self._write(data)


def usage_summary(days: int = 7, ledger: UsageLedger | None = None, now: float | None = None) -> dict[str, Any]:
    """Spend of today and of the last `days` days, for `ace stats`."""
    ledger = ledger or UsageLedger()
    now = time.time() if now is None else now
    per_day = [{"day": today(now - i * 86_400), **ledger.day(today(now - i * 86_400))} for i in range(days)]
    total = {k: sum(d[k] for d in per_day) for k in ("calls", "input_tokens", "output_tokens")}
    total["cost_usd"] = round(sum(d["cost_usd"] for d in per_day), 6)
    return {"today": per_day[0], "last_days": days, "total": total,
            "days": [d for d in per_day if d["calls"]]}


def meter(max_calls: int, max_tokens: int, ledger: UsageLedger | None = None, now: float | None = None
          ) -> dict[str, Any]:
    """Today's spend against the daily caps (0 = no cap): {calls, calls_cap, tokens, tokens_cap,
    reached} — what `ace status`, the status line and the dashboard show. `reached` names the cap
    that is reached ("calls" / "tokens"), else None."""
    spent = (ledger or UsageLedger()).day(today(now))
    tokens = spent["input_tokens"] + spent["output_tokens"]
    reached = ("calls" if max_calls and spent["calls"] >= max_calls
               else "tokens" if max_tokens and tokens >= max_tokens else None)
    return {"calls": spent["calls"], "calls_cap": int(max_calls or 0), "tokens": tokens,
            "tokens_cap": int(max_tokens or 0), "cost_usd": spent["cost_usd"], "reached": reached}


def short_count(n: int) -> str:
    """12345 -> "12k", 2000000 -> "2M": a count that fits a status line."""
    if n >= 1_000_000:
        return f"{n / 1_000_000:.1f}".rstrip("0").rstrip(".") + "M"
    if n >= 10_000:
        return f"{n // 1000}k"
    return str(n)


def meter_text(m: dict[str, Any], *, short: bool = False) -> str:
    """"3/200 calls, 12k/2M tokens today" (`short`: "3/200 calls", the status line's segment)."""
    calls = f"{m['calls']}/{m['calls_cap']} calls" if m["calls_cap"] else f"{m['calls']} calls (no cap)"
    if short:
        return calls
    tokens = (f"{short_count(m['tokens'])}/{short_count(m['tokens_cap'])} tokens" if m["tokens_cap"]
              else f"{short_count(m['tokens'])} tokens (no cap)")
    return f"{calls}, {tokens} today"
