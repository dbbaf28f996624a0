"""`ace mcp`: ace-engine's MCP server (stdio), named `ace`, for the agent to ask instead of only receive.

Modules: `tools.py` (the tool table and one way to call a tool), `lessons.py` (search_lessons,
get_lesson, mark_lesson, propose_lesson), `history.py` (search_history, recent_failures),
`answer.py` (argument checks, escaped lines, the answer's token budget), `workspace.py` (the
project, config, store and session a server works with), `server.py` (the official `mcp` SDK's
low-level server over stdio). The package is not named `mcp`: that would shadow the SDK.

Read-only unless the user starts it with `--allow-writes`; the boundary holds no business logic:
lessons change only through `playbook.Playbook`, the store is read through `store.history_sql`.
"""
