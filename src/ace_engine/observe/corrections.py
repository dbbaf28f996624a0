"""A user's correction in a prompt — "no, use pnpm instead of npm", "don't touch generated/",
"always run ruff before committing" — turned into the lesson it teaches.

Such a prompt is worth learning even when the turn itself does little: the gates let it through.

Only the user's own words count: the caller passes real user prompts (`observe/transcript.py`
keeps tool results, injected context and other senders out of them), and what the prompt quotes —
a fenced block, `>` lines, a tagged block such as `<tool_result>…</tool_result>` — is someone
else's text pasted in, never the user's rule (`unquoted`).
"""

import re

_LEAD = re.compile(r"^\s*(?:no|nope|wrong|not that|stop|wait|actually|careful|hmm|ugh)\b[\s,.!:;—-]*", re.IGNORECASE)
_RULE = re.compile(
    r"(?P<rule>\b(?:(?:please\s+)?(?:use|run|call|prefer|try)\s+.{2,120}?\s+(?:instead of|not|rather than)\s+.{2,80}?"
    r"|(?:don't|do not|never|stop)\s+(?:use|run|call|touch|edit|modify|change|commit|push|add|delete|remove|import|"
    r"write)\s+.{2,120}?"
    r"|always\s+(?:use|run|call|add|write|keep|put)\s+.{2,120}?"
    r"|(?:we|this project|this repo)\s+(?:use|uses|run|runs)\s+.{2,80}?\s+(?:not|instead of|rather than)\s+.{2,80}?))"
    r"(?:[.!?;\n]|$)", re.IGNORECASE)


_FENCED = re.compile(r"(`{3,}|~{3,})[^\n]*\n.*?(?:\n\1|\Z)", re.S)
_QUOTED_LINE = re.compile(r"^[ \t]*>.*$", re.M)
_TAGGED = re.compile(r"<([A-Za-z][\w-]*)(?:\s[^>]*)?>.*?</\1\s*>", re.S)


def unquoted(prompt: str) -> str:
    """The prompt without what it quotes: fenced blocks, `>` lines, tagged blocks (module doc)."""
    text = _FENCED.sub(" ", str(prompt))
    text = _TAGGED.sub(" ", text)
    return _QUOTED_LINE.sub(" ", text)


def correction(prompt: str | None) -> str | None:
    """The rule a corrective prompt states, as a sentence; None when the prompt isn't one.

    Only prompts that open like a correction ("no, …", "actually …") or state a rule outright
    ("don't …", "always …", "use X instead of Y") count; questions don't.
    """
    if not prompt:
        return None
    text = " ".join(unquoted(str(prompt)).split())[:600]
    if text.endswith("?"):
        return None
    opened = _LEAD.match(text)
    body = text[opened.end():] if opened else text
    m = _RULE.search(body)
    if not m or (not opened and m.start() > 0 and not re.match(r"^(?:please\s+)?(?:don't|do not|never|always|use|we|"
                                                               r"this)", body, re.I)):
        return None
    rule = m.group("rule").strip().rstrip(".!;")
    return rule[0].upper() + rule[1:]
