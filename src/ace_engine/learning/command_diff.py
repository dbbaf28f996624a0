"""What changed between a failing invocation and the next one that got past it — the cause of a
fix found by comparing the two runs, not by a per-ecosystem table.

    failing_part(command, output) -> str
        in a chain (`a && b; c | d`), the part the failure speaks of, with the `cd` before it kept
    suggestions(output) -> [str]
        commands the failing tool itself proposed ("use\\n\\n    git push --set-upstream origin x",
        "Run 'mix format' to fix", "Did you mean `npm run build`?")
    compare(failed, passed, root, output, cwd) -> Diff
        {"tool", "added": [words], "removed": [flags], "flags": [added flags with values], "args": bool,
         "cwd": (before, after), "env": ["VAR=…"], "suggested": the tool's suggestion the pass followed,
         "swapped": (old, new) argument, "revalued": (flag, old, new) value the failure named,
         "retargeted": (old, new) ref of a refused `git push`}
    track_cwd(steps, root)
        each command step's `cwd`: where the shell was (a `cd` in one Bash call holds for the next)
    command_change(fail_step, passed_step, root) -> Diff | None
        the invocation itself changed in a way that explains the pass (the tool's suggestion followed,
        a flag added or dropped, another directory, an environment variable, the argument the error
        named replaced by one of the same name elsewhere, a flag given another value where the error
        named the flag or the old value, the ref a refused `git push` went to); None when nothing of
        that changed

The comparison is word-level on the cleaned commands (`commands.clean`): the same tool and
subcommand on both sides is one command family, whatever the non-flag arguments; flags are the
words starting with `-` (a long flag keeps the value after it: `--repo acme/shop`). Branch names
in a git ref position become `<branch>`, so the same lesson from two worktrees is one lesson.
Pure string work, stdlib only; cost: a few regex passes and set operations per pair of commands.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from typing import Any, TypedDict

from ..observe import check_tools, commands

Step = Mapping[str, Any]

_CD = re.compile(r"^(?:cd|pushd)\s+(?P<dir>\"[^\"]+\"|'[^']+'|\S+)$")
_ENV = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)=(\S*)")
_BRANCH = re.compile(r"^(?:then|else|elif|do)\s+")
_CONTROL = re.compile(r"^(?:fi|done|esac|if|elif|while|until|for|case)\b|^\[\[?\s|^test\s")
# Lines where a tool proposes a command: an indented command line after "use"/"run"/"try", a quoted
# or backticked command after run/use/try/"did you mean", a `hint:` line.
_QUOTED_SUGGESTION = re.compile(
    r"(?:\b(?:run|use|try|did you mean|rerun(?: with)?|instead)\b:?\s*)['\"`]([^'\"`\n]{3,120})['\"`]", re.I)
_INDENTED = re.compile(r"^(?: {4,}|\t)([a-z][\w.-]*(?: [^\n]{1,150})?)$", re.M)
_LEAD_IN = re.compile(r"\b(?:use|run|try|with|following|command)\b[^\n]{0,80}$", re.I)
# How the output of a failed part names its tool: `error: …` lines of git, `npm ERR!`, `go: …`.
_TOOL_PREFIX = re.compile(r"^(?:[\w.-]+/)*([\w.-]+)(?::| ERR!| error)", re.M)
# git's own phrases, by subcommand: which part of a `git add … && git commit … && git push` failed.
_GIT_PHRASES = (
    ("push", re.compile(r"no upstream branch|failed to push|rejected|non-fast-forward|remote:|fetch first", re.I)),
    ("add", re.compile(r"ignored by one of your \.gitignore|pathspec .* did not match|beyond a symbolic link", re.I)),
    ("commit", re.compile(r"nothing to commit|pre-commit|precommit|no changes added to commit|hook", re.I)),
    ("checkout", re.compile(r"would be overwritten by checkout|already exists|did not match any file", re.I)),
    ("merge", re.compile(r"CONFLICT|Automatic merge failed|not something we can merge", re.I)),
    ("rebase", re.compile(r"could not apply|rebase in progress", re.I)),
)


# Tools whose commands are two words deep (`gh pr create` and `gh pr merge` are different actions).
_NESTED = frozenset({"gh", "docker", "kubectl", "gcloud", "aws", "az", "glab", "flyctl", "fly", "heroku", "vercel",
                     "supabase", "doppler", "wrangler", "bd", "linear"})


class Diff(TypedDict):
    tool: str
    added: list[str]
    removed: list[str]
    flags: list[str]  # the flags the passing run added, with their values (`--repo o/r`)
    args: bool
    cwd: tuple[str, str]
    env: list[str]
    suggested: str | None
    swapped: tuple[str, str] | None  # (the argument the failure named, the one that replaced it)
    revalued: tuple[str, str, str] | None  # (flag, old value, new value) where the failure named the flag or value
    retargeted: tuple[str, str] | None  # `git push`'s (refused ref, the ref that went), when the refusal speaks of it


def _words(piece: str) -> list[str]:
    return commands._words(piece)  # noqa: SLF001 — the one shell-word splitter


def _setup(piece: str) -> bool:
    return bool(_CD.match(piece)) or bool(re.match(r"^(?:export|source|\.|set)\s", piece))


def _verb(piece: str) -> tuple[str, str]:
    """(tool, subcommand) of one part: `git -C x push -u` → (git, push); `pytest -q` → (pytest, '')."""
    words = [w for w in _core_words(piece) if not _ENV.match(w)]
    if not words:
        return "", ""
    tool = words[0].rsplit("/", 1)[-1]
    rest = words[1:]
    while rest and rest[0].startswith("-"):
        rest = rest[2:] if rest[0] in ("-C", "-c") else rest[1:]
    sub = rest[0] if rest and re.match(r"^[a-z][\w:-]*$", rest[0]) else ""
    if sub and tool in _NESTED and len(rest) > 1 and re.match(r"^[a-z][\w-]*$", rest[1]):
        sub += " " + rest[1]  # `gh pr create`, `docker compose up`: the action is two words
    return tool, sub


def failing_part(command: str, output: str) -> str:
    """The part of a chain the failure belongs to (see the module docstring). With `&&` the last
    part to run is the one that failed, so among the parts the output names, the last wins; when
    the output names none, the whole line is kept (its `commands.key` already picks the check)."""
    # The branches of an `if`/`for` are commands too (`…; else cargo run -- x; fi`): without their keyword.
    pieces = [_BRANCH.sub("", p) for p in commands.parts(command)]
    work = [i for i, p in enumerate(pieces) if not _setup(p) and not _CONTROL.match(p)
            and commands.kind(p) != "readonly"]
    if len(work) < 2:
        return command
    head = output[:3000]
    named: list[int] = []
    for i in work:
        tool, sub = _verb(pieces[i])
        if tool == "git":
            if any(s == sub and rx.search(head) for s, rx in _GIT_PHRASES):
                named.append(i)
            continue
        task = check_tools.runner_task(check_tools.strip_launchers(pieces[i]).split())
        if task and re.search(rf"^\[{re.escape(task)}\] |^(?:[\w@/.-]+:)?{re.escape(task)}: ", head, re.M):
            named.append(i)  # a task runner prefixes its task's lines: `[lint] $ golangci-lint …`, `web:lint: …`
        elif sub and re.search(rf"(?<![\w-]){re.escape(tool)}\W+(?:run\W+)?{re.escape(sub)}\b", head):
            named.append(i)
        elif tool and tool in {m.group(1) for m in _TOOL_PREFIX.finditer(head)}:
            named.append(i)
    if not named:
        return command
    chosen = named[-1]
    cds = [p for p in pieces[:chosen] if _CD.match(p)]
    return " && ".join(cds[-1:] + [pieces[chosen]])


def suggestions(output: str) -> list[str]:
    """Commands the failing tool proposed, in the order it printed them."""
    text = output[:6000]
    found = [m.group(1).strip() for m in _QUOTED_SUGGESTION.finditer(text)]
    for m in _INDENTED.finditer(text):
        before = text[:m.start()].rstrip("\n ").rsplit("\n", 1)[-1]
        if _LEAD_IN.search(before) and commands.kind(m.group(1)) not in ("readonly",):
            found.append(m.group(1).strip())
    return [s for s in dict.fromkeys(found) if len(s.split()) >= 1 and not s.endswith(":")]


def _cwd(command: str, root: str | None, before: str | None = None) -> str:
    """The directory a line runs its work in, relative to the project root ('' = the root / unknown):
    its own last `cd`, else the directory the shell was left in (`before`, see `track_cwd`)."""
    cds = [m.group("dir").strip("\"'") for p in commands.parts(command) if (m := _CD.match(p))]
    if not cds:
        return _relative(before, root) if before else ""
    if before and not cds[-1].startswith(("/", "~", "$")) and not re.match(r"^[A-Za-z]:", cds[-1]):
        cds[-1] = before.rstrip("/") + "/" + cds[-1]
    return _relative(cds[-1], root)


def track_cwd(steps: list[dict[str, Any]], root: str | None) -> None:
    """Set each command step's `cwd`: where the shell was when it ran. Claude Code's Bash keeps the
    directory a `cd` left it in, so `cd web` in one call and `npm test` in the next run in `web`."""
    here = root or ""
    for step in steps:
        command = step.get("command")
        if not command:
            continue
        step["cwd"] = here
        cds = [m.group("dir").strip("\"'") for p in commands.parts(command) if (m := _CD.match(p))]
        if cds and step.get("success") and "(" not in command.split("&&")[0]:
            target = cds[-1]
            here = target if target.startswith("/") or re.match(r"^[A-Za-z]:", target) else \
                os.path.normpath(os.path.join(here or "/", target))


def _relative(target: str, root: str | None) -> str:
    target = target.replace("\\", "/").rstrip("/")
    base = (root or "").replace("\\", "/").rstrip("/")
    if base and (target.lower() == base.lower() or target.lower().startswith(base.lower() + "/")):
        target = target[len(base):].lstrip("/")
    if target.startswith(("/", "~", "$", "..")) or re.match(r"^[A-Za-z]:", target) or target in (".", ""):
        return ""  # outside the project, or where it is cannot be told: no directory to recommend
    return target


def _env(command: str) -> set[str]:
    """The variables a line sets for its command (`FOO=1 cmd`, `export FOO=1 && cmd`), as `FOO=…`."""
    out: set[str] = set()
    for piece in commands._split(commands.clean(command)):  # noqa: SLF001 — the one chain splitter
        for word in piece.split():
            m = _ENV.match(word)
            if not m:
                break
            out.add(f"{m.group(1)}=…")
    out |= {f"{m.group(1)}=…" for m in re.finditer(r"\bexport\s+([A-Za-z_]\w*)=", command)}
    return out


def _core_words(command: str) -> list[str]:
    """The words of the part that does the work (the part `commands.key` picks), as written:
    env assignments and wrappers gone, flags and branch names kept."""
    pieces = [p for p in commands.parts(command) if not _setup(p)]
    if not pieces:
        return []
    chosen = next((p for p in reversed(pieces) if commands.kind(p) in commands.CHECK_KINDS), pieces[-1])
    return _words(chosen)


def _flags(words: list[str]) -> list[str]:
    return [w for w in words if w.startswith("-") and w not in ("-", "--")]


def _follows(suggestion: str, passed: str) -> bool:
    """The passing run is the suggested command: same tool and subcommand, every flag of the
    suggestion present."""
    if _verb(suggestion) != _verb(passed) or not _verb(passed)[0]:
        return False
    mine = set(_flags(_words(suggestion)))
    return mine <= set(_flags(_core_words(passed))) and bool(mine or _words(suggestion) == _core_words(passed))


def branchless(words: list[str], tool: str, sub: str) -> list[str]:
    """Git refs in a push / checkout / switch position become `<branch>` (one lesson per repository,
    not one per worktree branch)."""
    if tool != "git" or sub not in ("push", "checkout", "switch", "pull", "branch"):
        return words
    out, positional = [], 0
    for w in words:
        if w.startswith("-") or w in (tool, sub):
            out.append(w)
            continue
        positional += 1
        is_ref = (sub == "push" and positional >= 2) or (sub != "push" and positional >= 1 and sub != "pull") \
            or (sub == "pull" and positional >= 2)
        out.append("<branch>" if is_ref and w not in ("HEAD", "main", "master", "origin") else w)
    return out


def _with_values(words: list[str], others: list[str]) -> list[str]:
    """The flags of `words` not in `others`, each with the value that follows it (`--repo o/r`)."""
    out: list[str] = []
    for i, w in enumerate(words):
        if w.startswith("-") and w not in others:
            nxt = words[i + 1] if i + 1 < len(words) else ""
            out.append(f"{w} {nxt}" if nxt and not nxt.startswith("-") and "=" not in w and nxt not in others
                       and w.startswith("--") else w)
    return out


def compare(failed: str, passed: str, root: str | None, output: str = "",
            cwd: tuple[str | None, str | None] = (None, None)) -> Diff:
    """Word-level difference of two invocations of one command family (see the module docstring).
    `cwd`: where the shell was before each ran (`track_cwd`), when known."""
    a, b = _core_words(failed), _core_words(passed)
    tool, sub = _verb(passed)
    fa, fb = _flags(a), _flags(b)
    args_a = [w for w in a[1:] if not w.startswith("-") and w != sub]
    args_b = [w for w in b[1:] if not w.startswith("-") and w != sub]
    added = [w for w in b[1:] if w not in a and w != sub]
    removed = [w for w in fa if w not in fb]
    suggested = next((s for s in suggestions(output) if _follows(s, passed)), None) if output else None
    if suggested is None:  # the failing tool named the long flag the passing run added (`… use --repo`)
        suggested = next((f for f in _flags(b) if f not in a and f.startswith("--") and len(f) > 4
                          and re.search(rf"(?<![\w-]){re.escape(f.split('=')[0])}\b", output)), None)
    swapped = None
    for old in (w for w in args_a if w not in args_b and len(w) > 2):
        name = old.rstrip("/").rsplit("/", 1)[-1]
        new = next((w for w in args_b if w not in args_a and w.rstrip("/").rsplit("/", 1)[-1] == name), None)
        if new and (old in output or f"'{name}" in output or f"/{name}" in output):
            swapped = (old, new)
            break
    return {"swapped": swapped, "tool": f"{tool} {sub}".strip(), "added": branchless(added, tool, sub),
            "flags": _with_values(b[1:], a), "removed": removed, "args": args_a != args_b,
            "cwd": (_cwd(failed, root, cwd[0]), _cwd(passed, root, cwd[1])),
            "env": sorted(_env(passed) - _env(failed)), "suggested": suggested,
            "revalued": _revalued(a, b, output) if tool != "git" else None,
            "retargeted": _retargeted(a, b, output) if (tool, sub) == ("git", "push") else None}


# What git (or the server's hook) says when a ref may not be pushed to: the ref is the cause.
_REFUSED = re.compile(r"protected branch|\[remote rejected\]|! \[rejected\]|declined|not allowed to push|"
                      r"GH006|pre-receive hook", re.IGNORECASE)


def _retargeted(a: list[str], b: list[str], output: str) -> tuple[str, str] | None:
    """`git push origin main` refused ("protected branch hook declined"), then `git push origin
    release/x` went: the ref pushed to changed, and the refusal was about the ref (not a flag dropped
    on the way, `--tags`)."""
    pos_a = [w for w in a[2:] if not w.startswith("-")]
    pos_b = [w for w in b[2:] if not w.startswith("-")]
    if len(pos_a) < 2 or len(pos_b) < 2 or pos_a[0] != pos_b[0] or pos_a[1:] == pos_b[1:]:
        return None
    old, new = pos_a[1], pos_b[1]
    if _REFUSED.search(output) or re.search(rf"(?<![\w/-]){re.escape(old.split(':')[-1])}(?![\w-])", output):
        return old, new
    return None


def _value_of(words: list[str], flag: str) -> str | None:
    """The value given to `flag` in `words` (`-destination X`, `--target=X`), None when it has none."""
    for i, w in enumerate(words):
        if w == flag and i + 1 < len(words) and not words[i + 1].startswith("-"):
            return words[i + 1]
        if w.startswith(flag + "="):
            return w[len(flag) + 1:]
    return None


def _revalued(a: list[str], b: list[str], output: str) -> tuple[str, str, str] | None:
    """A flag given on both sides with another value, where the failure named the flag or the old
    value (`-destination 'name=iPhone 16'` → `-destination 'id=…'` after "Unable to find a
    destination matching …"). A value the error does not speak of (a commit message) is not a cause."""
    names = {w.split("=", 1)[0] for w in _flags(a)} & {w.split("=", 1)[0] for w in _flags(b)}
    for flag in sorted(names):
        old, new = _value_of(a, flag), _value_of(b, flag)
        if old is None or new is None or old == new:
            continue
        name, bare = flag.lstrip("-"), old.strip("'\"")
        named = len(name) >= 4 and re.search(rf"(?<![\w-]){re.escape(name)}\b", output, re.I)
        if named or (len(bare) >= 4 and bare in output):
            return flag, old, new
    return None


def same_part(command: str, verb: tuple[str, str]) -> str:
    """In a passing chain (`git add x && git commit && git push`), the part that ran the failed
    command's tool and subcommand, with the `cd` before it; the whole line when none or it is one part."""
    pieces = commands.parts(command)
    for i in range(len(pieces) - 1, -1, -1):
        if not _setup(pieces[i]) and _verb(pieces[i]) == verb:
            if len(pieces) == 1:
                return command
            cds = [p for p in pieces[:i] if _CD.match(p)]
            return " && ".join(cds[-1:] + [pieces[i]])
    return command


def command_change(fail: Step, passed: Step, root: str | None) -> Diff | None:
    """The change in the invocation that explains the pass, or None (see the module docstring)."""
    failed_cmd, passed_cmd = fail.get("command") or "", passed.get("command") or ""
    passed_cmd = same_part(passed_cmd, _verb(failed_cmd))
    if not failed_cmd or not passed_cmd or _verb(failed_cmd)[0] != _verb(passed_cmd)[0]:
        return None
    d = compare(failed_cmd, passed_cmd, root, fail.get("output") or "", (fail.get("cwd"), passed.get("cwd")))
    if _verb(failed_cmd) != _verb(passed_cmd) and not d["suggested"]:
        return None  # another subcommand: another action, not the same one written another way
    flags_changed = bool(set(_flags(d["added"])) or d["removed"])
    if d["suggested"] or flags_changed or d["cwd"][0] != d["cwd"][1] or d["env"] or d["swapped"] or d["revalued"] \
            or d["retargeted"]:
        return d
    return None
