"""Hook launcher, run as a script: `python /abs/path/ace_engine/hooks/launch.py EVENT`.

Installed hooks use this instead of `python -m ace_engine.hooks`, whose runpy machinery costs
about 5 ms on every hook. It puts the directory holding `ace_engine` first on sys.path (instead
of its own directory), so it also works with an interpreter that has ace-engine not installed.
"""

import os
import sys

sys.path[0] = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from ace_engine.hooks.engine import main  # noqa: E402

main(sys.argv[1:])
