"""What a bootstrap scanner finds: commands and notes, and the helpers that build them.

Two shapes of finding, plain dicts (typed below for mypy):

* a command — `{"type": "command", "run": "make test", "kind": "test", "does": "pytest -q -x",
  "file": "Makefile", "where": "Makefile target `test`", "rank": 0, "source": "makefile"}`: how
  the project builds, tests, lints…; `merge_commands` (`bootstrap/__init__.py`) folds the same command found in several
  files (a Makefile target that CI also runs) into one bullet, the lowest `rank` naming it;
* a note — `{"type": "note", "key": "tsconfig", "content": "…", "section": "…",
  "files": [...], "evidence": "…"}`: a fact or convention, already phrased as a bullet.

Cost: stdlib and `observe.commands` (regular expressions) only.
"""

from __future__ import annotations

import re
from typing import Literal, TypedDict

from ..observe import commands as cmd_mod


class CommandFinding(TypedDict):
    type: Literal["command"]
    run: str
    kind: str  # test / lint / typecheck / format / build / install / run / other
    does: str | None  # what the wrapper runs underneath, shortened
    file: str
    where: str
    rank: int
    source: str  # a key of RANK


class NoteFinding(TypedDict):
    type: Literal["note"]
    key: str
    content: str
    section: str
    files: list[str]
    evidence: str


Finding = CommandFinding | NoteFinding


class Candidate(TypedDict):
    """A bullet `collect` proposes: findings merged, phrased, keyed for idempotent re-runs."""

    content: str
    section: str
    files: list[str]
    evidence: str
    key: str  # `provenance.bootstrap_key`: the same fact found again updates its bullet
    kind: str


# Lower rank wins when the same command is found in several places: a wrapper the team set up
# (Makefile, package.json scripts, task runners) is what to tell the agent to run.
RANK = {"makefile": 0, "justfile": 0, "package.json": 1, "pyproject-tasks": 1, "tox": 2, "nox": 2,
        "ci": 3, "docs": 4, "config": 5}
MAX_DOES = 140
_TARGET_KINDS = {
    "test": "test", "tests": "test", "check": "test", "unit": "test", "e2e": "test", "integration": "test",
    "lint": "lint", "format": "format", "fmt": "format", "typecheck": "typecheck", "types": "typecheck",
    "mypy": "typecheck", "build": "build", "dist": "build", "compile": "build", "install": "install",
    "setup": "install", "deps": "install", "bootstrap": "install", "venv": "install", "dev": "run",
    "run": "run", "serve": "run", "start": "run", "watch": "run", "docs": "build", "release": "other",
    "clean": "other",
}



def short(text: str, limit: int = MAX_DOES) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def kind_of(name: str, commands_text: str = "") -> str:
    """test / lint / typecheck / format / build / install / run / other for a named task."""
    found = cmd_mod.kind(commands_text) if commands_text else "other"
    if found in cmd_mod.CHECK_KINDS or found == "install":
        return found
    base = re.split(r"[:._-]", name.lower())[0]
    return _TARGET_KINDS.get(name.lower()) or _TARGET_KINDS.get(base) or ("build" if found == "build" else "other")


def command(run: str, kind: str, file: str, where: str, source: str, does: str | None = None
            ) -> CommandFinding:
    return {"type": "command", "run": short(run, 200), "kind": kind, "does": short(does) if does else None,
            "file": file, "where": where, "rank": RANK[source], "source": source}


def note(key: str, content: str, section: str, files: list[str], evidence: str) -> NoteFinding:
    return {"type": "note", "key": key, "content": content, "section": section, "files": files, "evidence": evidence}



_SCRIPT = re.compile(r"^(?:(?:ba|z)?sh[ \t]+(?:\./)?|\./)((?:[\w.-]+/)*)([\w-]+)(?:\.(?:sh|bash|py|ps1))?(?:[ \t]|$)"
                     r"|^((?:[\w.-]+/)+)([\w-]+)\.(?:sh|bash)(?:[ \t]|$)")


def command_kind(line: str) -> str:
    """`commands.kind`, plus scripts named for what they do (`bash scripts/test.sh` → test)."""
    kind = cmd_mod.kind(line)
    if kind != "other":
        return kind
    m = _SCRIPT.match(cmd_mod.key(line))
    return kind_of(m.group(2) or m.group(4)) if m else kind
