"""Which agent wrote a session file, told from its content (never its name), and the one parse
for all of them: each agent's readers are the `observe` modules its row names (`Agent.readers`:
Claude Code's `transcript`, Codex CLI's `codex_rollout`, Gemini CLI's `gemini_chat`), each with
`looks_like(record)`, `parse_file(path, cfg)` and `HINT`. And where each agent keeps them, for
`ace learn --all-transcripts`.

Contract: `detect(path)` reads at most the first `SNIFF_LINES` lines (a pretty-printed document:
the file) and answers the agent whose reader recognises a record (`codex`, `gemini`), else
`claude`: anything else is left to the Claude Code reader, whose errors name what to give.
`parse_file` returns `transcript.parse_file`'s shape with `agent` set. `find_codex` / `find_gemini`
list a project's files like `transcript_learn.find_transcripts` does Claude Code's: a file belongs
to the project when the directory it records (Gemini: its project folder's `.project_root`, else the
sha256 of the project's root, which is what Gemini records) is the project or under it.

Cost: detection reads a few lines; discovery reads the first lines of each file (Codex: the
`session_meta` line) and hashes each root once.
"""

from __future__ import annotations

import glob
import hashlib
import importlib
import json
import os
import stat
from collections.abc import Callable, Iterable
from types import ModuleType
from typing import TYPE_CHECKING, Any

from ..agents import registry
from . import transcript
from .session_files import regular_file, whole_document

if TYPE_CHECKING:
    from ..core.config import Config

SNIFF_LINES = 20


def readers() -> list[tuple[str, ModuleType]]:
    """(agent, reader module) for every agent but the default, whose reader is the last resort."""
    return [(agent.name, importlib.import_module(f"{__package__}.{module}"))
            for agent in registry.agents() if agent.name != registry.DEFAULT for module in agent.readers]


def _others() -> str:
    """What else is read, for the last resort's error: each reader's `NAMED`, "a Codex CLI rollout (…)
    or a Gemini CLI chat (…)"."""
    return " or ".join(module.NAMED for _agent, module in readers())


def detect(path: str) -> str:
    """`codex`, `gemini` or `claude` (also the answer for what is none of them)."""
    try:
        if not stat.S_ISREG(os.stat(path).st_mode):
            return "claude"  # a FIFO would block the read: its reader refuses it, saying why
        with open(path, encoding="utf-8", errors="replace") as fh:
            lines = [fh.readline(1 << 20) for _ in range(SNIFF_LINES)]
    except OSError:
        return "claude"  # its reader says why the file cannot be read
    records: list[dict[str, Any]] = []
    for raw in (line for line in lines if line.strip()):
        try:
            value = json.loads(raw)
        except (ValueError, RecursionError):
            continue
        if isinstance(value, dict):
            records.append(value)
    if not records and lines and lines[0].lstrip()[:1] in ("{", "["):
        whole = whole_document(path)
        records = [whole] if whole is not None else []
    for agent, module in readers():
        if any(module.looks_like(r) for r in records):
            return agent
    return registry.DEFAULT


def parse_file(path: str, cfg: Config | None = None, *, siblings: Iterable[str] = ()) -> dict[str, Any]:
    """The file parsed by its agent's reader; `agent` says which."""
    agent = detect(path)
    for name, module in readers():
        if name == agent:
            return module.parse_file(path, cfg)
    try:
        parsed = transcript.parse_file(path, cfg, siblings=siblings)
    except transcript.TranscriptError as exc:  # none of them: say what else is read
        raise transcript.TranscriptError(f"{exc}, {_others()}") from None
    parsed["agent"] = registry.DEFAULT
    return parsed


# -- where they are -------------------------------------------------------------------------------------

def codex_sessions_dir() -> str:
    """`$CODEX_HOME/sessions`, else `~/.codex/sessions`."""
    return os.path.join(os.environ.get("CODEX_HOME") or os.path.expanduser(os.path.join("~", ".codex")), "sessions")


