"""The quality filter every candidate lesson passes before the curator sees it, whichever
reflector proposed it. The playbook must not fill with junk: a lesson is kept only if it is

- specific: it names something concrete — a command, a file, an identifier, an error, a flag
  (`specificity` counts them; at least one is required, two when the lesson uses a stock phrase
  like "make sure to" or "be careful");
- not a platitude ("be careful", "test your code", "follow best practices");
- not the task restated (most of its words are the prompt's words);
- a lesson, not a dump: short enough to inject, mostly words, not a wall of output;
- whole: nothing in it the redactor would cut (a secret, or the marker of one already cut) —
  such a lesson is dropped, never stored with a hole in it — and no word cut by an ellipsis.

Cost: a few regex passes and one `redact` of the lesson (≤ MAX_CHARS): well under a millisecond.
"""

import re

from ..redact.redactor import redact
from .similarity import tokens

MIN_CHARS = 25
MAX_CHARS = 500

_CUT_WORD = re.compile(r"\w\u2026")
_REDACTED = re.compile(r"\[REDACTED\b", re.IGNORECASE)  # the redactor's marker, copied by a model
_GENERIC = re.compile(
    r"\b(?:be careful|make sure(?: to)?|remember to|don't forget|do not forget|pay (?:close )?attention|"
    r"double[- ]check|always test|test (?:your|the) code|best practices?|good practices?|it is important|"
    r"it's important|keep in mind|consider (?:using|adding)|try to|write clean|follow (?:the )?(?:conventions|"
    r"guidelines)|"
    r"as needed|if necessary|when appropriate|handle errors? (?:properly|gracefully)|check (?:for )?errors)\b",
    re.IGNORECASE)
_PLATITUDE = re.compile(
    r"^(?:always |never )?(?:be careful|test (?:your|the) code|write (?:good|clean) code|follow best practices|"
    r"read the (?:docs|documentation|error(?: message)?)|check the logs?|use version control|commit often)\W*$",
    re.IGNORECASE)
_SPECIFIC = [
    re.compile(r"`[^`\n]{2,}`"),                                        # code spans
    re.compile(r"(?<![\w/])(?:[\w.-]+/)+[\w.-]+\.\w{1,8}\b"),           # paths with a directory
    re.compile(r"\b[\w-]+\.(?:py|pyi|js|mjs|cjs|ts|tsx|jsx|rs|go|rb|java|kt|c|h|cpp|hpp|cs|php|sh|toml|ya?ml|json|"
               r"ini|cfg|md|lock|sql|html|css|scss|txt|env)\b"),         # file names
    re.compile(r"(?<![\w-])--?[a-zA-Z][\w-]+"),                            # flags
    re.compile(r"\b[A-Z]\w*(?:Error|Exception)\b|\b(?:TS|E)\d{3,5}\b|\bexit code \d+"),  # errors
    re.compile(r"\b[a-z]+_[a-z0-9_]+\b|\b[a-z]+[A-Z]\w+\b|\b\w+\(\)"),    # identifiers
    re.compile(r"\b[a-z]\w*\.[A-Z]\w*\b|\b[A-Z][a-z]+[A-Z]\w*\b"),     # strings.Contains, UnmarshalJSON
    re.compile(r"\b(?:pytest|tox|nox|ruff|mypy|pyright|black|flake8|pylint|npm|pnpm|yarn|npx|jest|vitest|eslint|"
               r"prettier|tsc|cargo|rustc|clippy|go|make|cmake|docker|kubectl|pip|uv|poetry|git|gradle|mvn|"
               r"node|deno|bun|alembic|django|flask|fastapi|sqlalchemy|pydantic|react|webpack|vite)\b"),  # tools
]


def specificity(content: str) -> int:
    """How many concrete things (commands, files, identifiers, errors, flags) a lesson names."""
    return sum(len(rx.findall(content)) for rx in _SPECIFIC)


def holds_secret(content: str) -> str | None:
    """Why a lesson can't be stored whole: the redactor would cut a secret out of it, or it copies
    the marker of one already cut. A lesson kept as "signs through 1Password: [REDACTED:env-secret]"
    names what it can't say: the secret stays out, and so does the lesson (the curator checks this
    before anything else, a quarantined lesson included)."""
    if _REDACTED.search(content) or redact(content) != content:
        return "holds a secret (it would be stored with a redacted span)"
    return None


def check(content: str, task: str | None = None) -> str | None:
    """None when the lesson is worth keeping, else why not."""
    text = " ".join(str(content).split())
    if len(text) < MIN_CHARS:
        return f"too short ({len(text)} chars)"
    if len(text) > MAX_CHARS:
        return f"too long ({len(text)} chars; a lesson is at most {MAX_CHARS})"
    letters = sum(c.isalpha() for c in text)
    if letters < 0.5 * len(text):
        return "mostly symbols or numbers (output, not a lesson)"
    if _PLATITUDE.match(text):
        return "a platitude"
    secret = holds_secret(text)
    if secret:
        return secret
    if _CUT_WORD.search(text):  # `git commit -m "$(cat <<'EOF'…`: a step line's cut copied, not a rule
        return "text cut mid-word (an ellipsis right after a word)"
    if task:
        lesson, prompt = tokens(text), tokens(task)
        # Echoing a short prompt is not learning; a long issue text, though, names most of what
        # any good lesson about it says (the function, the error): that alone proves nothing.
        if len(lesson) >= 3 and len(lesson & prompt) / len(lesson) >= 0.8 and len(prompt) <= 3 * len(lesson):
            return "restates the task"
    score = specificity(text)
    if score == 0:
        return "not specific: names no command, file, identifier or error"
    if _GENERIC.search(text) and score < 2:
        return "generic advice (stock phrase with too little that is specific)"
    return None
