"""What a repository's own files say about working in it: commands and conventions, for `ace bootstrap`.

Each scanner reads one kind of file and returns *findings* (`findings.py`: a command — how the
project builds, tests, lints… — or a note, a fact already phrased as a bullet); `merge_commands`
in `bootstrap/__init__.py` folds the same command found in several files into one bullet.

This module reads the files that say how to *run* things (pyproject.toml metadata and task
runners, package.json, Makefile / justfile, tox / nox, CI workflows, READMEs);
`conventions.py` reads the configuration of linters, formatters and type checkers.

Scanners never raise on a malformed file: they return what they could read and name what they
skipped in `problems` (a list passed in); the files are read through `readers.py`.
One piece, past 400 lines, because the scanners are short siblings under one contract (findings plus
`problems`, never raising, files read through `readers.py`); the file is their list.
Cost: a few small file reads per scanner; nothing is executed.
"""

from __future__ import annotations

import json
import os
import re

from ..observe import commands as cmd_mod
from .findings import Finding, command, command_kind, kind_of, note, short
from .readers import Problem, exists, read_ini, read_json, read_text, read_toml, yaml_commands

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


def scan_package_managers(root: str, problems: list[Problem]) -> list[Finding]:
    found: list[Finding] = []
    for lock, manager, install, runner in PY_MANAGERS:
        if exists(root, lock):
            found.append(note(f"py-manager:{manager}",
                              f"Python dependencies are managed with {manager} ({lock} is committed): install with "
                              f"`{install}` and run tools inside the project environment with `{runner}`.",
                              "strategies_and_hard_rules", [lock], f"{lock} present"))
            break
    if exists(root, "package.json"):
        js, js_lock = js_manager(root)
        if js_lock:
            others = [m for m in ("npm", "yarn", "pnpm", "bun") if m != js]
            named = ", ".join(others[:-1]) + " or " + others[-1]
            found.append(note(f"js-manager:{js}",
                              f"Install JavaScript dependencies with `{js} install` ({js_lock} is committed); "
                              f"don't use {named} here — they ignore {js_lock}.",
                              "strategies_and_hard_rules", [js_lock, "package.json"], f"{js_lock} present"))
    return found


# -- pyproject.toml -------------------------------------------------------------------------------

def scan_pyproject(root: str, problems: list[Problem], deep: bool = False) -> list[Finding]:
    data = read_toml(root, "pyproject.toml", problems)
    if not data:
        return []
    found: list[Finding] = []
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
        listed = ", ".join(f"`{name}` → `{target}`" for name, target in list(scripts.items())[:5]
                           if isinstance(target, str))
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
            runners.append(("hatch", env["scripts"], f"hatch run {prefix}{{name}}",
                            f"[tool.hatch.envs.{env_name}.scripts]"))
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


def _task_text(spec: object) -> str:
    """The command(s) of a task-runner entry: a string, a list, or a table with `cmd` / `shell` / …."""
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


def scan_package_json(root: str, problems: list[Problem], deep: bool = False) -> list[Finding]:
    found: list[Finding] = []
    manager, _ = js_manager(root)
    for rel in package_json_files(root, deep):
        data = read_json(root, rel, problems)
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
                found.append(note("workspaces", f"This is a {manager} workspace monorepo (package.json `workspaces`: "
                                                f"{listed}); "
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


def scan_makefile(root: str, problems: list[Problem], deep: bool = False) -> list[Finding]:
    found: list[Finding] = []
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
                found.append(command(f"make {name}", kind, rel, f"{rel} target `{name}`", "makefile",
                                     does=" && ".join(recipe)))
            else:  # only prerequisites: `check: lint test`
                listed = " and ".join(f"`{p}`" for p in prereqs[:4])
                found.append(command(f"make {name}", kind, rel, f"{rel} target `{name}` runs the {listed} targets",
                                     "makefile"))
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
            found.append(command(f"just {name}", kind, rel, f"{rel} recipe `{name}`", "justfile",
                                 does=" && ".join(lines)))
    return found


def scan_tox_nox(root: str, problems: list[Problem], deep: bool = False) -> list[Finding]:
    found: list[Finding] = []
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

def ci_files(root: str) -> list[str]:
    files = []
    workflows = os.path.join(root, ".github", "workflows")
    if os.path.isdir(workflows):
        files += [os.path.join(".github", "workflows", f) for f in sorted(os.listdir(workflows))
                  if f.endswith((".yml", ".yaml"))]
    files += [f for f in (".gitlab-ci.yml", ".circleci/config.yml", "azure-pipelines.yml", "bitbucket-pipelines.yml")
              if exists(root, f)]
    return files[:20]


def scan_ci(root: str, problems: list[Problem], deep: bool = False) -> list[Finding]:
    found: list[Finding] = []
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


def scan_docs(root: str, problems: list[Problem], deep: bool = False, medium: bool = True) -> list[Finding]:
    found: list[Finding] = []
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
