"""Error signatures across ecosystems: the one line that says what went wrong, stable across runs
and machines, never a bare `error` or an exit-code line. The outputs below follow the real formats
of each tool (the ones in the learning corpus were read for their shape; names are our own)."""

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ace_engine.observe import commands, signatures
from ace_engine.observe.signatures import error_signature, normalize_signature, shorten
from conftest import examples

ESC = "\x1b"

CASES = [
    # -- Python ----------------------------------------------------------------------------------
    ("pytest summary", """============================= test session starts ==============================
collected 12 items

tests/test_cart.py ..F.........                                          [100%]

=================================== FAILURES ===================================
    def test_total():
>       assert cart.total() == 10
E       assert 9 == 10

tests/test_cart.py:14: AssertionError
=========================== short test summary info ============================
FAILED tests/test_cart.py::test_total - assert 9 == 10
========================= 1 failed, 11 passed in 0.31s =========================""",
     "tests/test_cart.py::test_total - assert 9 == 10"),
    ("traceback after a warning", """/opt/venv/lib/python3.12/site-packages/lib/auth.py:424: DeprecationWarning: utcnow() is deprecated
  now = datetime.datetime.utcnow()
Traceback (most recent call last):
  File "/home/dev/shop/run.py", line 3, in <module>
    main()
  File "/home/dev/shop/shop/store.py", line 40, in main
    raise errors.OutOfStock(item)
shop.errors.OutOfStock: item 42 is out of stock""", "shop.errors.OutOfStock: item 42 is out of stock"),
    ("pytest without its summary", """tests/test_cart.py F                                                     [100%]
________________________________ test_total ____________________________________
tests/test_cart.py:14: in test_total
    assert cart.total() == 10
E   AssertionError: assert 9 == 10
E    +  where 9 = total()""", "AssertionError: assert 9 == 10"),
    ("module not found", """Traceback (most recent call last):
  File "/home/dev/shop/tests/conftest.py", line 1, in <module>
    import textutil
ModuleNotFoundError: No module named 'textutil'""", "ModuleNotFoundError: No module named 'textutil'"),
    ("python -c syntax error", """  File "<string>", line 1
    print(x for x in)
                    ^
SyntaxError: invalid syntax""", "SyntaxError: invalid syntax"),
    ("unittest", """E
======================================================================
ERROR: test_parse (tests.test_parser.ParserTest.test_parse)
----------------------------------------------------------------------
Traceback (most recent call last):
  File "/home/dev/shop/tests/test_parser.py", line 9, in test_parse
    parse("")
ValueError: empty input

----------------------------------------------------------------------
Ran 1 test in 0.001s

FAILED (errors=1)""", "ValueError: empty input"),
    ("mypy", """src/shop/cart.py:12: error: Incompatible return value type (got "str", expected "int")  [return-value]
Found 1 error in 1 file (checked 8 source files)""",
     'src/shop/cart.py: error: Incompatible return value type (got "str", expected "int") [return-value]'),
    ("ruff", """src/shop/cart.py:3:8: F401 [*] `os` imported but unused
Found 1 error.
[*] 1 fixable with the `--fix` option.""", "src/shop/cart.py: F401 [*] `os` imported but unused"),
    ("black --check", """would reformat /home/dev/shop/src/shop/cart.py

Oh no! 💥 💔 💥
1 file would be reformatted, 11 files would be left unchanged.""", "would reformat src/shop/cart.py"),
    # -- JavaScript / TypeScript -----------------------------------------------------------------
    ("tsc", "src/api/client.ts(42,7): error TS2322: Type 'string' is not assignable to type 'number'.",
     "error TS2322: Type 'string' is not assignable to type 'number'."),
    ("tsc pretty", """src/app.ts:3:21 - error TS2307: Cannot find module '@/lib/api' or its corresponding type declarations.

3 import { get } from "@/lib/api";
                      ~~~~~~~~~~~

Found 1 error in src/app.ts:3""", "error TS2307: Cannot find module '@/lib/api' or its corresponding type declarations."),
    ("node uncaught", """/home/dev/web/server.js:12
    app.listen(port)
        ^

TypeError: app.listen is not a function
    at Object.<anonymous> (/home/dev/web/server.js:12:9)
    at Module._compile (node:internal/modules/cjs/loader:1256:14)

Node.js v20.11.0""", "TypeError: app.listen is not a function"),
    ("node missing module", """node:internal/modules/cjs/loader:1080
  throw err;
  ^

Error: Cannot find module 'express'
Require stack:
- /home/dev/web/server.js""", "Error: Cannot find module 'express'"),
    ("jest", """FAIL src/cart.test.ts
  ● Cart › computes the total

    expect(received).toBe(expected) // Object.is equality

    Expected: 10
    Received: 9

      at Object.<anonymous> (src/cart.test.ts:14:26)

Tests:       1 failed, 3 passed, 4 total""",
     "Cart › computes the total: expect(received).toBe(expected) // Object.is equality"),
    ("vitest with colours", f""" {ESC}[32m✓{ESC}[39m src/parse.test.ts {ESC}[2m(3 tests){ESC}[22m
{ESC}[41m{ESC}[1m FAIL {ESC}[22m{ESC}[49m src/cart.test.ts{ESC}[2m > {ESC}[22mCart{ESC}[2m > {ESC}[22mcomputes the total
{ESC}[31m{ESC}[1mAssertionError{ESC}[22m: expected 9 to be 10 // Object.is equality{ESC}[39m
 {ESC}[36m❯{ESC}[39m src/cart.test.ts:{ESC}[2m14:26{ESC}[22m

{ESC}[2m Test Files {ESC}[22m {ESC}[1m{ESC}[31m1 failed{ESC}[39m{ESC}[22m""",
     "src/cart.test.ts > Cart > computes the total: AssertionError: expected 9 to be 10 // Object.is equality"),
    ("eslint", """/home/dev/web/src/cart.ts
  3:10  error  'unused' is defined but never used  @typescript-eslint/no-unused-vars

✖ 1 problem (1 error, 0 warnings)""", "'unused' is defined but never used (@typescript-eslint/no-unused-vars)"),
    ("npm missing script", """npm error Missing script: "lint"
npm error
npm error To see a list of scripts, run:
npm error   npm run
npm error A complete log of this run can be found in: /home/dev/.npm/_logs/2025-01-01T10_00_00_000Z-debug-0.log""",
     'npm error Missing script: "lint"'),
    ("npm eresolve", """npm ERR! code ERESOLVE
npm ERR! ERESOLVE unable to resolve dependency tree
npm ERR!
npm ERR! While resolving: web@1.0.0""", "npm error ERESOLVE unable to resolve dependency tree"),
    ("pnpm", " ERR_PNPM_NO_SCRIPT  Missing script: typecheck", "ERR_PNPM_NO_SCRIPT Missing script: typecheck"),
    ("bun test", """bun test v1.1.0

src/parse.test.ts:
 7 |   expect(parse("a=1")).toEqual({ a: 1 })
                           ^
error: expect(received).toEqual(expected)

      at <anonymous> (/home/dev/web/src/parse.test.ts:7:24)
(fail) parse > reads key=value pairs [1.20ms]

 0 pass
 1 fail""", "parse > reads key=value pairs - error: expect(received).toEqual(expected)"),
    ("bun script exit is not the error", """$ tsc -p .
/bin/bash: tsc: command not found
error: script "typecheck" exited with code 127""", "tsc: command not found"),
    ("wrangler", f"""{ESC}[31m✘ {ESC}[41;31m[{ESC}[41;97mERROR{ESC}[41;31m]{ESC}[0m {ESC}[1mCould not resolve "node:fs"{ESC}[0m""",
     '[ERROR] Could not resolve "node:fs"'),
    # -- Go --------------------------------------------------------------------------------------
    ("go build", """# example.com/shop/cart
cart/cart.go:12:3: undefined: decimal
FAIL	example.com/shop/cart [build failed]
FAIL""", "cart/cart.go: undefined: decimal"),
    ("go test", """--- FAIL: TestTotal (0.00s)
    --- FAIL: TestTotal/empty_cart (0.00s)
        cart_test.go:21: Total() = 1, want 0
FAIL
FAIL	example.com/shop/cart	0.012s
FAIL""", "--- FAIL: TestTotal/empty_cart: cart_test.go: Total() = 1, want 0"),
    ("golangci-lint via mise", """[lint] $ golangci-lint run ./...
[lint] ERROR task failed

internal/store/store.go:40:2: ineffectual assignment to err (ineffassign)
	err = db.Close()
	^
1 issues:
* ineffassign: 1""", "internal/store/store.go: ineffectual assignment to err (ineffassign)"),
    ("bun workspace test", """@acme/core test: bun test v1.3.5 (1e86cebd)
@acme/core test: src/index.test.ts:
@acme/core test: # Unhandled error between tests
@acme/core test: -------------------------------
@acme/core test: error: Cannot find package 'fast-glob' from '/home/dev/shop/packages/core/src/loader.ts'
@acme/core test:  0 pass
@acme/core test:  1 fail
@acme/core test: Exited with code 1""", "error: Cannot find package 'fast-glob' from 'packages/core/src/loader.ts'"),
    ("gh refusal", """X Pull request acme/shop#235 is not mergeable: the base branch policy prohibits the merge.
To have the pull request merged after all the requirements have been met, add the `--auto` flag.""",
     "Pull request acme/shop#235 is not mergeable: the base branch policy prohibits the merge."),
    ("gh graphql", "GraphQL: Auto merge is not allowed for this repository (enablePullRequestAutoMerge)",
     "GraphQL: Auto merge is not allowed for this repository (enablePullRequestAutoMerge)"),
    ("go panic", """panic: runtime error: invalid memory address or nil pointer dereference
[signal SIGSEGV: segmentation violation code=0x1 addr=0x0 pc=0x4a2b3c]

goroutine 1 [running]:
main.main()
	/home/dev/shop/main.go:9 +0x1c
exit status 2""", "panic: runtime error: invalid memory address or nil pointer dereference"),
    ("go tool", "go: cannot run *_test.go files (/tmp/scratch/check_test.go)", "go: cannot run *_test.go files (…/check_test.go)"),
    # -- Rust ------------------------------------------------------------------------------------
    ("cargo msrv", """error: rustc 1.80.0 is not supported by the following package:
  serde_with@3.9.0 requires rustc 1.81
Either upgrade rustc or select compatible dependency versions with""",
     "error: rustc 1.80.0 is not supported by the following package: serde_with@3.9.0 requires rustc 1.81"),
    ("rustc", """   Compiling shop v0.1.0 (/home/dev/shop)
error[E0308]: mismatched types
 --> src/main.rs:4:18
  |
4 |     let n: u32 = "five";
  |            ---   ^^^^^^ expected `u32`, found `&str`

For more information about this error, try `rustc --explain E0308`.
error: could not compile `shop` (bin "shop") due to 1 previous error""", "error[E0308]: mismatched types"),
    ("clippy", """    Checking shop v0.1.0 (/home/dev/shop)
error: this `if` has identical blocks
  --> src/lib.rs:10:5
   |
   = note: `-D clippy::if-same-then-else` implied by `-D warnings`
error: could not compile `shop` (lib) due to 1 previous error""", "error: this `if` has identical blocks"),
    ("cargo test panic", """running 2 tests
test tests::adds ... FAILED

failures:

---- tests::adds stdout ----
thread 'tests::adds' panicked at src/lib.rs:12:9:
assertion `left == right` failed
  left: 4
 right: 5

test result: FAILED. 1 passed; 1 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.00s

error: test failed, to rerun pass `--lib`""", "thread 'tests::adds' panicked at src/lib.rs: assertion `left == right` failed"),
    # -- Java / Kotlin ---------------------------------------------------------------------------
    ("java uncaught", """Exception in thread "main" java.lang.IllegalStateException: config missing
	at com.shop.App.main(App.java:12)""", "java.lang.IllegalStateException: config missing"),
    ("maven compile", """[INFO] BUILD FAILURE
[ERROR] COMPILATION ERROR :
[ERROR] /home/dev/shop/src/main/java/com/shop/Cart.java:[14,9] cannot find symbol
[ERROR]   symbol:   variable total
[ERROR]   location: class com.shop.Cart
[ERROR] Failed to execute goal org.apache.maven.plugins:maven-compiler-plugin:3.11.0:compile (default-compile)""",
     "src/main/java/com/shop/Cart.java: cannot find symbol (symbol: variable total)"),
    ("javac", """src/Cart.java:14: error: cannot find symbol
        return total;
               ^
  symbol:   variable total
  location: class Cart
1 error""", "src/Cart.java: cannot find symbol (symbol: variable total)"),
    ("gradle", """> Task :app:compileKotlin FAILED

FAILURE: Build failed with an exception.

* What went wrong:
Execution failed for task ':app:compileKotlin'.
> Compilation error. See log for more details""", "What went wrong: Execution failed for task ':app:compileKotlin'."),
    ("kotlin compiler", "e: file:///home/dev/shop/app/src/main/kotlin/Cart.kt:10:5 Unresolved reference: totl",
     "app/src/main/kotlin/Cart.kt: Unresolved reference: totl"),
    ("gradle test", """> Task :app:test FAILED

CartTest > computesTotal() FAILED
    org.opentest4j.AssertionFailedError at CartTest.kt:15

1 test completed, 1 failed""", "CartTest > computesTotal(): org.opentest4j.AssertionFailedError"),
    ("ktlint", 'src/main/kotlin/App.kt:3:1: Unexpected blank line(s) before "}" (standard:no-blank-line-before-rbrace)',
     'src/main/kotlin/App.kt: Unexpected blank line(s) before "}" (standard:no-blank-line-before-rbrace)'),
    # -- Ruby ------------------------------------------------------------------------------------
    ("ruby uncaught", "/home/dev/app/lib/cart.rb:3:in 'total': undefined local variable or method 'prices' for an "
                      "instance of Cart (NameError)",
     "NameError: undefined local variable or method 'prices' for an instance of Cart"),
    ("rspec", """Failures:

  1) Cart#total sums the prices
     Failure/Error: expect(cart.total).to eq(10)

       expected: 10
            got: 9

Finished in 0.01 seconds (files took 0.1 seconds to load)
1 example, 1 failure""", "Cart#total sums the prices: Failure/Error: expect(cart.total).to eq(10)"),
    ("rubocop", """Offenses:

app/models/cart.rb:3:5: C: Style/StringLiterals: Prefer single-quoted strings when you don't need string interpolation.
    "total"
    ^^^^^^^

3 files inspected, 1 offense detected""",
     "app/models/cart.rb: C: Style/StringLiterals: Prefer single-quoted strings when you don't need string interpolation."),
    ("minitest", """  1) Failure:
CartTest#test_total [test/cart_test.rb:6]:
Expected: 10
  Actual: 9

1 runs, 1 assertions, 1 failures, 0 errors, 0 skips""", "CartTest#test_total: Expected: 10"),
    # -- Elixir ----------------------------------------------------------------------------------
    ("exunit raise", """Running ExUnit with seed: 0, max_cases: 16

  1) test renders the cart page (ShopWeb.CartLiveTest)
     test/shop_web/live/cart_live_test.exs:8
     ** (RuntimeError) Phoenix LiveView requires lazy_html as a test dependency.
     Please add to your mix.exs:

     code: {:ok, view, _html} = live(conn, ~p"/cart")
     stacktrace:
       (phoenix_live_view 1.1.0) lib/phoenix_live_view/test/dom.ex:18: Phoenix.LiveViewTest.DOM.ensure_loaded!/0

Finished in 0.1 seconds (0.05s async, 0.05s sync)
1 test, 1 failure""", "** (RuntimeError) Phoenix LiveView requires lazy_html as a test dependency."),
    ("exunit assertion", """  1) test total sums prices (Shop.CartTest)
     test/shop/cart_test.exs:5
     Assertion with == failed
     code:  assert Cart.total(cart) == 10
     left:  9
     right: 10
     stacktrace:
       test/shop/cart_test.exs:6: (test)""", "test total sums prices (Shop.CartTest): Assertion with == failed"),
    ("elixir compile error", """== Compilation error in file lib/shop/cart.ex ==
** (CompileError) lib/shop/cart.ex:4: undefined function totl/1 (there is no such import)""",
     "** (CompileError) lib/shop/cart.ex: undefined function totl/1 (there is no such import)"),
    ("elixir diagnostic over its summary", """Compiling 1 file (.ex)
    error: undefined variable "prices"
    │
  4 │     Enum.sum(prices)
    │              ^^^^^^
    │
    └─ lib/shop/cart.ex:4:14: Shop.Cart.total/1


== Compilation error in file lib/shop/cart.ex ==
** (CompileError) lib/shop/cart.ex: cannot compile module Shop.Cart (errors have been logged)""",
     'lib/shop/cart.ex: undefined variable "prices"'),
    ("mix format --check-formatted", """** (Mix) mix format failed due to --check-formatted.
The following files are not formatted:

  * lib/shop/cart.ex""", "** (Mix) mix format failed due to --check-formatted."),
    ("credo", """Checking 12 source files ...

  Code Readability
┃
┃ [R] ↘ Modules should have a @moduledoc tag.
┃       lib/shop/cart.ex:1:11 #(Shop.Cart)

Analysis took 0.1 seconds (0.01s to load, 0.1s running 55 checks on 12 files)
20 mods/funs, found 1 code readability issue.""", "[R] Modules should have a @moduledoc tag."),
    ("dialyzer", """Total errors: 1, Skipped: 0, Unnecessary Skips: 0
done in 0m2.1s
lib/shop/cart.ex:12:7:no_return
Function total/1 has no local return.

Type:
:error
________________________________________________________________________________
done (warnings were emitted)
Halting VM with exit status 2""", "lib/shop/cart.ex: no_return: Function total/1 has no local return."),
    ("a hook's escaped output", r"Pre-commit validation failed:\n\n[FORMAT] Files are not formatted.\nRun 'mix format' "
                                r"to fix.\n\nFix these issues before committing.",
     "[FORMAT] Files are not formatted. Run 'mix format' to fix."),
    ("a hook running credo", r"Pre-commit validation failed:\n\n[CREDO]\nChecking 9 source files ..."
                             "\n┃ [W] ↗ There should be no calls to `IO.inspect/1`.\n┃       lib/shop.ex:7:5 #(Shop.run)"
                             r"\n\nFix these issues before committing.",
     "[W] There should be no calls to `IO.inspect/1`."),
    # -- C / C++ ---------------------------------------------------------------------------------
    ("gcc fatal", """src/main.c:5:10: fatal error: shop.h: No such file or directory
    5 | #include "shop.h"
      |          ^~~~~~~~
compilation terminated.""", "src/main.c: error: shop.h: No such file or directory"),
    ("linker", """/usr/bin/ld: /tmp/ccQ1x2.o: in function `main':
main.c:(.text+0x1a): undefined reference to `cart_total'
collect2: error: ld returned 1 exit status""", "undefined reference to `cart_total'"),
    ("g++", "src/cart.cpp:12:5: error: 'totl' was not declared in this scope; did you mean 'total'?",
     "src/cart.cpp: error: 'totl' was not declared in this scope; did you mean 'total'?"),
    ("make", "make: *** No rule to make target 'tset'.  Stop.", "make: *** No rule to make target 'tset'."),
    # -- shell -----------------------------------------------------------------------------------
    ("bash not found", "bash: line 1: pnpm: command not found", "pnpm: command not found"),
    ("zsh not found", "(eval):1: command not found: pnpm", "command not found: pnpm"),
    ("zsh read-only", "(eval):3: read-only variable: status", "read-only variable: status"),
    ("heredoc temp file", "(eval):1: can't create temp file for here document: operation not permitted\n"
                          "Aborting commit due to empty commit message.",
     "can't create temp file for here document: operation not permitted"),
    ("no such file", "ls: cannot access 'build/out': No such file or directory",
     "ls: cannot access 'build/out': No such file or directory"),
    # -- Dart / Flutter --------------------------------------------------------------------------
    ("dart analyze", """Analyzing shop...

  error - lib/cart.dart:3:8 - Target of URI doesn't exist: 'package:shop/models/item.g.dart'. Try creating the file referenced by the URI, or try using a URI for a file that does exist. - uri_does_not_exist
  error - lib/cart.dart:9:3 - Undefined class 'Item'. Try changing the name to the name of an existing class. - undefined_class
   info - lib/main.dart:1:8 - Unused import: 'dart:io'. Try removing the import directive. - unused_import

3 issues found.""", "lib/cart.dart: Target of URI doesn't exist: 'package:shop/models/item.g.dart' (uri_does_not_exist)"),
    ("flutter analyze", """   info • Unused import: 'dart:io' • lib/main.dart:1:8 • unused_import
  error • Undefined name 'counter' • lib/main.dart:20:5 • undefined_identifier

2 issues found. (ran in 1.2s)""", "lib/main.dart: Undefined name 'counter' (undefined_identifier)"),
    ("flutter test", """00:02 +0: loading test/widget_test.dart
══╡ EXCEPTION CAUGHT BY FLUTTER TEST FRAMEWORK ╞════════════════════════════════════════
The following TestFailure was thrown running a test:
Expected: exactly one matching candidate
  Actual: _TextWidgetFinder:<Found 0 widgets with text "1": []>
00:03 +0 -1: Counter increments smoke test [E]
  Test failed. See exception logs above.
00:03 +0 -1: Some tests failed.""", "TestFailure: Expected: exactly one matching candidate"),
    # -- Markdown --------------------------------------------------------------------------------
    ("markdownlint-cli2", """markdownlint-cli2 v0.13.0 (markdownlint v0.34.0)
Finding: docs/**/*.md
Linting: 4 files
Summary: 2 error(s)
docs/guide.md:12:121 error MD013/line-length Line length [Expected: 120; Actual: 164]
docs/guide.md:30 error MD040/fenced-code-language Fenced code blocks should have a language specified [Context: "```"]""",
     "docs/guide.md: MD013/line-length Line length [Expected: 120]"),
    ("markdownlint", 'README.md:7 MD040/fenced-code-language Fenced code blocks should have a language specified '
                     '[Context: "```"]',
     "README.md: MD040/fenced-code-language Fenced code blocks should have a language specified"),
    # -- pre-commit frameworks: the hook's own line ----------------------------------------------
    ("husky + lint-staged", """✔ Preparing lint-staged...
❯ Running tasks for staged files...
      ✖ eslint --max-warnings=0 [FAILED]
[FAILED] eslint --max-warnings=0 [FAILED]
✖ eslint --max-warnings=0:

/home/dev/web/src/cart.ts
  5:7  error  'tmp' is assigned a value but never used  no-unused-vars

✖ 1 problem (1 error, 0 warnings)

husky - pre-commit script failed (code 1)""", "'tmp' is assigned a value but never used (no-unused-vars)"),
    ("pre-commit black", """black....................................................................Failed
- hook id: black
- files were modified by this hook

reformatted src/shop/cart.py

All done! ✨ 🍰 ✨
1 file reformatted.

flake8...................................................................Passed""",
     "black: reformatted src/shop/cart.py"),
    ("pre-commit ruff", """ruff.....................................................................Failed
- hook id: ruff
- exit code: 1

src/shop/cart.py:3:8: F401 [*] `os` imported but unused
Found 1 error.""", "src/shop/cart.py: F401 [*] `os` imported but unused"),
    ("lefthook", """╭───────────────────────────────────────╮
│ 🥊 lefthook v1.7.0  hook: pre-commit  │
╰───────────────────────────────────────╯
┃  golangci ❯

internal/api/handler.go:31:2: Error return value of `w.Write` is not checked (errcheck)
	w.Write(body)
	^

────────────────────────────────────
summary: (done in 3.21 seconds)
🥊  golangci""", "internal/api/handler.go: Error return value of `w.Write` is not checked (errcheck)"),
    ("golangci-lint dupl", """[lint] $ golangci-lint run ./...
internal/api/handler_test.go:90: 90-109 lines are duplicate of `internal/api/handler_test.go:111-130` (dupl)
func TestHandlerDefaults(t *testing.T) {
	if payload == nil {
		t.Fatal("Expected non-nil payload")
	}
}
1 issues:
* dupl: 1""", "internal/api/handler_test.go: lines are duplicate of `internal/api/handler_test.go:111-130` (dupl)"),
    ("go package header", """cmd/app/settings.go:1: : # example.com/app/cmd/app [example.com/app/cmd/app.test]
cmd/app/settings_test.go:12:2: undefined: loadStrict (typecheck)""", "cmd/app/settings_test.go: undefined: loadStrict (typecheck)"),
    # -- git -------------------------------------------------------------------------------------
    ("push rejected", """To github.com:acme/shop.git
 ! [rejected]        feature/cart -> feature/cart (fetch first)
error: failed to push some refs to 'github.com:acme/shop.git'
hint: Updates were rejected because the remote contains work that you do not""", "! [rejected] (fetch first)"),
    ("push non-fast-forward", " ! [rejected]        main -> main (non-fast-forward)\nerror: failed to push some refs",
     "! [rejected] (non-fast-forward)"),
    ("pathspec", "error: pathspec 'fix/cart' did not match any file(s) known to git",
     "error: pathspec 'fix/cart' did not match any file(s) known to git"),
    ("conflict", """Auto-merging src/cart.py
CONFLICT (content): Merge conflict in src/cart.py
Automatic merge failed; fix conflicts and then commit the result.""",
     "CONFLICT (content): Merge conflict in src/cart.py"),
    ("nothing to commit", "On branch main\nnothing to commit, working tree clean",
     "nothing to commit, working tree clean"),
    ("ignored paths", """The following paths are ignored by one of your .gitignore files:
.scratch
hint: Use -f if you really want to add them.""", "The following paths are ignored by one of your .gitignore files: .scratch"),
    # -- other command-line tools ----------------------------------------------------------------
    ("doppler", f"Unable to fetch secrets from the Doppler API\n{ESC}[31mDoppler Error:{ESC}[0m Invalid Auth token",
     "Doppler Error: Invalid Auth token"),
    ("gh", "gh: Not Found (HTTP 404)", "gh: Not Found (HTTP 404)"),
    ("edit tool", "<tool_use_error>String to replace not found in file.\nString:   def total(self):</tool_use_error>",
     "String to replace not found in file."),
]


