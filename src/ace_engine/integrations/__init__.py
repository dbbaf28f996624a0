"""Boundaries with other tools: Claude Code settings and plugin files."""
