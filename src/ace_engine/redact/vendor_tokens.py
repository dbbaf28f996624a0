"""Vendor tokens by their prefix (Stripe, SendGrid, Twilio, Shopify, Telegram, Vault, PyPI, Docker
Hub, Slack apps, Google OAuth, Groq, …) and long random values assigned to a name, for :mod:`redactor`.

Contract: `vendor_tokens(text)` returns `text` with each such value replaced by
``[REDACTED:<kind>]``, or the very same object when it found nothing. Nothing here matches a
marker, so it is idempotent. `_random_looking` (long, mixed, high entropy: not a word, path, digest
or UUID) and `_NOT_SECRET_NAMES` are shared with :mod:`key_material`.

Cost: imports only ``re`` (and :mod:`spans`, :mod:`rule_table_scan` for `entropy`); patterns
compile on first use. ONE regex scan for "a separator followed by ten alphanumerics" (~70 µs per
16 KB of typical tool output, measured; cheaper than a ``str.find`` per vendor prefix, ~10 µs
each); Python work only at the rare hits.

Sources of the formats: the public rule sets of gitleaks and detect-secrets (prefixes, lengths,
the entropy idea), re-expressed here; no code is copied.
"""

import re

from .rule_table_scan import entropy
from .spans import marker, rx

# -- vendor tokens -------------------------------------------------------------------------------

# Prefixed formats (gitleaks / vendor docs).  Every one has a separator ('_' '-' '.' ':') followed
# by a run of at least ten alphanumerics somewhere in it (near-certain for random bodies), which
# is what the scan looks for; the whole token around a hit is then matched against this.
_VENDOR = (
    r"(?:(?<![A-Za-z0-9])|(?<=/bot))(?:"  # api.telegram.org/bot<token>/sendMessage
    r"(?P<stripe>(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,}|whsec_[A-Za-z0-9+/=]{24,})"
    r"|(?P<sendgrid>SG\.[\w-]{16,32}\.[\w-]{16,64})"
    r"|(?P<shopify>shp(?:at|ca|pa|ss)_[a-fA-F0-9]{32})"
    r"|(?P<telegram>[0-9]{5,16}:AA[A-Za-z0-9_-]{30,40})"
    r"|(?P<vault>hv[sbr]\.[A-Za-z0-9_-]{24,})"
    r"|(?P<pypi>pypi-AgEIcHlwaS5vcmc[A-Za-z0-9_-]{30,})"
    r"|(?P<dockerhub>dckr_pat_[A-Za-z0-9_-]{20,})"
    r"|(?P<linear>lin_(?:api|oauth)_[A-Za-z0-9]{40,})"
    r"|(?P<doppler>dp\.(?:pt|st|ct|sa|scim|audit)\.[A-Za-z0-9]{40,})"
    r"|(?P<gitlab>(?:glpat|glrt|gldt|glptt|glft|glsoat|glcbt|gloas|glimt|glagent)-[A-Za-z0-9_-]{20,})"
    r"|(?P<npm>npm_[A-Za-z0-9]{36,})"
    r"|(?P<huggingface>(?:hf_|api_org_)[A-Za-z0-9]{30,})"
    r"|(?P<github>gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{30,})"
    r"|(?P<slack>xox[abposre]-[A-Za-z0-9-]{10,}|xoxe\.xox[bp]-[A-Za-z0-9-]{10,}"
    r"|xapp-[0-9]-[A-Za-z0-9-]{20,})"
    # Google OAuth client secrets, Groq, Tailscale (auth, api, client, scim, webhook and
    # the older `tskey-<hex>`), LangSmith personal / service keys, Mailgun's `key-<32 hex>`.
    r"|(?P<google_oauth>GOCSPX-[A-Za-z0-9_-]{20,})"
    r"|(?P<groq>gsk_[A-Za-z0-9]{32,})"
    r"|(?P<tailscale>tskey-[A-Za-z0-9-]{16,})"
    r"|(?P<langsmith>lsv2_(?:pt|sk)_[A-Za-z0-9_]{20,})"
    r"|(?P<mailgun>key-[0-9a-f]{32})"
    # SonarQube / SonarCloud user, project and global analysis tokens (`squ_`, `sqp_`, `sqa_` + 40 hex).
    r"|(?P<sonarqube>sq[upa]_[0-9a-f]{40})"
    r")(?![A-Za-z0-9])"
)
# Literal pieces one of which every `_VENDOR` alternative contains: a token holding none of them
# is not matched against `_VENDOR` at all (compiling it costs a hook ~0.8 ms; most runs hold no
# such token).
_VENDOR_NEEDLES = ("sk_", "rk_", "whsec_", "SG.", "shp", ":AA", "hvs.", "hvb.", "hvr.", "pypi-", "dckr_pat_",
                   "lin_", "dp.", "gl", "npm_", "hf_", "api_org_", "gh", "github_pat_", "xox", "xapp-",
                   "GOCSPX-", "gsk_", "tskey-", "lsv2_", "key-", "squ_", "sqp_", "sqa_")
