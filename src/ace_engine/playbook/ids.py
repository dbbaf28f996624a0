"""Bullet ids: `ctx-` + 10 base32 chars of millisecond time + 10 of randomness.

Sortable by creation, and with 50 random bits per millisecond, two machines will not collide.
An id never changes, whatever happens to the bullet's content.
"""

import os
import time

_ALPHABET = "0123456789abcdefghjkmnpqrstvwxyz"  # Crockford base32, lower case


def _b32(number: int, width: int) -> str:
    chars = []
    for _ in range(width):
        chars.append(_ALPHABET[number & 31])
        number >>= 5
    return "".join(reversed(chars))


_last = [0, 0]  # (millisecond, random part) of this process's previous id


def new_id(now: float | None = None) -> str:
    """A new id; within one millisecond of one process, ids still sort in creation order."""
    millis = int((time.time() if now is None else now) * 1000)
    if millis == _last[0]:
        rand = (_last[1] + 1) % (1 << 50)
    else:
        rand = int.from_bytes(os.urandom(7), "big") >> 6  # 50 random bits, room to count up
    _last[0], _last[1] = millis, rand
    return "ctx-" + _b32(millis, 10) + _b32(rand, 10)


def looks_like_id(text: str) -> bool:
    text = text.lower()
    return text.startswith("ctx-") and len(text) > 4 and all(c.isalnum() or c == "-" for c in text)
