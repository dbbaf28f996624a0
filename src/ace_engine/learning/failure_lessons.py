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
from . import edits
from . import episodes as ep
from .lesson_text import code, local, sentence, spelled

if TYPE_CHECKING:
    from ..core._types import Candidate

Step = Mapping[str, Any]

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
    r"is not a \w+ command|must specify a|(?:is|are) not (?:set|configured)|no credentials", re.IGNORECASE)
# A script / task / target the project does not define (not a tool that is not installed).
_MISSING = re.compile(r"Missing script|Unknown task|No rule to make target|is not a task|task .{1,40} "
                      r"(?:not found|does not exist|could not be found)|does not contain (?:a )?recipe|"
                      r"no task named", re.IGNORECASE)
# Failures of the network or the machine: no code edit fixes them.
TRANSIENT = re.compile(r"failed to download|Could not resolve host|Connection (?:refused|reset|timed out)|"
                       r"\bE(?:CONNREFUSED|TIMEDOUT|NOTFOUND|AI_AGAIN)\b|network is unreachable|"
                       r"Temporary failure in name resolution|503 Service|rate limit|cannot lock ref|"
                       r"Unable to create '.*\.lock'", re.IGNORECASE)
_HINT = re.compile(r"^\s*(?:hint|Hint|HINT|help|Did you mean)[:\s]+(.{8,140}?)\s*$", re.MULTILINE)
_HOOK = re.compile(r"pre-commit|precommit|husky|lint-staged|lefthook|hook (?:failed|exited)|"
                   r"validation failed", re.IGNORECASE)
_HOOK_TOOLS = ("mix format", "credo", "dialyzer", "markdownlint", "eslint", "prettier", "ruff", "black", "flake8",
               "isort", "mypy", "pyright", "gofmt", "golangci-lint", "goimports", "rubocop", "clippy", "cargo fmt",
               "rustfmt", "biome", "stylelint", "tsc", "ktlint", "spotless", "shellcheck", "commitlint", "detekt")
_RUN_INSTRUCTION = re.compile(r"\bRun ['\"`]([^'\"`\n]{3,60})['\"`]", re.IGNORECASE)
_FRAME = re.compile(r'File "([^"]+)", line \d+, in (\w+)')
LINT_KINDS = ("lint", "format")
# A tool or module the command could not find: something the project must build or install first.
_CANNOT_START = re.compile(r"Could not locate executable|command not found|not found in PATH|Cannot find module|"
                           r"ENOENT|spawn \S+ ENOENT", re.IGNORECASE)


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


def _shape(command: str, root: str | None, limit: int = 80) -> str:
    """A command as the next session should read it: machine paths and message bodies gone, the
    `cd sub/dir &&` that made it work kept."""
    return code(display_command({"command": command}, root), limit)


def _sig(sig: str | None, root: str | None, limit: int = 150) -> str:
    return code(local(sig or "", root), limit)


def _fails_with(sig: str | None, root: str | None, limit: int = 150) -> str:
    return f"it fails with {_sig(sig, root, limit)}" if sig else "it fails"


def _hint(step: Step) -> str:
    m = _HINT.search(step.get("output") or "")
    return f" (hint: {m.group(1).rstrip('.')})" if m else ""


def _where(fix_edits: Sequence[Step], output: str, root: str | None) -> str:
    """`in eye() of dask/array/creation.py` — the code the fix changed."""
    files = list(dict.fromkeys(local(f, root) for s in fix_edits for f in s.get("files") or []))
    symbol = next((s["_change"]["symbol"] for s in fix_edits if s.get("_change") and s["_change"].get("symbol")), None)
    if symbol is None:  # a Python traceback names the function the error came from
        frames = [(f, fn) for f, fn in _FRAME.findall(output) if any(f.endswith(x) for x in files)]
        symbol = frames[-1][1] if frames else None
    where = ", ".join(files[:2]) + (f" and {len(files) - 2} more" if len(files) > 2 else "")
    return f"`{symbol}` in {where}" if symbol and symbol != "<module>" else where


