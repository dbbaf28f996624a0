"""Where a learned lesson's risky parts came from: the learner's half of the provenance rule.

`playbook/provenance.py` holds the rule (a risky part — a named package, remote code, a host, a
permission — whose origin is foreign waits for `ace review`); this module computes the origins
for what the learner writes. For each risky part of a lesson, its needle (the package, host…) is
looked for, folded like the safety policy folds text:

1. in a prompt the user typed (real user prompts only: `observe/transcript.py` keeps tool
   results, injected context, reminders and other non-user entries out of them), or in the words
   they typed when they stopped a call (only where Claude Code wrote the refusal:
   `corrections.typed_refusal`) → `user`;
2. in the project's own files (`PROJECT_FILES`: package.json, Makefile, mix.exs, pyproject.toml,
   each ecosystem's manifest, tool versions, CI configuration, README, CLAUDE.md…, and the same of its
   workspace members; regular files only, capped) → `project`;
3. else along the session up to this turn, in order (`evidence`: the turns before it, up to
   `EVIDENCE_KEPT` events, then its own): the text the agent wrote itself (its commands, what it
   edited) against the text someone else wrote (tool output, file contents read, non-user
   transcript text, the turn before's failures). Seen in someone else's text
   before the agent first used it → `foreign` (a command the agent ran because a tool output told
   it to); the agent's first use after an output that was cut (the part may sit in the cut) →
   `foreign`; else `agent`. Never used and never seen: the reflector's own words → `agent`,
   unless some output was cut (→ `foreign`). A record the hook dropped (over the stdin cap, out of
   budget: `redact.sanitize.DROPPED`) marks the session's evidence incomplete: every part that would
   be `agent` is `foreign` (fail closed).

`Attribution(trajectory, root)` is callable: `content → {part: origin}`; `learning/pipeline.py`
hands it to the playbook (`Playbook.attribution`) while the curator writes that trajectory's
lessons, and the playbook records it in `provenance["origins"]`.

Cost: the evidence is built once per trajectory (each event's text folded on first use: linear in
the captured text, which capture caps); the project files are read once per `Attribution` (a dozen
small files); a lesson without risky parts costs one `risky_parts` call.
"""

from __future__ import annotations

import glob
import json
import os
import re
from typing import TYPE_CHECKING, Any

from ..playbook import provenance as rule
from ..redact.sanitize import CUT_MARKS, DROPPED
from .corrections import refusal_words, unquoted

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping

    from ..core._types import Trajectory, TrajectoryStep

# The project's own files: what the project runs anyway (scripts, targets, aliases, CI), what it
# declares it needs (each ecosystem's manifest, its tool versions), and what it tells contributors and
# their agents to run (README, CLAUDE.md, AGENTS.md: the agent reads them in this project anyway). Globs
# relative to the project root.
PROJECT_FILES = (
    "package.json", "Makefile", "makefile", "GNUmakefile", "justfile", "Justfile", "Taskfile.yml", "Taskfile.yaml",
    "mix.exs", "pyproject.toml", "tox.ini", "setup.cfg", "setup.py", "noxfile.py", "Pipfile", "environment.yml",
    "Cargo.toml", "go.mod", "Gemfile", "deno.json", "composer.json", "pubspec.yaml", "Package.swift", "Podfile",
    "build.gradle", "build.gradle.kts", "settings.gradle", "settings.gradle.kts", "pom.xml", "*.csproj",
    "Directory.Packages.props", "global.json", "CMakeLists.txt", "vcpkg.json", "flake.nix", "Brewfile",
    "mise.toml", ".mise.toml", ".tool-versions", "Dockerfile", "docker-compose.yml", "docker-compose.yaml",
    "compose.yml", "compose.yaml", "requirements*.txt", ".pre-commit-config.yaml", ".github/workflows/*.yml",
    ".github/workflows/*.yaml", ".gitlab-ci.yml", ".circleci/config.yml", "README", "README.*", "CONTRIBUTING.md",
    "CLAUDE.md", "AGENTS.md",
)
PROJECT_FILE_BYTES = 256 * 1024  # a larger file is read up to this
# A workspace's members have their own manifests and READMEs (`packages/cli/package.json`, `web/README.md`,
# `crates/x/Cargo.toml`): what they declare or tell contributors to run is the project's too. Looked for
# one and two folders down, never in installed or built trees (a dependency's manifest names what it
# needs, not what the project runs), at most this many folders visited and manifests read.
MEMBER_MANIFESTS = frozenset(("package.json", "Cargo.toml", "go.mod", "pyproject.toml", "mix.exs", "Makefile",
                              "deno.json", "justfile", "composer.json", "pubspec.yaml", "Package.swift", "Podfile",
                              "build.gradle", "build.gradle.kts", "pom.xml", "Dockerfile", "mise.toml",
                              "README.md", "CLAUDE.md", "AGENTS.md"))
NOT_MEMBERS = frozenset(("node_modules", "vendor", "target", "dist", "build", "deps", "_build", "venv", "env",
                         "site-packages", "__pycache__"))
