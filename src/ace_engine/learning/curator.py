"""The curator: deterministic, no LLM. It turns a reflection into delta operations on the playbook
(`Playbook.add / update / merge / tag / promote / quarantine / remove` — never SQL), with
provenance.

For each candidate lesson, in order:
1. poisoning defence (the playbook's own safety policy, `Playbook.screen`; the playbook enforces
   it on every ADD / UPDATE / MERGE / PROMOTE whoever calls them): a dangerous lesson is added as
   *quarantined* — kept for `ace review`, never injected — and skips the quality filter so it is
   kept for review even when it would be rejected as junk;
2. quality filter (`quality.check`): junk is rejected (counted, with the reason, in the run's stats);
3. exact duplicate (same normalized content in this project): the existing bullet gets the new
   evidence (UPDATE); one merged away is followed to the bullet that absorbed it;
4. near duplicate (same project and section, active or candidate, `similarity.duplicate_score ≥
   learning.merge_similarity` — scored on the lessons' *shapes*, their variables abstracted, so
   the same lesson learned with another branch, commit message, script or test file matches):
   the closest bullet gets the evidence (UPDATE); if the lesson matches several bullets, they
   were duplicates of each other and are merged (MERGE) into an active one if there is one, else
   the closest. Wording: when the lessons differ only in variables, the general one wins — each
   variable they disagree on is written as its metavariable (`git push --set-upstream origin
   BRANCH`, `similarity.generalize`); otherwise the new wording is taken when it is more specific
   (`quality.specificity`) and no less general. Neighbours come from the FTS index
   (`fts_candidates` with `similarity.neighbour_query`): an indexed lookup, not a pass over the
   playbook. Failing that, the same lesson in other words, in any section (`restatement`: the
   static table's cosine, a prohibition and a template guard): the same, without a change of wording
   unless the new one is more specific;
5. otherwise a new bullet (ADD): *active* when an offline rule's confidence is at least
   `learning.promote_confidence` (an error, its fix and a passing re-run), when a model's lesson is
   grounded (`activation.model_grounded`, which alone decides a model's lesson: its grade is the
   model's own) or when the observation is strong evidence (the evidence tier, below) — at the
   usefulness prior (0.5), a modest
   confidence that feedback raises or lowers — else a *candidate* —
   kept, listed by `ace patterns --status candidate`, never injected. A candidate without a
   confidence (a producer that gates its own lessons, e.g. code patterns seen in N sessions) is
   added active, as before grades existed.

Observations and promotion (the rule and its numbers: `playbook/confidence.py`): every lesson
keeps the sessions it was seen in (`provenance.sessions`, `observations`), its evidence
confidence (`provenance.confidence`: noisy-OR over sessions, a session counting once) and the
sessions whose evidence was strong (`provenance.strong_sessions`, `strong_evidence`: a failing
invocation, a later passing one and the change between them among the lesson's steps, or the
user's own correction). Strong evidence makes a lesson at once (a lesson that waits to
recur cannot help at its first recurrence); a candidate is promoted (PROMOTE, through
`Playbook.promote`, which screens it again) when it is observed again with strong evidence, or
when its evidence confidence reaches `learning.promote_confidence` over
`learning.promote_min_observations` sessions, or one observation alone reaches it; `ace keep`
promotes one as the user's decision.

Then feedback for the bullets used in the task (`playbook_used`: what the hooks showed, plus ids
the agent cited): the reflector's own tags first; otherwise, for a bullet plausibly relevant to the
task (lexical overlap with what was done, or cited), helpful when the task succeeded, harmful when
it failed. Finally pruning: archive a new lesson (seen in one session, never helpful) once marked
harmful `RETIRE_HARMFUL` (2) times (an explicit mark counts 3: the bound on showing lessons
early), bullets whose confidence fell below `learning.prune_confidence`
after `learning.prune_min_observations` marks, stale ones (unused for `learning.stale_days`, never
helpful), candidates not observed again for `learning.stale_days`, and the least valuable active
ones beyond `learning.max_bullets` / `learning.max_tokens`. A fresh candidate is never pruned for
its confidence: it has no marks, it simply isn't injected. An archived candidate observed again
comes back as a candidate.

Cost: per candidate, one content-key lookup, one FTS query and ≤ 20 shape comparisons; when no
shape matches, a second FTS query and ≤ 20 static embeddings (~1.3 ms each); no LLM.

Why one module (~450 lines): it is one ordered decision over the same playbook operations
(defence, filter, duplicate, merge, add, feedback, prune), specified by the list above; the
scoring and wording it relies on already live in `similarity`, `quality` and
`playbook/confidence.py`.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from ..core.config import DEFAULTS
from ..observe.trajectory import text_of
from ..playbook import confidence as evidence
from ..playbook import sections
from ..playbook.playbook import PlaybookError, clean_content, content_key
from ..redact.redactor import redact
from . import quality, restatement
from . import similarity as sim
from .activation import PITFALL_SECTION, model_grounded, shows_failure, strong_evidence

if TYPE_CHECKING:
    from ..core._types import Bullet, BulletTag, Candidate, Reflection, Trajectory
    from ..core.config import Config
    from ..playbook.playbook import Playbook

RELEVANCE_OVERLAP = 0.3   # share of a bullet's words found in the task's text…
RELEVANCE_MIN_WORDS = 2   # …and at least this many of them
NEIGHBOURS = 20
# Archive reasons that say nothing against a lesson: observed again, it comes back.
_UNUSED_REASONS = ("unused for", "playbook over its cap", "candidate not observed again")
EVIDENCE_KEPT = 10
# The bound on showing a lesson early: a new lesson (one session, never helpful) is
# archived once its harmful marks reach this — two tasks that failed around it, or one explicit
# "that was wrong" (weight `confidence.EXPLICIT_WEIGHT`). tests/test_learning_curator.py holds it.
RETIRE_HARMFUL = 2
SESSIONS_KEPT = 50  # session ids kept per lesson to count each session once
NEIGHBOUR_STATUSES = ("active", "candidate")


class Curator:
    def __init__(self, playbook: Playbook, cfg: Config | None = None, *, source: str = "learning",
                 now: float | None = None) -> None:
        self.pb = playbook
        self.store = playbook.store
        self.source = source
        self.now = now or time.time()
        settings = cfg if cfg is not None else DEFAULTS  # typed values, defaults from the one table
        self.threshold = settings["learning.merge_similarity"]
        self.promote_confidence = settings["learning.promote_confidence"]
        self.promote_min_observations = settings["learning.promote_min_observations"]
        self.model_confidence = settings["learning.model_confidence"]
        self.prune_confidence = settings["learning.prune_confidence"]
        self.prune_min_observations = settings["learning.prune_min_observations"]
        self.stale_days = settings["learning.stale_days"]
        self.max_bullets = settings["learning.max_bullets"]
        self.max_tokens = settings["learning.max_tokens"]
        # User-level only (config.py refuses the key in project files); exact host names. The
        # playbook adds the project's git remote host itself.
        playbook.trust_hosts(settings["learning.trusted_hosts"] or ())

    # -- the whole pass ----------------------------------------------------------------------------

    def curate(self, reflection: Reflection, trajectory: Trajectory, *, job_id: int | None = None, learn: bool = True,
               prune: bool = True) -> dict[str, Any]:
        """Apply a reflection; returns the run's statistics. `learn=False` (a gated turn) applies
        only the feedback tags. Call inside `store.transaction()` to make it all-or-nothing."""
        stats: dict[str, Any] = {"created": 0, "updated": 0, "merged": 0, "restated": 0, "pruned": 0,
                 "quarantined": 0, "rejected": 0, "helpful": 0, "harmful": 0,
                 "candidates": len(reflection.get("candidates") or []), "held": 0, "promoted": 0,
                 "touched": [], "rejections": [], "tagged": []}
        self._activated = False  # did an active bullet appear (created or promoted)? the cap applies then
        self._job_id = job_id
        self._trajectory = trajectory
        with self.pb:  # domain counts refreshed once, at the end
            self._feedback(reflection.get("tags") or [], trajectory, stats)
            if learn:
                for candidate in reflection.get("candidates") or []:
                    self._candidate(candidate, trajectory, stats)
            if prune:
                self._prune(stats)
        touched = self.store.get_bullets(list(dict.fromkeys(stats["touched"]))) or \
            self.store.get_bullets([t["bullet_id"] for t in stats["tagged"]])
        stats["average_confidence"] = (round(sum(b["confidence"] for b in touched) / len(touched), 4)
                                       if touched else None)
        return stats

    # -- candidates --------------------------------------------------------------------------------

    def _candidate(self, cand: Candidate, trajectory: Trajectory, stats: dict[str, Any]) -> None:
        try:
            content = clean_content(cand.get("content") or "")
            section = sections.normalize(str(cand.get("section") or "troubleshooting_and_pitfalls"),
                                         self.pb.extra_sections)
        except (PlaybookError, sections.SectionError) as exc:
            stats["rejected"] += 1
            stats["rejections"].append({"content": str(cand.get("content"))[:200], "reason": str(exc)})
            return
        secret = quality.holds_secret(content)
        if secret:  # dropped, not quarantined: a held lesson would keep the hole where the secret was
            stats["rejected"] += 1
            stats["rejections"].append({"content": redact(content)[:200], "reason": secret})
            return
        provenance = self._provenance(cand, trajectory, section)
        grade = provenance["confidence"]
        grounded = model_grounded(cand, grade, self.model_confidence, pitfall=bool(provenance.get("pitfall")))
        concerns = self.pb.screen(content)
        if concerns:
            provenance["concerns"] = concerns
            existing = self._existing(content)
            if existing is not None:
                self._observe(existing, provenance, stats, may_restore=False)
            else:
                bullet, _ = self.pb.add(content, section, domains=cand.get("domains"), provenance=provenance,
                                        status="quarantined", source=self.source, reason="; ".join(concerns),
                                        session_id=trajectory.get("session_id"), now=self.now)
                stats["touched"].append(bullet["id"])
            stats["quarantined"] += 1
            return
        # A user's correction states their own words on purpose: echoing the prompt is its point.
        problem = quality.check(content, None if cand.get("kind") == "user_correction" else trajectory.get("task"))
        if problem:
            stats["rejected"] += 1
            stats["rejections"].append({"content": content[:200], "reason": problem})
            return
        existing = self._existing(content)
        if existing is not None:
            self._observe(existing, provenance, stats, grounded=grounded)
            return
        matches = self._near_duplicates(content, section)
        if matches:
            best_score, best = matches[0]
            general = best["content"]
            for _, other in matches[1:]:
                # The lesson matches both: they say the same thing. Keep the first (active, closest).
                general = sim.generalize(general, other["content"]) or general
                absorbed = other["provenance"] or {}
                best = self.pb.merge(best["id"], other["id"], source=self.source, now=self.now,
                                     reason=f"duplicates of each other (both ≥ {self.threshold} similar to a new "
                                            "lesson)",
                                     session_id=trajectory.get("session_id"))
                best = {**best, "provenance": _absorb(best["provenance"], absorbed)}
                stats["merged"] += 1
            self._observe(best, provenance, stats, new_content=self._wording(general, content) or general,
                          similarity=best_score, grounded=grounded)
            return
        restated = restatement.restated(self.store, self.pb.project_id, content, NEIGHBOUR_STATUSES, NEIGHBOURS)
        if restated is not None:
            cosine, same = restated
            self._observe(same, provenance, stats, new_content=self._wording(same["content"], content),
                          similarity=cosine, grounded=grounded)
            stats["restated"] += 1
            return
        strong = bool(provenance["strong_sessions"])  # the evidence tier: strong is a lesson at once
        # A model's lesson is live by `model_grounded` alone (its grade is the model's own, weighed with
        # the evidence it names); an offline rule's by its evidence grade.
        graded = grade is not None and grade >= self.promote_confidence and cand.get("kind") != "llm"
        status = "active" if grade is None or graded or strong or grounded else "candidate"
        how = (" as a candidate" if status == "candidate" else " on strong evidence" if strong
               else " as the model grounded it" if grounded and (grade or 0) < self.promote_confidence else "")
        bullet, created = self.pb.add(content, section, domains=cand.get("domains"), provenance=provenance,
                                      status=status, source=self.source,
                                      reason=f"learned{how}: {provenance['evidence'][:200]}",
                                      session_id=trajectory.get("session_id"), now=self.now)
        stats["created" if created else "updated"] += 1
        if created and bullet["status"] == "candidate":
            stats["held"] += 1
        self._activated = self._activated or (created and bullet["status"] == "active")
        stats["touched"].append(bullet["id"])

    def _existing(self, content: str) -> Bullet | None:
        """The bullet with this exact content; one merged away into another: that other."""
        bullet = self.store.find_by_content_key(content_key(content), self.pb.project_id)
        if bullet is not None and bullet["status"] == "archived":
            removed = next((c for c in self.store.changes(bullet_id=bullet["id"], limit=20) if c["op"] == "REMOVE"),
                           None)
            survivor = ((removed["detail"] if removed else None) or {}).get("merged_into")
            if survivor:
                bullet = self.store.get_bullet(survivor) or bullet
        return bullet

    @staticmethod
    def _wording(current: str, new: str) -> str | None:
        """The wording a lesson takes after another observation (module doc, step 4); None: keep."""
        general = sim.generalize(current, new)
        if general is not None:
            return general
        if quality.specificity(new) > quality.specificity(current) and sim.variables(new) >= sim.variables(current):
            return new
        return None

    def _near_duplicates(self, content: str, section: str) -> list[tuple[float, Bullet]]:
        """Bullets of this project and section at least `threshold` similar: active ones first
        (a candidate is merged into an active lesson, never the reverse), closest first."""
        match = sim.neighbour_query(content)
        if match is None:
            return []
        found = []
        for bullet in self.store.fts_candidates(match, self.pb.project_id, include_global=False, limit=NEIGHBOURS,
                                                statuses=NEIGHBOUR_STATUSES):
            if bullet["section"] != section:
                continue
            score = sim.duplicate_score(content, bullet["content"])
            if score >= self.threshold:
                found.append((score, bullet))
        found.sort(key=lambda pair: (pair[1]["status"] != "active", -pair[0], pair[1]["created_at"]))
        return found

    def _provenance(self, cand: Candidate, trajectory: Trajectory, section: str) -> dict:
        steps = {s.get("step"): s for s in trajectory.get("trajectory") or []}
        used = [steps[n] for n in cand.get("source_steps") or [] if n in steps]
        session = trajectory.get("session_id") or (f"job:{self._job_id}" if self._job_id is not None else None)
        return {
            "source": self.source,
            "reflector": trajectory.get("reflector"),
            "kind": cand.get("kind"),
            "session_id": trajectory.get("session_id"),
            "agent_id": trajectory.get("agent_id") or None,
            "agent": trajectory.get("agent") or None,  # which coding agent; the store records it
            "job_id": self._job_id,
            "tool_event_ids": [s["tool_event_id"] for s in used if s.get("tool_event_id") is not None],
            "steps": [s.get("step") for s in used],
            "evidence": str(cand.get("evidence") or "")[:800],
            "confidence": _grade(cand.get("confidence")),
            **({"agrees": True} if cand.get("agrees") else {}),
            # What the model said shows it, how often it recurs and who needs it next.
            **{field: cand[field] for field in ("basis", "recurs", "scope") if cand.get(field)},
            # The evidence kind `activation.model_grounded` weighs: a pitfall whose failure is cited.
            **({"pitfall": True} if cand.get("kind") == "llm" and section == PITFALL_SECTION
               and shows_failure(used) else {}),
            "files": list(cand.get("files") or trajectory.get("files") or [])[:10],
            "tools": list(dict.fromkeys(s.get("tool") for s in used if s.get("tool")))[:5],
            "task": str(trajectory.get("task") or "")[:200],
            "observations": 1,
            "sessions": [session] if session else [],
            "strong_sessions": [session] if session and strong_evidence(cand, used) else [],
        }

    def _observe(self, bullet: Bullet, provenance: dict[str, Any], stats: dict[str, Any], *,
                 new_content: str | None = None, similarity: float | None = None, may_restore: bool = True,
                 grounded: bool = False) -> None:
        """Another observation of an existing lesson: its evidence grows, counted once per session
        (and, for a near duplicate, its wording may change: `_wording`); a candidate that now
        meets the promotion rule is promoted. A lesson the curator archived as stale or over the
        cap comes back (a candidate as a candidate); one archived for doing harm, or by the user,
        stays archived. `grounded`: this observation is a model's lesson live at once (`activation.model_grounded`)."""
        prov = dict(bullet.get("provenance") or {})
        seen = _sessions(prov)
        session = (provenance.get("sessions") or [None])[0]
        new_session = session is None or session not in seen
        grade = provenance.get("confidence")
        prov["observations"] = int(prov.get("observations") or 1) + (1 if new_session else 0)
        prov["sessions"] = (seen + ([session] if session and new_session else []))[-SESSIONS_KEPT:]
        prov["confidence"] = evidence.combine(_grade(prov.get("confidence")), grade, new_session=new_session)
        prov["strong_sessions"] = list(dict.fromkeys(_strong_sessions(prov) + _strong_sessions(provenance)))[
            -SESSIONS_KEPT:]
        log = list(prov.get("evidence_log") or [])
        log.append({"session_id": provenance.get("session_id"), "job_id": provenance.get("job_id"),
                    "tool_event_ids": provenance.get("tool_event_ids"), "confidence": grade,
                    "evidence": provenance.get("evidence", "")[:300], "similarity": similarity, "at": self.now})
        prov["evidence_log"] = log[-EVIDENCE_KEPT:]
        reason = (f"re-observed (similarity {similarity})" if similarity is not None else "re-observed") + \
            f": {provenance.get('evidence', '')[:200]}"
        sid = provenance.get("session_id")
        if new_content is not None and content_key(new_content) == bullet["content_key"]:
            new_content = None
        try:
            bullet = self.pb.update(bullet["id"], content=new_content, provenance=prov, source=self.source,
                                    reason=reason, session_id=sid, now=self.now)
        except PlaybookError:
            return
        if may_restore and bullet["status"] == "archived":
            was = self._archived_as_unused(bullet["id"])
            if was is not None:
                try:
                    bullet = self.pb.restore(bullet["id"], source=self.source, reason="archived lesson observed again",
                                             session_id=sid, now=self.now,
                                             status="candidate" if was == "candidate" else "active")
                except PlaybookError:
                    pass  # flagged by the safety policy: only a person may bring it back
        strong = len(prov["strong_sessions"])
        strong_now = bool(_strong_sessions(provenance))  # this observation is strong: a lesson at once
        if bullet["status"] == "candidate" and (strong_now or grounded or evidence.promotable(
                prov["confidence"], prov["observations"], grade, promote_confidence=self.promote_confidence,
                min_observations=self.promote_min_observations, strong_sessions=strong)):
            why = (f"a failure and its fix (or the user's correction) in {strong} of them" if strong else
                   "a model's lesson citing the steps that show it" if grounded and not strong_now else
                   f"evidence confidence {prov['confidence']}")
            bullet = self.pb.promote(bullet["id"], source=self.source, session_id=sid, now=self.now,
                                     reason=f"seen in {prov['observations']} sessions, {why}")
            if bullet["status"] == "active":
                stats["promoted"] += 1
                self._activated = True
        stats["updated"] += 1
        stats["touched"].append(bullet["id"])

    def _archived_as_unused(self, bullet_id: str) -> str | None:
        """The status a bullet had when the curator archived it for a reason that says nothing
        against it (unused, over the cap, a candidate not seen again); None otherwise."""
        last = next((c for c in self.store.changes(bullet_id=bullet_id, limit=20) if c["op"] == "REMOVE"), None)
        if last and last["source"] == self.source and (last["reason"] or "").startswith(_UNUSED_REASONS):
            return str((last["detail"] or {}).get("from") or "active")
        return None

    # -- feedback on the bullets used ----------------------------------------------------------------

    def _feedback(self, reflector_tags: list[BulletTag], trajectory: Trajectory, stats: dict[str, Any]) -> None:
        used = list(dict.fromkeys((trajectory.get("playbook_used") or []) + self._cited(trajectory)))
        decided: dict[str, tuple[str, str]] = {}
        for tag in reflector_tags:
            if tag.get("tag") in ("helpful", "harmful"):
                decided.setdefault(tag["bullet_id"], (tag["tag"], f"reflector: {tag.get('reason', '')}"[:300]))
        success = (trajectory.get("result") or {}).get("success")
        cited = set(self._cited(trajectory))
        context = sim.tokens(text_of(trajectory))
        for bullet in self.store.get_bullets(used):
            if bullet["id"] in decided or bullet["status"] != "active" or success is None:
                continue
            words = sim.tokens(bullet["content"])
            shared = len(words & context)
            relevant = bullet["id"] in cited or (
                shared >= RELEVANCE_MIN_WORDS and sim.overlap(bullet["content"], context) >= RELEVANCE_OVERLAP)
            if not relevant:
                continue
            why = "cited by the agent" if bullet["id"] in cited else f"shown, {shared} of its words in the task"
            decided[bullet["id"]] = ("helpful", f"task succeeded; {why}") if success else \
                ("harmful", f"task failed around it; {why}")
        for bullet_id, (verdict, reason) in decided.items():
            try:
                self.pb.tag(bullet_id, verdict, source=self.source, reason=reason,
                            session_id=trajectory.get("session_id"), now=self.now)
            except PlaybookError:
                continue  # a bullet the reflector made up
            stats[verdict] += 1
            stats["tagged"].append({"bullet_id": bullet_id, "tag": verdict, "reason": reason})

    @staticmethod
    def _cited(trajectory: Trajectory) -> list[str]:
        return [c for c in trajectory.get("cited") or [] if isinstance(c, str)]

    # -- pruning -------------------------------------------------------------------------------------

    def _misleading_new_lessons(self) -> list[Bullet]:
        """The bound on showing a lesson early (the evidence tier): a lesson this curator learned,
        seen in one session only and never marked helpful, whose harmful marks reach
        `RETIRE_HARMFUL` (an explicit mark weighs `confidence.EXPLICIT_WEIGHT`): two tasks that
        failed around it, or one "that was wrong", and it is gone — where
        the general rule above waits for `prune_min_observations` marks. The store's confidence
        index narrows the search: such a lesson's confidence is at most `confidence(0, N)`."""
        below = evidence.confidence(0, RETIRE_HARMFUL) + 0.0001
        found = self.store.get_bullets(self.store.low_confidence_bullets(self.pb.project_id, below, 1))
        return [b for b in found if (b["provenance"] or {}).get("source") == self.source
                and len(_sessions(b["provenance"] or {})) <= 1
                and b["helpful"] + b["helpful_explicit"] == 0 and _harm(b) >= RETIRE_HARMFUL]

    def _prune(self, stats: dict[str, Any]) -> None:
        pid = self.pb.project_id
        protect = set(stats["touched"])

        def archive(bullet_id: str, reason: str) -> None:
            try:
                self.pb.remove(bullet_id, source=self.source, reason=reason, now=self.now)
            except PlaybookError:
                return
            stats["pruned"] += 1

        for bullet in self._misleading_new_lessons():
            archive(bullet["id"], f"a new lesson (seen in one session) marked harmful {_harm(bullet):g} times and "
                                  f"never helpful (retired at {RETIRE_HARMFUL})")
        from ..experiment.retire import check  # retire what the holdout shows does not pay (once a day)

        for bullet_id, reason in check(self.store, pid, self.now):
            archive(bullet_id, reason)
        for bullet_id in self.store.low_confidence_bullets(pid, self.prune_confidence, self.prune_min_observations):
            archive(bullet_id, f"confidence below {self.prune_confidence} after ≥ {self.prune_min_observations} "
                               "observations")
        stale = [b for b in self.store.get_bullets(self.store.stale_bullets(pid, self.now - self.stale_days * 86400))
                 if b["id"] not in protect]
        for bullet in stale:
            archive(bullet["id"], f"candidate not observed again for {self.stale_days:g} days"
                    if bullet["status"] == "candidate" else
                    f"unused for {self.stale_days:g} days and never (or rarely) helpful")
        if not self._activated:
            return  # the cap is kept as the playbook grows; a curation that added nothing leaves it be
        count, chars = self.store.playbook_size(pid)
        over_count = count - self.max_bullets if self.max_bullets > 0 else 0
        over_chars = chars - self.max_tokens * 4 if self.max_tokens > 0 else 0
        if over_count <= 0 and over_chars <= 0:
            return
        for bullet_id, length in self.store.least_valuable_bullets(pid, max(over_count, 0) + 200, tuple(protect)):
            if over_count <= 0 and over_chars <= 0:
                break
            archive(bullet_id, f"playbook over its cap ({self.max_bullets} bullets / {self.max_tokens} tokens): least "
                               "valuable")
            over_count -= 1
            over_chars -= length


