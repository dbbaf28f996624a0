"""`ace demo`: the whole loop on a recorded Claude Code session — capture, learn, inject.

Each event runs as its own `python -m ace_engine.hooks EVENT` process, exactly as Claude Code runs
it, in a temporary git project with a temporary store, so the demo never touches your data.
After the first session, `ace learn` turns it into lessons (offline heuristics); a second session
then shows what the hooks inject: the digest at its start and, once its first turn has been
learned from (`{"demo": "learn"}` in the script: a candidate lesson seen a second time becomes
active), the lessons a later prompt brings (`<ace-patterns>`).

The temporary directory goes on every exit path (`temporary_workdir`): at the end, on an error,
on Ctrl-C (SIGINT) and on SIGTERM / SIGHUP, which are turned into an exit that runs the clean-up
(the hook process then running is killed by `subprocess.run` on the way out). It waits a few
seconds for a learning worker the demo's Stop hooks started to let go of the temporary store, so
the worker does not write it again after it was removed. `--keep` keeps it after a finished run
only: an interrupted demo leaves nothing behind.

Redaction is shown, not just claimed: every line of a hook's input that held one of the fake
secrets is paired with the stored line it became (`redactions`), and the store's files are
searched for the secrets afterwards (`secrets_found_in_store`, expected empty).
"""

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from importlib import resources
from typing import Any

from ..observe.git_context import git_command

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
            argv, env = git_command(root, *args)  # the one way git is run (observe/git_context.py)
            subprocess.run(argv, cwd=root, env=env, capture_output=True, check=False)


def run(workdir: str | None = None, python: str | None = None) -> dict[str, Any]:
    """Replay the recorded session, learn from it, replay the second one; return the hook calls,
    what the store captured, what was redacted on the way in, and the playbook after each
    learning step."""
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
    from ..core.project import identify

    key = identify(project).key
    playbook = _in_store(home, lambda store: store.list_bullets(store.project_id(key), statuses=None,
                                                                 order="created"))
    # The second session: `{"demo": "learn"}` marks where its turn ends and the worker the Stop hook
    # started has learned from it, before the next prompt.
    second_id = session_id + "-next"
    followup: list[dict[str, Any]] = []
    part: list[dict[str, Any]] = []
    for event in [*script["followup"], {"demo": "end"}]:
        if "demo" not in event:
            part.append(event)
            continue
        followup += _replay(part, second_id, subs, project, base, env, python, first=len(followup) + 1)
        part = []
        if event["demo"] == "learn":
            followup.append({"event": "learning", "detail": "", "exit_code": 0, "ms": 0.0, "answer": None,
                             "learned": _learn(project, env, python)})

    def final(store: Any) -> dict[str, Any]:
        return {"session": store.session(session_id), "captured": store.session_events(session_id),
                "playbook": store.list_bullets(store.project_id(key), statuses=None, order="created")}

    end = _in_store(home, final)
    from ..jobs.worker import wait_idle

    # Hooks hand the worker its lock: once we could take it, none is left and the temporary store
    # can be removed.
    _in_home(home, lambda: wait_idle(key, timeout=60.0))
    return {
        "workdir": base,
        "project": project,
        "ace_home": home,
        "session_id": session_id,
        "calls": calls,
        "session": end["session"],
        "captured": end["captured"],
        "redactions": _redactions(calls, end["captured"]),
        "secrets_found_in_store": _secrets_in_store(home),
        "learned": learned,
        "playbook": playbook,
        "playbook_after": end["playbook"],
        "followup_session_id": second_id,
        "followup": followup,
    }


WORKER_GRACE_SECONDS = 10.0  # how long an interrupted demo waits for its worker before removing the store
_SIGNALS = tuple(getattr(signal, name) for name in ("SIGTERM", "SIGHUP") if hasattr(signal, name))


def _interrupt(signum: int, _frame: object) -> None:
    """A signal asked the demo to stop: exit from where the demo was, so `finally` clean-ups run."""
    raise SystemExit(128 + signum)


@contextmanager
def temporary_workdir(keep: bool = False) -> Iterator[str]:
    """A new temporary directory for `run`, removed when the block ends — whatever ends it (see
    the module doc); kept when `keep` and the block finished normally."""
    base = tempfile.mkdtemp(prefix="ace-demo-")
    previous: dict[int, Any] = {}
    try:
        for sig in _SIGNALS:
            previous[sig] = signal.signal(sig, _interrupt)
    except ValueError:  # not the main thread: Ctrl-C and the end still clean up
        pass
    finished = False
    try:
        yield base
        finished = True
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        if not (keep and finished):
            remove_workdir(base)


