"""ace-engine capture, end to end: the real Claude Code CLI runs ace-engine's hooks.

Two routes switch ace-engine on: ``ace install`` (hooks merged into the project's
``.claude/settings.json``) and the Claude Code plugin (``claude plugin marketplace add <repo>``
+ ``claude plugin install ace-engine@ace-engine``).  Each test runs a scripted session and checks
what ace-engine stored, through ``ace events --json`` and the raw bytes under ``$ACE_HOME``.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from .claude_cli import ClaudeResult, run_claude, run_claude_command
from .model_server import MAIN

pytestmark = pytest.mark.e2e

REPO_ROOT = Path(__file__).resolve().parents[2]

# Built at run time so that no complete fake key sits in the repository.
FAKE_SECRET = "sk-ant-api03-" + "A" * 40
SECRET_CORE = "A" * 40
PRIVATE_MARKER = "hunter2-PRIVATE-e2e-marker"
PROMPT = (
    "Please look at app.py, check the shell and fix the greeting. "
    f"<private>my password is {PRIVATE_MARKER}</private> Thanks!"
)
FINAL_TEXT = "All done: app.py now greets with 'hi'."


# ---------------------------------------------------------------------------------------------
# helpers


def ace_env(tmp_path: Path) -> dict[str, str]:
    """Environment for ace-engine: a private ACE_HOME/config; hooks inherit it through claude."""
    return {
        "ACE_HOME": str(tmp_path / "ace-home"),
        "XDG_CONFIG_HOME": str(tmp_path / "xdg-config"),
        "XDG_DATA_HOME": str(tmp_path / "xdg-data"),
        "XDG_CACHE_HOME": str(tmp_path / "xdg-cache"),
    }


def run_ace(env: dict[str, str], home: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    full_env = {k: v for k, v in os.environ.items() if not k.startswith(("ACE_", "XDG_", "CLAUDE"))}
    full_env.update(env, HOME=str(home))
    proc = subprocess.run([sys.executable, "-m", "ace_engine.cli", *args], env=full_env,
                          capture_output=True, text=True, timeout=60)
    if check:
        assert proc.returncode == 0, (
            f"`ace {' '.join(args)}` exited {proc.returncode}\n"
            f"stdout:\n{proc.stdout}\nstderr:\n{proc.stderr}"
        )
    return proc


def ace_json(env: dict[str, str], home: Path, *args: str) -> dict:
    proc = run_ace(env, home, *args, "--json")
    try:
        return json.loads(proc.stdout)
    except ValueError:
        raise AssertionError(f"`ace {' '.join(args)} --json` did not print JSON:\n{proc.stdout}") from None


def wait_for_events(env, home, session_id, predicate, timeout=10.0) -> dict:
    """`ace events --json` once ``predicate(data)`` holds (hooks may finish just after exit)."""
    deadline = time.monotonic() + timeout
    while True:
        data = ace_json(env, home, "events", session_id)
        if predicate(data) or time.monotonic() > deadline:
            return data
        time.sleep(0.2)


def hook_event_names(data: dict) -> list[str]:
    return [e["event"] for e in data["hook_events"]]


def store_bytes(ace_home: Path) -> dict[Path, bytes]:
    """Every file ace-engine wrote (database, WAL, spool, logs …)."""
    files = {p: p.read_bytes() for p in ace_home.rglob("*") if p.is_file()}
    assert files, f"nothing was written under {ace_home}"
    return files


def assert_absent_everywhere(needle: str, ace_home: Path, *texts: str) -> None:
    for text in texts:
        assert needle not in text, f"{needle!r} leaked into ace output"
    raw = needle.encode()
    leaked = [str(p) for p, data in store_bytes(ace_home).items()
              if raw in data or needle.encode("utf-16-le") in data]
    assert not leaked, f"{needle!r} found in stored files: {leaked}"


def capture_script(project: Path) -> list:
    app = project / "app.py"
    return [
        [{"name": "Read", "input": {"file_path": str(app)}}],
        [{"name": "Bash", "input": {"command": f"echo ANTHROPIC_API_KEY={FAKE_SECRET}",
                                    "description": "Show the key"}}],
        [{"name": "Bash", "input": {"command": "ls /nonexistent-dir-xyz",
                                    "description": "List a missing directory"}}],
        [{"name": "Edit", "input": {"file_path": str(app), "old_string": "return 'hello'",
                                    "new_string": "return 'hi'"}}],
        FINAL_TEXT,
    ]


def emitted_tool_ids(result: ClaudeResult) -> list[tuple[str, str]]:
    """(tool_use_id, tool name) the scripted model sent during this run, in order."""
    return [(block["id"], block["name"]) for r in result.server_requests if r.kind == MAIN
            for block in (r.reply or []) if block.get("type") == "tool_use"]


def assert_clean_run(result: ClaudeResult, expected_text: str) -> None:
    result.check()
    assert result.result_text == expected_text, result.describe()
    assert result.json.get("permission_denials") == [], result.json.get("permission_denials")
    assert result.hook_problems() == [], (
        "Claude Code recorded hook problems:\n"
        + "\n".join(json.dumps(p)[:1500] if not isinstance(p, str) else p
                    for p in result.hook_problems())
    )


def ace_log_errors(ace_home: Path) -> list[str]:
    """ERROR lines of ace-engine's own logs: hooks fail open (exit 0, no output), so an
    exception inside a hook is invisible to Claude Code and shows up only here."""
    lines = []
    for log in ace_home.rglob("*.log"):
        lines += [line for line in log.read_text(errors="replace").splitlines()
                  if " ERROR " in line or "Traceback" in line]
    return lines


def assert_tool_events_match(data: dict, result: ClaudeResult) -> None:
    emitted = emitted_tool_ids(result)
    stored = [(t["tool_use_id"], t["tool_name"]) for t in data["tool_events"]]
    assert sorted(stored) == sorted(emitted), json.dumps(data["tool_events"], indent=1)[:4000]


# ---------------------------------------------------------------------------------------------
# tests


def test_ace_install_route_captures_a_session(claude_bin, model_server, claude_home, project_dir,
                                              tmp_path):
    env = ace_env(tmp_path)
    ace_home = Path(env["ACE_HOME"])

    # Settings that exist before `ace install` must survive install + uninstall unchanged.
    settings = project_dir / ".claude" / "settings.json"
    settings.parent.mkdir(parents=True, exist_ok=True)
    before = {
        "cleanupPeriodDays": 30,
        "hooks": {"Notification": [{"hooks": [{"type": "command", "command": "true"}]}]},
    }
    settings.write_text(json.dumps(before, indent=2))

    installed = ace_json(env, claude_home, "install", "--project", str(project_dir))
    assert installed["changed"] is True, installed
    merged = json.loads(settings.read_text())
    assert merged["cleanupPeriodDays"] == 30
    assert merged["hooks"]["Notification"] == before["hooks"]["Notification"]
    assert {"SessionStart", "PostToolUse", "PostToolUseFailure", "Stop",
            "SessionEnd"} <= set(merged["hooks"]), merged

    # ---- one scripted session -------------------------------------------------------------
    result = run_claude(claude_bin, project_dir, claude_home, model_server, PROMPT,
                        script=capture_script(project_dir), env=env)
    assert_clean_run(result, FINAL_TEXT)
    assert (project_dir / "app.py").read_text() == "def greet():\n    return 'hi'\n"
    sid = result.session_id

    assert ace_log_errors(ace_home) == []
    data = wait_for_events(env, claude_home, sid,
                           lambda d: "SessionEnd" in hook_event_names(d)
                           and len(d["tool_events"]) >= 4)
    events_text = json.dumps(data)

    # One tool event per tool call, with the right outcome.
    assert_tool_events_match(data, result)
    by_name = [(t["tool_name"], t["success"]) for t in data["tool_events"]]
    assert sorted(by_name) == sorted([("Read", True), ("Bash", True), ("Bash", False),
                                      ("Edit", True)]), by_name
    failed = [t for t in data["tool_events"] if not t["success"]]
    assert len(failed) == 1
    assert failed[0]["exit_code"] == 2, failed[0]
    assert "nonexistent-dir-xyz" in (failed[0]["input"] or "")
    echo = next(t for t in data["tool_events"] if t["tool_name"] == "Bash" and t["success"])
    assert "ANTHROPIC_API_KEY=" in echo["input"], echo  # the command is kept, the key is not

    # Secrets and <private> spans never reach the store.
    sessions = ace_json(env, claude_home, "sessions")
    sessions_text = json.dumps(sessions)
    assert_absent_everywhere(SECRET_CORE, ace_home, events_text, sessions_text)
    assert_absent_everywhere(PRIVATE_MARKER, ace_home, events_text, sessions_text)

    # The prompt (minus the private span) and the final answer are stored.
    user_texts = [m["text"] for m in data["messages"] if m["role"] == "user"]
    assistant_texts = [m["text"] for m in data["messages"] if m["role"] == "assistant"]
    assert any("Please look at app.py" in t for t in user_texts), data["messages"]
    assert any(FINAL_TEXT in t for t in assistant_texts), data["messages"]

    # Lifecycle hooks were recorded; the session is known and closed.
    names = hook_event_names(data)
    for event in ("SessionStart", "UserPromptSubmit", "Stop", "SessionEnd"):
        assert event in names, names
    row = next(s for s in sessions["sessions"] if s["session_id"] == sid)
    assert row["tool_events"] == 4, row
    assert Path(row["project_root"]).resolve() == project_dir, row
    assert row["ended_at"], row

    # ---- /compact on the same session ------------------------------------------------------
    compacted = run_claude(claude_bin, project_dir, claude_home, model_server, "/compact",
                           resume=sid, script=["unused"], env=env)
    assert_clean_run(compacted, "")
    assert compacted.session_id == sid
    data = wait_for_events(env, claude_home, sid,
                           lambda d: any(e["event"] == "SessionStart" and "compact" in str(e["detail"])
                                         for e in d["hook_events"]))
    names = hook_event_names(data)
    assert "PreCompact" in names, data["hook_events"]
    assert any(e["event"] == "SessionStart" and "compact" in str(e["detail"])
               for e in data["hook_events"]), data["hook_events"]
    assert len(data["tool_events"]) == 4  # compaction adds no tool events
    assert ace_log_errors(ace_home) == []

    # ---- uninstall restores the settings ---------------------------------------------------
    ace_json(env, claude_home, "uninstall", "--project", str(project_dir))
    assert json.loads(settings.read_text()) == before


@pytest.fixture(scope="session")
def plugin_checkout(tmp_path_factory) -> Path:
    """The repository as a user's clone would have it (tracked and untracked-but-not-ignored
    files), so that `claude plugin install` — which copies the whole marketplace directory into
    ~/.claude/plugins/cache — does not copy the developer's .venv, caches, etc."""
    listing = subprocess.run(
        ["git", "-C", str(REPO_ROOT), "ls-files", "-z", "--cached", "--others",
         "--exclude-standard"], capture_output=True, timeout=60,
    )
    if listing.returncode != 0:
        return REPO_ROOT  # not a git checkout: use the directory as it is
    target = tmp_path_factory.mktemp("plugin-checkout") / "ace-engine"
    for rel in filter(None, listing.stdout.decode().split("\0")):
        src = REPO_ROOT / rel
        if src.is_file():
            (target / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, target / rel)
    assert (target / ".claude-plugin" / "marketplace.json").is_file(), "no marketplace.json"
    return target


