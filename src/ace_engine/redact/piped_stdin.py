"""Secrets a command line feeds a program on its standard input, for :mod:`redact`:
`echo PW | docker login --password-stdin`, `printf '%s' PW | helm registry login --password-stdin`,
`docker login --password-stdin <<< PW`, a here-document after the flag, `… | gh auth login
--with-token`.

Contract: `stdin_secrets(text, low)` (`low` is `text` lower-cased, positions kept) returns `text`
with each such value replaced by `[REDACTED:stdin-secret]`, or the very same object when it found
none. A flag counts when its name ends in `-stdin` and names a secret (`--password-stdin`,
`--token-stdin`, `--secret-stdin`…), or is `--with-token`. What feeds it is read as the shell
would: the words of the `echo` / `printf` / `print` / `Write-Output` commands piped into the
flag's command (quotes kept whole, `-n`-style options and `printf`'s format skipped when it has
a `%`), a quoted string piped on its own (PowerShell: `'PW' | docker login …`), and a
here-string (`<<< PW`) or a here-document (`<<EOF … EOF`) of that command. References (`$PW`,
`"$(cat pw)"`, `${{ secrets.PW }}`) and files (`cat pw.txt |`) are not secrets and stay.

Cost: linear. It runs only where `-stdin` or `--with-token` occurs (found with ``str.find``) and
reads the 600 characters either side of it (flags whose windows overlap share one reading), walks
at most 64 words and 8 pipes from it, and a here-document's first 2 KB: a fixed amount per flag,
and each character read into words about once. Imports only `re` (through :mod:`spans`) and, at
a flag, `bisect`.
"""

from .spans import apply_spans, finds

TYPE_CHECKING = False  # not `typing.TYPE_CHECKING`: hooks import this module and must not load `typing`
if TYPE_CHECKING:
    Spans = list[tuple[int, int, str]]
    Word = tuple[int, int, str]  # (start, end, text) of one shell word; text "|", ";"... for operators

_SECRET_WORDS = ("pass", "token", "secret", "key", "cred")
_FEEDERS = ("echo", "printf", "print", "write-output")
_REACH = 600  # how far around a flag its command is read
_MAX_WORDS, _MAX_PIPES = 64, 8
_HEREDOC = 2048


def stdin_secrets(text: str, low: str) -> str:
    hits = sorted({p for p in finds(low, "-stdin")} | {p + len("--with") for p in finds(low, "--with-token")})
    flags = []
    for p in hits:
        s = p
        while s > max(0, p - 40) and (low[s - 1].isalnum() or low[s - 1] in "-_"):
            s -= 1
        name = low[s:p]
        if low.startswith("-", s) and (any(w in name for w in _SECRET_WORDS) or name == "--with"):
            flags.append(s)
    if not flags:
        return text
    from bisect import bisect_right

    spans: Spans = []
    # Flags whose windows overlap share one region, read into words once: many flags on one long
    # line cost one pass over it, not one each.
    k = 0
    while k < len(flags):
        lo, hi, j = max(0, flags[k] - _REACH), min(len(text), flags[k] + _REACH), k
        while j + 1 < len(flags) and flags[j + 1] - _REACH <= hi:
            j += 1
            hi = min(len(text), flags[j] + _REACH)
        words = _words(text, lo, hi)
        starts = [w[0] for w in words]
        for flag in flags[k:j + 1]:
            if spans and flag < spans[-1][1]:
                continue  # inside a here-document already taken
            at = bisect_right(starts, flag) - 1
            if at >= 0 and words[at][0] <= flag < words[at][1]:
                _feeders(text, words, at, hi, spans)
        k = j + 1
    return apply_spans(text, spans)


