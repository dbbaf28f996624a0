"""The project's own files as anchors read them: bounded, inside the repository, never executed.

Contract: `read(root, rel)` is the only way anchors read a file: a project-relative path without
`..`, whose real path stays inside the repository (a symlink pointing out of it reads as absent),
a regular file opened with O_NOFOLLOW, at most `MAX_BYTES` (`LOCK_BYTES` for a lockfile); `stamp`
is its lstat (mtime_ns:size) without reading it. The parsers turn a file's text into
{name: fingerprint} of what lessons name in it — Makefile targets and their recipes, package.json
scripts, justfile recipes, mix aliases, CI job names, locked dependency versions, config keys —
with regular expressions and `json` / `tomllib` only: repository files are data, never config
for us, and a file that does not parse holds nothing. `value(kind, name, file, text)` is one
anchor's fingerprint in `text` (None: not there), the one function both the extraction at write
time and the check at SessionStart call, so a lesson is compared with itself. `Reader` is one
extraction's or check's view of the files: each read, parsed and stat'ed once.

Cost: stdlib only (hooks import it at SessionStart when an anchor file changed); a parse is one
pass of a regular expression over a file of at most a few MB; `tomllib` is imported for TOML only.
"""

import os
import re

from ..core import files

MAX_BYTES = 512 * 1024
LOCK_BYTES = 16 * 1024 * 1024
MAKEFILES = ("Makefile", "makefile", "GNUmakefile")
JUSTFILES = ("justfile", "Justfile", ".justfile")
LOCKFILES = ("package-lock.json", "yarn.lock", "pnpm-lock.yaml", "poetry.lock", "uv.lock", "Cargo.lock",
             "mix.lock", "go.mod", "Gemfile.lock", "composer.lock")
JSON_CONFIGS = ("package.json", "tsconfig.json", "jsconfig.json", "composer.json", ".eslintrc.json", "app.json",
                "deno.json", ".prettierrc", "biome.json", "turbo.json")
TOML_CONFIGS = ("pyproject.toml", "Cargo.toml", "ruff.toml", ".ruff.toml")
CI_DIR = ".github/workflows"
GITLAB_CI = ".gitlab-ci.yml"
_GITLAB_RESERVED = frozenset("stages variables default include image services before_script after_script cache "
                             "workflow pages".split())


def inside(root: str, rel: str) -> "str | None":
    """The absolute path of `rel` under `root` when it stays inside the repository, else None."""
    if not rel or rel.startswith("/") or "\\" in rel or "\x00" in rel or any(p == ".." for p in rel.split("/")):
        return None
    base = os.path.realpath(root)
    full = os.path.join(base, rel)
    real = os.path.realpath(full)
    if real != full.rstrip("/") or not (real == base or real.startswith(base.rstrip("/") + "/")):
        return None  # a symlink on the way: it may point out of the repository, so it is not followed
    return full


def stamp(root: str, rel: str) -> "str | None":
    """mtime_ns:size of the file (or directory) at `rel`, not following a symlink; None when absent."""
    full = inside(root, rel.rstrip("/"))
    if full is None:
        return None
    try:
        st = os.lstat(full)
    except OSError:
        return None
    import stat as st_mod

    if st_mod.S_ISDIR(st.st_mode):
        return "dir"  # a directory's mtime moves with every file added in it: presence is all it says
    return f"{st.st_mtime_ns}:{st.st_size}" if st_mod.S_ISREG(st.st_mode) else None


def read(root: str, rel: str) -> "str | None":
    """The text of the regular file `rel` (bounded, see the module doc), or None."""
    full = inside(root, rel)
    if full is None:
        return None
    return files.read_prefix(full, LOCK_BYTES if os.path.basename(rel) in LOCKFILES else MAX_BYTES)


def _squeeze(text: str) -> str:
    return " ".join(text.split())[:300]


# -- parsers: {name: fingerprint} ------------------------------------------------------------------

_MAKE_RULE = r"^([A-Za-z0-9_.\-/ $()%]+?)\s*(::?)(?!=)(.*)$"  # compiled on first use (re caches it)


