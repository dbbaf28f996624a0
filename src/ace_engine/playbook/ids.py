"""Bullet ids: `ctx-` + 10 base32 chars of millisecond time + 10 of randomness.

Sortable by creation, and with 50 random bits per millisecond, two machines will not collide.
Within one process, ids made in the same millisecond count up from the first one's random part
(as a monotonic ULID does): the curator adds a task's lessons with one `now`, and ranking breaks
ties by id, so without this their order — which of two equally ranked lessons a capped digest
shows — was a coin toss on every run (a replay of the same sessions, same code, injected other
lines in 8 of 205 sessions). An id never changes, whatever happens to the bullet's content.
"""

import _thread
import os
import time

_ALPHABET = "0123456789abcdefghjkmnpqrstvwxyz"  # Crockford base32, lower case


def _b32(number: int, width: int) -> str:
    chars = []
    for _ in range(width):
        chars.append(_ALPHABET[number & 31])
        number >>= 5
    return "".join(reversed(chars))


_RANDOM_BITS = 50
_lock = _thread.allocate_lock()
_last = (-1, 0)  # the millisecond and random part of this process's latest id


def new_id(now: float | None = None) -> str:
    global _last
    millis = int((time.time() if now is None else now) * 1000)
    with _lock:
        last_millis, last_random = _last
        if millis == last_millis and last_random + 1 < 1 << _RANDOM_BITS:
            random = last_random + 1
        else:
            random = int.from_bytes(os.urandom(7), "big") >> (56 - _RANDOM_BITS)
        _last = (millis, random)
    return "ctx-" + _b32(millis, 10) + _b32(random, 10)


def looks_like_id(text: str) -> bool:
    text = text.lower()
    return text.startswith("ctx-") and len(text) > 4 and all(c.isalnum() or c == "-" for c in text)
