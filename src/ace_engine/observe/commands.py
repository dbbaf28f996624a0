"""Shell commands as the learner sees them: the core command inside the noise agents wrap it in,
what kind of command it is, and its project-level form.

`key("cd /repo && FOO=1 uv run pytest -q tests 2>&1 | tail -20")` → `uv run pytest -q tests`:
the normalised command that groups runs and is shown in lessons. It holds no commit message
(`git commit -m '…'` → `git commit`), no heredoc body, no branch name (`git push -u origin x` →
`git push -u origin HEAD`, `git checkout -b x` → `git checkout -b <branch>`), no output filter
(`2>&1 | tail -50`, `| grep x`) and no leading `cd`. Commands that need none of that keep the
key they always had (the store groups command history by it).

`kind(...)` → `test` (the table lives in `check_tools.py`); `family(...)` → `pytest`: two runs of
the same family are "the same check" even with different arguments, which is how an error →
fix → pass sequence is recognised. `general(...)` is the project-level form of a check (file
arguments and test ids gone: `pytest tests/x.py::t -q` → `pytest -q`); `is_throwaway(...)` tells
a one-off script (`python reproduce.py`, `node -e …`) from the project's own checks.
`covers(later, fail)`: does a passing run of `later` show the failure of `fail` gone (the same
check on the same or more targets, or one part of a passing `&&` chain)?

Error signatures live in `signatures.py`; `error_signature`, `normalize_signature` and
`outcome_line` are re-exported here for existing callers. Pure string work, stdlib only; each
call is a few regex passes over one command line.

Why one module (~430 lines): `key`, `kind`, `family` and `general` share one tokenizer (`parts`,
`_split`, `_words`) and must agree on it, since the store groups command history by `key`; the
other half that once lived here, error signatures, is already its own module.
"""

from __future__ import annotations

import re
from functools import lru_cache

from . import check_tools
from .signatures import error_signature, normalize_signature, outcome_line

__all__ = ["CHECK_KINDS", "clean", "parts", "key", "kind", "family", "same_check", "general", "is_throwaway",
           "is_state_changing", "error_signature", "normalize_signature", "outcome_line"]

CHECK_KINDS = ("test", "build", "lint", "typecheck", "format")

# -- reading a command line ----------------------------------------------------------------------

_ENV_ASSIGN = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=(?:'[^']*'|\"[^\"]*\"|\S*)\s+")
_TRAILING_NOISE = re.compile(
    r"(?:\s*(?:\d?>&\d|&>\s*/dev/null|\d?>\s*/dev/null|;\s*echo\s+\S*\$\?\S*|\|\|\s*true))+\s*$")
_FILTER = re.compile(r"^(?:tail|head|less|more|cat|grep|egrep|rg|tee|sort|uniq|wc|cut)\b[^>]*$")
_WRAPPER = re.compile(r"^(?:timeout\s+\S+\s+|time\s+|nice\s+(?:-n\s*\d+\s+)?|command\s+|exec\s+)")
_SETUP = re.compile(r"^(?:cd|pushd|popd|source|\.|export|set|unset|alias)(?:\s|$)")
_SPACE = re.compile(r"\s+")
_HEREDOC = re.compile(r"<<([-~]?)[ \t]*(['\"]?)([A-Za-z_][\w-]*)\2")
_COMPOUND = re.compile(r"^(?:for|while|until|if|case|select)\s")
_CONTINUES = re.compile(r"(?:&&|\|\||\||\\|\(|\{|;|\b(?:do|then|else|in))\s*$")


def _drop_heredocs(text: str) -> str:
    """`cat <<'EOF'\\n…\\nEOF` → `cat <<'EOF' …`: the body is data, not the command. Works on a
    command already joined to one line too (`<<'EOF' body EOF )`), and on one cut short."""
    pos = 0
    while (m := _HEREDOC.search(text, pos)) is not None:
        word = re.escape(m.group(3))
        line_end = text.find("\n", m.end())
        end = re.compile(rf"\n[ \t]*{word}[ \t]*(?=\n|$)").search(text, line_end) if line_end >= 0 else None
        if end is not None:
            text = text[:line_end] + " …" + text[end.end():]
        elif (inline := re.compile(rf"\s{word}(?=\s*(?:\)|$|[;&|]))").search(text, m.end())) is not None:
            text = text[:m.end()] + " …" + text[inline.end():]
        elif m.group(2) or m.group(3).isupper():
            text = text[:m.end()] + " …"  # cut short before its end: the rest is body
        # else `x << y` in quoted code is a shift, not a heredoc
        pos = m.end() + 2
    return text


