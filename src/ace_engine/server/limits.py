"""The team server's limits: request body size, and a rate per token.

`BodyLimit(app, max_bytes)` is pure ASGI middleware. It answers 413 before reading a byte when
`Content-Length` already says too much, and otherwise reads the body itself, chunk by chunk, and
answers 413 as soon as the total passes the limit (`web.guard.read_body`, the one body buffer) — so
a chunked upload without a length is stopped at the limit too, and the server never holds more than
`max_bytes` (plus one chunk) of a request. A body within the limit is handed to the app unchanged
(`web.guard.replay_body`, then the connection's own messages), so a route may read it the usual way.

`RateLimiter(rate_per_second, burst)` is a token bucket per key (the token id): each request takes
one; the bucket refills at `rate_per_second` up to `burst`. `take(key, now)` returns 0.0 when the
request may go on, else the seconds until it could (the route answers 429 with `Retry-After`).
Given a `store` (the server passes its `TeamDB`), the buckets live in the database (`take_rate`:
one upsert a take), so every replica and worker on that database spends one bucket per token: a
token's burst is shared (docs/team-server.md, "Running several replicas"). Without one they live
in this process's memory (one lock; a take is a few float operations).

Cost: stdlib only; a shared take is one upsert (in the caller's thread: never on the event loop);
the middleware buffers at most `max_bytes` per request in flight.
"""

from __future__ import annotations

import json
import math
import threading
from typing import TYPE_CHECKING, Protocol

from ..web.guard import read_body, replay_body

if TYPE_CHECKING:  # the ASGI types are Starlette's, declared once there
    from starlette.types import ASGIApp, Receive, Scope, Send

DEFAULT_MAX_BODY_BYTES = 1 << 20
DEFAULT_RATE_PER_SECOND = 20.0
DEFAULT_BURST = 40
_MAX_BUCKETS = 10_000  # idle full buckets are dropped past this many keys


async def send_json_error(send: Send, status: int, code: str, message: str,
                          headers: dict[str, str] | None = None) -> None:
    """An `{"error": {...}}` answer written straight to ASGI (the middleware has no framework)."""
    body = json.dumps({"error": {"code": code, "message": message}}).encode()
    raw = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    raw += [(k.lower().encode("latin-1"), v.encode("latin-1")) for k, v in (headers or {}).items()]
    await send({"type": "http.response.start", "status": status, "headers": raw})
    await send({"type": "http.response.body", "body": body, "more_body": False})


class BodyLimit:
    """Answer 413 for a request body over `max_bytes`, reading no further than the limit."""

    def __init__(self, app: ASGIApp, max_bytes: int = DEFAULT_MAX_BODY_BYTES) -> None:
        self.app = app
        self.max_bytes = int(max_bytes)

    def _too_large(self) -> str:
        return (f"request body over the server's limit of {self.max_bytes} bytes; send fewer deltas per "
                "request (the server's --max-body-bytes sets the limit)")

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        for name, value in scope.get("headers") or ():
            if name.lower() == b"content-length":
                try:
                    declared = int(value)
                except ValueError:
                    await send_json_error(send, 400, "bad_request", "Content-Length is not a number")
                    return
                if declared > self.max_bytes:
                    await send_json_error(send, 413, "too_large", self._too_large(), {"Connection": "close"})
                    return
        body = await read_body(receive, self.max_bytes)  # the one body buffer, shared with the dashboards
        if body is None:
            await send_json_error(send, 413, "too_large", self._too_large(), {"Connection": "close"})
            return
        await self.app(scope, replay_body(body, then=receive), send)


class BucketStore(Protocol):
    """The part of `TeamDB` that keeps shared buckets."""

    def take_rate(self, bucket: str, rate: float, burst: float, now: float) -> float: ...


def bucket_name(key: object) -> str:
    """A key as the database names its bucket: a token id `t<id>`, a tuple joined with `:`."""
    if isinstance(key, int):
        return f"t{key}"
    if isinstance(key, tuple):
        return ":".join(str(part) for part in key)
    return str(key)


class RateLimiter:
    """A token bucket per key: `rate_per_second` refill, at most `burst` in the bucket."""

    def __init__(self, rate_per_second: float = DEFAULT_RATE_PER_SECOND, burst: int = DEFAULT_BURST,
                 store: BucketStore | None = None) -> None:
        if rate_per_second <= 0 or burst < 1:
            raise ValueError("the rate must be > 0 per second and the burst at least 1")
        self.rate = float(rate_per_second)
        self.burst = float(burst)
        self.store = store
        self._buckets: dict[object, tuple[float, float]] = {}  # key -> (tokens, at)
        self._lock = threading.Lock()

    def take(self, key: object, now: float) -> float:
        """0.0 if a request for `key` may go on now (one token taken), else the seconds to wait."""
        if self.store is not None:
            return self.store.take_rate(bucket_name(key), self.rate, self.burst, now)
        with self._lock:
            tokens, at = self._buckets.get(key, (self.burst, now))
            tokens = min(self.burst, tokens + max(0.0, now - at) * self.rate)
            if tokens >= 1.0:
                self._buckets[key] = (tokens - 1.0, now)
                if len(self._buckets) > _MAX_BUCKETS:
                    self._prune(now)
                return 0.0
            self._buckets[key] = (tokens, now)
            return (1.0 - tokens) / self.rate

    def _prune(self, now: float) -> None:
        # A bucket that has refilled is the same as no bucket: forget it.
        full = [k for k, (tokens, at) in self._buckets.items()
                if tokens + (now - at) * self.rate >= self.burst]
        for key in full:
            del self._buckets[key]


def retry_after(wait_s: float) -> str:
    """The `Retry-After` value (whole seconds, at least 1) for a wait."""
    return str(max(1, math.ceil(wait_s)))