def _diffs(fix_edits: Sequence[Step], limit: int) -> str:
    """The real changes, code before comments and docstrings (shown only when nothing else changed)."""
    changes = [s["_change"] for s in fix_edits if s.get("_change")]
    if any(c["code"] for c in changes):
        changes = [c for c in changes if c["code"]]
    shown = [edits.describe(c, limit) for c in changes]
    shown = list(dict.fromkeys(shown))
    return "; ".join(shown[:2]) + (f" (+{len(shown) - 2} more edits)" if len(shown) > 2 else "")


def _candidate(content: str, kind: str, confidence: float, evidence: str, steps: Sequence[Step],
               section: str = "troubleshooting_and_pitfalls", files: Sequence[str] = ()) -> Candidate:
    cand: Candidate = {"content": sentence(content), "section": section, "kind": kind, "confidence": confidence,
                       "evidence": evidence[:800], "source_steps": [s["step"] for s in steps]}
    if files:
        cand["files"] = list(files)[:10]
    return cand


def _evidence(e: ep.Episode) -> str:
    parts = [f"step {f['step']}: {f['action'][:120]} → {f['result'][:120]}" for f in e["fails"][:2]]
    parts += [f"step {s['step']}: {s['action'][:100]}" for s in e["fixes"][:3]]
    parts.append(f"step {e['passed']['step']}: {e['passed']['action'][:100]} → {e['passed']['result'][:80]}")
    return "; ".join(parts)


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
    environment = bool(sig and ENVIRONMENT.search(sig))
    if not sig and not fix_runs or sig and TRANSIENT.search(sig):
        return None
    if kind in LINT_KINDS and sig:
        how = f": fixed by {_diffs(fix_edits, 90)}" if fix_edits else ""
        tools = [s for s in fix_runs if s.get("kind") == "format"]
        how += (", after " if how else ": fixed after ") + _shape(tools[0]["command"], root, 40) if tools else ""
        content = f"{cmd} enforces {_sig(sig, root, 170)}{how}."
        return _candidate(content, "lint_rule", 0.85, _evidence(e), e["fails"] + e["fixes"] + [passed],
                          section="strategies_and_hard_rules", files=files)
    if fix_runs and not fix_edits:
        todo = ", then ".join(_shape(s["command"], root, 70) for s in fix_runs[:2])
        content = f"Run {todo} before {cmd}: without it, {_fails_with(sig, root)}."
        return _candidate(content, "error_fix", 0.85, _evidence(e), e["fails"] + e["fixes"] + [passed],
                          section="strategies_and_hard_rules")
    if not fix_edits:
        return None
    diff = _diffs(fix_edits, 110) or "editing it"  # a payload's edit may name only its file
    where = _where(fix_edits, output, root)
    config = all(ep.CONFIG_FILE.search(f) for f in files)
    if config:
        content = f"{cmd} needs {diff} in {where}: without it, {_fails_with(sig, root)}."
    elif e["throwaway"]:
        content = f"{_sig(sig, root)}: the cause was in {where}, fixed by {diff}."
    else:
        content = f"When {cmd} fails with {_sig(sig, root)}: the cause was in {where}, fixed by {diff}."
    if e["self_inflicted"] and not environment:
        # A mistake in code the task had just written, fixed: its steps look like strong evidence to
        # the curator (failure, edit, pass: a lesson at once), but the rule is the task's own.
        return None
    return _candidate(content, "error_fix", 0.85, _evidence(e), e["fails"] + e["fixes"] + [passed], files=files)


def _failing_part(command: str, output: str) -> str:
    """In `git add x && git commit`, the part the failure speaks of: the one whose subcommand the
    output names ("… Use -f if you really want to add them" → `git add x`); else the whole line."""
    pieces = [p for p in commands.parts(command) if commands.kind(p) not in ("readonly",)]
    if len(pieces) < 2:
        return command
    for piece in pieces:
        words = piece.split()
        verb = words[1] if len(words) > 1 and words[1].isalpha() else words[0]
        if re.search(rf"\b{re.escape(verb)}\b", output):
            return piece
    return command


