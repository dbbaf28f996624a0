"""Key material known by its container, for :mod:`redact`: the password of a connection string,
the body of a PuTTY key file, the private members of a JSON Web Key, and a value named as a secret
with only blanks between the name and it (`private key 0x<64 hex>`, `client_secret <random>`).

Contract: `material(text)` returns `text` with each such value replaced by `[REDACTED:<kind>]`,
or the very same object when it found none. Nothing here matches a marker, so it is idempotent.
It runs before the `KEY=value` rule, which would otherwise take only the first word of a
connection string's `Password=my pass phrase;` and leave the rest.

* Connection strings (ODBC, ADO.NET, JDBC-style `;` lists): `Pwd=…` / `Password=…` up to the `;`,
  braces (`Pwd={a;b}`) and quotes kept whole, when the string is one: a `;` and another of its
  keys (`Uid=`, `Server=`, `Driver=`, `Database=`…) on the line. `PWD=/home/x` (the shell's
  working directory) and references (`$X`, `{password}`) stay.
* PuTTY `.ppk` files: the base64 lines after `Private-Lines: N` (the public lines are public).
* JWK: the values of `"d"`, `"p"`, `"q"`, `"dp"`, `"dq"`, `"qi"` and `"k"` (RFC 7517/7518's
  private and symmetric members) within 8 KB of a `"kty"`, when they are base64url of 16+
  characters (a date or a word in `"d"` is not key material).
* A named value (`PRIVATE_KEY 0x…`, `Private Key: 0x…`, `refresh token is …`): after a word that
  ends in key / secret / token / password / passphrase, blanks (a `:` or "is" allowed after a
  two-word name; "is" / "was" after any), then `0x` + 64 hex or 64 hex when the name says private
  / secret / signing / wallet (an Ethereum-style private key), 32+ hex for such a key or for a
  secret / token / password (not for a bare `…key`: a cache key or a GPG key id is hex too), or a
  random-looking value (`vendor_tokens`' entropy test) for any of them. A public key, a
  fingerprint and identifier-like names (`key_id`, `token_path`) are not secrets.

Cost: linear. Each rule starts at a literal needle (`pwd`/`password`, `Private-Lines:`, `kty`, the
secret nouns) found with ``str.find``, and looks a bounded distance (a line, 8 KB, 256 lines)
around it; the JWK members are found by one regex scan, only in a text that names `kty`. Imports
only `re` (through :mod:`spans`) and, at a hit, `bisect` and :mod:`vendor_tokens`.
"""

from .spans import apply_spans, finds, rx

TYPE_CHECKING = False  # not `typing.TYPE_CHECKING`: hooks import this module and must not load `typing`
if TYPE_CHECKING:
    Spans = list[tuple[int, int, str]]


def material(text: str) -> str:
    """Redact connection-string passwords, PuTTY key bodies, JWK private members, named values."""
    spans: Spans = []
    if "Private-Lines:" in text:
        _putty(text, spans)
    if "kty" in text:
        _jwk(text, spans)
    low = text.lower()  # (~4 us per 16 KB: cheaper than looking for three spellings of each noun)
    if len(low) != len(text):
        low = text.replace("\u0130", "i").lower()  # only U+0130 grows when lowered: keep positions
    if "=" in text and ";" in text:
        _connection_strings(text, low, spans)
    _named(text, low, spans)
    return apply_spans(text, spans)


# -- connection strings --------------------------------------------------------------------------

_CONN_VALUE = (r"(?<![\w-])(?:pwd|password)[ \t]*=[ \t]*(?P<val>\{[^}\r\n]{0,256}\}|\"[^\"\r\n]{0,256}\""
               r"|'[^'\r\n]{0,256}'|[^;\r\n\"'{ \t][^;\r\n\"']{0,255})")
_CONN_KEYS = (r"(?:uid|user ?id|user|username|server|driver|dsn|database|data source|initial catalog|host"
              r"|hostname|provider|address|addr|network address)[ \t]*=")
_CONN_REACH = 300


def _connection_strings(text: str, low: str, spans: "Spans") -> None:
    hits = [p for needle in ("pwd", "password") for p in finds(low, needle)]
    if not hits:
        return
    value = rx(_CONN_VALUE)
    keys: list[int] | None = None  # where a connection string's other keys stand: one scan, on demand
    from bisect import bisect_left

    for p in sorted(hits):
        m = value.match(low, p)
        if m is None:
            continue
        if keys is None:
            keys = [k.start() for k in rx(_CONN_KEYS).finditer(low)
                    if not k.start() or low[k.start() - 1] in ";\t \"'{"]
        # A connection string: another of its keys and a `;` on the same line, within reach.
        i = bisect_left(keys, p)
        near = [k for k in (keys[i - 1] if i else -1, keys[i] if i < len(keys) else -1)
                if k >= 0 and abs(k - p) <= _CONN_REACH and low.find("\n", min(k, p), max(k, p)) < 0]
        lo, hi = max(0, p - _CONN_REACH), min(len(low), m.end() + 1)
        if not near or (low.find(";", lo, hi) < 0):
            continue  # not a connection string: `PWD=/home/x`, a URL query
        vs, ve = m.span("val")
        v = text[vs:ve].rstrip()
        if v[:1] in "{\"'":
            inner = v[1:-1]
            if not inner or inner[:1] in "${" or (v[0] == "{" and inner.replace("_", "").isalpha()):
                continue  # Pwd={password}, Pwd={{ vault.pw }}: a template
        elif v[:1] in "$%/~." or v.lower() in ("none", "null", "******"):
            continue  # a reference or a path
        spans.append((vs, vs + len(v), "connection-password"))