_KIND = {
    "stripe": "stripe-key", "sendgrid": "sendgrid-key", "shopify": "shopify-token",
    "telegram": "telegram-token", "vault": "vault-token", "pypi": "pypi-token",
    "dockerhub": "dockerhub-token", "linear": "linear-key", "doppler": "doppler-token",
    "gitlab": "gitlab-token", "npm": "npm-token", "huggingface": "huggingface-token",
    "github": "github-token", "slack": "slack-token",
    "google_oauth": "google-oauth-secret", "groq": "groq-key", "tailscale": "tailscale-key",
    "langsmith": "langsmith-key", "mailgun": "mailgun-key", "sonarqube": "sonarqube-token",
}
# Prefixes without a separator, found with str.find: (needle, pattern, kind).
_BARE = (
    ("SK", r"(?<![A-Za-z0-9])SK[0-9a-fA-F]{32}(?![A-Za-z0-9])", "twilio-key"),
    ("dapi", r"(?<![A-Za-z0-9])dapi[a-f0-9]{32}(?:-[0-9])?(?![A-Za-z0-9])", "databricks-token"),
    ("GR1348941", r"GR1348941[A-Za-z0-9_-]{20,}", "gitlab-token"),
    # Google OAuth refresh tokens: `1//0` then base64url (its `/` and lack of a separator keep it
    # from the scan above).
    ("1//0", r"(?<![A-Za-z0-9/])1//0[A-Za-z0-9_-]{20,}", "google-refresh-token"),
)
# What a token (or KEY=token) is made of, for walking its edges.
_WORD = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.:+/=-")

# Assignment names that make a long random value a secret even though the name holds none of
# the usual secret words; and names whose values are identifiers, digests or paths.
_HINTS = ("key", "salt", "seed", "sign", "sig", "cookie", "session", "dsn", "conn", "cred",
          "hmac", "cipher", "crypt", "jwt", "license", "webhook", "private", "pass")
_NOT_SECRET_NAMES = ("id", "uuid", "hash", "sha", "digest", "checksum", "integrity", "etag",
                     "version", "commit", "ref", "path", "url", "uri", "name", "file", "dir",
                     "type", "model", "image", "tag", "branch", "host")


def _random_looking(raw: str, hinted: bool) -> bool:
    """Long, mixed, high-entropy: a key or token, not a word, path, hex digest or UUID."""
    v = raw.rstrip("=")
    n = len(v)
    if n < (20 if hinted else 24) or n > 512:
        return False
    if all(c in "0123456789abcdefABCDEF-" for c in v):
        return False  # git SHAs, digests, UUIDs
    if "/" in v and "+" not in v and not raw.endswith("="):
        return False  # a path
    digits = sum(c.isdigit() for c in v)
    upper = sum(c.isupper() for c in v)
    lower = sum(c.islower() for c in v)
    need = 2 if hinted else 3
    if digits < need or upper < need or lower < need:
        return False
    # Random base62 of length n averages close to log2(n); identifiers and prose fall well short.
    import math

    return entropy(v) >= min(math.log2(n), 6.0) - (0.75 if hinted else 0.55)


