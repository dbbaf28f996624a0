"""Secrets known by where they stand, for :mod:`redact`: credentials in an authority without a
scheme, keys used as a URL's user, webhook URLs, curl's cookie flag, a bare AWS secret key, and
passwords stated in other languages.

Contract: each function takes the text and returns it with the secrets it recognises replaced by
``[REDACTED:<kind>]``, or the very same object when it found nothing (so the caller can tell
cheaply). Nothing here matches a marker, so every rule is idempotent.

Cost: linear in the text. Each rule starts at a literal needle found with ``str.find`` (``@``,
``/api/webhooks/``, ``-b``) or at the runs of ONE regex scan, and looks at most a few hundred
characters around each start: many needles on one long line never make a rule rescan the line.
Imports only ``re`` (through :mod:`spans`, which holds the marker, the pattern cache and the
span applying this module shares with the other rule modules); patterns compile on first use.
"""

from .spans import apply_spans, finds, rx

# -- authorities ---------------------------------------------------------------------------------

_USER_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._%+-")
_BAD_PASS = frozenset(" \t\r\n/@:\"'<>[]`()\\,;|")
_NOT_USERS = frozenset(("mailto", "http", "https", "ssh", "git", "ftp", "sftp", "sip", "xmpp", "tel",
                        "smtp", "file", "data", "urn", "pkg", "npm", "docker"))
# A host: localhost, an IPv4 address, or dotted labels whose last one starts with a letter (a TLD):
# `llm:openai@reflector-2026-11-23.1` names a version, not a host, and is not a password.
_HOST = (r"(?:localhost|(?:\d{1,3}\.){3}\d{1,3}|[A-Za-z0-9-]{1,63}(?:\.[A-Za-z0-9-]{1,63}){0,7}"
         r"\.[A-Za-z][A-Za-z0-9-]{0,62})(?![A-Za-z0-9-])")


def _random_key(v: str) -> bool:
    """A URL user that is a key (Sentry's DSN: 32 hex), not a name: long and mixed."""
    if len(v) < 16 or len(v) > 128 or not v.replace("-", "").replace("_", "").isalnum():
        return False
    return sum(c.isdigit() for c in v) >= 3 and sum(c.isalpha() for c in v) >= 3


def authorities(text: str) -> str:
    """`user:pass@host` without a scheme (`git clone bob:pw@host:org/r`), a key as a URL's user
    (`https://<key>@o1.ingest.sentry.io/1`), Discord/Slack-style webhook URLs, a bare AWS key."""
    spans: list[tuple[int, int, str]] = []
    if "@" in text:
        host = rx(_HOST)
        for a in finds(text, "@"):
            if host.match(text, a + 1) is None:
                continue
            lo = max(0, a - 256)
            c = text.rfind(":", lo, a)
            if c >= 0 and c < a - 1:
                pw = text[c + 1:a]
                u = c
                while u > max(0, c - 64) and text[u - 1] in _USER_CHARS:
                    u -= 1
                user = text[u:c]
                before = text[u - 1] if u else " "
                if (user and before not in "/:@" and not any(ch in _BAD_PASS for ch in pw)
                        and not pw.isdigit() and pw[0] not in "$<{%" and user.lower() not in _NOT_USERS):
                    spans.append((c + 1, a, "url-password"))
                    continue
            # ://KEY@host -- a key as the user, with no password (Sentry DSN).
            u = a
            while u > max(0, a - 130) and text[u - 1] in _USER_CHARS:
                u -= 1
            if u >= 3 and text.startswith("://", u - 3) and _random_key(text[u:a]):
                spans.append((u, a, "url-key"))
    for p in finds(text, "/api/webhooks/"):
        m = rx(r"/api/webhooks/[0-9]{5,25}/(?P<tok>[A-Za-z0-9_-]{20,100})").match(text, p)
        if m is not None:
            spans.append((m.start("tok"), m.end("tok"), "webhook-token"))
    if len(text) >= 40 and any(w in text for w in ("aws", "AWS", "Aws", "AKIA", "ASIA", "akia", "asia")):
        _bare_aws(text, spans)  # only with AWS named somewhere (its own check is narrower)
    return apply_spans(text, spans)


