"""`python -m ace_engine.hooks EVENT`: the same hook run as the installed launcher (`launch.py`),
with runpy's few milliseconds on top; kept for tests and hand use."""

import sys

from .engine import run

run(sys.argv[1:])
