"""Code patterns in what the agent writes: observations for the curator from Edit / Write content.

A table of known-good and known-bad idioms for Python, JavaScript and TypeScript (bare
`except:`, mutable default arguments, `var`, `any`, a missing `await`, …). `detect(tool_name,
tool_input)` runs it over the text an Edit, MultiEdit, Write or NotebookEdit puts into a file and
returns one observation per pattern and file:

    {"pattern_id": "py-bare-except", "language": "python", "polarity": "harmful",
     "lesson": "…", "file": "src/app.py", "line": 12, "count": 1, "change": "added",
     "match": "except:"}

* `language` is the file's (JavaScript patterns also apply to TypeScript);
* `line` is 1-based within the written text (the whole file for Write, the new text for Edit);
* `change` is `added` when the write introduces the pattern, `removed` when an Edit takes it out
  (the old text had more of it than the new one) — a harmful pattern removed is evidence that
  its lesson was applied;
* patterns inside comments are ignored, except those that *are* comments (`@ts-ignore`).

Extending the table: `learning.code_patterns_file` names a JSON file, either a list of patterns
or `{"patterns": [...], "disable": ["py-print-debug", ...]}`. A pattern has `id`, `languages`
(or `language`), `polarity` (helpful / harmful), `regex` (Python syntax, multi-line mode),
`lesson`, and optionally `hint` (a substring, or a list of them, the text must contain; makes
the scan cheap), `requires` (a regex the whole text must match, e.g. `async def`),
`unless_line` (a regex that, found on the matched line, cancels the match — e.g. `await`),
`skip_files` (a regex on the file path, e.g. test files for `assert`), `in_comments` (match
inside comments), `example` and
`counter` (a text it must and must not match — checked when the file is loaded). A pattern with
a built-in's id replaces it.

The built-in table is `code_pattern_table.py`. Regexes are compiled once per table, on first use;
a text is scanned only by the patterns of its language whose `hint` it contains.
"""

from __future__ import annotations

import json
import os
import re
from typing import TYPE_CHECKING, Any

from ..capture.tools import EDIT_TOOLS, edit_pairs
from ..core.errors import AceError
from .code_pattern_table import BUILTIN_PATTERNS

if TYPE_CHECKING:
    from ..core.config import Config

LANGUAGES = {
    ".py": "python", ".pyi": "python", ".pyw": "python",
    ".js": "javascript", ".mjs": "javascript", ".cjs": "javascript", ".jsx": "javascript",
    ".ts": "typescript", ".tsx": "typescript", ".mts": "typescript", ".cts": "typescript",
    ".vue": "typescript", ".svelte": "typescript",
}
POLARITIES = ("helpful", "harmful")
_COMMENT_STARTS = ("#", "//", "/*", "*")


class PatternError(AceError, ValueError):
    """A pattern (built-in or from `learning.code_patterns_file`) that can't be used; says why."""


def language_of(path: str | None) -> str | None:
    if not path:
        return None
    _, ext = os.path.splitext(str(path).lower())
    return LANGUAGES.get(ext)


class _Compiled:
    __slots__ = ("spec", "id", "languages", "polarity", "lesson", "hints", "regex", "requires", "skip_files",
                 "unless_line", "in_comments")

    def __init__(self, spec: dict):
        self.spec = spec
        self.id = spec["id"]
        self.languages = tuple(spec["languages"])
        self.polarity = spec["polarity"]
        self.lesson = spec["lesson"]
        hint = spec.get("hint") or ()
        self.hints = (hint,) if isinstance(hint, str) else tuple(hint)
        self.in_comments = bool(spec.get("in_comments"))
        try:
            self.regex = re.compile(spec["regex"], re.MULTILINE)
            self.requires = re.compile(spec["requires"], re.MULTILINE) if spec.get("requires") else None
            self.skip_files = re.compile(spec["skip_files"]) if spec.get("skip_files") else None
            self.unless_line = re.compile(spec["unless_line"]) if spec.get("unless_line") else None
        except re.error as exc:
            raise PatternError(f"pattern {self.id!r}: invalid regex ({exc})") from None

    def applies(self, text: str, path: str) -> bool:
        if self.hints and not any(h in text for h in self.hints):
            return False
        if self.skip_files is not None and self.skip_files.search(path.replace("\\", "/")):
            return False
        return self.requires is None or self.requires.search(text) is not None

    def matches(self, text: str) -> list[tuple[int, str]]:
        """(1-based line, matched text) of each match outside comments (unless `in_comments`)."""
        found = []
        for m in self.regex.finditer(text):
            start = m.start()
            # A match that begins with the newline before its line (multi-line patterns) counts on the next line.
            while start < m.end() and text[start] in "\n\r":
                start += 1
            line_start = text.rfind("\n", 0, start) + 1
            line_text = text[line_start:text.find("\n", start) if text.find("\n", start) != -1 else len(text)]
            if not self.in_comments and line_text.lstrip().startswith(_COMMENT_STARTS):
                continue
            if self.unless_line is not None and self.unless_line.search(line_text):
                continue
            found.append((text.count("\n", 0, start) + 1, " ".join(m.group(0).split())[:80]))
        return found


