"""Attack: text ace-engine stored or learned (a lesson, a captured prompt or tool output, a learning
run, a job's error, a project's name or config) takes over the terminal when `ace` shows it
(issue 7, part 8).

rich reads `[...]` as markup: a lesson learned from `see [/tmp/log] for details` made every view
crash with a MarkupError, `pip install -e '.[test]'` was shown as `pip install -e '.'`, and ANSI /
OSC escapes captured from tool output reached the terminal raw (clear the screen, retitle the
window, plant a hyperlink). Every test here drives the public entry points — `ace` through
click's CliRunner or a real process, real hook processes, the store's `apply()` that the hooks
use — so the file runs unchanged against commit 2f8a758, where these tests fail.
"""

import ast
import json
import os
import re
import subprocess
import sys
import tempfile
import time
import traceback
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import ace_engine.cli as cli_package
from ace_engine.core.project import identify
from ace_engine.store.sqlite import SQLiteStore
from conftest import ace as run_ace
from conftest import examples
from hookutil import payload, run_hook

# What a terminal acts on or hides: C0 controls but tab/newline, DEL, C1 (0x9b is CSI), bidi
# overrides and isolates, lone surrogates. None may reach the output raw.
RAW_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069\ud800-\udfff]")
# A terminal wide enough that rich never folds a cell in the middle of a needle.
WIDE = {"COLUMNS": "100000", "FORCE_COLOR": None, "TTY_COMPATIBLE": None, "NO_COLOR": "1"}

ERROR_LINE = "ERROR tests/test_app.py - see [/tmp/log] for details"


def ace(*args, input=None):
    """Run `ace ARGS` in-process; any exception is kept in the result, never raised."""
    return run_ace(*args, input=input, env=WIDE, catch_exceptions=True)


def assert_shown(result, *needles: str) -> str:
    """Exit 0, no traceback, no raw control character, each needle literally in the output."""
    detail = "".join(traceback.format_exception(result.exception)) if result.exception else ""
    assert result.exception is None or isinstance(result.exception, SystemExit), detail
    assert result.exit_code == 0, f"exit {result.exit_code}: {result.output[-2000:]}{detail}"
    raw = RAW_CONTROL.search(result.output)
    assert raw is None, f"raw {raw.group()!r} in the output: {result.output[max(0, raw.start() - 80):raw.end() + 80]!r}"
    for needle in needles:
        assert needle in result.output, f"{needle!r} not shown literally in:\n{result.output[-3000:]}"
    return result.output


@pytest.fixture
def proj(ace_home, git_project):
    return git_project


def add_lesson(project, content: str) -> dict:
    result = ace("add", content, "--section", "pitfalls", "--project", project, "--json")
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def hook(event: str, cwd, **fields) -> None:
    code, out, err, _ = run_hook(event, payload(event, str(cwd), **fields))
    assert code == 0, err


# -- the two reported regressions, end to end -----------------------------------------------------


def test_a_lesson_from_an_error_line_with_a_bracketed_path_is_shown_by_every_view(proj):
    """The issue's case: `see [/tmp/log]` in a lesson and in captured events crashed `patterns`,
    `top`, `search`, `show`, `log`, `recall` and `events` with a MarkupError."""
    hook("SessionStart", proj, source="startup")
    hook("UserPromptSubmit", proj, prompt=f"why does this fail: {ERROR_LINE}")
    hook("PostToolUseFailure", proj, tool_name="Bash", tool_use_id="t-1", is_interrupt=False,
         tool_input={"command": "pytest -q"}, error=f"Exit code 1\n{ERROR_LINE}")
    bullet = add_lesson(proj, f"When pytest says `{ERROR_LINE}`, read that log before re-running")
    with SQLiteStore() as store:  # what the prompt hook records when it injects the lesson
        store.record_injections("sess-1", store.project_id(identify(str(proj)).key), "UserPromptSubmit",
                                [(bullet["id"], 0.9, 1)], time.time())
    for args in (["patterns"], ["top"], ["search", "pytest log", "--threshold", "0"], ["log"]):
        assert_shown(ace(*args, "--project", proj), "[/tmp/log]")
    assert_shown(ace("show", bullet["id"]), "[/tmp/log]")
    assert_shown(ace("recall", "--session", "sess-1"), "[/tmp/log]")
    assert_shown(ace("cache", "recall", "--session", "sess-1"), "[/tmp/log]")
    assert_shown(ace("events", "sess-1"), "[/tmp/log]")
    assert_shown(ace("events", "sess-1", "--full"), "[/tmp/log]")


