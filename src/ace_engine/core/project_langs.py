"""Which ecosystems a project is written in, from the marker files at its root: `mix.exs` → elixir,
`go.mod` → go, `Cargo.toml` → rust, `pom.xml` / `build.gradle(.kts)` → jvm, `Gemfile` → ruby,
`tsconfig.json` → typescript (else `package.json` → javascript), `pyproject.toml` / `setup.py` /
`requirements.txt` → python, and a few more.

Contract: `detect(root)` returns the ecosystem names `playbook.domains` knows, the main one first
(a compiled or server language before the JavaScript a web project also carries, before the Python
a repository may keep for scripts); () for no root, no marker, or a directory that can't be read.
When the root has no marker (a monorepo of `backend/` and `web/`), the first few of its top-level
directories are looked at the same way. Never raises; reads names only, never a file's content.

Cost: one directory listing of the root (at most a few more for a marker-less monorepo), cached per
process and root — the background worker and the CLI pay it once, a hook at most once.
"""

from __future__ import annotations

import os

# (marker file name, ecosystem), in the order of precedence for the main language.
MARKERS = (
    ("mix.exs", "elixir"), ("go.mod", "go"), ("cargo.toml", "rust"), ("pom.xml", "jvm"), ("build.gradle", "jvm"),
    ("build.gradle.kts", "jvm"), ("settings.gradle", "jvm"), ("settings.gradle.kts", "jvm"), ("gemfile", "ruby"),
    ("pubspec.yaml", "dart"), ("package.swift", "swift"), ("composer.json", "php"),
    ("pyproject.toml", "python"), ("setup.py", "python"), ("setup.cfg", "python"), ("requirements.txt", "python"),
    ("pipfile", "python"), ("tsconfig.json", "typescript"), ("deno.json", "typescript"),
    ("package.json", "javascript"),
)
SUFFIXES = ((".gemspec", "ruby"), (".csproj", "dotnet"), (".sln", "dotnet"), (".fsproj", "dotnet"))
_ORDER = {eco: i for i, eco in enumerate(dict.fromkeys([e for _, e in MARKERS] + [e for _, e in SUFFIXES]))}
MAX_ENTRIES = 2000  # a root with more entries than this is read only this far
SUBDIRS = 6  # top-level directories looked into when the root has no marker
SKIP_DIRS = frozenset({"node_modules", "vendor", "deps", "_build", "target", "build", "dist", "docs", "doc",
                       "test", "tests", "spec", "examples", "scripts", "tmp", "log", "logs"})

_cache: dict[str, tuple[str, ...]] = {}


def _names(path: str) -> tuple[set[str], list[str]]:
    """Lower-case entry names of `path`, and its subdirectories (not hidden) in name order."""
    names, dirs = set(), []
    try:
        with os.scandir(path) as it:
            for n, entry in enumerate(it):
                if n >= MAX_ENTRIES:
                    break
                names.add(entry.name.lower())
                try:
                    if not entry.name.startswith(".") and entry.is_dir(follow_symlinks=False):
                        dirs.append(entry.name)
                except OSError:
                    continue
    except OSError:
        pass
    return names, sorted(dirs)


def _ecosystems(names: set[str]) -> set[str]:
    found = {eco for marker, eco in MARKERS if marker in names}
    found |= {eco for suffix, eco in SUFFIXES if any(n.endswith(suffix) for n in names)}
    if "typescript" in found:
        found.discard("javascript")  # a TypeScript project's package.json is not a second language
    return found


def detect(root: str | None) -> tuple[str, ...]:
    """The project's ecosystems, main one first (see the module docstring)."""
    if not root:
        return ()
    cached = _cache.get(root)
    if cached is not None:
        return cached
    names, dirs = _names(root)
    found = _ecosystems(names)
    if not found:
        for sub in [d for d in dirs if d.lower() not in SKIP_DIRS][:SUBDIRS]:
            found |= _ecosystems(_names(os.path.join(root, sub))[0])
        if "typescript" in found:
            found.discard("javascript")
    result = tuple(sorted(found, key=lambda eco: _ORDER[eco]))
    _cache[root] = result
    return result