MEMBER_DIRS_VISITED = 400
MEMBER_MANIFESTS_READ = 64
FOREIGN_KEPT = 200  # non-user transcript texts kept per agent
EVIDENCE_KEPT = 400  # events of the session before a turn that its origins still consider


def kept(evidence: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The session's evidence cut to its last `EVIDENCE_KEPT` items. What was dropped may have
    named a package the agent uses later: the first item kept says so (`cut`), and a first use after
    a cut counts as foreign, as after an output capture had to cut."""
    if len(evidence) <= EVIDENCE_KEPT:
        return evidence
    out = evidence[-EVIDENCE_KEPT:]
    return [{**out[0], "cut": True}, *out[1:]]


def _cut(seen: str) -> bool:
    """Was part of this output dropped (capture's `[ace: … cut]` marks, or the whole record)?"""
    return any(mark in seen for mark in CUT_MARKS)


def _dropped(seen: str) -> bool:
    """Is this the record of a call the hook could not keep (`redact.sanitize.DROPPED`)?"""
    return seen.lstrip().startswith(DROPPED)


def _text(value: object) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    try:
        return json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        return str(value)


def from_events(events: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The evidence of a turn's tool events (captured rows or parsed transcript pairs), in order:
    per event, what the agent wrote (`use`: its input) and what came back (`seen`: the response or
    error, as captured) and whether that was cut (`cut`)."""
    out = []
    for event in events:
        seen = _text(event.get("response")) + "\n" + _text(event.get("error"))
        out.append({"use": _text(event.get("input")), "seen": seen, "cut": _cut(seen), "dropped": _dropped(seen),
                    "at": event.get("created_at")})
    return out


def from_steps(steps: Iterable[TrajectoryStep]) -> list[dict[str, Any]]:
    """The evidence of steps that came without their events (a plugin payload, the turn before)."""
    out = []
    for step in steps:
        facts: Mapping[str, Any] = step
        seen = "\n".join(str(facts.get(k) or "") for k in ("output", "result", "error"))
        out.append({"use": str(step.get("command") or step.get("action") or ""), "seen": seen,
                    "cut": _cut(seen), "dropped": _dropped(seen)})
    return out


def foreign(texts: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Evidence of text someone else wrote ({text, at}: non-user transcript entries, a teammate's
    message, a subagent's prompt)."""
    return [{"use": "", "seen": str(t.get("text") or ""), "cut": False, "at": t.get("at")}
            for t in list(texts)[:FOREIGN_KEPT] if t.get("text")]


def in_order(*evidence: Iterable[dict[str, Any]], until: float | None = None) -> list[dict[str, Any]]:
    """Evidence from several sources merged by time (`at`; stable), without what came after `until`."""
    items = [e for group in evidence for e in group]
    if until is not None:
        items = [e for e in items if e.get("at") is None or e["at"] <= until]
    return sorted(items, key=lambda e: e.get("at") or 0.0)


def _members(root: str) -> list[str]:
    """The manifests of the workspace's members (`MEMBER_MANIFESTS`, one and two folders down),
    bounded (`MEMBER_DIRS_VISITED`, `MEMBER_MANIFESTS_READ`); no symlinked folder is entered."""
    found: list[str] = []
    visited = 0
    level = [root]
    for _depth in (1, 2):
        below: list[str] = []
        for folder in level:
            try:
                entries = sorted(os.scandir(folder), key=lambda e: e.name)
            except OSError:
                continue
            for entry in entries:
                if entry.name.startswith(".") or entry.name in NOT_MEMBERS or not entry.is_dir(follow_symlinks=False):
                    continue
                visited += 1
                if visited > MEMBER_DIRS_VISITED:
                    return found
                below.append(entry.path)
                found += [os.path.join(entry.path, name) for name in sorted(MEMBER_MANIFESTS)
                          if os.path.isfile(os.path.join(entry.path, name))]
                if len(found) >= MEMBER_MANIFESTS_READ:
                    return found[:MEMBER_MANIFESTS_READ]
        level = below
    return found


def project_text(root: str | None) -> str:
    """The project's own files (`PROJECT_FILES`, and its workspace members' manifests: `_members`),
    folded; "" without a root. Regular files only (a symlink may point anywhere, a FIFO would block)."""
    if not root or not os.path.isdir(root):
        return ""
    parts = []
    seen: set[str] = set()
    paths = [p for pattern in PROJECT_FILES for p in sorted(glob.glob(os.path.join(glob.escape(root), pattern)))]
    for path in paths + _members(root):
        if path in seen or os.path.islink(path) or not os.path.isfile(path):
            continue
        seen.add(path)
        try:
            with open(path, "rb") as fh:
                parts.append(fh.read(PROJECT_FILE_BYTES).decode("utf-8", "replace"))
        except OSError:
            continue
    return rule.fold("\n".join(parts)) if parts else ""


def _found(needle: str, text: str) -> bool:
    """Is `needle` in `text` as a whole name (`tsc` is not in `tsconfig`)?"""
    return re.search(r"(?<![\w-])" + re.escape(needle) + r"(?![\w-])", text) is not None


_PERCENT = re.compile(r"%([0-9a-fA-F]{2})")
_JSON_ESCAPE = re.compile(r"\\u([0-9a-fA-F]{4})")
_SOFT = re.compile("[\u00ad\u200b-\u200d\u2060\ufeff]")


def _readings(seen: str) -> str:
    """Someone else's text as a reader may read it, beside the folded text itself: `%2D` and
    `\\u002d` decoded, soft hyphens dropped, and a name wrapped over two lines joined. A needle found in
    any reading taints (the safe direction: a lesson waits for review)."""
    decoded = _SOFT.sub("", _JSON_ESCAPE.sub(lambda m: chr(int(m.group(1), 16)),
                                             _PERCENT.sub(lambda m: chr(int(m.group(1), 16)), seen)))
    joined = re.sub(r"-[ \t]*\r?\n\s*", "-", decoded)
    # Most output has nothing to decode: one fold, as before.
    return "\n".join(rule.fold(t) for t in dict.fromkeys((seen, decoded, joined)))


class Attribution:
    """`content → {risky part: origin}` for the lessons of one trajectory (module docstring)."""

    def __init__(self, prompts: Iterable[str], evidence: Iterable[Mapping[str, Any]], project: str = "") -> None:
        prompts = list(prompts)
        # What the user typed, without what the prompts quote (pasted output is someone else's text).
        self._prompts = rule.fold("\n".join(unquoted(str(p)) for p in prompts))
        quoted = [{"use": "", "seen": str(p), "cut": False} for p in prompts if unquoted(str(p)) != str(p)]
        self._evidence = quoted + list(evidence)
        # A record the hook dropped (time, size): the session's evidence is incomplete, and nothing
        # learned from it is more trusted than someone else's text (fail closed).
        self._incomplete = next((item for item in self._evidence if item.get("dropped")), None)
        self._folded: dict[int, tuple[str, str]] = {}
        self._project = project
        self._cache: dict[str, str] = {}
        self.notes: dict[str, str] = {}  # part → where a foreign part was first seen, for `ace review`

    @classmethod
    def of(cls, trajectory: Trajectory, root: str | None) -> Attribution:
        """The attribution of a trajectory: its evidence (`origin_evidence`, else built from its
        steps), the failures carried from the turn before, the project's files under `root`."""
        evidence = list(trajectory.get("origin_evidence") or from_steps(trajectory.get("trajectory") or []))
        before = from_steps(trajectory.get("carried") or [])
        for item in before:
            item["use"] = ""  # the turn before: only what it showed counts (it came before this turn)
        # A subagent's prompts are its parent agent's words (and may relay a tool's text): not the user's.
        prompts = [] if trajectory.get("agent_id") else list(trajectory.get("prompts") or [])
        if not trajectory.get("agent_id"):  # what the user typed when they stopped a call is theirs too
            prompts += [w for s in trajectory.get("trajectory") or [] if (w := refusal_words(s.get("said")))]
        if trajectory.get("agent_id"):
            before += foreign({"text": p} for p in trajectory.get("prompts") or [])
        return cls(prompts, before + evidence, project_text(root))

    def _item(self, i: int) -> tuple[str, str]:
        if i not in self._folded:
            item = self._evidence[i]
            seen = str(item.get("seen") or "")
            self._folded[i] = (rule.fold(str(item.get("use") or "")), _readings(seen) if seen else "")
        return self._folded[i]

    def origin(self, part: str) -> str:
        if part not in self._cache:
            self._cache[part], where = self._origin(rule.needle(part))
            if where:
                self.notes[part] = where
        return self._cache[part]

    def _origin(self, needle: str) -> tuple[str, str | None]:
        """(origin, where a foreign one was first seen)."""
        if not needle:
            return "foreign", None
        if _found(needle, self._prompts):
            return "user", None
        if self._project and _found(needle, self._project):
            return "project", None
        tainted: str | None = None
        cut: str | None = None
        if self._incomplete is not None:
            said = str(self._incomplete.get("seen") or "").strip().splitlines()[0][len(DROPPED):].strip(" :]")
            cut = f"the session's evidence is incomplete: a tool's record was dropped ({said[:120]})"
        for i, item in enumerate(self._evidence):
            use, seen = self._item(i)
            if _found(needle, use):
                return ("foreign", tainted or cut) if tainted or cut else ("agent", None)
            if tainted is None and _found(needle, seen):
                tainted = self._where(item)
            if cut is None and item.get("cut"):
                cut = f"the agent used it after {self._where(item)}, which capture had to cut"
        return ("foreign", tainted or cut) if tainted or cut else ("agent", None)

    @staticmethod
    def _where(item: Mapping[str, Any]) -> str:
        use = " ".join(str(item.get("use") or "").split())
        if not use:
            return "text that is not the user's (a transcript entry, a teammate's or parent agent's message)"
        try:
            data = json.loads(use)
        except ValueError:
            data = None
        if isinstance(data, dict):
            use = str(data.get("command") or data.get("file_path") or data.get("url") or use)
        return f"the output of `{use[:80]}`"

    def __call__(self, content: str) -> dict[str, str]:
        return {part: self.origin(part) for part in rule.risky_parts(content)}
