"""What the bench tests may say of a measured time: that it was reported, as a number. How long it
was is the bench's to judge against its budget (bench/*.py print ok or not themselves): a test that
compares times fails on a busy machine, and says nothing about the code."""

import math


def a_duration(value) -> bool:
    """A measured time (or a budget): a finite, non-negative number, not a bool."""
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value) and value >= 0
