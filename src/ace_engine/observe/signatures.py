"""Reading a command's output: the signature of the error it failed with, and its summary line.

`error_signature(text, root)` is the most telling line of a failure, stable across runs and
machines: the error class plus its message (`ModuleNotFoundError: No module named 'textutil'`,
`error TS2322: …`, `** (RuntimeError) …`, `lib/a.ex: pattern_match: The pattern can never match
the type.`), never a bare `error` / `FAIL` / `{:error,` or an exit-code line, at most 200
characters and never cut mid-word. ANSI colours, absolute paths, line:column, timings, hex
addresses, hashes and temp names are removed, so two runs of the same failure give the same
string. None when nothing in the text says what went wrong.

The rules form a table (`RULES`), one row per tool format, each naming its ecosystem; rows are
tried in order and the first to yield a good line wins, so a specific format (a pytest summary,
a Python traceback, an ExUnit failure) beats a generic `error:` line, and a tool's own line beats
the wrapper that ran it (a pre-commit hook's credo issue, not "hook failed").

`outcome_line(text)` is the summary of a run (`3 passed in 0.2s`, `Found 2 errors`).

Pure, stdlib only. Cost: linear in the output, capped at 20 000 characters; ~40 regex passes.

Why one module (~440 lines): `RULES` is one ordered table whose order is the precedence between
formats, and each row's function is a few lines; split by ecosystem, that order would be
scattered across files.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator

MAX_LEN = 200
Lines = list[str]
Finder = Callable[[Lines], Iterator[str]]

# -- preparing the text --------------------------------------------------------------------------

# A real escape sequence; one shown as text (`\\x1b[31m`); or an orphan colour code whose ESC was lost (`[31m`).
_ANSI = re.compile(r"(?:\x1b|\\x1b|\\u001b|\\033)\[[0-9;?]*[A-Za-z]|\x1b[()][A-Z0-9]|\x1b|\[\d{1,3}(?:;\d{1,3})*m")
_EXIT_LINE = re.compile(r"^(?:Error: )?Exit code -?\d+\s*$|^<tool_use_error>Sibling tool call errored")
# Prefixes that only say which task printed the line: turbo `pkg:task: `, mise `[task] `, a workspace
# script run by `bun run --filter` (`@scope/pkg test: `; scoped only: `name word: ` is also prose).
_TASK_PREFIX = re.compile(r"^(?:@[\w.-]+/)?[\w.-]+[:#][A-Za-z][\w:-]*: |^@[\w.-]+/[\w.-]+ [a-z][\w:-]*: "
                          r"|^\[(?!(?:error|warn|warning|info|debug|log)\])[a-z][\w:-]*\] (?=\S)")


def _prepare(text: str) -> Lines:
    if len(text) > 20_000:
        text = text[:8_000] + "\n" + text[-12_000:]
    if "\\n\\n" in text or ("\n" not in text and "\\n" in text):  # a hook's JSON-escaped output
        text = text.replace("\\n", "\n")
    text = _ANSI.sub("", text).replace("<tool_use_error>", "").replace("</tool_use_error>", "")
    lines = []
    for line in text.splitlines():
        line = line.rsplit("\r", 1)[-1].rstrip()  # a progress bar keeps only its last state
        line = _TASK_PREFIX.sub("", line)
        if line.strip() and not _EXIT_LINE.match(line.strip()):
            lines.append(line)
    return lines


# -- what is never a signature -------------------------------------------------------------------

_META = re.compile(
    r"(?i)^\W*(?:error|fail(?:ed|ure)?|fatal|exception|warning|\{?:error,?|:error|errors?|failed tests?)\W*$"
    r"|exit(?:ed)? (?:with )?(?:exit )?(?:code|status)\s*:?\s*-?\d+|exited \(-?\d+\)|\(code -?\d+\)"
    r"|returned (?:a )?non-zero exit|^make(?:\[\d+\])?: \*\*\* \[.*\] Error \d+"
    r"|^npm (?:err!|error) (?:code elifecycle|errno|syscall|path|a complete log|lifecycle script|command failed|"
    r"signal|did you mean|to see a list|\s)|elifecycle|^\[[\w:-]+\] error task failed|\btask failed\b|"
    r"^failure: build failed with an exception|build fail(?:ed|ure)|^(?:some )?tests? failed|"
    r"see exception logs above|^error: test failed, to rerun|^error: could not compile|aborting due to|"
    r"^fix these issues before committing|^pre-commit validation failed|^\[output truncated|^command failed with exit|"
    r"^error command failed|process completed with exit|^collect2: error: ld returned|^found \d+ errors?\b|"
    r"^\W*\d+ (?:problems?|errors?|issues?|failures?|failed)\b|^total errors:|^failed \((?:failures|errors)=|"
    r"^tests?:.*\bfailed\b|^test files.*\bfailed\b|see (?:above|the log) for (?:more )?details|^halting vm|"
    r"^\*\* \(exit\)|hook failed|script failed|^\[failed\]|^err_pnpm_recursive_run_first_fail|"
    r"^error: recipe `?\S+`? failed|^task: failed to run task|^husky - |^✖ \d+ problems?")


# Go's package header before its errors (`# example.com/x [example.com/x.test]`), however a linter
# prefixed it: it names the package, not the error.
_GO_PACKAGE_HEADER = re.compile(r"(?:^|: )# [\w./-]+(?: \[[\w./-]+\])?\s*$")


def _bad(sig: str) -> bool:
    words = re.findall(r"[A-Za-z]{2,}", sig)
    return len(words) < 2 or bool(_META.search(sig.strip())) or bool(_GO_PACKAGE_HEADER.search(sig.strip()))


# -- the rules -----------------------------------------------------------------------------------

def _regex(pattern: str, render: str = r"\1", last: bool = False) -> Finder:
    """A finder from one line regex: each matching line, rendered (`\\1: \\2`), first (or last) first."""
    rx = re.compile(pattern)

    def find(lines: Lines) -> Iterator[str]:
        hits = [m.expand(render) for m in map(rx.search, lines) if m]
        yield from (reversed(hits) if last else hits)
    return find


def _after(lines: Lines, i: int, limit: int = 6) -> Iterator[tuple[int, str]]:
    """The non-empty lines after line `i`, up to `limit`."""
    for j in range(i + 1, min(len(lines), i + 1 + limit)):
        if lines[j].strip():
            yield j, lines[j].strip()


def _python_traceback(lines: Lines) -> Iterator[str]:
    """The exception line closing the last traceback (`NoSuchBucket: …`, not a warning before it)."""
    starts = [i for i, ln in enumerate(lines) if ln.strip() == "Traceback (most recent call last):"]
    for start in reversed(starts):
        for j in range(start + 1, len(lines)):
            line = lines[j]
            if line[:1].isspace() or line.startswith(("File ", "    ", "^")):
                continue
            m = re.match(r"^([A-Za-z_][\w.]*)(?::\s*(.*))?$", line.strip())
            if m:
                yield m.group(1) + (f": {m.group(2)}" if m.group(2) else "")
            break


def _elixir_raise(lines: Lines, summaries: bool = False) -> Iterator[str]:
    """`** (RuntimeError) msg`: the outermost raise. A `cannot compile module … (errors have been
    logged)` summary only with `summaries`: the compiler's own `error:` lines say more."""
    for i, line in enumerate(lines):
        m = re.match(r"^\s*\*\* \((\w[\w.]*)\)\s*(.*)$", line)
        if not m or m.group(1) in ("EXIT", "exit"):
            continue
        msg = m.group(2) or next((t for _, t in _after(lines, i, 2)), "")
        summary = "errors have been logged" in msg or "compilation failed" in msg.lower()
        if summary == summaries:
            yield f"** ({m.group(1)}) {msg}".strip()


