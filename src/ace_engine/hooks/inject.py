"""Injection: which bullets go back into Claude Code's context, and when.

SessionStart (startup / resume / clear) → a digest of the bullets most likely needed (`digest.py`:
this repository's recent failures and open ends first), `<ace-playbook>`,
on startup and clear after where the last sessions left off, `<ace-recent-context>` (continuity/);
UserPromptSubmit → the best matches for the prompt, `<ace-patterns>`, without repeating bullets
already shown in this session (unless compaction wiped them from the context since);
PreToolUse on a file of another domain → that domain's bullets, `<ace-patterns-domain-shift>`;
PreCompact → pin what this session was shown; SessionStart(compact) → re-inject the pins,
`<ace-patterns-recalled>`, with the recent context this session was shown. Every injection is
recorded: that is `playbook_used` for learning.

Nothing is injected into a session an experiment holds out (`held_out`, experiment/arms.py: the
one check, here, for every hook and agent), so `ace report` can compare sessions with and without.

Nothing is injected from a store whose lessons were screened under an older safety policy than
this code's (`screened`: one primary-key query); the hook starts the re-screen in the background
(`maintenance.maybe_start_rescreen`) and injects again once it has run.

Every step takes an explicit `Context` (store, config, project, session id, time) — not the hook —
so the CLI and tests can run the same policy. Cost: stdlib at import; retrieval and rendering are
imported by the steps that use them, one store query or a search each.
"""

import re

from ..capture import tools
from ..core import log

TYPE_CHECKING = False  # not `typing.TYPE_CHECKING`: the hooks must not import `typing` (~3 ms)
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping, Sequence
    from typing import Any, TypeVar

    from ..core._types import Bullet
    from ..core.config import Config
    from ..core.project import Project
    from ..store.interfaces import Store

    T = TypeVar("T")

# Compiled on first use (re caches it): only UserPromptSubmit needs it.
_TRIVIAL = (
    r"^\s*(?:hi|hello|hey|thanks?|thank you|thx|ok(?:ay)?|yes|no|yep|nope|sure|cool|great|nice|"
    r"continue|go on|go ahead|proceed|done|lgtm|ty)\W*$"
)


class Context:
    """What an injection step works with: the open store, the effective config, the project, the
    session (None: no session, e.g. the CLI; nothing is remembered per session then), the time,
    and who asks (`source`: the hook event, or e.g. "cli", for the log)."""

    __slots__ = ("store", "cfg", "project", "session_id", "now", "source", "_project_id")

    def __init__(self, store: "Store", cfg: "Config", project: "Project", session_id: str | None, now: float,
                 source: str = "cli"):
        self.store = store
        self.cfg = cfg
        self.project = project
        self.session_id = session_id
        self.now = now
        self.source = source
        self._project_id: int | None = None

    @property
    def project_id(self) -> int | None:
        """The project's id in the store (looked up once; None before its first record)."""
        if self._project_id is None:
            self._project_id = self.store.project_id(self.project.key)
        return self._project_id


def skip_prompt(prompt: str) -> bool:
    """Prompts not worth a search: slash commands, `ace` commands, greetings and one-word replies."""
    text = prompt.strip()
    if not text or text.startswith("/") or re.match(r"^(?:ace|!ace)\b", text):
        return True
    return bool(re.match(_TRIVIAL, text, re.IGNORECASE)) or len(re.findall(r"\w+", text)) < 2


def _record(ctx: Context, label: str, shown: "Sequence[Mapping[str, Any]]") -> None:
    if not shown:
        return
    ctx.store.record_injections(
        ctx.session_id, ctx.project_id, label,
        [(b["id"], round(float(b.get("score") or 0.0), 4), rank) for rank, b in enumerate(shown, 1)], ctx.now,
    )


def _shown_ids(ctx: Context) -> set[str]:
    """Bullets already in this session's context: shown since the last compaction."""
    if not ctx.session_id:
        return set()
    since = ctx.store.get_state(ctx.session_id, "compacted_at")
    return {row["bullet_id"] for row in ctx.store.injected(ctx.session_id, float(since) if since else None)}