# -- PuTTY key files -----------------------------------------------------------------------------

_BREAK = r"(?:\r?\n|\\r\\n|\\n)"
_MAX_LINES = 256


def _putty(text: str, spans: "Spans") -> None:
    head = rx(r"Private-Lines:[ \t]*[0-9]{1,4}[ \t]*" + _BREAK)
    line = rx(r"[A-Za-z0-9+/=]{4,512}(?=" + _BREAK + r"|$)")
    brk = rx(_BREAK)
    done = 0
    for p in finds(text, "Private-Lines:"):
        if p < done:
            continue
        m = head.match(text, p)
        if m is None:
            continue
        start = end = at = m.end()
        for _ in range(_MAX_LINES):
            body = line.match(text, at)
            if body is None:
                break
            end = body.end()
            nl = brk.match(text, end)
            if nl is None:
                break
            at = nl.end()
        if end > start:
            spans.append((start, end, "private-key"))
            done = end


# -- JSON Web Keys -------------------------------------------------------------------------------

_JWK_MEMBER = (r"(?P<q>\\?[\"'])(?:d|p|q|dp|dq|qi|k)(?P=q)[ \t\r\n]*:[ \t\r\n]*(?P=q)"
               r"(?P<v>[A-Za-z0-9_-]{16,8192}={0,2})(?P=q)")
_JWK_REACH = 8192  # a JWK of a 4096-bit RSA key is ~3.3 KB: `"kty"` may stand at either end of it


def _jwk(text: str, spans: "Spans") -> None:
    kty = [p for p in finds(text, "kty") if p and text[p - 1] in "\"'"
           and (text.startswith(text[p - 1], p + 3) or text.startswith("\\" + text[p - 1], p + 3))]
    if not kty:
        return
    from bisect import bisect_left

    for m in rx(_JWK_MEMBER).finditer(text):
        s, e = m.span("v")
        i = bisect_left(kty, s)
        near = (i < len(kty) and kty[i] - e <= _JWK_REACH) or (i > 0 and s - kty[i - 1] <= _JWK_REACH)
        if near:
            spans.append((s, e, "jwk-private"))


# -- values named as secrets, blanks between -----------------------------------------------------

_NOUNS = ("key", "secret", "token", "passw", "passphrase")
_NAMED_TAIL = (r"(?P<sep>[ \t]+(?:is[ \t]+|was[ \t]+)?|[ \t]*:[ \t]+)(?P<q>[\"'`])?"
               r"(?P<val>[A-Za-z0-9_+/=.~-]{16,512})(?P=q)?(?![A-Za-z0-9_+/=.~-])")
_HEX = frozenset("0123456789abcdefABCDEF")


def _named(text: str, low: str, spans: "Spans") -> None:
    for noun in _NOUNS:
        for p in finds(low, noun):
            _named_at(text, low, p, spans)


def _named_at(text: str, low: str, p: int, spans: "Spans") -> None:
    e = rx(r"[a-z0-9_-]{0,40}").match(low, p).end()  # type: ignore[union-attr]  # (it always matches)
    if low[e:e + 1] not in (" ", "\t", ":"):
        return  # `key=`, `key)`, `get(key`: code, or the KEY=value rule's (most hits end here)
    word_end = low[max(0, e - 10):e]
    if not word_end.endswith(("key", "secret", "token", "password", "passwd", "passphrase")):
        return  # `keys`, `tokens`, `tokenizer`, `keyboard`
    s = p
    while s > max(0, p - 40) and (low[s - 1].isalnum() or low[s - 1] in "_-."):
        s -= 1
    name = low[s:e]
    two_words = s >= 2 and low[s - 1] == " " and low[s - 2].isalpha()
    if two_words:  # "private key", "client secret": the word before is part of the name
        b = s - 1
        while b > max(0, s - 20) and low[b - 1].isalpha():
            b -= 1
        name = low[b:s - 1] + "_" + name
    m = rx(_NAMED_TAIL).match(text, e)
    if m is None or (":" in m.group("sep") and not two_words):
        return  # `NAME: value` is the KEY=value rule's
    from .vendor_tokens import _NOT_SECRET_NAMES, _random_looking

    parts = name.replace("-", "_").replace(".", "_").split("_")
    if any(w in parts for w in _NOT_SECRET_NAMES) or any(w in parts for w in ("public", "pub", "fingerprint")):
        return  # key_id, token_path, secret_name: an identifier; a public key
    v = m.group("val")
    hexpart = v[2:] if v[:2] in ("0x", "0X") else v
    private = "priv" in name or "secret" in name or "signing" in name or "wallet" in name
    if len(hexpart) == 64 and set(hexpart) <= _HEX and private:
        kind = "private-key"
    elif len(hexpart) >= 32 and set(hexpart) <= _HEX and (private or not name.endswith("key")):
        kind = "named-secret"
    elif _random_looking(v, True):
        kind = "named-secret"
    else:
        return
    spans.append((m.start("val"), m.end("val"), kind))
