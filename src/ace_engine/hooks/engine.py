"""Run one hook: read stdin, parse it into a `HookInput`, dispatch to the event's handler, answer.

`run(argv)` is the one entry point of a hook process — the installed launcher (`launch.py`),
`python -m ace_engine.hooks`, `ace hook EVENT` and the plugin's `hooks/ace_hook.py` all call it —
and `main(argv, stdin, stdout)` the same run in-process, for tests and the benchmark.
`argv` is `[EVENT]` for Claude Code, `[AGENT, AGENT_EVENT]` for the others (`agents.registry.HOOKED`): `hooks.agents`
adapts their payload into Claude Code's shape before parsing and their answer after the handler.

Whatever happens inside — malformed or huge input, a broken store, a full disk, a bug — the
process exits 0 and stdout holds nothing or one JSON object valid for the event. A watchdog
answers on its own when the event's budget runs out. Fail closed: a tool call whose record cannot
be kept (a payload over the stdin cap or nested too deeply to parse, the budget run out) is
recorded as dropped (`HookInput.dropped`, `redact.sanitize.DROPPED`), never silently lost — what is
learned from that session is then no more trusted than someone else's text (`observe/origins.py`).

Cost: stdlib only; config, project and store are opened lazily, by the handlers that need them.
"""

import json
import os
import sys
import time

from ..agents.registry import HOOKED
from ..core import log
from .events import EVENTS
from .hook_input import HookInput

TYPE_CHECKING = False  # not `typing.TYPE_CHECKING`: the hooks must not import `typing` (~3 ms)
if TYPE_CHECKING:
    from typing import Any, BinaryIO, NoReturn, TextIO

    from ..core._types import CaptureRecord
    from ..core.config import Config
    from ..core.project import Project
    from ..store.sqlite import SQLiteStore

if TYPE_CHECKING:
    import signal as _signal  # the same functions, typed
else:
    import _signal  # the C module behind `signal`, whose enum wrappers cost every hook ~0.7 ms

MAX_STDIN_BYTES = 64 * 1024 * 1024


class Hook:
    """One hook invocation: its parsed input, and lazily opened config, project and store."""

    def __init__(self, inp: HookInput, started: float):
        self.input = inp
        self.event = inp.event
        self.session_id = inp.session_id
        self.started = started
        self.now = time.time()
        self.store_error: str | None = None
        self.saved = False  # the event's record was written (or spooled): the watchdog adds no drop
        self._cfg: Config | None = None
        self._project: Project | None = None
        self._store: SQLiteStore | None = None

    @property
    def cwd(self) -> str:
        return resolve_cwd(self.input.cwd, self.input.transcript_path)

    @property
    def project(self) -> "Project":
        if self._project is None:
            from ..core.project import identify

            self._project = identify(self.cwd)
        return self._project

    @property
    def cfg(self) -> "Config":
        if self._cfg is None:
            from ..core.config import load

            self._cfg = load(self.project.root)
        return self._cfg

    def store(self) -> "SQLiteStore | None":
        """The store, or None (and `store_error` set) when it cannot be opened."""
        if self._store is None and self.store_error is None:
            from ..store.sqlite import SQLiteStore, StoreError

            busy = min(self.cfg["store.busy_timeout_ms"], int(EVENTS[self.event]["budget"] * 300))
            try:
                self._store = SQLiteStore(busy_timeout_ms=busy)
            except StoreError as exc:
                self.store_error = str(exc)
                log.error(self.event, f"store unavailable: {exc}")
        return self._store

    def save(self, record: "CaptureRecord") -> None:
        """Write the record to the store; if that fails, spool it so it is written later."""
        record["duration_ms"] = round((time.perf_counter() - self.started) * 1000, 2)
        store = self.store()
        if store is not None:
            from ..store.sqlite import StoreError

            try:
                store.apply(record)
                self.saved = True
                return
            except StoreError as exc:
                self.store_error = str(exc)
                log.error(self.event, f"store write failed, spooling: {exc}")
        from ..store import spool
        from . import health

        kept = spool.append(record)  # where it is kept, or None: then it is reported as lost
        self.saved = True
        health.mark_degraded(self.store_error or "store unavailable", kept=kept)

    def close(self) -> None:
        if self._store is not None:
            self._store.close()


