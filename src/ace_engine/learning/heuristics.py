"""The offline heuristic reflector: the lessons a careful engineer would write down after a task,
mined from the trajectory without an LLM. Each names the command, file or error it is about and
carries the steps it came from.

- from failures (`failure_lessons`): a fix proven by a passing re-run, stated as its cause (the
  real change, the command that must run first, the configuration a check needs, the rule a
  linter enforces); facts of the environment (a missing tool or script, a shell restriction, a
  path git ignores); the checks `git commit` runs;
- the project's working test / build / lint / type-check commands (project-wide forms only);
- repeated failures: a command failing with the same error several times (across sessions too);
- files edited together in several sessions;
- the user's correction ("no, use X instead of Y", "don't …");
- slow steps, only when several runs agree.

Confidence carries the strength of the evidence, and the curator acts on it: lessons at 0.8 and
above are injected at once; weaker ones (a project's obvious test command, a retry that passed,
a mistake in code the task had just written) stay candidates until another session sees them
again. No lesson restates the task, says "be careful", or names nothing concrete.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ..observe import check_tools, commands, corrections
from ..observe.corrections import refusal_rule
from ..observe.trajectory import enrich
from . import command_diff, edits, failure_lessons, quality
from .failure_lessons import display_command
from .lesson_wording import code, cut, local, sentence

if TYPE_CHECKING:
    from ..core._types import Bullet, BulletTag, Candidate, Reflection, Trajectory
    from ..core.config import Config

# An enriched step (`trajectory.enrich`) as the miners read it: every key present, values loosely typed.
Step = Mapping[str, Any]

KIND_NOUN = {"test": "the tests", "build": "the build", "lint": "the linter", "typecheck": "the type checker",
             "format": "the formatter"}
# Task names every session tries first: a runner task called this is the obvious command.
_OBVIOUS_TASKS = frozenset({"", "test", "tests", "build", "lint", "check", "typecheck", "type-check", "format", "fmt",
                            "compile", "all", "ci", "verify"})
_BACKGROUND = re.compile(r"(?<![&|>])&\s*$")
# `cmd || true`: exits 0 whatever `cmd` did.
_MASKED = re.compile(r"\|\|\s*(?:true|:|echo|printf|exit 0)\b")
SLOW_RUNS = 3  # a command is "slow here" only when this many runs agree
# An import line, in the common languages (Go's import block lists bare quoted paths).
_IMPORT = re.compile(r"^\s*(?:import\b|from \S+ import\b|use \S|require\b|#include\b|using \S|\"[\w./-]+\"$|alias \S)")
# Code generators: a step the project's workflow needs after certain edits (`dart run build_runner
# build`, `go generate`, `prisma generate`, …), which the next session will forget.
_GENERATOR = re.compile(
    r"\bbuild_runner\b|\bgo generate\b|\bprotoc\b|\bbuf generate\b|\bprisma generate\b|\bsqlc generate\b|"
    r"\bgraphql-codegen\b|\bopenapi-generator\b|\bflutter gen-l10n\b|\bswag init\b|\bmockgen\b|\bent generate\b|"
    r"\b(?:npm|pnpm|yarn|bun)(?: run)? (?:codegen|generate|gen)\b|\bmake (?:generate|gen|codegen)\b")
# What edited files say they expect from a generator: `part 'x.freezed.dart';`, `x_pb2`, `*.pb.go`.
_GENERATED_REF = re.compile(r"[\w/.-]+\.(?:freezed|g|gr|pb|pb\.gw|mocks?|generated)\.(?:dart|go|ts|js)\b|"
                            r"[\w/.-]+_pb2(?:_grpc)?\b|[\w/.-]+\.generated\.\w+\b")


def _prepared(step: Mapping[str, Any], number: int) -> dict[str, Any]:
    """An enriched step with its edit's real change (`edits.change`) under `_change`."""
    out: dict[str, Any] = dict(enrich(step, number))
    if not out.get("success") and not out.get("output"):  # a payload step: its result line is all there is
        out["output"] = str(out.get("result") or "").removeprefix("failed: ")
    if out.get("command") and _BACKGROUND.search(out["command"]):
        out["background"] = True  # `cmd &`: the shell's exit says nothing about the command's
    if not out.get("success") and out.get("command"):  # a chain fails in one part: judge that part
        part = command_diff.failing_part(out["command"], str(out.get("output") or ""))
        if part != out["command"]:
            out["chain"], out["command"], out["kind"] = out["command"], part, commands.kind(part)
    if out.get("kind") == "edit" and out.get("success"):
        files = out.get("files") or [""]
        data = out.get("written")
        named = out.get("change")
        if data is None and isinstance(named, Mapping):  # a payload step: the lines it names
            data = {"old_string": named.get("old") or "", "new_string": named.get("new") or ""}
        if data is not None:
            out["_change"] = edits.change("Edit" if out["tool"] not in ("Write", "MultiEdit") else out["tool"],
                                          data, files[0])
    return out


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
        steps = [_prepared(s, i) for i, s in enumerate(trajectory.get("trajectory") or [], 1)]
        root = trajectory.get("cwd") or (trajectory.get("project") or {}).get("root")
        command_diff.track_cwd(steps, root)
        candidates: list[Candidate] = []
        runs = [s for s in steps if s.get("command") and not s.get("interrupted")]
        carried = [_prepared(s, s["step"]) for s in trajectory.get("carried") or []]
        candidates += failure_lessons.lessons(carried + steps, root)
        candidates += self._generators(steps, runs, root)
        candidates += self._working_commands(runs, root)
        candidates += self._repeated_failures(runs, root, trajectory.get("history") or {}, candidates)
        candidates += self._co_edits(trajectory)
        candidates += self._correction(trajectory, steps, root)
        candidates += self._refusals(steps, root, trajectory)
        candidates += self._slow_steps(runs, root)
        # One lesson per content; the first (most specific miner) wins.
        seen: set[str] = set()
        unique: list[Candidate] = []
        for cand in candidates:
            key = re.sub(r"\d+", "0", cand["content"].lower())  # `has 3 occurrences` / `has 4 occurrences`: one
            if key not in seen:
                seen.add(key)
                unique.append(cand)
        return {"candidates": unique, "tags": self._tags(steps, playbook)}

    # -- miners ----------------------------------------------------------------------------------

    def _generators(self, steps: Sequence[Step], runs: Sequence[Step], root: str | None) -> list[Candidate]:
        """A code generator run after edits, then a check that passed: "after editing …, run the
        generator before the check" — with the generated files the edits referred to."""
        out: list[Candidate] = []
        for gen in runs:
            if not gen["success"] or not _GENERATOR.search(gen["command"]):
                continue
            edited = [s for s in steps if s["step"] < gen["step"] and s.get("kind") == "edit" and s["success"]]
            checked = next((r for r in runs if r["step"] > gen["step"] and r["success"]
                            and r.get("kind") in commands.CHECK_KINDS + ("other",) and r is not gen
                            and not _GENERATOR.search(r["command"]) and r.get("kind") != "vcs"), None)
            if not edited or checked is None:
                continue
            refs = list(dict.fromkeys(m.rsplit("/", 1)[-1] for s in edited
                                      for m in _GENERATED_REF.findall(str(s.get("written") or ""))))
            what = f" (it generates {', '.join(code(r, 40) for r in refs[:2])})" if refs else ""
            check = commands.general(checked["command"])
            out.append({
                "content": f"After editing the files it reads, run {code(display_command(gen, root))}{what} before "
                           f"{code(local(check, root), 60)}.",
                "section": "strategies_and_hard_rules", "kind": "generator", "confidence": 0.8,
                "evidence": f"steps {edited[0]['step']}–{edited[-1]['step']}: edits; step {gen['step']}: "
                            f"{gen['action'][:100]}; step {checked['step']}: {checked['action'][:80]} → "
                            f"{checked['result'][:60]}",
                "source_steps": [s["step"] for s in edited[-3:]] + [gen["step"], checked["step"]],
            })
            break
        return out

    def _working_commands(self, runs: Sequence[Step], root: str | None) -> list[Candidate]:
        """The project's own way to run a check, where it is not the ecosystem's obvious command:
        a task of the project's runner with a name of its own (`mise run test:ci`, `bun run
        test:env`, `make check-all`), or a launcher or option that sets up what the tool needs
        (`uv run pytest`, `go test -tags=integration ./...`: `check_tools.telling_form`), which the
        next session would not guess. One per kind, a
        candidate until another session confirms it. Never from a run that failed, was masked
        (`|| true`), ran in the background, or narrowed to one file or test."""
        out: list[Candidate] = []
        seen: set[str] = set()
        for step in reversed(runs):
            kind = step.get("kind")
            if kind not in ("test", "build", "lint", "typecheck") or not step["success"] or kind in seen \
                    or step.get("background") or _MASKED.search(step["command"]):
                continue
            cmd = display_command(step, root)
            if commands.general(step["command"]) != commands.key(step["command"]) or "|" in cmd or len(cmd) > 80:
                continue  # one test file, a test id, a filtered output: not "the project's command"
            task = check_tools.runner_task(check_tools.strip_launchers(commands.key(step["command"])).split())
            named = task is not None and task.lower().lstrip(":") not in _OBVIOUS_TASKS
            if not named and not check_tools.telling_form(commands.key(step["command"])):
                continue  # `npm test`, `mix test`, `make`, `pytest -q`: the next session tries those anyway
            seen.add(kind)
            out.append({
                "content": f"Run {KIND_NOUN[kind]} here with {code(cmd)}.",
                "section": "strategies_and_hard_rules", "kind": "working_command", "confidence": 0.6,
                "evidence": f"step {step['step']}: {step['action']} → {step['result']}",
                "source_steps": [step["step"]],
            })
        return out

    def _repeated_failures(self, runs: Sequence[Step], root: str | None, history: Mapping[str, Any],
                           found: Sequence[Candidate]) -> list[Candidate]:
        """A command failing with the same error again and again, never fixed (in several sessions:
        strong; in one task: a candidate)."""
        out: list[Candidate] = []
        covered = {n for c in found for n in c.get("source_steps") or []}
        by_cmd: dict[str, list[Step]] = {}
        for step in runs:
            by_cmd.setdefault(commands.key(step["command"]), []).append(step)
        past = history.get("commands") or {}
        for key, group in by_cmd.items():
            if any(s["success"] or s["step"] in covered for s in group) or group[0].get("kind") == "readonly":
                continue
            sigs = [str(s["error"]) for s in group if s.get("error") and s.get("failure", "failed") == "failed"]
            if not sigs:
                continue
            sig = max(set(sigs), key=sigs.count)
            stats = past.get(key) or {}
            # Earlier sessions count only while the command never passed: one that failed and was then
            # fixed each time is not "failing in N sessions, never fixed" (its fix lesson says the rest).
            sessions = 1 if stats.get("last_ok_at") else int(stats.get("sessions_failed") or 0) + 1
            if sigs.count(sig) < 3 and sessions < 3:
                continue
            where = f"in {sessions} sessions" if sessions >= 3 else f"{sigs.count(sig)} times in one task"
            out.append({
                "content": f"{code(display_command(group[0], root))} keeps failing with {code(local(sig, root), 140)} "
                           f"({where}, never fixed yet): check that error before assuming your change broke it.",
                "section": "troubleshooting_and_pitfalls", "kind": "repeated_failure",
                "confidence": 0.8 if sessions >= 3 else 0.5,
                "evidence": "; ".join(f"step {s['step']}: {s['result']}" for s in group[:4])
                            + (f"; failed in {sessions - 1} earlier sessions" if sessions > 1 else ""),
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

    def _correction(self, trajectory: Trajectory, steps: Sequence[Step], root: str | None) -> list[Candidate]:
        # The user's own prompts only (`corrections.stated`): not a continuation's looked-up task, not a
        # subagent's prompt, not a teammate's message.
        out: list[Candidate] = []
        for prompt, rule in corrections.stated(trajectory)[:2]:
            previous = trajectory.get("previous") or {}
            before = previous.get("commands") or []
            content = f"{rule} (the user's correction)."
            # A policy that names nothing ("we are prerelease, we only do patch") is about what the turn
            # then changed (`minor` → `patch` in a changeset): that change says where the rule applies. A
            # vague one-off ("the expected value should be 3") is the task's, not a rule: not a lesson.
            if quality.check(content, None):
                edit = next((s for s in steps if s.get("kind") == "edit" and s.get("success") and s.get("_change")
                             and s.get("files")), None) if corrections.policy(prompt) else None
                if edit is None:
                    continue  # nothing says where it applies: the curator would refuse it as vague
                where = code(local(edit["files"][0], root), 60)
                content = sentence(f"{cut(rule, 120)} (the user's correction; the change that followed in {where}: "
                                   f"{edits.describe(edit['_change'], 90)}).", 260)
            out.append({
                "content": content,
                "section": "strategies_and_hard_rules", "kind": "user_correction", "confidence": 0.85,
                "evidence": f"user prompt: {prompt[:200]}"
                            + (f"; previous task: {str(previous.get('task'))[:120]}" if previous.get("task") else "")
                            + (f"; its last commands: {', '.join(before[-3:])}" if before else ""),
                "source_steps": [],
            })
        return out

    def _refusals(self, steps: Sequence[Step], root: str | None, trajectory: Trajectory) -> list[Candidate]:
        """The rule a user stated when they stopped a tool call ("don't run the integration tests,
        too slow" on `mise run test:ci`): their words, what they stopped, and for an edit the change
        kept instead (the next edit of that file), which is what the next session should write."""
        if trajectory.get("agent_id"):
            return []  # a subagent's refusals come from its parent agent, not the user
        out: list[Candidate] = []
        for step in steps:
            # The user's words only where Claude Code wrote the refusal (`said`: observe/corrections.py
            # `typed_refusal`): a script's output or an MCP tool's error that prints the phrase is not.
            if step.get("failure") != "refused" or step.get("exit_code") is not None:
                continue
            rule = refusal_rule(step.get("said"))
            if not rule:
                continue
            files = step.get("files") or []
            if step.get("command"):
                what = code(display_command(step, root), 60)
            elif files and step.get("kind") == "edit":
                what = f"an edit of {code(local(files[0], root).rsplit('/', 1)[-1], 50)}"
            else:
                what = str(step.get("tool") or "a tool call")
            # The change kept instead: the next edits of that file, before the user speaks again —
            # the first that is more than an import (the import serves the change after it).
            later = [s for s in steps if step["step"] < s["step"] <= step["step"] + 8 and s.get("kind") == "edit"
                     and s.get("success") and files and (s.get("files") or [""])[0] == files[0] and s.get("_change")]
            kept = next((s for s in later if not all(_IMPORT.match(line) for line in s["_change"]["added"] or [""])),
                        later[0] if later else None)
            instead = f"; kept instead: {edits.describe(kept['_change'], 100, new_only=True)}" if kept else ""
            out.append({
                "content": sentence(f"{cut(rule, 130)} (the user, stopping {what}{instead}).", 240),
                "section": "strategies_and_hard_rules", "kind": "user_correction", "confidence": 0.8,
                "evidence": f"step {step['step']}: {str(step.get('action') or '')[:100]} stopped by the user"
                            + (f"; step {kept['step']}: {str(kept.get('action') or '')[:80]}" if kept else ""),
                "source_steps": [step["step"]] + ([kept["step"]] if kept else []),
            })
        return out[:3]

    def _slow_steps(self, runs: Sequence[Step], root: str | None) -> list[Candidate]:
        """A command that took over `slow_step_seconds` on every one of at least `SLOW_RUNS` runs:
        one slow run is noise (a cold cache, a busy machine, a hook waiting on the network)."""
        out: list[Candidate] = []
        by_cmd: dict[str, list[Step]] = {}
        for step in runs:
            if step["success"] and step.get("kind") not in ("readonly", "vcs"):
                by_cmd.setdefault(commands.key(step["command"]), []).append(step)
        for group in by_cmd.values():
            times = sorted(s.get("duration_ms") or 0 for s in group)
            if len(times) < SLOW_RUNS or times[0] < self.slow_ms:
                continue
            cmd = display_command(group[0], root)
            narrower = " (a single test file or target)" if group[0].get("kind") in ("test", "build") else ""
            out.append({
                "content": f"{code(cmd)} is slow here (every one of {len(times)} runs): run it once at the end and "
                           f"something narrower{narrower} while iterating.",
                "section": "strategies_and_hard_rules", "kind": "slow_step", "confidence": 0.6,
                "evidence": "; ".join(f"step {s['step']}: {(s.get('duration_ms') or 0) / 1000:.0f} s"
                                      for s in group[:5]),
                "source_steps": [s["step"] for s in group],
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