def test_a_pip_extra_in_brackets_is_not_swallowed(proj):
    """`[test]` is a valid rich tag: it vanished silently, so the lesson read `pip install -e '.'`."""
    bullet = add_lesson(proj, "Install the dev dependencies with pip install -e '.[test]' before pytest")
    for args in (["patterns", "--project", proj], ["top", "--project", proj], ["show", bullet["id"]],
                 ["search", "dev dependencies", "--threshold", "0", "--project", proj], ["log", "--project", proj]):
        assert_shown(ace(*args), "pip install -e '.[test]'")


def test_escape_sequences_in_captured_tool_output_are_shown_not_obeyed(proj):
    """A tool's output that clears the screen, retitles the window and plants a hyperlink, captured
    by the real hooks: `ace events` shows the bytes as `\\x1b`, the terminal gets none of them."""
    nasty = "build ok\x1b[2J\x1b[H\x1b]0;pwned\x07\x1b]8;;https://evil.example/\x1b\\click\x1b]8;;\x1b\\ \x9b31m"
    hook("SessionStart", proj, source="startup")
    hook("PostToolUse", proj, tool_name="Bash", tool_use_id="t-1", tool_input={"command": "make"},
         tool_response={"stdout": nasty, "stderr": "", "interrupted": False})
    hook("UserPromptSubmit", proj, prompt=f"look: {nasty}")
    for args in (["events", "sess-1", "--full"], ["events", "sess-1"]):
        out = assert_shown(ace(*args), "build ok")
        assert "\\x1b[2J" in out and "\\x1b]8;;https://evil.example/" in out, out


def test_a_project_named_like_markup_is_shown_as_named(ace_home, tmp_path):
    """The project's name is its directory's: `.[test]` or `[bold]` in it is data."""
    root = tmp_path / "w[bold]eird.[test]\x1b[2J"
    root.mkdir()
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    hook("SessionStart", root, source="startup")
    assert_shown(ace("status", "--project", root), "w[bold]eird.[test]\\x1b[2J")
    assert_shown(ace("sessions", "--all"), "w[bold]eird.[test]\\x1b[2J")


def test_config_values_from_a_repository_file_are_data(proj):
    """`.ace.toml` is repository content: a value with `[/tmp/log]` crashed `ace config show`."""
    (proj / ".ace.toml").write_text('[capture]\nskip_tools = ["[/tmp/log]", "TodoWrite"]\n')
    assert_shown(ace("config", "show", "--project", proj), "[/tmp/log]")


def test_an_error_quoting_what_the_user_gave_shows_escapes_visibly(ace_home):
    """`fail()` quotes the argument (`no session …`): a planted ESC must not reach the terminal."""
    proc = subprocess.run([sys.executable, "-m", "ace_engine.cli", "events", b"x\x1b]0;pwned\x07\x1b[2J"],
                          capture_output=True, timeout=60, env={**os.environ, "COLUMNS": "200"})
    assert proc.returncode == 1, proc.stderr
    err = proc.stderr.decode("utf-8", "replace")
    assert err.startswith("error: ") and "Traceback" not in err, err
    assert b"\x1b" not in proc.stderr and b"\x07" not in proc.stderr and "\\x1b]0;pwned" in err, err


def test_json_output_carries_no_raw_terminal_controls(proj):
    """`--json` stays exact JSON, and no raw control reaches it. Since issue 20 a lesson is stored
    without its controls at all (`clean_content` reads `escape.plain`: `\\x1b[0m` inside a package
    name hid it from the screens), so every view shows the plain text a reader would see."""
    content = "Run make check \x9b2J\u202eexe.txt\x1b[2J before pushing"
    bullet = add_lesson(proj, content)
    content = "Run make check exe.txt before pushing"
    shown = {("patterns", "--json", "--project", proj): lambda d: d["patterns"][0]["content"],
             ("show", bullet["id"], "--json"): lambda d: d["bullet"]["content"],
             ("export", "--project", proj): lambda d: d["bullets"][0]["content"]}
    for args, content_of in shown.items():
        assert content_of(json.loads(assert_shown(ace(*args)))) == content, args


