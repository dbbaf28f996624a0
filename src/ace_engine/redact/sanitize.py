"""Captured text and values made safe to store: valid UTF-8, no `<private>` spans, no secrets,
bounded size.

Contract: `sanitize(s, limit)` is the pipeline for one text (repair_utf8 → strip_private → redact
→ cap); a text too large to keep is redacted only where `cap` keeps it (head, tail and the key
lines of the middle), never cut inside a secret. `sanitize_value(value, limit)` does the same for a
JSON-able value, leaf by leaf (keys redacted too), and returns JSON text; nothing is lost for its
shape: nesting deeper than `MAX_DEPTH`, more items than the budget, integers SQLite cannot hold are
each cut or replaced with an `[ace: …]` marker (`CUT_MARKS`). `short_text` is an id, name or path:
repaired, redacted, capped.

Cost: the redactor's (linear) plus one pass per step; a huge text costs what `cap` keeps, not its
size. Imports only ``re``, ``functools`` and ``json`` (the hook process imports it) plus
:mod:`redactor`; patterns compile on first use.
"""

import functools
import json
import re

from .redactor import MARK, mark_clean, redact, redact_value

TYPE_CHECKING = False  # not `typing.TYPE_CHECKING`: hooks import this module and must not load `typing`
if TYPE_CHECKING:
    from collections.abc import Iterator

__all__ = ["CUT_MARKS", "DROPPED", "cap", "decode_bytes", "is_blank", "repair_utf8", "sanitize", "sanitize_value",
           "short_text", "strip_private"]


def decode_bytes(data: bytes | bytearray) -> str:
    """Decode UTF-8; invalid bytes become U+FFFD.  Never raises."""
    return str(data, "utf-8", "replace")


def repair_utf8(s: str) -> str:
    """Return `s` in a form that encodes to UTF-8: lone surrogates (from JSON
    ``"\\ud800"`` escapes or surrogateescape) become U+FFFD, NULs are dropped.
    """
    if not s.isascii():  # isascii() is O(1) for ASCII strs, the common case
        try:
            s.encode("utf-8")
        except UnicodeEncodeError:
            # Round-trip through UTF-16: a split surrogate *pair* is joined
            # back into its character, a lone surrogate becomes one U+FFFD.
            s = s.encode("utf-16-le", "surrogatepass").decode(
                "utf-16-le", "replace")
    if "\x00" in s:
        s = s.replace("\x00", "")
    return s


_opener_rx = None


def _private_tags(s: str) -> "Iterator[tuple[int, int, bool]]":
    """(start, end, closing) of each `<private>` / `<private …>` / `</private>` tag in `s`, in
    order, exactly the tags of the pattern ``<(/?)private(?:\\s[^>]*)?>`` (any case) scanned
    left to right -- but in linear time. That pattern ran `[^>]*` to the next `>` from every
    `<private ` and, with no `>` after them, back again: `<private ` repeated over a 72 KB file
    read cost 4.7 s, and the hook's watchdog dropped the record. Here each opener is found by
    one scan, and the next `>` after it is looked up once and reused by every opener before it."""
    global _opener_rx
    if _opener_rx is None:
        _opener_rx = re.compile(r"<(/?)private", re.I)
    gt = -1  # the first `>` at or after the current opener (-2: there is none)
    done = 0  # tags never overlap: an opener inside the last tag found is not a tag
    n = len(s)
    for m in _opener_rx.finditer(s):
        at = m.end()
        if m.start() < done or at >= n:
            continue
        c = s[at]
        if c == ">":
            end = at + 1
        elif c.isspace():
            if gt != -2 and gt < at:
                gt = s.find(">", at)
                if gt < 0:
                    gt = -2
            if gt == -2:
                continue  # no `>` left: no later opener is a tag either, but closers `</private>` may be
            end = gt + 1
        else:
            continue  # `<privateer>`
        done = end
        yield m.start(), end, bool(m.group(1))


