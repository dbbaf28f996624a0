"""The offline heuristic reflector: the lessons a careful engineer would write down after a task,
mined from the trajectory without an LLM. Each names the command, file or error it is about and
carries the steps it came from.

- error → fix: a check failed with an error, something changed (an edit, an install), and the
  next run got past that error → "When `cmd` fails with `error`: the fix was …";
- a command variant: a check failed and a different command for the same job passed with
  nothing changed in between → "Run the tests with `B`, not `A` (fails with …)";
- flaky: the same command failed, then passed with nothing changed → "`cmd` is flaky …";
- the project's working test / build / lint / type-check commands;
- repeated failures: a command failing with the same error several times (across sessions too),
  an edit tool failing on the same file again and again;
- files edited together in several sessions;
- the user's correction ("no, use X instead of Y", "don't …");
- slow steps.

No lesson restates the task, says "be careful", or names nothing concrete: the quality filter
(`quality.py`) stands behind this module, but the miners are written not to need it.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ..tools import FILE_TOOLS
from . import commands
from .corrections import correction
from .trajectory import enrich

if TYPE_CHECKING:
    from .._types import Bullet, BulletTag, Candidate, Reflection, Trajectory
    from ..config import Config

# An enriched step (`trajectory.enrich`) as the miners read it: every key present, values loosely typed.
Step = Mapping[str, Any]

_CD = re.compile(r"^cd\s+(?P<dir>\"[^\"]+\"|'[^']+'|\S+)$")
_NARROW = re.compile(r"::|\s-k\s|\s--grep\b|\s-t\s|(?:^|\s)[\w./-]+\.(?:py|ts|tsx|js|jsx|rs|go|rb|java)(?:\s|$)")
_TOOL_FAILURES = FILE_TOOLS  # an editing tool, or Read, failing on one named file
KIND_NOUN = {"test": "the tests", "build": "the build", "lint": "the linter", "typecheck": "the type checker",
             "format": "the formatter"}


def code(text: str | None, limit: int = 90) -> str:
    """`text` as an inline code span, one line, shortened."""
    one = " ".join(str(text or "").split()).replace("`", "'")
    if len(one) > limit:
        one = one[: limit - 1] + "…"
    return f"`{one}`"


def display_command(step: Step, root: str | None) -> str:
    """The command to recommend: its key, with the `cd sub/dir &&` that made it work kept."""
    full = step.get("command") or ""
    core = commands.key(full)
    first = commands.parts(full)[:1]
    m = _CD.match(first[0]) if first else None
    if m and first[0] != core:
        target = m.group("dir").strip("\"'")
        if root and target.startswith(root.rstrip("/") + "/"):
            target = target[len(root.rstrip("/")) + 1:]
        if target and not target.startswith(("/", "~", "$")) and target not in (".", "./"):
            return f"cd {target} && {core}"
    return core


class HeuristicReflector:
    name = "heuristic"

    def __init__(self, *, slow_step_seconds: float = 120.0, co_edit_sessions: int = 3):
        self.slow_ms = slow_step_seconds * 1000
        self.co_edit_sessions = co_edit_sessions

    @classmethod
    def from_config(cls, cfg: Config) -> HeuristicReflector:
        return cls(slow_step_seconds=cfg["learning.slow_step_seconds"],
                   co_edit_sessions=cfg["learning.co_edit_sessions"])

    # -- the interface ---------------------------------------------------------------------------

    def reflect(self, trajectory: Trajectory, playbook: list[Bullet]) -> Reflection:
        steps = [enrich(s, i) for i, s in enumerate(trajectory.get("trajectory") or [], 1)]
        root = (trajectory.get("project") or {}).get("root")
        candidates: list[Candidate] = []
        runs = [s for s in steps if s.get("command") and not s.get("interrupted")]
        resolved: set[int] = set()
        candidates += self._check_sequences(steps, runs, root, resolved)
        candidates += self._working_commands(runs, root)
        candidates += self._repeated_failures(steps, runs, root, resolved, trajectory.get("history") or {})
        candidates += self._co_edits(trajectory)
        candidates += self._correction(trajectory)
        candidates += self._slow_steps(runs, root)
        # One lesson per content; the first (most specific miner) wins.
        seen: set[str] = set()
        unique: list[Candidate] = []
        for cand in candidates:
            key = cand["content"].lower()
            if key not in seen:
                seen.add(key)
                unique.append(cand)
        return {"candidates": unique, "tags": self._tags(steps, playbook)}

    # -- miners ----------------------------------------------------------------------------------

    def _check_sequences(self, steps: Sequence[Step], runs: Sequence[Step], root: str | None, resolved: set[int]
                         ) -> list[Candidate]:
        """Error → fix, command variants and flaky commands, from consecutive runs of a check."""
        out: list[Candidate] = []
        for i, fail in enumerate(runs):
            if fail["success"] or fail.get("kind") == "readonly":
                continue
            sig = fail.get("error")
            nxt = next((r for r in runs[i + 1:] if commands.same_check(fail["command"], r["command"])), None)
            if nxt is None and fail.get("kind") in commands.CHECK_KINDS:
                # A different tool for the same job (pnpm → npm): only when nothing changed between.
                nxt = next((r for r in runs[i + 1:] if r.get("kind") == fail["kind"] and r["success"]), None)
            if nxt is None:
                continue
            between = [s for s in steps if fail["step"] < s["step"] < nxt["step"]]
            fixes = [s for s in between if s.get("kind") == "edit" and s["success"]] + \
                    [s for s in between if s.get("command") and s["success"] and s.get("kind") not in ("readonly",)
                     and not commands.same_check(s["command"], fail["command"])]
            fixes.sort(key=lambda s: s["step"])
            got_past = nxt["success"] or (nxt.get("error") and sig and nxt["error"] != sig)
            if not got_past:
                continue
            cmd = display_command(fail, root)
            if fixes and sig:
                resolved.add(fail["step"])
                out.append(self._error_fix(fail, nxt, fixes, cmd, sig))
            elif not fixes and nxt["success"] and commands.key(nxt["command"]) != commands.key(fail["command"]):
                resolved.add(fail["step"])
                better = display_command(nxt, root)
                what = KIND_NOUN.get(fail.get("kind") or "", "it")
                reason = f" (that fails with {code(sig, 110)})" if sig else ""
                verb = f"Run {what} with" if what != "it" else "Use"
                out.append({
                    "content": f"{verb} {code(better)}, not {code(cmd)}{reason}.",
                    "section": "strategies_and_hard_rules", "kind": "command_variant", "confidence": 0.75,
                    "evidence": f"step {fail['step']}: {fail['action']} → {fail['result']}; step {nxt['step']}: "
                                f"{nxt['action']} → {nxt['result']}",
                    "source_steps": [fail["step"], nxt["step"]],
                })
            elif not fixes and nxt["success"] and not [s for s in between
                                                       if s.get("command") and s.get("kind") != "readonly"]:
                resolved.add(fail["step"])
                if sig:
                    out.append({
                        "content": f"{code(cmd)} is flaky: it failed with {code(sig, 110)} and passed when re-run "
                                   f"with nothing changed; re-run it once before debugging that error.",
                        "section": "troubleshooting_and_pitfalls", "kind": "flaky", "confidence": 0.6,
                        "evidence": f"step {fail['step']} failed, step {nxt['step']} passed, no change between",
                        "source_steps": [fail["step"], nxt["step"]],
                    })
        return out

    def _error_fix(self, fail: Step, nxt: Step, fixes: Sequence[Step], cmd: str, sig: str) -> Candidate:
        edits = [s for s in fixes if s.get("kind") == "edit"]
        others = [s for s in fixes if s.get("kind") != "edit"]
        parts = []
        files = list(dict.fromkeys(f for s in edits for f in s.get("files") or []))
        if edits:
            change = next((s.get("change") for s in edits
                           if s.get("change") and (s["change"].get("old") or s["change"].get("new"))), None)
            where = ", ".join(files[:3]) + (f" and {len(files) - 3} more" if len(files) > 3 else "")
            if change and len(files) == 1:
                more = f" (+{len(edits) - 1} more edit{'s' if len(edits) > 2 else ''})" if len(edits) > 1 else ""
                if change.get("old") and not change.get("new"):
                    parts.append(f"in {where}, removed {code(change['old'], 90)}{more}")
                elif change.get("old"):
                    parts.append(f"in {where}, {code(change['old'], 70)} → {code(change.get('new'), 90)}{more}")
                else:
                    parts.append(f"in {where}, added {code(change.get('new'), 90)}{more}")
            elif any(s["tool"] == "Write" for s in edits) and len(files) == 1:
                parts.append(f"writing {where}")
            else:
                parts.append(f"editing {where}")
        for step in others[:2]:
            parts.append(f"running {code(display_command(step, None), 70)}")
        outcome = "passed" if nxt["success"] else f"got past it (next error: {code(nxt.get('error'), 60)})"
        content = f"When {code(cmd)} fails with {code(sig, 140)}: the fix was " + "; ".join(parts) + "."
        return {
            "content": content, "section": "troubleshooting_and_pitfalls", "kind": "error_fix",
            "confidence": 0.8 if nxt["success"] else 0.65, "files": files,
            "evidence": f"step {fail['step']}: {fail['action']} → {fail['result']}; "
                        + "; ".join(f"step {s['step']}: {s['action']}" for s in fixes[:4])
                        + f"; step {nxt['step']}: {nxt['action']} {outcome} ({nxt['result']})",
            "source_steps": [fail["step"]] + [s["step"] for s in fixes] + [nxt["step"]],
        }

    def _working_commands(self, runs: Sequence[Step], root: str | None) -> list[Candidate]:
        """The project's test / build / lint / type-check commands that passed in this task."""
        out: list[Candidate] = []
        seen: set[str] = set()
        for step in reversed(runs):
            kind = step.get("kind")
            if kind not in ("test", "build", "lint", "typecheck") or not step["success"] or kind in seen:
                continue
            cmd = display_command(step, root)
            if _NARROW.search(" " + cmd + " "):
                continue  # one test file or test id: not "the project's command"
            seen.add(kind)
            out.append({
                "content": f"Run {KIND_NOUN[kind]} with {code(cmd)} (verified in this project).",
                "section": "strategies_and_hard_rules", "kind": "working_command", "confidence": 0.7,
                "evidence": f"step {step['step']}: {step['action']} → {step['result']}",
                "source_steps": [step["step"]],
            })
        return out

    def _repeated_failures(self, steps: Sequence[Step], runs: Sequence[Step], root: str | None, resolved: set[int],
                           history: Mapping[str, Any]) -> list[Candidate]:
        out: list[Candidate] = []
        by_cmd: dict[str, list[Step]] = {}
        for step in runs:
            by_cmd.setdefault(commands.key(step["command"]), []).append(step)
        past = history.get("commands") or {}
        for key, group in by_cmd.items():
            if any(s["success"] for s in group) or any(s["step"] in resolved for s in group):
                continue
            sigs = [s.get("error") for s in group if s.get("error")]
            if not sigs or group[0].get("kind") == "readonly":
                continue
            sig = max(set(sigs), key=sigs.count)
            stats = past.get(key) or {}
            sessions = int(stats.get("sessions_failed") or 0) + 1
            if sigs.count(sig) < 3 and sessions < 3:
                continue
            where = f"in {sessions} sessions" if sessions >= 3 else f"{sigs.count(sig)} times in one task"
            out.append({
                "content": f"{code(display_command(group[0], root))} keeps failing with {code(sig, 140)} ({where}, "
                           "never fixed yet): check that error before assuming your change broke it.",
                "section": "troubleshooting_and_pitfalls", "kind": "repeated_failure", "confidence": 0.55,
                "evidence": "; ".join(f"step {s['step']}: {s['result']}" for s in group[:4])
                            + (f"; failed in {sessions - 1} earlier sessions" if sessions > 1 else ""),
                "source_steps": [s["step"] for s in group],
            })
        # An editing tool failing on the same file with the same error.
        tool_fails: dict[tuple[str, str, str], list[Step]] = {}
        for step in steps:
            if step["tool"] in _TOOL_FAILURES and not step["success"] and step.get("files") and step.get("error"):
                tool_fails.setdefault((step["tool"], step["files"][0], step["error"]), []).append(step)
        for (tool, path, sig), group in tool_fails.items():
            if len(group) < 2:
                continue
            advice = " read it again right before editing" if tool in ("Edit", "MultiEdit") else ""
            out.append({
                "content": f"{tool} on {code(path)} failed {len(group)} times with "
                           f"{code(sig, 100)}:{advice or ' check the path and content'}"
                           + ("." if advice else "."),
                "section": "troubleshooting_and_pitfalls", "kind": "tool_failure", "confidence": 0.55, "files": [path],
                "evidence": "; ".join(f"step {s['step']}: {s['action']} → {s['result']}" for s in group[:4]),
                "source_steps": [s["step"] for s in group],
            })
        return out

    def _co_edits(self, trajectory: Trajectory) -> list[Candidate]:
        out: list[Candidate] = []
        for pair in (trajectory.get("history") or {}).get("co_edits") or []:
            together = int(pair.get("sessions") or 0) + 1  # + this one
            if together < self.co_edit_sessions:
                continue
            a, b = pair["a"], pair["b"]
            out.append({
                "content": f"{code(a)} and {code(b)} are usually changed together: when you edit one, check the other.",
                "section": "strategies_and_hard_rules", "kind": "co_edit", "confidence": 0.6, "files": [a, b],
                "evidence": f"edited together in {together} sessions (this one included)",
                "source_steps": [s["step"] for s in trajectory.get("trajectory") or []
                                 if s.get("kind") == "edit" and set(s.get("files") or ()) & {a, b}][:10],
            })
        return out

    def _correction(self, trajectory: Trajectory) -> list[Candidate]:
        prompts = trajectory.get("prompts") or ([trajectory["task"]] if trajectory.get("task") else [])
        for prompt in prompts:
            rule = correction(prompt)
            if not rule:
                continue
            previous = trajectory.get("previous") or {}
            before = previous.get("commands") or []
            return [{
                "content": f"{rule} (the user's correction).",
                "section": "strategies_and_hard_rules", "kind": "user_correction", "confidence": 0.85,
                "evidence": f"user prompt: {prompt[:200]}"
                            + (f"; previous task: {str(previous.get('task'))[:120]}" if previous.get("task") else "")
                            + (f"; its last commands: {', '.join(before[-3:])}" if before else ""),
                "source_steps": [],
            }]
        return []

    def _slow_steps(self, runs: Sequence[Step], root: str | None) -> list[Candidate]:
        out: list[Candidate] = []
        seen: set[str] = set()
        for step in runs:
            ms = step.get("duration_ms") or 0
            if ms < self.slow_ms or not step["success"] or step.get("kind") == "readonly":
                continue
            cmd = display_command(step, root)
            if cmd in seen:
                continue
            seen.add(cmd)
            minutes = ms / 60000
            bucket = next(b for b in (30, 10, 5, 2, 1) if minutes >= b or b == 1)
            narrower = " (a single test file or target)" if step.get("kind") in ("test", "build") else ""
            out.append({
                "content": f"{code(cmd)} takes over {bucket} minute{'s' if bucket > 1 else ''} here: run it once at "
                           f"the end and something narrower{narrower} while iterating.",
                "section": "strategies_and_hard_rules", "kind": "slow_step", "confidence": 0.55,
                "evidence": f"step {step['step']}: {step['action']} took {ms / 1000:.0f} s",
                "source_steps": [step["step"]],
            })
        return out

    # -- tags ------------------------------------------------------------------------------------

    def _tags(self, steps: Sequence[Step], playbook: list[Bullet]) -> list[BulletTag]:
        """A used bullet that names a command this task ran: helpful when the command worked,
        harmful when it failed and never passed."""
        tags: list[BulletTag] = []
        runs = [s for s in steps if s.get("command")]
        for bullet in playbook or []:
            spans = re.findall(r"`([^`\n]{3,})`", bullet.get("content") or "")
            named = [s for s in spans if commands.kind(s) != "readonly" or s.split()[0] in ("git",)]
            if not named:
                continue
            matched = [r for r in runs for cmd in named if commands.key(cmd) == commands.key(r["command"])]
            if not matched:
                continue
            if any(r["success"] for r in matched):
                ok = next(r for r in matched if r["success"])
                tags.append({"bullet_id": bullet["id"], "tag": "helpful",
                             "reason": f"its command {code(ok['command'], 60)} worked (step {ok['step']})"})
            else:
                bad = matched[-1]
                tags.append({"bullet_id": bullet["id"], "tag": "harmful",
                             "reason": f"its command {code(bad['command'], 60)} failed: {bad['result'][:100]} (step "
                                       f"{bad['step']})"})
        return tags
