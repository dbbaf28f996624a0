"""From failures to lessons: edit hunks, episode attribution, and how lessons read. Each case is a
defect measured on real sessions (issue 9): an edit shown as A → A, a throwaway script's path,
deleting the failing test recorded as the fix, a run on another file taken as proof, a refused
or cancelled call counted as a failure, a word cut in half."""

import pytest

from ace_engine.learning import edits, episodes, failure_lessons
from ace_engine.learning.heuristics import HeuristicReflector
from ace_engine.learning.lesson_wording import code, cut, local
from ace_engine.observe import commands
from ace_engine.observe.trajectory import carried, failure_class
from ace_engine.playbook import safety

ROOT = "/srv/shop"


def bash(cmd, out="", *, ok=True, failure="failed"):
    step = {"tool": "Bash", "action": "$ " + cmd, "command": cmd, "kind": commands.kind(cmd), "success": ok,
            "result": out.splitlines()[0] if out else "ok", "files": [], "duration_ms": 900, "interrupted": False,
            "exit_code": 0 if ok else 1, "tool_event_id": None, "output": out}
    if not ok:
        step.update(failure=failure, error=commands.error_signature(out) if failure == "failed" else None)
    else:
        step["error"] = None
    return step


def edit(path, old, new, tool="Edit"):
    data = {"file_path": path, "old_string": old, "new_string": new} if tool == "Edit" else \
        {"file_path": path, "content": new}
    return {"tool": tool, "action": f"edit {path}", "kind": "edit", "success": True, "result": "ok",
            "files": [path], "command": None, "error": None, "interrupted": False, "exit_code": None,
            "duration_ms": None, "tool_event_id": None, "written": data}


def reflect(steps, task="make the totals right"):
    for n, step in enumerate(steps, 1):
        step["step"] = n
    traj = {"task": task, "trajectory": steps, "project": {"root": ROOT}, "result": {"success": True}}
    return HeuristicReflector().reflect(traj, [])["candidates"]


def active(cands):
    return [c["content"] for c in cands if c["confidence"] >= 0.8]


# -- edits ---------------------------------------------------------------------------------------

def test_an_edit_is_shown_by_the_lines_that_changed_never_a_to_a():
    old = 'def eye(N, dtype=float):\n    """Identity."""\n    if chunks == "auto":\n        x = 1\n'
    new = 'def eye(N, dtype=float):\n    """Identity."""\n    if dtype is None:\n        dtype = float\n' \
          '    if chunks == "auto":\n        x = 1\n'
    ch = edits.change("Edit", {"old_string": old, "new_string": new}, "dask/array/creation.py")
    assert ch["added"] == ["if dtype is None:", "dtype = float"] and ch["removed"] == []
    assert ch["symbol"] == "eye" and ch["code"]
    assert edits.describe(ch) == "added `if dtype is None: / dtype = float`"


def test_docstring_and_comment_lines_give_way_to_code_lines():
    old = 'def f():\n    """Old words."""\n    # note\n    return a\n'
    new = 'def f():\n    """New words."""\n    # other note\n    return b\n'
    ch = edits.change("Edit", {"old_string": old, "new_string": new})
    assert edits.describe(ch) == "`return a` → `return b`"
    prose = edits.change("Edit", {"old_string": "# a\nx = 1\n", "new_string": "# b\nx = 1\n"})
    assert prose["code"] is False and edits.describe(prose) == "`# a` → `# b`"
    assert edits.change("Edit", {"old_string": "x = 1\n", "new_string": "x = 1\n"}) is None


# -- text ----------------------------------------------------------------------------------------

def test_long_text_is_cut_between_words_and_machine_paths_go():
    long = "string 'user' has 5 occurrences, but such constant 'transcriptTypeUser' already exists (goconst)"
    shown = code(long, 60)
    assert len(shown) <= 62 and not shown[:-1].rstrip("`").endswith(("s…", "t…")) and "…" in shown
    assert cut("abcdefghij klmnop", 12) == "abcdefghij …"
    assert local("python /testbed/repro.py", "/testbed") == "python repro.py"
    assert local("go run /tmp/tmplcheck.go") == "go run tmplcheck.go"
    assert local("node /Users/ann/.tools/bin/x.cjs") == "node ~/.tools/bin/x.cjs"
    assert local(r"cd D:\oh-my-posh\src && go test") == "cd src && go test"


# -- what counts as a failure --------------------------------------------------------------------

