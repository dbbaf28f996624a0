"""Conventions from configuration, for `ace bootstrap`: which linter, formatter, type checker and
test runner settings hold in this repository, each phrased as a bullet that names its file.

pyproject.toml `[tool.*]` tables (pytest, ruff, black, isort, mypy, pyright, coverage), ruff.toml,
setup.cfg / tox.ini / .flake8 / mypy.ini / pytest.ini sections, pyrightconfig.json, tsconfig.json
(comments and trailing commas allowed), ESLint / Prettier / Biome configs, .editorconfig and
.pre-commit-config.yaml. Findings have the shapes of `findings.py`; files are read through `readers.py`, which never
raise on a malformed file. Cost: a few small file reads; nothing is executed.
"""

from __future__ import annotations

import configparser
import re
from collections.abc import Mapping
from typing import Any

from .findings import Finding, NoteFinding, command, note, short
from .readers import Problem, exists, read_ini, read_json, read_text, read_toml


def scan_conventions(root: str, problems: list[Problem], deep: bool = False) -> list[Finding]:
    found: list[Finding] = []
    tool = (read_toml(root, "pyproject.toml", []) or {}).get("tool") or {}  # scan_pyproject reports a broken file
    found.extend(_python_tool_config(tool if isinstance(tool, dict) else {}, "pyproject.toml"))
    for rel in ("ruff.toml", ".ruff.toml"):
        data = read_toml(root, rel, problems)
        if isinstance(data, dict):
            found.append(_ruff_note(data, rel, rel))
            break
    # INI files: (file, section, what it configures).
    parsers: dict[str, configparser.ConfigParser | None] = {}
    for rel, section, what in ((".flake8", "flake8", "flake8"), ("setup.cfg", "flake8", "flake8"),
                               ("tox.ini", "flake8", "flake8"), ("setup.cfg", "mypy", "mypy"),
                               ("mypy.ini", "mypy", "mypy"),
                               ("setup.cfg", "tool:pytest", "pytest"), ("tox.ini", "pytest", "pytest"),
                               ("pytest.ini", "pytest", "pytest")):
        if rel not in parsers:  # each file read once; tox.ini's problems are reported with its environments
            parsers[rel] = read_ini(root, rel, problems if rel != "tox.ini" else []) if exists(root, rel) else None
        parser = parsers[rel]
        if parser is None or not parser.has_section(section):
            continue
        options = dict(parser.items(section))
        where = f"{rel} [{section}]"
        if what == "flake8":
            found.append(_flake8_note(options, where, rel))
        elif what == "mypy":
            found.append(_mypy_note(options, where, rel))
        else:
            found.extend(_pytest_findings(options, rel, f"[{section}]"))
    data = read_json(root, "pyrightconfig.json", problems, comments=True)
    if isinstance(data, dict):
        found.append(note("pyright", f"Types are checked with Pyright in `{data.get('typeCheckingMode', 'standard')}` "
                          "mode (pyrightconfig.json); run `pyright`.", "strategies_and_hard_rules",
                          ["pyrightconfig.json"], "pyrightconfig.json"))
    found.extend(_tsconfig(root, problems))
    found.extend(_eslint_prettier_biome(root, problems))
    found.extend(_editorconfig(root))
    found.extend(_pre_commit(root))
    return found


_TS_STRICT_EXTRAS = ("noUncheckedIndexedAccess", "exactOptionalPropertyTypes", "noImplicitReturns",
                     "noUnusedLocals", "noUnusedParameters", "noFallthroughCasesInSwitch")


