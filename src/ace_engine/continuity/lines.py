"""A session summary as plain lines, most important first, each field through the trust rule.

`lines(summary, fields)` renders what `summarize.build` found: what was asked, what is left open,
then what was done — the lines `<ace-recent-context>`, `ace recent` and `ace session` show. Each
field goes through `trust.Fields` by its origin: the user's requests as they are; the agent's last
words, what tools printed and commit subjects as quotations after who said or printed them; the
commands the agent ran with their risky parts attributed; file names as names. A field that fails
the rule is left out of its line (and counted in `fields.withheld`); a line left with nothing to
say is not written. No escaping here: every view escapes for its medium.

Cost: the trust rule per field (the safety policy and the provenance patterns, ~0.3 ms each).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from ..core.escape import quoted
from . import facts, label
from .trust import Fields

MAX_FILES_SHOWN = 6
CHECK_NAMES = {"test": "tests", "lint": "lint", "typecheck": "type check", "build": "build", "format": "format"}


def _files_line(files: list[dict[str, Any]], fields: Fields) -> str | None:
    shown = []
    for f in files[:MAX_FILES_SHOWN]:
        path = fields.name(str(f.get("path") or ""))
        if path is None:
            continue
        path = quoted(path, 120) if any(c.isspace() for c in path) else path
        times = f" ×{f['edits']}" if f["change"] == "edited" and f["edits"] > 1 else ""
        shown.append(f"{path} ({f['change']}{times})")
    more = f" and {len(files) - MAX_FILES_SHOWN} more" if len(files) > MAX_FILES_SHOWN else ""
    return f"{label('changed')} " + ", ".join(shown) + more if shown else None


def _names(paths: list[str], fields: Fields) -> list[str]:
    out = []
    for path in paths:
        name = fields.name(path)
        if name is not None:
            out.append(quoted(name, 120) if any(c.isspace() for c in name) else name)
    return out


def _command(command: object, fields: Fields) -> str | None:
    """A command the agent ran, in backticks: the agent's choice, maybe someone else's text."""
    text = fields.ran(str(command or ""))
    return f"`{text.replace('`', chr(39))}`" if text else None


def _ran(f: Mapping[str, Any], fields: Fields) -> str | None:
    command = _command(f.get("command"), fields)
    if command is None:
        return None
    error = fields.said(str(f.get("error") or ""), "tool", 160)
    return f"{command} (it printed {error})" if error else command


def lines(summary: Mapping[str, Any], fields: Fields | None = None) -> list[str]:
    """The summary as plain lines, most important first (see the module docstring); pass `fields`
    to give the trust rule its hosts and attribution, and to learn how many fields were withheld."""
    fields = fields if fields is not None else Fields()
    out: list[str] = []
    main = fields.user(summary.get("main_request"))
    last = fields.user(summary.get("last_request"))
    if main:
        out.append(f"{label('asked')} {main}")
    if last and last != main:
        out.append(f"{label('last')} {last}")
    for end in summary.get("open") or []:
        kind, text = end.get("kind"), str(end.get("text") or "")
        if kind == "interrupted":
            step = fields.ran(text)
            out.append(f"{label('interrupted')} (last step: {step})" if step else label("interrupted"))
        elif kind == "stopped":
            said = fields.said(text, "agent", facts.ITEM_CHARS)
            if said:
                out.append(f"{label('stopped')} the agent said {said}")
        elif kind == "failing":
            name = CHECK_NAMES.get(str(end.get("check")), str(end.get("check")))
            command = _command(text, fields)
            printed = fields.said(str(end.get("error") or ""), "tool", 160)
            line = f"{label('failing')} {name}" + (f" {command}" if command else "")
            out.append(line + (f" — it printed {printed}" if printed else ""))
        elif kind == "waiting":
            said = fields.said(text, "agent", facts.ITEM_CHARS)
            if said:
                out.append(f"{label('waiting')} the agent asked {said}")
        elif kind == "next":
            said = fields.said(text, "agent", facts.ITEM_CHARS)
            if said:
                out.append(f"{label('next')} {said}")
        elif kind == "user":
            said = fields.user(text)
            if said:
                out.append(f"{label('user')} {said}")
        elif kind == "uncommitted":
            names = _names([p.strip() for p in text.split(", ")], fields)
            more = f" and {end['more']} more" if end.get("more") not in (None, "0") else ""
            if names:
                out.append(f"{label('uncommitted')} {', '.join(names)}{more}")
    narrative = fields.said(str(summary.get("narrative") or ""), "agent", 400)
    if narrative:
        out.append(f"{label('narrative')} the model wrote {narrative}")
    files = list(summary.get("files") or [])
    changed = _files_line(files, fields) if files else None
    if changed:
        out.append(changed)
    gitfacts = summary.get("git") or {}
    done = []
    for c in (gitfacts.get("commits") or [])[-3:]:
        sha = re.sub(r"[^0-9a-f]", "", str(c.get("sha") or "").lower())[:7]
        subject = fields.said(str(c.get("subject") or ""), "repo", 100)
        if subject or sha:
            done.append(f"{sha} {subject or ''}".strip())
    if gitfacts.get("pushed"):
        done.append("pushed")
    pr = gitfacts.get("pr")
    if pr and (pr == "created" or fields.plain(str(pr), "tool")):
        done.append(f"pull request {pr}")
    if done:
        out.append(f"{label('commits')} " + "; ".join(done))
    passed = []
    for k, c in (summary.get("checks") or {}).items():
        command = _command(c.get("command"), fields) if c.get("passed") else None
        if command:
            result = fields.said(str(c.get("result") or ""), "tool", 100) if c.get("result") not in ("", "ok") else None
            passed.append(f"{CHECK_NAMES.get(k, k)} {command}" + (f" (it printed {result})" if result else ""))
    if passed:
        out.append(f"{label('passed')} " + "; ".join(passed[:2]))
    fixed = [r for r in (_ran(f, fields) for f in summary.get("failures") or [] if f.get("fixed")) if r]
    if fixed:
        out.append(f"{label('fixed')} " + "; ".join(fixed[:2]))
    failing = {str(e.get("text")) for e in summary.get("open") or [] if e.get("kind") == "failing"}
    unfixed = [r for r in (_ran(f, fields) for f in summary.get("failures") or []
                           if not f.get("fixed") and f["command"] not in failing) if r]
    if unfixed:
        out.append(f"{label('unfixed')} " + "; ".join(unfixed[:2]))
    others = [r for r in (fields.user(r) for r in summary.get("requests") or [] if r not in (main, last)) if r]
    if others:
        out.append(f"{label('also')} " + " · ".join(facts.cut(r, 80) for r in others[:3]))
    return [_closed(facts.cut(line, 320)) for line in out]


def _closed(line: str) -> str:
    """A line cut inside a quotation gets its closing quote back (a quotation holds no `"`)."""
    return line + '"' if line.count('"') % 2 else line