@pytest.mark.parametrize("text, tool, expected", [
    ("<tool_use_error>Sibling tool call errored</tool_use_error>", "Bash", "cancelled"),
    ("The user doesn't want to proceed with this tool use. The tool use was rejected", "Bash", "refused"),
    ("Permission to use Bash has been denied.", "Bash", "refused"),
    ("Permission to use Bash with command sed -n '1,60p' prune-branches.ps1 has been denied.", "Bash", "refused"),
    ("Permission for this action was denied by the Claude Code auto mode classifier. Reason: Blocked by classifier.",
     "Bash", "refused"),
    # A command's own output saying so is the command failing, not Claude Code refusing it.
    ("Exit code 1\nerror: Permission to use the registry has been denied for this token", "Bash", "failed"),
    ("<tool_use_error>File has not been read yet. Read it first before writing to it.</tool_use_error>", "Edit",
     "tool"),
    ("Exit code 1\nnpm error Missing script: \"lint\"", "Bash", "failed"),
])
def test_failures_are_classified(text, tool, expected):
    assert failure_class(text, tool) == expected


def test_cancelled_and_refused_calls_are_not_failed_commands():
    steps = [bash("npm test", "<tool_use_error>Sibling tool call errored</tool_use_error>", ok=False,
                  failure="cancelled"),
             bash("npm test", "Tests: 4 passed"),
             bash("rm -rf build", "The user doesn't want to proceed with this tool use.", ok=False, failure="refused"),
             bash("rm -rf build", "")]
    assert active(reflect(steps)) == []


# -- attribution ---------------------------------------------------------------------------------

def test_a_fix_in_project_code_after_a_throwaway_repro_is_stated_as_its_cause():
    steps = [edit("reproduce.py", "", "import dask.array as da\nda.eye(2, dtype=None)\n", tool="Write"),
             bash("python /srv/shop/reproduce.py",
                  'Traceback (most recent call last):\n  File "/srv/shop/dask/array/creation.py", line 9, in eye\n'
                  "TypeError: dtype must be known for auto-chunking", ok=False),
             edit("dask/array/creation.py", "    x = normalize(dtype)\n",
                  "    if dtype is None:\n        dtype = float\n    x = normalize(dtype)\n"),
             bash("python /srv/shop/reproduce.py", "ok")]
    (lesson,) = active(reflect(steps))
    assert lesson == ("`TypeError: dtype must be known for auto-chunking` comes from `eye` in "
                      "dask/array/creation.py; the fix: added `if dtype is None: / dtype = float`.")
    assert "reproduce.py" not in lesson


def test_deleting_the_failing_part_of_ones_own_script_is_not_a_fix():
    steps = [edit("check_all.py", "", "import boto3\nboto3.client('ses')\nprint('ok')\n", tool="Write"),
             bash("python check_all.py", "botocore.exceptions.ParamValidationError: bad bucket name", ok=False),
             edit("check_all.py", "boto3.client('ses')\n", ""),
             bash("python check_all.py", "ok")]
    assert active(reflect(steps)) == []


def test_deleting_the_failing_test_is_not_a_fix():
    steps = [bash("python -m pytest -q", "FAILED tests/test_cart.py::test_total - AssertionError: 3 != 4", ok=False),
             edit("tests/test_cart.py", "def test_total():\n    assert total() == 4\n", ""),
             bash("python -m pytest -q", "11 passed")]
    assert active(reflect(steps)) == []


def test_a_run_on_another_file_does_not_prove_a_fix():
    steps = [bash("mypy src/a.py", "src/a.py:3: error: Name \"x\" is not defined  [name-defined]", ok=False),
             edit("src/b.py", "y = 1\n", "y = 2\n"),
             bash("mypy src/b.py", "Success: no issues found in 1 source file")]
    assert reflect(steps) == [] or all("src/b.py" not in c["content"] for c in reflect(steps))
    narrower = [bash("dart analyze lib/features/", "error - lib/features/x.dart - Undefined name 'y'", ok=False),
                bash("dart analyze lib/features/domain/", "No issues found!")]
    assert [c for c in reflect(narrower) if c["kind"] == "command_variant"] == []


def test_a_mistake_in_code_the_task_just_wrote_is_no_lesson():
    """Failure, edit, pass: the curator's evidence tier would make it a lesson at once, but the rule
    ("import regexp") is the task's own."""
    steps = [edit("cmd/paths.go", 'import (\n\t"regexp"\n)\n', "import (\n)\n"),
             bash("go test ./...", "cmd/paths.go:12:9: undefined: regexp", ok=False),
             edit("cmd/paths.go", "import (\n)\n", 'import (\n\t"regexp"\n)\n'),
             bash("go test ./...", "ok  example.com/cmd 0.2s")]
    assert not [c for c in reflect(steps) if c["kind"] == "error_fix"]


def test_a_command_that_must_run_first_and_a_streak_keeps_the_telling_error():
    steps = [bash("bun run typecheck", "chkit typecheck: /bin/bash: tsc: command not found", ok=False),
             bash("./node_modules/.bin/tsc -p tsconfig.json --noEmit", "Exit code 127", ok=False),
             bash("bun install", "988 packages installed"),
             bash("./node_modules/.bin/tsc -p tsconfig.json --noEmit", "")]
    lessons = active(reflect(steps))
    assert any(lesson.startswith("Run `bun install` before ") and "tsc: command not found" in lesson
               for lesson in lessons), lessons