def make_targets(text: str) -> "dict[str, str]":
    """Targets of a Makefile and their recipes (whitespace squeezed); `.PHONY` names count too."""
    out: dict[str, str] = {}
    current: list[str] = []
    recipe: list[str] = []

    def close() -> None:
        for name in current:
            out[name] = _squeeze(out.get(name, "") + " " + " ".join(recipe))

    for line in text.splitlines():
        if line.startswith("\t"):
            recipe.append(line.strip())
            continue
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        close()
        current, recipe = [], []
        match = re.match(_MAKE_RULE, line)
        if not match or re.match(r"^\s*[\w.]+\s*[:+?!]?=", line):
            continue
        names = match.group(1).split()
        if names == [".PHONY"]:
            for name in match.group(3).split():
                out.setdefault(name, "")
            continue
        current = [n for n in names if not n.startswith(".") and "%" not in n and "$" not in n]
        rest = match.group(3)
        if ";" in rest:
            recipe.append(rest.split(";", 1)[1].strip())
    close()
    return out


def package_scripts(text: str) -> "dict[str, str]":
    data = _json(text)
    scripts = data.get("scripts") if isinstance(data, dict) else None
    return {str(k): _squeeze(str(v)) for k, v in scripts.items()} if isinstance(scripts, dict) else {}


_JUST_RULE = r"^@?([A-Za-z_][\w-]*)(?:\s+[^:=]*)?:(?!=)(.*)$"


def just_recipes(text: str) -> "dict[str, str]":
    out: dict[str, str] = {}
    name = None
    for line in text.splitlines():
        if line[:1] in (" ", "\t"):
            if name:
                out[name] = _squeeze(out[name] + " " + line.strip())
            continue
        match = re.match(_JUST_RULE, line)
        name = match.group(1) if match and not line.startswith(("set ", "export ", "alias ")) else None
        if name:
            out[name] = ""
    return out


def mix_aliases(text: str) -> "dict[str, str]":
    """The aliases of mix.exs's `aliases` function (or keyword list): name → its value, squeezed."""
    start = re.search(r"defp?\s+aliases\b[^\n]*\bdo\b|aliases:\s*\[", text)
    if not start:
        return {}
    body = text[start.end():start.end() + 20000]
    end = re.search(r"^\s*end\b", body, re.M)
    body = body[:end.start()] if end else body
    out: dict[str, str] = {}
    for match in re.finditer(r'^\s*(?:"([\w.:-]+)"|([a-z_][\w]*)):\s*(.+)$', body, re.M):
        out[match.group(1) or match.group(2)] = _squeeze(match.group(3))
    return out


_YAML_KEY = (r"""^( *)(?:"([^"]+)"|'([^']+)'|([\w.\-/ ]+?))\s*:(?:\s|$)""")


def ci_jobs(text: str, gitlab: bool = False) -> "dict[str, str]":
    """Job names of a GitHub workflow (the keys under `jobs:`) or of .gitlab-ci.yml (its top-level
    keys that are not settings nor hidden `.templates`), each with a digest of its block."""
    blocks: dict[str, list[str]] = {}
    in_jobs, level, name = gitlab, 0 if gitlab else None, None
    for line in text.splitlines():
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        key = re.match(_YAML_KEY, line)
        lead = len(line) - len(line.lstrip(" "))
        if not gitlab and lead == 0:
            in_jobs, level, name = bool(key and (key.group(4) or "") == "jobs"), None, None
            continue
        if not in_jobs:
            continue
        if level is None:
            level = lead
        if key and lead == level:
            found = key.group(2) or key.group(3) or key.group(4) or ""
            name = None if gitlab and (found in _GITLAB_RESERVED or found.startswith(".")) else found
            if name:
                blocks[name] = []
        elif name and lead > level:
            blocks[name].append(line)
    return {n: _digest("\n".join(b)) for n, b in blocks.items()}


