"""What happened in a session, read back: shell commands and their kind, error signatures, check
tools, trajectories, Claude Code transcripts, git context, user corrections and where a lesson's
risky parts came from. Learning, continuity, bootstrap and the MCP server read sessions through it.

Contract: reads only (it never writes the playbook or the store). Cost: this file imports nothing.
"""