def _assigned_name(text: str, vs: int) -> str | None:
    """The name in `NAME=value`, `NAME: value`, `"name": "value"` ending just before `vs`."""
    i = vs
    while i > 0 and text[i - 1] in "\"' \t":
        i -= 1
    if i == 0 or text[i - 1] not in "=:":
        return None
    i -= 1
    while i > 0 and text[i - 1] in "\"' \t":
        i -= 1
    j = i
    while j > 0 and (text[j - 1].isalnum() or text[j - 1] in "_.-"):
        j -= 1
    name = text[j:i]
    return name if len(name) >= 2 and not name[0].isdigit() else None


def _entropy_value(text: str, p: int, end: int) -> tuple[int, int] | None:
    """(start, end) of a high-entropy value assigned at hit `p`, or None."""
    vs = p + 1
    ve = vs
    while ve < end and (text[ve].isalnum() or text[ve] in "+/=_-"):
        ve += 1
    name = _assigned_name(text, vs)
    if name is None:
        return None
    low = name.lower()
    parts = re.split(r"[_.-]", low) if ("_" in low or "." in low or "-" in low) else [low]
    if any(w in parts or low.endswith(w) for w in _NOT_SECRET_NAMES):
        return None
    hinted = any(h in low for h in _HINTS)
    v = text[vs:ve]
    if "_" in v[:12] and v.split("_", 1)[0].isalpha() and v.split("_", 1)[0].islower():
        return None  # an id with a type prefix: toolu_…, msg_…, req_…
    return (vs, ve) if _random_looking(v, hinted) else None


def vendor_tokens(text: str) -> str:
    """Redact the prefixed vendor tokens, and long random values assigned to a name."""
    out: list[str] = []
    last = 0  # text[:last] is already in `out`
    seen = 0  # hits before this lie in a token already examined
    vendor = None
    n = len(text)
    for m in rx(r"[_.:=\-\"'][A-Za-z0-9]{10}").finditer(text):
        p = m.start()
        if p < seen:
            continue
        # The token around the hit: walk back (bounded) and forward over token characters.
        if text[p] in "\"'":
            s = p + 1  # a quoted value starts after its quote
        else:
            s = p
            lo = max(last, p - 200)
            while s > lo and text[s - 1] in _WORD:
                s -= 1
        e = m.end()
        while e < n and text[e] in _WORD:
            e += 1
        seen = e
        pieces: list[str] = []
        done = s
        token = text[s:e]
        if any(needle in token for needle in _VENDOR_NEEDLES):
            if vendor is None:
                vendor = rx(_VENDOR)
            for v in vendor.finditer(text, s, e):
                pieces.append(text[done:v.start()])
                pieces.append(marker(_KIND[v.lastgroup or ""]))  # each alternative of _VENDOR is a named group
                done = v.end()
        if not pieces:
            # KEY=value inside the token, or a quoted/spaced value right after `"key": `.
            for c in (s - 1, text.find("=", s, e), text.find(":", s, e)):
                if c < 0 or (c == s - 1 and (c < 0 or text[c] not in "\"' \t")):
                    continue
                span = _entropy_value(text, c, e)
                if span:
                    pieces = [text[s:span[0]], marker("high-entropy")]
                    done = span[1]
                    break
        if pieces:
            out.append(text[last:s])
            out.extend(pieces)
            last = done
    if out:
        out.append(text[last:])
        text = "".join(out)
    for needle, pattern, kind in _BARE:
        if needle in text:
            text = rx(pattern).sub(marker(kind), text)
    return text
