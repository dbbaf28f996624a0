"""What a failure's own words say about its cause, read by the failure lessons: a fact of the
environment (a tool, module, package or variable missing; a path git ignores; an option the tool
does not have), a task the project does not define, a tool that could not start, the rule a linter
names, a compiler's error, a complaint about layout, and the hint a tool printed.

    ENVIRONMENT, MISSING, CANNOT_START, RULE_NAME, COMPILE_ERROR, LAYOUT, BY_CONFIGURATION: regexes
    hint(step) -> " (hint: …)" or ""   the tool's own hint, not its stock "how to override me"

Each regex names what it recognises and why in a comment; they are tried on an error signature
(`observe.signatures`), at most 200 characters. Pure; no I/O.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

# An environment variable the command needs (`Missing DATABASE_URL`, `SHOP_TOKEN must be set`): the same
# next time on this machine, whatever the task, so one sighting is a lesson (like a tool's own hint).
NEEDS_VARIABLE = (r"\b(?:missing|not set)\b.{0,40}(?-i:\b[A-Z][A-Z0-9]*_[A-Z0-9_]*[A-Z0-9]\b)|"
                  r"(?-i:\b[A-Z][A-Z0-9]*_[A-Z0-9_]*[A-Z0-9]\b).{0,40}\b(?:not set|is required|must be set|"
                  r"is missing|unset)\b")
# A rule of the repository's host, not of the change: auto-merge off, a protected branch, a merge policy.
REPOSITORY_POLICY = (r"not allowed for this repository|branch policy prohibits|protected branch|"
                     r"is not mergeable|must be resolved|required status checks?")
# Failures that state a fact about the environment or the repository, not about the change.
ENVIRONMENT = re.compile(
    r"not installed|No module named|ModuleNotFoundError|command not found|not found in PATH|is not recognized as|"
    r"no such file or directory: \S*(?:bin|node_modules)/|Cannot find module '(?![./])|read-only variable|"
    r"can't create temp file|operation not permitted|Permission denied|ignored by one of your \.gitignore|"
    r"Missing script|Unknown task|No rule to make target|no such command|is not a task|unknown command|"
    r"go\.mod file not found|no required module provides|outside (?:the )?main module|not a git repository|"
    r"fetch first|requires? .{1,60} (?:as a )?(?:test )?"
    r"dependency|No such option|unrecognized arguments?|unknown (?:flag|option)|"
    r"requires (?:rustc|python|node|go|ruby|java|a newer|at least)|rust-version|unsupported engine|"
    r"(?:rustc|python|node|go|ruby|java) [\d.]+ is not supported|"
    r"is not a \w+ command|must specify a|(?:is|are) not (?:set|configured)|no credentials|"
    r"Cannot find package '(?![./])|environment variable|" + NEEDS_VARIABLE + "|" + REPOSITORY_POLICY, re.IGNORECASE)
# A script / task / target the project does not define (not a tool that is not installed).
MISSING = re.compile(r"Missing script|Unknown task|No rule to make target|is not a task|task .{1,40} "
                     r"(?:not found|does not exist|could not be found)|does not contain (?:a )?recipe|"
                     r"no task named", re.IGNORECASE)
# A tool or module the command could not find: something the project must build or install first.
CANNOT_START = re.compile(r"Could not locate executable|command not found|not found in PATH|Cannot find module|"
                          r"ENOENT|spawn \S+ ENOENT", re.IGNORECASE)
_HINT = re.compile(r"^\s*(?:(?:hint|Hint|HINT|help):\s+|Did you mean\s+)(.{8,140}?)\s*$", re.MULTILINE)
# A linter names the rule it enforces: `(errcheck)`, `F401`, `[D]`, `(no-unused-vars)`, `(react/no-danger)`;
# a type checker's `(typecheck)` is a compile error, not a rule.
RULE_NAME = re.compile(r"\((?!typecheck\))[a-z][\w-]*(?:/[\w-]+)?\)$|\b[A-Z]{1,4}\d{2,4}\b|^\[[A-Z]\] ")
# What a compiler says, whoever ran it: not a linter's rule.
COMPILE_ERROR = re.compile(r"undefined: |not enough arguments|too many arguments|cannot use |imported and not used|"
                           r"has no field or method|declared and not used|syntax error|cannot find (?:symbol|name)")
# A tool's stock hint that tells how to override it, not how the project wants it done: git's "Use -f if
# you really want to add them" under an ignored path is how build output ends up committed.
_OVERRIDE_HINT = re.compile(r"\bif you really want\b|\bgit config advice\.|to turn off this advice", re.IGNORECASE)
# A linter's complaint about layout, which a formatter run fixes (else the formatter was other work).
LAYOUT = re.compile(r"format|whitespace|indent|line (?:is )?too long|line length|trailing|blank line|newline|"
                    r"spacing|import(?:s)? (?:are |is )?(?:not )?(?:sorted|ordered)|\[F\]|"
                    r"\bE[1-3]\d\d\b|\bW[23]\d\d\b", re.IGNORECASE)
BY_CONFIGURATION = re.compile(r"ignored by one of your \.gitignore|is beyond a symbolic link|is outside repository|"
                              + NEEDS_VARIABLE, re.IGNORECASE)


def hint(step: Mapping[str, Any]) -> str:
    """The hint the failing tool printed (`hint: …`, `Did you mean …`), unless it only says how to override."""
    m = _HINT.search(step.get("output") or "")
    return f" (hint: {m.group(1).rstrip('.')})" if m and not _OVERRIDE_HINT.search(m.group(1)) else ""
