"""What a lesson would run, read as a shell reads it: the commands of a lesson, tokenized and unwrapped.

`read(text, programs)` finds every command in a lesson (`command_spans.commands`: fenced lines, code spans,
shell-looking clauses of prose) and returns them as `Run`s, in order: the program that really runs (wrappers
unwrapped: `env [VAR=x…] [-i -u x]`, `command`, `exec`, `sudo` / `doas [-u x]`, `nice`, `nohup`, `time`,
`timeout N`, `stdbuf`, `setsid`, `busybox APPLET`, `xargs [opts] CMD`; `sh -c` / `bash -c` / `eval` strings
and `$(…)`, backtick and `<(…)` substitutions read recursively up to `DEPTH`; `/usr/bin/curl` → `curl`, and
so is `$(go env GOPATH)/bin/curl` when what computes the directory only prints a place; `$SHELL` → `sh`; a
variable assigned earlier in the lesson (`X=curl; $X …`) resolved), its arguments after the wrappers (`--`
honoured by whoever reads the rest), its redirections, whether its standard input comes from a pipe and from
which runs, and why it could not be placed (`unplaced`: a dynamic program, the depth cap, an unterminated
quote or substitution in code).

What the runs mean (risky parts) is decided in `command_parts.py`; this module only reads.

Cost: one linear pass per command text (`shell_tokens.tokens`, no regex backtracking, never
raises); a substitution's text is read again one level down, and levels stop at `DEPTH`, so the
total is at most `DEPTH` passes over the lesson. Loaded on first use by `command_parts` (hooks import
provenance through playbook.py and never call it); imports only `re`.
"""

from __future__ import annotations

import re

from .command_spans import commands
from .shell_tokens import MAX_TOKENS, SUBSTITUTION, Word, tokens

DEPTH = 4  # nesting levels of `sh -c`, `eval`, substitutions read before a command counts as unplaced

SHELLS = frozenset(("sh", "bash", "zsh", "dash", "ksh", "mksh", "ash", "csh", "tcsh", "fish", "yash", "posh",
                    "rbash", "elvish", "nu", "xonsh", "pwsh", "powershell"))
INTERPRETERS = frozenset(("python", "python2", "python3", "pypy", "pypy3", "perl", "ruby", "node", "nodejs", "php",
                          "deno", "bun", "lua", "luajit", "rscript", "tclsh", "osascript", "jshell", "groovy"))
FETCHERS = frozenset(("curl", "wget", "fetch", "aria2c", "iwr", "irm", "invoke-webrequest", "invoke-restmethod",
                      "xh", "http", "https", "httpie", "lynx", "links", "w3m", "ftp", "tftp", "nc", "ncat", "netcat",
                      "socat", "openssl", "scp", "rsync", "gh"))
# Wrappers: the program they run follows their options. Per wrapper, the options that take a value.
_WRAP_VALUE = {
    "env": frozenset(("-u", "--unset", "-c", "--chdir")),
    "command": frozenset(), "exec": frozenset(("-a",)), "builtin": frozenset(),
    "sudo": frozenset(("-u", "-g", "-c", "-d", "-h", "-p", "-r", "-t", "--user", "--group", "--host", "--prompt",
                       "--role", "--type", "--chdir", "--close-from", "-C", "-D", "-U", "-T")),
    "doas": frozenset(("-u", "-c")), "run0": frozenset(("-u", "--user")),
    "nice": frozenset(("-n", "--adjustment")), "nohup": frozenset(), "time": frozenset(("-f", "-o", "--format",
                                                                                       "--output")),
    "timeout": frozenset(("-s", "-k", "--signal", "--kill-after")), "stdbuf": frozenset(("-i", "-o", "-e")),
    "setsid": frozenset(), "ionice": frozenset(("-c", "-n", "-p")), "chrt": frozenset(), "taskset": frozenset(),
    "unbuffer": frozenset(), "caffeinate": frozenset(), "chronic": frozenset(), "flock": frozenset(("-w", "-E")),
    "watch": frozenset(("-n", "--interval", "-d")), "strace": frozenset(("-o", "-e", "-p")),
    "ltrace": frozenset(("-o", "-e")), "torsocks": frozenset(), "proxychains": frozenset(("-f",)),
    "proxychains4": frozenset(("-f",)), "firejail": frozenset(), "winpty": frozenset(),
}
_XARGS_VALUE = frozenset(("-I", "-i", "-n", "-P", "-d", "-E", "-e", "-L", "-l", "-s", "-a", "--max-args",
                          "--max-procs", "--delimiter", "--arg-file", "--replace", "--max-lines", "--eof"))
