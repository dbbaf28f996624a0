"""What a repository's own files say about working in it: commands and conventions, for `ace bootstrap`.

Each scanner reads one kind of file and returns *findings*, plain dicts of two shapes:

* a command — `{"type": "command", "run": "make test", "kind": "test", "does": "pytest -q -x",
  "file": "Makefile", "where": "Makefile target `test`", "rank": 0}`: how the project builds,
  tests, lints…; `bootstrap.py` merges the same command found in several files (a Makefile
  target that CI also runs) into one bullet;
* a note — `{"type": "note", "key": "tsconfig", "content": "…", "section": "…",
  "files": [...], "evidence": "…"}`: a fact or convention, already phrased as a bullet.

This module reads the files that say how to *run* things (pyproject.toml metadata and task
runners, package.json, Makefile / justfile, tox / nox, CI workflows, READMEs);
`bootstrap_conventions.py` reads the configuration of linters, formatters and type checkers.

Scanners never raise on a malformed file: they return what they could read and name what they
skipped in `problems` (a list passed in). YAML (CI workflows, pre-commit) is read line by line —
only `run:` / `script:` steps and hook ids are needed, not a YAML library.
"""

import configparser
import json
import os
import re

from ..learning import commands as cmd_mod

# Lower rank wins when the same command is found in several places: a wrapper the team set up
# (Makefile, package.json scripts, task runners) is what to tell the agent to run.
RANK = {"makefile": 0, "justfile": 0, "package.json": 1, "pyproject-tasks": 1, "tox": 2, "nox": 2,
        "ci": 3, "docs": 4, "config": 5}
MAX_DOES = 140
_TARGET_KINDS = {
    "test": "test", "tests": "test", "check": "test", "unit": "test", "e2e": "test", "integration": "test",
    "lint": "lint", "format": "format", "fmt": "format", "typecheck": "typecheck", "types": "typecheck",
    "mypy": "typecheck", "build": "build", "dist": "build", "compile": "build", "install": "install",
    "setup": "install", "deps": "install", "bootstrap": "install", "venv": "install", "dev": "run",
    "run": "run", "serve": "run", "start": "run", "watch": "run", "docs": "build", "release": "other",
    "clean": "other",
}


def read_text(root: str, rel: str, limit: int = 512_000) -> str | None:
    try:
        with open(os.path.join(root, rel), encoding="utf-8", errors="replace") as fh:
            return fh.read(limit)
    except OSError:
        return None


def exists(root: str, rel: str) -> bool:
    return os.path.exists(os.path.join(root, rel))


def short(text: str, limit: int = MAX_DOES) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def kind_of(name: str, commands_text: str = "") -> str:
    """test / lint / typecheck / format / build / install / run / other for a named task."""
    found = cmd_mod.kind(commands_text) if commands_text else "other"
    if found in cmd_mod.CHECK_KINDS or found == "install":
        return found
    base = re.split(r"[:._-]", name.lower())[0]
    return _TARGET_KINDS.get(name.lower()) or _TARGET_KINDS.get(base) or ("build" if found == "build" else "other")


def command(run: str, kind: str, file: str, where: str, source: str, does: str | None = None) -> dict:
    return {"type": "command", "run": short(run, 200), "kind": kind, "does": short(does) if does else None,
            "file": file, "where": where, "rank": RANK[source], "source": source}


def note(key: str, content: str, section: str, files: list[str], evidence: str) -> dict:
    return {"type": "note", "key": key, "content": content, "section": section, "files": files, "evidence": evidence}


def _toml(root: str, rel: str, problems: list) -> dict | None:
    text = read_text(root, rel)
    if text is None:
        return None
    import tomllib

    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        problems.append({"file": rel, "problem": f"invalid TOML ({exc})"})
        return None


def _json(root: str, rel: str, problems: list, *, comments: bool = False):
    text = read_text(root, rel)
    if text is None:
        return None
    if comments:
        text = strip_json_comments(text)
    try:
        return json.loads(text)
    except ValueError as exc:
        problems.append({"file": rel, "problem": f"invalid JSON ({exc})"})
        return None


