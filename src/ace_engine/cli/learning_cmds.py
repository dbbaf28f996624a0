"""Learning from captured sessions: learn, jobs, stats, log, review, bootstrap."""

COMMANDS: list = []