def caveated(ctx: Context, bullets: "Sequence[Bullet]") -> "list[Bullet]":
    """`bullets`, each whose anchor changed carrying its caveat (`playbook/staleness.py`,
    `inject.recheck` = caveat), without those whose anchor is gone (a check that ran out of time
    archives them next): one primary-key read for the few lessons a block may show."""
    found = ctx.store.flagged([b["id"] for b in bullets]) if bullets else {}
    out: list[Bullet] = []
    for b in bullets:
        flags = found.get(b["id"])
        if not flags:
            out.append(b)
        elif not any(state == "gone" for state, _ in flags):
            out.append({**b, "caveat": "; ".join(dict.fromkeys(d for _, d in flags))[:300]})
    return out


def session_start(ctx: Context, source: str | None) -> str | None:
    """SessionStart: the recent-context block (startup, clear) and the digest, within one budget
    (`inject.session_start_tokens`; the block takes at most `continuity.recent_tokens` of it,
    the digest the rest); after a compaction (`source` "compact") the pinned bullets, and the
    recent-context block again if this session was shown one, within `inject.recall_tokens`."""
    from ..retrieval.render import MAX_CHARS, render_digest, render_patterns
    from ..retrieval.search import top

    store, cfg, session_id = ctx.store, ctx.cfg, ctx.session_id
    if source == "compact" and session_id:
        store.set_state(session_id, "compacted_at", repr(ctx.now))
        recent, used = _recent_context(ctx, cfg["inject.recall_tokens"], recall=True)
        pinned = [p["bullet_id"] for p in store.pins(session_id, ctx.now)]
        bullets = caveated(ctx, [b for b in store.get_bullets(pinned) if b["status"] == "active"])
        text, shown = render_patterns("ace-patterns-recalled", bullets,
                                      _rest(cfg["inject.recall_tokens"], used, recent, MAX_CHARS))
        _record(ctx, "SessionStart:compact", shown)
        return _joined(recent, text)
    if session_id and source != "clear":
        # A resumed conversation still holds its digest (since the last compaction): don't send
        # another one — it would repeat lessons, or pad the context with less valuable ones.
        since = store.get_state(session_id, "compacted_at")
        # (after a compaction, the recalled block is that digest)
        if any(row["hook"].startswith("SessionStart")
               for row in store.injected(session_id, float(since) if since else None)):
            return None
    # A resumed conversation holds the recent context it started with; startup and clear get it.
    recent, used = ("", 0) if source == "resume" else _recent_context(ctx, cfg["inject.session_start_tokens"])
    in_context = _shown_ids(ctx)  # e.g. the block recalled after a compaction
    from .digest import select, unremembered  # recent failures and open ends first; not what MEMORY.md says

    bullets = select(store, ctx.project_id, session_id, top(store, ctx.project_id, 40, cfg=cfg), in_context)
    bullets = caveated(ctx, unremembered(bullets, ctx.project.main_root, ctx.project.root))
    text, shown = render_digest(bullets, _rest(cfg["inject.session_start_tokens"], used, recent, MAX_CHARS))
    _record(ctx, "SessionStart", shown)
    return _joined(recent, text)


# The learning notice (`learning_notice`): when the project's candidates were last announced, kept
# under a per-project key of `session_state` (a primary-key read; gc drops only real sessions' rows).
NOTICE_KEY = "candidates_announced_at"
NOTICE_SCAN = 50  # newest candidates looked at: a notice says "N" up to this, "N+" beyond


def notice_owner(project_id: int) -> str:
    return f"ace:project:{project_id}"


