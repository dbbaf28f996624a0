"""The redactor: `redact(text)` replaces every secret in captured text with ``[REDACTED:<kind>]``.

Contract: every string that is stored or logged passes through :func:`redact` (the hooks' records,
the store's redacting connection, the log). It never raises on a str (lone surrogates included),
returns other types unchanged, and is idempotent: no rule matches a marker. Where the surroundings
are useful (a URL's user and host, an env var's name, an Authorization scheme) only the secret part
is replaced. `redact_value` redacts every string leaf of a JSON-able value, and replaces whole a
string under a secret-looking key (`is_secret_key`). `mark_clean` / `is_clean` let the store skip
text built only from redacted parts.

This module holds the ordered pipeline and the classic rules; the order is the contract (token
formats become markers before the generic Authorization / Bearer / KEY=value rules look):

* token formats (``sk-``, ``ghp_``, ``AKIA``, a PEM private key, JWTs, URL passwords, Slack
  webhooks), matched anywhere but not inside a longer word (``task-list`` is safe); a PEM
  ``BEGIN … PRIVATE KEY`` with no END is redacted to the end of the text;
* :mod:`vendor_tokens`: vendor prefixes and long random values assigned to a name;
* :mod:`rule_table_scan`: every format of the gitleaks / detect-secrets table (:mod:`rule_table`);
* :mod:`surroundings`: ``user:pass@host`` without a scheme, keys as a URL's user, webhook URLs,
  ``curl -b``, a bare AWS secret key named within a line or two, passwords in other languages;
* :mod:`key_material`: connection strings' passwords, PuTTY key bodies, JWK private members;
* :mod:`piped_stdin`: the secret piped or here-stringed into ``--password-stdin``;
* :mod:`flags_and_prose`: flag values, ``Cookie:`` headers, netrc, "my password is X";
* Authorization / Bearer headers and ``KEY=value`` (:mod:`assigned_values` judges which value is
  a secret and which is a reference, mask, type or code);
* :mod:`evasions` then looks again at a copy with zero-width and full-width characters,
  look-alikes, ``%XX``, split strings and base64 undone.

Bare 40-character base64 strings, git SHAs, UUIDs and base64 blobs stay: without a name next to
them they cannot be told from data. Real-looking placeholders (``changeme``) are redacted.

Cost: imports only ``re`` (the hooks import this module) and compiles nothing at import; each
pattern compiles on first use. Every rule starts at a literal needle found with ``str.find`` and
looks a bounded distance around it, so time is linear in the text (bench/redaction_bench.py, 1 KB
to 1 MB of adversarial input). Measured on 16 KB: ~335 µs of typical tool output, ~105 µs of prose
without any needle. A second call on text `redact` just returned costs one dict lookup.
"""

import re

from .assigned_values import DESCRIBES, KW, KW_TRIGGERS, kv_rule, number, placeholder, type_annotation
from .evasions import unfold
from .flags_and_prose import command_lines, prose_and_files
from .key_material import material
from .piped_stdin import stdin_secrets
from .rule_table_scan import class_tokens
from .spans import MARK, marker, rx
from .surroundings import authorities, curl_cookies, foreign_passwords
from .vendor_tokens import vendor_tokens

TYPE_CHECKING = False  # not `typing.TYPE_CHECKING`: hooks import this module and must not load `typing`
if TYPE_CHECKING:
    from collections.abc import Callable

    # A rule: (text, positions where it may match, the lower-cased text or None) -> the text with
    # its secrets replaced (the very same object when it found none).
    Rule = Callable[[str, list[int], "str | None"], str]
    Repl = Callable[[re.Match[str], str], str]

__all__ = ["KINDS", "MARK", "is_clean", "is_secret_key", "mark_clean", "redact", "redact_value"]