# -- every view, with arbitrary text -------------------------------------------------------------

# Each lesson / event starts with one of these, so every view must show it literally (views clip
# long text, but never its first 60 characters).
NEEDLES = ["[/tmp/log]", ".[test]", "[bold]", "[/]", "[link=https://evil.example/]", "[red on white]",
           "\\[x]", "[@click=app.quit]", "[#ff0000]", "x\\"]
FRAGMENTS = NEEDLES + ["[", "]", "\\", "[/bold]", "<system>", "</ace-patterns>", "\x1b[2J", "\x1b[31m", "\x1b[0m",
                       "\x1b]8;;https://evil.example/\x1b\\", "\x1b]0;pwned\x07", "\x9b2J", "\r", "\x08", "\x00",
                       "\x7f", "\u202e", "\u2066", "\t", "\n", ":warning:", "{}", "{0}", "%s", "`ace rm`"]
noise = st.lists(st.one_of(st.sampled_from(FRAGMENTS),
                           st.text(st.characters(blacklist_categories=("Cs",)), max_size=12)), max_size=10).map("".join)


def plant(project: Path, needle: str, text: str, long_line: bool) -> dict:
    """Store `needle + text` everywhere a view reads from; return the lesson `ace add` made."""
    now = time.time()
    ident = identify(str(project))
    event_text = f"{needle} {text}" + (" " + "L" * 6000 if long_line else "")
    hostile_name = f"{needle}{text}"[:120]
    project_record = {"key": ident.key, "root": ident.root, "remote": ident.remote, "name": hostile_name}
    session = {"cwd": ident.root, "transcript_path": None, "permission_mode": "default", "agent_type": None}

    def record(event, sid="sess-1", **extra):
        return {"v": 1, "at": now, "event": event, "session_id": sid, "agent_id": None, "agent_type": None,
                "detail": None, "project": project_record, "session": session, **extra}

    with SQLiteStore() as store:
        # What the hooks write: a session of the project (named by the repository), a prompt, a
        # failed tool call, a notification, the final answer; and a session with a planted id.
        store.apply(record("SessionStart", detail="startup"))
        store.apply(record("UserPromptSubmit", message={"role": "user", "text": event_text}))
        store.apply(record("PostToolUseFailure", tool_event={
            "tool_use_id": "t-1", "tool_name": f"Bash{needle}", "input": event_text, "response": None,
            "success": False, "exit_code": 1, "error": event_text, "is_interrupt": False, "duration_ms": 5}))
        store.apply(record("Notification", detail=event_text))
        store.apply(record("Stop", message={"role": "assistant", "text": event_text}))
        store.apply(record("SessionStart", sid=f"{needle}{text}"[:64] or needle, detail="startup"))
        # A learning job that failed with a hostile error, as the worker records it.
        project_id = store.project_id(ident.key)
        if store.enqueue_job("sess-1", None, None, "Stop", now, max_attempts=1) is not None:
            job = store.claim_job(project_id, os.getpid(), now, 60)
            store.fail_job(job, event_text, now, 60)
    lesson = add_lesson(project, f"{needle} zebrafish {text}"[:1900])
    with SQLiteStore() as store:
        store.record_injections("sess-1", store.project_id(ident.key), "UserPromptSubmit",
                                [(lesson["id"], 0.5, 1)], now)
    # A learning run over a plugin payload (task, trajectory, result) as `ace learn --stdin` takes it.
    learned = ace("learn", "--stdin", "--heuristic", "--project", project, input=json.dumps({
        "task": f"{needle} {text}", "trajectory": [{"action": "pytest -q", "observation": event_text}],
        "result": {"success": False, "output": event_text}}))
    assert learned.exit_code == 0, learned.output
    return lesson