def learning_notice(ctx: Context, source: str | None) -> str | None:
    """SessionStart (startup, clear): one line for the user (`systemMessage`) when the learner has
    added lessons to this project since the last such line: how many, how many of them wait to be
    seen again before they are injected (candidates), and how to see and keep them. A lesson
    backed by strong evidence is in use at once, and the user hears of it here too.
    Said once: the time it was said is recorded, and only newer lessons are announced next time.
    Learning runs in a worker after Stop, so this is the first moment that knows what the last
    session taught (`integrations/statusline.py` shows the same count while a session runs).
    Cost: one primary-key read and one query over this project's active and candidate lessons
    (the status index), at most `NOTICE_SCAN` rows, whose provenance is read for its source."""
    if source not in ("startup", "clear") or ctx.project_id is None:
        return None
    owner = notice_owner(ctx.project_id)
    try:
        since = float(ctx.store.get_state(owner, NOTICE_KEY) or 0.0)
    except ValueError:
        since = 0.0
    newest = ctx.store.list_bullets(ctx.project_id, include_global=False, statuses=("active", "candidate"),
                                    order="recent", limit=NOTICE_SCAN)
    fresh = [b for b in newest if b["created_at"] > since and _learned(b)]
    if not fresh:
        return None
    ctx.store.set_state(owner, NOTICE_KEY, repr(ctx.now))
    waiting = [b for b in fresh if b["status"] == "candidate"]
    count = f"{len(fresh)}{'+' if len(newest) == NOTICE_SCAN and len(fresh) == len(newest) else ''}"
    said = f"ace learned {count} {'lesson' if len(fresh) == 1 else 'lessons'} from your last sessions"
    if not waiting:
        return f"{said}, in use from now on; `ace patterns` lists {'it' if len(fresh) == 1 else 'them'}."
    one = len(waiting) == 1
    return (f"{said}; {len(waiting) if len(waiting) < len(fresh) else ('it' if one else 'they')} "
            f"{'waits' if one else 'wait'} to be seen again before {'it is' if one else 'they are'} used "
            f"(seen again in a later session — the same failure and fix, say — a lesson becomes active). "
            f"`ace patterns` lists {'it' if len(fresh) == 1 else 'them'}; `ace keep {waiting[0]['id']}` keeps "
            f"{'it' if one else 'one'} now.")


def _learned(bullet: "Mapping[str, Any]") -> bool:
    """Did the learner write this lesson (not the user, an import or a teammate)?"""
    prov = bullet.get("provenance")
    if isinstance(prov, str):  # a row whose JSON the store left as text
        import json  # already loaded by the hook's own output

        try:
            prov = json.loads(prov)
        except ValueError:
            return False
    return isinstance(prov, dict) and prov.get("source") == "learning"


def _recent_context(ctx: Context, total_tokens: int, *, recall: bool = False) -> tuple[str, int]:
    """The `<ace-recent-context>` block (continuity/recent.py) within its share of `total_tokens`,
    and the tokens it takes; ('', 0) when there is nothing to say. Its failure is logged and
    costs only the block: the lessons are still injected."""
    from .. import continuity

    try:
        budget = min(int(continuity.setting(ctx.cfg, "continuity.recent_tokens")), int(total_tokens))
        if recall:
            from ..continuity import recent

            text, ids = recent.recalled(ctx.store, ctx.cfg, ctx.session_id, ctx.now, budget)
        else:
            rows = continuity.candidates(ctx.store, ctx.cfg, ctx.project_id, ctx.session_id, ctx.now)
            if not rows or budget <= 0:
                return "", 0
            from ..continuity import recent

            text, ids = recent.block(rows, ctx.cfg, ctx.project.root, ctx.now, budget)
            if ids and ctx.session_id:
                ctx.store.set_state(ctx.session_id, recent.STATE_KEY, " ".join(ids))
    except Exception as exc:  # noqa: BLE001 — the recent context never costs the lessons
        log.error(ctx.source, f"recent-context injection failed: {type(exc).__name__}: {exc}")
        return "", 0
    if not text:
        return "", 0
    from ..retrieval.render import estimate_tokens

    return text, estimate_tokens(text)


def _rest(total_tokens: int, used: int, first: str, max_chars: int) -> int:
    """What is left of the budget after the first block, so that both stay under Claude Code's
    cap together (a token is at most `core.fmt.CHARS_PER_TOKEN` characters of an estimated block)."""
    if not first:
        return total_tokens
    from ..core.fmt import CHARS_PER_TOKEN

    return max(0, min(total_tokens - used, int((max_chars - len(first) - 2) / CHARS_PER_TOKEN)))


def _joined(*blocks: str) -> str | None:
    return "\n\n".join(b for b in blocks if b) or None


def prompt(ctx: Context, prompt_text: str | None) -> str | None:
    """UserPromptSubmit: the best matches for the prompt not yet shown in this session."""
    if not prompt_text or skip_prompt(prompt_text):
        return None
    from ..retrieval.render import render_patterns
    from ..retrieval.search import search

    store, cfg = ctx.store, ctx.cfg
    hits = search(store, ctx.project_id, prompt_text, k=cfg["inject.prompt_k"], exclude_ids=_shown_ids(ctx),
                  cfg=cfg)
    text, shown = render_patterns("ace-patterns", caveated(ctx, hits), cfg["inject.prompt_tokens"])
    _record(ctx, "UserPromptSubmit", shown)
    if shown and ctx.session_id and shown[0]["domains"]:
        store.set_state(ctx.session_id, "domain", shown[0]["domains"][0])
    return text or None