def _elixir_diagnostic(lines: Lines) -> Iterator[str]:
    """Elixir ≥ 1.15 `error: msg` with its `└─ lib/a.ex:3:5` location a few lines down."""
    for i, line in enumerate(lines):
        m = re.match(r"^\s*error: (.+)$", line)
        if not m:
            continue
        where = next((re.search(r"└─ (\S+?\.exs?)", t) for _, t in _after(lines, i, 10) if "└─" in t), None)
        if where:
            yield f"{where.group(1)}: {m.group(1)}"


def _rust(lines: Lines) -> Iterator[str]:
    """`error[E0308]: mismatched types` (any `error:` with a `-->` location right under it)."""
    for i, line in enumerate(lines):
        m = re.match(r"^(error(?:\[E\d+\])?): (.+)$", line)
        if m and any(t.startswith("-->") for _, t in _after(lines, i, 2)):
            yield f"{m.group(1)}: {m.group(2)}"


def _rust_panic(lines: Lines) -> Iterator[str]:
    for i, line in enumerate(lines):
        m = re.match(r"^thread '([^']+)' panicked at (?:'(.+)', )?(\S+?)(?::\d+)*:?$", line)
        if m:
            msg = m.group(2) or next((t for _, t in _after(lines, i, 1)), "")
            yield f"thread '{m.group(1)}' panicked at {m.group(3)}: {msg}"


