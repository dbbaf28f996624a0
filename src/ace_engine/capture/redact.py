"""Secret redaction for captured text.

Every captured string passes through :func:`redact` before it is written, so
this module sits on the hook's hot path.  Two rules keep it cheap:

* it imports only ``re`` and compiles nothing at import time; each pattern is
  compiled on first use and cached in ``_compiled``;
* each rule is guarded by substring "triggers" (``"sk-" in text``...), so text
  without any trigger -- most code, test output, file listings -- costs one
  ``str.lower()`` and a few dozen ``in`` checks.

Each secret becomes ``[REDACTED:<kind>]``.  Where the surroundings are useful
(URL user and host, an env var's name, an Authorization scheme) only the
secret part is replaced.  ``redact`` is idempotent: no rule matches a marker.

Choices worth knowing (the tests pin them down):

* Token formats (``sk-``, ``ghp_``, ``AKIA``...) are matched anywhere, but not
  inside a longer word (``task-list`` is safe).  OpenAI-style ``sk-`` bodies
  must contain a digit or capital so ``sk-some-kebab-case-name`` survives.
* Bare 40-char base64 strings, git SHAs, UUIDs and base64 blobs (images) are
  left alone: without a key name next to them they cannot be told apart from
  data.  An AWS secret key is only recognised next to a name such as
  ``aws_secret_access_key``.
* ``KEY=value`` / ``KEY: value`` (env, YAML, INI, headers, CLI flags, JSON)
  with a secret-looking key has its value redacted.  Values that are clearly
  not secrets stay: empty, references (``$VAR``, ``${VAR}``, ``$(cmd)``,
  ``{{ x }}``, ``{name}``, ``<your-key>``), ``null``/``true``/..., masks
  (``****``, ``xxxx``), type annotations (``token: str``) and code
  (``token = get_token()``, ``password=self.password``).  Real-looking
  placeholders such as ``changeme`` are redacted: they might be real.
* A PEM ``BEGIN ... PRIVATE KEY`` with no END is redacted to the end of the
  text: safer to lose the tail than to leak the key.
"""

import re

__all__ = ["KINDS", "MARK", "is_secret_key", "redact", "redact_value"]

MARK = "[REDACTED:"

KINDS = (
    "private-key", "url-password", "slack-webhook", "anthropic-key",
    "openai-key", "stripe-key", "npm-token", "huggingface-token",
    "github-token", "gitlab-token", "slack-token", "aws-access-key",
    "google-api-key", "jwt", "aws-secret-key", "auth-header",
    "bearer-token", "env-secret", "secret-field",
)

# Words that make a key name look secret.  `token` excludes "tokens"/"tokenizer"
# (max_tokens, input_tokens are everywhere in LLM tooling) and `auth` excludes
# "author", "authority" and "authorization" (the auth-header rule owns that).
_KW = (
    r"(?:secret|token(?!s|iz)|passw(?:or)?d|passphrase|pwd|api[_-]?key"
    r"|private[_-]?key|access[_-]?key|credentials?|auth(?!or))"
)
# Lower-case substrings: if none occurs, no key can match _KW.
_KW_TRIGGERS = ("secret", "token", "passw", "passphrase", "pwd", "apikey",
                "api_key", "api-key", "private", "access", "credential", "auth")

