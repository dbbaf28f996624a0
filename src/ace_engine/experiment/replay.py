"""Replay: a repository's past sessions lived again in the order they happened, in a throwaway
store, to estimate what the lessons would have done before any experiment runs.

Contract. `replay(sessions, ace=…, hook=…)` takes sessions (`Session`: an id, its transcript, when
it began; `order` sorts them) and, in one fresh temporary ACE_HOME and `git init` project — never
the user's store, config or home — for each session in turn:

1. session start: the real SessionStart hook (`startup`) as a process (`hook`: the argv `ace install`
   writes, without its event), then every prompt typed before the session's first tool call through
   the real UserPromptSubmit hook; what they inject (`additionalContext`) is kept, lesson line by line;
2. the playbook as it stood at that start is read (`snapshot`) and the session is scored
   (`replay_score.score`, and `judge` when given: the bench's gold lessons);
3. after the session: `ace learn --transcript FILE --project P`, then `ace learn --project P` (the
   queue the background worker would run), offline (`--heuristic`) unless `offline` is False, as a
   user learning from these sessions would have.

One row per session: its id, order, opening prompts, the injected lines (`lines`, `line_ids`), their
estimated tokens (`core.fmt.estimate_tokens`, as the hooks count), the hooks' notices, errors, and
`captured` (what the transcript itself says: `replay_score`). `replay_score.figures` sums them.
`bench/replay.py` is a caller of this module: the same figure on the same sessions by construction.

Untrusted input: a transcript is data, read by the observe readers and handed to `ace learn` as a
path; nothing in it is run. The child processes get an environment without the user's ACE_*, with
HOME, XDG and agent config dirs in the temporary directory (`isolated_env`; `keep_home` leaves HOME
and the agents' dirs, which a model run through Claude Code's or Codex's CLI needs to log in).

Cost: per session two hook processes or more (~0.1-0.3 s each), two `ace learn` processes (offline
~1-5 s; with a model, its calls), one parse of the transcript and one store read: minutes for a
hundred sessions. Nothing here runs in a hook.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypedDict

from . import replay_score

HOOK_TIMEOUT = 60
LEARN_TIMEOUT = 900
LINE = re.compile(r"^- \[(ctx-[0-9a-z]+)[^\]]*\]\s?(.*)$")  # one lesson line of an injected block
_TIMESTAMP = re.compile(r'"timestamp"\s*:\s*"([^"]+)"')
_DROPPED = ("CLAUDE_CONFIG_DIR", "CODEX_HOME", "GEMINI_CLI_HOME")  # the user's agents' own folders


class Session(TypedDict):
    id: str
    path: str
    when: str  # an ISO time (or any string that sorts in time order); "" sorts first


Judge = Callable[[Mapping[str, Any], int, Sequence[tuple[str, str]], Sequence[Mapping[str, Any]]], dict[str, Any]]


def first_timestamp(path: str) -> str:
    """The first `"timestamp"` a transcript records (Claude Code and Codex lines carry one), "" if none."""
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            for line in fh:
                m = _TIMESTAMP.search(line)
                if m:
                    return m.group(1)
    except OSError:
        pass
    return ""


def order(sessions: Sequence[Session]) -> list[Session]:
    """Oldest first; sessions that began at the same time by id."""
    return sorted(sessions, key=lambda s: (s["when"], s["id"]))


def opening_prompts(parsed: Mapping[str, Any]) -> list[str]:
    """The user's prompts typed before the main agent's first tool call (the one that opened the
    session when the transcript has no clock to order by)."""
    main = next((a for a in parsed.get("agents") or [] if not a.get("agent_id")), None)
    if main is None:
        return []
    first_tool = min((float(e.get("created_at") or 0) for e in main["events"]), default=None)
    prompts = []
    for m in main["messages"]:
        if m.get("role") != "user" or m.get("by", "user") != "user" or not (m.get("text") or "").strip():
            continue
        at = m.get("created_at")
        if first_tool is not None and (at is None or float(at) >= first_tool):
            break
        prompts.append(m["text"])
        if first_tool is None or at is None:
            break
    return prompts


def injected_lines(text: str) -> list[tuple[str, str]]:
    """(lesson id, lesson text) of every lesson line in injected blocks."""
    found = []
    for raw in (text or "").splitlines():
        m = LINE.match(raw.strip())
        if m:
            found.append((m.group(1), m.group(2)))
    return found


def isolated_env(tmp: str, base: Mapping[str, str] | None = None, *, keep_home: bool = False) -> dict[str, str]:
    """The child processes' environment: everything ace reads or writes under `tmp`."""
    env = {k: v for k, v in (os.environ if base is None else base).items() if not k.startswith("ACE_")}
    env["ACE_HOME"] = os.path.join(tmp, "acehome")
    env["ACE_CONFIG"] = os.path.join(tmp, "config.toml")
    env["XDG_CONFIG_HOME"] = os.path.join(tmp, "xdg-config")
    env["XDG_DATA_HOME"] = os.path.join(tmp, "xdg-data")
    env["GIT_CONFIG_NOSYSTEM"] = "1"
    env["GIT_AUTHOR_NAME"] = env["GIT_COMMITTER_NAME"] = "replay"
    env["GIT_AUTHOR_EMAIL"] = env["GIT_COMMITTER_EMAIL"] = "replay@example.invalid"
    if not keep_home:
        env["HOME"] = os.path.join(tmp, "home")
        os.makedirs(env["HOME"], exist_ok=True)
        for name in _DROPPED:
            env.pop(name, None)
    return env


