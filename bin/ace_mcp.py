"""Plugin launcher for ace-engine's MCP server: `"${ACE_PYTHON:-python3}" -I ace_mcp.py [--allow-writes]`.

Like hooks/ace_hook.py, it runs the server from this plugin's own source tree with the Python in
$ACE_PYTHON (default: `python3` on PATH). The server also needs the `mcp` package (mcp 2) in that
interpreter; when it is not there, the installed `ace` command on PATH serves instead (`ace mcp`,
from `pip install ace-engine`); when neither is, it says on stderr what to install and exits 1
(Claude Code shows the server as failed in `/mcp`). `-I` keeps the project's PYTHONPATH and
directory out of the interpreter.
"""

import os
import shutil
import sys

HINT = ("ace-engine's MCP server needs Python >= 3.11 with the `mcp` package (mcp >= 2.3): "
        "`pip install 'mcp>=2.3,<3'` into that Python, or set ACE_PYTHON to one that has it, "
        "or `pip install ace-engine` so that `ace` is on PATH.")


def _sdk_ok() -> bool:
    try:
        from importlib import metadata

        return int(metadata.version("mcp").split(".")[0]) >= 2
    except Exception:  # noqa: BLE001 — missing, or a version string we can't read: use the fallback
        return False


def _fallback() -> None:
    ace = shutil.which("ace")
    if ace:
        os.execv(ace, [ace, "mcp", *sys.argv[1:]])
    sys.stderr.write(HINT + "\n")
    sys.exit(1)


# Not dead code: this runs under whatever `python3` the user's PATH has, not the package's Python.
if sys.version_info >= (3, 11) and _sdk_ok():  # noqa: UP036
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "src"))
    from ace_engine.mcp_server.server import main

    sys.exit(main(sys.argv[1:]))
else:
    _fallback()