def _join_lines(text: str) -> str:
    """Lines of a script joined as the shell reads them: `a\\nb` → `a; b`, `a &&\\nb` → `a && b`."""
    out: list[str] = []
    quote = ""
    for i, ch in enumerate(text):
        if quote:
            quote = "" if ch == quote and text[i - 1] != "\\" else quote
        elif ch in "'\"":
            quote = ch
        elif ch == "\n":
            before = "".join(out[-40:]).rstrip()
            if before.endswith("\\"):
                out[-1] = " " if out[-1] == "\\" else out[-1]
                continue
            out.append(" " if not before or _CONTINUES.search(before) else "; ")
            continue
        out.append(ch)
    return "".join(out)


@lru_cache(maxsize=4096)  # pure, and called for every step by several miners
def clean(command: str) -> str:
    """One line, collapsed spaces, heredoc bodies and output plumbing (`2>&1 | tail -20`) dropped."""
    text = _SPACE.sub(" ", _join_lines(_drop_heredocs(str(command)))).strip()
    return _strip_filters(text)


def _strip_filters(text: str) -> str:
    """`cmd 2>&1 | grep -E 'a|b' | tail -5` → `cmd`: the filters only trim what the agent reads."""
    for _ in range(4):
        before = text = _TRAILING_NOISE.sub("", text)
        stages = _split(text, ("|",)) if "|" in text else [text]
        if len(stages) > 1 and _FILTER.match(stages[-1]) and len(_split(stages[-1])) == 1:
            text = " | ".join(stages[:-1])
        if text == before:
            break
    return text.strip()


def _split(text: str, seps: tuple[str, ...] = ("&&", "||", ";")) -> list[str]:
    """`text` cut at the separators that stand outside quotes and `$( … )`."""
    out, start, i, quote, depth = [], 0, 0, "", 0
    while i < len(text):
        ch = text[i]
        if ch == "\\" and quote != "'":
            i += 2
            continue
        if quote:
            quote = "" if ch == quote else quote
        elif ch in "'\"`":
            quote = ch
        elif text.startswith("$(", i):
            depth += 1
        elif ch == ")" and depth:
            depth -= 1
        elif not depth:
            sep = next((s for s in seps if text.startswith(s, i)), None)
            if sep and not (sep == "|" and (text.startswith("||", i) or text[i - 1:i] == "|")):
                out.append(text[start:i])
                start = i + len(sep)
                i = start
                continue
        i += 1
    out.append(text[start:])
    return [p.strip() for p in out if p.strip()]


def _words(text: str) -> list[str]:
    """Shell words, quotes kept (`git commit -m "a b"` → [git, commit, -m, "a b"])."""
    return _split(text, (" ",))


def _unparen(piece: str) -> str:
    if piece.startswith("(") and piece.count("(") > piece.count(")"):
        piece = piece[1:].strip()
    if piece.endswith(")") and piece.count(")") > piece.count("("):
        piece = piece[:-1].strip()
    return piece


def parts(command: str) -> list[str]:
    """The commands of a `a && b; c` line, each cleaned of env assignments, wrappers and output filters."""
    return list(_parts(command))


@lru_cache(maxsize=4096)  # pure, and the change-finder asks for every step's parts several times
def _parts(command: str) -> tuple[str, ...]:
    out = []
    for piece in _split(clean(command)):
        piece = _unparen(piece)
        while True:
            stripped = _WRAPPER.sub("", _ENV_ASSIGN.sub("", piece))
            if stripped == piece:
                break
            piece = stripped
        piece = _strip_filters(piece)
        if piece:
            out.append(piece)
    return tuple(out)


@lru_cache(maxsize=4096)  # pure, and called for every step by several miners
def key(command: str) -> str:
    """The command that matters: the last check-like part of the line (else its last part), not
    counting `cd` / `source` / `export`, normalised as the module docstring says."""
    pieces = [p for p in parts(command) if not _SETUP.match(p)]
    if not pieces:
        return clean(command)[:300]
    if _COMPOUND.match(pieces[0]):  # `for f in *; do …; done`: the loop is the command
        return "; ".join(pieces)[:300]
    # Prefer the last check-like part (`pip install -e . && pytest -q` is a test run).
    chosen = next((p for p in reversed(pieces) if kind(p) in CHECK_KINDS), pieces[-1])
    return _normalize_git(chosen)[:300]