def read_ini(root: str, rel: str, problems: list):
    """A `configparser.ConfigParser` of `rel`, None when missing or unreadable (then noted in `problems`)."""
    text = read_text(root, rel)
    if text is None:
        return None
    parser = configparser.ConfigParser(interpolation=None, strict=False)
    try:
        parser.read_string(text)
    except configparser.Error as exc:
        problems.append({"file": rel, "problem": f"unreadable INI ({exc.__class__.__name__})"})
        return None
    return parser


def strip_json_comments(text: str) -> str:
    """JSON with comments and trailing commas (tsconfig, .eslintrc) → JSON; strings are kept."""
    out, i, n = [], 0, len(text)
    while i < n:
        ch = text[i]
        if ch == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            out.append(text[i:j + 1])
            i = j + 1
        elif text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j == -1 else j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            i = n if j == -1 else j + 2
        else:
            out.append(ch)
            i += 1
    return re.sub(r",(\s*[}\]])", r"\1", "".join(out))


# -- package managers ------------------------------------------------------------------------------

JS_MANAGERS = (("pnpm-lock.yaml", "pnpm"), ("yarn.lock", "yarn"), ("bun.lockb", "bun"), ("bun.lock", "bun"),
               ("package-lock.json", "npm"))
# (lock file, manager, install command, how to run a tool in its environment)
PY_MANAGERS = (("uv.lock", "uv", "uv sync", "uv run <tool>"),
               ("poetry.lock", "poetry", "poetry install", "poetry run <tool>"),
               ("pdm.lock", "pdm", "pdm install", "pdm run <tool>"),
               ("Pipfile.lock", "pipenv", "pipenv install --dev", "pipenv run <tool>"))


def js_manager(root: str) -> tuple[str, str | None]:
    """(manager, its lock file) — npm without a lock file."""
    for lock, manager in JS_MANAGERS:
        if exists(root, lock):
            return manager, lock
    return "npm", None


def script_command(manager: str, name: str) -> str:
    """How to run a package.json script with `manager` (`bun test` would run bun's own runner)."""
    if name in ("test", "start") and manager in ("npm", "pnpm", "yarn"):
        return f"{manager} {name}"
    return f"{manager} run {name}"


WORKSPACE_RUN = {"pnpm": "pnpm --filter <pkg> <script>", "npm": "npm run <script> --workspace <pkg>",
                 "yarn": "yarn workspace <pkg> <script>", "bun": "bun run --filter <pkg> <script>"}


def scan_package_managers(root: str, problems: list) -> list[dict]:
    found = []
    for lock, manager, install, runner in PY_MANAGERS:
        if exists(root, lock):
            found.append(note(f"py-manager:{manager}",
                              f"Python dependencies are managed with {manager} ({lock} is committed): install with "
                              f"`{install}` and run tools inside the project environment with `{runner}`.",
                              "strategies_and_hard_rules", [lock], f"{lock} present"))
            break
    if exists(root, "package.json"):
        manager, lock = js_manager(root)
        if lock:
            others = [m for m in ("npm", "yarn", "pnpm", "bun") if m != manager]
            others = ", ".join(others[:-1]) + " or " + others[-1]
            found.append(note(f"js-manager:{manager}",
                              f"Install JavaScript dependencies with `{manager} install` ({lock} is committed); "
                              f"don't use {others} here — they ignore {lock}.",
                              "strategies_and_hard_rules", [lock, "package.json"], f"{lock} present"))
    return found


# -- pyproject.toml -------------------------------------------------------------------------------