def domain_shift(ctx: Context, tool_name: str | None, tool_input: object) -> str | None:
    """A block for the domain of the file this tool call touches, if it differs from the current."""
    path = tools.path_of(tool_name, tool_input) if tool_name in tools.SHIFT_TOOLS else None
    if not path or not ctx.session_id:
        return None
    # Only the part inside the project says something about the domain (not /home/me/work/…).
    root = ctx.project.root.rstrip("/") + "/"
    if path.startswith(root):
        path = path[len(root):]
    store = ctx.store
    known = store.domain_counts(ctx.project_id)
    if not known:
        return None
    from ..playbook.domains import match_path, path_words

    match = match_path(path, list(known))
    if match is None:
        return None
    domain = match[0]
    if store.get_state(ctx.session_id, "domain") == domain:
        return None
    store.set_state(ctx.session_id, "domain", domain)
    from ..retrieval.render import render_patterns
    from ..retrieval.search import search

    cfg = ctx.cfg
    query = " ".join(path_words(path) + domain.split("-"))
    hits = search(store, ctx.project_id, query, k=cfg["inject.domain_shift_k"], files=(path,),
                  domains_allowed=[domain], exclude_ids=_shown_ids(ctx), threshold=0.0, cfg=cfg)
    text, shown = render_patterns("ace-patterns-domain-shift", caveated(ctx, hits),
                                  cfg["inject.domain_shift_tokens"],
                                  attrs={"domain": domain})
    _record(ctx, "PreToolUse", shown)
    return text or None


def pin_for_compaction(ctx: Context) -> int:
    """Pin every bullet shown in this session so SessionStart(compact) can bring them back."""
    if not ctx.session_id:
        return 0
    # Most recent first: if the recall budget runs short, the digest's general bullets go before
    # the ones a prompt or a file brought in.
    shown = list(dict.fromkeys(row["bullet_id"] for row in reversed(ctx.store.injected(ctx.session_id))))
    if shown:
        ctx.store.set_pins(ctx.session_id, shown, ctx.now, ctx.cfg["inject.pin_hours"] * 3600)
    return len(shown)


def held_out(ctx: Context) -> bool:
    """Is this session in the holdout of a running experiment (`inject.holdout`)? Then no hook
    injects anything into it; capture and learning go on. Off (the default), no store read."""
    if not ctx.cfg["inject.holdout"]:
        return False
    from ..experiment.arms import HOLDOUT, arm_for

    return arm_for(ctx.store, ctx.cfg, ctx.session_id, ctx.project_id, ctx.now, ctx.source) == HOLDOUT


def screened(ctx: Context) -> bool:
    """May the stored lessons be injected? Not while they were last screened under an older
    safety policy: an older ace-engine (or rule set) let through lessons today's rules flag, and
    they would reach the agent as they are. Then start the re-screen, detached, and say no."""
    from ..store.policy_version import POLICY_VERSION  # two constants, not the policy's rules

    if ctx.store.policy_version() >= POLICY_VERSION:
        return True
    from .maintenance import maybe_start_rescreen

    maybe_start_rescreen()
    return False


def safely(ctx: Context | None, what: str, fn: "Callable[..., T]", *args: object,
           injects: bool = True) -> "T | None":
    """Run `fn(ctx, *args)`, an injection step (or, `injects=False`, another step that needs the
    store); None without a context (the store could not be opened). Any failure is logged and
    injects nothing (capture is unaffected). An injection step runs only when injection is
    enabled, in a session not held out by a running experiment (`held_out`), and on lessons screened
    under the current safety policy (`screened`)."""
    if ctx is None or (injects and not ctx.cfg["inject.enabled"]):
        return None
    try:
        if injects and (held_out(ctx) or not screened(ctx)):
            return None
        return fn(ctx, *args)
    except Exception as exc:  # noqa: BLE001 — never let injection break the hook
        log.error(ctx.source, f"{what} failed: {type(exc).__name__}: {exc}")
        return None
