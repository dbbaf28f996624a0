"""`ace demo`: a recorded session through the real hooks, and what was captured, redacted,
learned and injected (`demo/__init__.py` runs it; this module prints the result)."""

import click

from .. import demo
from .capture_cmds import render_session
from .common import json_option
from .output import emit_json, plural, quote, say, table

INJECTING = ("SessionStart", "UserPromptSubmit", "PreToolUse")  # the hooks that put lessons in context


@click.command("demo")
@click.option("--keep", is_flag=True, help="Keep the temporary project and store for a look around.")
@json_option
def demo_cmd(keep, as_json):
    """Replay a recorded Claude Code session through the real hook entry points (in a temporary
    project with a temporary store): show what was captured and what redaction kept out of the
    store, what was learned from it, and what the hooks inject into the next session — the digest
    at its start and the lessons a prompt brings."""
    with demo.temporary_workdir(keep) as workdir:  # removed on every exit path, Ctrl-C and SIGTERM too
        result = demo.run(workdir)
    if as_json:
        return emit_json(result)
    calls = result["calls"]
    say("[bold]Replayed {}[/] of a recorded session in {}", plural(len(calls), "hook event"), result["project"])
    table("Hook calls (each a separate process, as Claude Code runs them)",
          ["#", "event", "detail", "exit", "ms", "answer"],
          [[i, c["event"], c["detail"], c["exit_code"], c["ms"],
            _answer_summary(c["answer"])] for i, c in enumerate(calls, 1)])
    render_session(result["session"], result["captured"])
    tools = result["captured"]["tool_events"]
    failed = sum(1 for t in tools if not t["success"])
    say("Captured {} ({} failed), {}; TodoWrite skipped.", plural(len(tools), "tool event"), failed,
        plural(len(result["captured"]["messages"]), "message"))
    say()
    _redactions(result)
    say()
    say("[bold]Learned[/] (the Stop hooks queued the turns; a background worker ran the offline reflector and the "
        "curator):")
    if not result["playbook"]:
        say("  nothing — {}", result["learned"].get("error") or "no lesson passed the quality gates")
    else:
        table(None, ["id", "section", "status", "lesson"],
              [[b["id"], b["section"], b["status"], b["content"]] for b in result["playbook"]],
              body=("lesson",), bare=("section", "status"))
        say("Active lessons are injected; a candidate (seen once, on weaker evidence) waits to be seen again.")
    say()
    say("[bold]Injected[/] into a second session of the same project (the hooks that can inject):")
    before = {b["id"]: b["status"] for b in result["playbook"]}
    for call in result["followup"]:
        if call["event"] == "learning":
            promoted = [b for b in result.get("playbook_after") or []
                        if b["status"] == "active" and before.get(b["id"]) not in (None, "active")]
            say("  … the turn ends (Stop); the worker learns from it{}", "." if not promoted else
                ": " + "; ".join(f"{b['id']}, seen a second time, is now active" for b in promoted) + ".")
            continue
        if call["event"] not in INJECTING:
            continue
        specific = (call["answer"] or {}).get("hookSpecificOutput") or {}
        text = specific.get("additionalContext")
        label = f"{call['event']} ({call['detail']})" if call["detail"] else call["event"]
        if call.get("prompt"):
            label = f"{call['event']} “{call['prompt']}”"
        if text:
            say("  {}:", label)
            quote(text)
        else:
            say("  {}: nothing (already shown in this session, or nothing relevant)", label)
    if keep:
        say("Kept: ACE_HOME={} ace sessions", result["ace_home"])


def _redactions(result: dict) -> None:
    """What the hooks were sent next to what the store kept: secrets redacted, the private span gone."""
    say("[bold]Kept out of the store[/] (redacted, and `<private>…</private>` dropped, before anything is written):")
    table(None, ["hook", "what", "as sent", "as stored"], [
        [f"{r['event']} {r['detail']}".strip(), "a <private> span" if "<private>" in r["sent"] else r["secret"],
         r["sent"], r["stored"] or "(line not stored)"]
        for r in result.get("redactions") or []], body=("as sent", "as stored"), bare=("what",), label_body=True)
    say("Fake secrets found anywhere in the store's files afterwards: {}.",
        ", ".join(result["secrets_found_in_store"]) or "none")


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