KINDS = (
    "private-key", "url-password", "slack-webhook", "anthropic-key",
    "openai-key", "stripe-key", "github-token", "gitlab-token", "slack-token",
    "aws-access-key", "google-api-key", "jwt", "aws-secret-key",
    "auth-header", "bearer-token", "env-secret", "secret-field",
    # vendor_tokens and flags_and_prose: vendor prefixes, command lines, cookies, files, prose, entropy
    "sendgrid-key", "shopify-token", "telegram-token", "vault-token", "pypi-token",
    "dockerhub-token", "linear-key", "doppler-token", "npm-token", "huggingface-token",
    "twilio-key", "databricks-token", "cli-secret", "user-password", "cookie",
    "netrc-password", "stated-secret", "high-entropy",
    # vendor prefixes, key material by its container (key_material), stdin-fed secrets (piped_stdin)
    "google-oauth-secret", "groq-key", "tailscale-key", "langsmith-key", "mailgun-key",
    "google-refresh-token", "connection-password", "jwk-private", "named-secret", "stdin-secret",
    "sonarqube-token",
)

_SOURCES = {
    # -----BEGIN [RSA|EC|OPENSSH|ENCRYPTED|PGP ...] PRIVATE KEY----- ... END,
    # or to the end of the text when the END line is missing.
    "pem": (r"-----BEGIN[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----"
            r"(?:.*?-----END[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----|.*)", re.S),
    # scheme://user:PASSWORD@host -- the password may itself contain '@' or
    # ':', so take the run up to the last '@' before the path.
    "url": (r"://(?<=[A-Za-z0-9]://)(?P<user>[^\s:/?#@\"'<>\[\]]*):"
            r"(?!" + re.escape(MARK) + r")[^\s/?#\"'<>]+@", 0),
    "slack_hook": (r"(hooks\.slack\.com/(?:services|workflows|triggers)/)"
                   r"[A-Za-z0-9_/-]+", 0),
    # sk-ant-... is Anthropic; other sk-... (sk-proj-, sk-svcacct-) OpenAI,
    # whose body must hold a digit or a capital: real keys always do,
    # kebab-case names (sk-some-long-name) never do.
    "sk": (r"(?<![\w-])sk-(?:(?P<ant>ant-[A-Za-z0-9_-]{20,})"
           r"|(?=[A-Za-z0-9_-]*[0-9A-Z])[A-Za-z0-9_-]{20,})", 0),
    "aws_id": (r"(?<![A-Za-z0-9])A[KSB]IA[A-Z0-9]{16}(?![A-Za-z0-9])", 0),
    "google": (r"(?<![\w-])AIza[0-9A-Za-z_-]{30,}", 0),
    # header.payload.signature, base64url, header starting with '{"'.
    "jwt": (r"(?<![\w-])eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}"
            r"\.[A-Za-z0-9_-]*", 0),
    # Matched from "secret" on (the key is kept anyway): aws_secret_key,
    # AWS_SECRET_ACCESS_KEY, SecretAccessKey, awsSecretKey.
    "aws_secret": (r"(?:(?<![a-z0-9])|(?<=aws))(secret[_-]?(?:access[_-]?)?key"
                   r"\\?[\"']?[ \t]*[:=][ \t]*\\?[\"']?)"
                   r"[a-z0-9/+]{40}(?![a-z0-9/+])", 0),
    # Authorization: <anything to the end of the line or closing quote>.
    "auth": (r"(?:(?<![\w-])|(?<=proxy-))authorization(?P<kq>\\?[\"'])?[ \t]*:"
             r"[ \t]*(?P<vq>\\?[\"'])?(?P<val>[^\r\n\"'\\]+)", 0),
    "bearer": (r"(?<![\w-])bearer[ \t]+(?P<tok>[a-z0-9._~+/-]{16,}=*)", 0),
    "kv_key": (KW + r"|authorization", 0),
}



def _rx(name: str) -> re.Pattern[str]:
    """Pattern `name` of the table, compiled on first use (`spans.rx`)."""
    return rx(*_SOURCES[name])


_AUTH_SCHEMES = frozenset(("basic", "bearer", "token", "digest", "negotiate",
                           "ntlm", "apikey"))