def _digest(text: str) -> str:
    import hashlib

    return hashlib.sha1(_squeeze_all(text).encode()).hexdigest()[:12]


def _squeeze_all(text: str) -> str:
    return " ".join(text.split())


_LOCK_PATTERNS = {
    "package-lock.json": (r'"node_modules/((?:@[^"/]+/)?[^"/]+)":\s*\{\s*"version":\s*"([^"]+)"', 0),
    "yarn.lock": (r'^"?((?:@[^@\s"/]+/)?[^@\s",]+)@[^\n]*:\n\s+version:?\s+"?([^"\s]+)"?', re.M),
    "pnpm-lock.yaml": (r"^\s+'?/?((?:@[^@/\s]+/)?[^@/\s']+)[@/](\d[^:()'\s]*)", re.M),
    "poetry.lock": (r'^name = "([^"]+)"\s*\nversion = "([^"]+)"', re.M),
    "uv.lock": (r'^name = "([^"]+)"\s*\nversion = "([^"]+)"', re.M),
    "Cargo.lock": (r'^name = "([^"]+)"\s*\nversion = "([^"]+)"', re.M),
    "mix.lock": (r'^\s*"([\w-]+)":\s*\{:\w+,\s*:[\w-]+,\s*"([^"]+)"', re.M),
    "go.mod": (r"^\s*(?:require\s+)?([\w.\-]+\.[\w.\-/]+)\s+(v[\w.\-+]+)", re.M),
    "Gemfile.lock": (r"^    ([\w.\-]+) \(([\w.\-]+)\)$", re.M),
    "composer.lock": (r'"name":\s*"([\w.\-]+/[\w.\-]+)",\s*"version":\s*"([^"]+)"', 0),
}


def lock_versions(file: str, text: str) -> "dict[str, str]":
    """{package: version} a lockfile holds (the first entry of a name wins: the top-level one)."""
    pattern = _LOCK_PATTERNS.get(os.path.basename(file))
    out: dict[str, str] = {}
    if pattern is not None:
        for match in re.finditer(pattern[0], text, pattern[1]):
            out.setdefault(match.group(1), match.group(2))
    return out


def major(version: "str | None") -> str:
    """The part of a version whose change may break a lesson: the major, or 0.minor before 1.0."""
    parts = re.findall(r"\d+", version or "")
    if not parts:
        return version or ""
    return f"0.{parts[1]}" if parts[0] == "0" and len(parts) > 1 else parts[0]


def _json(text: str) -> object:
    import json

    try:
        return json.loads(text)
    except ValueError:
        return None


def _toml(text: str) -> object:
    import tomllib

    try:
        return tomllib.loads(text)
    except (tomllib.TOMLDecodeError, ValueError):
        return None


def config_value(file: str, text: str, key: str) -> "str | None":
    """The value at dotted `key` in a JSON or TOML config file, as compact JSON; None if absent."""
    data = _toml(text) if file.endswith(".toml") else _json(text)
    for part in key.strip("[]").split("."):
        if not isinstance(data, dict) or part not in data:
            return None
        data = data[part]
    import json

    return json.dumps(data, sort_keys=True, default=str)[:300]


def _word(name: str, text: str) -> bool:
    return re.search(r"(?<![\w$-])" + re.escape(name) + r"(?![\w$])", text) is not None


_DEFINES = (r"^[ \t]*(?:(?:export|default|pub(?:\([\w:]+\))?|public|private|protected|static|async|abstract|final|"
            r"extern|inline|unsafe|override|open|internal|def[pm]?|class|function|func|fn|struct|enum|trait|impl|type|"
            r"interface|module|const|let|var|val|macro|record|object|protocol)\s+)+[\w.*&(): <>]*?\b")


def definition(name: str, text: str) -> "str | None":
    """The line that defines `name` in a source file (`def refresh_token(self):`, `export class
    TokenCache {`), squeezed; "" when the name is there but no line defines it; None when absent."""
    if not _word(name, text):
        return None
    match = re.search(_DEFINES + re.escape(name) + r"\b.*$", text, re.M)
    return _squeeze(match.group(0)) if match else ""


