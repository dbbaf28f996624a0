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


def new_id(now: float | None = None) -> str:
    millis = int((time.time() if now is None else now) * 1000)
    return "ctx-" + _b32(millis, 10) + _b32(int.from_bytes(os.urandom(7), "big"), 10)


def looks_like_id(text: str) -> bool:
    text = text.lower()
    return text.startswith("ctx-") and len(text) > 4 and all(c.isalnum() or c == "-" for c in text)