def gemini_tmp_dir() -> str:
    """`$GEMINI_CLI_HOME/.gemini/tmp`, else `~/.gemini/tmp` (Gemini's `Storage.getGlobalTempDir`)."""
    home = os.environ.get("GEMINI_CLI_HOME") or os.path.expanduser("~")
    return os.path.join(home, ".gemini", "tmp")


def _codex_head(path: str) -> dict[str, Any]:
    """The `session_meta` payload of a rollout (in its first lines), else {}."""
    if not regular_file(path):
        return {}
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            for _, raw in zip(range(SNIFF_LINES), fh, strict=False):
                try:
                    record = json.loads(raw)
                except (ValueError, RecursionError):
                    continue
                if isinstance(record, dict) and record.get("type") == "session_meta" \
                        and isinstance(record.get("payload"), dict):
                    return record["payload"]
    except OSError:
        pass
    return {}


def find_codex(belongs: Callable[[str | None], bool], base: str | None = None) -> list[dict[str, Any]]:
    """The rollouts under `base` (default `codex_sessions_dir()`) whose session ran in the project:
    [{path, session_id, cwd, siblings: [], agent}]."""
    found: list[dict[str, Any]] = []
    for path in sorted(glob.glob(os.path.join(glob.escape(base or codex_sessions_dir()), "*", "*", "*",
                                              "rollout-*.jsonl"))):
        meta = _codex_head(path)
        cwd = meta.get("cwd") if isinstance(meta.get("cwd"), str) else None
        if belongs(cwd):
            found.append({"path": path, "session_id": meta.get("id"), "cwd": cwd, "siblings": [], "agent": "codex"})
    return found


def _sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def find_gemini(belongs: Callable[[str | None], bool], roots: Iterable[str],
                base: str | None = None) -> list[dict[str, Any]]:
    """The chats and saved checkpoints under `base` (default `gemini_tmp_dir()`) of the project:
    its folders whose `.project_root` belongs to it, or, without that marker, whose files record
    the sha256 of one of `roots` (the project's root and main root)."""
    hashes = {_sha256(r) for r in roots} | {_sha256(r.rstrip("/")) for r in roots}
    found: list[dict[str, Any]] = []
    for folder in sorted(glob.glob(os.path.join(glob.escape(base or gemini_tmp_dir()), "*", ""))):
        marker = os.path.join(folder, ".project_root")
        try:
            if not regular_file(marker):
                raise OSError(marker)
            with open(marker, encoding="utf-8") as fh:
                root: str | None = fh.read(4096).strip() or None
        except OSError:
            root = None
        if root is not None and not belongs(root):
            continue
        if root is None and os.path.basename(os.path.normpath(folder)) not in hashes:
            if not _records_hash(folder, hashes):
                continue
        files = sorted(glob.glob(os.path.join(glob.escape(folder), "chats", "session-*.json*")))
        files += sorted(glob.glob(os.path.join(glob.escape(folder), "chats", "*", "*.jsonl")))
        files += sorted(glob.glob(os.path.join(glob.escape(folder), "checkpoint-*.json")))
        found += [{"path": f, "session_id": None, "cwd": root, "siblings": [], "agent": "gemini"} for f in files
                  if f.endswith((".json", ".jsonl"))]
    return found


def _records_hash(folder: str, hashes: set[str]) -> bool:
    """Does a chat of this project folder record one of `hashes` as its `projectHash`?"""
    for path in sorted(glob.glob(os.path.join(glob.escape(folder), "chats", "session-*.json*")))[:3]:
        head = whole_document(path) if path.endswith(".json") else None
        if head is None and regular_file(path):
            try:
                with open(path, encoding="utf-8", errors="replace") as fh:
                    head = json.loads(fh.readline(1 << 20))
            except (OSError, ValueError, RecursionError):
                continue
        if isinstance(head, dict) and head.get("projectHash") in hashes:
            return True
    return False
