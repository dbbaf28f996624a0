"""Does a lesson carry a secret? The lesson safety policy's `contains_secret` (safety.py re-exports it).

A lesson is held for review when `redact.redactor` would change it because of a secret in it: a
token format (API keys, private keys, JWTs, passwords in URLs…) always counts; the redactor's
`KEY: value` guess counts only when the value looks like a credential (see `contains_secret`).
Kept apart from safety.py's rules only for length: it is the same policy, changed and reviewed with
it (a change here that can flag more lessons bumps POLICY_VERSION too).

Cost: imports only `re` (the redactor on first call); a call is one redaction of the text, plus a
scan of its markers when it changed.
"""

from __future__ import annotations

import re

# Patterns as text: `re` compiles them on the first call (and caches them), never at import (hooks import this).
_MARKER = r"\[REDACTED:([\w-]+)\]"
_KEY_VALUE_KINDS = ("env-secret", "secret-field")  # `KEY: value` guesses; everything else is a token format
_PASSWORD_KEY = (r"(?:passw(?:or)?d|passphrase|secret(?:_?key)?|api_?key|token)$")


def contains_secret(text: str) -> bool:
    """Would `redact.redactor` change this lesson because of a secret in it?

    Token formats (API keys, private keys, JWTs, passwords in URLs…) always count. The
    `KEY: value` rule is a guess made to be safe in captured output, and in prose it fires on
    words ("the fix in auth.py: the…"), so a value it redacted counts only if it looks like a
    credential — one word of 8+ characters mixing letters and digits, or of 20+ — or if its key
    is a password / secret / token / API key name and the value is one word of 6+.
    """
    from ..redact.redactor import redact  # first use only

    red = redact(text)
    if red == text:
        return False
    pieces = re.split(_MARKER, red)  # literal, kind, literal, kind, …, literal
    if any(kind not in _KEY_VALUE_KINDS for kind in pieces[1::2]):
        return True
    pos = len(pieces[0])
    for i in range(1, len(pieces), 2):
        after = pieces[i + 1]
        end = text.find(after, pos) if after else len(text)
        value = text[pos:end if end >= 0 else len(text)].strip("'\"` ")
        # The trailing word before the secret (the pattern matches every string: `*` on both parts).
        key_match = re.search(r"([\w.-]*)[\W]*$", pieces[i - 1])
        key = key_match.group(1).lower() if key_match else ""
        if _credential_like(value) or (re.search(_PASSWORD_KEY, key) and len(value) >= 6 and " " not in value):
            return True
        pos = (end if end >= 0 else len(text)) + len(after)
    return False


def _credential_like(value: str) -> bool:
    if not value or any(c.isspace() for c in value):
        return len(value) >= 20 and not any(c.isspace() for c in value)
    has_digit = any(c.isdigit() for c in value)
    has_alpha = any(c.isalpha() for c in value)
    return (len(value) >= 8 and has_digit and has_alpha) or len(value) >= 20
