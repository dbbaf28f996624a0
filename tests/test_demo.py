"""`ace demo` runs the whole loop through the real hook processes: capture, learn, inject."""

import json
import os
import subprocess
import sys


def test_demo_captures_learns_and_injects(ace_home, tmp_path):
    proc = subprocess.run([sys.executable, "-m", "ace_engine.cli", "demo", "--json"], capture_output=True,
                          text=True, timeout=300, env={**os.environ, "TMPDIR": str(tmp_path)})
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout)
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
    assert start.startswith("<ace-playbook>") and pitfall["id"] in start
    assert not os.path.exists(result["workdir"]), "the temporary project and store are removed"