_PART = r"[^\s,\[\]{}:;\"']+"


def kept(was: "str | None", now: str, cap: int = 300) -> bool:
    """Did `now` keep all of `was` and only add to it (options appended to a script, an item added to a
    config list, a line added to a recipe)? Then what a lesson said of `was` still holds. Values are
    compared part by part in order (an insertion anywhere is an addition); a value cut at `cap` loses
    its last part, and an addition that pushed the old tail past the cut cannot be seen: it counts as kept."""
    old, new = re.findall(_PART, was or ""), re.findall(_PART, now)
    if not old or old == new:
        return bool(old) and old == new
    if len(was or "") >= cap:
        old = old[:-1]
    cut = len(now) >= cap
    if cut:
        new = new[:-1]
    at, missing = 0, False
    for part in old:
        found = next((i for i in range(at, len(new)) if new[i] == part), None)
        if found is None:
            missing = True  # taken out, or past the cut
        elif missing:
            return False  # a part taken out before one still there
        else:
            at = found + 1
    return not missing or cut  # what is missing may all lie past the cut


TABLED = ("make", "script", "just", "mix", "ci", "dep")


def value(kind: str, name: str, file: str, text: "str | None",
          tables: "dict[tuple[str, str], dict[str, str]] | None" = None) -> "str | None":
    """The fingerprint of anchor (kind, name) in `file`'s text `text`; None when it is not there.
    `tables` caches each (kind, file)'s parsed table: a check judging a thousand targets of one
    Makefile parses it once."""
    if text is None:
        return None
    if kind in TABLED and tables is not None:
        if (kind, file) not in tables:
            tables[(kind, file)] = _table(kind, file, text)
        return tables[(kind, file)].get(name)
    if kind in TABLED:
        return _table(kind, file, text).get(name)
    if kind == "config":
        return config_value(file, text, name)
    if kind == "symbol":
        return definition(name, text)
    if kind == "flag":
        return "" if _word(name, text) else None
    return "" if kind == "file" else None


def _table(kind: str, file: str, text: str) -> "dict[str, str]":
    base = os.path.basename(file)
    table: dict[str, str] = {}
    if kind == "make":
        table = make_targets(text)
    elif kind == "script":
        table = package_scripts(text)
    elif kind == "just":
        table = just_recipes(text)
    elif kind == "mix":
        table = mix_aliases(text)
    elif kind == "ci":
        table = ci_jobs(text, gitlab=base == GITLAB_CI)
    elif kind == "dep":
        table = lock_versions(file, text)
    return table


class Reader:
    """The project's files for one extraction or check: each read once (text, parsed tables)."""

    def __init__(self, root: str):
        self.root = root
        self._text: dict[str, str | None] = {}
        self._tables: dict[tuple[str, str], dict[str, str]] = {}
        self._present: dict[str, bool] = {}

    def text(self, rel: str) -> "str | None":
        if rel not in self._text:
            self._text[rel] = read(self.root, rel)
        return self._text[rel]

    def first(self, names: "tuple[str, ...]", folder: str = "") -> "str | None":
        for name in names:
            rel = f"{folder}/{name}" if folder else name
            if self.text(rel) is not None:
                return rel
        return None

    def workflows(self) -> "list[str]":
        full = inside(self.root, CI_DIR)
        try:
            names = sorted(os.listdir(full))[:30] if full and os.path.isdir(full) else []
        except OSError:
            names = []
        found = [f"{CI_DIR}/{n}" for n in names if n.endswith((".yml", ".yaml"))]
        return found + ([GITLAB_CI] if self.text(GITLAB_CI) is not None else [])

    def value(self, kind: str, name: str, file: str) -> "str | None":
        if kind == "file":  # once per file: a check may judge a thousand lessons naming one
            if file not in self._present:
                self._present[file] = stamp(self.root, file) is not None
            return "" if self._present[file] else None
        return value(kind, name, file, self.text(file), self._tables)
