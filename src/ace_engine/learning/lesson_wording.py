"""How a lesson shows what it names: code spans, shortened at a word boundary, free of the paths
of the machine the session ran on.

    code(text, limit)        → "`npm run lint`"; one line, backticks made safe, cut at a word boundary
                               with " …" when longer than `limit` (never "gocons…")
    local(text, root)        → the text with the project root removed from paths ("/testbed/x.py"
                               → "x.py") and other home / temp paths shortened ("/Users/ann/…/x" →
                               "~/…/x", "/tmp/a.go" → "a.go"); one PR's number made `<n>`
    sentence(text, limit)    → the whole lesson bounded to `limit` characters, cut between words
    spelled(command)         → a command's spelling with its quoted texts elided (`git commit -m "…"
                               -m "…"`), for when two commands differ only in how they are written

A lesson is read by the next session on another machine: an absolute path of this one is noise
at best and wrong at worst. Pure functions over strings; no imports beyond `re`.
"""

from __future__ import annotations

import re

_SPACE = re.compile(r"\s+")

# What `local` replaces, in order: a temporary directory's path (dropped), a home directory (`~`),
# one pull request, issue or run of this session (`gh pr merge 235` → `gh pr merge <n>`,
# `acme/shop#235` → `acme/shop#<n>`: the lesson is about the repository's rules, not about that one
# number), a Windows drive path (dropped).
_MACHINE = tuple((re.compile(pattern), replacement) for pattern, replacement in (
    (r"(?<![\w.~$-])(?:/private)?(?:/tmp|/var/folders/[^\s`'\"]*?/T)(?:/[\w.@+-]+)*?/(?=[\w.-]+)", ""),
    (r"(?<![\w.~$-])(?:/Users|/home)/[^/\s`'\"]+(?=/)", "~"),
    (r"\b(gh (?:pr|issue|run|release) [a-z-]+) #?\d+\b", r"\1 <n>"),
    (r"\b((?:[\w.-]+/[\w.-]+|PR|pull request|issue) ?#)\d+\b", r"\1<n>"),
    (r"\b[A-Za-z]:[\\/](?:[^\s`'\"\\/]+[\\/])*", ""),
))


def local(text: str, root: str | None = None) -> str:
    """`text` with machine paths made relative and one PR's or issue's number made `<n>` (see the
    module docstring)."""
    out = str(text or "")
    for r in (root, (root or "").replace("/", "\\")):
        if r and len(r.strip("/\\")) > 1:
            out = out.replace(r.rstrip("/\\") + ("\\" if "\\" in r else "/"), "").replace(r.rstrip("/\\"), ".")
    for pattern, replacement in _MACHINE:
        out = pattern.sub(replacement, out)
    return out


def cut(text: str, limit: int) -> str:
    """At most `limit` characters, cut at a word boundary, marked with an ellipsis."""
    if len(text) <= limit:
        return text
    head = text[: max(1, limit - 2)]
    space = max(head.rfind(" "), head.rfind("/"), head.rfind(","), head.rfind("("))
    if space >= limit // 2:
        head = head[: space + (1 if head[space] in "/(" else 0)]
    head = head.rstrip()
    # Never "word…": an ellipsis right after a letter reads as a word cut in half.
    return head + (" …" if head[-1:].isalnum() or head[-1:] == "_" else "…")


def code(text: str | None, limit: int = 90) -> str:
    """`text` as an inline code span: one line, shortened at a word boundary."""
    one = _SPACE.sub(" ", str(text or "")).strip().replace("`", "'")
    return f"`{cut(one, limit)}`"


_QUOTED = re.compile(r"(\"|')((?:(?!\1).){4,})\1")


def spelled(command: str) -> str:
    """`git commit -m "validate: done" -m "Co-Authored…"` → `git commit -m "…" -m "…"`; a heredoc
    (already reduced to `<<'EOF' …` by `commands.clean`) keeps its shape."""
    return _QUOTED.sub(lambda m: m.group(0) if "<<" in m.group(2) else f"{m.group(1)}…{m.group(1)}", command)


def sentence(text: str, limit: int = 400) -> str:
    """The lesson within `limit` characters, whole code spans kept where possible."""
    text = _SPACE.sub(" ", text).strip()
    if len(text) <= limit:
        return text
    head = cut(text, limit - 1)
    if head.count("`") % 2:  # do not leave a code span open
        head = head[: head.rfind("`")].rstrip(" ,;:") + " …"
    return head
