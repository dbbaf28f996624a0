"""Secrets written on a command line or stated in text, for :mod:`redactor`: flag values naming a
secret (`--token X`, mysql `-pX`, `docker login -p X`, `curl -u user:pass`), `Cookie:` /
`Set-Cookie:` headers, netrc `password X`, and a password stated in words ("my password is X").

Contract: `command_lines(text, low, hits)` and `prose_and_files(text, low, hits)` (`low` is `text`
lower-cased, positions kept; `hits` the needle positions the redactor found once) return `text`
with each such value replaced by ``[REDACTED:<kind>]``, or the very same object when they found
nothing. References (`$X`, `<x>`, `{x}`) stay. `_is_reference` and `_stated_secret` are shared
with :mod:`surroundings`.

Cost: linear; each rule runs only where its needle occurs and looks at most a bounded stretch of
the line around it. Imports only ``re`` (through :mod:`spans`) and the type words and number test of
:mod:`assigned_values`; patterns compile on first use.
"""

from .assigned_values import TYPE_WORDS, number
from .spans import apply_spans, rx

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


def _metavariable(val: str, flag: str) -> bool:
    """`--token TOKEN`, `--api-key API_KEY`, `--token string`: the flag's own name in capitals, or the
    value's type, stands where the value goes (argparse, click and cobra help print them so; so does a
    struct field on a diff's removed line, `-APIKey string`)."""
    if val.lower() in TYPE_WORDS or val.lower() == "value":
        return True
    letters = val.replace("_", "").replace("-", "")
    return letters.isalpha() and letters.isupper() and letters.lower() in flag.replace("_", "").replace("-", "")


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
        if _is_reference(val) or _metavariable(val, name) or (number(val) and ("token" in name or "auth" in name)):
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
          r"(?P<link>is|was|will be|should be|(?:has been )?(?:set|changed) to|to)(?:[ \t]*:[ \t]+|[ \t]+)"
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
        # After a bare "to" ("pass the token to GoReleaser"), a name or a place follows more often than
        # a value: only one that looks made up (a digit or a symbol in it) is taken for the secret.
        if m.group("link") == "to" and v.rstrip(".,;:!?)").isalpha():
            continue
        if _stated_secret(v) and not _is_reference(v):
            trimmed = v.rstrip(".,;:!?)")
            spans.append((vs, vs + len(trimmed), "stated-secret"))
    return apply_spans(text, spans, marked_anywhere=False)
