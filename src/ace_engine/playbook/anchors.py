"""What a lesson rests on, found when it is written: its anchors in the project's own files.

Contract: `extract(content, root, files)` reads the lesson's text and returns its anchors — each
a dict {kind, name, file, value, state} — for what it names that the project holds *now*:

| kind | named as | lives in | value (what a change is) |
|---|---|---|---|
| make / just / mix | `make gen`, `just lint`, `mix ecto.reset` | Makefile, justfile, mix.exs | the recipe |
| script | `npm run type-check`, `yarn build`, `pnpm test` | package.json | the script's command |
| ci | `the lint job`, a code span naming a job | .github/workflows/*.yml, .gitlab-ci.yml | its block |
| dep | a locked package in a code span or command, `vite 5` | the lockfiles | its major version |
| config | `compilerOptions.strict`, `[tool.ruff]` | tsconfig.json, pyproject.toml, … | its value |
| file | `src/api/auth.py`, `vite.config.ts` | itself | — (present or not) |
| symbol | `parse_args()`, `TokenCache` | a file it names or edited | — (present or not) |
| flag | `./scripts/test.sh --fast` | that script | — (present or not) |
| command | a command it tells to run | — (checked by evidence, not files) | — |

Only what is found is an anchor: a target the Makefile lacks when the lesson is written is not
one (the lesson may be about a typo), so a later check can only find what the lesson relied on
gone or changed, never something that was never there. At most `MAX_ANCHORS` a lesson.
`stamps(root, anchors)` gives the stamp of each anchor file (`anchor_files.stamp`).

Repository files are untrusted data: read through `anchor_files.read` only (bounded, no symlink
out of the repository), parsed by regular expressions and json / tomllib, never run.

Cost: pure but for those bounded reads; a `Reader` caches each file's text and tables, so one
lesson reads each file at most once (lockfiles of a few MB parse in milliseconds). Stdlib only.
"""

import os
import re

from . import anchor_files as af
from .anchor_files import Reader  # where the check imports it from: without this module's patterns

MAX_ANCHORS = 12
MAX_FILES = 8
PROGRAMS = frozenset("""make just mix npm npx yarn pnpm bun node deno python python3 pip pip3 uv poetry pytest tox
nox ruff mypy black flake8 isort cargo go rustc gradle ./gradlew mvn ./mvnw dotnet docker docker-compose kubectl
terraform helm git gh bundle rake rails rspec ruby php composer elixir iex swift xcodebuild tsc vite vitest jest
eslint prettier turbo nx lerna alembic django-admin manage.py flask celery sbt bazel cmake ctest meson ninja
pre-commit bash sh zsh""".split())
_SPAN = re.compile(r"`([^`\n]{1,300})`")
_PROSE_COMMAND = re.compile(r"(?<![\w./-])((?:make|just|mix|npm run|npm|yarn|pnpm run|pnpm|bun run)\s+"
                            r"[A-Za-z_][\w:.-]*)")
_PATH = re.compile(r"(?<![\w/.:@-])((?:[\w.-]+/)+[\w.-]*|[\w-]+(?:\.[\w-]+)*\.[A-Za-z][A-Za-z0-9]{0,7})(?![\w/-])")
_IDENT = re.compile(r"^[A-Za-z_][\w]*(?:\.[A-Za-z_]\w*)*(?:\(\))?$")
_DOTTED = re.compile(r"^\[?[A-Za-z_@$][\w@$-]*(?:\.[\w@$-]+)+\]?$")
_VERSIONED = re.compile(r"(?<![\w@/.-])([A-Za-z@][\w@/.-]{2,})\s+v?\d+(?:\.\d+)*\b")
_JOB = re.compile(r"(?:`([^`\n]{1,80})`|\b([\w.-]{2,60}))\s+(?:CI\s+)?job\b", re.I)
_SCRIPT = re.compile(r"^(?:bin|scripts?|tools|hack)/[\w./-]+$")
_FLAG = re.compile(r"^--[a-z][\w-]+$")
_CODE_EXT = frozenset("py pyi js jsx ts tsx mjs cjs go rs rb ex exs erl java kt scala swift c h cc cpp hpp cs "
                      "php lua sh vue svelte".split())
_COMMON = frozenset("""test tests build run start dev lint main index src lib app api core utils util config
setup install check format clean debug docs data json yaml true false null none node python""".split())