def _environment_lesson(fail: Step, root: str | None, worked: Step | None, sig: str | None) -> Candidate | None:
    if not sig or not ENVIRONMENT.search(sig) or TRANSIENT.search(sig):
        return None
    command = _failing_part(fail["command"], fail.get("output") or "") if worked is None else fail["command"]
    failed_as, worked_as = _shape(command, root, 70), _shape(worked["command"], root, 90) if worked else ""
    if worked is not None and failed_as == worked_as:  # the same command written another way
        failed_as = code(local(spelled(commands.clean(fail["command"])), root), 70)
        worked_as = code(local(spelled(commands.clean(worked["command"])), root), 90)
    content = f"{failed_as} fails here with {_sig(sig, root, 140)}{_hint(fail)}"
    if worked is not None:
        content += f"; {worked_as} " + ("worked" if worked["success"] else "got past it")
    steps = [fail] + ([worked] if worked else [])
    # Unresolved, one failure is weak evidence, unless the tool itself said what to do about it.
    strong = worked is not None or bool(_hint(fail))
    return _candidate(content + ".", "environment", 0.8 if strong else 0.6, "; ".join(
        f"step {s['step']}: {s['action'][:120]} → {s['result'][:120]}" for s in steps), steps)


def _workaround(e: ep.Episode, steps: Sequence[Step], root: str | None) -> Candidate | None:
    """An environment fact met by a one-off script, and how the script got around it."""
    sig = e["signature"]
    if not sig or not ENVIRONMENT.search(sig):
        return None
    first, passed = e["fails"][0], e["passed"]
    script_edits = [s for s in steps if first["step"] < s["step"] < passed["step"] and s.get("_change")]
    how = f": a one-off script worked after {_diffs(script_edits, 90)}" if script_edits else ""
    return _candidate(f"{_sig(sig, root, 140)} in this environment{_hint(first)}{how}.", "environment", 0.8,
                      _evidence(e), e["fails"] + script_edits + [passed])


def _missing_command(fail: Step, steps: Sequence[Step], root: str | None) -> Candidate | None:
    sig = fail.get("error") or ""
    if not _MISSING.search(sig + "\n" + (fail.get("output") or "")[:1000]):
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


def lessons(steps: Sequence[Step], root: str | None) -> list[Candidate]:
    out = commit_hooks(steps, root)
    hooked = bool(out)
    episodes, unresolved = ep.find(steps)
    for e in episodes:
        if e["passed"]["step"] < 1:
            continue  # all in the previous turn: learned there
        if any(_is_commit(f) for f in e["fails"]) and hooked:
            continue  # the pre-commit lesson covers it
        sig = e["signature"]
        lesson = None
        if e["variant"]:
            lesson = _environment_lesson(e["fails"][-1], root, e["passed"], sig)
        elif e["throwaway"] and not [s for s in e["fixes"] if s.get("kind") == "edit"]:
            lesson = _workaround(e, steps, root)
        if lesson is None and not e["variant"]:
            lesson = _fix_lesson(e, root)
        if lesson is None and e["variant"] and sig and e["passed"]["success"] and _same_args(e):
            better, worse = _shape(e["passed"]["command"], root), _shape(e["fails"][-1]["command"], root)
            lesson = _candidate(f"Use {better}, not {worse} (that fails with {_sig(sig, root, 110)}).",
                                "command_variant", 0.7, _evidence(e), e["fails"] + [e["passed"]],
                                section="strategies_and_hard_rules")
        edited = [s for s in steps if e["fails"][0]["step"] < s["step"] < e["passed"]["step"]
                  and s.get("kind") == "edit"]
        # A missing module or tool that is there on the re-run was put there (a build, an install out
        # of sight): no flakiness.
        if lesson is None and not e["variant"] and not e["fixes"] and not edited and sig and e["passed"]["success"] \
                and e["passed"].get("kind") != "vcs" and not ENVIRONMENT.search(sig) and not _CANNOT_START.search(sig):
            lesson = _candidate(f"{_shape(e['passed']['command'], root)} is flaky: it failed with "
                                f"{_sig(sig, root, 110)} and passed when re-run with nothing changed.", "flaky", 0.55,
                                _evidence(e), e["fails"] + [e["passed"]])
        if lesson:
            out.append(lesson)
    for fail in unresolved:
        if _is_commit(fail) and hooked or fail["step"] < 1:
            continue
        lesson = _missing_command(fail, steps, root) or _environment_lesson(fail, root, None, fail.get("error"))
        if lesson:
            out.append(lesson)
    return out