def scan_pyproject(root: str, problems: list, deep: bool = False) -> list[dict]:
    data = _toml(root, "pyproject.toml", problems)
    if not data:
        return []
    found: list[dict] = []
    project = data.get("project") or {}
    tool = data.get("tool") or {}
    rel = "pyproject.toml"
    if project.get("requires-python"):
        found.append(note("python-version", f"The package requires Python {project['requires-python']} "
                          "(pyproject.toml `requires-python`); don't use syntax or stdlib APIs newer or older than "
                          "that range allows.",
                          "strategies_and_hard_rules", [rel], f"requires-python = {project['requires-python']!r}"))
    scripts = project.get("scripts") or (tool.get("poetry") or {}).get("scripts") or {}
    if isinstance(scripts, dict) and scripts:
        listed = ", ".join(f"`{name}` → `{target}`" for name, target in list(scripts.items())[:5] if isinstance(target, str))
        if listed:
            found.append(note("entry-points", f"Console entry points (pyproject.toml [project.scripts]): {listed}.",
                              "apis_to_use", [rel], "project.scripts"))
    extras = project.get("optional-dependencies") or {}
    dev_extras = [name for name in extras if name in ("dev", "test", "tests", "testing", "develop", "all")]
    if dev_extras and not any(exists(root, lock) for lock, *_ in PY_MANAGERS):
        extra = dev_extras[0]
        found.append(command(f"pip install -e '.[{extra}]'", "install", rel,
                             f"pyproject.toml optional-dependencies `{extra}`", "config"))
    # Task runners declared in pyproject.toml.
    runners = [
        ("poe", (tool.get("poe") or {}).get("tasks"), "poe {name}", "[tool.poe.tasks]"),
        ("pdm", (tool.get("pdm") or {}).get("scripts"), "pdm run {name}", "[tool.pdm.scripts]"),
        ("taskipy", (tool.get("taskipy") or {}).get("tasks"), "task {name}", "[tool.taskipy.tasks]"),
    ]
    for env_name, env in ((tool.get("hatch") or {}).get("envs") or {}).items():
        if isinstance(env, dict) and isinstance(env.get("scripts"), dict):
            prefix = "" if env_name == "default" else f"{env_name}:"
            runners.append(("hatch", env["scripts"], f"hatch run {prefix}{{name}}", f"[tool.hatch.envs.{env_name}.scripts]"))
    for _runner, tasks, template, table in runners:
        if not isinstance(tasks, dict):
            continue
        for name, spec in tasks.items():
            if name.startswith("_"):
                continue
            text = _task_text(spec)
            if not text:
                continue
            kind = kind_of(name, text)
            if kind == "other" and not deep:
                continue
            found.append(command(template.format(name=name), kind, rel, f"pyproject.toml {table} `{name}`",
                                 "pyproject-tasks", does=text))
    return found


def _task_text(spec) -> str:
    if isinstance(spec, str):
        return spec
    if isinstance(spec, list):
        return " && ".join(_task_text(s) for s in spec if _task_text(s))
    if isinstance(spec, dict):
        for key in ("cmd", "shell", "script", "call", "composite", "sequence"):
            if spec.get(key):
                return _task_text(spec[key])
    return ""


# -- package.json ---------------------------------------------------------------------------------

def package_json_files(root: str, deep: bool) -> list[str]:
    """package.json at the root, plus those of declared workspaces (one level of globs) when deep."""
    files = ["package.json"] if exists(root, "package.json") else []
    if deep and files:
        try:
            with open(os.path.join(root, "package.json"), encoding="utf-8") as fh:
                workspaces = json.load(fh).get("workspaces") or []
        except (OSError, ValueError, AttributeError):
            workspaces = []
        if isinstance(workspaces, dict):
            workspaces = workspaces.get("packages") or []
        import glob

        for pattern in workspaces[:10] if isinstance(workspaces, list) else []:
            for path in sorted(glob.glob(os.path.join(root, str(pattern), "package.json")))[:20]:
                files.append(os.path.relpath(path, root))
    return files


