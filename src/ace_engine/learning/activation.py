"""When a learned lesson goes live at once, instead of waiting to be seen again: the evidence tier.

Two rules, both read by the curator when it adds a lesson or observes one again
(`playbook/confidence.py` states the promotion rule they feed):

- `strong_evidence(cand, steps)`: the observation is strong when the lesson's steps hold a failing
  invocation, a later passing run of the same check and the change between them, or when it is the
  user's own correction. Such a lesson is live at once, at the usefulness prior.
- `model_grounded(cand, grade, threshold)`: a language model's lesson (it reads the whole task, and
  the reflector dropped any lesson citing no step or a step it was not shown) is live at once when
  the model grades it at least `learning.model_confidence`. The threshold and margins were chosen on
  recorded answers of the tuning split, three answer sets of its prompts written independently and
  pooled (bench/llm/activation.py; the study is kept in tests/test_learning_activation.py): the most
  recall whose precision, less 2 standard errors, stays ≥ 0.5 — that guard (the study's `guard`)
  chosen by leaving one repository out at a time (with 1.5, the repositories left out fell to 0.485).
  Whether the lesson confirms what the offline miner found in the same steps is recorded (`agrees`)
  but not counted: the study found it added recall only at a cost in precision the rule does not
  accept. A pitfall the model saw happen — a troubleshooting lesson whose cited steps hold a failing
  invocation (`shows_failure`) — is live from `PITFALL_MARGIN` below that grade: the failure it
  cites is the kind of evidence the offline tier trusts, and the study found such lessons match an
  engineer's at twice the rate of the model's other lessons of the same grade. A lesson the model
  says the user's words or a fixed failure show (`basis` "user", "fixed"; prompt 12-03.1 on) may go
  live from `BASIS_MARGIN` below it (`STRONG_BASES`; for prompt 12-07.1 the study chose no margin).
  One the model says only the repository's files or a command's output show (`basis` "read":
  nothing failed, nobody said it) waits to be seen again, whatever its grade (`WAITING_BASES`). Any
  other lesson needs the full grade. (What the model says of how often a lesson recurs, and of who
  needs it next — `scope`, prompt 12-07.1 on — is recorded, not counted: holding back the "rarely"
  ones bought no recall, and holding back the "code" ones, a rule a later change to the same code
  must keep, cost a sixth of tune's recall for 0.02 of precision.)

Cost: a pass over a lesson's cited steps (a handful); no I/O.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..observe import commands
from . import command_diff

if TYPE_CHECKING:
    from ..core._types import Candidate
    from ..core._types import TrajectoryStep as Step


# How far below `learning.model_confidence` a pitfall the model saw happen goes live (the study:
# bench/results/llm-activation-tune.json, kept by tests/test_learning_activation.py).
PITFALL_MARGIN = 0.2
PITFALL_SECTION = "troubleshooting_and_pitfalls"
# How far below it a lesson the model says the user's words or a fixed failure show goes live (the same
# study, its `basis_margin`: none, for prompt 12-07.1 on three answer sets; `lost_strong` not chosen).
BASIS_MARGIN = 0.0
STRONG_BASES = frozenset({"user", "fixed"})
# What waits to be seen again whatever its grade, by what the model says shows it: only the files or
# a command's output (the study's `read_waits`).
WAITING_BASES = frozenset({"read"})


def shows_failure(steps: list[Step]) -> bool:
    """Do these steps hold a failure the agent hit (a command or an edit that failed; a read-only
    probe finding nothing is no pitfall)?"""
    return any(s.get("success") is False and s.get("kind") != "readonly" for s in steps)


def model_grounded(cand: Candidate, grade: float | None, threshold: float, *, pitfall: bool = False) -> bool:
    """Is this a model's lesson that is live at once (see the module docstring)? `pitfall`: it is
    a troubleshooting lesson whose cited steps show the failure (`shows_failure`)."""
    if cand.get("kind") != "llm" or not cand.get("source_steps") or grade is None \
            or cand.get("basis") in WAITING_BASES:
        return False
    margin = max(PITFALL_MARGIN if pitfall else 0.0, BASIS_MARGIN if cand.get("basis") in STRONG_BASES else 0.0)
    return grade >= threshold - margin - 1e-9


def strong_evidence(cand: Candidate, steps: list[Step]) -> bool:
    """Is this observation strong evidence (`playbook/confidence.py`, the evidence tier)? The
    user's own correction is; otherwise the lesson's steps must hold a failing invocation, a
    later passing run of the same check (`commands.same_check`), and a change between them (an
    edit, or another command: the fix is identified) — or in the invocation itself
    (`command_diff.command_change`: the tool's suggested flag, another directory, the argument the error
    named). A failure never resolved, a slow step, a command that merely passed, files edited
    together: weak — they wait to recur."""
    if cand.get("kind") == "user_correction":
        return True
    ordered = sorted(steps, key=lambda s: s.get("step") or 0)
    for n, fail in enumerate(ordered):
        failed = fail.get("command")
        if not failed or fail.get("success") is not False or fail.get("kind") == "readonly":
            continue
        for m in range(n + 1, len(ordered)):
            again = ordered[m]
            passed = again.get("command")
            d = command_diff.command_change(fail, again, None) if again.get("success") is True and passed \
                else None
            if d and (d["suggested"] or d["swapped"] or d["revalued"] or d["retargeted"] or d["cwd"][0] != d["cwd"][1]):
                return True
            if m == n + 1:
                continue
            rerun = bool(passed) and commands.same_check(failed, str(passed))
            if rerun and again.get("success") is True and any(
                    s.get("kind") == "edit" or s.get("command") for s in ordered[n + 1:m]):
                return True
    return False