def _bare_aws(text: str, spans: "list[tuple[int, int, str]]") -> None:
    """A 40-character base64 run standing alone (no `name=` before it), random enough to be an AWS
    secret access key -- mixed case and digits, high entropy -- with AWS or an access key id
    within a line or two (a credentials CSV, `aws configure list`, a pasted key pair)."""
    from .rule_table_scan import entropy

    for m in rx(r"[A-Za-z0-9/+]{40,}").finditer(text):
        s, e = m.span()
        if e - s != 40:
            continue
        if (s and (text[s - 1].isalnum() or text[s - 1] in "_-.")) or (e < len(text) and (
                text[e].isalnum() or text[e] in "_-=.")):
            continue
        v = text[s:e]
        if not (any(c.isupper() for c in v) and any(c.islower() for c in v) and any(c.isdigit() for c in v)):
            continue
        near = (text[max(0, s - 200):s] + " " + text[e:e + 100]).lower()
        if not ("aws" in near or "akia" in near or "asia" in near):
            continue  # without AWS named nearby a 40-char base64 run cannot be told from data
        if v.startswith("/") or v.count("/") > 4 or entropy(v) < 4.2:
            continue  # a path
        spans.append((s, e, "aws-secret-key"))


# -- curl's cookie flag --------------------------------------------------------------------------

def curl_cookies(text: str) -> str:
    """`curl -b 'session=…'` / `-b session=…`: a cookie string (it holds `=`; a bare word is a
    cookie file) on a line that runs curl."""
    if "-b" not in text:
        return text
    spans: list[tuple[int, int, str]] = []
    curl_b = rx(r"-b[ \t]*(?:(?P<q>[\"'])(?P<qv>[^\"'\r\n]{1,4096})(?P=q)|(?P<v>[^\s\"'`;&|<>]{1,4096}))")
    for p in finds(text, "-b"):
        if p and (text[p - 1].isalnum() or text[p - 1] in "-_"):
            continue
        line = text[max(0, p - 300):p]
        nl = line.rfind("\n")
        if "curl" not in (line if nl < 0 else line[nl:]).lower():
            continue
        m = curl_b.match(text, p)
        if m is None:
            continue
        g = "qv" if m.group("qv") is not None else "v"
        if "=" in m.group(g):
            spans.append((m.start(g), m.end(g), "cookie"))
    return apply_spans(text, spans)


# -- passwords stated in other languages ---------------------------------------------------------

FOREIGN_NEEDLES = ("contrase", "passwort", "kennwort", "mot de passe", "senha", "clave", "wachtwoord",
                   "hasło", "haslo", "parola", "lozinka", "heslo", "пароль")
_FOREIGN = (r"(?:contraseña|contrasena|clave|passwort|kennwort|mot de passe|senha|wachtwoord|hasło|haslo"
            r"|parola|lozinka|heslo|пароль)"
            r"(?:[ \t]+(?P<verb>es|era|ist|lautet|war|est|était|é|is|jest|je|è|это)(?=[ \t:=]))?"
            r"[ \t]*(?:(?P<sep>[:=])[ \t]*)?"  # one way to split a run of blanks: linear
            r"(?P<q>[\"'`«„])?(?P<val>[^\s\"'`»“]{1,256})")


def foreign_passwords(text: str, low: str) -> str:
    """"contraseña: X", "das Passwort ist X", "mot de passe : X", "senha = X" (`low` is
    `text.lower()` with positions kept). A word after the name alone ("Passwort vergessen") is
    prose: a separator or a verb must link them."""
    from .flags_and_prose import _is_reference, _stated_secret

    spans: list[tuple[int, int, str]] = []
    foreign = rx(_FOREIGN)
    for needle in FOREIGN_NEEDLES:
        for p in finds(low, needle):
            m = foreign.match(low, p)
            if m is None or not (m.group("sep") or m.group("verb")):
                continue
            v = text[m.start("val"):m.end("val")]
            trimmed = v if m.group("q") else v.rstrip(".,;:!?)")
            if not trimmed or _is_reference(trimmed):
                continue
            if m.group("q") or _stated_secret(trimmed) or (m.group("sep") and len(trimmed) >= 4):
                spans.append((m.start("val"), m.start("val") + len(trimmed), "stated-secret"))
    return apply_spans(text, spans)
