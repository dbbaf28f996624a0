"""The built-in code patterns: known-bad (and a few known-good) idioms of Python, JavaScript and
TypeScript, as data for `code_patterns.CodePatterns`.

Contract: each entry has the keys `code_patterns`' docstring describes (id, languages, polarity,
regex, lesson, and optionally hint, requires, unless_line, skip_files, in_comments, example,
counter); its `example` must match and its `counter` must not (checked by the tests). A user's
pattern file may replace an entry by id or disable it. Cost: a list literal; nothing compiled here.
"""

from __future__ import annotations

from typing import Any

_JS = ["javascript", "typescript"]
_TEST_FILES = (r"(?:^|/)(?:tests?|testing|__tests__|spec)/"
               r"|(?:^|/)(?:test_[^/]*|[^/]*_test\.py|conftest\.py|[^/]*\.(?:test|spec)\.[jt]sx?)$")

# Each entry: id, languages, polarity, regex, lesson, and the optional keys described above.
BUILTIN_PATTERNS: list[dict[str, Any]] = [
    # -- Python, harmful -------------------------------------------------------------------------
    {"id": "py-bare-except", "languages": ["python"], "polarity": "harmful", "hint": "except",
     "regex": r"^[ \t]*except[ \t]*:",
     "lesson": "Bare `except:` also catches KeyboardInterrupt and SystemExit; catch the specific exception (or `except "
               "Exception`).",
     "example": "try:\n    run()\nexcept:\n    pass\n", "counter": "try:\n    run()\nexcept ValueError:\n    pass\n"},
    {"id": "py-except-pass", "languages": ["python"], "polarity": "harmful", "hint": "except",
     "regex": r"^[ \t]*except[ \t]+(?:\(?[ \t]*(?:Base)?Exception[ \t]*\)?)(?:[ \t]+as[ \t]+\w+)"
              r"?[ \t]*:[ \t]*(?:\n[ \t]*)?(?:pass|\.\.\.)[ \t]*$",
     "lesson": "`except Exception: pass` silently swallows every error; log it, narrow the exception, or let it "
               "propagate.",
     "example": "try:\n    x()\nexcept Exception:\n    pass\n", "counter": "try:\n    x()\nexcept Exception:\n    "
                                                                           "log.exception('x failed')\n"},
    {"id": "py-mutable-default", "languages": ["python"], "polarity": "harmful", "hint": "def ",
     "regex": r"^[ \t]*(?:async[ \t]+)?def[ \t]+\w+[ \t]*\([^)]*?=[ \t]*(?:\[\]|\{\}|\[[^\]\n]+\]|\{[^}\n]*\}|list\(\)|"
              r"dict\(\)|set\(\))[ \t]*[,)]",
     "lesson": "Mutable default arguments (`def f(x=[])`) are shared between calls; default to None and create the "
               "list inside.",
     "example": "def add(item, items=[]):\n    items.append(item)\n", "counter": "def add(item, items=None):\n    "
                                                                                 "items = items or []\n"},
    {"id": "py-print-debug", "languages": ["python"], "polarity": "harmful", "hint": "print(",
     "regex": r"^[ \t]*print\((?:f?[\"'](?:debug|DEBUG|XXX|TODO|>>>|---|here|HERE)|[A-Za-z_][\w.\[\]'\"]*\)[ \t]*$|"
              r"repr\()",
     "lesson": "Debugging `print(...)` left in code pollutes output; remove it or use the `logging` module.",
     "example": "def f(x):\n    print(x)\n    return x\n", "counter": "def f(x):\n    print(f'Processed {len(x)} "
                                                                      "items')\n"},
    {"id": "py-eval-exec", "languages": ["python"], "polarity": "harmful", "hint": ["eval(", "exec("],
     "regex": r"(?<![\w.])(?:eval|exec)\(",
     "lesson": "`eval` / `exec` run arbitrary code; parse the input (`ast.literal_eval`, `json.loads`) or dispatch "
               "explicitly.",
     "example": "value = eval(user_input)\n", "counter": "value = ast.literal_eval(user_input)\n"},
    {"id": "py-shell-true", "languages": ["python"], "polarity": "harmful", "hint": "shell",
     "regex": r"subprocess\.\w+\((?:[^()]|\([^()]*\))*?\bshell[ \t]*=[ \t]*True",
     "lesson": "`subprocess(..., shell=True)` invites shell injection and quoting bugs; pass an argument list instead.",
     "example": "subprocess.run(f'git log {ref}', shell=True)\n", "counter": "subprocess.run(['git', 'log', ref], "
                                                                             "check=True)\n"},
    {"id": "py-os-system", "languages": ["python"], "polarity": "harmful", "hint": "os.system",
     "regex": r"\bos\.system\(",
     "lesson": "`os.system` ignores failures and goes through the shell; use `subprocess.run([...], check=True)`.",
     "example": "os.system('make build')\n", "counter": "subprocess.run(['make', 'build'], check=True)\n"},
    {"id": "py-assert-validation", "languages": ["python"], "polarity": "harmful", "hint": "assert",
     "regex": r"^[ \t]*assert[ \t(]", "skip_files": _TEST_FILES,
     "lesson": "`assert` is stripped under `python -O`; validate inputs with an explicit `if …: raise "
               "ValueError(...)`.",
     "example": "def pay(amount):\n    assert amount > 0\n", "counter": "def pay(amount):\n    if amount <= 0:\n       "
                                                                        " raise ValueError('amount')\n"},
    {"id": "py-sleep-in-async", "languages": ["python"], "polarity": "harmful", "hint": "time.sleep",
     "regex": r"\btime\.sleep\(", "requires": r"\basync[ \t]+def\b",
     "lesson": "`time.sleep` in async code blocks the event loop; use `await asyncio.sleep(...)`.",
     "example": "async def poll():\n    time.sleep(1)\n", "counter": "async def poll():\n    await asyncio.sleep(1)\n"},
    {"id": "py-missing-await", "languages": ["python"], "polarity": "harmful", "hint": "asyncio.",
     "regex": r"\basyncio\.(?:sleep|gather|wait_for|wait|open_connection|create_subprocess_exec|"
              r"create_subprocess_shell|to_thread)\(",
     "unless_line": r"\b(?:await|return|yield|create_task|ensure_future|run|run_until_complete)\b",
     "lesson": "A coroutine called without `await` never runs (RuntimeWarning: coroutine was never awaited); await it "
               "or schedule it with `asyncio.create_task`.",
     "example": "async def f():\n    asyncio.sleep(1)\n", "counter": "async def f():\n    await asyncio.sleep(1)\n"},
    {"id": "py-open-without-with", "languages": ["python"], "polarity": "harmful", "hint": "open(",
     "regex": r"(?<![\w.])open\(", "unless_line": r"^[ \t]*(?:async[ \t]+)?with\b|\b(?:exit_stack|enter_context)\b",
     "lesson": "`open()` outside a `with` block leaks the file handle when an error occurs; use `with open(...) as "
               "fh:` (or `Path.read_text`).",
     "example": "data = open(path).read()\n", "counter": "with open(path) as fh:\n    data = fh.read()\n"},
    {"id": "py-naive-now", "languages": ["python"], "polarity": "harmful", "hint": "datetime",
     "regex": r"\bdatetime\.(?:now\([ \t]*\)|utcnow\(|today\([ \t]*\))",
     "lesson": "`datetime.now()` / `utcnow()` give naive datetimes (utcnow is deprecated since 3.12); use "
               "`datetime.now(timezone.utc)`.",
     "example": "stamp = datetime.now()\n", "counter": "stamp = datetime.now(timezone.utc)\n"},
    {"id": "py-requests-no-timeout", "languages": ["python"], "polarity": "harmful", "hint": "requests.",
     "regex": r"\brequests\.(?:get|post|put|patch|delete|head|request)\((?![^()]*(?:\([^()]*\)[^()]*)*\btimeout[ \t]*="
              r")",
     "lesson": "`requests` calls without `timeout=` can hang forever; always pass a timeout.",
     "example": "r = requests.get(url)\n", "counter": "r = requests.get(url, timeout=10)\n"},
    {"id": "py-yaml-load", "languages": ["python"], "polarity": "harmful", "hint": "yaml.load",
     "regex": r"\byaml\.load\((?![^)]*Loader)",
     "lesson": "`yaml.load` without a Loader can construct arbitrary objects; use `yaml.safe_load`.",
     "example": "cfg = yaml.load(fh)\n", "counter": "cfg = yaml.safe_load(fh)\n"},
    {"id": "py-bare-type-ignore", "languages": ["python"], "polarity": "harmful", "hint": "type:", "in_comments": True,
     "regex": r"#[ \t]*type:[ \t]*ignore(?![ \t]*\[)",
     "lesson": "A bare `# type: ignore` hides every type error on the line; name the code (`# type: "
               "ignore[attr-defined]`) or fix the type.",
     "example": "x = f()  # type: ignore\n", "counter": "x = f()  # type: ignore[no-untyped-call]\n"},
    # -- Python, helpful -------------------------------------------------------------------------
    {"id": "py-with-open", "languages": ["python"], "polarity": "helpful", "hint": "with",
     "regex": r"^[ \t]*(?:async[ \t]+)?with[ \t]+(?:\w+\.)?open\(",
     "lesson": "Files are opened in a `with` block, so they are closed even when an error occurs.",
     "example": "with open(path, encoding='utf-8') as fh:\n    text = fh.read()\n", "counter": "fh = open(path)\n"},
    {"id": "py-aware-datetime", "languages": ["python"], "polarity": "helpful", "hint": "datetime",
     "regex": r"\bdatetime\.now\([ \t]*(?:tz[ \t]*=|(?:datetime\.)?timezone\.utc|UTC\b|ZoneInfo\()",
     "lesson": "Timestamps are timezone-aware (`datetime.now(timezone.utc)`), so comparisons and serialization are "
               "unambiguous.",
     "example": "now = datetime.now(timezone.utc)\n", "counter": "now = datetime.now()\n"},
    {"id": "py-subprocess-check", "languages": ["python"], "polarity": "helpful", "hint": "check",
     "regex": r"subprocess\.run\((?:[^()]|\([^()]*\))*?\bcheck[ \t]*=[ \t]*True",
     "lesson": "`subprocess.run([...], check=True)` turns a failing command into an exception instead of a silent exit "
               "code.",
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
     "lesson": "`eval` / `new Function` execute arbitrary strings; parse data with `JSON.parse` or dispatch "
               "explicitly.",
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
     "lesson": "`array.forEach(async …)` does not wait for the callbacks; use `for … of` with `await` or `await "
               "Promise.all(array.map(...))`.",
     "example": "items.forEach(async (item) => { await save(item); });\n",
     "counter": "await Promise.all(items.map((item) => save(item)));\n"},
    {"id": "js-missing-await", "languages": _JS, "polarity": "harmful",
     "hint": ["fetch(", "fs.promises.", "fsPromises."],
     "regex": r"(?<![\w.$])(?:fetch|fs\.promises\.\w+|fsPromises\.\w+)\(", "unless_line": r"\b(?:await|return|then|"
                                                                                          r"yield|Promise\.\w+)\b",
     "requires": r"\basync\b",
     "lesson": "A promise-returning call (`fetch`, `fs.promises.*`) inside async code without `await` runs unawaited; "
               "errors are lost and ordering breaks.",
     "example": "async function load() {\n  const res = fetch(url);\n}\n",
     "counter": "async function load() {\n  const res = await fetch(url);\n}\n"},
    {"id": "js-eslint-disable-file", "languages": _JS, "polarity": "harmful", "hint": "eslint-disable",
     "in_comments": True,
     "regex": r"/\*[ \t]*eslint-disable[ \t]*\*/|//[ \t]*eslint-disable(?:-next-line|-line)?[ \t]*$",
     "lesson": "`eslint-disable` without a rule name switches off every rule; name the rule and say why.",
     "example": "/* eslint-disable */\n", "counter": "// eslint-disable-next-line no-console -- CLI output\n"},
    # -- TypeScript, harmful --------------------------------------------------------------------
    {"id": "ts-any", "languages": ["typescript"], "polarity": "harmful", "hint": "any",
     "regex": r"(?::[ \t]*any\b(?![\w-])|\bas[ \t]+any\b|<any>|\bany\[\]|Array<any>)",
     "lesson": "`any` switches off type checking; use a precise type, a generic, or `unknown` with narrowing.",
     "example": "function parse(data: any) { return data.x; }\n", "counter": "function parse(data: unknown) { return "
                                                                             "data; }\n"},
    {"id": "ts-ignore", "languages": ["typescript"], "polarity": "harmful", "hint": "@ts-ignore", "in_comments": True,
     "regex": r"@ts-ignore\b",
     "lesson": "`// @ts-ignore` hides the error even after it is fixed; fix the type, or use `// @ts-expect-error` "
               "with a reason.",
     "example": "// @ts-ignore\nconst x: number = 'a';\n", "counter": "// @ts-expect-error legacy API returns "
                                                                      "string\nconst x: number = f();\n"},
    {"id": "ts-non-null-assertion", "languages": ["typescript"], "polarity": "harmful", "hint": "!",
     "regex": r"[\w\])](?<!\bas)!(?=\.|\[|\)|;|,)",
     "lesson": "Non-null assertions (`user!.name`) crash at run time when the value is missing; narrow with a check or "
               "`?.`.",
     "example": "const name = user!.name;\n", "counter": "const name = user?.name ?? 'anonymous';\n"},
    # -- TypeScript, helpful ------------------------------------------------------------------
    {"id": "ts-expect-error", "languages": ["typescript"], "polarity": "helpful", "hint": "@ts-expect-error",
     "in_comments": True,
     "regex": r"@ts-expect-error[ \t]+\S",
     "lesson": "`// @ts-expect-error <reason>` documents a known type gap and fails once the gap is fixed.",
     "example": "// @ts-expect-error legacy API\nconst x: number = f();\n", "counter": "// @ts-ignore\nconst x: number "
                                                                                       "= f();\n"},
    {"id": "ts-catch-unknown", "languages": ["typescript"], "polarity": "helpful", "hint": "catch",
     "regex": r"\bcatch[ \t]*\([ \t]*\w+[ \t]*:[ \t]*unknown[ \t]*\)",
     "lesson": "Caught errors are typed `unknown` and narrowed (`if (err instanceof Error)`) before use.",
     "example": "try { f(); } catch (err: unknown) { report(err); }\n", "counter": "try { f(); } catch (err: any) { "
                                                                                   "report(err); }\n"},
]