def test_plugin_route_captures_a_session(claude_bin, model_server, claude_home, project_dir,
                                         tmp_path, plugin_checkout):
    env = ace_env(tmp_path)
    env["ACE_PYTHON"] = sys.executable
    ace_home = Path(env["ACE_HOME"])

    for args in (["plugin", "marketplace", "add", str(plugin_checkout)],
                 ["plugin", "install", "ace-engine@ace-engine"]):
        proc = run_claude_command(claude_bin, args, home=claude_home, server_url=model_server.url,
                                  cwd=project_dir, env=env)
        assert proc.returncode == 0, f"claude {' '.join(args)}:\n{proc.stdout}\n{proc.stderr}"
    assert not (project_dir / ".claude" / "settings.json").exists()  # no `ace install` here

    result = run_claude(claude_bin, project_dir, claude_home, model_server, PROMPT,
                        script=capture_script(project_dir), env=env)
    assert_clean_run(result, FINAL_TEXT)
    sid = result.session_id
    assert ace_log_errors(ace_home) == []

    data = wait_for_events(env, claude_home, sid,
                           lambda d: "SessionEnd" in hook_event_names(d)
                           and len(d["tool_events"]) >= 4)
    assert_tool_events_match(data, result)
    assert sorted((t["tool_name"], t["success"]) for t in data["tool_events"]) == sorted(
        [("Read", True), ("Bash", True), ("Bash", False), ("Edit", True)])
    for event in ("SessionStart", "UserPromptSubmit", "Stop", "SessionEnd"):
        assert event in hook_event_names(data), data["hook_events"]
    assert_absent_everywhere(SECRET_CORE, ace_home, json.dumps(data))
    assert_absent_everywhere(PRIVATE_MARKER, ace_home, json.dumps(data))
