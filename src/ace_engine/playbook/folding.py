"""The safety policy's one normalization of a lesson's text: what a shell or a model would read.

`fold_chars(text)`: NFKC, invisible characters (zero-width, soft hyphen, direction controls)
dropped, common Cyrillic / Greek look-alike letters read as the Latin ones they show, `&lt;`-style
entities decoded, `${IFS}` read as a space — character by character, so quotes, escapes and lines
stay and the command reader (`commands_read`) can still read a command's structure.
`folded(text)`: that, then shell quoting and backslashes removed and whitespace collapsed — the
copy the policy's rules also run on (`safety.concerns`) and that `provenance.fold` lower-cases.

Split off safety.py for length only: one normalization, used by the rules, the provenance rule
and the command reader. Cost: imports only `re` (unicodedata on first use); the patterns compile
on first use (`_Lazy`, which safety.py's rules use too); linear in the text.
"""

from __future__ import annotations

import re

TYPE_CHECKING = False  # not `typing.TYPE_CHECKING`: hooks import this module through playbook.py
if TYPE_CHECKING:
    from typing import Any


class Lazy:
    """A regex compiled on first use: hooks import this module (through playbook.py) and must not
    pay for compiling patterns they never run."""

    __slots__ = ("args", "rx")

    def __init__(self, *args: Any) -> None:
        self.args = args
        self.rx: re.Pattern[str] | None = None

    def __getattr__(self, name: str) -> Any:  # the compiled pattern's attribute
        if self.rx is None:
            self.rx = re.compile(*self.args)
        return getattr(self.rx, name)


# Characters that look like Latin letters (Cyrillic, Greek) in words the rules look for.
_CONFUSABLES = str.maketrans({
    "а": "a", "е": "e", "о": "o", "р": "p", "с": "c", "у": "y", "х": "x", "і": "i", "ѕ": "s", "ј": "j",
    "һ": "h", "ԁ": "d", "ɡ": "g", "ո": "n", "ν": "v", "ο": "o", "α": "a", "ε": "e", "ι": "i", "κ": "k",
    "ρ": "p", "τ": "t", "υ": "u", "А": "A", "Е": "E", "О": "O", "Р": "P", "С": "C", "Х": "X", "І": "I",
    "Ѕ": "S", "Ј": "J", "Н": "H", "М": "M", "Т": "T", "В": "B", "К": "K",
})
_INVISIBLE = Lazy("[\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180e\u200b-\u200f\u202a-\u202e"
                        "\u2060-\u2064\u2066-\u206f\ufeff]")
_ENTITY = Lazy(r"&(?:lt|gt|quot|apos|amp|#0*60|#0*62|#x0*3c|#x0*3e);", re.IGNORECASE)
_ENTITIES = {"lt": "<", "gt": ">", "quot": '"', "apos": "'", "amp": "&"}
_SHELL_NOISE = Lazy(r"\$\{?IFS\}?|\$'\\x20'")


def _entity(match: re.Match[str]) -> str:
    name = match.group(0)[1:-1].lower()
    if name in _ENTITIES:
        return _ENTITIES[name]
    return "<" if name.rstrip(";").endswith(("60", "3c")) else ">"


def fold_chars(text: str) -> str:
    """The first half of the folding, character by character: NFKC, invisible characters dropped,
    look-alike letters and entities read as what they show, `${IFS}` as a space. Quotes, escapes
    and lines are kept, so a shell reader (`commands_read`) can still read the text's structure."""
    import unicodedata  # first use only; keeps this module's import to `re`

    text = unicodedata.normalize("NFKC", text)
    text = _INVISIBLE.sub("", text).translate(_CONFUSABLES)
    text = _ENTITY.sub(_entity, text)
    return _SHELL_NOISE.sub(" ", text)


# Dashes NFKC keeps apart (‐ ‑ ‒ – — −): in a package name they read as the hyphen they look like.
DASHES = str.maketrans(dict.fromkeys("\u2010\u2011\u2012\u2013\u2014\u2015\u2212\ufe63\uff0d", "-"))


def lines(text: str) -> str:
    """A lesson as the command reader reads it: controls and ANSI sequences removed (`plain`),
    `fold_chars`, lower case, dashes as hyphens; quotes and lines kept."""
    from ..core.escape import plain

    return fold_chars(plain(str(text))).lower().translate(DASHES)


def folded(text: str) -> str:
    """The normalized copy the rules also see: what a shell or a model would read."""
    text = fold_chars(text)
    # Shell quoting and escapes don't change what runs: c''url, "c"url, cu\rl are all curl.
    text = text.replace("\\\n", "").replace("\\", "").replace("'", "").replace('"', "")
    return " ".join(text.split())
