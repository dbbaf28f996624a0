"""Learning: from captured trajectories to a curated playbook, with or without an LLM.

    hook (Stop / SubagentStop / SessionEnd) ── jobs.queue.enqueue_turn / enqueue_leftovers ──▶ jobs table
    jobs.worker (detached, one per project) ── pipeline.learn_job:
        trajectory (captured tool events, split into turns) + git context + history
        → gates (trivial turns: feedback only) → reflector (LLM or heuristics)
        → curator (quality filter, poisoning defence, dedup / merge, tags, pruning)
        → playbook delta operations, in one transaction with the job's completion

No hook imports anything here: the queue and worker live in `jobs/`, explicit prompt feedback in
`playbook/feedback.py`, repository bootstrap in `bootstrap/`. Keep this file free of imports.
"""