_JAVAC = re.compile(r"^(?:\[ERROR\]\s+)?(\S+\.(?:java|kt|scala|groovy)):"
                    r"(?:\[\d+,\d+\]\s+(?:error:\s*)?|\d+: error: )(.+)$")


def _javac(lines: Lines) -> Iterator[str]:
    """javac / maven `App.java:[12,5] cannot find symbol` plus its `symbol:` line."""
    for i, line in enumerate(lines):
        m = _JAVAC.match(line)
        if m:
            symbol = next((t for _, t in _after(lines, i, 3) if re.match(r"(?:\[ERROR\]\s*)?symbol:", t)), "")
            yield f"{m.group(1)}: {m.group(2)}" + (f" ({_SPACE.sub(' ', symbol.replace('[ERROR]', '')).strip()})"
                                                   if symbol else "")


def _go_test(lines: Lines) -> Iterator[str]:
    """`--- FAIL: TestX/sub` (the deepest failing subtest) with the first line it logged."""
    for i, line in enumerate(lines):
        if not line.startswith("--- FAIL: "):
            continue
        name, j = re.sub(r"\s*\(\d.*\)$", "", line[10:]), i + 1
        while j < len(lines) and lines[j].strip().startswith("--- FAIL: "):
            name, j = re.sub(r"\s*\(\d.*\)$", "", lines[j].strip()[10:]), j + 1
        msg = lines[j].strip() if j < len(lines) and lines[j][:1].isspace() else ""
        yield f"--- FAIL: {name}" + (f": {msg}" if msg else "")


def _headed(header: str, body: str, skip: str = r"$^", limit: int = 6) -> Finder:
    """A failure block: a header line, then the first body line (`● Suite › test` + its message)."""
    head_rx, body_rx, skip_rx = re.compile(header), re.compile(body), re.compile(skip)

    def find(lines: Lines) -> Iterator[str]:
        for i, line in enumerate(lines):
            m = head_rx.search(line)
            if not m:
                continue
            for _, text in _after(lines, i, limit):
                if skip_rx.search(text):
                    continue
                b = body_rx.search(text)
                if b:
                    yield ": ".join([g for g in m.groups() if g] + [b.group(1)])
                break
    return find


def _bun_test(lines: Lines) -> Iterator[str]:
    """`(fail) suite > test` with the `error: …` bun printed above it."""
    for i, line in enumerate(lines):
        m = re.match(r"^\(fail\) (.+?)(?: \[[\d.]+m?s\])?$", line)
        if m:
            err = next((lines[j].strip() for j in range(i - 1, max(-1, i - 30), -1)
                        if re.match(r"^(?:error|\w*Error): ", lines[j].strip())), "")
            yield f"{m.group(1)} - {err}" if err else f"(fail) {m.group(1)}"


def _dart_analyzer(lines: Lines) -> Iterator[str]:
    """`error • lib/a.dart:3:8 • Target of URI doesn't exist: … • uri_does_not_exist`, errors first."""
    found = []
    for line in lines:
        m = re.match(r"^\s*(error|warning|info) [•-] (\S+?):\d+:\d+ [•-] (.+?)(?: [•-] ([a-z_0-9]+))?$", line)
        if m:  # `dart analyze`: location, message, code
            found.append((m.group(1), m.group(2), m.group(3), m.group(4)))
        elif m := re.match(r"^\s*(error|warning|info) • (.+?) • (\S+?):\d+:\d+ • ([a-z_0-9]+)$", line):
            found.append((m.group(1), m.group(3), m.group(2), m.group(4)))  # `flutter analyze`: message first
    for _, path, message, code in sorted(found, key=lambda f: ("error", "warning", "info").index(f[0])):
        msg = re.split(r"(?<=[.'\"])\s+Try\b", message)[0].rstrip(".")
        yield f"{path}: {msg}" + (f" ({code})" if code else "")


