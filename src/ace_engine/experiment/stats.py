"""Intervals for a with-vs-without comparison on a small sample, stdlib only.

Contract: every function is pure and deterministic (the bootstrap takes its seed).
- `wilson(k, n)`: the Wilson score interval of one proportion (sound at small n and at 0 or n).
- `newcombe(k1, n1, k2, n2)`: the difference p1 - p2 with Newcombe's hybrid score interval (his
  method 10, built from the two Wilson intervals): the standard choice for two small binomial
  samples, where the Wald interval is too narrow and can leave [-1, 1].
- `bootstrap_diff(a, b)`: mean(a) - mean(b) with a percentile bootstrap interval (resampling each
  arm on its own): no normality assumed, which counts of failures per session never are.
All intervals are 95 % (z = 1.96; the 2.5th and 97.5th bootstrap percentiles).

Cost: the bootstrap is `reps` × (n1 + n2) draws — 2000 × a few hundred sessions, ~0.1 s at most.
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence

Z = 1.96


def wilson(k: int, n: int, z: float = Z) -> tuple[float, float]:
    if n <= 0:
        return (0.0, 1.0)
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return (max(0.0, centre - half), min(1.0, centre + half))


def newcombe(k1: int, n1: int, k2: int, n2: int, z: float = Z) -> tuple[float, float, float]:
    """(p1 - p2, low, high)."""
    p1, p2 = k1 / n1, k2 / n2
    l1, u1 = wilson(k1, n1, z)
    l2, u2 = wilson(k2, n2, z)
    diff = p1 - p2
    low = diff - math.sqrt((p1 - l1) ** 2 + (u2 - p2) ** 2)
    high = diff + math.sqrt((u1 - p1) ** 2 + (p2 - l2) ** 2)
    return (diff, max(-1.0, low), min(1.0, high))


def mean(values: Sequence[float]) -> float:
    return sum(values) / len(values)


def bootstrap_diff(a: Sequence[float], b: Sequence[float], *, reps: int = 2000,
                   seed: int = 37) -> tuple[float, float, float]:
    """(mean(a) - mean(b), low, high): the 95 % percentile bootstrap interval."""
    rng = random.Random(seed)
    diffs = sorted(mean(rng.choices(a, k=len(a))) - mean(rng.choices(b, k=len(b))) for _ in range(reps))
    return (mean(a) - mean(b), diffs[int(0.025 * reps)], diffs[min(reps - 1, int(0.975 * reps))])