def _tsconfig(root: str, problems: list[Problem]) -> list[Finding]:
    data = read_json(root, "tsconfig.json", problems, comments=True)
    if not isinstance(data, dict):
        return []
    opts = data.get("compilerOptions") or {}
    parts = []
    if opts.get("strict") is True:
        parts.append("`strict` is on: no implicit `any`, strict null checks — handle `undefined` explicitly")
    elif opts.get("strict") is False or "strict" not in opts:
        off = [f for f in ("noImplicitAny", "strictNullChecks") if opts.get(f) is True]
        parts.append("`strict` is off" + (f" (but {', '.join(off)} on)" if off else ""))
    extras = [f"`{f}`" for f in _TS_STRICT_EXTRAS if opts.get(f) is True]
    if extras:
        parts.append("also " + ", ".join(extras))
    for key in ("target", "module", "moduleResolution", "jsx"):
        if opts.get(key):
            parts.append(f"{key} `{opts[key]}`")
    paths = opts.get("paths") or {}
    if isinstance(paths, dict) and paths:
        alias = ", ".join(f"`{k}` → `{(v or [''])[0]}`" for k, v in list(paths.items())[:3] if isinstance(v, list))
        if alias:
            parts.append(f"import aliases {alias}")
    if not parts:
        return []
    return [note("tsconfig", "TypeScript (tsconfig.json): " + "; ".join(parts) + ". Check types with `npx tsc "
                                                                                 "--noEmit`.",
                 "strategies_and_hard_rules", ["tsconfig.json"], "compilerOptions")]


def _first_existing(root: str, names: tuple[str, ...]) -> str | None:
    return next((n for n in names if exists(root, n)), None)


def _eslint_prettier_biome(root: str, problems: list[Problem]) -> list[Finding]:
    found: list[Finding] = []
    pkg = read_json(root, "package.json", []) if exists(root, "package.json") else None
    pkg = pkg if isinstance(pkg, dict) else {}
    eslint = _first_existing(root, ("eslint.config.js", "eslint.config.mjs", "eslint.config.cjs", "eslint.config.ts",
                                    ".eslintrc.json", ".eslintrc.js", ".eslintrc.cjs", ".eslintrc.yml",
                                    ".eslintrc.yaml", ".eslintrc"))
    if eslint or "eslintConfig" in pkg:
        rel = eslint or "package.json"
        extends = []
        if rel in (".eslintrc.json", ".eslintrc"):
            data = read_json(root, rel, problems, comments=True)
            if isinstance(data, dict):
                ext = data.get("extends") or []
                extends = [ext] if isinstance(ext, str) else list(ext)
        elif rel == "package.json":
            ext = (pkg.get("eslintConfig") or {}).get("extends") or []
            extends = [ext] if isinstance(ext, str) else list(ext)
        shown = f" (extends {', '.join(f'`{e}`' for e in extends[:4])})" if extends else ""
        found.append(note("eslint", f"ESLint is configured in {rel}{shown}; run `npx eslint .` and fix warnings rather "
                          "than disabling rules.", "strategies_and_hard_rules", [rel], rel))
    prettier = _first_existing(root, (".prettierrc", ".prettierrc.json", ".prettierrc.json5", ".prettierrc.yml",
                                      ".prettierrc.yaml", ".prettierrc.js", ".prettierrc.cjs", "prettier.config.js",
                                      "prettier.config.mjs", "prettier.config.cjs"))
    if prettier or "prettier" in pkg:
        rel = prettier or "package.json"
        options = None
        if rel in (".prettierrc", ".prettierrc.json"):
            options = read_json(root, rel, [], comments=True)
        elif rel == "package.json" and isinstance(pkg.get("prettier"), dict):
            options = pkg["prettier"]
        details = []
        if isinstance(options, dict):
            if options.get("semi") is False:
                details.append("no semicolons")
            if options.get("singleQuote") is True:
                details.append("single quotes")
            for key in ("printWidth", "tabWidth", "trailingComma"):
                if key in options:
                    details.append(f"{key} {options[key]}")
        listed = f": {', '.join(details)}" if details else ""
        found.append(note("prettier", f"Prettier formats the code ({rel}{listed}); run `npx prettier --write .` "
                          "instead of formatting by hand.", "strategies_and_hard_rules",
                          [rel], rel))
    biome = _first_existing(root, ("biome.json", "biome.jsonc"))
    if biome:
        found.append(note("biome", f"Biome lints and formats the code ({biome}); run `npx biome check --write .`.",
                          "strategies_and_hard_rules", [biome], biome))
    return found


