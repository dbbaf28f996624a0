"""What people said, read for continuity: the gist of a request, and what a message leaves open.

* `gist(prompt)` — a request in the user's own words, one short line: the first line that says
  something (not a heading, a fence or a quote), or, in a long structured prompt (an issue, a
  ticket), its `Title:` / `Task:` field. Never rephrased: cut at a word with `…`.
* `continuation(prompt)` / `trivial(prompt)` — "continue", "go ahead" carry on the request
  before; "thanks", "hi" are no request at all.
* `user_deferred(prompt)` — the user parks work for later ("let's continue tomorrow with …").
* `open_statements(final)` — what the agent's last message leaves open: the items under a
  "Next steps" / "TODO" / "What you need to do now" heading, sentences saying something is still
  failing, left, pending or awaited (`next`); a closing question to the user (`waiting`); an
  announced action the turn ended on ("Let me remove the test files and submit again:",
  `stopped`). Negations ("nothing left", "no remaining issues") say nothing is open.

Everything here works on text that was already redacted and stripped of `<private>` spans at
capture. Pure string work, stdlib only; a few regex passes per message.
"""

from __future__ import annotations

import re
from typing import Any

__all__ = ["gist", "cut", "plain", "continuation", "trivial", "user_deferred", "open_statements", "closes"]

GIST_CHARS = 140
ITEM_CHARS = 200

_SPACE = re.compile(r"\s+")
_INLINE_HTML = re.compile(r"</?(?:sub|sup|b|i|em|strong|code|br|kbd|span|small)\s*/?>", re.IGNORECASE)
_MARKUP = re.compile(r"(\*\*|__|~~)")
_BULLET = re.compile(r"^\s*(?:[-*+•▶►]|\d+[.)]|\[[ xX]\])\s+")
_HEADING = re.compile(r"^\s*#{1,6}\s")
_TITLE_FIELD = re.compile(r"^\s*(?:[-*]\s*)?(?:\*\*)?(title|task|goal|summary|objective|request)(?:\*\*)?\s*:\s*(.+)$",
                          re.IGNORECASE)
_CONTINUE = re.compile(
    r"^\s*(?:please\s+)?(?:continue|go on|go ahead|keep going|carry on|proceed|resume|yes|yep|yeah|ok(?:ay)?|sure|"
    r"do it|sounds good|lgtm|next)\b[\w\s,.!]{0,40}$", re.IGNORECASE)
_TRIVIAL = re.compile(r"^\s*(?:hi|hello|hey|thanks?(?: you)?|thank you|thx|ty|cool|great|nice|good morning|"
                      r"good night|bye)\b[\s!.,:)]*$", re.IGNORECASE)
_DEFER = re.compile(
    r"\b(?:tomorrow|later today|later on|next time|next session|another session|for now|"
    r"(?:pick|take) (?:this|it|that) up|come back to|(?:continue|finish|resume) (?:this |it |that )?"
    r"(?:later|tomorrow|next)|still (?:need|have) to|left to do|TODO:|don't forget|do not forget|remind me)(?!\w)",
    re.IGNORECASE)
# A heading (or the label before a colon) that introduces what is left.
_OPEN_HEADING = re.compile(
    r"^(?:▶\s*)?(?:next(?: steps?| up| actions?)?|todo|to-?dos?|remaining(?: work| tasks| issues)?|left to do|"
    r"what'?s left|still to do|follow[- ]?ups?|open (?:issues|questions|items|points)|known issues|not (?:yet )?done|"
    r"what you (?:need|have) to do(?: now)?|pending|blocked|still failing|outstanding|caveats?)\b", re.IGNORECASE)
_OPEN_SENTENCE = re.compile(
    r"\b(?:TODO|FIXME|still (?:fail\w*|broken|need\w*|to do|missing|pending|open|red)|left to do|(?:is|are) left|"
    r"remains?\b|remaining|not (?:yet )?(?:done|implemented|fixed|finished|working|passing|committed|pushed)|"
    r"(?:haven't|have not|didn't|did not|couldn't|could not) (?:yet )?(?:fix|finish|implement|get to|run|test|"
    r"commit|push|resolve|verify)\w*|next,? (?:I|we|you)(?:'ll| will| should| need| can| could)|"
    r"need(?:s)? to (?!be sure)\w+|you(?:'ll| will| may| might) (?:need|want) to|should (?:still|also) |"
    r"blocked (?:on|by)|awaiting|waiting (?:on|for)|pending (?:review|merge|approval)|"
    r"ready to (?:commit|merge|push|deploy)|follow[- ]up)", re.IGNORECASE)
