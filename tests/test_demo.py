"""`ace demo` runs the whole loop through the real hook processes: capture, learn, inject."""

import glob
import json
import os
import signal
import subprocess
import sys
import time

import pytest


@pytest.fixture(scope="module")
def demo_json(tmp_path_factory):
    """One `ace demo --json` run, read by the checks below (each run is a whole session of hook
    processes and a learning worker: 5 s alone). Its own TMPDIR, so its removal is checked too."""
    tmp = tmp_path_factory.mktemp("demo")
    proc = subprocess.run([sys.executable, "-m", "ace_engine.cli", "demo", "--json"], capture_output=True,
                          text=True, timeout=300, env={**os.environ, "TMPDIR": str(tmp)})
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def test_demo_captures_learns_and_injects(demo_json):
    result = demo_json
    calls = result["calls"]
    assert len(calls) >= 20 and all(c["exit_code"] == 0 for c in calls)
    events = {c["event"] for c in calls}
    assert {"SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse", "PostToolUseFailure",
            "PreCompact", "Stop", "SessionEnd", "PermissionRequest", "SubagentStop"} <= events
    tools = result["captured"]["tool_events"]
    assert any(not t["success"] and t["exit_code"] == 1 for t in tools)
    assert "TodoWrite" not in {t["tool_name"] for t in tools}
    assert result["secrets_found_in_store"] == []
    assert not any("hunter2" in m["text"] for m in result["captured"]["messages"])
    lessons = [b for b in result["playbook"] if b["status"] == "active"]
    pitfall = next(b for b in lessons if b["section"] == "troubleshooting_and_pitfalls")
    assert "pytest" in pitfall["content"] and "textutil" in pitfall["content"]
    start = result["followup"][0]["answer"]["hookSpecificOutput"]["additionalContext"]
    digest = start[start.index("<ace-playbook>"):]  # after whatever else SessionStart brings first
    assert pitfall["id"] in digest
    assert not os.path.exists(result["workdir"]), "the temporary project and store are removed"


def test_demo_shows_what_redaction_kept_out_and_a_prompt_time_injection(demo_json):
    from ace_engine.demo import FAKES

    result = demo_json
    # Each line sent with a fake secret, next to what the store kept of it.
    by_secret = {}
    for row in result["redactions"]:
        assert FAKES[row["secret"]] in row["sent"]
        assert row["stored"] is None or not any(secret in row["stored"] for secret in FAKES.values())
        by_secret.setdefault(row["secret"], []).append(row)
    assert set(by_secret) == set(FAKES)
    token = by_secret["fake_token"][0]
    assert token["stored"] == "curl -s -H 'Authorization: Bearer [REDACTED:auth-header]' " \
                              "https://deploy.example.invalid/v1/check"
    private = next(r for r in by_secret["fake_password"] if "<private>" in r["sent"])
    assert private["stored"] == "test_unicode fails for accented input; fix slugify so the tests pass."
    # The second session: the digest at its start, then, once its first turn was learned from, a
    # lesson that was only a candidate before comes back on a later prompt.
    followup = result["followup"]
    learning = next(i for i, c in enumerate(followup) if c["event"] == "learning")
    later = [c for c in followup[learning:] if c["event"] == "UserPromptSubmit"]
    block = later[0]["answer"]["hookSpecificOutput"]["additionalContext"]
    assert block.startswith("<ace-patterns>") and block.rstrip().endswith("</ace-patterns>")
    before = {b["id"]: b["status"] for b in result["playbook"]}
    after = {b["id"]: b["status"] for b in result["playbook_after"]}
    promoted = [i for i, status in after.items() if status == "active" and before.get(i) == "candidate"]
    assert promoted and all(i in block for i in promoted)
    assert not any(i in block for i in before if before[i] == "active"), "never repeats what the digest showed"


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_an_interrupted_demo_leaves_no_temporary_directory(ace_home, tmp_path, sig):
    """Ctrl-C (SIGINT) or SIGTERM while the demo's hooks run: its temporary project and store go."""
    # SIGINT at its default in the child, as a terminal's Ctrl-C finds it: an ignored SIGINT is inherited
    # through exec (Python then keeps ignoring it, as a shell's background job must), and something in a
    # long pytest worker can leave it ignored — the demo then ran to its end (exit 0) in the whole suite.
    proc = subprocess.Popen([sys.executable, "-m", "ace_engine.cli", "demo"], stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True, env={**os.environ, "TMPDIR": str(tmp_path)},
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        deadline = time.monotonic() + 120
        while not glob.glob(str(tmp_path / "ace-demo-*" / "ace-home" / "ace.db")):  # the hooks have written
            assert proc.poll() is None, proc.stderr.read() if proc.stderr else ""
            assert time.monotonic() < deadline, "the demo never started writing"
            time.sleep(0.05)
        proc.send_signal(sig)
        _, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode != 0 and "Traceback" not in err, err
    assert glob.glob(str(tmp_path / "ace-demo-*")) == [], "the interrupted demo left its directory"