# Words that open a shell construct: the command follows them.
_KEYWORDS = frozenset(("if", "then", "else", "elif", "do", "while", "until", "!", "{", "}", "fi", "done", "esac"))
_REDIRS = frozenset((">>", "<<<", "<<", "&>", ">&", ">|", "<", ">"))
_ASSIGN = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)\+?=")
_VAR_USE = re.compile(r"\$(?:\{[^}]*\}|[A-Za-z_][A-Za-z0-9_]*|[0-9@*#?$!-])")
# Queries that print a place on this machine, and what they must be asked (empty: anything): a program
# found under what one prints is placed by its own name (`_Reader._located`). A query's output is the
# machine's, not fetched and not the lesson's: `$(curl …)/x`, `$(cat f)/x` stay unknown.
_PLACES: dict[str, tuple[str, ...]] = {
    "git": ("rev-parse",), "go": ("env",), "brew": ("--prefix", "--repository", "--cellar"),
    "npm": ("root", "prefix", "bin"), "pnpm": ("root", "bin"), "yarn": ("bin", "global"),
    "xcrun": ("--find", "-f", "--show-sdk-path", "--sdk"), "xcode-select": ("-p", "--print-path"),
    "rustc": ("--print",), "mise": ("where",), "asdf": ("where",), "pyenv": ("prefix", "root"),
    "rbenv": ("prefix", "root"), "which": (), "dirname": (), "pwd": (), "realpath": (), "readlink": (),
}


class Run:
    """One simple command after unwrapping (module docstring)."""

    __slots__ = ("args", "depth", "inputs", "prog", "redirs", "source", "subs", "unplaced", "wrappers", "xargs")

    def __init__(self, prog: str, args: list[Word], source: str, depth: int) -> None:
        self.prog = prog
        self.args = args
        self.source = source  # the command as written (whitespace collapsed, capped): the part's needle
        self.depth = depth
        self.redirs: list[tuple[str, str]] = []
        self.inputs: list[Run] = []  # the runs whose output is this run's standard input
        self.subs: list[Run] = []  # runs of the substitutions in its words
        self.unplaced = ""  # why the program could not be placed ("" when it was)
        self.wrappers: list[str] = []
        self.xargs = False  # its arguments come from standard input (`xargs CMD`)

    @property
    def words(self) -> list[str]:
        return [w.text for w in self.args]

    def __repr__(self) -> str:
        return f"Run({self.prog!r}, {self.words!r}{', unplaced=' + repr(self.unplaced) if self.unplaced else ''})"


# -- commands ---------------------------------------------------------------------------------------------

