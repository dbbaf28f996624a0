"""`Closing`: the one `with` protocol of the objects that hold a connection (the local store, the team
server's database, its client, a claude-mem database): `with X(...) as x:` is `x = X(...)`, then
`x.close()` however the block ends. A subclass implements `close` only.

Cost: nothing imported; one class.
"""

from __future__ import annotations

TYPE_CHECKING = False  # not `typing.TYPE_CHECKING`: the store (which the hooks open) subclasses this
if TYPE_CHECKING:
    from typing import Self


class Closing:
    """A resource released by `close()`, also usable as a context manager."""

    def close(self) -> None:
        raise NotImplementedError

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