# -- git: no messages, no branch names -----------------------------------------------------------

_SHA = re.compile(r"^(?=[0-9a-f]*\d)[0-9a-f]{7,40}$")
_VERSION_TAG = re.compile(r"^v?\d+(?:\.\d+)+")


def _normalize_git(piece: str) -> str:
    words = _words(piece)
    if len(words) < 2 or words[0] != "git":
        return piece
    i = 1
    while i < len(words) and words[i].startswith("-"):
        i += 2 if words[i] in ("-C", "-c", "--git-dir", "--work-tree") else 1
    if i >= len(words):
        return piece
    sub, args = words[i], words[i + 1:]
    if sub == "commit":
        args = _without_message(args)
    elif sub == "push":
        args = _push_args(args)
    elif sub in ("checkout", "switch", "branch", "worktree", "pull"):
        args = _branch_args(sub, args)
    if sub in ("cherry-pick", "revert", "reset", "rebase", "checkout", "show", "diff", "log"):
        args = [("<commit>" if _SHA.match(a) else a) for a in args]
        args = [a for n, a in enumerate(args) if not (a == "<commit>" and n and args[n - 1] == "<commit>")]
    return " ".join(words[:i + 1] + args)


def _without_message(args: list[str]) -> list[str]:
    out, skip = [], False
    for arg in args:
        if skip:
            skip = False
        elif arg in ("-m", "--message", "-F", "--file"):
            skip = True
        elif arg.startswith(("--message=", "--file=")) or re.match(r"^-m.", arg):
            continue
        elif re.match(r"^-[a-zA-Z]*m$", arg):  # `-am "msg"`: keep `-a`
            out.append(arg[:-1])
            skip = True
        else:
            out.append(arg)
    return out


def _push_args(args: list[str]) -> list[str]:
    flags = ["-u" if a == "--set-upstream" else a for a in args if a.startswith("-") or re.match(r"^\d?[<>|&]", a)]
    positional = [a for a in args if a not in flags and a != "--set-upstream"]
    if len(positional) < 2 or "--tags" in flags:
        return flags + positional
    refs = [a if _VERSION_TAG.match(a) else ("<branch>" if {"-d", "--delete"} & set(flags) else "HEAD")
            for a in positional[1:]]
    return flags + [positional[0]] + list(dict.fromkeys(refs))


_NAMING = {"checkout": {"-b", "-B", "--orphan"}, "switch": {"-c", "-C", "--create", "--force-create"},
           "branch": {"-d", "-D", "-m", "-M", "-c", "-C", "--delete", "--move", "--copy"},
           "worktree": {"-b", "-B"}, "pull": set()}


def _branch_args(sub: str, args: list[str]) -> list[str]:
    """The branch a command names, as `<branch>`; `git checkout -- file` and `git branch -a` stay."""
    out, naming = [], False
    positional = 0
    for arg in args:
        if arg.startswith("-") or re.match(r"^\d?[<>|&]", arg):
            naming = naming and not arg.startswith("-") or arg in _NAMING[sub]
            out.append(arg)
            continue
        positional += 1
        named = (naming or (sub == "switch" and positional == 1) or (sub == "branch" and positional == 1)
                 or (sub == "pull" and positional >= 2))
        out.append("<branch>" if named and arg != "HEAD" else arg)
        naming = naming and sub == "branch"  # `git branch -D a b` names both
    return out


# -- classifying ---------------------------------------------------------------------------------

@lru_cache(maxsize=4096)  # pure, and called for every step by several miners
def kind(command: str) -> str:
    """test / build / lint / typecheck / format / install / vcs / readonly / other, of the command
    that matters in the line (see `key`). A line is read-only only if every part is."""
    pieces = parts(command)
    if not pieces:
        return "readonly"
    kinds = [_kind_one(p) for p in pieces]
    for wanted in CHECK_KINDS + ("install", "vcs"):
        if wanted in kinds:
            return wanted
    if all(k == "readonly" or k == "cd" for k in kinds):
        return "readonly"
    return "other"


def _blank_quotes(piece: str) -> str:
    return re.sub(r"'[^']*'|\"(?:[^\"\\]|\\.)*\"", "''", piece)


def _kind_one(piece: str) -> str:
    if _SETUP.match(piece):
        return "cd"
    stages = _split(piece, ("|",))
    if len(stages) > 1:  # a pipeline is as read-only as its least read-only stage
        return next((k for k in map(_kind_one, stages) if k not in ("readonly", "cd")), "readonly")
    bare = _blank_quotes(piece)
    if "sed -i" in bare or re.search(r"(?<![<>2&])>>?\s*[^\s&|]", bare):
        if not re.search(r">\s*/dev/null", bare):
            return "other"  # writes a file
    return check_tools.classify(piece)