def strip_private(s: str) -> str:
    """Remove every ``<private>...</private>`` span (any case, any lines).

    Nested spans count depth, so the outer tag decides where the span ends.
    A stray ``</private>`` is dropped alone; an unclosed ``<private>`` drops
    everything after it (losing text beats storing what the user hid).
    Linear in `s` (`_private_tags`).
    """
    if "<" not in s:
        return s
    low = s.lower()  # ~1 us per 2 KB; 20 MB costs ~10 ms, fine
    if "<private" not in low and "</private" not in low:
        return s
    out = []
    depth = 0
    last = 0  # start of the text still to copy
    for start, end, closing in _private_tags(s):
        if not closing:  # <private>
            if depth == 0:
                out.append(s[last:start])
            depth += 1
        elif depth == 0:  # stray </private>
            out.append(s[last:start])
            last = end
        else:
            depth -= 1
            if depth == 0:
                last = end
    if depth == 0:
        out.append(s[last:])
    return "".join(out)


def is_blank(s: str | None) -> bool:
    """True when `s` holds nothing but whitespace."""
    return not s or s.isspace()


def _cut_marker(n: int) -> str:
    return f"\n…[ace: {n} chars cut]…\n"


# Where a cap drops the middle of a long output, the lines in it that say what went wrong are kept
# between the head and the tail: a build or test log (turbo, cargo, a runner's progress noise) often
# prints its one error line mid-way, and the learner needs that line, not the first and last pages.
# A key line is an `error:`/`fatal:`/`panic:` line, an exception (`TypeError: …`), a `FAILED`/`FAIL`
# verdict or a `file:line: message` diagnostic, after an optional task prefix (`pkg:test: `, `[lint] `).
_KEY_HEAD = "[ace: lines kept from the cut part]\n"
_KEY_END = "\n…\n"
_KEY_SHARE = 5      # key lines take at most a fifth of the limit
_KEY_LINES = 6      # and at most this many lines
_KEY_LINE_MAX = 300  # a longer line is data (a JSON blob, a dump), not an error message
_KEY_SCAN = 1 << 17  # of a huge middle, the first and last 128 KiB are searched (a hook's budget)


@functools.cache
def _key_patterns() -> tuple[re.Pattern[str], re.Pattern[str], re.Pattern[str]]:
    """(literal key words, `:12:3: ` diagnostics, what a key line starts with), compiled on first use:
    two plain passes find the candidate lines ~20x faster than one alternation of both."""
    return (re.compile(r"error|Error|ERROR|fatal|FATAL|panic|FAIL|Exception"),
            re.compile(r":\d+:\d+: |:\d+: "),
            re.compile(r"\s*(?:[@\w./-]+[:#][\w:-]+: |\[[\w:-]+\] )?"
                       r"(?:(?:error|fatal|panic|Error|ERROR|FATAL|FAIL(?:ED)?|\w+(?:Error|Exception))\b"
                       r"|[\w./-]+\.\w+:\d+(?::\d+)?:? )"))


def _key_lines(middle: str, budget: int) -> list[str]:
    """The first key lines of `middle` (deduplicated) whose total fits in `budget` characters.
    Cost: two scans for the key words, then only the lines they are on."""
    if budget < 40 or not middle:
        return []
    words, diagnostics, key_line = _key_patterns()
    if len(middle) > 2 * _KEY_SCAN:
        middle = middle[:_KEY_SCAN] + "\n" + middle[-_KEY_SCAN:]
    kept: list[str] = []
    used, done_to = 0, -1
    for at in sorted(m.start() for rx in (words, diagnostics) for m in rx.finditer(middle)):
        if at <= done_to:
            continue  # another key word on a line already judged
        start = middle.rfind("\n", 0, at) + 1
        end = middle.find("\n", at)
        end = len(middle) if end < 0 else end
        done_to = end
        line = middle[start:end].strip()
        if len(line) > _KEY_LINE_MAX or line in kept or not key_line.match(middle, start):
            continue
        if used + len(line) + 1 > budget:
            break
        kept.append(line)
        used += len(line) + 1
        if len(kept) == _KEY_LINES:
            break
    return kept