def _words(command: str) -> "list[str]":
    import shlex

    try:
        words = shlex.split(command, comments=False)
    except ValueError:
        words = command.split()
    while words and re.match(r"^[A-Z_][A-Z0-9_]*=", words[0]):
        words = words[1:]  # FOO=1 make gen
    return words


def _commands(content: str) -> "list[str]":
    spans = [s.strip() for s in _SPAN.findall(content)]
    prose = [m.group(1) for m in _PROSE_COMMAND.finditer(_SPAN.sub(" ", content))]
    out = []
    for text in spans + prose:
        for part in re.split(r"\s*(?:&&|\|\||;|\|)\s*", text):
            words = _words(part)
            if words and (words[0] in PROGRAMS or words[0].startswith("./") or re.match(_SCRIPT, words[0])):
                out.append(" ".join(words))
    return list(dict.fromkeys(out))


def _program_anchors(words: "list[str]", reader: Reader) -> "list[dict]":
    """The make / just / mix / script / file / flag anchors one command names."""
    out: list[dict | None] = []
    prog, args = words[0], words[1:]
    plain = [a for a in args if not a.startswith("-") and "=" not in a]
    if prog == "make":
        folder = args[args.index("-C") + 1] if "-C" in args[:-1] else ""
        makefile = reader.first(af.MAKEFILES, folder.strip("/"))
        if makefile:
            skip = {folder} if folder else set()
            out += [_found(reader, "make", t, makefile) for t in plain if t not in skip]
    elif prog == "just":
        justfile = reader.first(af.JUSTFILES)
        if justfile and plain:
            out.append(_found(reader, "just", plain[0], justfile))
    elif prog == "mix" and plain:
        if reader.text("mix.exs") is not None:
            out.append(_found(reader, "mix", plain[0], "mix.exs"))
    elif prog in ("npm", "yarn", "pnpm", "bun") and plain:
        name = plain[1] if plain[0] in ("run", "run-script") and len(plain) > 1 else plain[0]
        if reader.text("package.json") is not None:
            out.append(_found(reader, "script", name, "package.json"))
    script = None
    if prog.startswith("./") or ("/" in prog and not prog.startswith("/")):
        script = prog
    elif prog in ("bash", "sh", "zsh", "python", "python3", "node", "ruby") and plain and "/" in plain[0]:
        script = plain[0]
    if script:
        rel = os.path.normpath(script)
        if af.stamp(reader.root, rel) not in (None, "dir"):
            out.append({"kind": "file", "name": rel, "file": rel, "value": ""})
            out += [_found(reader, "flag", a.split("=")[0], rel) for a in args if _FLAG.match(a.split("=")[0])]
    return [a for a in out if a is not None]


def _found(reader: Reader, kind: str, name: str, file: str) -> "dict | None":
    value = reader.value(kind, name, file)
    return None if value is None else {"kind": kind, "name": name, "file": file, "value": value}


def _paths(content: str, reader: Reader) -> "list[dict]":
    out: list[dict] = []
    for match in _PATH.finditer(content):
        rel = match.group(1).rstrip(".,:;")
        rel = rel[2:] if rel.startswith("./") else rel
        if not rel or rel.startswith(("http", "www.")) or "//" in rel or len(out) >= MAX_FILES:
            continue
        st = af.stamp(reader.root, rel)
        if st is not None:
            out.append({"kind": "file", "name": rel.rstrip("/") + ("/" if st == "dir" else ""),
                        "file": rel.rstrip("/"), "value": ""})
    return out


def _code_files(anchors: "list[dict]", files: "tuple[str, ...]", root: str) -> "list[str]":
    named = [a["file"] for a in anchors if a["kind"] == "file" and not a["name"].endswith("/")]
    edited = [f[len(root.rstrip("/")) + 1:] if f.startswith(root.rstrip("/") + "/") else f for f in files]
    return [f for f in dict.fromkeys(named + edited) if f.rsplit(".", 1)[-1] in _CODE_EXT][:5]


def _symbol(span: str) -> "str | None":
    if not _IDENT.match(span):
        return None
    name = span.removesuffix("()").rsplit(".", 1)[-1]
    distinctive = "_" in name.strip("_") or re.search(r"[a-z][A-Z]", name) or span.endswith("()") or \
        re.match(r"^[A-Z][a-z]+[A-Z]", name)
    return name if distinctive and len(name) >= 4 and name.lower() not in _COMMON else None


