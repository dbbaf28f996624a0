"""Long-polling for pulls: a pull that found nothing waits for the project's next delta.

Contract: `Changes(read_last, poll_s)` lives in one server process, on its event loop. `await
wait(project_id, after, timeout)` returns when the project's `last_seq` passes `after` or after
`timeout` seconds, whichever comes first. Two things wake a waiter: `notify(project_id, last_seq)`,
which a push in this process calls from its worker thread as soon as it committed (at once), and a
poll that reads the `last_seq` of every project with a waiter in ONE query every `poll_s` seconds
(`read_last`, in the thread pool) — that is how a push on another replica or worker reaches this
one's waiters. So an idle server costs one indexed query per `poll_s` per process whatever the
number of waiting clients, and clients stop polling it: each holds one request open instead of
asking again and again.

Cost: stdlib asyncio; a waiter is one future; the poller runs only while someone waits.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable

from starlette.concurrency import run_in_threadpool

from .storage.db import TeamDBError

DEFAULT_POLL_S = 1.0


class Changes:
    """See the module contract."""

    def __init__(self, read_last: Callable[[list[int]], dict[int, int]], poll_s: float = DEFAULT_POLL_S) -> None:
        self.read_last = read_last
        self.poll_s = float(poll_s)
        self._waiters: dict[int, list[tuple[int, asyncio.Future[None]]]] = {}
        self._loop: asyncio.AbstractEventLoop | None = None
        self._poller: asyncio.Task[None] | None = None

    async def wait(self, project_id: int, after: int, timeout: float) -> None:
        loop = asyncio.get_running_loop()
        self._loop = loop
        entry = (after, loop.create_future())
        self._waiters.setdefault(project_id, []).append(entry)
        if self._poller is None or self._poller.done():
            self._poller = loop.create_task(self._poll())
        try:
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(asyncio.shield(entry[1]), timeout)
        finally:
            waiting = self._waiters.get(project_id, [])
            if entry in waiting:
                waiting.remove(entry)
            if not waiting:
                self._waiters.pop(project_id, None)

    def notify(self, project_id: int, last_seq: int) -> None:
        """A push committed up to `last_seq` (callable from any thread)."""
        loop = self._loop
        if loop is not None and project_id in self._waiters and not loop.is_closed():
            loop.call_soon_threadsafe(self._wake, project_id, last_seq)

    def _wake(self, project_id: int, last_seq: int) -> None:
        for after, future in list(self._waiters.get(project_id, ())):
            if last_seq > after and not future.done():
                future.set_result(None)

    async def _poll(self) -> None:
        while self._waiters:
            await asyncio.sleep(self.poll_s)
            ids = sorted(self._waiters)
            if not ids:
                break
            try:
                found = await run_in_threadpool(self.read_last, ids)
            except TeamDBError:  # a database hiccup: the waiters time out as they would anyway
                continue
            for project_id, last in found.items():
                self._wake(project_id, last)
