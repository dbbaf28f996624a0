"""The shape of the package, checked: the layers table (`core/layers.py`) holds every package and
the imports point only down it (generated from the table: one test per package), no package and no
module cycle, modules readable in one sitting, the learning folder holding one concern, and the store
as the only place SQL is written to."""

import ast
import functools
import os
from pathlib import Path

import pytest

import ace_engine
from ace_engine.core import layers

PKG = Path(ace_engine.__file__).parent
ROOT = PKG.parents[1]
MAX_LINES = 500


def modules() -> dict[str, Path]:
    found = {}
    for path in PKG.rglob("*.py"):
        parts = path.relative_to(PKG.parent).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        found[name] = path
    return found


def run_time_imports(name: str, path: Path, known: dict[str, Path]) -> set[str]:
    """Every module `name` imports when it runs (lazy imports inside functions included; imports
    under `if TYPE_CHECKING:` excluded: they never run)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    skipped = {id(node) for branch in ast.walk(tree)
               if isinstance(branch, ast.If) and "TYPE_CHECKING" in ast.unparse(branch.test)
               for stmt in branch.body for node in ast.walk(stmt)}
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    out = set()
    for node in ast.walk(tree):
        if id(node) in skipped:
            continue
        if isinstance(node, ast.Import):
            out.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = package.split(".")[: len(package.split(".")) - (node.level - 1)] if node.level else []
            target = ".".join(base + ([node.module] if node.module else []))
            for alias in node.names:
                sub = f"{target}.{alias.name}"
                out.add(sub if sub in known else target)
    return {m for m in out if m in known and m != name}


def package_of(module: str) -> str:
    """`ace_engine.server.storage.dialect` → `server`; the root `ace_engine` itself → `ace_engine`."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else parts[0]


@functools.cache
def package_imports() -> dict[str, dict[str, list[str]]]:
    """package → imported package → the module-level edges behind it (other packages only)."""
    known = modules()
    out: dict[str, dict[str, list[str]]] = {}
    for name, path in known.items():
        for target in run_time_imports(name, path, known):
            a, b = package_of(name), package_of(target)
            if a != b and "ace_engine" not in (a, b):
                out.setdefault(a, {}).setdefault(b, []).append(f"{name} -> {target}")
    return out


def test_every_package_is_in_the_layers_table():
    on_disk = {p.parent.name for p in PKG.glob("*/__init__.py")}
    assert on_disk == set(layers.RANK), (f"not in core/layers.py: {sorted(on_disk - set(layers.RANK))}; "
                                         f"in the table but gone: {sorted(set(layers.RANK) - on_disk)}")


def test_no_module_at_the_package_root():
    loose = sorted(p.name for p in PKG.glob("*.py") if p.name != "__init__.py")
    assert not loose, f"every module lives in a layer's folder (core/ for the foundation): {loose}"


@pytest.mark.parametrize("package", [name for name, _, _ in layers.TABLE])
def test_imports_point_down_the_layers(package):
    upward = [edge for target, edges in package_imports().get(package, {}).items()
              if target in layers.RANK and not layers.allowed(package, target) for edge in edges]
    assert not upward, (f"{package} (rank {layers.RANK[package]}) imports upward or sideways:\n"
                        + "\n".join(sorted(upward)))


def test_no_package_cycle():
    graph = {a: set(bs) for a, bs in package_imports().items()}
    cycles = []
    for start in graph:
        stack = [(start, [start])]
        while stack:
            node, trail = stack.pop()
            for nxt in graph.get(node, ()):
                if nxt == start:
                    cycles.append(" -> ".join(trail + [nxt]))
                elif nxt not in trail:
                    stack.append((nxt, trail + [nxt]))
    assert not cycles, "package cycles:\n" + "\n".join(sorted(set(cycles))[:10])


def test_the_development_notes_show_the_table():
    text = (ROOT / "docs" / "development.md").read_text(encoding="utf-8")
    assert layers.markdown() in text, "docs/development.md's layers table differs from core/layers.markdown()"


def test_no_import_cycle():
    known = modules()
    graph = {name: run_time_imports(name, path, known) for name, path in known.items()}
    # A module may import its own package's __init__ (Python runs it first anyway); a cycle is a
    # path back to the start through other modules.
    cycles = []
    for start in graph:
        stack, seen = [(start, [start])], set()
        while stack:
            node, trail = stack.pop()
            for nxt in graph[node]:
                if nxt == start and len(trail) > 1 and not start.startswith(nxt + ".") and not nxt.startswith(start + "."):
                    cycles.append(" -> ".join(trail + [nxt]))
                elif nxt not in seen:
                    seen.add(nxt)
                    stack.append((nxt, trail + [nxt]))
    assert not cycles, "import cycles:\n" + "\n".join(sorted(set(cycles))[:10])


def test_modules_stay_readable_in_one_sitting():
    long = {str(p.relative_to(PKG)): n for p in PKG.rglob("*.py")
            if (n := len(p.read_text(encoding="utf-8").splitlines())) > MAX_LINES}
    assert not long, f"modules over {MAX_LINES} lines: {long}"


def test_learning_holds_reflection_and_curation_only():
    names = {p.stem for p in (PKG / "learning").glob("*.py")}
    assert not names & {"queue", "worker", "feedback"} and not any(n.startswith("bootstrap") for n in names), names
    # What happened in a session is read in observe/ (below continuity, bootstrap and mcp_server).
    readers = {"commands", "signatures", "check_tools", "trajectory", "transcript", "git_context", "origins",
               "corrections"}
    assert not names & readers, f"readers of what happened belong in observe/: {sorted(names & readers)}"


# The folders that own a database: the local store and the team server's storage. SQL is written there only.
SQL_HOMES = (("store",), ("server", "storage"))


def test_sql_is_written_only_in_the_stores():
    writers = []
    for path in PKG.rglob("*.py"):
        if path.relative_to(PKG).parts[:-1] in SQL_HOMES:
            continue
        text = path.read_text(encoding="utf-8")
        for keyword in ("INSERT INTO", "UPDATE bullets", "DELETE FROM", "CREATE TABLE"):
            if keyword in text:
                writers.append(f"{path.relative_to(PKG)}: {keyword}")
    assert not writers, writers


def test_every_module_states_its_contract():
    missing = [str(p.relative_to(PKG)) for p in PKG.rglob("*.py")
               if os.path.getsize(p) and ast.get_docstring(ast.parse(p.read_text(encoding="utf-8"))) is None]
    assert not missing, missing


def test_code_that_finds_its_package_from_its_own_file_follows_the_moves():
    """Detached workers put `package_parent()` on sys.path: after a module moves a folder deeper, it
    must still name the directory that holds `ace_engine` (an editable install would hide a miss)."""
    from ace_engine.core import background

    assert Path(background.package_parent()) == PKG.parent