def _config(span: str, reader: Reader) -> "dict | None":
    if not _DOTTED.match(span):
        return None
    for file in af.JSON_CONFIGS + af.TOML_CONFIGS:
        if (span.startswith("[") and not file.endswith(".toml")) or reader.text(file) is None:
            continue
        found = _found(reader, "config", span, file)
        if found is not None:
            return found
    return None


def _deps(content: str, commands: "list[str]", reader: Reader) -> "list[dict]":
    locks = [f for f in af.LOCKFILES if reader.text(f) is not None]
    if not locks:
        return []
    named: list[str] = []
    for span in _SPAN.findall(content):
        named += [w for w in re.split(r"[\s=<>~^]+", span) if w]
    for command in commands:
        named += [re.sub(r"(?<=.)@[\w.^~<>=*-]*$", "", w) for w in _words(command)[1:] if not w.startswith("-")]
    prose = _SPAN.sub(" ", content)
    named += [m.group(1) for m in _VERSIONED.finditer(prose)]
    named += [w for w in re.findall(r"(?<![\w@/.-])(@?[a-z][\w.-]*[-/@][\w./-]*[a-z0-9])", prose)]
    own = _own_names(reader)
    names = [n for n in dict.fromkeys(n.strip(".,:;()") for n in named)
             if len(n) >= 3 and n.lower() not in _COMMON and n.lower() not in own]
    return _first_found(reader, "dep", names, locks)


def _own_names(reader: Reader) -> "set[str]":
    """The project's own package names: a lockfile lists the project itself (uv.lock, Cargo.lock),
    which is no dependency of it: its entry comes and goes with the lockfile's format, not a version."""
    out = set()
    for file, key in (("package.json", "name"), ("pyproject.toml", "project.name"),
                      ("pyproject.toml", "tool.poetry.name"), ("Cargo.toml", "package.name")):
        text = reader.text(file)
        value = af.config_value(file, text, key) if text is not None else None
        if value and value.startswith('"'):
            out.add(value.strip('"').lower())
    return out


def _first_found(reader: Reader, kind: str, names: "list[str]", files: "list[str]") -> "list[dict]":
    """For each name (once), its anchor in the first of `files` that holds it."""
    out = []
    for name in dict.fromkeys(names):
        for file in files:
            found = _found(reader, kind, name, file)
            if found is not None:
                out.append(found)
                break
    return out


def _jobs(content: str, reader: Reader) -> "list[dict]":
    names = [m.group(1) or m.group(2) for m in _JOB.finditer(content)]
    names += [s for s in _SPAN.findall(content) if re.match(r"^[\w.-]{2,60}$", s)]
    if not names:
        return []
    return _first_found(reader, "ci", names, reader.workflows())


def extract(content: str, root: "str | None", files: "tuple[str, ...] | list[str]" = (),
            reader: "Reader | None" = None) -> "list[dict]":
    """The anchors of lesson `content` in the project at `root` (module doc); [] without a root."""
    if not root or not os.path.isdir(root):
        return []
    reader = reader or Reader(root)
    commands = _commands(content)
    found: list[dict] = []
    for command in commands:
        found += _program_anchors(_words(command), reader)
    found += _paths(content, reader)
    spans = [s.strip() for s in _SPAN.findall(content)]
    code_files = _code_files(found, tuple(files), root)
    for span in spans:
        config = _config(span, reader)
        if config is not None:
            found.append(config)
            continue
        name = _symbol(span) or ""
        for file in code_files if name else ():
            symbol = _found(reader, "symbol", name, file)
            if symbol is not None:
                found.append(symbol)
                break
    found += _deps(content, commands, reader) + _jobs(content, reader)
    found += [{"kind": "command", "name": c[:200], "file": "", "value": None, "state": "unchecked"}
              for c in commands]
    out: dict[tuple[str, str, str], dict] = {}
    for anchor in found:
        anchor.setdefault("state", "ok")
        out.setdefault((anchor["kind"], anchor["name"], anchor["file"]), anchor)
    return list(out.values())[:MAX_ANCHORS]


def stamps(root: str, anchors: "list[dict]") -> "dict[str, str | None]":
    """{file: its stamp now} of the files `anchors` live in."""
    return {a["file"]: af.stamp(root, a["file"]) for a in anchors if a.get("file")}
