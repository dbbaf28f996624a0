"""The hook contract on every input: exit 0, and stdout empty or one valid JSON object."""

import io
import json
import os
import sqlite3
import subprocess

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ace_engine.hooks import engine
from ace_engine.hooks.events import EVENTS
from conftest import examples
from hookutil import check_answer, payload, run_hook

ALL_EVENTS = sorted(EVENTS)

BAD_INPUTS = {
    "empty": b"",
    "whitespace": b"  \n\t ",
    "malformed": b'{"session_id": "x", ',
    "not-an-object": b'["SessionStart"]',
    "null": b"null",
    "invalid-utf8": b'{"session_id": "s\xff\xfe", "prompt": "caf\xc3", "tool_name": "Bash"}',
    "lone-surrogates": b'{"session_id": "s", "prompt": "\\ud800 x \\udfff", "tool_name": "B\\ud83d", '
    b'"tool_use_id": "t1", "tool_input": {"command": "echo \\udc80"}, "tool_response": "\\ud800"}',
    "wrong-types": b'{"session_id": 5, "cwd": 7, "prompt": ["a"], "tool_name": {}, "tool_input": 3,'
    b' "tool_response": null, "stop_hook_active": "yes", "source": 1, "duration_ms": "x"}',
    "missing-fields": b"{}",
}


@pytest.mark.parametrize("event", ALL_EVENTS)
@pytest.mark.parametrize("kind", sorted(BAD_INPUTS))
def test_bad_input_still_answers(ace_home, tmp_path, event, kind):
    code, out, err, _ = run_hook(event, BAD_INPUTS[kind], cwd=str(tmp_path))
    assert code == 0, err
    check_answer(event, out)
    # how long it takes: bench/budgets_bench.py (`hook faults`)


def test_unknown_event_answers_nothing(ace_home, tmp_path):
    code, out, _, _ = run_hook("NoSuchEvent", payload("NoSuchEvent", str(tmp_path)))
    assert (code, out) == (0, "")
    code, out, _, _ = run_hook("", b"{}")
    assert (code, out) == (0, "")


def test_huge_payload(ace_home, tmp_path):
    blob = "x" * (20 * 1024 * 1024)
    data = payload("PostToolUse", str(tmp_path), tool_name="Bash", tool_use_id="big-1",
                   tool_input={"command": "cat big"}, tool_response={"stdout": blob, "stderr": ""})
    code, out, err, _ = run_hook("PostToolUse", data)  # its time: bench/budgets_bench.py
    assert code == 0 and out == "", err
    con = sqlite3.connect(ace_home / "ace.db")
    (stored,) = con.execute("SELECT response FROM tool_events WHERE tool_use_id='big-1'").fetchone()
    assert len(stored) <= 8_000 and "chars cut" in stored


def test_payload_event_name_mismatch_uses_argv(ace_home, tmp_path):
    data = payload("Stop", str(tmp_path), last_assistant_message="done")
    code, out, _, _ = run_hook("UserPromptSubmit", data)
    assert code == 0
    check_answer("UserPromptSubmit", out)


EVENT_FIELDS = st.fixed_dictionaries(
    {},
    optional={
        "session_id": st.one_of(st.text(max_size=40), st.integers(), st.none()),
        "cwd": st.one_of(st.text(max_size=30), st.none()),
        "transcript_path": st.text(max_size=30),
        "prompt": st.text(max_size=300),
        "source": st.sampled_from(["startup", "resume", "clear", "compact", "weird"]),
        "tool_name": st.one_of(st.sampled_from(["Bash", "Read", "Edit", "TodoWrite"]), st.text(max_size=10)),
        "tool_use_id": st.text(max_size=20),
        "tool_input": st.recursive(
            st.one_of(st.none(), st.booleans(), st.integers(), st.text(max_size=50)),
            lambda children: st.one_of(st.lists(children, max_size=4),
                                       st.dictionaries(st.text(max_size=10), children, max_size=4)),
            max_leaves=10,
        ),
        "tool_response": st.one_of(st.text(max_size=200), st.dictionaries(st.text(max_size=8), st.text(max_size=40), max_size=4)),
        "error": st.text(max_size=100),
        "stop_hook_active": st.one_of(st.booleans(), st.text(max_size=3)),
        "last_assistant_message": st.one_of(st.text(max_size=200), st.none()),
        "duration_ms": st.one_of(st.integers(), st.floats(allow_nan=True), st.text(max_size=3)),
    },
)


def _run_in_process(event: str, raw: bytes) -> str:
    out = io.StringIO()
    with pytest.raises(SystemExit) as exit_info:
        engine.main([event], stdin=io.BytesIO(raw), stdout=out)
    assert exit_info.value.code in (0, None)
    return out.getvalue()