def run_hook(argv: Sequence[str], event: str, payload: Mapping[str, Any], env: Mapping[str, str],
             cwd: str) -> dict[str, Any]:
    """One real hook process; its parsed answer ({} when it printed nothing)."""
    proc = subprocess.run([*argv, event], input=json.dumps(payload), capture_output=True, text=True,
                          env=dict(env), cwd=cwd, timeout=HOOK_TIMEOUT)
    if proc.returncode != 0:
        raise RuntimeError(f"{event} hook exited {proc.returncode}: {proc.stderr[-300:]}")
    out = proc.stdout.strip()
    answer = json.loads(out) if out else {}
    return answer if isinstance(answer, dict) else {}


def _run(argv: Sequence[str], cwd: str, env: Mapping[str, str], timeout: float) -> tuple[int, str]:
    try:
        proc = subprocess.run(list(argv), cwd=cwd, env=dict(env), capture_output=True, text=True, timeout=timeout)
        return proc.returncode, proc.stderr
    except subprocess.TimeoutExpired:
        return 124, f"timed out after {timeout}s"


def snapshot(ace_home: str) -> list[dict[str, Any]]:
    """Every lesson of the throwaway store, whatever its status: {id, status, content, texts}
    (texts: its content and its situations', what `outcomes.covering` reads)."""
    from ..store.sqlite import SQLiteStore

    path = os.path.join(ace_home, "ace.db")
    if not os.path.isfile(path):
        return []
    store = SQLiteStore(path)
    try:
        rows = [row for pid in [None] + [p["id"] for p in store.list_projects()]
                for row in store.list_bullets(pid, include_global=False, statuses=None, order="created")]
        texts: dict[str, list[str]] = {row["id"]: [row["content"]] for row in rows}
        for bullet_id, text in store.situation_texts(list(texts)):
            texts[bullet_id].append(text)
    finally:
        store.close()
    return [{"id": r["id"], "status": r["status"], "content": r["content"], "texts": texts[r["id"]]} for r in rows]


