"""Hook launcher, run as a script: `python -I /abs/path/ace_engine/hooks/launch.py EVENT`.

Installed hooks use this instead of `python -m ace_engine.hooks`, whose runpy machinery costs
about 5 ms on every hook. It puts the directory holding `ace_engine` first on sys.path (in place
of its own directory, which a plain `python launch.py` puts there; `-I` puts nothing there), so it
also works with an interpreter that has ace-engine not installed, or only in the user site that
`-I` skips. Neither the project directory (the hook's cwd) nor PYTHON* variables reach sys.path.
Like every way a hook starts, it calls `engine.run`.
"""

import os
import sys

if __name__ == "__main__":  # a script; importing it (e.g. a walk over the package) changes and runs nothing
    _here = os.path.dirname(os.path.abspath(__file__))
    if sys.path and sys.path[0] == _here:
        sys.path[0] = os.path.dirname(os.path.dirname(_here))
    else:
        sys.path.insert(0, os.path.dirname(os.path.dirname(_here)))
    from ace_engine.hooks.engine import run

    run(sys.argv[1:])
