"""Injection: which bullets go back into Claude Code's context, and when.

SessionStart (startup / resume / clear) → a digest of the most valuable bullets, `<ace-playbook>`;
UserPromptSubmit → the best matches for the prompt, `<ace-patterns>`, without repeating bullets
already shown in this session (unless compaction wiped them from the context since);
PreToolUse on a file of another domain → that domain's bullets, `<ace-patterns-domain-shift>`;
PreCompact → pin what this session was shown; SessionStart(compact) → re-inject the pins,
`<ace-patterns-recalled>`. Every injection is recorded: that is `playbook_used` for learning.

Nothing is injected from a store whose lessons were screened under an older safety policy than
this code's (`screened`: one primary-key query); the hook starts the re-screen in the background
(`maintenance.maybe_start_rescreen`) and injects again once it has run.
"""

import re

from .. import log

# Compiled on first use (re caches it): only UserPromptSubmit needs it.
_TRIVIAL = (
    r"^\s*(?:hi|hello|hey|thanks?|thank you|thx|ok(?:ay)?|yes|no|yep|nope|sure|cool|great|nice|"
    r"continue|go on|go ahead|proceed|done|lgtm|ty)\W*$"
)
FILE_TOOLS = {"Read": "file_path", "Edit": "file_path", "Write": "file_path", "MultiEdit": "file_path",
              "NotebookEdit": "notebook_path", "Glob": "pattern", "Grep": "path"}


def skip_prompt(prompt: str) -> bool:
    """Prompts not worth a search: slash commands, `ace` commands, greetings and one-word replies."""
    text = prompt.strip()
    if not text or text.startswith("/") or re.match(r"^(?:ace|!ace)\b", text):
        return True
    return bool(re.match(_TRIVIAL, text, re.IGNORECASE)) or len(re.findall(r"\w+", text)) < 2


def _project_id(hook):
    store = hook.store()
    return store.project_id(hook.project.key) if store is not None else None


def _record(hook, label: str, shown: list[dict]) -> None:
    if not shown:
        return
    hook.store().record_injections(
        hook.session_id, _project_id(hook), label,
        [(b["id"], round(float(b.get("score") or 0.0), 4), rank) for rank, b in enumerate(shown, 1)], hook.now,
    )


def _shown_ids(hook) -> set[str]:
    """Bullets already in this session's context: shown since the last compaction."""
    store = hook.store()
    if not hook.session_id:
        return set()
    since = store.get_state(hook.session_id, "compacted_at")
    return {row["bullet_id"] for row in store.injected(hook.session_id, float(since) if since else None)}


def session_start(hook, source: str | None) -> str | None:
    from ..retrieval.render import render_digest, render_patterns
    from ..retrieval.search import top

    store, cfg = hook.store(), hook.cfg
    if source == "compact" and hook.session_id:
        store.set_state(hook.session_id, "compacted_at", repr(hook.now))
        pinned = [p["bullet_id"] for p in store.pins(hook.session_id, hook.now)]
        bullets = [b for b in store.get_bullets(pinned) if b["status"] == "active"]
        text, shown = render_patterns("ace-patterns-recalled", bullets, cfg["inject.recall_tokens"])
        _record(hook, "SessionStart:compact", shown)
        return text or None
    if hook.session_id and source != "clear":
        # A resumed conversation still holds its digest (since the last compaction): don't send
        # another one — it would repeat lessons, or pad the context with less valuable ones.
        since = store.get_state(hook.session_id, "compacted_at")
        # (after a compaction, the recalled block is that digest)
        if any(row["hook"].startswith("SessionStart")
               for row in store.injected(hook.session_id, float(since) if since else None)):
            return None
    in_context = _shown_ids(hook)  # e.g. the block recalled after a compaction
    bullets = [b for b in top(store, _project_id(hook), 40, cfg=cfg) if b["id"] not in in_context]
    text, shown = render_digest(bullets, cfg["inject.session_start_tokens"])
    _record(hook, "SessionStart", shown)
    return text or None