_SOURCES = {
    # -----BEGIN [RSA|EC|OPENSSH|ENCRYPTED|PGP ...] PRIVATE KEY----- ... END,
    # or to the end of the text when the END line is missing.
    "pem": (r"-----BEGIN[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----"
            r"(?:.*?-----END[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----|.*)", re.S),
    # scheme://user:PASSWORD@host -- the password may itself contain '@' or
    # ':', so take the run up to the last '@' before the path.
    "url": (r"://(?<=[A-Za-z0-9]://)(?P<user>[^\s:/?#@\"'<>\[\]]*):"
            r"(?!\[REDACTED:)[^\s/?#\"'<>]+@", 0),
    "slack_hook": (r"(hooks\.slack\.com/(?:services|workflows|triggers)/)"
                   r"[A-Za-z0-9_/-]+", 0),
    "anthropic": (r"(?<![\w-])sk-ant-[A-Za-z0-9_-]{20,}", 0),
    # sk-..., sk-proj-..., sk-svcacct-...: the body must hold a digit or a
    # capital, which real keys always do and kebab-case names never do.
    "openai": (r"(?<![\w-])sk-(?=[A-Za-z0-9_-]*[0-9A-Z])[A-Za-z0-9_-]{20,}", 0),
    "stripe": (r"(?<![\w-])[sr]k_(?:live|test)_[A-Za-z0-9]{16,}", 0),
    "npm": (r"(?<![\w-])npm_[A-Za-z0-9]{36,}", 0),
    "hf": (r"(?<![\w-])hf_[A-Za-z]{30,}", 0),
    "github": (r"(?<![\w-])(?:gh[pousr]_[A-Za-z0-9]{30,}"
               r"|github_pat_[A-Za-z0-9_]{30,})", 0),
    "gitlab": (r"(?<![\w-])gl(?:pat|ptt|dt|rt)-[A-Za-z0-9_-]{20,}", 0),
    "slack": (r"(?<![\w-])(?:xox[abposr]-[A-Za-z0-9-]{10,}"
              r"|xapp-[0-9]-[A-Za-z0-9-]{10,})", 0),
    "aws_id": (r"(?<![A-Za-z0-9])(?:AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}"
               r"(?![A-Za-z0-9])", 0),
    "google": (r"(?<![\w-])AIza[0-9A-Za-z_-]{30,}", 0),
    # header.payload.signature, base64url, header starting with '{"'.
    "jwt": (r"(?<![\w-])eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}"
            r"\.[A-Za-z0-9_-]*", 0),
    "aws_secret": (r"(?<![a-z0-9])((?:aws[_-]?)?secret[_-]?(?:access[_-]?)?key"
                   r"\\?[\"']?[ \t]*[:=][ \t]*\\?[\"']?)"
                   r"[A-Za-z0-9/+]{40}(?![A-Za-z0-9/+])", re.I),
    # Authorization: <anything to the end of the line or closing quote>.
    "auth": (r"(?<![\w-])(?:proxy-)?authorization(?P<kq>\\?[\"'])?[ \t]*:"
             r"[ \t]*(?P<vq>\\?[\"'])?(?P<val>[^\r\n\"'\\]+)", re.I),
    "bearer": (r"(?<![\w-])(?i:bearer)[ \t]+(?P<tok>[A-Za-z0-9._~+/-]{16,}=*)",
               0),
    # KEY<sep>value.  The match starts at the secret word inside the key (a
    # leading [\w.-]* would make the search quadratic on long words); the
    # unquoted value is measured in Python (_kv_value).
    "kv": (_KW + r"(?P<rest>[\w.-]{0,80})(?P<kq>\\?[\"'])?"
           r"(?P<sp1>[ \t]*)(?P<sep>[:=])(?![:=])(?P<sp2>[ \t]*)"
           r"(?P<val>\\\"(?:(?!\\\")[^\r\n])*\\\"|\"(?:[^\"\\\r\n]|\\.)*\""
           r"|'(?:[^'\\\r\n]|\\.)*')?", re.I),
    "kv_key": (_KW + r"|authorization", re.I),
    # An unquoted value in the middle of a line ends where a shell word would.
    "kv_word": (r"[^\s\"'`;&|<>]*", 0),
    # An identifier path right before "(" or "[": a call or a subscript.
    "code": (r"[A-Za-z_][\w.]*[ \t]*[(\[]", 0),
    "marker": (r"\[REDACTED:[\w-]+\]", 0),
}

_compiled = {}


def _rx(name):
    """Compile pattern `name` on first use; cache it for the process."""
    rx = _compiled.get(name)
    if rx is None:
        pattern, flags = _SOURCES[name]
        rx = _compiled[name] = re.compile(pattern, flags)
    return rx


def _marker(kind):
    return MARK + kind + "]"


def _is_marker(v):
    return v.startswith(MARK) and _rx("marker").fullmatch(v) is not None


_LITERALS = frozenset(("none", "null", "nil", "true", "false", "undefined",
                       "''", '""', "[]", "{}"))
_MASK_CHARS = frozenset("*xX.•…-_#")
_OPENER = {")": "(", "]": "[", "}": "{"}
_TYPE_WORDS = frozenset((
    "str", "bytes", "int", "float", "bool", "string", "number", "boolean",
    "any", "none", "optional", "union", "list", "dict", "object", "unknown",
    "char", "secretstr", "secretbytes", "text",
))


def _placeholder(v):
    """True for values that name or mask a secret rather than being one."""
    v = v.strip()
    if not v:
        return True
    c, last = v[0], v[-1]
    if c == "$":  # $VAR, ${VAR}, $(cmd), ${{ secrets.X }}
        return True
    if (c == "<" and last == ">") or (c == "{" and last == "}"):
        return True  # <your-key>, {token}, {{ vault.x }}
    if c == "%" and v.startswith("%("):
        return True  # %(password)s
    if v.lower() in _LITERALS or (len(v) >= 3 and set(v) <= _MASK_CHARS):
        return True
    return _is_marker(v)