def resolve_cwd(cwd: str | None, transcript_path: str | None) -> str:
    """The payload's `cwd`, else the `cwd` recorded in the transcript, else `$CLAUDE_PROJECT_DIR`,
    else the process's working directory."""
    if cwd and os.path.isdir(cwd):
        return cwd
    if transcript_path:
        found = _cwd_from_transcript(transcript_path)
        if found:
            return found
    env_dir = os.environ.get("CLAUDE_PROJECT_DIR")
    if env_dir and os.path.isdir(env_dir):
        return env_dir
    try:
        return os.getcwd()
    except OSError:
        return os.path.expanduser("~")


def _cwd_from_transcript(path: str) -> str | None:
    try:
        with open(path, "rb") as fh:
            head = fh.read(256 * 1024)
    except OSError:
        return None
    for line in head.splitlines():
        if b'"cwd"' not in line:
            continue
        try:
            cwd = json.loads(line).get("cwd")
        except (ValueError, AttributeError):
            continue
        if isinstance(cwd, str) and os.path.isdir(cwd):
            return cwd
    return None


def read_payload(stream: "BinaryIO") -> "tuple[dict[str, Any], str | None, bool]":
    """Parse stdin into a dict; on any problem `({}, reason, False)`. A payload that is there but
    cannot be kept — over `MAX_STDIN_BYTES`, nested too deeply to parse, too large for memory — is
    `(its header, reason, True)`: its call is recorded as dropped (`HookInput.dropped`)."""
    try:
        raw = stream.read(MAX_STDIN_BYTES + 1)
    except (OSError, ValueError) as exc:
        return {}, f"cannot read stdin: {exc}", False
    if not raw or not raw.strip():
        return {}, "empty stdin", False
    if len(raw) > MAX_STDIN_BYTES:
        return _header(raw), f"stdin larger than {MAX_STDIN_BYTES} bytes ignored", True
    try:
        payload = json.loads(raw.decode("utf-8", "replace"))
    except ValueError as exc:
        return {}, f"malformed JSON on stdin: {exc}", False
    except (RecursionError, MemoryError) as exc:  # a tool's deeply nested result, say: the call is dropped
        return _header(raw), f"stdin JSON could not be parsed ({type(exc).__name__})", True
    if not isinstance(payload, dict):
        return {}, f"stdin JSON is a {type(payload).__name__}, not an object", False
    return payload, None, False


_HEADER_KEYS = ("session_id", "transcript_path", "cwd", "hook_event_name", "tool_name", "tool_use_id", "agent_id",
                "agent_type")


def _header(raw: bytes) -> "dict[str, Any]":
    """What a payload too large to parse says of itself in its first 64 KB (Claude Code writes the
    session, cwd and tool before the tool's input and response): enough to record that this call's
    record was dropped (`HookInput.dropped`). A key found further in (inside the input) only marks
    some session's evidence incomplete: the safe direction."""
    import re

    head = raw[:64 * 1024].decode("utf-8", "replace")
    out: dict[str, Any] = {}
    for key in _HEADER_KEYS:
        m = re.search(r'"' + key + r'"\s*:\s*"((?:[^"\\\n]|\\.){1,4096}?)"', head)
        if m:
            try:
                out[key] = json.loads(f'"{m.group(1)}"')
            except ValueError:
                continue
    return out


class _Answer:
    """Makes sure exactly one answer is written, by the handler or by the watchdog."""

    def __init__(self, out: "TextIO"):
        self.out = out
        self.sent = False
        self.empty = ""  # what "nothing to say" prints: the agent's `empty_answer` (Antigravity: `{}`)

    def send(self, obj: "dict[str, Any] | None") -> None:
        if self.sent:
            return
        self.sent = True
        if not obj and not self.empty:
            return
        try:
            self.out.write(json.dumps(obj, ensure_ascii=True, separators=(",", ":")) if obj else self.empty)
            self.out.flush()
        except (OSError, ValueError):
            pass  # Claude Code went away; nothing to tell


