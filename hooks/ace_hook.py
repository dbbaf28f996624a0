"""Plugin launcher: runs an ace-engine hook from this plugin's own source tree.

The hook engine is stdlib-only, so the plugin works with any Python >= 3.11 on PATH (or the one
in $ACE_PYTHON) without installing the package. On an older Python it does nothing and exits 0.
Like every way a hook starts, it calls `ace_engine.hooks.engine.run`.
"""

import os
import sys

# Not dead code: this runs under whatever `python3` the user's PATH has, not the package's Python.
if sys.version_info >= (3, 11):  # noqa: UP036
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "src"))
    from ace_engine.hooks.engine import run

    run(sys.argv[1:])