def prompt(hook, prompt_text) -> str | None:
    if not isinstance(prompt_text, str) or skip_prompt(prompt_text):
        return None
    from ..retrieval.render import render_patterns
    from ..retrieval.search import search

    store, cfg = hook.store(), hook.cfg
    hits = search(store, _project_id(hook), prompt_text, k=cfg["inject.prompt_k"], exclude_ids=_shown_ids(hook),
                  cfg=cfg)
    text, shown = render_patterns("ace-patterns", hits, cfg["inject.prompt_tokens"])
    _record(hook, "UserPromptSubmit", shown)
    if shown and hook.session_id and shown[0]["domains"]:
        store.set_state(hook.session_id, "domain", shown[0]["domains"][0])
    return text or None


def domain_shift(hook) -> str | None:
    """A block for the domain of the file this tool call touches, if it differs from the current."""
    tool_input = hook.payload.get("tool_input")
    field = FILE_TOOLS.get(hook.payload.get("tool_name"))
    path = tool_input.get(field) if field and isinstance(tool_input, dict) else None
    if not isinstance(path, str) or not path or not hook.session_id:
        return None
    # Only the part inside the project says something about the domain (not /home/me/work/…).
    root = hook.project.root.rstrip("/") + "/"
    if path.startswith(root):
        path = path[len(root):]
    store = hook.store()
    project_id = _project_id(hook)
    known = store.domain_counts(project_id)
    if not known:
        return None
    from ..playbook.domains import match_path, path_words

    match = match_path(path, list(known))
    if match is None:
        return None
    domain = match[0]
    if store.get_state(hook.session_id, "domain") == domain:
        return None
    store.set_state(hook.session_id, "domain", domain)
    from ..retrieval.render import render_patterns
    from ..retrieval.search import search

    cfg = hook.cfg
    query = " ".join(path_words(path) + domain.split("-"))
    hits = search(store, project_id, query, k=cfg["inject.domain_shift_k"], files=(path,),
                  domains_allowed=[domain], exclude_ids=_shown_ids(hook), threshold=0.0, cfg=cfg)
    text, shown = render_patterns("ace-patterns-domain-shift", hits, cfg["inject.domain_shift_tokens"],
                                  attrs={"domain": domain})
    _record(hook, "PreToolUse", shown)
    return text or None


def pin_for_compaction(hook) -> int:
    """Pin every bullet shown in this session so SessionStart(compact) can bring them back."""
    if not hook.session_id:
        return 0
    store = hook.store()
    # Most recent first: if the recall budget runs short, the digest's general bullets go before
    # the ones a prompt or a file brought in.
    shown = list(dict.fromkeys(row["bullet_id"] for row in reversed(store.injected(hook.session_id))))
    if shown:
        store.set_pins(hook.session_id, shown, hook.now, hook.cfg["inject.pin_hours"] * 3600)
    return len(shown)


def screened(hook) -> bool:
    """May the stored lessons be injected? Not while they were last screened under an older
    safety policy: an older ace-engine (or rule set) let through lessons today's rules flag, and
    they would reach the agent as they are. Then start the re-screen, detached, and say no."""
    from ..store.policy_version import POLICY_VERSION  # two constants, not the policy's rules

    if hook.store().policy_version() >= POLICY_VERSION:
        return True
    from .maintenance import maybe_start_rescreen

    maybe_start_rescreen()
    return False


def safely(hook, what: str, fn, *args, injects: bool = True):
    """Run an injection step (or, `injects=False`, another step that needs the store); any failure
    is logged and injects nothing (capture is unaffected). An injection step runs only on
    lessons screened under the current safety policy (`screened`)."""
    if (injects and not hook.cfg["inject.enabled"]) or hook.store() is None:
        return None
    try:
        if injects and not screened(hook):
            return None
        return fn(hook, *args)
    except Exception as exc:  # noqa: BLE001 — never let injection break the hook
        log.error(hook.event, f"{what} failed: {type(exc).__name__}: {exc}")
        return None