def _record_drop(hook: Hook, why: str) -> None:
    """The watchdog's last act for a tool event whose record was not saved in time: a record of the
    drop instead (`records.tool_event` of a `dropped` input), so the session's evidence is marked
    incomplete rather than silently missing the call. Bounded whatever was slow: only the small
    fields are read; the store only when it is open and between transactions (the slow part may
    have been opening it, or the real record's write), else the spool, which the learning worker
    replays before it learns (`jobs.worker`)."""
    try:
        from ..core.config import DEFAULTS, Config
        from ..redact.sanitize import short_text
        from ..store import spool
        from . import records

        hook.input.dropped = why
        record = records.base_record(hook.input, hook.now, None)
        record["detail"] = short_text(hook.input.tool_name)
        cfg = hook._cfg or Config(dict(DEFAULTS), {})  # noqa: SLF001 — the config if it was loaded
        record["tool_event"] = records.tool_event(hook.input, cfg)
        store = hook._store  # noqa: SLF001 — never opened here
        if store is not None and not store.conn.in_transaction:
            try:
                store.apply(record)
                return
            except Exception:  # noqa: BLE001 — kept in the spool instead
                pass
        spool.append(record)
    except BaseException as exc:  # noqa: BLE001 — the process exits next whatever happens
        log.error(hook.event, f"could not record the dropped call: {type(exc).__name__}: {exc}")


def run(argv: list[str]) -> "NoReturn":
    """A hook process: answer on stdout, then leave without closing the store or finalizing the
    interpreter. Closing the last connection checkpoints the whole WAL (~10+ ms); committed rows
    are already safe in the WAL, and the next writer's auto-checkpoint folds them in."""
    _handle(argv, sys.stdin.buffer, sys.stdout)
    os._exit(0)


def main(argv: list[str], stdin: "BinaryIO", stdout: "TextIO") -> "NoReturn":
    """The same run in-process (tests, benchmark): closes the store and raises SystemExit(0)."""
    hook = _handle(argv, stdin, stdout)
    if hook is not None:
        hook.close()
    sys.exit(0)


def _handle(argv: list[str], stdin: "BinaryIO", stdout: "TextIO") -> Hook | None:
    """Answer exactly once whatever happens; the Hook (to close) when a handler ran."""
    started = time.perf_counter()
    os.umask(0o077)
    answer = _Answer(stdout)
    agent, native = (argv[0], argv[1] if len(argv) > 1 else "") if argv and argv[0] in HOOKED else (None, "")
    if agent is not None:  # another agent: `AGENT NATIVE_EVENT`, adapted at this boundary
        from . import agents

        event = agents.event_for(agent, native)
        answer.empty = agents.empty_answer(agent)
    else:
        event = argv[0] if argv else ""

    running: list[Hook] = []  # the hook once its input is parsed, for the watchdog

    if event in EVENTS and hasattr(_signal, "setitimer"):

        def on_deadline(signum: int, frame: object) -> None:
            log.error(event, f"budget of {EVENTS[event]['budget']}s exceeded; answered empty")
            answer.send(None)
            if running and not running[0].saved and event in ("PostToolUse", "PostToolUseFailure"):
                _record_drop(running[0], f"the hook's {EVENTS[event]['budget']}s budget ran out")
            os._exit(0)

        _signal.signal(_signal.SIGALRM, on_deadline)
        _signal.setitimer(_signal.ITIMER_REAL, EVENTS[event]["budget"])

    hook = None
    try:
        payload, problem, dropped = read_payload(stdin)
        if agent is not None and event in EVENTS and not problem:
            event, payload = agents.adapt(agent, native, event, payload)
        inp = HookInput.parse(event, payload)
        inp.agent = agent or "claude"
        named = inp.hook_event_name
        if event not in EVENTS:
            log.warning("hook", f"unknown hook event {' '.join(argv[:2])!r} (payload says {named!r}); ignored")
            return None
        if os.environ.get("ACE_DISABLED", "") not in ("", "0"):
            return None  # e.g. the headless `claude` that the learning worker runs: never capture ourselves
        if problem:
            log.warning(event, problem)
        elif named != event:
            log.warning(event, f"payload hook_event_name is {named!r}; handled as {event}")
        from . import handlers

        if dropped:
            inp.dropped = problem  # recorded as a drop: the session's evidence is incomplete
        hook = Hook(inp, started)
        running.append(hook)
        special = agents.handler_name(agent, native) if agent is not None else ""
        reply = (getattr(handlers, special) if special else handlers.HANDLERS[event])(hook)
        answer.send(agents.answer(agent, native, reply) if agent is not None else reply)
    except BaseException as exc:  # noqa: BLE001 — the host agent must never see our failure
        log.error(event or "hook", f"{type(exc).__name__}: {exc}")
    finally:
        answer.send(None)
        if hasattr(_signal, "setitimer"):
            _signal.setitimer(_signal.ITIMER_REAL, 0)
    return hook
