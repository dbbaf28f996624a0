"""Secret shapes beyond ``KEY=value`` and the classic token formats, for :mod:`redact`.

Contract: each public function takes the text (and, for the lower-case rules, its aligned
``low`` copy) and returns it with the secrets it recognises replaced by ``[REDACTED:<kind>]``;
it returns the very same object when it found nothing, so the caller can tell cheaply.  Nothing
here matches a marker, so every rule is idempotent.

Cost: imports only ``re`` (and :mod:`spans`, the marker, pattern cache and span applying shared
with the other rule modules); patterns compile on first use.  :func:`vendor_tokens` is ONE regex
scan for "a separator followed by ten alphanumerics" (~70 µs per 16 KB of typical tool output,
measured; cheaper than a ``str.find`` per vendor prefix, which costs ~10 µs each), and does
Python work only at the rare hits.  The command-line, cookie, netrc and "password is" rules run
only where their lower-case needles occur (found once by the caller).

Sources of the formats: the public rule sets of gitleaks and detect-secrets (prefixes, lengths,
the entropy idea), re-expressed here; no code is copied.
"""

import re

from .secret_classes import entropy
from .spans import apply_spans, marker, rx

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
    # Issue 35: Google OAuth client secrets, Groq, Tailscale (auth, api, client, scim, webhook and
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


# -- command lines -------------------------------------------------------------------------------

# `--token X`, `--password X`, `-password X`, `--api-key X`: a flag naming a secret, then its value
# as the next shell word.  Flags that take a *source* of the secret (stdin, a file, an env var)
# are not followed by it.
_FLAG = (r"(?<![\w-])(?P<flag>--?[a-z0-9][a-z0-9_.-]{0,80})[ \t]+(?P<q>[\"'])?"
         r"(?P<val>(?(q)[^\"'\r\n]+|[^\s\"'`;&|<>]+))")
_FLAG_SECRET = (  # compiled on first use, like every pattern here (hooks import this module)
    r"(?:secret|token(?!s|iz)|passw(?:or)?d|passphrase|api[_-]?key|private[_-]?key"
    r"|access[_-]?key|account[_-]?key|credentials?|auth(?!or)|cookie)")
_FLAG_SOURCE = ("stdin", "file", "env", "path", "cmd", "command", "fd", "prompt", "type",
                "length", "len", "count", "expir", "ttl", "name", "id", "url", "helper", "store",
                "reset", "policy", "min", "max", "header", "limit", "scope", "auth-method",
                "authority", "authenticat", "authorization")

# Tools whose short option carries a password: mysql `-pSECRET` (attached only: `-p db` is a
# database name), sshpass and `docker login`-style `-p SECRET`.
_ATTACHED_P = r"(?<![\w-])-p(?P<val>[^\s\"'`;&|<>]+)"
# A login's `-p`: spaced, attached or after `=` (`-p X`, `-pX`, `-p=X`), quoted or not.
_SPACED = (r"(?<![\w-])-p(?:[ \t]+|=)?(?:(?P<q>[\"'])(?P<quoted>[^\"'\r\n]{1,256})(?P=q)"
           r"|[\"']?(?P<val>[^\s\"'`;&|<>=][^\s\"'`;&|<>]*))")
# The tool, up to four of its global options (`docker --config d -H h login`), then `login`.
_LOGIN = r"(?:docker|podman|buildah|skopeo|nerdctl|helm|oras|crane|registry)\S*\s+(?:\S+\s+){0,4}login\b"
# `-u user:pass`, `--user user:pass`, `--proxy-user`, `-U`: the part after the colon.
_USERPASS = (r"(?<![\w-])(?:-u|-U|--user|--proxy-user|--basic-auth|--auth)[ \t=]+[\"']?"
             r"(?P<user>[^\s:\"'@]{1,256}):(?P<val>[^\s\"'@]+)")


def _is_reference(v: str) -> bool:
    v = v.strip("\"'")
    return (not v or v[0] in "$<{%" or v.startswith("-") or v.lower() in ("none", "null", "true",
            "false", "-") or set(v) <= set("*xX.•…-_#"))


def _line_bounds(text: str, p: int, reach: int = 300) -> tuple[int, int]:
    """The line around `p`, at most `reach` chars either side: a bounded look keeps every rule
    linear on a long line holding many hits."""
    lo, hi = max(0, p - reach), min(len(text), p + reach)
    ls = text.rfind("\n", lo, p)
    le = text.find("\n", p, hi)
    return (lo if ls < 0 else ls + 1), (hi if le < 0 else le)


def command_lines(text: str, low: str, hits: dict) -> str:
    """Flag values naming a secret, mysql/sshpass/docker/redis passwords, `-u user:pass`."""
    spans: list[tuple[int, int, str]] = []
    # --secret-flag VALUE: start from the secret-word hits the caller found.
    flag = rx(_FLAG)
    for p in sorted(set(hits["flag"])):
        s = p
        lo = max(0, p - 80)  # a flag name is short: a bounded walk keeps long runs linear
        while s > lo and (low[s - 1].isalnum() or low[s - 1] in "_.-"):
            s -= 1
        if not low.startswith("-", s):
            continue
        m = flag.match(low, s)
        if m is None:
            continue
        name = m.group("flag").lstrip("-")
        if not rx(_FLAG_SECRET).search(name) or any(w in name for w in _FLAG_SOURCE):
            continue
        val = text[m.start("val"):m.end("val")]
        if _is_reference(val) or (val.isdigit() and ("token" in name or "auth" in name)):
            continue
        spans.append((m.start("val"), m.end("val"), "cli-secret"))
    # Tool-specific short options, looked at only where `-p` occurs.
    for p in hits["-p"]:
        ls, le = _line_bounds(low, p)
        line = low[max(ls, p - 300):p]  # the command naming the tool comes shortly before `-p`
        if "mysql" in line or "mariadb" in line:
            m = rx(_ATTACHED_P).match(low, p)
        elif "sshpass" in line or rx(_LOGIN).search(line):
            m = rx(_SPACED).match(low, p)
        else:
            continue
        g = "quoted" if m is not None and m.groupdict().get("quoted") is not None else "val"
        if m is not None and not _is_reference(text[m.start(g):m.end(g)]):
            spans.append((m.start(g), m.end(g), "cli-secret"))
    # -u user:pass (curl, httpie, wget...) but not `-u 1000:1000` (docker's uid:gid).
    if hits["userpass"]:
        userpass = rx(_USERPASS)
        for p in sorted(set(hits["userpass"])):
            m = userpass.match(low, p)
            if m is None:
                continue
            val = text[m.start("val"):m.end("val")]
            user = m.group("user")
            if val.isdigit() or _is_reference(val) or user.startswith("$") or user.startswith("[redacted"):
                continue  # (`-u TOKEN:`, the token already redacted: its marker is no user:password)
            spans.append((m.start("val"), m.end("val"), "user-password"))
    return apply_spans(text, spans, marked_anywhere=False)