def _type_annotation(v):
    """`str`, `Optional[str] = None`, `string;`: a declaration, not a value."""
    i = 0
    n = len(v)
    while i < n and (v[i].isalnum() or v[i] == "_"):
        i += 1
    return i > 0 and v[:i].lower() in _TYPE_WORDS


def _is_ident_path(v):
    """`token`, `self._password`, `settings.API_KEY`."""
    return bool(v) and not v[0].isdigit() and v.replace(".", "").replace(
        "_", "").isalnum() and ".." not in v


def _same_name(v, key):
    """`token=token`, `password=args.password`: a variable, not a secret."""
    if not _is_ident_path(v):
        return False
    a = v.rsplit(".", 1)[-1].lstrip("_").lower()
    b = key.rsplit(".", 1)[-1].lstrip("-_").lower()
    return a == b


def _kv_value(text, m):
    """Decide what to redact for one "kv" match.

    Returns (start, end, kind), or None when the value should stay.
    """
    ks = m.start()
    lo = max(0, ks - 80)
    while ks > lo and (text[ks - 1].isalnum() or text[ks - 1] in "_.-"):
        ks -= 1
    key = text[ks:m.end("rest")]
    if key.lower().lstrip("-") in ("pwd", "oldpwd"):
        return None  # the shell's working directory, not a password
    quoted_key = m.group("kq") is not None
    kind = "secret-field" if quoted_key else "env-secret"
    numeric_ok = m.group(0)[:4].lower() in ("toke", "auth")  # token_count: 5

    val = m.group("val")
    if val is not None:  # a quoted value: redact inside the quotes
        q = 2 if val[0] == "\\" else 1
        vs, ve = m.start("val") + q, m.end("val") - q
        inner = text[vs:ve]
        if _placeholder(inner) or (numeric_ok and inner.isdigit()):
            return None
        return vs, ve, kind

    sep = m.group("sep")
    spaced = bool(m.group("sp1") or m.group("sp2"))
    vs = m.end()
    n = len(text)
    # "Line form": the key starts its line (after indentation, `export`, a
    # YAML list dash).  There a `KEY: value` or `KEY = value` runs to the end
    # of the line (YAML, INI, headers); elsewhere a value ends like a shell
    # word, so `TOKEN=x cmd --flag` keeps its command.
    ls = text.rfind("\n", lo, ks) + 1
    line_form = False
    if not quoted_key and (ls or lo == 0):
        prefix = text[ls:ks].strip()
        line_form = prefix in ("", "export", "set", "-", "env", "#")
    if line_form and (sep == ":" or spaced):
        ve = text.find("\n", vs)
        if ve < 0:
            ve = n
        while ve > vs and text[ve - 1] in " \t\r":
            ve -= 1
        v = text[vs:ve]
        if not v or v[0] in "\"'`":
            return (vs, ve, kind) if v.strip("\"'` ") else None
        if sep == ":" and _type_annotation(v):
            return None
        if _rx("code").match(v):
            return None
        if spaced and sep == "=" and (_is_ident_path(v) and "." in v):
            return None  # token = settings.TOKEN
    else:
        if sep == "=" and spaced:
            return None  # `x = token` mid-line is code, not config
        if vs < n and text[vs] in "\"'`":
            # An unterminated quote (a terminated one matched above).
            ve = text.find("\n", vs)
            ve = n if ve < 0 else ve
            return (vs, ve, kind) if text[vs + 1:ve].strip() else None
        ve = _rx("kv_word").match(text, vs).end()
        if _rx("code").match(text, vs, min(n, ve + 1)):
            return None  # token=get_token(), api_key=os.environ["X"]
        v = text[vs:ve]
        # Drop closers that belong to the surrounding code: f(token=abc),
        # {"token": abc} -- but keep balanced ones: p(ss), [REDACTED:x].
        while v and v[-1] in ")]},":
            c = v[-1]
            if c != "," and v.count(_OPENER[c]) >= v.count(c):
                break
            v = v[:-1]
        ve = vs + len(v)
        if sep == ":" and _type_annotation(v):
            return None  # def f(token: str)
    if _placeholder(v) or _same_name(v, key) or (numeric_ok and v.isdigit()):
        return None
    return vs, ve, kind


def _redact_kv(text):
    rx = _rx("kv")
    out = []
    last = pos = 0
    while True:
        m = rx.search(text, pos)
        if m is None:
            break
        found = _kv_value(text, m)
        if found is None:
            pos = m.end("sep")  # rescan the value: it may hold another key
            continue
        vs, ve, kind = found
        out.append(text[last:vs])
        out.append(_marker(kind))
        last = pos = ve
    if not out:
        return text
    out.append(text[last:])
    return "".join(out)