@pytest.mark.parametrize("name, text, expected", CASES, ids=[c[0] for c in CASES])
def test_the_most_telling_line_of_each_tool(name, text, expected):
    assert error_signature("Exit code 1\n" + text, "/home/dev/shop") == expected


def test_the_table_covers_many_tools_and_names_their_ecosystems():
    assert len(CASES) >= 40
    ecosystems = {row[0] for row in signatures.RULES}
    assert {"python", "elixir", "rust", "go", "typescript", "javascript", "ruby", "dart", "markdown", "git",
            "shell", "hooks"} <= ecosystems


@pytest.mark.parametrize("text", [
    "Exit code 1",
    "Exit code 1\nerror",
    "Exit code 2\n{:error,\n :enoent}",
    "FAIL",
    "error: script \"test\" exited with code 1",
    "husky - pre-commit script failed (code 1)",
    "[lint] ERROR task failed",
    "make: *** [Makefile:12: test] Error 2",
    "<tool_use_error>Sibling tool call errored</tool_use_error>",
    "",
    None,
])
def test_no_signature_rather_than_a_bare_word_or_an_exit_line(text):
    assert error_signature(text) is None


def test_a_failure_reads_the_same_on_every_machine_and_every_run():
    def run(home, ms, addr):
        return (f"{ESC}[31mFAILED{ESC}[0m {home}/shop/tests/test_cart.py::test_total - AssertionError: "
                f"<Cart at {addr}> total 9 != 10 (took {ms}ms) in 0.{ms}s")
    a = error_signature(run("/home/ann/work", 31, "0x7f3a2b1c9d40"))
    b = error_signature(run("/Users/bob/src", 402, "0x10c4e5f60"))
    assert a == b
    assert ESC not in a and "/home" not in a and "0x" not in a and "31" not in a, a