def _editorconfig(root: str) -> list[Finding]:
    text = read_text(root, ".editorconfig")
    if text is None:
        return []
    rules = []
    glob: str | None = None
    props: dict[str, str] = {}

    def flush():
        if glob and glob != "*" or glob == "*" and props:
            style = props.get("indent_style")
            size = props.get("indent_size")
            parts = []
            if style == "tab":
                parts.append("tabs")
            elif style == "space" or size:
                parts.append(f"{size or ''} spaces".strip())
            if props.get("max_line_length") and props["max_line_length"] != "off":
                parts.append(f"max line {props['max_line_length']}")
            if props.get("end_of_line"):
                parts.append(f"{props['end_of_line'].upper()} line endings")
            if parts:
                rules.append(f"`{glob}`: {', '.join(parts)}")

    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith(("#", ";")):
            continue
        if line.startswith("[") and line.endswith("]"):
            flush()
            glob, props = line[1:-1], {}
        elif "=" in line and glob is not None:
            key, _, value = line.partition("=")
            props[key.strip().lower()] = value.strip().lower()
    flush()
    if not rules:
        return []
    return [note("editorconfig", "Indentation and line endings (.editorconfig): " + "; ".join(rules[:5]) + ".",
                 "strategies_and_hard_rules", [".editorconfig"], f"{len(rules)} sections")]


def _pre_commit(root: str) -> list[Finding]:
    text = read_text(root, ".pre-commit-config.yaml")
    if text is None:
        return []
    ids = list(dict.fromkeys(re.findall(r"^[ \t]*-[ \t]+id:[ \t]*['\"]?([\w.-]+)", text, re.MULTILINE)))
    if not ids:
        return []
    shown = ", ".join(f"`{i}`" for i in ids[:8]) + ("…" if len(ids) > 8 else "")
    return [note("pre-commit", f"pre-commit hooks run {shown} (.pre-commit-config.yaml); run `pre-commit run "
                               "--all-files` "
                 "before committing, or install them with `pre-commit install`.", "strategies_and_hard_rules",
                 [".pre-commit-config.yaml"], f"{len(ids)} hooks")]


def _python_tool_config(tool: dict[str, Any], rel: str) -> list[Finding]:
    found: list[Finding] = []
    pytest_cfg = (tool.get("pytest") or {}).get("ini_options") or {}
    if pytest_cfg:
        found.extend(_pytest_findings(pytest_cfg, rel, "[tool.pytest.ini_options]"))
    ruff = tool.get("ruff")
    if isinstance(ruff, dict):
        found.append(_ruff_note(ruff, f"{rel} [tool.ruff]", rel))
    black = tool.get("black")
    if isinstance(black, dict):
        details = [f"line-length {black['line-length']}"] if black.get("line-length") else []
        if black.get("target-version"):
            details.append("target " + ", ".join(black["target-version"]))
        listed = f" ({'; '.join(details)})" if details else ""
        found.append(note("black", f"Python code is formatted with Black{listed} — {rel} [tool.black]; run `black .` "
                          "before committing.", "strategies_and_hard_rules",
                          [rel], "[tool.black]"))
    isort = tool.get("isort")
    if isinstance(isort, dict):
        profile = f" with profile `{isort['profile']}`" if isort.get("profile") else ""
        found.append(note("isort", f"Imports are sorted by isort{profile} ({rel} [tool.isort]); run `isort .`.",
                          "strategies_and_hard_rules", [rel], "[tool.isort]"))
    mypy = tool.get("mypy")
    if isinstance(mypy, dict):
        found.append(_mypy_note(mypy, f"{rel} [tool.mypy]", rel))
    pyright = tool.get("pyright")
    if isinstance(pyright, dict):
        mode = pyright.get("typeCheckingMode", "standard")
        found.append(note("pyright", f"Types are checked with Pyright in `{mode}` mode ({rel} [tool.pyright]); run "
                                     "`pyright`.",
                          "strategies_and_hard_rules", [rel], "[tool.pyright]"))
    coverage = ((tool.get("coverage") or {}).get("report") or {})
    if isinstance(coverage, dict) and coverage.get("fail_under") is not None:
        found.append(note("coverage-floor", f"Test coverage must stay at or above {coverage['fail_under']}% "
                          f"({rel} [tool.coverage.report] fail_under); add tests with new code.",
                          "strategies_and_hard_rules", [rel], f"fail_under = {coverage['fail_under']}"))
    return found