class _Reader:
    """Reads command texts into `Run`s, keeping the lesson's variables across them (in order)."""

    def __init__(self) -> None:
        self.vars: dict[str, str] = {}
        self.runs: list[Run] = []

    def text(self, s: str, depth: int = 0, stdin: list[Run] | None = None, code: bool = True) -> list[Run]:
        """Every run of the command text `s`, appended to `self.runs`; the runs of its last pipeline."""
        if depth > DEPTH:
            run = Run("", [], _src(s), depth)
            run.unplaced = "nested too deeply to read"
            self.runs.append(run)
            return [run]
        toks = tokens(s)
        # A command the lesson itself elides (`git commit -m "$(cat <<'EOF' …`: the learner's cut) is
        # broken only where it stops: what it shows is all the agent would read, and is judged.
        elided = s.rstrip().endswith(("...", "\u2026"))
        if len(toks) >= MAX_TOKENS or (code and not elided and any(isinstance(t, Word) and t.broken for t in toks)):
            run = Run("", [], _src(s), depth)
            run.unplaced = "too long to read" if len(toks) >= MAX_TOKENS else "an unterminated quote or substitution"
            self.runs.append(run)
        pipe_in: list[Run] = list(stdin or [])
        last: list[Run] = []
        simple: list[Word] = []
        redirs: list[tuple[str, Word]] = []
        pending: str | None = None
        for tok in [*toks, ";"]:
            if isinstance(tok, Word):
                if pending is not None:
                    redirs.append((pending, tok))
                    pending = None
                else:
                    simple.append(tok)
                continue
            if tok in _REDIRS:
                pending = tok
                continue
            pending = None
            runs = self._simple(simple, redirs, depth, pipe_in) if simple or redirs else []
            simple, redirs = [], []
            if tok in ("|", "|&"):
                pipe_in = runs or pipe_in
            else:
                last = runs or last
                pipe_in = list(stdin or []) if tok == "(" or tok == ")" else []
        return last

    def _simple(self, words: list[Word], redirs: list[tuple[str, Word]], depth: int, stdin: list[Run]) -> list[Run]:
        src = _src(" ".join(w.text for w in words))
        subs: list[Run] = []
        for w in [*words, *(r[1] for r in redirs)]:
            for inner in w.subs:
                before = len(self.runs)
                self.text(inner, depth + 1)
                subs += self.runs[before:]
        words = list(words)
        # Leading assignments: the lesson's variables (`X=curl`), or a command's environment.
        env: list[str] = []
        while words and (words[0].text in _KEYWORDS or _ASSIGN.match(words[0].text)
                         and not words[0].text.startswith("=")):
            if words[0].text in _KEYWORDS:  # `do X=$(…)`, `then …`: the keyword starts the command
                words.pop(0)
                continue
            name, _, value = words[0].text.partition("=")
            env.append(words[0].text)
            self.vars[name.rstrip("+")] = value
            words.pop(0)
        if words and words[0].text in ("export", "declare", "typeset", "local", "readonly"):
            for w in words[1:]:
                if "=" in w.text and _ASSIGN.match(w.text):
                    name, _, value = w.text.partition("=")
                    self.vars[name.rstrip("+")] = value
            words = []
        if not words:
            run = Run("", [], src, depth)
            run.redirs = [(op, w.text) for op, w in redirs]
            run.subs, run.inputs = subs, list(stdin)
            run.wrappers = env
            self.runs.append(run)
            return [run]
        run = self._unwrap(words, depth, src, stdin)
        run.redirs = [(op, w.text) for op, w in redirs]
        run.subs = subs + run.subs
        run.wrappers = env + run.wrappers
        return [run]

    def _unwrap(self, words: list[Word], depth: int, src: str, stdin: list[Run]) -> Run:
        wrappers: list[str] = []
        xargs = False
        for _ in range(64):  # each step drops at least one word; a cap all the same
            if not words:  # a wrapper with nothing to run (`timeout`, `sudo` alone): it runs only itself
                return self._add(Run(wrappers[-1] if wrappers else "", [], src, depth), stdin, wrappers[:-1], xargs)
            head = words[0]
            prog = self._program(head)
            if prog is None:
                run = Run(head.text, words[1:], src, depth)
                run.unplaced = f"the program is `{head.text[:40]}`, unknown until it runs"
                return self._add(run, stdin, wrappers, xargs)
            if prog != head.text:  # a resolved variable may hold a command with arguments (`X="curl -s"`)
                more = [t for t in tokens(prog) if isinstance(t, Word)]
                if len(more) > 1:
                    words = more + words[1:]
                    continue
            rest = words[1:]
            if prog in _WRAP_VALUE:
                wrappers.append(prog)
                words = _after_options(_split_string(rest) if prog == "env" else rest, _WRAP_VALUE[prog], prog)
                if prog == "timeout" and words and words[0].text[:1].isdigit():
                    words = words[1:]  # the duration
                if prog in ("nice", "ionice", "chrt", "taskset") and words and words[0].text.lstrip("-").isdigit():
                    words = words[1:]
                continue
            if prog == "busybox" or prog == "toybox":
                wrappers.append(prog)
                words = rest
                continue
            if prog == "xargs":
                wrappers.append(prog)
                xargs = True
                words = _after_options(rest, _XARGS_VALUE, prog)
                continue
            run = self._add(Run(prog, rest, src, depth), stdin, wrappers, xargs)
            script = _script(prog, rest)
            if script is not None:  # `sh -c STRING`, `eval STRING…`: read it one level down
                before = len(self.runs)
                self.text(script, depth + 1, stdin=[run] if stdin else None)
                run.subs = self.runs[before:]
            return run
        run = Run("", words, src, depth)
        run.unplaced = "too many wrappers"
        self.runs.append(run)
        return run

    def _add(self, run: Run, stdin: list[Run], wrappers: list[str], xargs: bool) -> Run:
        """`run`, fed by `stdin` through `wrappers` (`xargs`: its arguments come from the pipe), recorded."""
        run.inputs, run.wrappers, run.xargs = list(stdin), wrappers, xargs
        self.runs.append(run)
        return run

    def _program(self, head: Word) -> str | None:
        """The program a word names (its path dropped, a variable resolved), or None if unknown."""
        text = head.text
        if head.subs or head.vars:
            located = self._located(head)
            if located is not None:
                return _name(located)
        if head.subs:
            return None
        if head.vars:
            name = re.fullmatch(r"\$\{?([A-Za-z_][A-Za-z0-9_]*)\}?", text)
            if name is None:
                return None
            if name.group(1).lower() == "shell":
                return "sh"
            value = self.vars.get(name.group(1))
            if value is None or "$" in value or len(value) > 200:  # (a long value is read once, not per use)
                return None
            text = value
        return _name(text)

    def _located(self, head: Word) -> str | None:
        """A program at a place the machine names: `$(go env GOPATH)/bin/golangci-lint`, `"$(git rev-parse
        --show-toplevel)"/scripts/x.sh`, `$GOBIN/x` — a literal path after the last substitution or variable,
        every substitution a query of `_PLACES` and every variable one the lesson does not set. Its
        literal path (the directory `/…` marked computed), or None: what a fetch, another command or the
        lesson's own variable computes stays unknown."""
        text = head.text
        last = max(text.rfind(SUBSTITUTION) + len(SUBSTITUTION) if SUBSTITUTION in text else 0,
                   max((m.end() for m in _VAR_USE.finditer(text)), default=0))
        tail = text[last:]
        if "/" not in tail or tail.endswith("/") or "$" in tail or not last:
            return None
        if any(v in self.vars for v in head.vars) or not all(_place_query(sub) for sub in head.subs):
            return None
        return "/…" + tail[tail.index("/"):]


