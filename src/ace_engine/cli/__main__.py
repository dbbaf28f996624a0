"""`python -m ace_engine.cli`: the same `ace` command, for an interpreter without the console script."""

from . import main

main()