_NEGATED = re.compile(
    r"\b(?:no|nothing|none|zero|0|without any)\b[^.]{0,25}\b(?:left|remain\w*|failing|fail\w*|issues?|errors?|"
    r"pending|open|todo)\b|\ball (?:\w+ ){0,3}(?:pass\w*|green|done|complete\w*)\b|"
    r"\bnothing (?:else )?(?:left|to do)\b", re.IGNORECASE)
_DONE_ITEM = re.compile(r"^(?:I (?:already|have already)|already\b|done[.!:]|✓|✅|completed[.!:])", re.IGNORECASE)
_QUESTION_TO_USER = re.compile(
    r"\b(?:you|shall I|should I|want me|would you|do you|go ahead|okay|ok|proceed|confirm|which)\b[^?]*\?\s*$",
    re.IGNORECASE)
_ANNOUNCED = re.compile(
    r"^(?:(?:ok(?:ay)?|now|next|then|great|good|alright|perfect)[,!.]?\s+)*(?:let me|let's|let us|i'll|i will|"
    r"i'm going to|i am going to)\s+(?!know\b|help\b)(.+)$", re.IGNORECASE)
_CLOSED = re.compile(r"\b(?:all|everything)(?: is| are|'s)? (?:done|set|fixed|complete|finished|green|passing)\b",
                     re.IGNORECASE)
_ANNOUNCED_TAIL = re.compile(r"\b(?:and|so|then),? (?:I(?:'ll| will)(?: now)?|let me|let's) (?!know\b)(.+)$",
                             re.IGNORECASE)
_CODE_LINE = re.compile(r"[(){};=<>]|^\s*(?:\$ |import |from |def |func |class |const |let |var )")
_SENTENCE_END = re.compile(r"(?<=[.!?])(?<!e\.g\.)(?<!i\.e\.)(?<! vs\.)\s+(?=[\w`\"'(])")
_FENCE = re.compile(r"```.*?(?:```|$)", re.DOTALL)


def plain(text: str) -> str:
    """One line without markdown emphasis, inline HTML or list markers, whitespace collapsed."""
    line = _MARKUP.sub("", _BULLET.sub("", _HEADING.sub("", _INLINE_HTML.sub("", text))))
    return _SPACE.sub(" ", line).strip(" \t-–—:")


def cut(text: str, limit: int) -> str:
    """`text` on one line, at most `limit` characters, cut at a word with `…`."""
    one = _SPACE.sub(" ", text).strip()
    if len(one) <= limit:
        return one
    head = one[: limit - 1]
    space = head.rfind(" ")
    if space > limit * 0.6:
        head = head[:space]
    return head.rstrip(" ,;:-–—") + "…"


def _lines(text: str) -> list[str]:
    return [line for line in (text or "").splitlines() if line.strip()]


def gist(prompt: str, limit: int = GIST_CHARS) -> str:
    """The request in the user's words, one short line (see the module docstring)."""
    text = (prompt or "").strip()
    lines = _lines(_FENCE.sub(" ", text)) or _lines(text)
    if len(text) > 600:
        for line in lines[:80]:
            m = _TITLE_FIELD.match(line)
            if m and len(m.group(2).split()) >= 2:
                return cut(plain(m.group(2)), limit)
    for line in lines:
        stripped = line.strip()
        if _HEADING.match(stripped) or stripped.startswith((">", "|", "---", "<")):
            continue
        words = plain(stripped)
        if len(words.split()) >= 3 or (len(lines) == 1 and words):
            return cut(words, limit)
    return cut(plain(lines[0]) if lines else "", limit)


def continuation(prompt: str) -> bool:
    """A prompt that only carries on the request before ("continue implementation", "go ahead")."""
    text = (prompt or "").strip()
    return bool(text) and len(text) <= 60 and bool(_CONTINUE.match(text))