def is_state_changing(command: str) -> bool:
    """Does this command do work (anything but reading and `ace` itself)?"""
    return kind(command) != "readonly"


_SUBCOMMAND_TOOLS = {"npm", "pnpm", "yarn", "bun", "cargo", "go", "make", "git", "docker", "dotnet", "mvn", "gradle",
                     "deno", "mix", "swift", "uv", "poetry", "pip", "pip3", "kubectl", "terraform", "dart", "flutter",
                     "just", "task", "mise", "rake", "gh", "bundle", "composer", "hatch", "nx", "turbo", "gradlew"}


@lru_cache(maxsize=4096)  # pure, and called for every step by several miners
def family(command: str) -> str:
    """The tool behind a command, for "is this the same check again?": `python -m pytest -q
    tests/a.py` and `uv run pytest` are both `pytest`; `npm run test:unit` is `npm test`;
    `mise run lint` is `mise lint`."""
    core = check_tools.strip_launchers(key(command))
    core = re.sub(r"^(?:\S*/)?python[\d.]*\s+(?=[^-\s])", "", core)  # `python x.py` → the script
    words = core.split()
    if not words:
        return ""
    tool = words[0].rsplit("/", 1)[-1]
    task = check_tools.runner_task(words)
    if task:  # `npm run test:unit` → npm test; gradle's `:app:test` → gradlew test
        return f"{tool} {task.rsplit(':', 1)[-1] if task.startswith(':') else task.split(':')[0]}"
    if tool in _SUBCOMMAND_TOOLS and len(words) > 1:
        sub = next((w for w in words[1:] if not w.startswith("-")), None)
        if sub is None or tool == "make":
            return tool
        return f"{tool} {sub.split(':')[0]}"
    return tool


def same_check(a: str, b: str) -> bool:
    """Two runs of the same check (or the same git operation), arguments aside."""
    return key(a) == key(b) or (family(a) == family(b) and kind(a) == kind(b) and kind(a) in CHECK_KINDS + ("vcs",))


# -- the project-level form of a check, and one-off scripts --------------------------------------

_FILE_LIKE = re.compile(r"::|:\d+(?::\d+)?$|^(?!\.\.\.$)[^-].*\.[A-Za-z]\w{0,6}$")


@lru_cache(maxsize=4096)  # pure, and called for every step by several miners
def general(command: str) -> str:
    """The project-level form of a check: its file arguments, test ids, test-name filters and
    directories two levels deep dropped (`mix test test/a_test.exs` → `mix test`, `pytest
    tests/x.py::t -q` → `pytest -q`, `dart analyze lib/features/x/` → `dart analyze`). Go
    package patterns become `./...` (`go test -run TestX ./pkg/foo` → `go test ./...`): the
    project's run covers every package. Top-level directories (`tests`, `src`, `.`) and
    `src/<package>` stay: they are how a project runs the whole check. Not a check → `key`."""
    core = key(command)
    if kind(core) not in ("test", "lint", "typecheck", "format"):
        return core  # a build's arguments say what to build (`go build ./cmd/x`, `docker build -f …`)
    words = _words(core)
    tool = check_tools.strip_launchers(core).split()[0].rsplit("/", 1)[-1]
    is_go = tool in ("go", "golangci-lint", "staticcheck", "gotestsum")
    out: list[str] = words[:1]
    packages = skip = keep = False
    for word in words[1:]:
        bare = word.strip("'\"")
        if skip or keep:
            out += [word] if keep else []
            skip = keep = False
            continue
        name = bare.split("=", 1)[0]
        if name in check_tools.TEST_SELECTORS or name in check_tools.TEST_SELECTOR_FLAGS:
            skip = "=" not in bare and name in check_tools.TEST_SELECTORS
        elif bare.startswith("-"):
            out.append(word)
            keep = bare in check_tools.SETTING_OPTIONS
        elif is_go and (bare.startswith((".", "/")) or "/" in bare):
            packages = True
        elif tool == "cargo" and "test" in out[1:]:
            continue  # `cargo test name_filter`
        elif not _narrow(bare):
            out.append(word)
    if packages:
        out.append("./...")
    while out and out[-1] == "--":
        out.pop()
    return " ".join(out)


