"""Confidence of a bullet from its counters, with a prior.

    h = helpful + w * helpful_explicit          (w = explicit weight, default 3)
    x = harmful + w * harmful_explicit
    confidence = (h + a) / (h + x + a + b)      (a = b = 2: a Beta(2, 2) prior)

A new bullet scores 0.5 — neither trusted nor dismissed. Implicit outcomes (the task went well
or badly while the bullet was shown) move it slowly; a person saying "that helped" or "that was
wrong" counts three times as much. 10 harmful observations and no helpful ones give 0.14.
"""

PRIOR_HELPFUL = 2.0
PRIOR_HARMFUL = 2.0
EXPLICIT_WEIGHT = 3.0


def confidence(helpful: int, harmful: int, helpful_explicit: int = 0, harmful_explicit: int = 0,
               explicit_weight: float = EXPLICIT_WEIGHT) -> float:
    h = helpful + explicit_weight * helpful_explicit
    x = harmful + explicit_weight * harmful_explicit
    return round((h + PRIOR_HELPFUL) / (h + x + PRIOR_HELPFUL + PRIOR_HARMFUL), 4)


def observations(helpful: int, harmful: int, helpful_explicit: int = 0, harmful_explicit: int = 0) -> int:
    return helpful + harmful + helpful_explicit + harmful_explicit
