"""`ace demo`: a recorded session through the real hooks, and what was captured."""

import shutil

import click

from .. import demo
from .capture_cmds import render_session
from .common import json_option
from .output import emit_json, say, table


@click.command("demo")
@click.option("--keep", is_flag=True, help="Keep the temporary project and store for a look around.")
@json_option
def demo_cmd(keep, as_json):
    """Replay a recorded Claude Code session through the real hook entry points (in a temporary
    project with a temporary store): show what was captured, what was learned from it, and what
    the hooks inject into the next session."""
    result = demo.run()
    if not keep:
        shutil.rmtree(result["workdir"], ignore_errors=True)
    if as_json:
        return emit_json(result)
    calls = result["calls"]
    say("[bold]Replayed {} hook events[/] of a recorded session in {}", len(calls), result["project"])
    table("Hook calls (each a separate process, as Claude Code runs them)",
          ["#", "event", "detail", "exit", "ms", "answer"],
          [[i, c["event"], c["detail"], c["exit_code"], c["ms"],
            _answer_summary(c["answer"])] for i, c in enumerate(calls, 1)])
    render_session(result["session"], result["captured"])
    tools = result["captured"]["tool_events"]
    failed = sum(1 for t in tools if not t["success"])
    say("Captured {} tool events ({} failed), {} messages; TodoWrite skipped; private span dropped; secrets left in "
        "the store: {}.", len(tools), failed, len(result["captured"]["messages"]),
        ", ".join(result["secrets_found_in_store"]) or "none")
    say()
    say("[bold]Learned[/] (the Stop hooks queued the turns; a background worker ran the offline reflector and the "
        "curator):")
    if not result["playbook"]:
        say("  nothing — {}", result["learned"].get("error") or "no lesson passed the quality gates")
    for bullet in result["playbook"]:
        say("  [{}] ({}, {}) {}", bullet["id"], bullet["section"], bullet["status"], bullet["content"])
    say()
    say("[bold]Injected[/] into a second session of the same project:")
    for call in result["followup"]:
        specific = (call["answer"] or {}).get("hookSpecificOutput") or {}
        text = specific.get("additionalContext")
        label = f"{call['event']} ({call['detail']})" if call["detail"] else call["event"]
        if text:
            say("  {}:", label)
            say("    {}", text.replace("\n", "\n    "))
        else:
            say("  {}: nothing (already shown, or nothing relevant)", label)
    if keep:
        say("Kept: ACE_HOME={} ace sessions", result["ace_home"])


def _answer_summary(answer: dict | None) -> str:
    if not answer:
        return "(none)"
    specific = answer.get("hookSpecificOutput") or {}
    if "decision" in specific:
        return f"permission: {specific['decision'].get('behavior')}"
    if answer.get("systemMessage"):
        return "systemMessage"
    return "context" if specific.get("additionalContext") else "(empty)"


COMMANDS = [demo_cmd]