def test_paths_line_numbers_timings_and_hashes_are_normalised():
    sig = normalize_signature("C:\\Users\\ann\\AppData\\Local\\Temp\\x.go:8:2: cannot find package; "
                              "commit 3fb22a50b; /var/folders/ab/T/tmp1zi794t4.py(12,4) done in 0m12.17s", None)
    assert sig == "…/x.go: cannot find package; commit <hash>; …/<tmp>.py done", sig
    assert normalize_signature("/home/dev/shop/src/a.py:12: boom", "/home/dev/shop") == "src/a.py: boom"
    # A URL is not a path.
    assert "github.com/acme/shop" in normalize_signature("error: failed to push to 'https://github.com/acme/shop.git'")


def test_colour_codes_are_gone_even_when_their_escape_character_was_lost():
    assert error_signature("[31mDoppler Error:[0m Invalid Auth token") == "Doppler Error: Invalid Auth token"
    assert error_signature("\\x1b[1mTypeError\\x1b[22m: x is not a function") == "TypeError: x is not a function"
    assert error_signature("[ERROR] Could not resolve host") == "[ERROR] Could not resolve host"  # not a colour code


def test_long_signatures_are_cut_at_a_word_boundary():
    long = "AssertionError: " + " ".join(f"word{i}" for i in range(100))
    sig = error_signature(long)
    assert len(sig) <= 200 and sig.endswith(" …")
    assert re.match(r"^AssertionError: (?:word\d+ )+…$", sig), sig
    assert shorten("short enough") == "short enough"
    assert shorten("a" * 300).endswith("…") and len(shorten("a" * 300)) <= 200


def test_commands_still_exports_the_signature_functions():
    assert commands.error_signature is error_signature and commands.normalize_signature is normalize_signature
    assert commands.outcome_line("....\n12 passed in 0.31s") == "12 passed in 0.31s"


@settings(max_examples=examples(300), deadline=None)
@given(st.text(max_size=800))
def test_never_raises_and_respects_the_limits(text):
    sig = error_signature(text, "/home/dev")
    assert sig is None or (0 < len(sig) <= 200 and "\n" not in sig)
