"""The optional packages the tests import, and what a test file does when one is missing.

Contract: every third-party package a test imports is declared in pyproject's `test` extra (or is a
base dependency); `OPTIONAL` names each one a test file imports at module level, with the extra a
user installs for it. With the base package alone (`pip install -e . pytest`) the suite still
collects: a file whose module-level imports include a missing `OPTIONAL` package is collected as one
skip that names the package and the extra (conftest's `pytest_pycollect_makemodule` returns
`NeedsExtra` for it), not as an import error. tests/test_test_extras.py keeps the table complete
and declared.

Cost: when every optional package is installed (the `test` extra), one `find_spec` per name, once,
and nothing per file; otherwise one AST parse per test file at collection.
"""

from __future__ import annotations

import ast
import functools
import importlib.util
from pathlib import Path

import pytest

# Import name -> the extra that brings it (every one is in `test` too, which has them all).
OPTIONAL = {
    "hypothesis": "test",
    "anthropic": "llm",
    "openai": "llm",
    "jsonschema_rs": "test",
    "schemathesis": "test",
    "yaml": "test",
    "anyio": "test",
    "numpy": "semantic",
    "mcp": "mcp",
    "starlette": "server",
    "uvicorn": "server",
    "jinja2": "server",
    "psycopg": "server",
    "playwright": "test",
    "build": "test",
    "hatchling": "test",
}


@functools.cache
def missing() -> frozenset[str]:
    """The `OPTIONAL` packages this environment lacks."""
    return frozenset(name for name in OPTIONAL if importlib.util.find_spec(name) is None)


TESTS = Path(__file__).resolve().parent


def module_level_imports(source: str) -> set[tuple[int, str]]:
    """The modules a module imports in its own body (not in a function, nor in a `try` that could
    catch the ImportError), as (relative level, dotted name): what importing it needs."""
    names: set[tuple[int, str]] = set()
    for node in ast.parse(source).body:
        if isinstance(node, ast.Import):
            names.update((0, alias.name) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            names.add((node.level, node.module or ""))
    return names


def _local(path: Path, level: int, name: str) -> Path | None:
    """The test helper or test module under tests/ that an import in `path` names, if it is one."""
    base = path.parent if level else TESTS
    for _ in range(max(level - 1, 0)):
        base = base.parent
    target = base.joinpath(*name.split(".")) if name else base
    for candidate in (target.with_suffix(".py"), target / "__init__.py"):
        if candidate.is_file() and TESTS in candidate.resolve().parents:
            return candidate
    return None


@functools.cache
def imported_packages(path: Path) -> frozenset[str]:
    """The top-level third-party (or stdlib) package names that importing the test module at `path`
    imports, following the other test modules and helpers it imports from tests/."""
    try:
        source = path.read_text(encoding="utf-8")
    except OSError:
        return frozenset()
    found: set[str] = set()
    for level, name in module_level_imports(source):
        local = _local(path, level, name)
        if local is not None:
            if local != path:
                found |= imported_packages(local)
        elif not level:
            found.add(name.split(".")[0])
    return frozenset(found)


def needs(path: Path) -> list[str]:
    """The missing optional packages the test module at `path` needs to be imported (sorted)."""
    if not missing():
        return []
    return sorted(imported_packages(Path(path)) & missing())


class NeedsExtra(pytest.File):
    """A test module that cannot be imported here: collected as one skip saying what to install."""

    def collect(self):
        lacking = needs(self.path)
        extras = sorted({OPTIONAL[name] for name in lacking})
        how = "'.[test]'" if extras == ["test"] else f"'.[{','.join(extras)}]', or '.[test]' for every test"
        pytest.skip(f"{self.path.name} needs {', '.join(lacking)}, not installed here (pip install -e {how})")
