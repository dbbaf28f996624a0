"""Two confidences of a bullet, with their rules.

Usefulness, from its counters, with a prior (the `confidence` column; ranking and pruning use it):

    h = helpful + w * helpful_explicit          (w = explicit weight, default 3)
    x = harmful + w * harmful_explicit
    confidence = (h + a) / (h + x + a + b)      (a = b = 2: a Beta(2, 2) prior)

A new bullet scores 0.5 — neither trusted nor dismissed. Implicit outcomes (the task went well
or badly while the bullet was shown) move it slowly; a person saying "that helped" or "that was
wrong" counts three times as much. 10 harmful observations and no helpful ones give 0.14.

Evidence, from the sessions a learned lesson was observed in (`provenance.confidence`, with
`provenance.observations` and `provenance.sessions`; the promotion rule uses it):

    first observation:       c = the reflector's confidence (0.5–0.9: 0.8 for an error, its fix
                             and a passing re-run; 0.55–0.75 for weaker patterns)
    a new session sees it:   c ← min(CAP, 1 − (1 − c)(1 − c_new))     (noisy-OR: independent evidence)
    the same session again:  c ← max(c, c_new)                         (a session counts once)

    promoted (candidate → active) when c ≥ P and (observations ≥ M or c_new ≥ P)
                              or when S ≥ M                        (the evidence tier, below)
        P = learning.promote_confidence (0.8), M = learning.promote_min_observations (2)
        S = the sessions whose observation was *strong* (`provenance.strong_sessions`)

So one strong observation is a lesson at once; weak ones need to recur: two sessions at 0.6
(→ 0.84) or 0.7 (→ 0.91) promote; the weakest patterns (0.55: a repeated failure, a slow step)
need a third session (0.55 twice → 0.7975, three times → 0.909). The cap keeps a learned lesson
from claiming certainty. `ace keep ID` promotes a candidate whatever its evidence: the user's word.

The evidence tier. A grade says how sure one session makes the reflector; it does not say what
kind of evidence it was. An observation is *strong* when its steps hold a failing invocation, a
later passing one and the change between them (the fix is identified), or when the lesson is
the user's own correction (the curator decides: `learning/activation.py`, `strong_evidence`). Such
a lesson graded low in one session (0.5: the agent broke the code itself, then fixed it — often
a one-off) is no one-off when another session fails the same way and is fixed the same way: two
sessions of strong evidence promote it, whatever c says (0.5 twice is 0.75, which the noisy-OR
alone would hold back for a third session: a new user would wait two sessions longer to see
the lesson used). Weak evidence — a failure never resolved, a slow step, files edited together,
a command that merely passed — keeps the noisy-OR rule and waits. The tier is what
`tests/test_learning_curator.py::test_the_promotion_rule` tabulates, row by row.
"""

PRIOR_HELPFUL = 2.0
PRIOR_HARMFUL = 2.0
EXPLICIT_WEIGHT = 3.0
EVIDENCE_CAP = 0.95


def confidence(helpful: int, harmful: int, helpful_explicit: int = 0, harmful_explicit: int = 0,
               explicit_weight: float = EXPLICIT_WEIGHT) -> float:
    h = helpful + explicit_weight * helpful_explicit
    x = harmful + explicit_weight * harmful_explicit
    return round((h + PRIOR_HELPFUL) / (h + x + PRIOR_HELPFUL + PRIOR_HARMFUL), 4)


def observations(helpful: int, harmful: int, helpful_explicit: int = 0, harmful_explicit: int = 0) -> int:
    return helpful + harmful + helpful_explicit + harmful_explicit


def combine(current: float | None, new: float | None, *, new_session: bool) -> float | None:
    """The evidence confidence after another observation (None: not graded, e.g. a lesson
    written before grades were kept; an ungraded observation leaves it as it is)."""
    if new is None:
        return current
    if current is None:
        return round(min(new, EVIDENCE_CAP) if new_session else new, 4)
    if not new_session:
        return round(max(current, new), 4)
    return round(min(EVIDENCE_CAP, 1.0 - (1.0 - current) * (1.0 - new)), 4)


def promotable(evidence: float | None, observations: int, latest: float | None, *, promote_confidence: float,
               min_observations: int, strong_sessions: int = 0) -> bool:
    """The promotion rule (module doc): strong evidence (a failure and its identified fix, or the
    user's correction) in `min_observations` sessions; or enough graded evidence, from enough
    sessions or from one strong observation. Ungraded evidence (None) is never promoted by the
    noisy-OR rule; the user can keep it."""
    if strong_sessions >= max(min_observations, 2):
        return True  # never on one session alone: a single observation is what `latest` judges
    if evidence is None or evidence < promote_confidence:
        return False
    return observations >= min_observations or (latest is not None and latest >= promote_confidence)