def _auth_repl(m: "re.Match[str]", text: str) -> str:
    whole = text[m.start():m.end()]
    raw = text[m.start("val"):m.end("val")]
    v = raw.rstrip()
    if m.group("kq") and not m.group("vq"):
        return whole  # {"Authorization": token} -- code, not a header
    if type_annotation(v) or placeholder(v) or v.lower() in _AUTH_SCHEMES:
        return whole  # a declaration, a reference, a bare "Bearer "
    scheme, sp, cred = v.partition(" ")
    if sp and cred.strip() and scheme.replace("-", "").isalnum():
        cred = cred.strip()
        if placeholder(cred) or cred.startswith(("+", "{", "%")):
            return whole  # "Bearer " + token, Bearer {token}
        keep = scheme + " "
    else:
        keep = ""
    return (text[m.start():m.start("val")] + keep + marker("auth-header")
            + raw[len(v):])


def _bearer_repl(m: "re.Match[str]", text: str) -> str:
    tok = text[m.start("tok"):m.end("tok")]
    has_digit = any(c.isdigit() for c in tok)
    mixed = not tok.islower() and not tok.isupper() and len(tok) >= 20
    if has_digit or mixed:  # prose ("bearer authentication") has neither
        return text[m.start():m.start("tok")] + marker("bearer-token")
    return text[m.start():m.end()]


def _replacer(name: str, repl: "str | Repl") -> "Rule":
    """A rule applying pattern `name` at each start.  `repl` is the marker
    string or a function (match, text) -> str.  Lower-case rules match on
    `low` (aligned with `text`), so a replacement must copy from `text` by
    span, never from the match's groups."""
    def rule(text: str, starts: "list[int]", low: "str | None") -> str:
        pattern = _rx(name)
        hay = text if low is None else low
        out: list[str] = []
        last = 0
        for p in starts:
            if p < last or p < 0:
                continue
            m = pattern.match(hay, p)
            if m is not None:
                out.append(text[last:p])
                out.append(repl if isinstance(repl, str) else repl(m, text))
                last = m.end()
        if not out:
            return text
        out.append(text[last:])
        return "".join(out)
    return rule


def _keep1(kind: str) -> "Repl":
    """Replacement keeping group 1 (a key name, a URL prefix)."""
    mark = marker(kind)
    return lambda m, text: text[m.start(1):m.end(1)] + mark


def _sk_repl(m: "re.Match[str]", text: str) -> str:
    return marker("anthropic-key" if m.group("ant") else "openai-key")


def _url_repl(m: "re.Match[str]", text: str) -> str:
    return ("://" + text[m.start("user"):m.end("user")] + ":"
            + marker("url-password") + "@")


# Case-sensitive rules: (gate char, ((needle, offset), ...), rule).  A rule
# runs only at the positions where a needle occurs (minus its offset, e.g.
# "IA" sits 2 chars into "AKIA"), via an anchored regex match: finding
# needles with str.find is C-fast, while re.search over a pattern with
# lookbehinds or IGNORECASE alternatives costs 25-200 ns per char.  The gate,
# a single char every needle contains, is checked first (memchr, ~50 ns per
# 2 KB).  Order matters: PEM blocks and URLs first (they contain other
# shapes), token formats before the generic Authorization/Bearer/KEY=value
# rules (in redact) so that those see markers, not secrets.
_RULES = (
    ("-", (("-----BEGIN", 0),),
     _replacer("pem", marker("private-key"))),
    ("@", (("://", 0),), _replacer("url", _url_repl)),
    ("/", (("hooks.slack.com/", 0),),
     _replacer("slack_hook", _keep1("slack-webhook"))),
    ("-", (("sk-", 0),), _replacer("sk", _sk_repl)),
    ("I", (("IA", 2),), _replacer("aws_id", marker("aws-access-key"))),
    ("z", (("AIza", 0),),
     _replacer("google", marker("google-api-key"))),
    ("J", (("eyJ", 0),), _replacer("jwt", marker("jwt"))),
)

