"""A project's pushes in one server process go to the database together: group commit.

Contract: `Pushes(apply)` lives in one server process, on its event loop; `apply` is
`TeamDB.apply_pushes` (several pushes to one project, in one transaction when they allow, each
answered as if alone). `await submit(project_id, push)` returns that push's `(results,
last_seq)` or raises the `TeamDBError` it met (`ClientTaken` …). While a group of a project's
pushes is in the database (in the thread pool), the pushes that arrive for that project wait here,
and go together as the next group once it is done, up to MAX_GROUP_DELTAS deltas a group. So a
project has at most one transaction of this process at its row lock at a time, and a burst of
pushes pays the lock, the round trips and the commit's disk flush once per group, not once each:
the row lock had made a project's pushes take turns (~12-18 ms each on the bench machine), and 50
clients pushing queued ~50 deep behind it.

Nothing is lost with the process: a push is answered only once its group committed, and a client
that saw no answer retries with the same idempotency keys (a group rolled back or never sent
committed nothing of it). A client that goes away while its push waits does not take the push out
of its group: it is applied, and its retry answers `duplicate`, as for any push cut off mid-way.

Groups run on GROUP_THREADS threads of their own, not in the request thread pool: a group holds its
project's row lock, and must not wait for a thread behind the requests it is about to answer.

Cost: stdlib asyncio; a future per push and a task per project while it has pushes in flight.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor

from .storage.batch import Push
from .storage.db import TeamDBError
from .storage.records import DeltaResult

GROUP_THREADS = 4  # projects whose groups are in the database at once, per process
MAX_GROUP_DELTAS = 1000  # a group's most deltas: its rows stay a few multi-row INSERTs, its lock hold short

Answer = tuple[list[DeltaResult], int]
Apply = Callable[[int, Sequence[Push]], list[Answer | TeamDBError]]


class Pushes:
    """See the module contract."""

    def __init__(self, apply: Apply) -> None:
        self.apply = apply
        self._waiting: dict[int, list[tuple[Push, asyncio.Future[Answer]]]] = {}
        self._running: dict[int, asyncio.Task[None]] = {}  # held here: the loop keeps only weak references
        self._threads = ThreadPoolExecutor(max_workers=GROUP_THREADS, thread_name_prefix="ace-push-group")

    async def submit(self, project_id: int, push: Push) -> Answer:
        loop = asyncio.get_running_loop()
        future: asyncio.Future[Answer] = loop.create_future()
        self._waiting.setdefault(project_id, []).append((push, future))
        if project_id not in self._running:
            self._running[project_id] = loop.create_task(self._drain(project_id))
        # shielded: a cancelled request (its client gone) leaves the push in its group (module contract)
        return await asyncio.shield(future)

    def close(self) -> None:
        """Let the group threads end (at the server's shutdown; a group in the database finishes)."""
        self._threads.shutdown(wait=False)

    async def _drain(self, project_id: int) -> None:
        try:
            while waiting := self._waiting.pop(project_id, None):
                group: list[tuple[Push, asyncio.Future[Answer]]] = []
                size = 0
                for at, (push, future) in enumerate(waiting):
                    if group and size + len(push.items) > MAX_GROUP_DELTAS:
                        self._waiting[project_id] = waiting[at:] + self._waiting.get(project_id, [])
                        break
                    group.append((push, future))
                    size += len(push.items)
                try:
                    answers: Sequence[Answer | BaseException] = await asyncio.get_running_loop().run_in_executor(
                        self._threads, self.apply, project_id, [push for push, _ in group])
                except Exception as exc:  # noqa: BLE001 — the group's every push meets it, as it would alone
                    answers = [exc] * len(group)
                for (_, future), answer in zip(group, answers, strict=True):
                    if future.done():
                        continue
                    if isinstance(answer, BaseException):
                        future.set_exception(answer)
                    else:
                        future.set_result(answer)
        finally:
            del self._running[project_id]
            for _, future in self._waiting.pop(project_id, []):  # only when the loop is going away
                if not future.done():
                    future.cancel()