def _grade(value: object) -> float | None:
    """A reflector's confidence as a number in 0..1; None when it gave none (or nonsense)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value != value:
        return None
    return round(min(1.0, max(0.0, float(value))), 4)


def _harm(bullet: Bullet) -> float:
    return bullet["harmful"] + evidence.EXPLICIT_WEIGHT * bullet["harmful_explicit"]


def _strong_sessions(prov: dict[str, Any]) -> list[str]:
    seen = prov.get("strong_sessions")
    return [str(s) for s in seen if s] if isinstance(seen, list) else []


def _sessions(prov: dict[str, Any]) -> list[str]:
    """The sessions a lesson was seen in (older provenance: the one it was learned in)."""
    seen = prov.get("sessions")
    if isinstance(seen, list):
        return [str(s) for s in seen if s]
    return [str(prov["session_id"])] if prov.get("session_id") else []


def _absorb(kept: dict[str, Any], other: dict[str, Any]) -> dict[str, Any]:
    """`kept`'s provenance after merging `other`'s lesson into it: sessions united, observations
    counted once per session, evidence combined (noisy-OR when the two were seen in different
    sessions, the larger when they share one)."""
    mine, theirs = _sessions(kept), _sessions(other)
    shared = bool(set(mine) & set(theirs))
    united = list(dict.fromkeys(mine + theirs))[-SESSIONS_KEPT:]
    observations = int(kept.get("observations") or 1) + int(other.get("observations") or 1) - \
        len(set(mine) & set(theirs))
    strong = list(dict.fromkeys(_strong_sessions(kept) + _strong_sessions(other)))[-SESSIONS_KEPT:]
    return {**kept, "sessions": united, "observations": max(observations, len(united), 1), "strong_sessions": strong,
            "confidence": evidence.combine(_grade(kept.get("confidence")), _grade(other.get("confidence")),
                                           new_session=not shared)}
