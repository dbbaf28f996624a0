"""The command reader (`shell_tokens`, `command_spans`, `commands_read`, `command_parts`) costs linear
time on any text and never raises — it reads lessons from someone else, and the screens it feeds must stay linear
(issue 20's rule, issue 35's reader).

No timing: as in test_policy_linear.py, the property is checked without a clock. Here the reader's
own Python work is counted (line events in its three modules, with `sys.settrace`) on adversarial
texts of two sizes: a linear reader does about 4x the work on a 4x longer text, a quadratic one 16x.
The regexes the reader runs are written so that a match starts only where a word starts (their
look-behinds) and never rescans a run; bench/redaction_bench.py times `risky_parts` on the same
shapes up to 1 MB.
"""

from __future__ import annotations

import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ace_engine.playbook import (
    command_parts,
    command_spans,
    command_vocab,
    commands_read,
    provenance,
    safety,
    shell_tokens,
)
from conftest import examples


def rep(unit: str):
    return lambda n: (unit * (n // len(unit) + 1))[:n]


ADVERSARIAL = {
    "$( run": rep("$("), "$(( run": rep("$(("), "<( run": rep("<("), "${ run": rep("${"), "backticks": rep("`"),
    "single quotes": rep("'"), "double quotes": rep('"'), "mixed quotes": rep("\"'`"), "backslashes": rep("\\"),
    "parens": rep("(("), "closing parens": rep("))"), "tildes": rep("~"), "slashes": rep("a/"), "one word": rep("a"),
    "env chain": rep("env "), "sh -c chain": rep("sh -c "), "quoted sh -c": rep("sh -c '"),
    "nested sh -c": rep('bash -c "$('), "xargs chain": rep("xargs "), "sudo -u chain": rep("sudo -u x "),
    "assignments": rep("a=b "), "variable reuse": lambda n: ("X=" + "c" * 150 + "; ") + ("$X; " * n)[:n],
    "pipes": rep("| "), "curl pipes": rep("curl x | "), "separators": rep("; "), "fences": rep("```\n"),
    "code spans": rep("`npx a` "), "prose commands": rep("npm, "), "terminators": rep("-- "),
    "npx flags": lambda n: ("npx " + "-y " * n)[:n], "schemes": rep("https://"), "url word": rep("a+b.c-"),
    "downloads": rep("download x.sh then bash x.sh "), "shell vars": rep("$SHELL "), "redirects": rep(">> "),
    "here strings": rep("<<< "), "comments": rep("# x\n"), "newlines": rep("\n"), "dollar names": rep("$a"),
    # One long word, bare, quoted, in a code span: its text is joined once, never grown by `+=` (that
    # was quadratic in the word's length, a cost line events cannot see: bench/redaction_bench.py times it).
    "long word": lambda n: "npx " + "a" * n, "long quoted word": lambda n: 'npx "' + "a" * n + '"',
    "long code span": lambda n: "`" + "a" * n + "`",
}


def work(text: str) -> int:
    """Line events the reader runs for `text` (its own Python work, clock-free)."""
    files = {m.__file__ for m in (shell_tokens, command_spans, commands_read, command_parts, command_vocab)}
    count = 0

    def local(frame, event, arg):
        nonlocal count
        if event == "line":
            count += 1
        return local

    def tracer(frame, event, arg):
        return local if frame.f_code.co_filename in files else None

    old = sys.gettrace()
    sys.settrace(tracer)
    try:
        command_parts.parts(text)
    finally:
        sys.settrace(old)
    return count


@pytest.mark.parametrize("name", list(ADVERSARIAL))
def test_the_reader_does_linear_work(name):
    make = ADVERSARIAL[name]
    small, large = work(make(400)), work(make(1600))
    assert large <= 5 * max(small, 50), f"{name}: {small} → {large} line events for 4x the text"


@pytest.mark.parametrize("name", list(ADVERSARIAL))
def test_the_screens_read_adversarial_text_without_raising(name):
    text = ADVERSARIAL[name](1500)
    assert isinstance(provenance.risky_parts(text), list)
    assert isinstance(safety.concerns(text), list)


@settings(max_examples=examples(300), deadline=None)
@given(st.lists(st.sampled_from(list("ab $()`'\"\\|;&<>{}=-~/\n.:#!*") + ["sh -c ", "curl ", "npx ", "env ", "| sh"]),
                max_size=200).map("".join))
def test_the_reader_never_raises(text):
    shell_tokens.tokens(text)
    command_parts.parts(text)
    provenance.risky_parts(text)