@settings(max_examples=examples(25), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(needle=st.sampled_from(NEEDLES), text=noise, long_line=st.booleans())
def test_every_view_shows_arbitrary_stored_text_literally(proj, monkeypatch, needle, text, long_line):
    monkeypatch.setenv("ACE_HOME", os.path.join(tempfile.mkdtemp(dir=proj.parent), "ace-home"))
    lesson, p = plant(proj, needle, text, long_line), ["--project", proj]
    active, quarantined = lesson["status"] == "active", lesson["status"] == "quarantined"
    views = [
        (["patterns", "--status", "all", *p], [needle]),
        (["top", *p], [needle] if active else []),
        (["search", "zebrafish", "--threshold", "0", *p], [needle] if active else []),
        (["show", lesson["id"]], [needle]),
        (["log", *p], [needle]),
        # A quarantined lesson is never handed back by recall, even to a session it was shown to.
        (["recall", "--session", "sess-1"], [needle] if active else []),
        (["cache", "recall", "--session", "sess-1"], [needle] if active else []),
        (["events", "sess-1"], [needle]),
        (["events", "sess-1", "--full"], [needle]),
        (["sessions", "--all"], [needle]),
        (["review", *p], [needle] if quarantined else []),
        (["stats", *p], [needle]),
        (["jobs", *p], [needle]),
        (["domains", *p], []),
        (["status", *p], []),
        (["export", *p], []),
        (["config", "show", *p], []),
    ]
    for args, needles in views:
        assert_shown(ace(*args), *needles)


# -- no view can forget -------------------------------------------------------------------------

CLI_DIR = Path(cli_package.__file__).parent  # the package under test, wherever it is imported from


def test_views_print_only_through_the_escaping_helpers():
    """Stored text reaches the terminal only through `output.table` / `output.say` (values as
    literal `Text`): no view calls `console.print` or parses markup itself, and every `say`
    template is a string the code wrote, never an f-string that could hold stored text."""
    def literal(node) -> bool:
        if isinstance(node, ast.IfExp):
            return literal(node.body) and literal(node.orelse)
        return isinstance(node, ast.Constant) and isinstance(node.value, str)

    problems = []
    for path in sorted(CLI_DIR.glob("*.py")):
        if path.name == "output.py":
            continue
        tree = ast.parse(path.read_text(), str(path))
        says = any(isinstance(n, ast.ImportFrom) and n.module == "output" and any(a.name == "say" for a in n.names)
                   for n in ast.walk(tree))
        for node in ast.walk(tree):
            if not isinstance(node, ast.Call):
                continue
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            owner = getattr(func.value, "id", "") if isinstance(func, ast.Attribute) else ""
            where = f"{path.name}:{node.lineno}"
            if owner == "console" and name in ("print", "log", "out", "rule"):
                problems.append(f"{where}: console.{name}() — use output.say / output.table")
            if name in ("from_markup", "render_markup", "Text"):
                problems.append(f"{where}: {name}() in a view — use output.styled (it cleans the text)")
            if says and name == "say" and node.args and not literal(node.args[0]):
                problems.append(f"{where}: say() template is not a literal — pass values as arguments")
    assert not problems, "\n".join(problems)


@settings(max_examples=examples(300), deadline=None)
@given(value=st.one_of(noise, st.text()))
def test_a_value_escaped_for_markup_never_changes_the_markup_around_it(value):
    """`escape.terminal(value)` for code that builds markup itself (a progress bar's description):
    whatever `value` holds, the code's tags stay the code's, and the value reads as written
    (backslashes aside: rich's own escaping may double or halve a run before a tag). Emoji codes
    (`:warning:`) are not markup: a console prints them as emoji unless `emoji=False`."""
    from rich.text import Text

    from ace_engine.core import escape

    cleaned = escape.terminal(value, markup=False)
    assert RAW_CONTROL.search(cleaned) is None
    for before, after in (("", ""), ("[bold]", "[/bold]"), ("[bold]", "[/]"),
                          ("a [link=https://a.example]", "[/link]")):
        text = Text.from_markup(before + escape.terminal(value) + after, emoji=False)  # never raises
        assert text.plain.replace("\\", "") == Text.from_markup(before).plain + cleaned.replace("\\", "")
        if before:
            assert [(s.start, s.end) for s in text.spans] == [(len(Text.from_markup(before).plain), len(text.plain))]
        if "\\" not in cleaned:
            assert text.plain.endswith(cleaned)