def scan_package_json(root: str, problems: list, deep: bool = False) -> list[dict]:
    found: list[dict] = []
    manager, _ = js_manager(root)
    for rel in package_json_files(root, deep):
        data = _json(root, rel, problems)
        if not isinstance(data, dict):
            continue
        in_dir = os.path.dirname(rel)
        for name, text in (data.get("scripts") or {}).items():
            if not isinstance(text, str) or name.startswith(("pre", "post")) and name not in ("prepare", "preview"):
                continue
            kind = kind_of(name, text)
            if kind == "other" and not deep:
                continue
            run = script_command(manager, name)
            if in_dir:
                if manager == "pnpm" and data.get("name"):
                    run = f"pnpm --filter {data['name']} {name}"
                else:
                    run = f"cd {in_dir} && {run}"
            found.append(command(run, kind, rel, f"{rel} script `{name}`", "package.json", does=text))
        if not in_dir:
            if data.get("type") == "module":
                found.append(note("esm", "package.json sets `\"type\": \"module\"`: .js files are ES modules — use "
                                  "`import`/`export`, not `require()`; CommonJS files need the .cjs extension.",
                                  "strategies_and_hard_rules", [rel], '"type": "module"'))
            node = (data.get("engines") or {}).get("node") if isinstance(data.get("engines"), dict) else None
            if node:
                found.append(note("node-version", f"Node.js {node} is required (package.json `engines.node`).",
                                  "strategies_and_hard_rules", [rel], f"engines.node = {node!r}"))
            if data.get("workspaces"):
                ws = data["workspaces"].get("packages") if isinstance(data["workspaces"], dict) else data["workspaces"]
                listed = ", ".join(f"`{w}`" for w in (ws or [])[:5])
                found.append(note("workspaces", f"This is a {manager} workspace monorepo (package.json `workspaces`: {listed}); "
                                  f"run a package's script from the root with `{WORKSPACE_RUN[manager]}`.",
                                  "strategies_and_hard_rules", [rel], "workspaces"))
    return found


# -- Makefile, justfile, tox, nox ---------------------------------------------------------------------

_MAKE_TARGET = re.compile(r"^([A-Za-z0-9][\w.-]*(?:[ \t]+[A-Za-z0-9][\w.-]*)*)[ \t]*:(?![:=])[ \t]*([^#\n]*)")


_MAKE_VAR = re.compile(r"^(?:export[ \t]+|override[ \t]+)?([A-Za-z_][\w]*)[ \t]*(?::{1,3}|\?|\+)?=[ \t]*(.*)$")
_MAKE_REF = re.compile(r"\$[({]([A-Za-z_]\w*)[)}]")


def parse_makefile(text: str) -> dict[str, tuple[list[str], list[str]]]:
    """{target: (prerequisites, recipe commands)} of the explicit targets (no pattern rules).

    Variables set in the file with a plain value (`PYTHON ?= python3`) are substituted in the
    recipes, so the bullet shows the command that actually runs."""
    targets: dict[str, tuple[list[str], list[str]]] = {}
    variables: dict[str, str] = {}
    current: list[str] = []
    for line in text.replace("\\\n", " ").splitlines():
        if line.startswith("\t"):
            recipe = line.strip().lstrip("@-+").strip()
            if recipe and not recipe.startswith("#"):
                for name in current:
                    targets[name][1].append(recipe)
            continue
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        var = _MAKE_VAR.match(line)
        if var and not _MAKE_REF.search(var.group(2)) and "$(shell" not in var.group(2):
            variables.setdefault(var.group(1), var.group(2).split("#")[0].strip())
            current = []
            continue
        m = _MAKE_TARGET.match(line)
        if m and "=" not in m.group(1) and "%" not in line.split(":")[0]:
            names = [n for n in m.group(1).split() if not n.startswith(".")]
            current = names
            for name in names:
                targets.setdefault(name, (m.group(2).split(), []))
        else:
            current = []
    expand = lambda cmd: _MAKE_REF.sub(lambda r: variables.get(r.group(1), r.group(0)), cmd)  # noqa: E731
    return {name: (prereqs, [expand(c) for c in recipe]) for name, (prereqs, recipe) in targets.items()}


