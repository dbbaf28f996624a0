"""A shell's words, read the way a POSIX shell splits them: one linear pass, never an exception.

`tokens(s)` → `Word`s and operator strings (`;`, `&&`, `||`, `|`, `|&`, `&`, `(`, `)`, newline and the
redirections `>`, `>>`, `<`, `<<`, `<<<`, `&>`, `>&`, `>|`). A `Word` is its text as the shell would
pass it (single and double quotes and backslashes removed), the texts of the substitutions it holds
(`$(…)`, backticks, `<(…)` / `>(…)`: read one level down by `commands_read`), the variables it
expands, and whether a quote or substitution was left open (`broken`). `#` at a word's start is a
comment; `2>` drops its descriptor; a backslash-newline joins lines.

Cost: each character is looked at once (a run of ordinary ones at once; a word's text is joined
from its pieces, never grown by `+=`, which is quadratic in a long word), and a substitution's
closing parenthesis is searched once from its opening (`_closing`), so a text costs linear time
whatever it holds — runs of quotes, `$((((`, unclosed substitutions, one long word
(tests/security/test_command_reader_linear.py, bench/redaction_bench.py). At most
`MAX_TOKENS` tokens are returned. Imports only `re`.
"""

from __future__ import annotations

import re

SUBSTITUTION = "$(…)"  # how a word's text shows a command substitution (`$(…)` or backticks)
MAX_TOKENS = 4000  # a lesson is at most a few thousand characters; a cap keeps odd inputs bounded
OPS = (";;", "&&", "||", "|&", ">>", "<<<", "<<", "&>", ">&", ">|", ";", "|", "&", "(", ")", "<", ">", "\n")
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_PLAIN = re.compile(r"[^ \t\r\n\\'\"$`<>;&|()]+")  # characters with no meaning to the shell here
_QUOTED = re.compile(r"[^\"\\$`]+")  # the same inside double quotes


class Word:
    """One shell word: its text as the shell would see it (quotes removed; a substitution written
    `$(…)`), the substitutions it holds, the variables it expands, whether it was cut short."""

    __slots__ = ("broken", "parts", "subs", "text", "vars")

    def __init__(self) -> None:
        self.text = ""  # set when the word ends (`done`): built from `parts`, never by `+=` (quadratic)
        self.parts: list[str] = []
        self.subs: list[str] = []
        self.vars: list[str] = []
        self.broken = False

    def __repr__(self) -> str:
        return f"Word({self.text!r})"

    def done(self) -> Word:
        self.text = "".join(self.parts)
        return self



def _closing(s: str, i: int, opener: str, closer: str) -> int:
    """The index just past the `closer` that balances an `opener` before `i` (quotes skipped);
    -1 when there is none. One pass from `i`."""
    depth, n = 1, len(s)
    while i < n:
        c = s[i]
        if c == "\\":
            i += 2
            continue
        if c == "'":
            j = s.find("'", i + 1)
            if j < 0:
                return -1
            i = j + 1
            continue
        if c == closer:
            depth -= 1
            if depth == 0:
                return i + 1
        elif c == opener:
            depth += 1
        i += 1
    return -1


def tokens(s: str) -> list[Word | str]:
    """`s` as shell tokens: `Word`s and operator strings (`;`, `&&`, `|`, `>>`, `\\n`…). Linear in
    `s` (each character is looked at once, a substitution's closing searched once); never raises."""
    out: list[Word | str] = []
    word: Word | None = None
    i, n = 0, len(s)

    def cur() -> Word:
        nonlocal word
        if word is None:
            word = Word()
        return word

    def end() -> None:
        nonlocal word
        if word is not None:
            out.append(word.done())
            word = None

    while i < n and len(out) < MAX_TOKENS:
        c = s[i]
        if c in " \t\r":
            end()
            i += 1
        elif c == "#" and word is None:
            j = s.find("\n", i)
            i = n if j < 0 else j
        elif c == "\\":
            if i + 1 < n and s[i + 1] == "\n":
                i += 2
                continue
            if i + 1 < n:
                cur().parts.append(s[i + 1])
            i += 2
        elif c == "'":
            j = s.find("'", i + 1)
            w = cur()
            if j < 0:
                w.parts.append(s[i + 1:])
                w.broken = True
                i = n
            else:
                w.parts.append(s[i + 1:j])
                i = j + 1
        elif c == '"':
            i = _double(s, i + 1, cur())
        elif c == "$" or c == "`":
            i = _dollar(s, i, cur())
        elif c in "<>" and i + 1 < n and s[i + 1] == "(":  # process substitution <(…) >(…)
            j = _closing(s, i + 2, "(", ")")
            w = cur()
            w.subs.append(s[i + 2:(j - 1 if j > 0 else n)])
            w.parts.append("<(…)")
            w.broken = w.broken or j < 0
            i = n if j < 0 else j
        elif c in ";&|()<>\n":
            if c in "<>" and word is not None and "".join(word.parts).isdigit() and not word.subs:
                word = None  # `2>`: a file descriptor, not an argument
            end()
            op = next(o for o in OPS if s.startswith(o, i))
            out.append(op)
            i += len(op)
        else:  # a run of ordinary characters, taken at once
            plain = _PLAIN.match(s, i)
            j = plain.end() if plain else i + 1
            cur().parts.append(s[i:j])
            i = j
    end()
    return out


def _double(s: str, i: int, w: Word) -> int:
    """A double-quoted string from `i` (after its `"`) into `w`; the index after its closing quote."""
    n = len(s)
    while i < n:
        c = s[i]
        if c == '"':
            return i + 1
        if c == "\\" and i + 1 < n:
            w.parts.append(s[i + 1] if s[i + 1] in '"\\$`\n' else s[i:i + 2])
            i += 2
        elif c == "$" or c == "`":
            i = _dollar(s, i, w)
        else:
            plain = _QUOTED.match(s, i)
            j = plain.end() if plain else i + 1
            w.parts.append(s[i:j])
            i = j
    w.broken = True
    return n


def _dollar(s: str, i: int, w: Word) -> int:
    """A `$…` expansion or a backtick substitution at `i` into `w`; the index after it."""
    n = len(s)
    if s[i] == "`":
        j = s.find("`", i + 1)
        w.subs.append(s[i + 1:(j if j > 0 else n)])
        w.parts.append(SUBSTITUTION)
        w.broken = w.broken or j < 0
        return n if j < 0 else j + 1
    nxt = s[i + 1] if i + 1 < n else ""
    if nxt == "(":
        j = _closing(s, i + 2, "(", ")")
        w.subs.append(s[i + 2:(j - 1 if j > 0 else n)])
        w.parts.append(SUBSTITUTION)
        w.broken = w.broken or j < 0
        return n if j < 0 else j
    if nxt == "{":
        j = s.find("}", i + 2)
        inner = s[i + 2:(j if j > 0 else n)]
        name = _NAME.match(inner)
        w.vars.append(name.group(0) if name else inner)
        w.parts.append("${" + inner + "}")
        w.broken = w.broken or j < 0
        return n if j < 0 else j + 1
    name = _NAME.match(s, i + 1)
    if name:
        w.vars.append(name.group(0))
        w.parts.append("$" + name.group(0))
        return name.end()
    if nxt and nxt in "@*#?$!-0123456789":
        w.vars.append(nxt)
        w.parts.append("$" + nxt)
        return i + 2
    w.parts.append("$")
    return i + 1
