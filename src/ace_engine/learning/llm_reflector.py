"""The LLM reflector: a language model reads the trajectory and writes the root-cause lessons.

It implements the Reflector interface of `reflector.py`. The model gets the versioned prompt of
`llm_prompt.py`: a size-bounded, redacted rendering of the trajectory, the offline reflector's
candidates as hints to confirm, rewrite or reject (each with its id and step numbers), and the
bullets that were shown to the agent. It must answer one JSON object: reasoning, error
identification, root cause, a verdict per hint, at most `MAX_LESSONS` lessons each citing the
step numbers that show it, and a helpful / harmful / neutral tag per shown bullet. The reply is
checked against `SCHEMA` (one retry with a nudge, in `llm.base.Provider.complete_json`) — the
structure only; `clean_reflection` then drops, without a second call, a lesson in an unknown
section, one that cites no step or a step the prompt did not show (an invented id means the
lesson is not grounded), one that names the session's branch, a scratch file the session wrote
and deleted, or a temporary / home-directory path, and a tag for a bullet that was not shown.

Provenance: the reflector's name is `llm:<provider>@<PROMPT_VERSION>`; the pipeline records it
as the `reflector` of the learning run and of every lesson it creates, so each lesson says
which prompt wrote it. The reflection's `analysis` carries the version, the hint verdicts and
why lessons were dropped.

Any failure — budget, timeout, transport, invalid JSON after the retry — raises `ReflectorError`
and the job falls back to the heuristic reflector. Everything the trajectory contains is
untrusted (tool output can be written by anyone): the prompt fences it in tags, tells the model
never to follow instructions inside it, and the quality filter and poisoning defence still judge
every candidate afterwards.

Cost: one model call per task — consecutive turns joined (`plan`, `observe/tasks.join`), a long
session split only where its evidence would not fit one prompt — two when the first reply is
unusable, within the `llm.*` budgets; the offline hints cost one run of the heuristic reflector
(milliseconds).
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Collection
from typing import TYPE_CHECKING, Any

from .. import llm
from ..core import log
from ..observe import commands
from ..playbook import sections as sections_mod
from .llm_prompt import (
    MAX_BULLETS_SHOWN,
    MAX_LESSONS,
    MAX_PROMPT_CHARS,
    PROMPT_VERSION,
    SCHEMA,
    SYSTEM_PROMPT,
    build_prompt,
    plan,
    render,
    select_steps,
    split,
)
from .llm_prompt_text import BASIS_WORDS, RECURRENCE_WORDS, SCOPE_WORDS
from .reflector import ReflectorError

if TYPE_CHECKING:
    from ..core._types import Bullet, BulletTag, Candidate, Reflection, Trajectory, TrajectoryStep
    from ..core.config import Config
    from .reflector import Reflector

__all__ = ["LLMReflector", "make_reflector", "clean_reflection", "shown_bullets", "one_off_reason", "PROMPT_VERSION",
           "SCHEMA", "SYSTEM_PROMPT", "MAX_LESSONS", "MAX_PROMPT_CHARS", "build_prompt", "render", "select_steps"]

# Branch names every clone has: naming them is no one-off.
_SHARED_BRANCHES = {"main", "master", "develop", "development", "dev", "trunk", "head", "staging", "production"}
# Absolute paths that belong to one machine or one run: temp and home directories, mounted volumes
# (`/mnt/c/…` under WSL, `/Volumes/…` on a Mac) and a Windows drive (`C:\src\…`, `D:/work`).
_MACHINE_PATH = re.compile(r"(?<![\w.:/~-])(?:(?:/private)?/(?:tmp|var/tmp|var/folders|home|Users|root)/"
                           r"|/mnt/|/Volumes/)(?P<rest>[^\s`'\")]*)|(?<![\w/])[A-Za-z]:[\\/](?=[\w.])(?P<drive>[^\s`'\")]*)")
# A path's first part written as a placeholder (`/tmp/...`, `/Users/<you>/…`, `/home/$USER/.cache`): the
# general form of a path, which the next session on any machine can follow, not one machine's.
_PLACEHOLDER = re.compile(r"(?:\.\.\.|…|<[^<>/\\]*>|\*|\$\{?\w+\}?|\{[^{}/\\]*\})(?:[/\\]|$)")


def shown_bullets(trajectory: Trajectory, playbook: list[Bullet]) -> list[Bullet]:
    """The bullets the agent saw during the task: `playbook_used` resolved against `playbook`
    (all of `playbook` when the trajectory lists none), at most MAX_BULLETS_SHOWN."""
    used = [str(u) for u in trajectory.get("playbook_used") or []]
    bullets = [b for b in playbook or [] if isinstance(b, dict) and b.get("id")]
    if used:
        by_id = {b["id"]: b for b in bullets}
        bullets = [by_id[u] for u in used if u in by_id]
    return bullets[:MAX_BULLETS_SHOWN]


def _scratch_files(steps: list[TrajectoryStep]) -> set[str]:
    """Base names of files the session wrote and then removed (`rm`): throwaway scripts."""
    written = {posixpath.basename(f) for s in steps if s.get("tool") == "Write" for f in s.get("files") or []}
    removed: set[str] = set()
    for step in steps:
        for part in commands.parts(step.get("command") or ""):
            words = part.split()
            if words[:1] == ["rm"]:
                removed.update(posixpath.basename(w.strip("'\"")) for w in words[1:] if not w.startswith("-"))
    return {name for name in written & removed if name}


def one_off_reason(content: str, trajectory: Trajectory | None) -> str | None:
    """Why `content` would be wrong in the next session (names this session's branch, a scratch
    file it wrote and deleted, or a temp / home-directory path), else None."""
    for path in _MACHINE_PATH.finditer(content):
        rest = path.group("rest") if path.group("rest") is not None else path.group("drive")
        if rest and not _PLACEHOLDER.match(rest):  # `/tmp/` alone names no file of this machine
            return f"names a path of this machine ({path.group(0)[:80]})"
    if not trajectory:
        return None
    branch = str((trajectory.get("git") or {}).get("branch") or "").strip()
    # Only a name that can't be an ordinary word (`fix/x`, `issue-42`): a branch called `cleanup`
    # says nothing when a lesson uses the word.
    if re.search(r"[/_.\d-]", branch) and branch.lower() not in _SHARED_BRANCHES and re.search(
            rf"(?<![\w/.-]){re.escape(branch)}(?![\w/-])", content):
        return f"names the session's branch {branch!r}"
    for name in _scratch_files(trajectory.get("trajectory") or []):
        if re.search(rf"(?<![\w.-]){re.escape(name)}(?![\w-])", content):
            return f"names {name!r}, a scratch file the session wrote and deleted"
    return None


def _step_numbers(value: object) -> list[int] | None:
    """The cited step numbers (ints or digit strings, `[n]` accepted), or None when one is not a number."""
    out: list[int] = []
    for item in value if isinstance(value, list) else []:
        if isinstance(item, bool):
            return None
        if isinstance(item, int):
            out.append(item)
            continue
        text = str(item).strip().strip("[]").strip()
        if not text.isdigit():
            return None
        out.append(int(text))
    return list(dict.fromkeys(out))


def _word(raw: object, allowed: frozenset[str]) -> str | None:
    """One of `allowed` as the model wrote it ("fixed", "Fixed (the run passed)"), else None: not said."""
    word = str(raw or "").strip().lower().split(" ", 1)[0].strip(",.;:()")
    return word if word in allowed else None


def clean_reflection(raw: dict[str, Any], bullets: list[Bullet], steps: list[TrajectoryStep], *,
                     shown_steps: Collection[int] | None = None, trajectory: Trajectory | None = None,
                     hints: Collection[str] = ()) -> Reflection:
    """The model's answer made safe to hand on: at most MAX_LESSONS lessons in known sections, each
    citing only steps in `shown_steps` (default: every step) and none of this session's one-offs;
    confidence in 0..1; tags only for bullets that were shown. `analysis` says what was dropped."""
    by_step = {s.get("step"): s for s in steps}
    known = set(by_step) if shown_steps is None else set(shown_steps)
    candidates: list[Candidate] = []
    dropped: list[str] = []
    for cand in raw.get("candidates") or []:
        if not isinstance(cand, dict):
            continue
        content = " ".join(str(cand.get("content") or "").split())
        try:
            section = sections_mod.normalize(str(cand.get("section") or ""))
        except sections_mod.SectionError:
            dropped.append(f"unknown section {str(cand.get('section'))[:40]!r}: {content[:60]}")
            continue
        if not content:
            continue
        cited = _step_numbers(cand.get("source_steps"))
        unknown = [n for n in cited or [] if n not in known]
        why = ("cites a step that is not a number" if cited is None else "cites no step" if not cited
               else f"cites steps not shown ({', '.join(map(str, unknown))})" if unknown else None)
        if why or cited is None:
            dropped.append(f"{why}: {content[:60]}")
            continue
        reason = one_off_reason(content, trajectory)
        if reason:
            dropped.append(f"{reason}: {content[:60]}")
            continue
        files = list(dict.fromkeys(f for n in cited for f in (by_step[n].get("files") or []) if n in by_step))
        evidence = " ".join(str(cand.get("evidence") or "").split()) or f"steps {', '.join(map(str, cited))}"
        item: Candidate = {"content": content, "section": section, "evidence": evidence, "source_steps": cited,
                           "kind": "llm"}
        if str(cand.get("hint") or "").strip() in hints:  # two readers of the same steps agree
            item["agrees"] = True
        basis, recurs = _word(cand.get("basis"), BASIS_WORDS), _word(cand.get("recurs"), RECURRENCE_WORDS)
        scope = _word(cand.get("scope"), SCOPE_WORDS)
        if basis:
            item["basis"] = basis
        if recurs:
            item["recurs"] = recurs
        if scope:
            item["scope"] = scope
        if files:
            item["files"] = files
        domains = [d for d in cand.get("domains") or [] if isinstance(d, str) and d.strip()]
        if domains:
            item["domains"] = domains[:3]
        confidence = cand.get("confidence")
        # Without a grade, a lesson that cites the steps it came from is as strong as a proven fix;
        # the curator injects at once at 0.8 and keeps lower ones as candidates.
        item["confidence"] = (min(1.0, max(0.0, float(confidence)))
                              if isinstance(confidence, (int, float)) and not isinstance(confidence, bool) else 0.8)
        candidates.append(item)
        if len(candidates) >= MAX_LESSONS:
            break
    shown = {b["id"] for b in bullets}
    tags: list[BulletTag] = []
    seen: set[str] = set()
    for tag in raw.get("tags") or []:
        bid = tag.get("bullet_id") if isinstance(tag, dict) else None
        if bid in shown and bid not in seen and tag.get("tag") in ("helpful", "harmful", "neutral"):
            seen.add(bid)
            tags.append({"bullet_id": bid, "tag": tag["tag"],
                         "reason": " ".join(str(tag.get("reason") or "").split())[:300]})
    analysis = {k: " ".join(str(raw.get(k) or "").split())[:1000]
                for k in ("reasoning", "error_identification", "root_cause")}
    analysis["prompt_version"] = PROMPT_VERSION
    verdicts = [f"{v.get('id')} {v.get('verdict')}" + (f" ({' '.join(str(v.get('reason')).split())[:120]})"
                                                       if v.get("reason") else "")
                for v in raw.get("hints") or [] if isinstance(v, dict) and v.get("id") in hints]
    analysis["hints"] = "\n".join(verdicts)[:1000]  # one a line: the texts are collapsed to one line each
    analysis["dropped"] = "\n".join(dropped)[:1000]
    return {"candidates": candidates, "tags": tags, "analysis": analysis}


class LLMReflector:
    """A Reflector backed by an `llm.Provider`; `offline`'s candidates are given to it as hints."""

    def __init__(self, provider: llm.Provider, *, offline: Reflector | None = None, max_tokens: int | None = None,
                 timeout: float | None = None) -> None:
        self.provider = provider
        self.offline = offline
        self.name = f"llm:{provider.name}@{PROMPT_VERSION}"
        self.max_tokens = max_tokens
        self.timeout = timeout

    def hints(self, trajectory: Trajectory, bullets: list[Bullet]) -> list[Candidate]:
        """The offline reflector's candidates (none without one, or when it fails: they are only hints)."""
        if self.offline is None:
            return []
        try:
            return list(self.offline.reflect(trajectory, bullets).get("candidates") or [])
        except Exception as exc:  # noqa: BLE001 — a broken miner must not cost the model's answer
            log.warning("learning", f"offline hints for the LLM reflector failed: {type(exc).__name__}: {exc}")
            return []

    def plan(self, trajectories: list[Trajectory]) -> list[list[int]]:
        """Which consecutive turns one call reads as one task (`llm_prompt.plan`): a call costs money,
        so a task of several prompts is one call, a long session as few as its evidence needs."""
        return plan(trajectories)

    def split(self, trajectory: Trajectory) -> list[Trajectory]:
        """A turn too long for one call, in windows that each fit (`llm_prompt.split`); else `[trajectory]`."""
        return split(trajectory)

    def reflect(self, trajectory: Trajectory, playbook: list[Bullet]) -> Reflection:
        bullets = shown_bullets(trajectory, playbook)
        steps = trajectory.get("trajectory") or []
        prompt = render(trajectory, bullets, self.hints(trajectory, bullets))
        self.provider.start_job()
        try:
            raw = self.provider.complete_json(SYSTEM_PROMPT, prompt.text, SCHEMA, max_tokens=self.max_tokens,
                                              timeout=self.timeout)
        except llm.FAILURES as exc:
            log.warning("learning", f"LLM reflector ({self.provider.describe()}) failed, falling back to heuristics: "
                                    f"{type(exc).__name__}: {exc}")
            raise ReflectorError(f"{type(exc).__name__}: {exc}") from exc
        reflection = clean_reflection(raw, bullets, steps, shown_steps=prompt.steps, trajectory=trajectory,
                                      hints=prompt.hints)
        dropped = len(raw.get("tags") or []) - len(reflection["tags"])
        if dropped > 0:
            log.warning("learning", f"LLM reflector: {dropped} tag(s) for bullets that were not shown were ignored")
        if reflection.get("analysis", {}).get("dropped"):
            why = reflection["analysis"]["dropped"].replace("\n", "; ")
            log.warning("learning", f"LLM reflector: lessons dropped: {why[:500]}")
        reflection["usage"] = dict(self.provider.usage)
        reflection["reflector"] = f"llm:{self.provider.name}"
        return reflection


def make_reflector(cfg: Config, offline: Reflector | None = None) -> LLMReflector | None:
    """An LLMReflector when `llm.provider` is set, with `offline`'s candidates as hints (raises
    `llm.LLMError` when the provider is set but can't work — `get_reflector` logs that and uses
    the heuristics); None when no provider is configured."""
    provider = llm.get_provider(cfg)
    if provider is None:
        return None
    return LLMReflector(provider, offline=offline)
