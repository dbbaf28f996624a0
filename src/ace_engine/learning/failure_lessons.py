"""Lessons from failures: what a careful engineer writes down after a check failed and was fixed,
or failed for a reason of the environment that the next session will meet again.

    lessons(steps, root) -> [Candidate]

One lesson per episode (`episodes.find`), phrased by what the evidence supports:
- environment facts — a tool or module missing, the shell refusing something, a path git
  ignores, a script that does not exist — "`cmd` fails here with `sig` (hint: …); `other` worked";
- pre-commit checks — `git commit` ran formatters / linters and refused: "`git commit` runs …
  here: run … before committing";
- a command that makes another work — "Run `bun install` before `tsc …`: without it, it fails
  with `tsc: command not found`";
- a configuration the check needs — "`mix test` needs `{:lazy_html, …}` in `mix.exs` …";
- a rule a linter enforces — "`mise run lint` enforces `… (gocritic)`: `} else { if` → `} else if`";
- a cause in the code — "`TypeError: dtype must be known …` (in `eye`): fixed in
  dask/array/creation.py by added `if dtype is None:` …".
Confidence says how strong the evidence is (the curator makes a lesson active at ≥ 0.8, keeps it a
candidate below): a fix proven by a passing re-run, or the tool's own words about the
environment, are strong; a mistake in code this task had just written, a retry that passed with
nothing changed, are weak. Cost: linear in the steps; no I/O.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ..observe import commands
from . import command_diff, edits
from . import episodes as ep
from . import failure_causes as causes
from .command_fix_lessons import change_lesson
from .failure_lesson_parts import TRANSIENT
from .failure_lesson_parts import candidate as _candidate
from .failure_lesson_parts import evidence as _evidence
from .failure_lesson_parts import fails_with as _fails_with
from .failure_lesson_parts import sig_span as _sig
from .lesson_wording import code, local, spelled

if TYPE_CHECKING:
    from ..core._types import Candidate

Step = Mapping[str, Any]

_HOOK = re.compile(r"pre-commit|precommit|husky|lint-staged|lefthook|hook (?:failed|exited)|"
                   r"validation failed", re.IGNORECASE)
_HOOK_TOOLS = ("mix format", "credo", "dialyzer", "markdownlint", "eslint", "prettier", "ruff", "black", "flake8",
               "isort", "mypy", "pyright", "gofmt", "golangci-lint", "goimports", "rubocop", "clippy", "cargo fmt",
               "rustfmt", "biome", "stylelint", "tsc", "ktlint", "spotless", "shellcheck", "commitlint", "detekt")
_RUN_INSTRUCTION = re.compile(r"\bRun ['\"`]([^'\"`\n]{3,60})['\"`]", re.IGNORECASE)
_FRAME = re.compile(r'File "([^"]+)", line \d+, in (\w+)')
LINT_KINDS = ("lint", "format")
_LINT_PLACE = re.compile(r"^\S+\.\w{1,6}(?::\d+){0,2}:\s*(?::\s*)?")  # `cmd/x/y.go:12:3: ` before a linter's message
CAP = 280  # a lesson's length (`failure_lesson_parts.candidate`); a fix lesson's signature and place give way first
FIX_CHARS = 110  # the least a fix's change is shown in (its new side; the old side half): never cut to `→ …`
# A test runner's verdict on one test, up to and including the test's name (Go, pytest, TAP, ExUnit, jest).
_TEST_VERDICT = re.compile(r"^(?:--- FAIL:|FAIL(?:ED)?:?|not ok \d+(?: -)?|\d+\) test|[✗×✕])\s*\S+")
_ERROR_WORDS = re.compile(r"error|exception|panic|expected|assert|undefined|cannot|can't|not found|no such|"
                          r"refused|denied|timed? ?out|missing|invalid|unexpected|nil pointer", re.IGNORECASE)


_CD = re.compile(r"^cd\s+(?P<dir>\"[^\"]+\"|'[^']+'|\S+)$")


def display_command(step: Step, root: str | None) -> str:
    """The command to recommend: its key, with the `cd sub/dir &&` that made it work kept."""
    full = step.get("command") or ""
    core = commands.key(full)
    first = commands.parts(full)[:1]
    m = _CD.match(first[0]) if first else None
    if m and first[0] != core:
        target = m.group("dir").strip("\"'")
        if root and target.startswith(root.rstrip("/") + "/"):
            target = target[len(root.rstrip("/")) + 1:]
        if target and not target.startswith(("/", "~", "$")) and target not in (".", "./"):
            return f"cd {target} && {core}"
    return local(core, root)


def _shape(command: str, root: str | None, limit: int = 60) -> str:
    """A command as the next session should read it: machine paths and message bodies gone, the
    `cd sub/dir &&` that made it work kept."""
    return code(display_command({"command": command}, root), limit)


def _where(fix_edits: Sequence[Step], output: str, root: str | None) -> str:
    """`in eye() of dask/array/creation.py` — the code the fix changed."""
    files = list(dict.fromkeys(local(f, root) for s in fix_edits for f in s.get("files") or []))
    symbol = next((s["_change"]["symbol"] for s in fix_edits if s.get("_change") and s["_change"].get("symbol")), None)
    if symbol is None:  # a Python traceback names the function the error came from
        frames = [(f, fn) for f, fn in _FRAME.findall(output) if any(f.endswith(x) for x in files)]
        symbol = frames[-1][1] if frames else None
    where = ", ".join(files[:2]) + (f" and {len(files) - 2} more" if len(files) > 2 else "")
    where = where if len(where) <= 70 else files[0] + " and others"
    return f"`{symbol}` in {where}" if symbol and symbol != "<module>" and len(symbol) < 40 else where


def _diffs(fix_edits: Sequence[Step], limit: int, new_only: bool = False) -> str:
    """The real changes, code before comments and docstrings (shown only when nothing else changed):
    the first two of the edits `episodes._fixes` kept (those where the error points, when any do)."""
    found = [s["_change"] for s in fix_edits if s.get("_change")]
    if any(c["code"] for c in found):
        found = [c for c in found if c["code"]]
    shown = list(dict.fromkeys(edits.describe(c, limit, new_only=new_only) for c in found))
    return "; ".join(shown[:2])


def _is_commit(step: Step) -> bool:
    return bool(re.search(r"\bgit\s+(?:-\S+\s+)*commit\b", step.get("command") or ""))


def commit_hooks(steps: Sequence[Step], root: str | None) -> list[Candidate]:
    """`git commit` refused by pre-commit checks: which checks, and what to run first."""
    failed = [s for s in steps if _is_commit(s) and ep.real_failure(s) and s["step"] > 0
              and (_HOOK.search(s.get("output") or "") or any(t in (s.get("output") or "").lower()
                                                               for t in _HOOK_TOOLS))]
    if not failed:
        return []
    text = "\n".join(s.get("output") or "" for s in failed)
    low = text.lower()
    tools = [t for t in _HOOK_TOOLS if t in low]
    runs = list(dict.fromkeys(m.strip() for m in _RUN_INSTRUCTION.findall(text)))
    sig = next((s["error"] for s in failed if s.get("error") and len(s["error"]) > 12), None)
    no_verify = any("--no-verify" in (s.get("command") or "") for s in failed)
    after = [s for s in steps if s["step"] > failed[0]["step"] and _is_commit(s) and s["success"]]
    end = after[0]["step"] if after else failed[-1]["step"]
    fix_edits = [s for s in steps if failed[0]["step"] < s["step"] < end and s.get("_change") and s["success"]]
    what = ", ".join(tools[:4]) if tools else "a pre-commit hook"
    ran = [commands.key(s["command"]) for s in steps if s.get("command") and s["success"]
           and s.get("kind") in commands.CHECK_KINDS]
    for tool in tools:  # the command this task ran for a named check, e.g. `mix credo --strict`
        seen = next((r for r in ran if tool in r), None)
        if seen and not any(tool in r for r in runs):
            runs.append(seen)
    todo = ", ".join(code(local(r, root), 40) for r in runs[:3])
    content = f"`git commit` runs pre-commit checks here ({what})"
    # Worded as advice against it: the safety policy quarantines a lesson that suggests skipping checks.
    content += "; don't rely on `--no-verify`, it does not skip them" if no_verify else ""
    content += f": run {todo} before committing" if todo else ": run them before committing"
    content += f"; it refused with {_sig(sig, root, 120)}" if sig else ""
    if after and fix_edits and len(tools) <= 2:
        content += f", fixed by {_diffs(fix_edits[-1:], 60)}"
    return [_candidate(content + ".", "commit_hook", 0.85,
                       "; ".join(f"step {s['step']}: commit refused: {s['result'][:120]}" for s in failed[:4]),
                       failed + after[:1], section="strategies_and_hard_rules")]


def _fix_lesson(e: ep.Episode, root: str | None) -> Candidate | None:
    last, passed = e["fails"][-1], e["passed"]
    sig = e["signature"]
    cmd = _shape(passed["command"] if e["throwaway"] else last["command"], root)
    fix_edits = [s for s in e["fixes"] if s.get("kind") == "edit"]
    fix_runs = [s for s in e["fixes"] if s.get("command")]
    output = "\n".join(f.get("output") or "" for f in e["fails"])
    files = [f for s in fix_edits for f in s.get("files") or []]
    kind = last.get("kind")
    environment = bool(sig and causes.ENVIRONMENT.search(sig))
    if not sig and not fix_runs or sig and TRANSIENT.search(sig):
        return None
    if kind in LINT_KINDS and sig and (sig.endswith("(typecheck)") or causes.COMPILE_ERROR.search(sig)) \
            and not causes.RULE_NAME.search(sig):
        return None  # a compile error the linter passed on: a broken build, no rule for the next session
    # A linter's rule only when the linter ran: not when it could not start, not when a command run
    # in between (an install) was all it took.
    if kind in LINT_KINDS and sig and not environment and not causes.CANNOT_START.search(sig) and (
            fix_edits or any(s.get("kind") == "format" for s in fix_runs)):
        if not causes.RULE_NAME.search(sig) and e["self_inflicted"]:
            return None  # an error in code this task had just written: no rule for the next session
        # The rule's fix is where the linter points; an edit elsewhere in between is other work.
        pointed = [s for s in fix_edits if any(ep._mentions(output, f) for f in s.get("files") or [])]  # noqa: SLF001
        # A formatter fixes only what is layout: not a design rule (`[D] Nested modules could be aliased`).
        tools = [s for s in fix_runs if s.get("kind") == "format"] if causes.LAYOUT.search(sig) else []
        diff = _diffs(pointed, 70)
        if not tools and (not diff or all(s.get("_change") and not s["_change"]["added"] for s in pointed)):
            return None  # no fix shown where it points, or the flagged code only deleted: the message says as much
        how = f": fixed by {diff}" if diff else ""
        how += (", after " if how else ": fixed after ") + _shape(tools[0]["command"], root, 40) if tools else ""
        # The rule, not where it fired this time: the file the linter named is the task's, the
        # message and the rule's name are what the next session meets again (and it keeps the
        # lesson within a rule's length).
        rule = _LINT_PLACE.sub("", sig, count=1) or sig
        content = f"{cmd} enforces {_sig(rule, root, 110)}{how}."
        return _candidate(content, "lint_rule", 0.85, _evidence(e), e["fails"] + e["fixes"] + [passed],
                          section="strategies_and_hard_rules", files=files)
    if fix_runs and not fix_edits and sig:
        if kind in commands.CHECK_KINDS and not (environment or causes.CANNOT_START.search(sig) or ep.names_a_run(
                output, fix_runs)):
            return None  # a check's own failure (a test that failed) says nothing of what ran in between
        todo = ", then ".join(_shape(s["command"], root, 70) for s in fix_runs[:2])
        content = f"Run {todo} before {cmd}: without it, {_fails_with(sig, root)}."
        return _candidate(content, "error_fix", 0.85, _evidence(e), e["fails"] + e["fixes"] + [passed],
                          section="strategies_and_hard_rules")
    if kind == "vcs":  # a git failure is fixed by a code edit only where it points (or in configuration)
        fix_edits = [s for s in fix_edits if any(ep._mentions(output, f) or ep.CONFIG_FILE.search(f)  # noqa: SLF001
                                                 for f in s.get("files") or [])]
        files = [f for s in fix_edits for f in s.get("files") or []]
    if not fix_edits:
        return None
    where = _where(fix_edits, output, root)
    config = all(ep.CONFIG_FILE.search(f) for f in files)
    # A rule of ~240 characters: the signature first (its telling end is what the next session
    # recognises), the change gets what is left (at least 50).
    if config:
        diff = _diffs(fix_edits, FIX_CHARS) or "editing it"  # a payload's edit may name only its file
        content = f"{cmd} needs {diff} in {where}: without it, {_fails_with(sig, root, 90)}."
    else:
        if not (sig or "").strip():
            return None  # no error a later session could recognise: nothing to say "when … fails with"
        # Over the cap, the signature gives way first (down to 80: its head and telling end), then the
        # place (its first file only); the fix is never cut: past that the lesson is longer.
        first, said = _where(fix_edits[:1], output, root), _sig(sig, root, 110)
        # The fix is the lesson: each change gets at least FIX_CHARS (what the next session must write).
        if e["throwaway"]:
            diff = _diffs(fix_edits, max(FIX_CHARS, 250 - len(said) - len(where) - 30)) or "editing it"
        else:
            diff = _diffs(fix_edits, max(FIX_CHARS, 240 - len(said) - len(where) - len(cmd) - 40)) or "editing it"
        for limit, place in ((110, where), (95, where), (80, where), (80, first)):
            said = _sig(sig, root, limit)
            content = f"{said} comes from {place}; the fix: {diff}." if e["throwaway"] else \
                f"When {cmd} fails with {said}, look in {place}; the fix: {diff}."
            if len(content) <= CAP:
                break
    if e["self_inflicted"] and files and all(ep._TEST_FILE.search(f) for f in files):  # noqa: SLF001
        # A test this task was writing, fixed: task-local, nothing for the next session (even when what
        # it lacked was a package: the edit to its own test is not how the next session gets one).
        return None
    if kind == "test" and not environment and not config and _names_only_a_test(sig):
        return None  # which test failed, not why: the next session's failing test is another one
    if e["self_inflicted"] and not environment:
        # A mistake in code the task had just written, fixed: its steps look like strong evidence to
        # the curator (failure, edit, pass: a lesson at once), but the rule is the task's own.
        return None
    if kind == "test" and not environment and not config and _put_right_in_place(fix_edits):
        # A test failed on a wrong value and the fix only put an operator, a literal or an order right
        # (`return a - b` → `return a + b`): that bug is gone, and the lesson would state no rule of the
        # code a later task could follow ("look in X; the fix: writing `return a + b`").
        return None
    return _candidate(content, "error_fix", 0.85, _evidence(e),
                      e["fails"] + e["fixes"] + [passed], files=files, limit=max(CAP, len(content)))


_STRING = re.compile(r"(['\"`]).*?\1")
_NAME = re.compile(r"[A-Za-z_][\w]*")


def _put_right_in_place(fix_edits: Sequence[Step]) -> bool:
    """Every change of the fix replaces code by code using no name the old code did not use: an
    operator, a number, a string's value or an order put right. A change that brings in a name (a
    call, a module, a flag, a setting) says how the code is meant to work, and stays a lesson."""
    found = [s.get("_change") for s in fix_edits]
    if not found or not all(c and c["code"] and c["removed"] and c["added"] for c in found):
        return False

    def names(lines: list[str]) -> set[str]:
        return {n for line in lines for n in _NAME.findall(_STRING.sub("", line))}

    return all(names(c["added"]) <= names(c["removed"]) for c in found if c)


def _names_only_a_test(sig: str | None) -> bool:
    """A test runner's verdict line (`--- FAIL: TestX`, `FAILED tests/x.py::t`, `not ok 3 - t`) with no
    error after the test's name: it says which test failed, not what went wrong."""
    m = _TEST_VERDICT.match(sig or "")
    return m is not None and not _ERROR_WORDS.search((sig or "")[m.end():])


