"""Episodes: a check that failed, what changed, and the run that got past it — with the change
attributed only where the evidence supports it.

    find(steps, root) -> (episodes, unresolved)
        episode = {"fails": [steps], "passed": step, "fixes": [steps], "signature", "self_inflicted",
                   "throwaway", "variant"}
        unresolved = failed steps no later run got past

What counts (each rule is a defect seen on real sessions, see tests/test_learning_episodes.py):
- only real failures: a call Claude Code cancelled ("Sibling tool call errored"), one the user
  refused, or an Edit the tool rejected is not a failed command;
- a later run proves a fix only if it covers the failure: the same check on the same targets, or
  the project-wide form of it (`mix test` covers `mix test a_test.exs`; `mypy b.py` does not cover
  `mypy a.py`); a one-off script only by running again;
- consecutive failures of one goal are one episode, and its signature is the most telling one
  among them (the first `tsc: command not found`, not the last `Exit code 127`);
- a fix is a change between the last failure and the pass: a successful edit or a state-changing
  command — never an edit of the one-off script being run (deleting the failing part of your own
  repro proves nothing), never an edit that only deletes lines of a test file, never another check;
  when the failure's output names files, edits to those files (and to configuration) are preferred;
- self-inflicted: the failure is in code this task had edited before it failed (a typo, a missing
  import after a refactor). Worth knowing as a convention when a linter or formatter says so; a
  compile error in one's own fresh code is not a lesson for the next session.
Cost: linear in the steps of one task, a few regexes per step.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping, Sequence
from typing import Any, TypedDict

from ..observe import commands
from ..observe.commands import and_parts as _and_parts
from ..observe.commands import covers
from ..observe.commands import targets as _targets

Step = Mapping[str, Any]

CONFIG_FILE = re.compile(
    r"(?:^|/)(?:mix\.exs|config/[\w.-]+\.exs|package\.json|tsconfig[\w.-]*\.json|pyproject\.toml|setup\.cfg|"
    r"setup\.py|requirements[\w.-]*\.txt|tox\.ini|go\.mod|Cargo\.toml|Gemfile|\.rubocop\.yml|pom\.xml|"
    r"build\.gradle(?:\.kts)?|pubspec\.yaml|Makefile|Dockerfile|docker-compose[\w.-]*\.ya?ml|\.env[\w.-]*|"
    r"[\w.-]*\.config\.[cm]?[jt]s|\.eslintrc[\w.]*|\.prettierrc[\w.]*|\.golangci\.ya?ml|\.credo\.exs|"
    r"\.pre-commit-config\.yaml|\.markdownlint[\w.-]*|[\w.-]*\.toml|[\w.-]*\.ini|[\w.-]*\.cfg)$")
_TEST_FILE = re.compile(r"(?:^|/)(?:tests?|spec|__tests__)/|(?:^|/)test_[^/]*$|_test\.\w+$|_spec\.\w+$|"
                        r"\.(?:test|spec)\.[jt]sx?$|Test\.(?:java|kt)$")
# Commands that never fix anything: moving around, looking, cleaning up scratch files.
_NOT_A_FIX = re.compile(r"^(?:cd|ls|cat|echo|printf|sleep|rm|mkdir -p /tmp|true|clear|pwd|which|source)\b|"
                        r"^gh (?:api(?!.*\s(?:-X|--method)\s*(?:POST|PUT|PATCH|DELETE))|pr (?:view|list|checks|diff)|"
                        r"run (?:view|list|watch)|issue (?:view|list)|repo view)\b")
# A check that changes files: a formatter (`commands.kind` says "format"), or a linter told to fix.
_FIXING_FLAG = re.compile(r"\s--fix\b|\s--write\b|\s-w\b|\s-a\b|\s--autocorrect\b")
# `cmd || echo failed`, `cmd || true`: exits 0 whatever `cmd` did, so its success proves nothing.
_MASKED = re.compile(r"\|\|\s*(?:true|:|echo|printf|exit 0)\b")
# A signature that only says something failed, not what.
_GENERIC_SIG = re.compile(r"^(?:Exit code|exit status|FAIL(?:ED)?\b|error$|Error$)|exited with code \d+$")


class Episode(TypedDict):
    fails: list[Step]
    passed: Step
    fixes: list[Step]
    signature: str | None
    self_inflicted: bool
    throwaway: bool
    variant: bool  # got past it by running a different command, nothing else changed


def real_failure(step: Step) -> bool:
    return not step["success"] and step.get("failure", "failed") == "failed" and not step.get("interrupted")


def created_files(steps: Sequence[Step]) -> set[str]:
    """Files this task created (Write on a path not read or edited before) or put in a temp dir."""
    seen: set[str] = set()
    created: set[str] = set()
    for step in steps:
        for path in step.get("files") or []:
            if step.get("tool") == "Write" and path not in seen:
                created.add(path)
            seen.add(path)
    return created


def throwaway(step: Step, created: set[str]) -> bool:
    """A one-off script run: a file this task created, a temp file, inline code (`commands.is_throwaway`)."""
    return commands.is_throwaway(step.get("command") or "", frozenset(created))


def _mentions(output: str, path: str) -> bool:
    name = os.path.basename(path)
    return bool(name) and (path in output or re.search(r"(?<![\w.-])" + re.escape(name) + r"\b", output) is not None)


# A package, module or target a command names: `@scope/pkg`, `pkg-name`, `mod.sub`, `//pkg:target`.
_TARGET_NAME = re.compile(r"@[\w.-]+/[\w.-]+|[A-Za-z][\w]*(?:[-.:][\w]+)+|//[\w/.-]+:[\w.-]+")


def names_a_run(output: str, runs: Sequence[Step]) -> bool:
    """Does the failure's output name one of these commands (`Run 'mix deps.get'`, `try npm install`):
    the tool and its subcommand, as the tool itself would tell the user to type them — or a package
    one of them installed (`vitest` for `Runner @cloudflare/vitest-pool-workers is not supported`)?"""
    for run in runs:
        typed = commands.key(run.get("command") or "").split()
        words = [w for w in typed if not w.startswith("-")]
        # Options may stand between the tool and what it runs, as typed (`npx -y pkg@latest`).
        named = [f"{re.escape(words[0])}(?:\\s+-\\S+)*\\s+{re.escape(words[1])}"] if len(words) > 1 else []
        if run.get("kind") == "install":  # `bun add -d vitest@3.2` names vitest
            named += [re.escape(n) for w in words[2:] if len(n := re.sub(r"(?<=.)@.*$|[<>=~^].*$", "", w)) > 2]
        # What the run works on, where the failure names it: `bun run build --filter=@acme/core` for
        # `Cannot find module '@acme/core'` (a package, a module, a target: never a bare path or word).
        values = [w.split("=", 1)[1] if w.startswith("-") and "=" in w else w for w in typed[2:]]
        named += [re.escape(v) for v in values if _TARGET_NAME.fullmatch(v)]
        if any(re.search(rf"(?<![\w-]){n}(?![\w])", output) for n in named):
            return True
    return False


def _fixes(first: Step, fail: Step, passed: Step, steps: Sequence[Step], created: set[str], scripts: set[str]
           ) -> list[Step]:
    """Edits since the first failure of the streak (an edit that did not suffice alone may still be
    part of the fix); commands since the last failure (one that ran before it did not help)."""
    edits = []
    for s in steps:
        if not first["step"] < s["step"] < passed["step"]:
            continue
        if s.get("kind") != "edit" or not s["success"]:
            continue
        files = s.get("files") or []
        if any(f in scripts or f.startswith("/tmp/") for f in files):
            continue  # the one-off script itself
        change = s.get("_change")
        if change and change.get("deleted_only") and any(_TEST_FILE.search(f) for f in files):
            continue  # deleting the failing test is not a fix
        edits.append(s)
    output = fail.get("output") or ""
    named = [s for s in edits if any(_mentions(output, f) or CONFIG_FILE.search(f) for f in s.get("files") or [])]
    if named:
        edits = named
    runs = [s for s in steps if fail["step"] < s["step"] < passed["step"]
            and s.get("command") and s["success"] and s.get("kind") != "readonly"
            and not _NOT_A_FIX.match(commands.key(s["command"])) and not throwaway(s, created)
            and not covers(s["command"], fail["command"])
            and (s.get("kind") not in commands.CHECK_KINDS or s.get("kind") == "format"
                 # a build before a test or lint (a workspace package the check imports) is a step it needs
                 or (s.get("kind") == "build" and fail.get("kind") != "build")
                 or _FIXING_FLAG.search(commands.key(s["command"])))]
    return sorted(edits + runs, key=lambda s: s["step"])


def _telling(fails: Sequence[Step]) -> str | None:
    """The most informative signature of a streak of failures (not an exit code, not a summary)."""
    sigs = [str(f["error"]) for f in fails if f.get("error")]
    good = [s for s in sigs if not _GENERIC_SIG.search(s)]
    return good[0] if good else None


_MISSING_TOOL = re.compile(r"(?P<tool>[\w.-]+): (?:command )?not found|command not found: (?P<t2>[\w.-]+)|"
                           r"no such command: '?(?P<t3>[\w.-]+)")
_CANNOT_RUN = re.compile(r"not found|not installed|No module named|not recognized|Could not locate executable|"
                         r"no such file or directory|unknown command|is not a \w+ command", re.IGNORECASE)
_EXCEPTION = re.compile(r"^(?:[\w.]+\.)?[A-Z]\w*(?:Error|Exception)\b")


def _soft_failures(runs: Sequence[Step], created: set[str]) -> list[Step]:
    """A one-off script that exits 0 but prints the exception it reproduces ("AssertionError: …")
    failed as far as the task is concerned: the same script printing no such error later is the fix."""
    out: list[Step] = []
    for s in runs:
        if s["success"] and throwaway(s, created) and s.get("output"):
            sig = commands.error_signature(s["output"])
            if sig and _EXCEPTION.match(sig):
                s = {**s, "success": False, "failure": "failed", "error": sig}
        out.append(s)
    return out


def find(steps: Sequence[Step]) -> tuple[list[Episode], list[Step]]:
    created = created_files(steps)
    runs = _soft_failures([s for s in steps if s.get("command") and s.get("kind") != "readonly"
                           and (s["success"] or real_failure(s))], created)
    scripts = {f for f in created if any(f and f in (r.get("command") or "") for r in runs)}
    episodes: list[Episode] = []
    unresolved: list[Step] = []
    consumed: set[int] = set()
    for i, fail in enumerate(runs):
        if fail["success"] or fail["step"] in consumed:
            continue
        streak = [fail]
        passed = None
        for later in runs[i + 1:]:
            if not covers(later["command"], fail["command"]) and not any(
                    _same_goal({**later, "command": c, "kind": commands.kind(c)}, streak[-1])
                    for c in (later["command"], *_and_parts(later["command"]))):
                continue
            if (later["success"] and not _MASKED.search(later["command"]) and not later.get("background")) \
                    or _got_past(later, streak):
                passed = later
                break
            streak.append(later)
        consumed.update(s["step"] for s in streak)
        if passed is None:
            unresolved.append(streak[0])
            continue
        last = streak[-1]
        between = [s for s in steps if last["step"] < s["step"] < passed["step"]]
        fixes = _fixes(fail, last, passed, steps, created, scripts)
        signature = _telling(streak)
        edited_before = {f for s in steps if s["step"] < fail["step"] and s.get("kind") == "edit" and s["success"]
                         for f in s.get("files") or []}
        output = " ".join(f.get("output") or "" for f in streak)
        self_inflicted = any(_mentions(output, f) for f in edited_before - scripts)
        changed_between = [s for s in between if s.get("kind") == "edit" or (
            s.get("command") and s["success"] and s.get("kind") not in ("readonly",) + commands.CHECK_KINDS)]
        episodes.append({
            "fails": streak, "passed": passed, "fixes": fixes, "signature": signature,
            "self_inflicted": self_inflicted, "throwaway": throwaway(fail, created),
            # Got past it (passed, or now fails on something else) by writing the command another way.
            "variant": not changed_between and _spelling(passed) != _spelling(last),
        })
    return episodes, unresolved


def _spelling(step: Step) -> str:
    return " ".join((step.get("command") or "").split())


def _got_past(later: Step, streak: Sequence[Step]) -> bool:
    """The same command now fails with another telling error: the first one is fixed."""
    before, now = _telling(streak), later.get("error")
    return bool(before and now and now != before and not _GENERIC_SIG.search(before))


def _similar(a: str, b: str) -> bool:
    """Two ad hoc commands that are one rewritten into the other (most of their words shared)."""
    x, y = set(re.findall(r"\w+", a)), set(re.findall(r"\w+", b))
    return len(x) >= 4 and len(x & y) / len(x | y) >= 0.6


def _same_goal(later: Step, fail: Step) -> bool:
    """A different command for the same job (another tool, another spelling): same check kind, or
    the same tool and subcommand for ad hoc commands (`go run /tmp/x.go` → `go run ./cmd/x`)."""
    kind = fail.get("kind")
    if kind in commands.CHECK_KINDS:
        mine, theirs = _targets(fail["command"]), _targets(later["command"])
        if mine and theirs and not mine <= theirs:
            return False  # a narrower run passing proves nothing about the wider one
        if later.get("kind") != kind:
            return False
        # Another tool for the same kind of check is the same goal only when this one could not run
        # at all (`pytest: command not found` → `uv run pytest`); `mix test` → `vitest` is another suite.
        if commands.family(later["command"]) == commands.family(fail["command"]) or _CANNOT_RUN.search(
                fail.get("error") or ""):
            return True
        # A script that ran this tool (`bun run test` printing `$ vitest run`) and the tool run directly,
        # either way round (`golangci-lint run x.go` failing, then `mise run lint` printing
        # `[lint] $ golangci-lint run ./...`).
        ran, own = (commands.family(c["command"]).split(" ")[0] for c in (later, fail))
        return any(len(name) > 2 and re.search(rf"(?<![\w-]){re.escape(name)}(?![\w-])", text or "") is not None
                   for name, text in ((ran, fail.get("output")), (own, later.get("output"))))
    fam = commands.family(fail["command"])
    if " " in fam and commands.family(later["command"]) == fam:
        return True
    missing = _MISSING_TOOL.search(fail.get("error") or "")
    tool = next((g for g in missing.groups() if g), None) if missing else None
    if tool and later["success"] and re.search(r"\b" + re.escape(tool) + r"\b", later["command"]):
        return True  # the tool is not installed here: whatever ran it after all is the way
    a, b = commands.key(fail["command"]).split(), commands.key(later["command"]).split()
    if len(a) > 1 and len(b) > 1 and a[0] == b[0] and os.path.basename(a[1]) == os.path.basename(b[1]) \
            and not a[1].startswith("-"):
        return True  # `node assets/build.js` → `cd assets && node build.js`: the same script, run another way
    return later.get("kind") == kind and _similar(later["command"], fail["command"])
