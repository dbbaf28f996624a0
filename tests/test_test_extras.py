"""What the tests import is declared, and a missing optional package skips a file instead of breaking
the collection (tests/extras.py).

- Every third-party package a test, a test helper or a test's `pytest.importorskip` names is a base
  dependency of ace-engine or in pyproject's `test` extra: a fresh `pip install -e '.[test]'` has all
  of them, none reaches the tests only through another package.
- Every optional package a test module imports at module level is in `extras.OPTIONAL`, with an extra
  that does declare it: without it the file is one skip naming it (conftest), not an import error.
- A property test that sets its own example count writes `max_examples=examples(n)` (conftest), so
  that the fast loop's Hypothesis profile scales it down too; the full run still gets n.
- The skip itself: a module importing an optional package this environment lacks, directly or through
  a test module it imports from, is collected as a skip that names the package and the extra.

Cost: an AST parse of every file under tests/ (well under a second), one small pytest run in a process.
"""

import ast
import functools
import importlib.metadata
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

import extras

TESTS = Path(__file__).resolve().parent
PYPROJECT = tomllib.loads((TESTS.parent / "pyproject.toml").read_text(encoding="utf-8"))["project"]
# Imported by a test that does without it, on purpose not declared: the reference encoder for the
# semantic model (it brings torch; test_retrieval_semantic.py skips, saying so), and pip's own script
# maker (security/test_permission.py writes the same bytes by hand when pip is absent).
UNDECLARED = {"sentence_transformers", "pip"}


def _dist(requirement: str) -> str:
    return re.sub(r"[-_.]+", "-", re.match(r"[A-Za-z0-9_.-]+", requirement).group(0)).lower()


BASE = {_dist(r) for r in PYPROJECT["dependencies"]}
EXTRAS = {name: {_dist(r) for r in reqs} for name, reqs in PYPROJECT["optional-dependencies"].items()}


def sources() -> dict[Path, str]:
    """Every Python file of the tests, not their fixtures (data, never imported)."""
    return {p: p.read_text(encoding="utf-8") for p in sorted(TESTS.rglob("*.py")) if "fixtures" not in p.parts}


LOCAL = {p.stem for p in sources()} | {p.parent.name for p in sources()} | {"ace_engine"}


def third_party(name: str) -> str | None:
    top = name.split(".")[0]
    return None if not top or top in sys.stdlib_module_names or top in LOCAL else top


def imports_anywhere(source: str) -> set[str]:
    """Every absolute import in `source`, at any depth, and every constant `importorskip` name."""
    found = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.add(node.module)
        elif (isinstance(node, ast.Call) and getattr(node.func, "attr", None) == "importorskip" and node.args
              and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str)):
            found.add(node.args[0].value)
    return found


@functools.cache
def _installed() -> dict[str, list[str]]:
    return importlib.metadata.packages_distributions()


def distributions(package: str) -> set[str]:
    """The installed distributions that provide the top-level import `package` (normalized names)."""
    return {_dist(d) for d in _installed().get(package, [])}


# Which distribution brings an import is known only for what is installed: these two need the `test` extra.
needs_test_extra = pytest.mark.skipif(bool(extras.missing()), reason="maps imports to the installed distributions: "
                                      "needs the `test` extra (pip install -e '.[test]')")


@needs_test_extra
def test_every_package_a_test_imports_is_declared():
    undeclared = {}
    for path, source in sources().items():
        for name in imports_anywhere(source):
            package = third_party(name)
            if package is None or package in UNDECLARED:
                continue
            dists = distributions(package)
            if not dists or not dists & (BASE | EXTRAS["test"]):
                undeclared.setdefault(package, set()).add(str(path.relative_to(TESTS)))
    assert not undeclared, f"imported by the tests, not in pyproject's `test` extra (nor a base dependency): {undeclared}"


@needs_test_extra
def test_every_optional_module_level_import_skips_its_file_when_missing():
    unguarded = {}
    for path, source in sources().items():
        for level, name in extras.module_level_imports(source):
            package = None if level else third_party(name)
            if package and package not in extras.OPTIONAL.keys() | {"pytest"} and not distributions(package) & BASE:
                unguarded.setdefault(package, set()).add(str(path.relative_to(TESTS)))
    assert not unguarded, f"imported at module level, not in tests/extras.py's OPTIONAL (a bare install would " \
                          f"fail to collect these files instead of skipping them): {unguarded}"
    wrong = {name: extra for name, extra in extras.OPTIONAL.items()
             if not distributions(name) & EXTRAS[extra] or not distributions(name) & EXTRAS["test"]}
    assert not wrong, f"OPTIONAL names an extra that does not declare the package (or `test` lacks it): {wrong}"


def test_every_explicit_example_count_scales_with_the_profile():
    fixed = [f"{path.relative_to(TESTS)}:{node.lineno}" for path, source in sources().items()
             for node in ast.walk(ast.parse(source))
             if isinstance(node, ast.keyword) and node.arg == "max_examples" and isinstance(node.value, ast.Constant)]
    assert not fixed, f"write max_examples=examples(n) (conftest) so that scripts/test.sh --fast scales it: {fixed}"


def test_a_module_needing_a_missing_package_is_one_skip_naming_it(tmp_path):
    """The hook conftest has (`pytest_pycollect_makemodule`) over the real extras.py, in a pytest run in
    its own process where `hypothesis` cannot be found."""
    (tmp_path / "helper_needing.py").write_text("import hypothesis\n")
    (tmp_path / "test_direct.py").write_text("from hypothesis import given\n\ndef test_a():\n    pass\n")
    (tmp_path / "test_through.py").write_text("from helper_needing import hypothesis\n\ndef test_b():\n    pass\n")
    (tmp_path / "test_plain.py").write_text("def test_c():\n    pass\n")
    # Runs the real extras.py against files in tmp_path with hypothesis hidden: its TESTS is tmp_path.
    probe = f"""
import sys, importlib.util
real = importlib.util.find_spec
importlib.util.find_spec = lambda name, *a: None if name == "hypothesis" else real(name, *a)
sys.path.insert(0, {str(TESTS)!r})
sys.path.insert(0, {str(tmp_path)!r})
import pathlib, pytest, extras
extras.TESTS = pathlib.Path({str(tmp_path)!r})

class Plugin:
    def pytest_pycollect_makemodule(self, module_path, parent):
        return extras.NeedsExtra.from_parent(parent, path=module_path) if extras.needs(module_path) else None

sys.exit(pytest.main(["-q", "-rs", "-p", "no:cacheprovider", "-p", "no:hypothesispytest", "-p", "no:xdist",
                      "--rootdir", {str(tmp_path)!r}, "-c", "/dev/null", {str(tmp_path)!r}], plugins=[Plugin()]))
"""
    run = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "1 passed, 2 skipped" in run.stdout, run.stdout
    for name in ("test_direct.py", "test_through.py"):
        assert f"{name} needs hypothesis, not installed here (pip install -e '.[test]')" in run.stdout, run.stdout