def _same_action(fail: Step, worked: Step) -> bool:
    """Is `worked` another way to do what `fail` tried: the same tool and subcommand, or another tool
    where this one could not run at all (`pnpm: command not found` → `npm test`)?"""
    mine, theirs = command_diff._verb(fail["command"]), command_diff._verb(worked["command"])  # noqa: SLF001
    if mine[0] == theirs[0]:
        return mine == theirs or not mine[1] or not theirs[1]
    kind = commands.kind(fail["command"])
    same_kind = commands.kind(worked["command"]) == kind and kind in commands.CHECK_KINDS + ("install",)
    return same_kind and bool(ep._CANNOT_RUN.search(fail.get("error") or ""))  # noqa: SLF001


def _environment_lesson(fail: Step, root: str | None, worked: Step | None, sig: str | None) -> Candidate | None:
    if worked is not None and not _same_action(fail, worked):
        worked = None  # `git commit` passing says nothing about how to get `git add` past it
    if not sig or not causes.ENVIRONMENT.search(sig) or TRANSIENT.search(sig):
        return None
    command = fail["command"] if worked is not None else \
        command_diff.failing_part(fail["command"], fail.get("output") or "")
    failed_as, worked_as = _shape(command, root, 70), _shape(worked["command"], root, 90) if worked else ""
    if worked is not None and failed_as == worked_as:  # the same command written another way
        failed_as = code(local(spelled(commands.clean(fail["command"])), root), 70)
        worked_as = code(local(spelled(commands.clean(worked["command"])), root), 90)
    hint = causes.hint(fail)
    content = f"{failed_as} fails here with {_sig(sig, root, 140)}{hint}"
    if worked is not None:
        content += f"; {worked_as} " + ("worked" if worked["success"] else "got past it")
    steps = [fail] + ([worked] if worked else [])
    # Unresolved, one failure is weak evidence, unless the tool itself said what to do about it or
    # refused by the repository's own configuration (a path git ignores: the same next time, every time).
    strong = worked is not None or bool(hint) or bool(causes.BY_CONFIGURATION.search(sig))
    return _candidate(content + ".", "environment", 0.8 if strong else 0.6, "; ".join(
        f"step {s['step']}: {s['action'][:120]} → {s['result'][:120]}" for s in steps), steps)