def scan_makefile(root: str, problems: list, deep: bool = False) -> list[dict]:
    found = []
    for rel in ("Makefile", "makefile", "GNUmakefile"):
        text = read_text(root, rel)
        if text is None:
            continue
        for name, (prereqs, recipe) in parse_makefile(text).items():
            if not recipe and not prereqs:
                continue
            kind = kind_of(name, " && ".join(recipe))
            if kind == "other" and not deep:
                continue
            if recipe:
                found.append(command(f"make {name}", kind, rel, f"{rel} target `{name}`", "makefile", does=" && ".join(recipe)))
            else:  # only prerequisites: `check: lint test`
                listed = " and ".join(f"`{p}`" for p in prereqs[:4])
                found.append(command(f"make {name}", kind, rel, f"{rel} target `{name}` runs the {listed} targets", "makefile"))
        break
    text = read_text(root, "justfile") or read_text(root, "Justfile")
    if text is not None:
        rel = "justfile" if exists(root, "justfile") else "Justfile"
        recipes: dict[str, list[str]] = {}
        current = None
        for line in text.splitlines():
            if line[:1] in (" ", "\t"):
                if current and line.strip() and not line.strip().startswith("#"):
                    recipes[current].append(line.strip().lstrip("@-"))
                continue
            m = re.match(r"^@?([A-Za-z][\w-]*)(?:[ \t]+[^:=]*)?:(?!=)", line)
            current = m.group(1) if m else None
            if current:
                recipes[current] = []
        for name, lines in recipes.items():
            if not lines:
                continue
            kind = kind_of(name, " && ".join(lines))
            if kind == "other" and not deep:
                continue
            found.append(command(f"just {name}", kind, rel, f"{rel} recipe `{name}`", "justfile", does=" && ".join(lines)))
    return found


def scan_tox_nox(root: str, problems: list, deep: bool = False) -> list[dict]:
    found = []
    parser = read_ini(root, "tox.ini", problems)
    if parser is not None:
        envs = []
        if parser.has_option("tox", "envlist"):
            envs = [e.strip() for e in re.split(r"[,\n]", parser.get("tox", "envlist")) if e.strip() and "{" not in e]
        envs += [s.split(":", 1)[1] for s in parser.sections() if s.startswith("testenv:")]
        for env in list(dict.fromkeys(envs))[:8]:
            section = f"testenv:{env}" if parser.has_section(f"testenv:{env}") else "testenv"
            does = parser.get(section, "commands", fallback="").strip().replace("\n", " && ")
            kind = kind_of(env, does) if not re.match(r"^py\d", env) else "test"
            found.append(command(f"tox -e {env}", kind, "tox.ini", f"tox.ini env `{env}`", "tox", does=does or None))
    text = read_text(root, "noxfile.py")
    if text is not None:
        for m in re.finditer(r"@nox\.session[^\n]*\n(?:@[^\n]*\n)*def[ \t]+(\w+)", text):
            name = m.group(1)
            found.append(command(f"nox -s {name}", kind_of(name), "noxfile.py", f"noxfile.py session `{name}`", "nox"))
    return found


# -- CI workflows ----------------------------------------------------------------------------------

_BLOCK = re.compile(r"^[|>][+-]?\d*$")
_MAPPING_KEY = re.compile(r"^[\w.-]+[ \t]*:[ \t]*$")  # `name:` opening a nested mapping


