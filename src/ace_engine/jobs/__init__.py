"""Jobs: the learning work queue and the detached worker that drains it.

    hook (Stop / SubagentStop / SessionEnd) ── queue.enqueue_turn / enqueue_leftovers ──▶ jobs table
    worker (detached, one per project, under a flock) ── learning.pipeline.learn_job per job

`queue` is what a hook imports (stdlib-light: the store and `background` only, no learning
code); `worker` runs in its own isolated process (or in the foreground for `ace learn`) and is
the only module here that imports `learning`. Keep this file free of imports.
"""