REAPPEAR_WATCH_SECONDS = 3.0  # how long a removed directory is watched for a late writer


def remove_workdir(base: str, now: Callable[[], float] = time.monotonic) -> None:
    """Remove a demo's directory once no learning worker holds its store (a bounded wait). A
    background process a hook started just before the interrupt (a worker still starting, a
    detached replay) can write into it after it went: it is watched for `REAPPEAR_WATCH_SECONDS`
    and removed again, after that writer lets go, if it comes back."""
    watch_until = now() + REAPPEAR_WATCH_SECONDS
    for _ in range(3):  # a writer that keeps coming back after three removals is given up on
        home = os.path.join(base, "ace-home")
        if os.path.isdir(home):
            from ..jobs.worker import wait_idle

            try:
                _in_home(home, lambda: wait_idle(None, timeout=WORKER_GRACE_SECONDS))
            except OSError:
                pass  # removed all the same
        shutil.rmtree(base, ignore_errors=True)
        while not os.path.exists(base) and now() < watch_until:
            time.sleep(0.1)
        if not os.path.exists(base):
            return


def _in_home(home: str, call: Callable[[], Any]) -> Any:
    """`call()` with `ACE_HOME` pointed at the demo's store, for the call only."""
    previous = os.environ.get("ACE_HOME")
    os.environ["ACE_HOME"] = home
    try:
        return call()
    finally:
        if previous is None:
            os.environ.pop("ACE_HOME", None)
        else:
            os.environ["ACE_HOME"] = previous


def _in_store(home: str, read: Callable[[Any], Any]) -> Any:
    """`read(store)` on the demo's store."""
    from ..store.sqlite import SQLiteStore

    def call() -> Any:
        with SQLiteStore() as store:
            return read(store)

    return _in_home(home, call)


def _replay(events: list[dict[str, Any]], session_id: str, subs: dict[str, str], project: str, base: str,
            env: dict[str, str], python: str | None, first: int = 1) -> list[dict[str, Any]]:
    """Run each recorded event through its own hook process; the hooks' answers, in order."""
    calls = []
    for number, raw in enumerate(events, first):
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
            "tool_use_id": payload.get("tool_use_id"),
            "prompt": payload.get("prompt"),
            "sent_secrets": _secret_lines(payload),
        })
    return calls


def _strings(value: Any) -> list[str]:
    """Every string in a JSON-shaped value (a stored input or response is JSON text: its strings)."""
    if isinstance(value, str):
        try:
            parsed = json.loads(value)
        except ValueError:
            return [value]
        return _strings(parsed) if isinstance(parsed, (dict, list)) else [value]
    if isinstance(value, dict):
        return [s for v in value.values() for s in _strings(v)]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return []


def _secret_lines(payload: dict[str, Any]) -> list[dict[str, str]]:
    """The lines of a hook's input that hold one of the fake secrets: {secret (its name), line}."""
    found = []
    for text in _strings({k: v for k, v in payload.items() if k not in ("cwd", "transcript_path")}):
        for line in text.splitlines():
            for name, secret in FAKES.items():
                if secret in line:
                    found.append({"secret": name, "line": line.strip()})
                    break
    return found


def _redactions(calls: list[dict[str, Any]], captured: dict[str, Any]) -> list[dict[str, Any]]:
    """Each line sent with a fake secret next to the stored line it became: the stored line of the
    same record sharing the longest start with it (None when nothing of it was kept)."""
    tools = {t["tool_use_id"]: t for t in captured["tool_events"]}
    prompts = [m["text"] for m in captured["messages"] if m["role"] == "user"]
    out = []
    for call in calls:
        if not call.get("sent_secrets"):
            continue
        record = tools.get(call.get("tool_use_id"))
        stored_text = _strings([record["input"], record["response"], record["error"]]) if record else prompts
        stored = [line.strip() for text in stored_text for line in text.splitlines() if line.strip()]
        for sent in call["sent_secrets"]:
            best = max(stored, key=lambda line: _common(line, sent["line"]), default=None)
            keep = best if best is not None and _common(best, sent["line"]) >= 8 else None
            out.append({"event": call["event"], "detail": call["detail"], "secret": sent["secret"],
                        "sent": sent["line"], "stored": keep})
    return out


def _common(a: str, b: str) -> int:
    return len(os.path.commonprefix([a, b]))


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
