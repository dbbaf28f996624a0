"""`ace demo`: the whole loop on a recorded Claude Code session — capture, learn, inject.

Each event runs as its own `python -m ace_engine.hooks EVENT` process, exactly as Claude Code runs
it, in a temporary git project with a temporary store, so the demo never touches your data.
After the first session, `ace learn` turns it into lessons (offline heuristics); a second, short
session then shows what the hooks inject: the digest, the lessons for a prompt, a domain shift.
"""

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from importlib import resources
from typing import Any

# Fake secrets are assembled at run time so no scanner mistakes this file for a leak.
FAKES = {
    "fake_password": "hunter2-" + "demo",
    "fake_token": "tok_" + "d3m0" * 8,
    "fake_anthropic_key": "sk-ant-api03-" + "DemoKeyDoNotUse" * 4 + "-AA",
}


def _fill(value: Any, subs: dict[str, str]) -> Any:
    """`value` (a recorded event, JSON-shaped) with every `{name}` placeholder filled in."""
    if isinstance(value, str):
        for key, sub in subs.items():
            value = value.replace("{" + key + "}", sub)
        return value
    if isinstance(value, dict):
        return {k: _fill(v, subs) for k, v in value.items()}
    if isinstance(value, list):
        return [_fill(v, subs) for v in value]
    return value


def load_script() -> dict[str, Any]:
    return json.loads(resources.files(__package__).joinpath("session.json").read_text("utf-8"))


def _make_project(root: str, files: dict[str, str]) -> None:
    for rel, content in files.items():
        path = os.path.join(root, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(content)
    if shutil.which("git"):
        for args in (["init", "-q"], ["remote", "add", "origin", "https://github.com/example/textutil.git"]):
            subprocess.run(["git", *args], cwd=root, capture_output=True, check=False)


def run(workdir: str | None = None, python: str | None = None) -> dict[str, Any]:
    """Replay the recorded session; return the hook calls and what the store captured."""
    script = load_script()
    base = workdir or tempfile.mkdtemp(prefix="ace-demo-")
    project = os.path.join(base, "textutil")
    home = os.path.join(base, "ace-home")
    os.makedirs(project, exist_ok=True)
    _make_project(project, script["files"])
    session_id = f"demo-{int(time.time())}-{os.getpid()}"
    subs = {"cwd": project, **FAKES}
    subs.update({f"file:{rel}": content for rel, content in script["files"].items()})
    # The worker exits as soon as its queue is empty instead of lingering for more turns.
    env = {**os.environ, "ACE_HOME": home, "ACE_LEARNING_LINGER_SECONDS": "0"}
    calls = _replay(script["events"], session_id, subs, project, base, env, python)
    learned = _learn(project, env, python)
    second_id = session_id + "-next"
    followup = _replay(script["followup"], second_id, subs, project, base, env, python)
    previous = os.environ.get("ACE_HOME")
    os.environ["ACE_HOME"] = home
    try:
        from ..jobs.worker import wait_idle
        from ..store.sqlite import SQLiteStore

        with SQLiteStore() as store:
            session = store.session(session_id)
            captured = store.session_events(session_id)
            from ..project import identify

            key = identify(project).key
            playbook = store.list_bullets(store.project_id(key), statuses=None, order="created")
        # Hooks hand the worker its lock: once we could take it, none is left and the temporary
        # store can be removed.
        wait_idle(key, timeout=60.0)
    finally:
        if previous is None:
            os.environ.pop("ACE_HOME", None)
        else:
            os.environ["ACE_HOME"] = previous
    return {
        "workdir": base,
        "project": project,
        "ace_home": home,
        "session_id": session_id,
        "calls": calls,
        "session": session,
        "captured": captured,
        "secrets_found_in_store": _secrets_in_store(home),
        "learned": learned,
        "playbook": playbook,
        "followup_session_id": second_id,
        "followup": followup,
    }


def _replay(events: list[dict[str, Any]], session_id: str, subs: dict[str, str], project: str, base: str,
            env: dict[str, str], python: str | None) -> list[dict[str, Any]]:
    """Run each recorded event through its own hook process; the hooks' answers, in order."""
    calls = []
    for number, raw in enumerate(events, 1):
        payload = _fill(raw, subs)
        payload = {
            "session_id": session_id,
            "transcript_path": os.path.join(base, "transcript.jsonl"),
            "cwd": project,
            "permission_mode": "default",
            **payload,
        }
        if payload["hook_event_name"] in ("PostToolUse", "PostToolUseFailure", "PreToolUse"):
            payload.setdefault("tool_use_id", f"toolu_{session_id[-6:]}_{number:03d}")
        event = payload["hook_event_name"]
        started = time.perf_counter()
        proc = subprocess.run(
            [python or sys.executable, "-m", "ace_engine.hooks", event],
            input=json.dumps(payload).encode(), capture_output=True, cwd=project, env=env, timeout=60,
        )
        answer = proc.stdout.decode("utf-8", "replace").strip()
        calls.append({
            "event": event,
            "detail": payload.get("source") or payload.get("tool_name") or payload.get("trigger")
            or payload.get("reason") or "",
            "exit_code": proc.returncode,
            "ms": round((time.perf_counter() - started) * 1000, 1),
            "answer": json.loads(answer) if answer else None,
        })
    return calls


def _learn(project: str, env: dict[str, str], python: str | None) -> dict[str, Any]:
    """`ace learn` in the foreground (it waits for the worker the Stop hooks started)."""
    proc = subprocess.run(
        [python or sys.executable, "-m", "ace_engine.cli", "learn", "--project", project, "--heuristic", "--json"],
        capture_output=True, cwd=project, env=env, timeout=300,
    )
    try:
        return json.loads(proc.stdout)
    except ValueError:
        return {"error": (proc.stderr or proc.stdout).decode("utf-8", "replace").strip()[-500:]}


def _secrets_in_store(home: str) -> list[str]:
    """Which of the fake secrets appear anywhere in the store's files (should be none)."""
    found = []
    for name in os.listdir(home):
        path = os.path.join(home, name)
        if not os.path.isfile(path):
            continue
        with open(path, "rb") as fh:
            blob = fh.read()
        found += [key for key, secret in FAKES.items() if secret.encode() in blob and key not in found]
    return found
