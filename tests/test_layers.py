"""The shape of the package, checked: no import cycle, modules readable in one sitting, the
learning folder holding one concern, and the store as the only place SQL is written to."""

import ast
import os
from pathlib import Path

import ace_engine

PKG = Path(ace_engine.__file__).parent
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


def test_sql_is_written_only_in_the_store():
    writers = []
    for path in PKG.rglob("*.py"):
        if "store" in path.relative_to(PKG).parts:
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
