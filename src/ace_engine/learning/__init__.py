"""Learning: from captured trajectories to a curated playbook, with or without an LLM.

    hook (Stop / SubagentStop / SessionEnd) ── queue.enqueue_from_hook ──▶ jobs table
    worker (detached, one per project) ── pipeline.learn_job:
        trajectory (captured tool events, split into turns) + git context + history
        → gates (trivial turns: feedback only) → reflector (LLM or heuristics)
        → curator (quality filter, poisoning defence, dedup / merge, tags, pruning)
        → playbook delta operations, in one transaction with the job's completion

Modules a hook may import (stdlib-light): `queue`, `feedback`. Everything else runs in the
worker or the CLI. Keep this file free of imports.
"""
