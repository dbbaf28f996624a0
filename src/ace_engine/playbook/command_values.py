"""What a lesson's code names that is no command: a value, not a program to run.

`names_a_value(run, text)`: is this run, which `commands_read` could not place (its program is a
variable or a substitution), only a value named in a code span — so that `command_parts` reads no
`unplaced:` part from it? A lone variable the lesson does not set (`$XDG_CONFIG_HOME`,
`$env:GOPATH`), a place query alone that cannot print a program (`$(go env GOMODCACHE)`:
`commands_read.prints_a_place`), PowerShell's `$env:X=literal`, a GitHub Actions expression
(`${{ … }}`). Anything around it — an argument, a pipe into it, a redirection, a wrapper, being
inside a substitution — or an assignment to the variable anywhere in the lesson keeps it unplaced:
the door stays shut where what runs could be the lesson's own choice.

Why a lone variable is a value: what it would run is the environment's value, which only the user
sets, or a project environment the user trusted (mise's `[env]`, direnv's `.envrc`), which runs its
own code already; a lesson cannot choose it without assigning it, and an assignment is looked for.

Cost: a few regular expressions over one run and, for a variable, one search of the lesson's text.
"""

from __future__ import annotations

import re

from . import commands_read as cr

# A code span that is one variable — `$CI`, `${XDG_CONFIG_HOME}`, PowerShell's `$env:GOPATH` or
# `$LASTEXITCODE` — names a value, not a program to run (not a property read, `$X.Y`: it may be a
# method's call, `$X.Invoke()`; not a script's `$1`: `set --` sets it); PowerShell's
# `$env:NAME=literal` sets one; a GitHub Actions expression, `${{ … }}`, is a workflow's template,
# which no shell expands (bash: "bad substitution").
_VARIABLE = re.compile(r"\$(?:\{(?:env:)?([A-Za-z_]\w*)\}|(?:env:)?([A-Za-z_]\w*))", re.IGNORECASE)
_ENV_LITERAL = re.compile(r"\$env:[A-Za-z_]\w*\s*=\s*(?:\"[^\"$`()]*\"|'[^']*'|[^\s\"'$`();|&<>]+)", re.IGNORECASE)
_WORKFLOW_EXPRESSION = re.compile(r"\$\{\{[^{}`]*\}\}")
# Where a text may set a variable NAME: an assignment (`NAME=`, `NAME+=`, `${NAME:=…}`, PowerShell's
# `$NAME =`), or a builtin that sets what it names (`read`, `export`, `for NAME in`, `printf -v`, …) in
# a command's place (a line's, a code span's or a command's start, after a separator or a keyword:
# prose's "when it is set, on CI" is no `set CI`).
_SETS = (r"\b{name}\s*(?:\+|:)?=(?!=)|"
         r"(?:^|[`;&|(){{}}\n]|\b(?:do|then|else|while|until|if|xargs|sudo|env|command|builtin|time|nohup|exec))\s*"
         r"(?:read|export|declare|local|typeset|readonly|for|select|mapfile|readarray|getopts|printf|coproc|"
         r"set|Set-Variable|New-Variable|sv|nv)\b[^`\n;|&]*\b{name}\b")


def names_a_value(run: cr.Run, text: str) -> bool:
    """Is this unplaced run only a value named (the module docstring says which), with nothing around
    it and, for a variable, no assignment to it anywhere in `text` (`_SETS`)?"""
    if run.inputs or run.redirs or run.depth or run.wrappers or run.xargs:
        return False
    source = run.source.strip()
    if run.subs:  # `$(go env GOMODCACHE)` alone: where something is (`commands_read.prints_a_place`)
        return source == cr.SUBSTITUTION and not run.words and len(run.subs) == 1 \
            and cr.prints_a_place(run.subs[0].source)
    if _WORKFLOW_EXPRESSION.fullmatch(source) or _ENV_LITERAL.fullmatch(source):
        return True
    m = _VARIABLE.fullmatch(source)
    if run.words or not m:
        return False
    name = re.escape(m.group(1) or m.group(2))
    return re.search(_SETS.format(name=name), text, re.IGNORECASE) is None
