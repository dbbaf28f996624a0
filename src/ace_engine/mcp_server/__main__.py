"""`python -I -m ace_engine.mcp_server [--allow-writes]`: the MCP server without the CLI framework —
the command line `ace install --mcp` writes into `.mcp.json` (`integrations.mcp_config`); `ace mcp`
and the plugin's launcher (`bin/ace_mcp.py`) run the same `server.main`/`serve`."""

import sys

from .server import main

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