def _workaround(e: ep.Episode, steps: Sequence[Step], root: str | None) -> Candidate | None:
    """An environment fact met by a one-off script, and how the script got around it."""
    sig = e["signature"]
    if not sig or not causes.ENVIRONMENT.search(sig):
        return None
    first, passed = e["fails"][0], e["passed"]
    script_edits = [s for s in steps if first["step"] < s["step"] < passed["step"] and s.get("_change")]
    how = f": a one-off script worked after {_diffs(script_edits, 90)}" if script_edits else ""
    return _candidate(f"{_sig(sig, root, 140)} in this environment{causes.hint(first)}{how}.", "environment", 0.8,
                      _evidence(e), e["fails"] + script_edits + [passed])


def _missing_command(fail: Step, steps: Sequence[Step], root: str | None) -> Candidate | None:
    sig = fail.get("error") or ""
    if not causes.MISSING.search(sig + "\n" + (fail.get("output") or "")[:1000]):
        return None
    working = list(dict.fromkeys(
        commands.general(s["command"]) for s in steps
        if s.get("command") and s["success"] and s.get("kind") in commands.CHECK_KINDS))
    content = f"There is no {_shape(fail['command'], root, 60)} in this project ({_sig(sig, root, 100)})"
    if working:
        content += "; the checks that work: " + ", ".join(code(local(w, root), 60) for w in working[:3])
    return _candidate(content + ".", "missing_command", 0.85, f"step {fail['step']}: {fail['result'][:200]}",
                      [fail], section="strategies_and_hard_rules")


