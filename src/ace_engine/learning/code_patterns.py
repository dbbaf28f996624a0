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

Regexes are compiled once per table, on first use; a text is scanned only by the patterns of
its language whose `hint` it contains.
"""

import json
import os
import re

LANGUAGES = {
    ".py": "python", ".pyi": "python", ".pyw": "python",
    ".js": "javascript", ".mjs": "javascript", ".cjs": "javascript", ".jsx": "javascript",
    ".ts": "typescript", ".tsx": "typescript", ".mts": "typescript", ".cts": "typescript",
    ".vue": "typescript", ".svelte": "typescript",
}
EDIT_TOOLS = ("Edit", "MultiEdit", "Write", "NotebookEdit")
POLARITIES = ("helpful", "harmful")
_JS = ["javascript", "typescript"]
_TEST_FILES = r"(?:^|/)(?:tests?|testing|__tests__|spec)/|(?:^|/)(?:test_[^/]*|[^/]*_test\.py|conftest\.py|[^/]*\.(?:test|spec)\.[jt]sx?)$"
_COMMENT_STARTS = ("#", "//", "/*", "*")

# Each entry: id, languages, polarity, regex, lesson, and the optional keys described above.
BUILTIN_PATTERNS: list[dict] = [
    # -- Python, harmful -------------------------------------------------------------------------
    {"id": "py-bare-except", "languages": ["python"], "polarity": "harmful", "hint": "except",
     "regex": r"^[ \t]*except[ \t]*:",
     "lesson": "Bare `except:` also catches KeyboardInterrupt and SystemExit; catch the specific exception (or `except Exception`).",
     "example": "try:\n    run()\nexcept:\n    pass\n", "counter": "try:\n    run()\nexcept ValueError:\n    pass\n"},
    {"id": "py-except-pass", "languages": ["python"], "polarity": "harmful", "hint": "except",
     "regex": r"^[ \t]*except[ \t]+(?:\(?[ \t]*(?:Base)?Exception[ \t]*\)?)(?:[ \t]+as[ \t]+\w+)?[ \t]*:[ \t]*(?:\n[ \t]*)?(?:pass|\.\.\.)[ \t]*$",
     "lesson": "`except Exception: pass` silently swallows every error; log it, narrow the exception, or let it propagate.",
     "example": "try:\n    x()\nexcept Exception:\n    pass\n", "counter": "try:\n    x()\nexcept Exception:\n    log.exception('x failed')\n"},
    {"id": "py-mutable-default", "languages": ["python"], "polarity": "harmful", "hint": "def ",
     "regex": r"^[ \t]*(?:async[ \t]+)?def[ \t]+\w+[ \t]*\([^)]*?=[ \t]*(?:\[\]|\{\}|\[[^\]\n]+\]|\{[^}\n]*\}|list\(\)|dict\(\)|set\(\))[ \t]*[,)]",
     "lesson": "Mutable default arguments (`def f(x=[])`) are shared between calls; default to None and create the list inside.",
     "example": "def add(item, items=[]):\n    items.append(item)\n", "counter": "def add(item, items=None):\n    items = items or []\n"},
    {"id": "py-print-debug", "languages": ["python"], "polarity": "harmful", "hint": "print(",
     "regex": r"^[ \t]*print\((?:f?[\"'](?:debug|DEBUG|XXX|TODO|>>>|---|here|HERE)|[A-Za-z_][\w.\[\]'\"]*\)[ \t]*$|repr\()",
     "lesson": "Debugging `print(...)` left in code pollutes output; remove it or use the `logging` module.",
     "example": "def f(x):\n    print(x)\n    return x\n", "counter": "def f(x):\n    print(f'Processed {len(x)} items')\n"},
    {"id": "py-eval-exec", "languages": ["python"], "polarity": "harmful", "hint": ["eval(", "exec("],
     "regex": r"(?<![\w.])(?:eval|exec)\(",
     "lesson": "`eval` / `exec` run arbitrary code; parse the input (`ast.literal_eval`, `json.loads`) or dispatch explicitly.",
     "example": "value = eval(user_input)\n", "counter": "value = ast.literal_eval(user_input)\n"},
    {"id": "py-shell-true", "languages": ["python"], "polarity": "harmful", "hint": "shell",
     "regex": r"subprocess\.\w+\((?:[^()]|\([^()]*\))*?\bshell[ \t]*=[ \t]*True",
     "lesson": "`subprocess(..., shell=True)` invites shell injection and quoting bugs; pass an argument list instead.",
     "example": "subprocess.run(f'git log {ref}', shell=True)\n", "counter": "subprocess.run(['git', 'log', ref], check=True)\n"},
    {"id": "py-os-system", "languages": ["python"], "polarity": "harmful", "hint": "os.system",
     "regex": r"\bos\.system\(",
     "lesson": "`os.system` ignores failures and goes through the shell; use `subprocess.run([...], check=True)`.",
     "example": "os.system('make build')\n", "counter": "subprocess.run(['make', 'build'], check=True)\n"},
    {"id": "py-assert-validation", "languages": ["python"], "polarity": "harmful", "hint": "assert",
     "regex": r"^[ \t]*assert[ \t(]", "skip_files": _TEST_FILES,
     "lesson": "`assert` is stripped under `python -O`; validate inputs with an explicit `if …: raise ValueError(...)`.",
     "example": "def pay(amount):\n    assert amount > 0\n", "counter": "def pay(amount):\n    if amount <= 0:\n        raise ValueError('amount')\n"},
    {"id": "py-sleep-in-async", "languages": ["python"], "polarity": "harmful", "hint": "time.sleep",
     "regex": r"\btime\.sleep\(", "requires": r"\basync[ \t]+def\b",
     "lesson": "`time.sleep` in async code blocks the event loop; use `await asyncio.sleep(...)`.",
     "example": "async def poll():\n    time.sleep(1)\n", "counter": "async def poll():\n    await asyncio.sleep(1)\n"},
    {"id": "py-missing-await", "languages": ["python"], "polarity": "harmful", "hint": "asyncio.",
     "regex": r"\basyncio\.(?:sleep|gather|wait_for|wait|open_connection|create_subprocess_exec|create_subprocess_shell|to_thread)\(",
     "unless_line": r"\b(?:await|return|yield|create_task|ensure_future|run|run_until_complete)\b",
     "lesson": "A coroutine called without `await` never runs (RuntimeWarning: coroutine was never awaited); await it or schedule it with `asyncio.create_task`.",
     "example": "async def f():\n    asyncio.sleep(1)\n", "counter": "async def f():\n    await asyncio.sleep(1)\n"},
    {"id": "py-open-without-with", "languages": ["python"], "polarity": "harmful", "hint": "open(",
     "regex": r"(?<![\w.])open\(", "unless_line": r"^[ \t]*(?:async[ \t]+)?with\b|\b(?:exit_stack|enter_context)\b",
     "lesson": "`open()` outside a `with` block leaks the file handle when an error occurs; use `with open(...) as fh:` (or `Path.read_text`).",
     "example": "data = open(path).read()\n", "counter": "with open(path) as fh:\n    data = fh.read()\n"},
    {"id": "py-naive-now", "languages": ["python"], "polarity": "harmful", "hint": "datetime",
     "regex": r"\bdatetime\.(?:now\([ \t]*\)|utcnow\(|today\([ \t]*\))",
     "lesson": "`datetime.now()` / `utcnow()` give naive datetimes (utcnow is deprecated since 3.12); use `datetime.now(timezone.utc)`.",
     "example": "stamp = datetime.now()\n", "counter": "stamp = datetime.now(timezone.utc)\n"},
    {"id": "py-requests-no-timeout", "languages": ["python"], "polarity": "harmful", "hint": "requests.",
     "regex": r"\brequests\.(?:get|post|put|patch|delete|head|request)\((?![^()]*(?:\([^()]*\)[^()]*)*\btimeout[ \t]*=)",
     "lesson": "`requests` calls without `timeout=` can hang forever; always pass a timeout.",
     "example": "r = requests.get(url)\n", "counter": "r = requests.get(url, timeout=10)\n"},
    {"id": "py-yaml-load", "languages": ["python"], "polarity": "harmful", "hint": "yaml.load",
     "regex": r"\byaml\.load\((?![^)]*Loader)",
     "lesson": "`yaml.load` without a Loader can construct arbitrary objects; use `yaml.safe_load`.",
     "example": "cfg = yaml.load(fh)\n", "counter": "cfg = yaml.safe_load(fh)\n"},
    {"id": "py-bare-type-ignore", "languages": ["python"], "polarity": "harmful", "hint": "type:", "in_comments": True,
     "regex": r"#[ \t]*type:[ \t]*ignore(?![ \t]*\[)",
     "lesson": "A bare `# type: ignore` hides every type error on the line; name the code (`# type: ignore[attr-defined]`) or fix the type.",
     "example": "x = f()  # type: ignore\n", "counter": "x = f()  # type: ignore[no-untyped-call]\n"},
    # -- Python, helpful -------------------------------------------------------------------------
    {"id": "py-with-open", "languages": ["python"], "polarity": "helpful", "hint": "with",
     "regex": r"^[ \t]*(?:async[ \t]+)?with[ \t]+(?:\w+\.)?open\(",
     "lesson": "Files are opened in a `with` block, so they are closed even when an error occurs.",
     "example": "with open(path, encoding='utf-8') as fh:\n    text = fh.read()\n", "counter": "fh = open(path)\n"},
    {"id": "py-aware-datetime", "languages": ["python"], "polarity": "helpful", "hint": "datetime",
     "regex": r"\bdatetime\.now\([ \t]*(?:tz[ \t]*=|(?:datetime\.)?timezone\.utc|UTC\b|ZoneInfo\()",
     "lesson": "Timestamps are timezone-aware (`datetime.now(timezone.utc)`), so comparisons and serialization are unambiguous.",
     "example": "now = datetime.now(timezone.utc)\n", "counter": "now = datetime.now()\n"},
    {"id": "py-subprocess-check", "languages": ["python"], "polarity": "helpful", "hint": "check",
     "regex": r"subprocess\.run\((?:[^()]|\([^()]*\))*?\bcheck[ \t]*=[ \t]*True",
     "lesson": "`subprocess.run([...], check=True)` turns a failing command into an exception instead of a silent exit code.",
     "example": "subprocess.run(['make'], check=True)\n", "counter": "subprocess.run(['make'])\n"},
    # -- JavaScript and TypeScript, harmful --------------------------------------------------------
    {"id": "js-var", "languages": _JS, "polarity": "harmful", "hint": "var",
     "regex": r"(?:^|[;{}(][ \t]*)[ \t]*var[ \t]+[A-Za-z_$]",
     "lesson": "`var` is function-scoped and hoisted; use `const` (or `let` when reassigned).",
     "example": "var count = 0;\n", "counter": "let count = 0;\n"},
    {"id": "js-loose-equality", "languages": _JS, "polarity": "harmful", "hint": "=",
     "regex": r"[\w)\]'\"`][ \t]*(?<![=!<>])[!=]=(?!=)[ \t]*(?!null\b|undefined\b)[\w(\['\"`-]",
     "lesson": "`==` / `!=` coerce types (`0 == ''` is true); use `===` / `!==` (`== null` is the one accepted idiom).",
     "example": "if (a == b) { go(); }\n", "counter": "if (a === b || c == null) { go(); }\n"},
    {"id": "js-console-log", "languages": _JS, "polarity": "harmful", "hint": "console.",
     "regex": r"\bconsole\.(?:log|debug|trace|dir)\(",
     "lesson": "`console.log` left in code is debugging noise; remove it or use the project's logger.",
     "example": "console.log('user', user);\n", "counter": "logger.info('user loaded');\n"},
    {"id": "js-eval", "languages": _JS, "polarity": "harmful", "hint": ["eval(", "Function("],
     "regex": r"(?<![\w.$])eval\(|\bnew[ \t]+Function\(",
     "lesson": "`eval` / `new Function` execute arbitrary strings; parse data with `JSON.parse` or dispatch explicitly.",
     "example": "const v = eval(input);\n", "counter": "const v = JSON.parse(input);\n"},
    {"id": "js-inner-html", "languages": _JS, "polarity": "harmful", "hint": "innerHTML",
     "regex": r"\.innerHTML[ \t]*\+?=(?!=)",
     "lesson": "Assigning `innerHTML` from data is an XSS hole; use `textContent` or build nodes.",
     "example": "el.innerHTML = comment.body;\n", "counter": "el.textContent = comment.body;\n"},
    {"id": "js-debugger", "languages": _JS, "polarity": "harmful", "hint": "debugger",
     "regex": r"^[ \t]*debugger[ \t]*;?[ \t]*$",
     "lesson": "A `debugger` statement was left in; remove it before committing.",
     "example": "function f() {\n  debugger;\n}\n", "counter": "function f() {\n  return 1;\n}\n"},
    {"id": "js-settimeout-string", "languages": _JS, "polarity": "harmful", "hint": "set",
     "regex": r"\bset(?:Timeout|Interval)\([ \t]*[\"'`]",
     "lesson": "`setTimeout('code', …)` evaluates a string; pass a function.",
     "example": "setTimeout('refresh()', 100);\n", "counter": "setTimeout(() => refresh(), 100);\n"},
    {"id": "js-async-foreach", "languages": _JS, "polarity": "harmful", "hint": "forEach",
     "regex": r"\.forEach\([ \t]*async\b",
     "lesson": "`array.forEach(async …)` does not wait for the callbacks; use `for … of` with `await` or `await Promise.all(array.map(...))`.",
     "example": "items.forEach(async (item) => { await save(item); });\n",
     "counter": "await Promise.all(items.map((item) => save(item)));\n"},
    {"id": "js-missing-await", "languages": _JS, "polarity": "harmful", "hint": ["fetch(", "fs.promises.", "fsPromises."],
     "regex": r"(?<![\w.$])(?:fetch|fs\.promises\.\w+|fsPromises\.\w+)\(", "unless_line": r"\b(?:await|return|then|yield|Promise\.\w+)\b",
     "requires": r"\basync\b",
     "lesson": "A promise-returning call (`fetch`, `fs.promises.*`) inside async code without `await` runs unawaited; errors are lost and ordering breaks.",
     "example": "async function load() {\n  const res = fetch(url);\n}\n",
     "counter": "async function load() {\n  const res = await fetch(url);\n}\n"},
    {"id": "js-eslint-disable-file", "languages": _JS, "polarity": "harmful", "hint": "eslint-disable", "in_comments": True,
     "regex": r"/\*[ \t]*eslint-disable[ \t]*\*/|//[ \t]*eslint-disable(?:-next-line|-line)?[ \t]*$",
     "lesson": "`eslint-disable` without a rule name switches off every rule; name the rule and say why.",
     "example": "/* eslint-disable */\n", "counter": "// eslint-disable-next-line no-console -- CLI output\n"},
    # -- TypeScript, harmful --------------------------------------------------------------------
    {"id": "ts-any", "languages": ["typescript"], "polarity": "harmful", "hint": "any",
     "regex": r"(?::[ \t]*any\b(?![\w-])|\bas[ \t]+any\b|<any>|\bany\[\]|Array<any>)",
     "lesson": "`any` switches off type checking; use a precise type, a generic, or `unknown` with narrowing.",
     "example": "function parse(data: any) { return data.x; }\n", "counter": "function parse(data: unknown) { return data; }\n"},
    {"id": "ts-ignore", "languages": ["typescript"], "polarity": "harmful", "hint": "@ts-ignore", "in_comments": True,
     "regex": r"@ts-ignore\b",
     "lesson": "`// @ts-ignore` hides the error even after it is fixed; fix the type, or use `// @ts-expect-error` with a reason.",
     "example": "// @ts-ignore\nconst x: number = 'a';\n", "counter": "// @ts-expect-error legacy API returns string\nconst x: number = f();\n"},
    {"id": "ts-non-null-assertion", "languages": ["typescript"], "polarity": "harmful", "hint": "!",
     "regex": r"[\w\])](?<!\bas)!(?=\.|\[|\)|;|,)",
     "lesson": "Non-null assertions (`user!.name`) crash at run time when the value is missing; narrow with a check or `?.`.",
     "example": "const name = user!.name;\n", "counter": "const name = user?.name ?? 'anonymous';\n"},
    # -- TypeScript, helpful ------------------------------------------------------------------
    {"id": "ts-expect-error", "languages": ["typescript"], "polarity": "helpful", "hint": "@ts-expect-error", "in_comments": True,
     "regex": r"@ts-expect-error[ \t]+\S",
     "lesson": "`// @ts-expect-error <reason>` documents a known type gap and fails once the gap is fixed.",
     "example": "// @ts-expect-error legacy API\nconst x: number = f();\n", "counter": "// @ts-ignore\nconst x: number = f();\n"},
    {"id": "ts-catch-unknown", "languages": ["typescript"], "polarity": "helpful", "hint": "catch",
     "regex": r"\bcatch[ \t]*\([ \t]*\w+[ \t]*:[ \t]*unknown[ \t]*\)",
     "lesson": "Caught errors are typed `unknown` and narrowed (`if (err instanceof Error)`) before use.",
     "example": "try { f(); } catch (err: unknown) { report(err); }\n", "counter": "try { f(); } catch (err: any) { report(err); }\n"},
]


class PatternError(ValueError):
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
        raise PatternError(f"{source}: pattern {pid!r} needs `polarity` helpful or harmful, got {spec.get('polarity')!r}")
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

    def detect(self, tool_name: str, tool_input) -> list[dict]:
        """Observations for one Edit / MultiEdit / Write / NotebookEdit call (see the module doc)."""
        written = _written_texts(tool_name, tool_input)
        if written is None:
            return []
        path, language, pairs = written
        if not language:
            return []
        by_id = {p.id: p for p in self.patterns}
        added: dict[str, list] = {}
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
        observations = []
        for pid, hits in added.items():
            observations.append(_observation(by_id[pid], language, path, "added", len(hits), hits[0]))
        for pid, count in removed.items():
            if pid not in added:
                observations.append(_observation(by_id[pid], language, path, "removed", count, None))
        order = {p.id: i for i, p in enumerate(self.patterns)}
        observations.sort(key=lambda o: (o["change"] != "added", order[o["pattern_id"]]))
        return observations


def _observation(pattern: _Compiled, language: str, path: str, change: str, count: int, first) -> dict:
    obs = {"pattern_id": pattern.id, "language": language, "polarity": pattern.polarity, "lesson": pattern.lesson,
           "file": path, "count": count, "change": change}
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


def _written_texts(tool_name: str, tool_input):
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
    if tool_name == "Write":
        pairs = [("", tool_input.get("content"))]
    elif tool_name == "Edit":
        pairs = [(tool_input.get("old_string"), tool_input.get("new_string"))]
    elif tool_name == "MultiEdit":
        pairs = [(e.get("old_string"), e.get("new_string")) for e in tool_input.get("edits") or [] if isinstance(e, dict)]
    else:  # NotebookEdit: code cells of a Jupyter notebook are Python unless told otherwise
        if tool_input.get("cell_type", "code") != "code":
            return None
        language = language or "python"
        pairs = [("", tool_input.get("new_source"))]
    pairs = [(old if isinstance(old, str) else "", new) for old, new in pairs if isinstance(new, str) and new]
    return path, language, pairs


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
        raise PatternError(f"{path}: invalid JSON ({exc}); fix the file or unset `learning.code_patterns_file`") from None
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
        raise PatternError(f"{path}: `disable` names unknown patterns {sorted(unknown)}; see `learning/code_patterns.py`")
    specs = [s for s in BUILTIN_PATTERNS if s["id"] not in replaced and s["id"] not in disable]
    specs += [s for s in user_specs if s["id"] not in disable]
    return CodePatterns(specs, check_examples=False, source=path)


def load(cfg=None) -> CodePatterns:
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
        from .. import log

        log.warning("code-patterns", f"{exc}; using the built-in patterns")
        table = builtin()
    _loaded[(path, stamp)] = table
    return table


def detect(tool_name: str, tool_input, cfg=None) -> list[dict]:
    """Observations for one file-writing tool call, with the table `cfg` configures."""
    return load(cfg).detect(tool_name, tool_input)