def _pre_commit_section(lines: Lines) -> Iterator[str]:
    """A hook's own `[FORMAT] Code is not formatted.` section head, with the line after it."""
    for i, line in enumerate(lines):
        m = re.match(r"^\[([A-Z][A-Z _-]{2,})\]\s*(.*)$", line.strip())
        if not m or m.group(1) in _LISTR or not m.group(2):
            continue
        nxt = next((t for _, t in _after(lines, i, 1)), "")
        tail = f" {nxt}" if nxt and not nxt.startswith(("[", "Fix ")) and len(nxt) < 100 else ""
        yield f"[{m.group(1)}] {m.group(2)}{tail}"


_LISTR = {"STARTED", "COMPLETED", "SKIPPED", "SUCCESS", "INFO", "DEBUG", "WARN", "WARNING", "FAILED", "ERROR", "OK",
          "PASS", "PASSED", "DONE", "TITLE", "RUNNING"}


def _pre_commit_hook(lines: Lines) -> Iterator[str]:
    """pre-commit's `black....Failed` / `- hook id: black`: the first line the hook printed."""
    for i, line in enumerate(lines):
        m = re.match(r"^(.+?)\.{3,}\s*Failed$", line)
        if not m:
            continue
        after = [t for _, t in _after(lines, i, 8)]
        notes = [t[2:] for t in after if t.startswith("- ") and not t.startswith(("- hook id", "- exit code"))]
        output = next((t for t in after if not t.startswith("- ")), "")
        detail = output if output and not output.endswith(("Failed", "Passed", "Skipped")) else next(iter(notes), "")
        if detail:
            yield f"{m.group(1).strip()}: {detail}"


def _npm(lines: Lines) -> Iterator[str]:
    """npm's own message line (`npm error Missing script: "lint"`), else its error code."""
    codes = []
    for line in lines:
        m = re.match(r"^npm (?:ERR!|error) (.*)$", line)
        if not m:
            continue
        msg = m.group(1).strip()
        if msg.startswith("code "):
            codes.append(f"npm error {msg}")
        elif msg and not _META.search(line):
            yield "npm error " + re.sub(r"^(\d{3}) \1 ", r"\1 ", msg)  # `403 403 Forbidden` → `403 Forbidden`
    yield from codes


_SPACE = re.compile(r"\s+")
_SHELL_PREFIX = r"(?:^|: )(?:\(eval\):\d+: |(?:\S*/)?(?:ba|z|da|k)?sh: (?:line \d+: |\d+: )?)?"