def trivial(prompt: str) -> bool:
    """A greeting or a thank-you: no request at all."""
    text = (prompt or "").strip()
    return not text or bool(_TRIVIAL.match(text))


def user_deferred(prompt: str) -> str | None:
    """The sentence of a prompt that parks work for later, or None."""
    text = (prompt or "").strip()
    if not text or not _DEFER.search(text):
        return None
    for sentence in _sentences(text):
        if _DEFER.search(sentence) and not _NEGATED.search(sentence):
            return cut(plain(sentence), ITEM_CHARS)
    return None


def _sentences(text: str) -> list[str]:
    out: list[str] = []
    for line in _lines(text):
        out.extend(s for s in _SENTENCE_END.split(plain(line)) if s.strip())
    return out


def _under_headings(lines: list[str]) -> tuple[list[str], set[int]]:
    """Items under (or right after the colon of) a heading that introduces what is left, and the
    indices of the lines they came from."""
    items: list[str] = []
    used: set[int] = set()
    i = 0
    while i < len(lines):
        label, _, rest = plain(lines[i]).partition(":")
        label = _SENTENCE_END.split(label)[-1]  # "Done. Next steps: …"
        heading = plain(lines[i])
        if _OPEN_HEADING.match(label.strip()) and (rest.strip() or len(heading) <= 60):
            used.add(i)
            if rest.strip() and len(label) <= 40:
                items.append(rest.strip())
            taken = 0
            j = i + 1
            while j < len(lines) and taken < 3:
                line = lines[j].strip()
                if line.startswith("---") or set(line) <= set("━─=-*_ "):
                    j += 1
                    if taken:
                        break
                    continue
                if _HEADING.match(line) or (taken and not _BULLET.match(line) and line.endswith(":")):
                    break
                text = plain(line)
                used.add(j)
                if text and not _DONE_ITEM.match(text):
                    items.append(text)
                    taken += 1
                j += 1
            i = j
            continue
        i += 1
    return items, used


def _prose_lines(text: str) -> list[str]:
    """The message's non-empty lines; inside a fenced block only those that don't look like code
    (a `key: value` report is read, `if x: # TODO` is not)."""
    out: list[str] = []
    fenced = False
    for line in _lines(text):
        if line.strip().startswith("```"):
            fenced = not fenced
            continue
        if not fenced or not _CODE_LINE.search(line):
            out.append(line)
    return out


def open_statements(final: str | None) -> dict[str, Any]:
    """{next: [short items], waiting: str | None, stopped: str | None} for an agent's last message."""
    lines = _prose_lines(final or "")
    items, used = _under_headings(lines)
    for n, line in enumerate(lines):
        if n in used:
            continue
        for sentence in _SENTENCE_END.split(plain(line)):
            if _OPEN_SENTENCE.search(sentence) and not _NEGATED.search(sentence):
                items.append(sentence)
    found: list[str] = []
    for item in items:
        short = cut(item, ITEM_CHARS)
        if short and short not in found and len(short.split()) >= 2:
            found.append(short)
    waiting = stopped = None
    last = plain(lines[-1]) if lines else ""
    if last.endswith("?") and _QUESTION_TO_USER.search(last):
        waiting = cut(last, ITEM_CHARS)
    else:
        sentences = _SENTENCE_END.split(last) if last else []
        final_sentence = sentences[-1] if sentences else ""
        m = _ANNOUNCED.match(final_sentence.strip()) or _ANNOUNCED_TAIL.search(final_sentence)
        if m and (final_sentence.rstrip().endswith((":", "...", "…")) or len(sentences) <= 3):
            stopped = cut(final_sentence.rstrip(" :.…"), ITEM_CHARS)
    found = [f for f in found if not (waiting and f.rstrip(".") in waiting) and not (stopped and stopped in f)]
    return {"next": found[:3], "waiting": waiting, "stopped": stopped}


def closes(final: str | None) -> bool:
    """Does a message say the work is done ("all done", "nothing left", "all tests pass")?"""
    text = final or ""
    return bool(_CLOSED.search(text) or _NEGATED.search(text))
