"""What a session summary may carry into the next session's context: one rule for every field.

A summary is data about a past session, never instructions for the next one. Every field that can
reach `<ace-recent-context>` has an origin, named where `summarize.lines` renders it:

* `user` — the user's own words: the requests (`Asked:`, `Last asked:`, `Also asked:`) and what they
  said is left (`Left to do (you said):`). Only these may read as a request.
* `agent` — what the agent wrote or did: its last message's open ends, its closing question, the
  action it announced or was cut off in, a command it ran, the model's narrative. Someone else's text
  may have told it to (a tool's output, a file it read), so it counts as text someone else wrote —
  except a command it ran whose risky parts the session's evidence attributes (`Fields.ran`,
  `observe.origins`): typed by the user, in the project's files, or chosen by the agent on its own.
* `tool` — what a tool printed: test output, an error, `git commit`'s answer.
* `repo` — names the repository chose: files, the branch, commit subjects from `git log`.

The rule, applied to each field on its own (`Fields`):
1. It passes the lesson safety policy (`playbook.safety.concerns`: fetch-and-run, exfiltration,
   fake tags, role text, "ignore previous instructions", permissions, secrets…). A host a user field
   names is the user's business; in every other field an unknown host is a concern.
2. A field that is not the user's also passes the provenance rule (`playbook.provenance.
   origin_concerns` with origin `foreign`): a package it installs or runs, a URL or host, an image or
   repository it fetches, a permission it widens — from someone else's text — is never carried.
3. A name (file, branch) is screened as written, with its separators (`-`, `_`, `/`, `.`) read as
   spaces, and without the one-letter words left of flags, so `npm-i-g-evil-cli` or
   `ignore_previous_instructions` is read the way a model reads it.
4. What passes is shown as a fact, never as an instruction: the user's words as they are; everything
   else quoted and clipped after who said or printed it (`the agent said "…"`, `it printed "…"`,
   `escape.quoted`), names as they are (they sit in a labelled slot: `Changed:`, `branch`).
A field that fails 1–3 is dropped (the rest of its line stays) and counted in `withheld`.

Cost: the safety policy and the provenance patterns (~0.3 ms a field, compiled on first use): the
worker's, once per summary; never imported by a hook.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping

from ..core.escape import quoted

__all__ = ["ORIGINS", "concerns", "Fields"]

ORIGINS = ("user", "agent", "tool", "repo")
_SEPARATORS = re.compile(r"[-_/.]+")
_HOST = "contacts unknown host"


def _origin_concerns(text: str, trusted_hosts: Iterable[str], origins: Mapping[str, str] | None) -> list[str]:
    """The provenance rule for text someone other than the user wrote: the one call site. Its risky
    parts are foreign unless `origins` (the learner's attribution of a command the agent ran)
    says the user typed it, the project has it, or the agent chose it on its own."""
    from ..playbook.provenance import origin_concerns

    provenance = {"origin": "foreign", "origins": dict(origins)} if origins else {"origin": "foreign"}
    return origin_concerns(text, provenance, trusted_hosts=tuple(trusted_hosts))


def concerns(text: str, origin: str, trusted_hosts: Iterable[str] = (), *, name: bool = False,
             origins: Mapping[str, str] | None = None) -> list[str]:
    """Why this field must not reach the next session's context ([] when it may); see the module
    docstring. `name`: a file or branch name, also read with its separators as spaces. `origins`:
    {risky part: origin} computed for a command the agent ran (`Fields.ran`)."""
    from ..playbook.safety import concerns as lesson_concerns

    if origin not in ORIGINS:
        raise ValueError(f"unknown origin {origin!r}")
    hosts = tuple(trusted_hosts)
    variants = [text]
    if name:
        spaced = _SEPARATORS.sub(" ", text).strip()
        # One-letter words of a name are what is left of flags a name can't spell (`-y`, `-g`).
        words = " ".join(w for w in spaced.split() if len(w) > 1 or w.lower() in ("a", "i"))
        variants += [v for v in dict.fromkeys((spaced, words)) if v and v != text]
    found: list[str] = []
    for variant in variants:
        reasons = lesson_concerns(variant, hosts)
        if origin == "user":
            reasons = [r for r in reasons if not r.startswith(_HOST)]
        else:
            reasons += _origin_concerns(variant, hosts, origins)
        found += [r for r in reasons if r not in found]
    return found


class Fields:
    """The fields of one summary as they may be shown, with a count of those withheld."""

    def __init__(self, trusted_hosts: Iterable[str] = (),
                 attribution: Callable[[str], Mapping[str, str]] | None = None) -> None:
        """`attribution`: `observe.origins.Attribution` of the session (command → {part: origin});
        without it every risky part of a command counts as someone else's."""
        self.trusted_hosts = tuple(trusted_hosts)
        self.attribution = attribution
        self.withheld = 0
        self.reasons: list[str] = []

    def _ok(self, text: str, origin: str, *, name: bool = False, origins: Mapping[str, str] | None = None) -> bool:
        found = concerns(text, origin, self.trusted_hosts, name=name, origins=origins)
        if found:
            self.withheld += 1
            self.reasons += [r for r in found if r not in self.reasons]
        return not found

    def user(self, text: str | None) -> str | None:
        """The user's own words, as they are; None when empty or screened out."""
        text = (text or "").strip()
        return text if text and self._ok(text, "user") else None

    def said(self, text: str | None, origin: str, limit: int) -> str | None:
        """Someone else's prose as a quoted, clipped fact (`"…"`); None when empty or screened out.
        The caller puts who said it in front."""
        text = (text or "").strip()
        return quoted(text, limit) if text and self._ok(text, origin) else None

    def name(self, text: str | None, origin: str = "repo") -> str | None:
        """A file or branch name, as it is; None when empty or screened out."""
        text = (text or "").strip()
        return text if text and self._ok(text, origin, name=True) else None

    def ran(self, command: str | None) -> str | None:
        """A command the agent ran, as it is; None when empty or screened out. Its risky parts
        (a package, a host) take the origin the session's evidence gives them: the user's prompt,
        the project's files, the agent's own choice — or someone else's text it saw first, which
        is foreign (the agent ran it because a tool's output told it to)."""
        text = (command or "").strip()
        if not text:
            return None
        origins = self.attribution(text) if self.attribution is not None else None
        return text if self._ok(text, "agent", origins=origins) else None

    def plain(self, text: str | None, origin: str) -> str | None:
        """Text ace-engine wrote around someone else's words (a step it describes, a command in
        backticks), as it is; None when empty or screened out."""
        text = (text or "").strip()
        return text if text and self._ok(text, origin) else None