def _words(text: str, start: int, end: int) -> "list[Word]":
    """Shell words and operators of text[start:end]: quotes kept whole (with their quotes), `|`,
    `||`, `&&`, `;`, `&`, a newline (not after `\\`) and `<<<` / `<<` as operator words."""
    out: list[Word] = []
    i = start
    while i < end:
        c = text[i]
        if c in " \t" or (c == "\\" and text.startswith("\n", i + 1)):
            i += 2 if c == "\\" else 1
            continue
        if c in "|&;\n<":
            j = i + 1
            while j < end and j - i < 3 and text[j] == c and c in "|&<":
                j += 1
            out.append((i, j, text[i:j]))
            i = j
            continue
        j = i
        while j < end and text[j] not in " \t|&;\n<":
            if text[j] in "\"'":
                close = text.find(text[j], j + 1, end)
                j = end if close < 0 else close + 1
            else:
                j += 1
        out.append((i, j, text[i:j]))
        i = j
    return out


def _is_reference(word: str) -> bool:
    w = word.strip("\"'")
    return not w or w[0] in "$<{%`" or w.startswith("-")


_OPS = ("|", "||", "&&", ";", "&", "\n")


def _feeders(text: str, words: "list[Word]", at: int, region_end: int, spans: "Spans") -> None:
    """The values fed to the command holding the flag word `at`: the commands piped into it,
    its here-strings and here-documents. Each walk is bounded (`_MAX_WORDS`, `_MAX_PIPES`)."""
    first = at
    while first > 0 and at - first < _MAX_WORDS and words[first - 1][2] not in _OPS:
        first -= 1
    last = at
    while last + 1 < len(words) and last - at < _MAX_WORDS and words[last + 1][2] not in _OPS:
        last += 1
    # Commands piped into it: `a | b | <flag's command>`, back to the pipeline's start.
    k = first - 1
    for _ in range(_MAX_PIPES):
        if k < 0 or words[k][2] != "|":
            break
        end = k
        k -= 1
        while k >= 0 and end - k < _MAX_WORDS and words[k][2] not in _OPS:
            k -= 1
        _fed_by(words[k + 1:end], spans)
    # Here-strings and here-documents of the flag's command.
    for j in range(first, last + 1):
        op = words[j][2]
        if op == "<<<" and j + 1 <= last and not _is_reference(words[j + 1][2]):
            spans.append((words[j + 1][0], words[j + 1][1], "stdin-secret"))
        elif op == "<<" and j + 1 <= last:
            line_end = text.find("\n", words[j + 1][1], region_end)
            if line_end >= 0:
                _heredoc(text, words[j + 1], line_end, spans)


def _fed_by(command: "list[Word]", spans: "Spans") -> None:
    """`echo [-n] PW`, `printf '%s\\n' PW`, `printf PW`: the words it prints, if it is a printer;
    a quoted string alone (PowerShell's `'PW' | docker login --password-stdin`)."""
    if len(command) == 1 and command[0][2][:1] in "\"'" and not _is_reference(command[0][2]):
        spans.append((command[0][0], command[0][1], "stdin-secret"))
        return
    if not command or command[0][2].lower() not in _FEEDERS:
        return
    args = [w for w in command[1:] if not (w[2].startswith("-") and len(w[2]) <= 3)]
    if command[0][2].lower() == "printf" and len(args) > 1 and "%" in args[0][2]:
        args = args[1:]  # the format
    for s, e, word in args:
        if not _is_reference(word):
            spans.append((s, e, "stdin-secret"))


def _heredoc(text: str, word: "Word", line_end: int, spans: "Spans") -> None:
    """The body of `<<EOF` / `<<-'EOF'` up to its delimiter line (at most 4 KB)."""
    delim = word[2].lstrip("-").strip("\"'")
    if not delim or not delim.replace("_", "").isalnum():
        return
    body = line_end + 1
    limit = min(len(text), body + _HEREDOC)
    end, at = limit, body
    while at < limit:  # the delimiter line (a literal, not a pattern made of someone's text)
        nl = text.find("\n", at, limit)
        stop = limit if nl < 0 else nl
        if text[at:stop].strip() == delim:
            end = at
            break
        at = stop + 1
    while end > body and text[end - 1] in "\r\n":
        end -= 1
    inner = text[body:end].strip()
    if end > body and inner and not _is_reference(inner):
        spans.append((body, end, "stdin-secret"))
