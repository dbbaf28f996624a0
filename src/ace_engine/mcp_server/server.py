"""The `ace` MCP server over stdio, on the official `mcp` SDK's low-level server (mcp ≥ 2).

Contract: `serve(allow_writes)` answers MCP on stdin/stdout until the client closes stdin: it
lists the tools `tools.offered` gives (the two writing ones only with writes on) with their own
JSON Schemas, and answers each call with one text block — or, when the call cannot be answered
(`ToolError`: bad arguments, a write while read-only, a busy store), a text block with
`isError` set, so the model reads why and what to send instead. A bug in a tool is logged
(`log.error`, source `mcp`) and answered the same way: the server keeps running. Calls run on a
worker thread (`anyio.to_thread`), one at a time (`Workspace.lock`), so the event loop keeps
answering pings. Nothing but protocol messages is written to stdout.

`main(argv)` is the plain entry (`python -m ace_engine.mcp_server [--allow-writes]`, the
plugin's launcher); `ace mcp` (cli/mcp_cmd.py) calls `serve`. Without the SDK installed, `serve`
raises `McpUnavailable`, which names the package to install.

Cost: importing the SDK takes about a second (pydantic models); it is imported by `serve` only.
"""

from __future__ import annotations

import os
import sys
from typing import Any

from .. import __version__
from ..core import log
from ..core.errors import AceError
from . import tools
from .answer import ToolError
from .workspace import Workspace

INSTALL_HINT = "pip install 'mcp>=2.3,<3' (or install ace-engine with its `mcp` extra)"


class McpUnavailable(AceError):
    """The `mcp` SDK is not installed in this interpreter."""


def build(ws: Workspace) -> Any:
    """The low-level SDK server answering `tools/list` and `tools/call` for `ws`."""
    import anyio.to_thread
    from mcp import types
    from mcp.server.lowlevel import Server

    def listed() -> list[types.Tool]:
        return [types.Tool(name=t.name, description=t.description, input_schema=t.schema,
                           annotations=types.ToolAnnotations(read_only_hint=not t.writes, destructive_hint=False,
                                                             idempotent_hint=not t.writes, open_world_hint=False))
                for t in tools.offered(ws.writes)]

    async def on_list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
        return types.ListToolsResult(tools=listed())

    def answer(name: str, arguments: object) -> tuple[str, bool]:
        try:
            return tools.call(ws, name, arguments), False
        except ToolError as exc:
            return f"error: {exc}", True
        except Exception as exc:  # noqa: BLE001 — a bug in one tool must not take the server down
            log.error("mcp", f"tool {name} failed: {type(exc).__name__}: {exc}")
            return (f"error: {name} failed inside ace-engine ({type(exc).__name__}); it was logged — "
                    "`ace doctor` shows the last errors"), True

    async def on_call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        text, failed = await anyio.to_thread.run_sync(answer, params.name, params.arguments)
        return types.CallToolResult(content=[types.TextContent(type="text", text=text)], is_error=failed)

    return Server(tools.SERVER_NAME, version=__version__, instructions=tools.INSTRUCTIONS,
                  on_list_tools=on_list_tools, on_call_tool=on_call_tool)


def sdk_problem() -> str | None:
    """Why the installed `mcp` SDK can't run this server (missing, or the 1.x API), or None."""
    from importlib import metadata

    try:
        found = metadata.version("mcp")
    except metadata.PackageNotFoundError:
        return "the `mcp` package is not installed"
    major = found.split(".")[0]
    if not major.isdigit() or int(major) < 2:
        return f"mcp {found} is installed, and this server is written for the mcp 2 API"
    return None


def serve(allow_writes: bool = False, cwd: str | None = None) -> None:
    """Serve MCP on stdio for the project at `cwd` (default: the working directory) until stdin closes."""
    problem = sdk_problem()
    if problem:
        raise McpUnavailable(f"ace-engine's MCP server can't start: {problem}; {INSTALL_HINT}")
    import anyio
    from mcp.server.stdio import stdio_server
    ws = Workspace(cwd or os.getcwd(), allow_writes=allow_writes)
    server = build(ws)

    async def run() -> None:
        async with stdio_server() as (read_stream, write_stream):
            await server.run(read_stream, write_stream, server.create_initialization_options())

    try:
        anyio.run(run)
    finally:
        ws.close()


def main(argv: list[str]) -> int:
    """`python -m ace_engine.mcp_server [--allow-writes]`."""
    unknown = [a for a in argv if a not in ("--allow-writes", "")]
    if unknown:
        print(f"ace mcp: unknown argument {unknown[0]!r}; usage: ace mcp [--allow-writes]", file=sys.stderr)
        return 2
    try:
        serve(allow_writes="--allow-writes" in argv)
    except AceError as exc:
        print(f"ace mcp: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 0
    return 0
