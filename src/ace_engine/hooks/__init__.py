"""The Claude Code boundary: one light entry point per hook event (`python -m ace_engine.hooks EVENT`).

Stdlib only. Every run exits 0 and prints nothing or exactly one JSON object valid for its event.
"""