# Lower-case rules, run on positions found in text.lower(): (needle, rule).
# Each needle is searched once per call and its hits shared: aws-secret and
# KEY=value both start at "secret", Authorization at "auth".  The KEY=value
# rule ("kv") starts at every secret word of KW_TRIGGERS; so do the
# command-line flag rule (`--token X`) and the stated-password rule.
_LOW_NEEDLES = KW_TRIGGERS + ("bearer", "cookie")
_LOW_RULES = (
    ("secret", _replacer("aws_secret", _keep1("aws-secret-key"))),
    ("auth", _replacer("auth", _auth_repl)),
    ("bearer", _replacer("bearer", _bearer_repl)),
    ("kv", kv_rule),
)


def _starts(hay: str, needles: "tuple[tuple[str, int], ...]") -> list[int]:
    """Sorted positions where the needles occur in `hay`."""
    found: list[int] = []
    for needle, back in needles:
        i = hay.find(needle)
        while i >= 0:
            found.append(i - back)
            i = hay.find(needle, i + 1)
    if len(needles) > 1:
        found.sort()
    return found


def _lower(text: str) -> str:
    """text.lower() with positions kept: only U+0130 grows when lowered."""
    low = text.lower()
    if len(low) != len(text):
        low = text.replace("\u0130", "i").lower()
    return low


def _maybe_stated(text: str) -> bool:
    """Could `text` say "my password is X" (it has no `=`, `:` or `-`)?"""
    low = _lower(text)  # three finds on one copy beat eight case variants
    return "pass" in low or "token" in low or "secret" in low


def _short_options(low: str) -> "dict[str, list[int]]":
    """Positions of `-u`/`-U`/`--user` (as "u") and `-p` (as "p"): one regex with a literal
    first char (a memchr-speed scan) instead of two 2-char finds (~4x slower)."""
    hits: dict[str, list[int]] = {"u": [], "p": []}
    for m in rx(r"-[up]").finditer(low):
        p = m.start()
        if low[p + 1] == "u" and p > 0 and low[p - 1] == "-":
            p -= 1  # --user
        hits[low[m.start() + 1]].append(p)
    return hits


# The last long strings redact() returned, by identity: a record redacted in the hook is
# written through the store's redacting connection (the choke point) and would otherwise be
# scanned twice.  Values are kept referenced, so an id cannot be reused while listed.
_recent: dict[int, str] = {}
_RECENT_MIN, _RECENT_MAX = 256, 64
_FOREIGN_GATE = ("asswort", "ennwort", "enha", "lave", "passe", "arola", "aslo", "eslo", "ozinka", "achtwoord")


def is_clean(text: object) -> bool:
    """True if `text` is a string redact() just returned (so redacting it is a no-op)."""
    return _recent.get(id(text)) is text


def mark_clean(text: str) -> str:
    """Note that `text` was built only from redact() output (a capped or JSON-joined record
    field), so the store's choke point need not scan it again.  Returns `text`."""
    if isinstance(text, str) and len(text) >= _RECENT_MIN:
        if len(_recent) >= _RECENT_MAX:
            _recent.clear()
        _recent[id(text)] = text
    return text


def redact(text: str) -> str:
    """Replace every secret in `text` with ``[REDACTED:<kind>]``.

    Never raises on a str (lone surrogates included); other types are
    returned unchanged.
    """
    if not isinstance(text, str) or not text:
        return text
    if _recent.get(id(text)) is text:
        return text
    out = unfold(text, _redact(text), _redact)  # zero-width, full-width, %XX, split and base64 hiding
    if len(out) >= _RECENT_MIN:
        if len(_recent) >= _RECENT_MAX:
            _recent.clear()
        _recent[id(out)] = out
    return out