# -- cookies, netrc, passwords stated in words ---------------------------------------------------

_COOKIE = (r"(?<![\w-])(?P<set>set-)?cookie(?P<kq>\\?[\"'])?[ \t]*:[ \t]*(?P<vq>\\?[\"'])?"
           r"(?P<val>[^\r\n\"'\\]+)")
_NETRC = r"(?<![\w-])password[ \t]+(?P<val>[^\s\"'`=:][^\s\"'`]*)"
_WORDS = (r"(?P<key>passw(?:or)?d|passphrase|passcode|token|secret|api[ _-]?key)[ \t]+"
          r"(?:is|was|will be|should be|(?:has been )?(?:set|changed) to|to)(?:[ \t]*:[ \t]+|[ \t]+)"
          r"(?P<q>[\"'`])?(?P<val>(?(q)[^\"'`\r\n]+|[^\s\"'`]+))")
_STOP = frozenset((
    "a", "an", "the", "not", "now", "still", "also", "only", "just", "always", "never", "set",
    "unset", "null", "none", "blank", "empty", "required", "invalid", "valid", "incorrect",
    "correct", "wrong", "right", "missing", "expired", "weak", "strong", "optional", "mandatory",
    "necessary", "sensitive", "secret", "visible", "hidden", "different", "same", "too",
    "stored", "saved", "hashed", "encrypted", "changed", "correctly", "present", "absent",
    "available", "unavailable", "there", "here", "this", "that", "what", "used", "needed",
    "generated", "rotated", "revoked", "case-sensitive", "in", "on", "at", "for", "to", "from",
    "your", "my", "our", "their", "its", "his", "her", "being", "no", "yes", "ok", "fine",
    "unknown", "new", "old", "good", "bad", "fake", "dummy", "example", "test", "none.",
))


def _stated_secret(v: str) -> bool:
    """Is `v` (the word after "password is") a secret rather than prose or code?"""
    v = v.rstrip(".,;:!?)")
    if len(v) < 4 or v.lower() in _STOP:
        return False
    if v.replace(".", "").replace("_", "").isalnum() and ("." in v or "_" in v):
        return False  # self.password, missing_sentinel: code
    if v.endswith(("ed", "ing", "ble", "ly", "ive", "ful")) and v.isalpha():
        return False
    mixed = any(c.isdigit() for c in v) or not v.isalnum() or any(c.isupper() for c in v[1:])
    return mixed or len(v) >= 8


def prose_and_files(text: str, low: str, hits: dict) -> str:
    """`Cookie:` / `Set-Cookie:` headers, netrc `password X`, "my password is X"."""
    spans: list[tuple[int, int, str]] = []
    seen = 0  # a hit inside a cookie value already examined is part of that value
    for p in hits["cookie"]:
        if p < seen:
            continue
        s = p - 4 if low.startswith("set-", max(0, p - 4)) else p
        m = rx(_COOKIE).match(low, s)
        if m is None or (m.group("kq") and not m.group("vq")):
            continue
        seen = m.end()
        vs, ve = m.start("val"), m.end("val")
        raw = text[vs:ve].rstrip()
        if _is_reference(raw) or raw.lower() in ("str", "string", "dict"):
            continue
        if m.group("set"):  # keep the attributes (Path, HttpOnly): only the value is secret
            eq = raw.find("=")
            semi = raw.find(";")
            end = len(raw) if semi < 0 else semi
            if 0 <= eq < end:
                spans.append((vs + eq + 1, vs + end, "cookie"))
            continue
        spans.append((vs, vs + len(raw), "cookie"))
    for p in hits["passw"]:
        m = rx(_NETRC).match(low, p)
        if m is not None:
            ls, _ = _line_bounds(low, p)
            ctx = low[max(0, ls - 300, p - 600):p]
            if ("machine " in ctx or "login " in ctx or "default" in ctx) and not _is_reference(
                    text[m.start("val"):m.end("val")]):
                spans.append((m.start("val"), m.end("val"), "netrc-password"))
                continue
    for p in hits["words"]:
        m = rx(_WORDS).match(low, p)
        if m is None:
            continue
        vs, ve = m.start("val"), m.end("val")
        v = text[vs:ve]
        if m.group("q"):
            if v.strip() and not _is_reference(v):
                spans.append((vs, ve, "stated-secret"))
            continue
        if _stated_secret(v) and not _is_reference(v):
            trimmed = v.rstrip(".,;:!?)")
            spans.append((vs, vs + len(trimmed), "stated-secret"))
    return apply_spans(text, spans, marked_anywhere=False)