def _name(text: str) -> str:
    """The program a path names: /usr/bin/curl, ~/bin/curl → curl; ./scripts/x.sh stays; python3.12 → python."""
    text = text.lower()
    if "/" in text and not text.startswith(("./", "../")) and not text.endswith("/"):
        text = text.rsplit("/", 1)[1]
    if text.endswith(".exe"):
        text = text[:-4]
    return re.sub(r"^(python|pip|perl|ruby|node|php|lua)[\d.]+$", r"\1", text) or text


def _place_query(sub: str) -> bool:
    """Is this substitution one plain command that only prints a place on this machine (`_PLACES`)?"""
    toks = tokens(sub)
    if not toks or not all(isinstance(t, Word) and not t.subs and not t.vars and not t.broken for t in toks):
        return False
    words = [t.text for t in toks if isinstance(t, Word)]
    asks = _PLACES.get(words[0])
    return asks is not None and (not asks or len(words) > 1 and words[1] in asks)


_GO_DIRECTORY = re.compile(r"GO\w*(?:PATH|ROOT|CACHE|BIN|DIR)", re.IGNORECASE)  # (lessons are read folded)


def prints_a_place(sub: str) -> bool:
    """Is this substitution a place query (`_place_query`) whose output is a directory or a value —
    `$(go env GOPATH)`, `$(git rev-parse --show-toplevel)`, `$(brew --prefix)` — so that, alone in a
    command's place, it names where something is rather than a program to run? Not one that may print
    a program's own path: `which x`, `realpath x` (what it is given), `xcrun --find clang`, `yarn bin
    eslint` (a dependency's binary), `git rev-parse --git-path hooks/x`, `go env CC`."""
    if not _place_query(sub):
        return False
    words = [t.text for t in tokens(sub) if isinstance(t, Word)]
    prog = words[0]
    if prog in ("which", "realpath", "readlink", "dirname"):
        return False
    if prog == "xcrun":
        return words[1] not in ("--find", "-f")
    if prog in ("npm", "pnpm", "yarn") and words[1] == "bin":
        return len(words) == 2
    if prog == "git":
        return "--git-path" not in words
    if prog == "go":  # the directories `go env` knows, not its tools (`CC`, `GOEXE`)
        return len(words) > 2 and all(_GO_DIRECTORY.fullmatch(w) for w in words[2:])
    return True