# (ecosystem, name, finder): tried in order; the first good line wins.
RULES: tuple[tuple[str, str, Finder], ...] = (
    ("python", "pytest summary", _regex(r"^(?:FAILED|ERROR) (\S+::\S+|\S+\.py)(?: - (.+))?$", r"\1 - \2")),
    ("python", "traceback", _python_traceback),
    ("python", "pytest E line", _regex(r"^E\s{2,}((?:[\w.]+(?:Error|Exception|Exit)\b|assert\b).*)$")),
    ("elixir", "raise", _elixir_raise),
    ("elixir", "compiler", _elixir_diagnostic),
    ("elixir", "compile summary", lambda lines: _elixir_raise(lines, summaries=True)),
    ("rust", "msrv", _headed(r"^(error: rustc [\d.]+ is not supported by the following packages?):$",
                             r"^\s*(\S+ requires rustc [\d.]+)")),  # cargo: the dependency that needs it
    ("rust", "compiler", _rust),
    ("rust", "panic", _rust_panic),
    ("markdown", "markdownlint", _regex(
        r"^(\S+?)(?::\d+)+ (?:error )?(MD\d{3}(?:/[\w-]+)+) (.+?)(?: \[Context: .*\])?$", r"\1: \2 \3")),
    ("typescript", "tsc", _regex(r"\berror (TS\d+): (.+)$", r"error \1: \2")),
    ("java", "javac/maven", _javac),
    ("c/go/swift/dart", "compiler error", _regex(
        r"^\s*(?:file://)?(\S+?\.\w+)(?::\d+)+:?\s+(?:-\s+)?(?:fatal )?[Ee]rror:\s+(.+)$", r"\1: error: \2")),
    ("kotlin", "compiler", _regex(r"^e: (?:file://)?(\S+?\.kts?)(?::\d+)+:?\s+(.+)$", r"\1: \2")),
    ("c", "linker", _regex(r"(undefined reference to [`'].+?'|Undefined symbols for architecture \S+|"
                           r"ld: symbol\(s\) not found.*|ld: library not found for \S+)")),
    # golangci-lint: `file.go:90: 90-109 lines are duplicate of … (dupl)` — the linter's name ends the line.
    ("go", "golangci-lint", _regex(r"^(\S+\.go):\d+(?::\d+)?:? (?:\d+-\d+ )?(.+ \([a-z][\w-]*\))$", r"\1: \2")),
    ("go", "panic", _regex(r"^(panic: .+)$")),
    ("go", "test", _go_test),
    ("elixir", "credo", _regex(r"^[┃│\s]*\[([A-Z])\] [↘↗→↓↑]? ?(?:\S+:\d+(?::\d+)? )?(.+)$", r"[\1] \2")),
    ("elixir", "dialyzer", _headed(r"^(\S+\.exs?):\d+(?::\d+)?:(\w+)$", r"^(.+)$")),
    ("elixir", "dialyzer (old)", _regex(r"^(\S+\.exs?):\d+(?::\d+)?:(\w+) (.+)$", r"\1: \2: \3")),
    ("dart", "analyzer", _dart_analyzer),
    ("dart", "test", _headed(r"^The following (\w+) (?:object )?was thrown", r"^(.+)$")),
    ("any", "file:line:col diagnostic", _regex(
        r"^(?!\s)((?:[A-Za-z]:)?[^\s:]+\.[A-Za-z]\w{0,6}):\d+(?::\d+)?:? (?!\d)(?!warning|note|info|hint)(.+)$",
        r"\1: \2")),
    ("javascript", "eslint", _regex(r"^\s+\d+:\d+\s+error\s+(.+?)\s{2,}(\S+)$", r"\1 (\2)")),
    ("javascript", "jest", _headed(r"^\s*● (?!Console)(.+)$", r"^(.+)$")),
    ("javascript", "vitest", _headed(r"^\s*FAIL\s+(\S+\.\w+ > .+)$", r"^(\w*(?:Error|Exception)\b.*)$")),
    ("javascript", "bun test", _bun_test),
    ("ruby", "rspec", _headed(r"^\s*\d+\) (.+)$", r"^(Failure/Error: .+)$")),
    ("ruby", "minitest", _headed(r"^\s*(?:\d+\) (?:Failure|Error):\s*)?(\w[\w:]*#\w+)(?: \[.*\])?:$", r"^(.+)$")),
    ("elixir", "exunit", _headed(r"^\s*\d+\) (test .+ \(\S+\))$", r"^(.+)$", skip=r"^\S+\.exs?:\d+$")),
    ("jvm", "gradle test", _headed(r"^(\S.* > .+) FAILED$", r"^(\S+?)(?: at \S+)?$")),
    ("jvm", "maven test", _regex(r"^\[ERROR\]\s+(\w[\w.$]*\.\w+):\d+ (.+)$", r"\1: \2")),
    ("jvm", "caused by", _regex(r"^Caused by: ([\w.$]+(?:Exception|Error)\b.*)$", last=True)),
    ("jvm", "uncaught", _regex(r"^Exception in thread \"[^\"]*\" (.+)$")),
    ("jvm", "gradle", _headed(r"^\* (What went wrong):$", r"^(.+)$")),
    ("ruby", "uncaught", _regex(r"^\S+:\d+:in [`'][^']*': (.+) \((\w+(?:::\w+)*)\)$", r"\2: \1")),
    ("any", "exception class", _regex(
        r"^\s*(?:E\s+|Uncaught\s+|Unhandled exception:\s*)?((?:[a-z_]\w*\.)*[A-Z]\w*(?:Error|Exception|Exit|Interrupt|"
        r"Failure|Fault|NotFound|Timeout)|Error|[A-Z][\w.]*Error \[\w+\]|E[A-Z]{3,})(?::\s+|\s+-\s+)(.+)$", r"\1: \2")),
    ("javascript", "npm", _npm),
    ("javascript", "pnpm", _regex(r"^\s*(ERR_PNPM_\w+)\s+(.+)$", r"\1 \2")),
    ("git", "push rejected", _regex(r"^\s*! \[(?:remote )?rejected\].*?(\([^)]+\))$", r"! [rejected] \1")),
    ("git", "conflict", _regex(r"^(CONFLICT \(.+)$")),
    # gh marks a refusal with an `X` (its ✗ in plain text): `X Pull request acme/shop#12 is not mergeable: …`.
    ("gh", "refusal mark", _regex(r"^X ((?=.*\b(?:not|cannot|can't|failed|prohibits?|denied|must|requires?|unable)\b)"
                                  r".{12,})$")),
    ("git", "ignored", _headed(r"^(The following paths are ignored by one of your \.gitignore files):$", r"^(\S+)$")),
    ("shell", "shell", _regex(
        _SHELL_PREFIX + r"((?:\S+: )?(?:command not found|[Nn]o such file or directory|not found)(?:: \S+)?$|"
        r"(?:command not found|no such file or directory|no matches found|permission denied|read-only variable|"
        r"parse error near|bad substitution|can't create temp file for here document)(?::.*)?$|"
        r"\S+: (?:readonly variable|unbound variable|Permission denied|cannot execute.*)$|"
        r"syntax error near unexpected token .+$|\S+: cannot access .+$)")),
    ("tools", "tool error", _regex(r"(?:^|(?<=[}\]]))(\w[\w-]* Error|gh|go|docker|kubectl|terraform|helm|wrangler|"
                                   r"vercel|doppler|supabase|fly|aws|gcloud|mise|uv|poetry|pip|bundler?|gem|composer|"
                                   r"dotnet|swift|flutter|dart|deno|bun|cargo|rustup|brew|just|cmake|xcodebuild|"
                                   r"GraphQL): (?:error: )?(.+)$", r"\1: \2")),
    ("tools", "[ERROR] line", _regex(r"^\W{0,3}\[ERROR\]\s+(.+)$", r"[ERROR] \1")),
    ("tools", "error: line", _regex(r"^(?:error|fatal|ERROR|FATAL|Error)(?:\[\w+\])?:\s+(.+)$", r"error: \1")),
    ("hooks", "section", _pre_commit_section),
    ("hooks", "pre-commit", _pre_commit_hook),
    # Well-known one-line messages, up to their first sentence: the advice after it is not the error.
    ("any", "known message", _regex(
        r"^\s*(.*?(?:nothing to commit|no changes added to commit|The previous cherry-pick is now empty|"
        r"Your branch (?:is behind|and '\S+' have diverged)|not a git repository|Permission denied \(publickey\)|"
        r"Could not resolve host|Connection refused|address already in use|No space left on device|"
        r"version solving failed|Could not find a version that satisfies|String to replace not found|"
        r"File has not been read yet|File has been modified since read|File does not exist|"
        r"Found \d+ matches of the string to replace|exceeds maximum allowed tokens|"
        r"Your proposed edit has introduced new syntax error|You must specify|Unable to (?:fetch|find|locate)|"
        r"This is not the tsc command you are looking for|would reformat \S+|Code style issues found|"
        r"Diff in \S+ at line|No rule to make target|did not match any (?:test )?files?|No tests? found)"
        r"[^.!?]*[.!?]?)")),
    ("any", "warning", _regex(r"^\s*((?:[\w.]+Warning|warning|WARNING|WARN)(?::|\s)\s*.+)$")),
    ("any", "error word", _regex(r"^\s*((?![{(\"'`<#/]).*\b(?:[Ee]rror|ERROR|[Ff]atal|FATAL|FAIL(?:ED|URE)?|[Ff]ailed|"
                                 r"[Ff]ailure|[Ee]xception)\b.*)$")),
)