def normalize_spec(raw: dict, source: str = "built-in") -> dict:
    """A pattern dict checked and completed (`language` → `languages`); raises PatternError."""
    if not isinstance(raw, dict):
        raise PatternError(f"{source}: a pattern must be a JSON object, got {type(raw).__name__}")
    spec = dict(raw)
    pid = spec.get("id")
    if not isinstance(pid, str) or not pid.strip():
        raise PatternError(f"{source}: a pattern needs an `id`")
    if "languages" not in spec and "language" in spec:
        spec["languages"] = [spec.pop("language")]
    languages = spec.get("languages")
    if isinstance(languages, str):
        languages = [languages]
    known = set(LANGUAGES.values())
    if not languages or not all(lang in known for lang in languages):
        raise PatternError(f"{source}: pattern {pid!r} needs `languages` from {sorted(known)}, got {languages!r}")
    spec["languages"] = list(languages)
    if spec.get("polarity") not in POLARITIES:
        raise PatternError(f"{source}: pattern {pid!r} needs `polarity` helpful or harmful, got "
                           f"{spec.get('polarity')!r}")
    for key in ("regex", "lesson"):
        if not isinstance(spec.get(key), str) or not spec[key].strip():
            raise PatternError(f"{source}: pattern {pid!r} needs a non-empty `{key}`")
    return spec


class CodePatterns:
    """A compiled table; `detect` is the only thing the curator needs."""

    def __init__(self, specs: list[dict], *, check_examples: bool = True, source: str = "built-in"):
        self.patterns: list[_Compiled] = []
        seen: set[str] = set()
        for raw in specs:
            spec = normalize_spec(raw, source)
            if spec["id"] in seen:
                raise PatternError(f"{source}: pattern id {spec['id']!r} appears twice")
            seen.add(spec["id"])
            compiled = _Compiled(spec)
            if check_examples:
                _check_examples(compiled, source)
            self.patterns.append(compiled)
        self._by_language: dict[str, list[_Compiled]] = {}
        for pattern in self.patterns:
            for lang in pattern.languages:
                self._by_language.setdefault(lang, []).append(pattern)

    def __len__(self) -> int:
        return len(self.patterns)

    def ids(self) -> list[str]:
        return [p.id for p in self.patterns]

    def scan(self, text: str, path: str, language: str | None = None) -> dict[str, list[tuple[int, str]]]:
        """{pattern id: [(line, match), …]} for the patterns of the text's language found in it."""
        language = language or language_of(path)
        if not language or not text:
            return {}
        found = {}
        for pattern in self._by_language.get(language, ()):
            if pattern.applies(text, path):
                hits = pattern.matches(text)
                if hits:
                    found[pattern.id] = hits
        return found

    def detect(self, tool_name: str, tool_input: object) -> list[dict[str, Any]]:
        """Observations for one Edit / MultiEdit / Write / NotebookEdit call (see the module doc)."""
        written = _written_texts(tool_name, tool_input)
        if written is None:
            return []
        path, language, pairs = written
        if not language:
            return []
        by_id = {p.id: p for p in self.patterns}
        added: dict[str, list[tuple[int, str]]] = {}
        removed: dict[str, int] = {}
        for old, new in pairs:
            new_hits = self.scan(new, path, language)
            old_hits = self.scan(old, path, language) if old else {}
            for pid in set(new_hits) | set(old_hits):
                before, after = len(old_hits.get(pid, ())), len(new_hits.get(pid, ()))
                if after > before:
                    added.setdefault(pid, []).extend(new_hits[pid][before:])
                elif before > after:
                    removed[pid] = removed.get(pid, 0) + before - after
        observations: list[dict[str, Any]] = []
        for pid, hits in added.items():
            observations.append(_observation(by_id[pid], language, path, "added", len(hits), hits[0]))
        for pid, count in removed.items():
            if pid not in added:
                observations.append(_observation(by_id[pid], language, path, "removed", count, None))
        order = {p.id: i for i, p in enumerate(self.patterns)}
        observations.sort(key=lambda o: (o["change"] != "added", order[o["pattern_id"]]))
        return observations


def _observation(pattern: _Compiled, language: str, path: str, change: str, count: int,
                 first: tuple[int, str] | None) -> dict[str, Any]:
    obs: dict[str, Any] = {"pattern_id": pattern.id, "language": language, "polarity": pattern.polarity,
                           "lesson": pattern.lesson, "file": path, "count": count, "change": change}
    if first is not None:
        obs["line"], obs["match"] = first
    return obs


