"""Lessons from a change in the invocation itself (`command_diff.command_change`): the tool's own
suggestion followed, another directory, the argument the error named swapped for the right one, a
variable set, a flag added or dropped — worded as a rule, the runs it rests on as its evidence.

    change_lesson(episode, root) -> Candidate | None

None when an edit where the error points is the likelier cause, when the failure is of the network,
when the command is about one commit / PR / issue (task-local), or when nothing of that changed.
Confidence: 0.85 when the tool suggested the change, the directory changed or the error named the
argument (or the flag whose value changed); 0.7 for a flag or variable changed on the agent's own
guess (a candidate until it recurs).
Cost: one `command_diff.command_change` per episode; no I/O.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ..observe import commands
from . import command_diff
from . import episodes as ep
from .failure_lesson_parts import TRANSIENT, candidate, evidence, fails_with, sig_span
from .lesson_wording import code, local

if TYPE_CHECKING:
    from ..core._types import Candidate

Step = Mapping[str, Any]


def _unbranched(text: str, passed: Step) -> str:
    """The branch a git command named, as `<branch>` in the text too (one lesson per repository)."""
    words = command_diff.branchless(command_diff._core_words(passed.get("command") or ""), "git",  # noqa: SLF001
                                    command_diff._verb(passed.get("command") or "")[1])  # noqa: SLF001
    raw = command_diff._core_words(passed.get("command") or "")  # noqa: SLF001
    for before, after in zip(raw, words, strict=False):
        if after == "<branch>" and len(before) > 2:
            text = re.sub(rf"(?<![\w/-]){re.escape(before)}(?![\w-])", "<branch>", text)
    return text


def change_lesson(e: ep.Episode, root: str | None) -> Candidate | None:
    """The invocation itself changed and that got past the failure (`command_diff.command_change`):
    the tool's own suggestion followed, a flag added or dropped, another directory, a variable set.
    A rule naming the change; the runs it rests on are its evidence."""
    last, passed = e["fails"][-1], e["passed"]
    d = command_diff.command_change(last, passed, root)
    sig = e["signature"]
    if d is None or (sig and TRANSIENT.search(sig)):
        return None
    if not passed["success"] and not d["suggested"]:
        # It got past the failure to fail on something else: the change the tool asked for is proven
        # (`cargo run` → "use the `--bin` option" → `--bin hk` now fails on its config); a guess is not.
        return None
    fix_edits = [s for s in e["fixes"] if s.get("kind") == "edit"]
    output = last.get("output") or ""
    if not sig:  # no line the signature rules know: the output's first telling line says it
        sig = next((x.strip() for x in output.splitlines() if len(x.strip()) > 12
                    and not re.match(r"^(?:Exit code|\$ )", x.strip())), None)
    at_location = [s for s in fix_edits if any(ep._mentions(output, f) for f in s.get("files") or [])]  # noqa: SLF001
    if at_location and not d["suggested"]:
        return None  # an edit where the error points is the likelier cause
    if any(commands._SHA.match(w) or re.match(r"^#?\d{2,}$", w)  # noqa: SLF001
           for w in command_diff._core_words(last["command"])[1:]):  # noqa: SLF001
        return None  # about one commit, PR or issue: task-local, not a rule for the next session
    before, after = d["cwd"]
    verb = command_diff._verb(last["command"])  # noqa: SLF001
    passed = {**passed, "command": command_diff.same_part(passed["command"], verb)}
    core_pass = " ".join(command_diff._core_words(passed["command"]))  # noqa: SLF001
    core_fail = " ".join(command_diff._core_words(last["command"]))  # noqa: SLF001
    why = f": without it, {fails_with(sig, root, 100)}" if sig else ""
    if d["suggested"] and (d["added"] or d["removed"]):
        what = (" ".join(d["added"]) if d["suggested"].startswith(d["tool"]) else " ".join(d["flags"])) \
            if d["added"] else "no " + " ".join(d["removed"])
        tool = d["tool"].split()[0]
        content = f"{code(d['tool'], 40)} here needs {code(what, 60)} ({tool}'s own suggestion){why}."
    elif after != before and not after:
        return None  # back to the root after the shell was left elsewhere: the session's state, no rule
    elif after != before:
        where = f"`{after}/`" if after else "the repository root"
        content = (f"Run {code(local(core_pass, root), 60)} from {where} ({code(f'cd {after} && ' + core_pass, 70)})"
                   + (f": from {'`' + before + '/`' if before else 'the repository root'}, "
                      f"{code(local(core_fail, root), 50)} {fails_with(sig, root, 90)[3:]}" if sig else "") + ".")
    elif d["swapped"]:
        old, new = (local(w, root) for w in d["swapped"])
        name = old.rstrip("/").rsplit("/", 1)[-1]
        if old.endswith(name) and new.endswith(name) and old != name and new != name:
            old, new = old[: -len(name)] + "…", new[: -len(name)] + "…"  # the directories are the difference
        said = (sig or "").replace(d["swapped"][0], "…").replace(local(d["swapped"][0], root), "…")
        content = f"{code(d['tool'], 30)} takes {code(new, 60)}, not {code(old, 60)}" \
                  + (f": that {fails_with(said, root, 90)[3:]}" if sig else "") + "."
    elif d["retargeted"]:
        old, new = d["retargeted"]
        remote = next((w for w in core_fail.split()[2:] if not w.startswith("-")), "origin")
        shown = command_diff.branchless(["git", "push", remote, new], "git", "push")[3]
        if shown != "<branch>":
            advice = f"push to {code(new, 50)} instead"
        elif re.search(r"protected", f"{sig} {output}", re.I):
            # A protected branch takes its changes through a pull request: that is what the refusal means.
            advice = "push a branch and open a pull request instead"
        else:
            advice = "push a branch instead"
        content = (f"`git push` to {code(old, 40)} is refused here" + (f" ({sig_span(sig, root, 90)})" if sig else "")
                   + f": {advice} ({code(f'git push {remote} {shown}', 70)}).")
    elif d["revalued"]:
        flag, old, new = d["revalued"]
        content = f"{code(d['tool'], 30)} here takes {code(f'{flag} {new}', 70)}, not {code(f'{flag} {old}', 60)}" \
                  + (f": that {fails_with(sig, root, 90)[3:]}" if sig else "") + "."
    elif d["env"]:
        content = f"{code(local(core_fail, root), 50)} needs {code(' '.join(d['env']), 40)} set here{why}."
    elif d["flags"]:
        content = f"{code(d['tool'], 40)} here needs {code(' '.join(d['flags']), 50)}{why}."
    elif d["removed"]:
        content = f"Don't pass {code(' '.join(d['removed']), 40)} to {code(d['tool'], 30)} here{why[:0]}" \
                  + (f": with it, {fails_with(sig, root, 100)}" if sig else "") + "."
    else:
        return None
    content = _unbranched(content, passed)
    # The tool's own suggestion, another directory, the argument the error named: the change is the
    # cause. A flag or variable changed on our own guess: likely, but a candidate until it recurs.
    strong = bool(d["suggested"] or after != before or d["swapped"] or d["revalued"] or d["retargeted"])
    return candidate(content, "command_change", 0.85 if strong else 0.7, evidence(e), e["fails"] + [passed],
                      section="strategies_and_hard_rules")