def yaml_commands(text: str, keys: tuple[str, ...] = ("run",)) -> list[tuple[str, str]]:
    """(job, command line) of every `run:` (or other `keys`) value in a YAML file, without a YAML
    library: inline values, `|` / `>` blocks and `- item` lists under the key are understood."""
    out: list[tuple[str, str]] = []
    lines = text.splitlines()
    job, jobs_indent, job_indent = "", None, None
    key_rx = re.compile(r"^([ \t]*)(-[ \t]+)?(" + "|".join(map(re.escape, keys)) + r")[ \t]*:[ \t]*(.*)$")
    i = 0
    while i < len(lines):
        line = lines[i]
        stripped = line.strip()
        indent = len(line) - len(line.lstrip())
        if re.match(r"^jobs[ \t]*:", line):
            jobs_indent, job_indent = 0, None
        elif jobs_indent is not None and _MAPPING_KEY.match(stripped):
            if job_indent is None and indent > jobs_indent:
                job_indent = indent
            if indent == job_indent:
                job = stripped.rstrip(":").strip()
        elif jobs_indent is None and indent == 0 and _MAPPING_KEY.match(stripped) and not stripped.startswith("."):
            job = stripped.rstrip(":").strip()  # GitLab CI: top-level keys are jobs
        m = key_rx.match(line)
        if not m:
            i += 1
            continue
        key_indent = len(m.group(1)) + len(m.group(2) or "")
        value = _yaml_scalar(m.group(4))
        i += 1
        if value and not _BLOCK.match(value):
            out.extend((job, c) for c in _command_lines(value))
            continue
        block: list[str] = []
        while i < len(lines) and (not lines[i].strip() or len(lines[i]) - len(lines[i].lstrip()) > key_indent):
            block.append(lines[i])
            i += 1
        if value.startswith(">"):
            text_block = " ".join(b.strip() for b in block if b.strip())
            out.extend((job, c) for c in _command_lines(text_block))
        elif value:
            out.extend((job, c) for c in _command_lines(_dedent(block)))
        else:  # a list of commands (GitLab `script:`)
            for item in block:
                item = item.strip()
                if item.startswith("- "):
                    out.extend((job, c) for c in _command_lines(_yaml_scalar(item[2:])))
    return out


def _yaml_scalar(value: str) -> str:
    value = value.strip()
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
        return value[1:-1]
    return re.sub(r"[ \t]+#.*$", "", value)


def _dedent(block: list[str]) -> str:
    real = [b for b in block if b.strip()]
    if not real:
        return ""
    cut = min(len(b) - len(b.lstrip()) for b in real)
    return "\n".join(b[cut:] for b in block)


def _command_lines(text: str) -> list[str]:
    joined = re.sub(r"[ \t]*\\\n[ \t]*", " ", text)
    return [line.strip() for line in joined.splitlines() if line.strip() and not line.strip().startswith("#")]


def ci_files(root: str) -> list[str]:
    files = []
    workflows = os.path.join(root, ".github", "workflows")
    if os.path.isdir(workflows):
        files += [os.path.join(".github", "workflows", f) for f in sorted(os.listdir(workflows))
                  if f.endswith((".yml", ".yaml"))]
    files += [f for f in (".gitlab-ci.yml", ".circleci/config.yml", "azure-pipelines.yml", "bitbucket-pipelines.yml")
              if exists(root, f)]
    return files[:20]


def scan_ci(root: str, problems: list, deep: bool = False) -> list[dict]:
    found = []
    for rel in ci_files(root):
        text = read_text(root, rel)
        if text is None:
            continue
        keys = ("run",) if rel.startswith(".github") else ("run", "script", "before_script", "command")
        for job, line in yaml_commands(text, keys):
            if "${{" in line and not deep:
                continue  # matrix-dependent lines say little on their own
            kind = command_kind(line)
            if kind not in cmd_mod.CHECK_KINDS and not (deep and kind == "install"):
                continue
            core = cmd_mod.key(line)
            found.append(command(core, kind, rel, f"{rel}" + (f" job `{job}`" if job else ""), "ci"))
    return found


# -- READMEs and contributor docs ----------------------------------------------------------------------

_FENCE = re.compile(r"^[ \t]*(```+|~~~+)[ \t]*([\w+-]*)[^\n]*\n(.*?)^[ \t]*\1[ \t]*$", re.MULTILINE | re.DOTALL)
_SHELL_LANGS = ("", "sh", "bash", "shell", "console", "zsh", "shell-session", "terminal", "cmd", "powershell", "ps1")