def _same_args(e: ep.Episode) -> bool:
    """A variant is another way to run the same thing (`python -m pytest` for `pytest`, npm for
    pnpm): the same arguments, or another tool. Other arguments make it another command."""
    a, b = commands.key(e["fails"][-1]["command"]).split(), commands.key(e["passed"]["command"]).split()
    args = [w for w in a[2:] if not w.startswith("-")], [w for w in b[2:] if not w.startswith("-")]
    return args[0] == args[1] or a[:1] != b[:1]


def _own_binary(fail: Step, built: set[str]) -> bool:
    """A binary this session built or put in a temp dir: its usage errors are the session's own."""
    first = [p.split()[0] for p in commands.parts(fail.get("chain") or fail["command"]) if p.split()]
    return any(w.rsplit("/", 1)[-1] in built or commands._TMP.match(w) for w in first)  # noqa: SLF001


def lessons(steps: Sequence[Step], root: str | None) -> list[Candidate]:
    out = commit_hooks(steps, root)
    hooked = bool(out)
    episodes, unresolved = ep.find(steps)
    built = {m.group(1).rsplit("/", 1)[-1] for s in steps  # binaries this session built (`go build -o x`)
             for m in re.finditer(r"\s-o\s+(\S+)", (s.get("chain") or s.get("command") or ""))}
    for e in episodes:
        if e["passed"]["step"] < 1:
            continue  # all in the previous turn: learned there
        if any(_is_commit(f) for f in e["fails"]) and hooked:
            continue  # the pre-commit lesson covers it
        sig = e["signature"]
        lesson = change_lesson(e, root)
        if lesson is not None:
            out.append(lesson)
            continue
        if e["variant"] and not _own_binary(e["fails"][-1], built):
            lesson = _environment_lesson(e["fails"][-1], root, e["passed"], sig)
        elif e["throwaway"] and not [s for s in e["fixes"] if s.get("kind") == "edit"] \
                and not _own_binary(e["fails"][-1], built):
            lesson = _workaround(e, steps, root)
        if lesson is None and not e["variant"]:
            lesson = _fix_lesson(e, root)
        if lesson is None and e["variant"] and sig and e["passed"]["success"] and _same_args(e) \
                and not e["throwaway"] and not commands.is_throwaway(e["passed"]["command"]):
            better, worse = _shape(e["passed"]["command"], root), _shape(e["fails"][-1]["command"], root)
            # Both sides read the same once shaped (the branch names made `<branch>`, the long list
            # cut): what changed is not in the lesson, so there is none.
            lesson = None if better == worse else _candidate(
                f"Use {better}, not {worse} (that fails with {_sig(sig, root, 110)}).", "command_variant", 0.7,
                _evidence(e), e["fails"] + [e["passed"]], section="strategies_and_hard_rules")
        edited = [s for s in steps if e["fails"][0]["step"] < s["step"] < e["passed"]["step"]
                  and s.get("kind") == "edit"]
        # A missing module or tool that is there on the re-run was put there (a build, an install out
        # of sight): no flakiness.
        if lesson is None and not e["variant"] and not e["fixes"] and not edited and sig and e["passed"]["success"] \
                and e["passed"].get("kind") != "vcs" and not causes.ENVIRONMENT.search(sig) \
                and not causes.CANNOT_START.search(sig):
            lesson = _candidate(f"{_shape(e['passed']['command'], root)} is flaky: it failed with "
                                f"{_sig(sig, root, 110)} and passed when re-run with nothing changed.", "flaky", 0.55,
                                _evidence(e), e["fails"] + [e["passed"]])
        if lesson:
            out.append(lesson)
    for fail in unresolved:
        if _is_commit(fail) and hooked or fail["step"] < 1:
            continue
        if _own_binary(fail, built):
            continue
        lesson = _missing_command(fail, steps, root) or _environment_lesson(fail, root, None, fail.get("error"))
        if lesson:
            out.append(lesson)
    return out