def _auth_repl(m):
    raw = m.group("val")
    v = raw.rstrip()
    if m.group("kq") and not m.group("vq"):
        return m.group(0)  # {"Authorization": token} -- code, not a header
    if _type_annotation(v) or _placeholder(v):
        return m.group(0)
    scheme, sp, cred = v.partition(" ")
    if sp and cred.strip() and scheme.replace("-", "").isalnum():
        cred = cred.strip()
        if _placeholder(cred) or cred.startswith(("+", "{", "%")):
            return m.group(0)  # "Bearer " + token, Bearer {token}
        keep = scheme + " "
    else:
        keep = ""
    start = m.start("val") - m.start()
    return m.group(0)[:start] + keep + _marker("auth-header") + raw[len(v):]


def _bearer_repl(m):
    tok = m.group("tok")
    has_digit = any(c.isdigit() for c in tok)
    mixed = not tok.islower() and not tok.isupper() and len(tok) >= 20
    if has_digit or mixed:  # prose ("bearer authentication") has neither
        return m.group(0)[: m.start("tok") - m.start()] + _marker("bearer-token")
    return m.group(0)


def _sub(name, repl):
    """A rule that replaces each match of pattern `name` with `repl`."""
    def apply(text):
        return _rx(name).sub(repl, text)
    return apply


# (triggers, check lower-cased text?, apply).  Order matters: PEM blocks and
# URLs first (they contain other shapes), specific token formats before the
# generic Authorization/Bearer/KEY=value rules so those see markers, not keys.
_RULES = (
    (("PRIVATE KEY",), False, _sub("pem", _marker("private-key"))),
    (("://",), False, _sub("url", r"://\g<user>:" + _marker("url-password") + "@")),
    (("hooks.slack.com",), False,
     _sub("slack_hook", r"\g<1>" + _marker("slack-webhook"))),
    (("sk-ant-",), False, _sub("anthropic", _marker("anthropic-key"))),
    (("sk-",), False, _sub("openai", _marker("openai-key"))),
    (("k_live_", "k_test_"), False, _sub("stripe", _marker("stripe-key"))),
    (("npm_",), False, _sub("npm", _marker("npm-token"))),
    (("hf_",), False, _sub("hf", _marker("huggingface-token"))),
    (("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"), False,
     _sub("github", _marker("github-token"))),
    (("glpat-", "glptt-", "gldt-", "glrt-"), False,
     _sub("gitlab", _marker("gitlab-token"))),
    (("xox", "xapp-"), False, _sub("slack", _marker("slack-token"))),
    (("AKIA", "ASIA", "ABIA", "ACCA"), False,
     _sub("aws_id", _marker("aws-access-key"))),
    (("AIza",), False, _sub("google", _marker("google-api-key"))),
    (("eyJ",), False, _sub("jwt", _marker("jwt"))),
    (("secret",), True, _sub("aws_secret", r"\g<1>" + _marker("aws-secret-key"))),
    (("authorization",), True, _sub("auth", _auth_repl)),
    (("bearer",), True, _sub("bearer", _bearer_repl)),
    (_KW_TRIGGERS, True, _redact_kv),
)


def redact(text):
    """Replace every secret in `text` with ``[REDACTED:<kind>]``.

    Never raises on a str (lone surrogates included); other types are
    returned unchanged.
    """
    if not isinstance(text, str) or not text:
        return text
    low = text.lower()  # only for trigger checks; positions never used
    for triggers, ci, apply in _RULES:
        hay = low if ci else text
        for t in triggers:
            if t in hay:
                text = apply(text)
                break
    return text


def is_secret_key(key):
    """True if a field name such as ``password`` or ``GITHUB_TOKEN`` looks
    like it holds a secret."""
    if not isinstance(key, str):
        return False
    low = key.lower()
    if low.lstrip("-") in ("pwd", "oldpwd"):
        return False
    for t in _KW_TRIGGERS:
        if t in low:
            return _rx("kv_key").search(key) is not None
    return False


def _secret_field_value(key, v):
    if _placeholder(v):
        return v
    if v.isdigit() and ("token" in key.lower() or "auth" in key.lower()):
        return v  # {"token_count": "12"}
    return _marker("secret-field")


def redact_value(obj):
    """Return a copy of `obj` (dicts, lists, tuples) with every string leaf
    redacted.  A string under a secret-looking dict key is replaced whole."""
    if isinstance(obj, str):
        return redact(obj)
    if isinstance(obj, dict):
        out = {}
        for k, v in obj.items():
            if isinstance(v, str) and is_secret_key(k):
                out[k] = _secret_field_value(k, v)
            else:
                out[k] = redact_value(v)
        return out
    if isinstance(obj, list):
        return [redact_value(v) for v in obj]
    if isinstance(obj, tuple):
        return tuple(redact_value(v) for v in obj)
    return obj