def _narrow(arg: str) -> bool:
    """A file, a test id or a directory below the project's top level (`tests/unit/`)."""
    if _FILE_LIKE.search(arg):
        return True
    comps = [c for c in arg.strip("/").split("/") if c not in (".", "")]
    return len(comps) >= 2 and not (comps[0] == "src" and len(comps) == 2)


_INTERPRETERS = re.compile(r"^(?:python[\d.]*|node|nodejs|bun|deno|tsx|ts-node|ruby|perl|php|Rscript|julia|elixir|"
                           r"bash|sh|zsh|go)$")
_INLINE_CODE = {"-c", "-e", "--eval", "-p", "--print", "-", "-r", "eval", "-lc", "-ec"}
_SCRATCH = re.compile(r"^(?:repro|reproduce|debug|scratch|tmp|temp|try|quick|sandbox|playground|verify_fix|test_fix)"
                      r"[\w.-]*\.\w+$", re.I)
_TMP = re.compile(r"^(?:/tmp/|/private/tmp/|/var/folders/|/dev/shm/|\$\{?TMPDIR\}?|~/tmp/|[A-Za-z]:[\\/].*Temp[\\/])")


def is_throwaway(command: str, created_files: frozenset[str] = frozenset()) -> bool:
    """A one-off run rather than one of the project's checks: inline code (`python -c`, `node -e`,
    `python - <<'PY'`), a script in a temp dir (`go run /tmp/x.go`), a scratch script
    (`python reproduce.py`), a script the agent wrote this session (its path in `created_files`),
    an ad hoc `bash -c` or `for …; do …; done` loop."""
    line = key(command)
    if re.match(r"^(?:for|while|until)\s", line):
        return True
    core = check_tools.strip_launchers(line)
    words = [w.strip("'\"") for w in _words(core)]
    if not words or not _INTERPRETERS.match(words[0].rsplit("/", 1)[-1]):
        first = _words(line)[:1]  # the script as written (`./repro.sh`), before launchers are read
        return bool(first) and _script_is_throwaway(first[0], created_files, bare=True)
    tool = words[0].rsplit("/", 1)[-1]
    args = words[1:]
    if tool in ("go", "bun", "deno") and args[:1] == ["run"]:
        args = args[1:]  # `go run /tmp/x.go`, `bun run /tmp/x.ts`
    elif tool == "go":
        return False
    if tool in ("bash", "sh", "zsh") and args and args[0] in _INLINE_CODE:
        return kind(" ".join(args[1:2])) not in CHECK_KINDS
    for arg in args:
        if arg in _INLINE_CODE or arg.startswith("<<"):
            return True
        if arg == "-m":
            return False  # a module: `python -m pytest`
        if not arg.startswith("-"):
            return _script_is_throwaway(arg, created_files)
    return False


def _script_is_throwaway(path: str, created: frozenset[str], bare: bool = False) -> bool:
    if bare and not path.startswith(("./", "/", "~")):
        return False  # a tool on PATH, not a script
    rel = path[2:] if path.startswith("./") else path
    if any(rel == f or f.endswith("/" + rel) or rel.endswith("/" + f.lstrip("./")) for f in created):
        return True
    return bool(_TMP.match(path)) or ("/" not in rel and bool(_SCRATCH.match(rel)))


def targets(command: str) -> set[str]:
    """The file / test arguments of a command (what it runs on), normalised."""
    words = key(command).split()[1:]
    return {w.lstrip("./") for w in words if ("/" in w or "." in w.strip("./")) and not w.startswith("-")}


@lru_cache(maxsize=4096)
def and_parts(command: str) -> tuple[str, ...]:
    """The parts of an `a && b && c` line (all of them ran and passed when the line passed); () for
    a single command or a line with `;` / `||` (its exit code speaks for its last part only)."""
    if "&&" not in command or re.search(r";|\|\|", clean(command)):
        return ()
    return tuple(p for p in parts(command) if not p.startswith(("cd ", "export ", "source ")))


def covers(later: str, fail: str) -> bool:
    """Does a run of `later` show that the failure of `fail` is gone? A passing `&&` chain covers
    a failure of any of its parts."""
    return covers_one(later, fail) or any(covers_one(p, fail) for p in and_parts(later))


def covers_one(later: str, fail: str) -> bool:
    if key(later) == key(fail):
        return True
    if not same_check(later, fail):
        return False
    mine, theirs = targets(fail), targets(later)
    return not theirs or mine <= theirs
