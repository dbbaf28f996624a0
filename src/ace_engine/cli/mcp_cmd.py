"""`ace mcp` (the MCP server, on stdio) and `ace statusline` (one line for Claude Code's status bar).

Both hand over at once: the server is `mcp_server.server.serve`, the line is
`integrations.statusline.main`. `ace install --mcp [--allow-writes]` registers the server
(`integrations.mcp_config`); the Claude Code plugin registers it too (`.claude-plugin/plugin.json`).
"""

from __future__ import annotations

import click


@click.command("mcp")
@click.option("--allow-writes", is_flag=True,
              help="Also offer mark_lesson (explicit feedback) and propose_lesson (a candidate lesson for review). "
                   "Without it the server only reads.")
def mcp(allow_writes: bool) -> None:
    """Run ace-engine's MCP server (named `ace`) on stdin/stdout for the project in the current
    directory: search_lessons, get_lesson, search_history, recent_failures, and with
    --allow-writes mark_lesson and propose_lesson. Claude Code starts it; `ace install --mcp`
    registers it. Needs the `mcp` package."""
    from ..mcp_server.server import serve

    serve(allow_writes=allow_writes)


@click.command("statusline")
def statusline() -> None:
    """Print one line for Claude Code's status line: lessons shown this session, learned today,
    held for review, or the degraded state. Reads Claude Code's statusLine JSON on stdin."""
    from ..integrations.statusline import main

    main()


COMMANDS = [mcp, statusline]