def error_signature(text: str | None, root: str | None = None) -> str | None:
    """The most telling line of a failure, normalised (see the module docstring); None when the
    text holds nothing recognisable."""
    if not text:
        return None
    lines = _prepare(str(text))
    if not lines:
        return None
    for _, name, find in RULES:
        for found in find(lines):
            # A generic line that long is data (a dump, a JSON blob), not an error message.
            if not found or len(found) > (300 if name == "error word" else 4000) or _bad(found):
                continue
            sig = normalize_signature(found, root)
            if sig and not _bad(sig):
                return sig
    return None


# -- normalising ---------------------------------------------------------------------------------

_WIN_PATH = re.compile(r"\b[A-Za-z]:[\\/](?:[^\\/\s'\"():,]+[\\/])+")
_ABS_PATH = re.compile(r"(?<![\w.:/~$@-])(?:~|/)(?:[^\s/'\"():,;]+/)+")
_LINE_COL = re.compile(r"(\.[A-Za-z]\w{0,9})(?:(?::\d+)+|\(\d+(?:,\d+)?\)|:\[\d+,\d+\]|, line \d+)(?=[:\s)\],']|$)")
_DURATION = r"(?:\d+m)?\d+(?:\.\d+)?\s?(?:ms|s|sec|secs|seconds)\b"
# A run's own timing (`(0.00s)`, `in 0.31s`, `took 12ms`, `0m12.17s`), not a limit the message
# names ("took longer than 5s").
_TIMING = re.compile(rf"\s*[\[(](?:took |in )?{_DURATION}[\])]|\s+(?:in|after|took)\s+{_DURATION}"
                     r"|\b\d+m\d+(?:\.\d+)?s\b")