def _redact(text: str) -> str:
    for gate, needles, rule in _RULES:
        if gate in text:
            starts = _starts(text, needles)
            if starts:
                text = rule(text, starts, None)

    # Prefixed vendor tokens and assigned high-entropy values: one regex scan.
    text = vendor_tokens(text)
    # Every other format of the gitleaks / detect-secrets tables, by class (rule_table_scan).
    text = class_tokens(text)
    # `user:pass@host` without a scheme, a key as a URL's user (Sentry DSN), webhook URLs.
    text = authorities(text)
    # Connection strings' passwords, PuTTY key bodies, JWK private members, `PRIVATE_KEY 0x…`.
    text = material(text)
    if "-stdin" in text or "--with-token" in text:  # `echo PW | docker login --password-stdin`
        text = stdin_secrets(text, _lower(text))

    text = curl_cookies(text)
    if not text.isascii() or any(w in text for w in _FOREIGN_GATE):
        text = foreign_passwords(text, _lower(text))  # "contraseña: X", "Passwort ist X"

    if not ("=" in text or ":" in text or "-" in text or "earer" in text
            or "EARER" in text or _maybe_stated(text)):
        return text  # no KEY=value, flag, header, Bearer or "password is": skip 14 scans
    low = _lower(text)
    if "-p" not in low and "-u" not in low and not any(t in low for t in _LOW_NEEDLES):
        return text  # every rule below starts at one of these: ids, paths and code end here
    hits = {t: _starts(low, ((t, 0),)) for t in _LOW_NEEDLES}
    # Command lines first: `--password X` must not be read as prose by the KEY=value rule.
    hits["flag"] = [p for t in KW_TRIGGERS for p in hits[t]] + hits["cookie"]
    short = _short_options(low)
    hits["userpass"], hits["-p"] = short["u"], short["p"]
    new = command_lines(text, low, hits)
    if new is not text:
        text, low = new, _lower(new)
        hits = {t: _starts(low, ((t, 0),)) for t in _LOW_NEEDLES}
    hits["words"] = sorted(p for t in ("passw", "passphrase", "token", "secret", "api")
                           for p in hits[t])
    new = prose_and_files(text, low, hits)
    if new is not text:
        text, low = new, _lower(new)
        hits = {t: _starts(low, ((t, 0),)) for t in _LOW_NEEDLES}
    for needle, low_rule in _LOW_RULES:
        if needle == "kv":
            starts = sorted({p for t in KW_TRIGGERS for p in hits[t]})
        elif needle == "auth":
            starts = [p for p in hits[needle]
                      if low.startswith("authorization", p)]
        else:
            starts = hits[needle]
        if not starts:
            continue
        new = low_rule(text, starts, low)
        if new is not text:  # positions moved: find the needles again
            text = new
            low = _lower(text)
            hits = {t: _starts(low, ((t, 0),)) for t in _LOW_NEEDLES}
    return text


def is_secret_key(key: object) -> bool:
    """True if a field name such as ``password`` or ``GITHUB_TOKEN`` looks
    like it holds a secret."""
    if not isinstance(key, str):
        return False
    low = key.lower()
    if low.lstrip("-") in ("pwd", "oldpwd", "pass"):
        return False  # the working directory; a bare `pass` field is a verdict as often as a password
    for t in KW_TRIGGERS:
        if t in low:
            return _rx("kv_key").search(low) is not None
    return False


def _secret_field_value(key: str, v: str) -> str:
    if placeholder(v):
        return v
    if number(v) and ("token" in key.lower() or "auth" in key.lower()):
        return v  # {"token_count": "12"}
    return marker("secret-field")


def redact_value(obj: object, under: str | None = None) -> object:
    """Return a copy of `obj` (dicts, lists, tuples) with every string leaf
    redacted.  A string under a secret-looking dict key is replaced whole, and
    so is every string inside a dict or list under one (`{"api_key": {"value":
    …}}`), but for those a key of `DESCRIBES` holds (`"type": "oauth"`): the
    rule `assigned_values` applies to the same structure written as text."""
    if isinstance(obj, str):
        return redact(obj) if under is None else _secret_field_value(under, obj)
    if isinstance(obj, dict):
        out: dict[object, object] = {}
        for k, v in obj.items():
            name = str(k)
            if under is not None and name.lower() in DESCRIBES:
                out[k] = redact_value(v)
            elif is_secret_key(k) and isinstance(v, (str, dict, list, tuple)):
                out[k] = redact_value(v, name)
            else:
                out[k] = redact_value(v, under)
        return out
    if isinstance(obj, list):
        return [redact_value(v, under) for v in obj]
    if isinstance(obj, tuple):
        return tuple(redact_value(v, under) for v in obj)
    return obj