def _after_options(words: list[Word], takes_value: frozenset[str], prog: str) -> list[Word]:
    """`words` after a wrapper's options (and their values) and assignments, `--` honoured."""
    i = 0
    while i < len(words):
        text = words[i].text
        if text == "--":
            i += 1
            break
        if prog == "env" and _ASSIGN.match(text):
            i += 1
            continue
        if text.startswith("-") and len(text) > 1:
            flag = text.split("=", 1)[0]
            i += 2 if (flag in takes_value and "=" not in text) or (flag[:2] in takes_value and len(flag) == 2) else 1
            continue
        if prog == "env" and text == "-":
            i += 1
            continue
        break
    return words[i:]


def _split_string(words: list[Word]) -> list[Word]:
    """`env -S "bash -e"`'s words with the string split as `env` splits it (lower case: folded text)."""
    for k, w in enumerate(words):
        if w.text in ("-s", "-S", "--split-string") and k + 1 < len(words):
            return words[:k] + [t for t in tokens(words[k + 1].text) if isinstance(t, Word)] + words[k + 2:]
        if w.text.startswith(("--split-string=", "-s", "-S")) and len(w.text) > 2 and not w.text.startswith("--s"):
            value = w.text.split("=", 1)[1] if w.text.startswith("--") else w.text[2:]
            return words[:k] + [t for t in tokens(value) if isinstance(t, Word)] + words[k + 1:]
        if not w.text.startswith("-") and not _ASSIGN.match(w.text):
            break
    return words


def _script(prog: str, args: list[Word]) -> str | None:
    """The command string a shell or `eval` runs (`bash -c STRING`, `eval A B`), else None."""
    if prog == "eval":
        return " ".join(w.text for w in args)
    if prog in SHELLS or prog in ("su", "runuser", "watch"):
        for k, w in enumerate(args):
            t = w.text
            if t.startswith("-") and not t.startswith("--") and "c" in t[1:] or t in ("--command", "-command"):
                return args[k + 1].text if k + 1 < len(args) else ""
    return None


def _src(s: str) -> str:
    return " ".join(s.split())[:120]


def read(text: str, programs: frozenset[str]) -> list[Run]:
    """Every run of the lesson `text` in order (module docstring); `programs`: the names that start
    a command in prose."""
    reader = _Reader()
    for command, code in commands(text, programs):
        reader.text(command, 0, code=code)
    return reader.runs