_TOP_DOCS = re.compile(r"(?i)^(readme|contributing|development|hacking|building)(\.(md|rst|txt|markdown))?$")
_SETUP_DOCS = re.compile(r"(?i)^(contributing|development|testing|setup|install|getting[-_]started)")


def doc_files(root: str, deep: bool, medium: bool) -> list[str]:
    names = sorted(os.listdir(root)) if os.path.isdir(root) else []
    files = [n for n in names if _TOP_DOCS.match(n)]
    for sub in (".github", "docs"):
        base = os.path.join(root, sub)
        if not os.path.isdir(base) or not (medium or deep):
            continue
        for dirpath, dirnames, filenames in os.walk(base):
            dirnames[:] = sorted(d for d in dirnames if not d.startswith(".")) if deep else []
            for f in sorted(filenames):
                if f.lower().endswith((".md", ".rst")) and (deep or _SETUP_DOCS.match(f)):
                    files.append(os.path.relpath(os.path.join(dirpath, f), root))
    return files[:60]


def scan_docs(root: str, problems: list, deep: bool = False, medium: bool = True) -> list[dict]:
    found = []
    for rel in doc_files(root, deep, medium):
        text = read_text(root, rel, 256_000)
        if not text:
            continue
        for m in _FENCE.finditer(text):
            lang = m.group(2).lower()
            if lang not in _SHELL_LANGS:
                continue
            heading = _heading_before(text, m.start())
            for line in _doc_commands(m.group(3), lang):
                kind = command_kind(line)
                if kind not in cmd_mod.CHECK_KINDS and kind != "install":
                    continue
                where = f"{rel}" + (f", “{heading}”" if heading else "")
                found.append(command(cmd_mod.key(line) if kind != "install" else line, kind, rel, where, "docs"))
    return found


def _heading_before(text: str, pos: int) -> str | None:
    headings = re.findall(r"^#{1,6}[ \t]+(.+?)[ \t#]*$", text[:pos], re.MULTILINE)
    return short(headings[-1], 60) if headings else None


_PLACEHOLDER = re.compile(r"/path/to/|<[\w -]+>|\byour[-_]|\bYOUR_|\.\.\.|…")


def _doc_commands(block: str, lang: str) -> list[str]:
    """Shell command lines of a README code block: prompts, comments, output and lines with
    placeholders (`/path/to/…`, `<name>`) dropped."""
    lines = [ln.rstrip() for ln in re.sub(r"\\\n[ \t]*", " ", block).splitlines()]
    prompted = [ln for ln in lines if re.match(r"^[ \t]*[$%>][ \t]", ln)]
    if prompted or lang in ("console", "shell-session", "terminal"):
        lines = [re.sub(r"^[ \t]*[$%>][ \t]+", "", ln) for ln in prompted]
    out = []
    for line in lines:
        line = re.sub(r"[ \t]+#.*$", "", line).strip()
        if not line or line.startswith("#") or len(line) > 200 or _PLACEHOLDER.search(line):
            continue
        out.append(line)
    return out[:30]


_SCRIPT = re.compile(r"^(?:(?:ba|z)?sh[ \t]+(?:\./)?|\./)((?:[\w.-]+/)*)([\w-]+)(?:\.(?:sh|bash|py|ps1))?(?:[ \t]|$)"
                     r"|^((?:[\w.-]+/)+)([\w-]+)\.(?:sh|bash)(?:[ \t]|$)")


def command_kind(line: str) -> str:
    """`commands.kind`, plus scripts named for what they do (`bash scripts/test.sh` → test)."""
    kind = cmd_mod.kind(line)
    if kind != "other":
        return kind
    m = _SCRIPT.match(cmd_mod.key(line))
    return kind_of(m.group(2) or m.group(4)) if m else kind