def test_an_environment_fact_and_the_variant_that_worked():
    steps = [bash("for status in a b; do echo $status; done", "(eval):1: read-only variable: status", ok=False),
             bash("for st in a b; do echo $st; done", "a\nb")]
    (lesson,) = active(reflect(steps))
    assert "read-only variable: status" in lesson and "`for st in a b; do echo $st; done` worked" in lesson


def test_a_missing_script_names_the_checks_that_work():
    steps = [bash("npx tsc --noEmit", ""),
             bash("npm run lint", 'npm error Missing script: "lint"\nnpm error To see a list of scripts, run:', ok=False)]
    (lesson,) = active(reflect(steps))
    assert lesson.startswith("There is no `npm run lint` in this project") and "`npx tsc --noEmit`" in lesson


def test_pre_commit_checks_become_one_lesson_without_the_commit_message():
    hook = ("Pre-commit validation failed:\n\n[CREDO]\n┃ [R] ↘ Prefer using an implicit `try` rather than explicit "
            "`try`.\n\n[DIALYZER]\nlib/x.ex:9: The pattern can never match the type.")
    steps = [bash("mix credo --strict", "found no issues"),
             bash('git add -A && git commit -m "feat: trace ids in hooks"', hook, ok=False),
             bash('git add -A && git commit --no-verify -m "feat: trace ids in hooks"', hook, ok=False)]
    (lesson,) = active(reflect(steps))
    assert lesson.startswith("`git commit` runs pre-commit checks here (credo, dialyzer); don't rely on "
                             "`--no-verify`, it does not skip them: run `mix credo --strict`")
    assert not safety.concerns(lesson)
    assert "feat:" not in lesson and "trace ids" not in lesson


def test_failures_carried_from_the_turn_before_are_fixed_in_this_one():
    before = [bash("doppler run -- bun run deploy", 'error: script "deploy" exited with code 1\nwrangler: '
                                                    "unknown option --env", ok=False)]
    before[0]["step"] = 7
    steps = [bash("bun update wrangler --latest", "50 packages installed"),
             bash("doppler run -- bun run deploy", "built in 2.9s")]
    for n, step in enumerate(steps, 1):
        step["step"] = n
    traj = {"task": "update wrangler and retry", "trajectory": steps, "project": {"root": ROOT},
            "result": {"success": True}, "carried": carried(before)}
    lessons = [c["content"] for c in HeuristicReflector().reflect(traj, [])["candidates"]]
    assert any(x.startswith("Run `bun update wrangler --latest` before `doppler run -- bun run deploy`")
               for x in lessons), lessons
    # Alone, a carried failure teaches nothing (it was learned with its own turn).
    assert episodes.find(carried(before)) == ([], carried(before))
    assert failure_lessons.lessons([dict(s, _change=None) for s in carried(before)], ROOT) == []


def test_a_pass_masked_by_a_fallback_proves_nothing():
    steps = [bash("node tools/report.js", "SyntaxError: Unexpected token '}'", ok=False),
             bash('node tools/report.js || echo "report failed"', "report failed")]
    assert [c for c in reflect(steps) if c["kind"] in ("command_variant", "flaky", "error_fix")] == []


def test_a_compound_command_is_shown_by_the_part_that_failed():
    out = ("The following paths are ignored by one of your .gitignore files:\n.planning\n"
           "hint: Use -f if you really want to add them.")
    (lesson,) = active(reflect([bash('git add .planning/x.md && git commit -m "docs: archive"', out, ok=False)]))
    assert lesson.startswith("`git add .planning/x.md` fails here with `The following paths are ignored")
    assert "docs: archive" not in lesson


def test_a_relative_import_the_task_just_broke_is_its_own_mistake_not_the_environment():
    steps = [edit("src/bin/version.ts", "export const V = '1'\n", "const pkg = require('../../../package.json')\n"),
             bash("bun run src/bin/version.ts", "error: Cannot find module '../../../package.json' from "
                                                "'src/bin/version.ts'", ok=False),
             edit("src/bin/version.ts", "require('../../../package.json')", "require('../../package.json')"),
             bash("bun run src/bin/version.ts", "1.0.0")]
    assert active(reflect(steps)) == []
    missing = [bash("node scripts/export.js", "Error: Cannot find module 'csv-stringify'", ok=False),
               bash("npm install csv-stringify", "added 1 package"),
               bash("node scripts/export.js", "exported")]
    assert active(reflect(missing)) == ["Run `npm install csv-stringify` before `node scripts/export.js`: without it, "
                                        "it fails with `Error: Cannot find module 'csv-stringify'`."]