def _splice(head: str, tail: str, total: int, limit: int, middle: str = "") -> str:
    """`head`'s start + cut marker + `tail`'s end, at most `limit` chars; the key lines of `middle`
    (the dropped text between the two) kept after the marker when there are any.

    `total` is the length of the original text (for the count in the marker).
    """
    room = limit - len(_cut_marker(total))  # marker(cut) is never longer
    if room < 2:  # no space for the marker: keep what fits, flag the cut
        return head[:limit - 1] + "…" if limit > 1 else "…"
    kept = _key_lines(middle, room // _KEY_SHARE - len(_KEY_HEAD) - len(_KEY_END))
    keys = _KEY_HEAD + "\n".join(kept) + _KEY_END if kept else ""
    room -= len(keys)
    h = min(len(head), room * 2 // 3)
    t = min(len(tail), room - h)
    return (head[:h] + _cut_marker(max(total - h - t, 0)) + keys
            + (tail[len(tail) - t:] if t else ""))


def cap(s: str, limit: int) -> str:
    """Shorten `s` to at most `limit` chars, keeping ~2/3 head and ~1/3 tail
    around a ``…[ace: N chars cut]…`` marker, and after the marker the
    error lines of the cut part (`_key_lines`).  ``limit <= 0`` means no cap."""
    if limit <= 0 or len(s) <= limit:
        return s
    room = limit - len(_cut_marker(len(s)))
    # What is dropped at the least (the head and tail only shrink to make room for key lines).
    middle = s[max(room * 2 // 3, 0):len(s) - max(room - room * 2 // 3, 0)] if room >= 2 else ""
    return _splice(s, s, len(s), limit, middle)


# Pre-cut windows extend this far past what cap() keeps, so a line boundary
# can be found to cut at.
_MARGIN = 4096


def _cut_back(s: str, end: int, lo: int) -> int:
    """Best cut point in s[lo:end], searching backwards: after a newline,
    else after a space, else `end`."""
    i = s.rfind("\n", lo, end)
    if i < 0:
        i = s.rfind(" ", lo, end)
    return i + 1 if i >= 0 else end


def _cut_forward(s: str, start: int, hi: int) -> int:
    """Best cut point in s[start:hi], searching forwards."""
    i = s.find("\n", start, hi)
    if i < 0:
        i = s.find(" ", start, hi)
    return i + 1 if i >= 0 else start


def _skip_open_pem(s: str, ts: int) -> int:
    """If position `ts` lies inside a PEM private key block whose BEGIN line
    is before it, return the index just past the block's END line (or
    ``len(s)``); else return -1."""
    b = s.rfind("-----BEGIN", 0, ts)
    if b < 0 or "PRIVATE KEY" not in s[b:b + 64]:
        return -1
    if s.find("-----END", b, ts) >= 0:
        return -1
    e = s.find("-----END", ts)
    if e < 0:
        return len(s)
    close = s.find("-----", e + 8)
    return len(s) if close < 0 else close + 5


def sanitize(s: str, limit: int) -> str:
    """The full pipeline for one captured text:
    repair_utf8 -> strip_private -> redact -> cap(limit)."""
    s = strip_private(repair_utf8(s))
    n = len(s)
    if limit <= 0 or n <= 4 * limit:
        return mark_clean(cap(redact(s), limit))
    # Huge text: redact only what cap() can keep.  Redacting before capping
    # is what stops a secret cut in half from leaking a fragment, and
    # redacting 20 MB to keep 20 KB wastes seconds, so: pre-cut a head and a
    # tail window wider than cap() keeps (by _MARGIN), with each window edge
    # on a line/space boundary so no token straddles it; redact each window;
    # then splice exactly.  strip_private ran on the whole text above, since
    # a <private> opener in the discarded middle must still hide the tail.
    he = _cut_back(s, limit + _MARGIN, limit)
    lo = n - limit - _MARGIN
    if lo <= he:  # windows would overlap: the text is not that big after all
        return mark_clean(cap(redact(s), limit))
    ts = _cut_forward(s, lo, n - limit)
    tail = s[ts:]
    pem_end = _skip_open_pem(s, ts)  # window starts inside a private key?
    if pem_end >= 0:
        tail = MARK + "private-key]" + s[pem_end:]
    # The key lines of the unredacted middle are redacted one by one (a line is the unit they are kept in).
    middle = "\n".join(redact(line) for line in _key_lines(s[he:ts], limit // _KEY_SHARE))
    return mark_clean(_splice(redact(s[:he]), redact(tail), n, limit, middle))


# -- JSON values ---------------------------------------------------------------------------------

# What a tool event's response is when the hook could not keep the call's record ("fail closed"):
# the session's evidence is incomplete from here, and `observe/origins.py` treats every risky part
# learned from it as someone else's. The other marks say part of a value was cut.
DROPPED = "[ace: record dropped"
CUT_MARKS = ("chars cut]", "more items cut]", "levels, cut]", DROPPED)
MAX_DEPTH = 64  # deeper structure is replaced by a marker (json/recursion would fail near 1000)
INT64 = (-(1 << 63), (1 << 63) - 1)
ID_CHARS = 200  # ids and names
PATH_CHARS = 4096


def _deep_marker(depth: int) -> str:
    return f"[ace: nested deeper than {depth} levels, cut]"


def _clean_leaves(value: object, limit: int, depth: int = 0, budget: list[int] | None = None) -> object:
    """Repair, de-privatize and pre-cap every string leaf (keys too: redacted) before redaction;
    cut what is nested deeper than MAX_DEPTH or lies beyond the item budget, with a marker."""
    if budget is None:
        budget = [max(1000, limit // 2)]  # each item costs ≥ 2 chars of JSON: more can't be kept
    if isinstance(value, str):
        return cap(strip_private(repair_utf8(value)), limit)
    if isinstance(value, bool) or value is None or isinstance(value, float):
        return value
    if isinstance(value, int):
        return value if INT64[0] <= value <= INT64[1] else big_int(value)
    if not isinstance(value, (dict, list, tuple)):
        return cap(repair_utf8(str(value)), limit)
    if depth >= MAX_DEPTH:
        return _deep_marker(MAX_DEPTH)
    items = value.items() if isinstance(value, dict) else enumerate(value)
    out_d: dict[str, object] = {}
    out_l: list[object] = []
    for n, (k, v) in enumerate(items):
        budget[0] -= 1
        if budget[0] < 0:
            left = len(value) - n
            note = f"[ace: {left} more items cut]"
            if isinstance(value, dict):
                out_d["…"] = note
            else:
                out_l.append(note)
            break
        clean = _clean_leaves(v, limit, depth + 1, budget)
        if isinstance(value, dict):
            out_d[redact(cap(repair_utf8(str(k)), ID_CHARS))] = clean
        else:
            out_l.append(clean)
    return out_d if isinstance(value, dict) else out_l


def big_int(value: int) -> str:
    digits = str(value) if value.bit_length() < 4000 else f"a {value.bit_length()}-bit integer"
    return f"{digits[:60]} [ace: integer too large to store as a number]"


def sanitize_value(value: object, limit: int) -> str | None:
    """A JSON-able value → redacted, capped text (JSON when it fits within `limit`)."""
    if value is None:
        return None
    if isinstance(value, str):
        return sanitize(value, limit)
    clean = redact_value(_clean_leaves(value, limit))
    text = json.dumps(clean, ensure_ascii=False, separators=(",", ":"), default=str)
    return mark_clean(cap(text, limit))  # joined from redacted leaves: the store won't rescan it


def short_text(value: object, limit: int = ID_CHARS) -> str | None:
    """An id, name, path or detail: repaired, redacted, capped; None for non-strings."""
    if not isinstance(value, str):
        return None
    return cap(redact(strip_private(repair_utf8(value))), limit)