def _check_examples(pattern: _Compiled, source: str) -> None:
    path = "src/example" + next(ext for ext, lang in LANGUAGES.items() if lang == pattern.languages[0])
    example, counter = pattern.spec.get("example"), pattern.spec.get("counter")
    if example is not None and not (pattern.applies(example, path) and pattern.matches(example)):
        raise PatternError(f"{source}: pattern {pattern.id!r} does not match its own `example`")
    if counter is not None and pattern.applies(counter, path) and pattern.matches(counter):
        raise PatternError(f"{source}: pattern {pattern.id!r} matches its `counter` example")


def _written_texts(tool_name: str, tool_input: object) -> tuple[str, str | None, list[tuple[str, str]]] | None:
    """(path, language, [(old text, new text), …]) of a file-writing tool call, else None."""
    if tool_name not in EDIT_TOOLS:
        return None
    if isinstance(tool_input, str):
        try:
            tool_input = json.loads(tool_input)
        except ValueError:
            return None  # capped or redacted beyond parsing: nothing reliable to scan
    if not isinstance(tool_input, dict):
        return None
    path = str(tool_input.get("file_path") or tool_input.get("notebook_path") or tool_input.get("path") or "")
    language = language_of(path)
    if tool_name == "NotebookEdit":  # code cells of a Jupyter notebook are Python unless told otherwise
        if tool_input.get("cell_type", "code") != "code":
            return None
        language = language or "python"
    texts = [(old, new) for old, new in edit_pairs(tool_name, tool_input) if new]
    return path, language, texts


# -- loading the table --------------------------------------------------------------------------

_builtin_table: CodePatterns | None = None
_loaded: dict[tuple, CodePatterns] = {}


def builtin() -> CodePatterns:
    global _builtin_table
    if _builtin_table is None:
        _builtin_table = CodePatterns(BUILTIN_PATTERNS, check_examples=False)  # the tests check the examples
    return _builtin_table


def load_file(path: str) -> CodePatterns:
    """The built-in table extended / overridden / trimmed by the JSON file at `path`."""
    try:
        with open(path, encoding="utf-8") as fh:
            data = json.load(fh)
    except OSError as exc:
        raise PatternError(f"{path}: cannot be read ({exc.strerror}); fix `learning.code_patterns_file`") from None
    except ValueError as exc:
        raise PatternError(f"{path}: invalid JSON ({exc}); fix the file or unset `learning.code_patterns_file`"
                           ) from None
    if isinstance(data, list):
        data = {"patterns": data}
    if not isinstance(data, dict):
        raise PatternError(f"{path}: expected a list of patterns or {{\"patterns\": [...], \"disable\": [...]}}")
    extra = data.get("patterns") or []
    disable = data.get("disable") or []
    if not isinstance(extra, list) or not isinstance(disable, list):
        raise PatternError(f"{path}: `patterns` and `disable` must be lists")
    user_specs = [normalize_spec(raw, path) for raw in extra]
    CodePatterns(user_specs, source=path)  # checks the user's patterns (regexes, examples) before merging
    replaced = {spec["id"] for spec in user_specs}
    unknown = set(disable) - {s["id"] for s in BUILTIN_PATTERNS} - replaced
    if unknown:
        raise PatternError(f"{path}: `disable` names unknown patterns {sorted(unknown)}; see "
                           "`learning/code_patterns.py`")
    specs = [s for s in BUILTIN_PATTERNS if s["id"] not in replaced and s["id"] not in disable]
    specs += [s for s in user_specs if s["id"] not in disable]
    return CodePatterns(specs, check_examples=False, source=path)


def load(cfg: Config | None = None) -> CodePatterns:
    """The table for a config (`learning.code_patterns_file`), cached per file and mtime.

    A broken user file is logged and the built-in table used: learning must not stop over it."""
    path = ""
    if cfg is not None:
        try:
            path = cfg["learning.code_patterns_file"] or ""
        except KeyError:
            path = ""
    if not path:
        return builtin()
    path = os.path.abspath(os.path.expanduser(str(path)))
    try:
        stamp = os.stat(path).st_mtime_ns
    except OSError:
        stamp = None
    cached = _loaded.get((path, stamp))
    if cached is not None:
        return cached
    try:
        table = load_file(path)
    except PatternError as exc:
        from ..core import log

        log.warning("code-patterns", f"{exc}; using the built-in patterns")
        table = builtin()
    _loaded[(path, stamp)] = table
    return table


def detect(tool_name: str, tool_input: object, cfg: Config | None = None) -> list[dict[str, Any]]:
    """Observations for one file-writing tool call, with the table `cfg` configures."""
    return load(cfg).detect(tool_name, tool_input)