def _pytest_findings(cfg: Mapping[str, Any], rel: str, table: str) -> list[Finding]:
    details = []
    if cfg.get("testpaths"):
        paths = cfg["testpaths"] if isinstance(cfg["testpaths"], list) else str(cfg["testpaths"]).split()
        details.append("tests in " + ", ".join(f"`{p}`" for p in paths))
    if cfg.get("addopts"):
        addopts = cfg["addopts"] if isinstance(cfg["addopts"], str) else " ".join(cfg["addopts"])
        details.append(f"always with `{short(addopts, 80)}`")
    where = f"configured in {rel} {table}" + (f": {', '.join(details)}" if details else "")
    found: list[Finding] = [command("pytest", "test", rel, where, "config")]
    markers = cfg.get("markers") or []
    if isinstance(markers, str):
        markers = [m for m in markers.splitlines() if m.strip()]
    if markers:
        named = []
        for marker in markers[:6]:
            name, _, desc = str(marker).partition(":")
            named.append(f"`{name.strip()}`" + (f" ({short(desc.strip(), 60)})" if desc.strip() else ""))
        first = str(markers[0]).split(":")[0].strip()
        found.append(note("pytest-markers", f"Pytest markers ({rel} {table}): {', '.join(named)}; select with "
                          f"`pytest -m {first}`, skip with `pytest -m 'not {first}'`.", "useful_code_snippets", [rel],
                          f"{len(markers)} markers"))
    return found


def _ruff_note(ruff: dict[str, Any], where: str, rel: str) -> NoteFinding:
    lint: dict[str, Any] = ruff["lint"] if isinstance(ruff.get("lint"), dict) else ruff
    details = []
    if ruff.get("line-length"):
        details.append(f"line-length {ruff['line-length']}")
    if ruff.get("target-version"):
        details.append(f"target {ruff['target-version']}")
    if lint.get("select"):
        details.append("rules " + ", ".join(map(str, lint["select"][:8])) + ("…" if len(lint["select"]) > 8 else ""))
    if lint.get("ignore"):
        details.append("ignoring " + ", ".join(map(str, lint["ignore"][:5])))
    formats = "format" in ruff
    return note("ruff", "Ruff is the Python linter" + (" and formatter" if formats else "")
                + (f" ({'; '.join(details)})" if details else "") + f" — {where}; run `ruff check .`"
                + (" and `ruff format .`" if formats else "") + ".", "strategies_and_hard_rules", [rel], where)


def _mypy_note(mypy: Mapping[str, Any], where: str, rel: str) -> NoteFinding:
    truthy = lambda v: v is True or str(v).lower() in ("true", "1", "yes")  # noqa: E731 - INI or TOML values
    flags = [f for f in ("disallow_untyped_defs", "disallow_any_generics", "warn_return_any", "no_implicit_optional")
             if truthy(mypy.get(f))]
    if truthy(mypy.get("strict")):
        mode = "in strict mode: new functions need complete type annotations"
    elif flags:
        mode = "with " + ", ".join(f"`{f}`" for f in flags)
    else:
        mode = "with default settings"
    target = mypy.get("files")
    run = f"mypy {' '.join(target) if isinstance(target, list) else target}" if target else "mypy ."
    return note("mypy", f"Types are checked with mypy {mode} ({where}); run `{run}`.",
                "strategies_and_hard_rules", [rel], where)


def _flake8_note(options: Mapping[str, str], where: str, rel: str) -> NoteFinding:
    details = []
    if options.get("max-line-length"):
        details.append(f"max line length {options['max-line-length']}")
    ignore = options.get("extend-ignore") or options.get("ignore")
    if ignore:
        codes = [i.strip() for i in ignore.replace("\n", ",").split(",") if i.strip()]
        details.append("ignoring " + ", ".join(codes)[:60])
    return note("flake8", "flake8 lints the Python code" + (f" ({'; '.join(details)})" if details else "")
                + f" — {where}; run `flake8`.", "strategies_and_hard_rules", [rel], where)