@settings(max_examples=examples(150), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(event=st.sampled_from(ALL_EVENTS), fields=EVENT_FIELDS)
def test_fuzz_structured_payloads(ace_home, event, fields):
    raw = json.dumps({"hook_event_name": event, **fields}).encode()
    check_answer(event, _run_in_process(event, raw))


@settings(max_examples=examples(150), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(event=st.sampled_from(ALL_EVENTS), raw=st.binary(max_size=400))
def test_fuzz_raw_bytes(ace_home, event, raw):
    check_answer(event, _run_in_process(event, raw))


# -- a broken store: the hook still answers, logs, and nothing is lost ---------------------------


def _tool(tmp_path, tool_use_id, session_id="sess-1"):
    return payload("PostToolUse", str(tmp_path), session_id=session_id, tool_name="Bash",
                   tool_use_id=tool_use_id, tool_input={"command": "true"},
                   tool_response={"stdout": "", "stderr": ""})


def _stored_ids(ace_home) -> set[str]:
    con = sqlite3.connect(ace_home / "ace.db")
    try:
        return {row[0] for row in con.execute("SELECT tool_use_id FROM tool_events")}
    finally:
        con.close()


def test_corrupt_store_spools_and_tells_once(ace_home, tmp_path):
    ace_home.mkdir()
    (ace_home / "ace.db").write_bytes(b"this is not a database" * 200)
    code, out, _, _ = run_hook("PostToolUse", _tool(tmp_path, "c-1"))
    assert (code, out) == (0, "")
    assert list((ace_home / "spool").iterdir()), "the record waits in the spool"
    code, out, _, _ = run_hook("SessionStart", payload("SessionStart", str(tmp_path), source="startup"))
    answer = check_answer("SessionStart", out)
    assert code == 0 and "degraded" in answer["systemMessage"] and "ace doctor" in answer["systemMessage"]
    code, out, _, _ = run_hook("SessionStart", payload("SessionStart", str(tmp_path), source="resume"))
    assert (code, out) == (0, ""), "told once per session"
    assert "store" in (ace_home / "logs" / "ace.log").read_text()
    # The user runs the fix; the spooled event reaches the new store.
    from ace_engine.cli import main as ace

    with pytest.raises(SystemExit) as done:
        ace(["doctor", "--fix", "--json"])
    assert done.value.code in (0, 1, None)
    assert "c-1" in _stored_ids(ace_home)
    assert list(ace_home.glob("ace.db.corrupt-*"))


def test_locked_store_answers_then_replays(ace_home, tmp_path):
    code, _, _, _ = run_hook("SessionStart", payload("SessionStart", str(tmp_path), source="startup"))
    assert code == 0
    locker = sqlite3.connect(ace_home / "ace.db", isolation_level=None)
    locker.execute("BEGIN EXCLUSIVE")
    try:
        code, out, _, _ = run_hook("PostToolUse", _tool(tmp_path, "l-1"))  # its time: bench/budgets_bench.py
        assert (code, out) == (0, "")
    finally:
        locker.execute("ROLLBACK")
        locker.close()
    assert "l-1" not in _stored_ids(ace_home)
    code, out, _, _ = run_hook("SessionStart", payload("SessionStart", str(tmp_path), session_id="sess-2", source="startup"))
    assert code == 0
    answer = check_answer("SessionStart", out)
    assert answer and "recovered" in answer["systemMessage"]
    assert "l-1" in _stored_ids(ace_home), "spooled record replayed"
    assert not [p for p in (ace_home / "spool").iterdir()]


def test_missing_store_directory_is_created(ace_home, tmp_path):
    assert not ace_home.exists()
    code, out, _, _ = run_hook("PostToolUse", _tool(tmp_path, "m-1"))
    assert (code, out) == (0, "")
    assert "m-1" in _stored_ids(ace_home)
    assert (os.stat(ace_home).st_mode & 0o777) == 0o700
    assert (os.stat(ace_home / "ace.db").st_mode & 0o777) == 0o600


def test_unusable_home_still_answers(tmp_path, monkeypatch):
    blocker = tmp_path / "a-file"
    blocker.write_text("x")
    monkeypatch.setenv("ACE_HOME", str(blocker / "home"))  # a path under a file: nothing can be created
    for event in ALL_EVENTS:
        code, out, _, _ = run_hook(event, payload(event, str(tmp_path), source="startup", tool_name="Bash",
                                                  tool_use_id="u-1", tool_input={}, tool_response={}))
        assert code == 0
        check_answer(event, out)


@pytest.fixture
def small_mount(tmp_path):
    """A 512 KiB tmpfs to fill up or make read-only (needs root, which CI and dev machines have)."""
    mount = tmp_path / "mnt"
    mount.mkdir()
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=512k", "tmpfs", str(mount)], capture_output=True).returncode:
        pytest.skip("cannot mount a tmpfs here (needs root)")
    yield mount
    subprocess.run(["umount", "-l", str(mount)], capture_output=True)


def test_full_disk(small_mount, tmp_path, monkeypatch):
    monkeypatch.setenv("ACE_HOME", str(small_mount / "home"))
    code, _, _, _ = run_hook("SessionStart", payload("SessionStart", str(tmp_path), source="startup"))
    assert code == 0
    filler = small_mount / "filler"
    fd = os.open(filler, os.O_WRONLY | os.O_CREAT)
    try:
        while os.write(fd, b"\0" * 4096):
            pass
    except OSError:
        pass  # ENOSPC: the disk is full now
    finally:
        os.close(fd)
    big = {"stdout": "y" * 7000, "stderr": ""}
    for n in range(5):
        data = _tool(tmp_path, f"f-{n}") | {"tool_response": big}
        code, out, _, _ = run_hook("PostToolUse", data)
        assert (code, out) == (0, "")
    code, out, _, _ = run_hook("SessionStart", payload("SessionStart", str(tmp_path), session_id="s-full", source="startup"))
    assert code == 0
    check_answer("SessionStart", out)


def test_read_only_store(small_mount, tmp_path, monkeypatch):
    monkeypatch.setenv("ACE_HOME", str(small_mount / "home"))
    run_hook("SessionStart", payload("SessionStart", str(tmp_path), source="startup"))
    subprocess.run(["mount", "-o", "remount,ro", str(small_mount)], check=True)
    for event in ALL_EVENTS:
        code, out, _, _ = run_hook(event, payload(event, str(tmp_path), session_id="s-ro", source="startup",
                                                  tool_name="Bash", tool_use_id="r-1", tool_input={}, tool_response={}))
        assert code == 0
        answer = check_answer(event, out)
        if event == "SessionStart":
            assert answer and "degraded" in answer["systemMessage"]


def test_ace_disabled_env_turns_hooks_into_no_ops(ace_home, tmp_path):
    data = payload("UserPromptSubmit", str(tmp_path), prompt="hello there, fix the build")
    code, out, _, _ = run_hook("UserPromptSubmit", data, env={"ACE_DISABLED": "1"})
    assert (code, out) == (0, "")
    assert not (ace_home / "ace.db").exists(), "nothing recorded"


def test_hook_input_parses_each_field_once_with_its_type():
    from ace_engine.hooks.hook_input import HookInput

    inp = HookInput.parse("PostToolUse", {
        "session_id": "s-1", "cwd": 7, "transcript_path": "", "tool_name": "Bash", "tool_input": ["odd"],
        "tool_response": {"stdout": "x"}, "is_interrupt": 1, "duration_ms": True, "stop_hook_active": "yes",
        "agent_id": None, "prompt": {"not": "text"}, "unknown": "ignored"})
    assert (inp.event, inp.session_id, inp.tool_name) == ("PostToolUse", "s-1", "Bash")
    assert inp.cwd is None and inp.transcript_path is None and inp.prompt is None and inp.agent_id is None
    assert inp.tool_input == ["odd"] and inp.tool_response == {"stdout": "x"}, "JSON values kept for capture"
    assert inp.is_interrupt is True and inp.duration_ms is None and inp.stop_hook_active is False
    assert HookInput.parse("Stop", {"stop_hook_active": True, "duration_ms": 12.5}).stop_hook_active is True
    assert HookInput.parse("Stop", {"duration_ms": 12.5}).duration_ms == 12.5
    assert not hasattr(inp, "__dict__"), "__slots__: no stray attributes"


def test_every_entry_point_calls_the_one_run_function():
    """launch.py, `python -m ace_engine.hooks`, `ace hook` and the plugin's launcher: one function."""
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    entry_points = ["src/ace_engine/hooks/launch.py", "src/ace_engine/hooks/__main__.py", "src/ace_engine/cli/__init__.py",
                    "src/ace_engine/cli/app.py", "hooks/ace_hook.py"]
    for rel in entry_points:
        with open(os.path.join(root, rel), encoding="utf-8") as fh:
            text = fh.read()
        assert "import run" in text and "engine import main" not in text, rel


def test_tool_table_is_the_one_source():
    from ace_engine.capture import tools
    from ace_engine.hooks.events import MATCHERS

    assert MATCHERS["PreToolUse"] == "|".join(tools.SHIFT_TOOLS) == "Read|Glob|Grep|Edit|Write|MultiEdit|NotebookEdit"
    assert MATCHERS["PermissionRequest"] == "Bash"
    assert set(tools.SHIFT_TOOLS) <= set(tools.TOOLS) and tools.FILE_TOOLS <= tools.READ_TOOLS | tools.EDIT_TOOLS
    assert tools.path_of("NotebookEdit", {"notebook_path": "a.ipynb"}) == "a.ipynb"
    assert tools.path_of("Glob", {"pattern": "src/**/*.py"}) == "src/**/*.py"
    assert tools.path_of("Read", "not a dict") is None and tools.path_of("Unknown", {"file_path": "x"}) is None
    assert tools.command_of("Bash", {"command": "ace status"}) == "ace status"
    assert tools.command_of("Read", {"command": "ace status"}) is None and tools.command_of("Bash", {"command": ""}) is None