def _start(session: Session, k: int, hook: Sequence[str], proj: str, env: Mapping[str, str],
           prompts: Sequence[str]) -> tuple[list[str], list[str], list[str]]:
    """The hooks of the session's start: (injected texts, notices, errors)."""
    sid = f"replay-{session['id']}"  # its own id: parts of one real session are replayed as sessions
    base = {"session_id": sid, "transcript_path": session["path"], "cwd": proj, "permission_mode": "default"}
    texts: list[str] = []
    notices: list[str] = []
    try:
        ans = run_hook(hook, "SessionStart", {**base, "hook_event_name": "SessionStart", "source": "startup"},
                       env, proj)
        texts.append((ans.get("hookSpecificOutput") or {}).get("additionalContext") or "")
        if ans.get("systemMessage"):
            notices.append(str(ans["systemMessage"]))
        for p in prompts:
            ans = run_hook(hook, "UserPromptSubmit", {**base, "hook_event_name": "UserPromptSubmit", "prompt": p},
                           env, proj)
            texts.append((ans.get("hookSpecificOutput") or {}).get("additionalContext") or "")
    except (RuntimeError, subprocess.TimeoutExpired, ValueError) as exc:
        return texts, notices, [str(exc)[:300]]
    return texts, notices, []


def replay(sessions: Sequence[Session], *, ace: Sequence[str], hook: Sequence[str], offline: bool = True,
           config_text: str = "", env: Mapping[str, str] | None = None, keep_home: bool = False,
           judge: Judge | None = None, on_session: Callable[[int, int, dict[str, Any]], object] | None = None,
           on_home: Callable[[str], object] | None = None, on_done: Callable[[str], object] | None = None,
           ) -> list[dict[str, Any]]:
    """Replay `sessions` in the order given (see the module's docstring); one row per session.

    `ace`: the argv of the `ace` command; `config_text`: the throwaway config (TOML: a model's
    settings when `offline` is False); `on_home(ace_home)` is called before the first session (to
    seed its state, such as today's model spend) and `on_done(ace_home)` after the last, before the
    temporary directory is removed."""
    from ..core.fmt import estimate_tokens
    from ..observe import transcript_formats

    tmp = tempfile.mkdtemp(prefix="acereplay-")
    child = isolated_env(tmp, env, keep_home=keep_home)
    if config_text:
        with open(child["ACE_CONFIG"], "w", encoding="utf-8") as fh:
            fh.write(config_text)
    proj = os.path.join(tmp, "proj")
    os.makedirs(proj)
    how = ["--heuristic"] if offline else []
    rows: list[dict[str, Any]] = []
    earlier: list[dict[str, Any]] = []
    try:
        subprocess.run(["git", "init", "-q", "."], cwd=proj, env=child, check=True, timeout=60, capture_output=True)
        if on_home:
            on_home(child["ACE_HOME"])
        for k, s in enumerate(sessions):
            started = time.time()
            try:
                parsed = transcript_formats.parse_file(s["path"])
            except Exception as exc:  # noqa: BLE001 - an unreadable transcript is a row with its error
                parsed, read_error = {"agents": []}, [f"unreadable: {type(exc).__name__}: {str(exc)[:200]}"]
            else:
                read_error = []
            prompts = opening_prompts(parsed)
            texts, notices, errors = _start(s, k, hook, proj, child, prompts)
            lines = injected_lines("\n".join(texts))
            lessons = snapshot(child["ACE_HOME"])
            captured = replay_score.score(replay_score.failures(parsed), earlier, lines, lessons)
            row: dict[str, Any] = {"id": s["id"], "path": s["path"], "order": k, "prompts": len(prompts),
                                   "lines": [t for _, t in lines], "line_ids": [i for i, _ in lines],
                                   "notices": notices, "tokens": sum(estimate_tokens(t) for t in texts if t),
                                   "captured": captured, "errors": read_error + errors}
            if judge:
                row.update(judge(s, k, lines, lessons))
            learn_s = time.time()
            for argv in ([*ace, "learn", "--transcript", s["path"], "--project", proj, *how, "--json"],
                         [*ace, "learn", "--project", proj, *how, "--json", "--wait", "0"]):
                rc, err = _run(argv, proj, child, LEARN_TIMEOUT)
                if rc != 0:
                    row["errors"].append(f"learn rc={rc}: {err.strip()[-300:]}")
            row["learn_seconds"] = round(time.time() - learn_s, 2)
            row["seconds"] = round(time.time() - started, 2)
            rows.append(row)
            earlier.append(captured)
            if on_session:
                on_session(k + 1, len(sessions), row)
        if on_done:
            on_done(child["ACE_HOME"])
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return rows