# What stands for a value that differs run to run, in the order it is replaced (a hash inside a UUID
# is the UUID's): memory addresses, UUIDs, hashes, clock times, temporary names, markdownlint's count.
_VOLATILE = tuple((re.compile(pattern), mark) for pattern, mark in (
    (r"\b0x[0-9a-fA-F]{4,}\b", "<addr>"),
    (r"\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b", "<id>"),
    (r"\b(?=[0-9a-f]*\d)(?=[0-9a-f]*[a-f])[0-9a-f]{7,64}\b", "<hash>"),
    (r"\b\d{4}-\d\d-\d\dT\d\d[:_]\d\d[:_]\d\d(?:[._]\d+)?Z?|\b\d\d:\d\d:\d\d(?:\.\d+)?\b", "<time>"),
    (r"\btmp(?=[\w-]*\d)[\w-]{5,}|#PID<[\d.]+>|<\d+\.\d+\.\d+>", "<tmp>"),
    (r"; Actual: \d+", ""),
))


def normalize_signature(sig: str, root: str | None = None) -> str:
    """Stable across runs and machines: no project root or other absolute path, no line:column,
    timings, addresses, hashes or temp names; ≤ 200 characters, cut at a word boundary."""
    sig = _ANSI.sub("", sig)
    if root:
        sig = sig.replace(root.rstrip("/") + "/", "")
    sig = sig.replace("file://", "")
    sig = _WIN_PATH.sub("…/", sig)
    sig = _ABS_PATH.sub("…/", sig)
    sig = _LINE_COL.sub(r"\1", sig)
    sig = _TIMING.sub("", sig)
    for pattern, mark in _VOLATILE:
        sig = pattern.sub(mark, sig)
    sig = _SPACE.sub(" ", sig).strip().lstrip(":").rstrip(" :-").strip()
    return shorten(sig, MAX_LEN)


def shorten(text: str, limit: int = MAX_LEN) -> str:
    """`text` in at most `limit` characters, cut at a word boundary and marked ` …` (a space
    before the ellipsis: glued to a word it would read as that word cut short)."""
    if len(text) <= limit:
        return text
    cut = text[: limit - 2]
    if " " in cut:
        cut = cut[: cut.rindex(" ")]
    return cut.rstrip(" ,;:-") + " …"


# -- the summary of a run ------------------------------------------------------------------------

_SUMMARY = re.compile(
    r"(\d+ (?:passed|failed|errors?|skipped|tests?)\b.*|test result: .*|Tests?: .*\d+ (?:passed|failed).*|"
    r"^(?:ok|FAIL)\s+\S+.*|Found \d+ errors?.*|All checks passed!?|Success: no issues found.*|"
    r"\d+ problems? \(.*\)|Compiled successfully.*|Build succeeded.*|built in .*)$",
    re.MULTILINE)


def outcome_line(text: str | None) -> str | None:
    """The summary line of a check's output (`3 passed in 0.2s`, `Found 2 errors`), else the last
    non-empty line, shortened."""
    if not text:
        return None
    tail = str(text)[-6000:]
    found = _SUMMARY.findall(tail)
    if found:
        return _SPACE.sub(" ", found[-1]).strip()[:160]
    for line in reversed(tail.splitlines()):
        line = line.strip()
        if line and not _EXIT_LINE.match(line):
            return line[:160]
    return None
