"""KEY=value secrets: after a secret-looking key (`token`, `password`, `api_key` …), which value is
a secret to redact and which is a name, a reference, a mask, a type or code that stays; a mapping
or list under such a key is judged by its values (`_structure`; `redactor.redact_value` applies the
same rule to parsed JSON, with the same `DESCRIBES`).

Part of the redactor (`redact`), split out as the one rule with real judgement in it; `redact`
finds the secret words (`KW_TRIGGERS`) and calls `kv_rule` at their positions. Same cost rules:
only `re`, every pattern compiled on first use, each match anchored at a needle; a structure is read
once, at most `_STRUCT_REACH` characters.
"""

import re

from .spans import MARK, marker, rx

TYPE_CHECKING = False  # not `typing.TYPE_CHECKING`: hooks import this module and must not load `typing`
if TYPE_CHECKING:
    # (start, end, kind) of a value to redact.
    Found = tuple[int, int, str]

# Words that make a key name look secret.  `token` excludes "tokens"/"tokenizer"
# (max_tokens, input_tokens are everywhere in LLM tooling) and `auth` excludes
# "author", "authority" and "authorization" (the auth-header rule owns that).
KW = (
    r"(?:secret|token(?!s|iz)|passw(?:or)?d|passphrase|pwd|api[_-]?key"
    r"|private[_-]?key|access[_-]?key|account[_-]?key|credentials?|auth(?!or)|(?<![a-z])pass(?![a-z]))"
)
# Lower-case needles: every KW alternative starts with one of them.
KW_TRIGGERS = ("secret", "token", "passw", "passphrase", "pwd", "api",
               "private", "access", "credential", "auth", "pass", "account")

_SOURCES = {
    # KEY<sep>value.  The match starts at the secret word inside the key;
    # the unquoted value is measured in Python (`_kv_value`).
    "kv": (KW + r"(?P<rest>[\w.-]{0,80})(?P<kq>\\?[\"'])?"
           r"(?P<sp1>[ \t]*)(?P<sep>[:=])(?![:=])(?P<sp2>[ \t]*)"
           r"(?P<val>\\\"(?:(?!\\\")[^\r\n])*\\\"|\"(?:[^\"\\\r\n]|\\.)*\""
           r"|'(?:[^'\\\r\n]|\\.)*')?", 0),
    # An unquoted value in the middle of a line ends where a shell word would, or at an escaped
    # newline or tab of JSON-encoded text (`\"token\": token),\n+`).
    "kv_word": (r"(?:[^\s\"'`;&|<>\\]|\\(?![nrt]))*", 0),
    # An identifier path right before "(" or "[": a call or a subscript.
    "code": (r"[A-Za-z_][\w.]*[ \t]*[(\[]", 0),
    "marker": (re.escape(MARK) + r"[\w-]+\]", 0),
    # A format verb stands where the value will go (`fmt.Errorf("bad secret: %w", err)`, `%-8v`).
    "verb": (r"%[-+ #0]*\d*(?:\.\d+)?[a-zA-Z]", 0),
    # A number: what a `token` key counts (`max_token: 5`, `bytes_per_token: 3.9`), never a secret.
    "number": (r"\d+(?:\.\d+)?", 0),
}



def _rx(name: str) -> re.Pattern[str]:
    """Pattern `name` of the table, compiled on first use (`spans.rx`)."""
    return rx(*_SOURCES[name])


def _is_marker(v: str) -> bool:
    """True if `v` is only markers (and blanks or escaped newlines), e.g. a
    JSON "private_key" value whose PEM block was already redacted."""
    if MARK not in v:
        return False
    rest = _rx("marker").sub("", v).replace("\\n", "").replace("\\r", "")
    return not rest.strip()


_LITERALS = frozenset(("none", "null", "nil", "true", "false", "undefined",
                       "''", '""', "[]", "{}",
                       # what a check prints of a secret instead of it (`echo "TOKEN: set"`)
                       "set", "unset", "missing", "present", "absent", "empty", "blank", "masked",
                       "redacted", "hidden", "visible", "configured", "provided", "available", "found"))

_MASK_CHARS = frozenset("*xX.•…-_#")
_OPENER = {")": "(", "]": "[", "}": "{"}
TYPE_WORDS = frozenset((
    "str", "bytes", "int", "float", "bool", "string", "number", "boolean",
    "any", "none", "optional", "union", "list", "dict", "object", "unknown",
    "char", "secretstr", "secretbytes", "text",
))


def placeholder(v: str) -> bool:
    """True for values that name or mask a secret rather than being one."""
    v = v.strip()
    if not v:
        return True
    c, last = v[0], v[-1]
    if c == "$":  # $VAR, ${VAR}, $(cmd), ${{ secrets.X }}
        return True
    if (c == "<" and last == ">") or (c == "{" and last == "}"):
        return True  # <your-key>, {token}, {{ vault.x }}
    if c == "%" and (v.startswith("%(") or _rx("verb").fullmatch(v)):
        return True  # %(password)s, %w
    if v in ("{", "[", "("):
        return True  # `"token_usage": {` opens a structure: its own fields are judged in turn
    if v.lower() in _LITERALS or (len(v) >= 3 and set(v) <= _MASK_CHARS):
        return True
    return _is_marker(v)


def number(v: str) -> bool:
    """`12`, `3.9`: what a `token` or `auth` key counts (`max_token: 5`, `bytes_per_token: 3.9`)."""
    return _rx("number").fullmatch(v) is not None


def type_annotation(v: str) -> bool:
    """`str`, `Optional[str] = None`, `string;`: a declaration, not a value."""
    i = 0
    n = len(v)
    while i < n and (v[i].isalnum() or v[i] == "_"):
        i += 1
    return i > 0 and v[:i].lower() in TYPE_WORDS


def _is_ident_path(v: str) -> bool:
    """`token`, `self._password`, `settings.API_KEY`."""
    return bool(v) and not v[0].isdigit() and v.replace(".", "").replace(
        "_", "").isalnum() and ".." not in v


def _same_name(v: str, key: str) -> bool:
    """`token=token`, `password=args.password`, `APIKey: PostHogAPIKey`, `token: default_token`: a
    variable named for what it holds, not a secret. A longer name counts only where the key's name
    starts a word of it (after `_` or at a capital), so `mypassword` stays a value."""
    if not _is_ident_path(v):
        return False
    last = v.rsplit(".", 1)[-1].lstrip("_")
    low = last.lower()
    b = key.rsplit(".", 1)[-1].lstrip("-_").lower().replace("-", "_")
    want = b.replace("_", "")
    if low == b or low.replace("_", "") == want:
        return True
    if not want or low.endswith(("_" + b, "_" + want)):
        return bool(want)
    i = len(last) - len(want)
    return (i > 0 and "_" not in last and low.endswith(want) and last[i].isupper()
            and (last[i - 1].islower() or last[i - 1].isdigit()))


_JUDGE = 1024  # how much of a value the judgement reads: enough for any real secret or name
_last_word: list = [None, 0, -1]  # (text, start, end) of the last word measured


def _word_end(text: str, start: int) -> int:
    """Where an unquoted value starting at `start` ends (`kv_word` also matches nothing).

    Every start inside one word has the same end, so the last word measured is remembered:
    `token=$token=$token=…` costs one scan of the word, not one per key in it."""
    last = _last_word
    if last[0] is text and last[1] <= start <= last[2]:
        return last[2]
    m = _rx("kv_word").match(text, start)
    end = m.end() if m is not None else start
    last[0], last[1], last[2] = text, start, end
    return end


def _random_word(text: str, vs: int) -> bool:
    """`password = pypiPass2024x` mid-line (a flattened pypirc, a prose note): the value is a
    bare word with a digit and a capital or symbol, not a call, an attribute or a snake_case
    name -- so not code."""
    v = text[vs:min(_word_end(text, vs), vs + _JUDGE)].rstrip(",;)")
    if len(v) < 6 or "_" in v or "." in v or "(" in v or "[" in v:
        return False
    return (any(c.isdigit() for c in v)
            and (any(c.isupper() for c in v) or not v.isalnum()))


def _pass_key(text: str, m: "re.Match[str]", key: str) -> bool:
    """Is a bare `pass` key a password's name? `DB_PASS=x`, `pass=x`, `smtp.pass: x` are;
    test verdicts (`PASS: found`, "all tests pass: …") and `LAST_PASS: Final = 1` are not."""
    p = m.start()
    compound = p > 0 and text[p - 1] in "_.-"
    if m.group("sep") == "=":
        return compound or not m.group("rest")
    return compound and key == key.lower()


_STRUCT_REACH = 4096  # how much of a structure under a secret key is read: a config block, not a dump
_struct_seen: list = [None, 0, -1]  # (text, start, end) of the last structure judged to hold no secret
_LEAF_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-./+=~@!#$%^&*?")
# Keys inside such a structure whose values describe the secret rather than being it
# (`"auth": {"type": "oauth", "scopes": ["repo"]}`, `"token_usage": {"model": "…"}`).
DESCRIBES = frozenset(("type", "kind", "model", "name", "provider", "method", "scope", "scopes", "algorithm",
                        "alg", "url", "uri", "endpoint", "host", "region", "format", "version", "issuer",
                        "audience", "header", "prefix", "source", "env", "file", "path", "user", "username",
                        "login", "email", "id", "client_id", "app_id", "key_id"))


def _structure(text: str, vs: int, kind: str) -> "Found | None":
    """`"api_key": {"value": "abc"}`, `token: [abc, def]`: a structure under a secret key, whose values
    are the secret. The whole structure is redacted when one of its values (a string or a bare word
    that is no key) is no placeholder, literal or number and no key of `DESCRIBES` holds it; one
    holding none (`"token_usage": {"input_tokens": 12}`, `"auth": {"type": "oauth"}`) stays. Read up to
    `_STRUCT_REACH`: unclosed by then, it is judged on what was read and redacted up to there. A
    structure inside one judged to hold no secret is not read again (its values were among those), so
    nested keys cost one pass."""
    seen = _struct_seen
    if seen[0] is text and seen[1] < vs < seen[2]:
        return None
    end = min(len(text), vs + _STRUCT_REACH)
    depth, i, secret, under = 0, vs, False, ""
    while i < end:
        c = text[i]
        if c == '"' or (c == "\\" and text.startswith('\\"', i)):
            delim = '\\"' if c == "\\" else '"'
            j = i + len(delim)
            while j < end and not (text.startswith(delim, j) and (delim != '"' or text[j - 1] != "\\")):
                j += 1
            leaf, i = text[i + len(delim):j], j + len(delim)
        elif c == "#" or text.startswith("//", i):
            j = text.find("\n", i, end)  # a comment (JSONC, YAML): its words are no values
            i = end if j < 0 else j
            continue
        elif c in _LEAF_CHARS:
            j = i
            while j < end and text[j] in _LEAF_CHARS:
                j += 1
            b = i - 1
            while b > vs and text[b] in " \t":
                b -= 1
            leaf, i = text[i:j], j
            if text[b] not in ":[{," or not any(ch.isalnum() for ch in leaf):
                continue  # prose (a comment's words, `//`), not a value: bare values follow `:`, `[` or `,`
        else:
            if c in "{[":
                depth += 1
            elif c in "}]":
                depth -= 1
                if depth == 0:
                    end = i + 1
                    break
            i += 1
            continue
        k = i
        while k < end and text[k] in " \t":
            k += 1
        if k < end and text[k] == ":":
            under = leaf.lower()  # a key: the values that follow are judged under it
        elif under not in DESCRIBES and not placeholder(leaf) and not number(leaf):
            secret = True
    if secret and not (text[vs] == "{" and (text.startswith("{{", vs) or ":" not in text[vs:end])):
        return vs, end, kind  # (a `{…}` without a key in it is a template: `{{ vault_token }}`, `{token}`)
    seen[0], seen[1], seen[2] = text, vs, end
    return None


def _kv_value(text: str, m: "re.Match[str]") -> "Found | None":
    """Decide what to redact for one "kv" match (made on the lower-cased
    text; its spans index `text`).

    Returns (start, end, kind), or None when the value should stay.
    """
    ks = m.start()
    lo = max(0, ks - 80)
    while ks > lo and (text[ks - 1].isalnum() or text[ks - 1] in "_.-"):
        ks -= 1
    key = text[ks:m.end("rest")]
    if key.lower().lstrip("-") in ("pwd", "oldpwd"):
        return None  # the shell's working directory, not a password
    if key.lower() in ("nopasswd", "passwd") and m.group("sep") == ":" and key.isupper():
        return None  # a sudoers tag (`ALL=(ALL) NOPASSWD: ALL`), not a password
    if m.group(0)[:4] == "pass" and m.group(0)[4:5] not in ("w", "p", "c") and not _pass_key(text, m, key):
        return None
    quoted_key = m.group("kq") is not None
    kind = "secret-field" if quoted_key else "env-secret"
    numeric_ok = m.group(0)[:4] in ("toke", "auth")  # token_count: 5

    val = m.group("val")
    if val is not None:  # a quoted value: redact inside the quotes
        q = 2 if val[0] == "\\" else 1
        vs, ve = m.start("val") + q, m.end("val") - q
        inner = text[vs:ve]
        if placeholder(inner) or (numeric_ok and number(inner)):
            return None
        return vs, ve, kind

    sep = m.group("sep")
    spaced = bool(m.group("sp1") or m.group("sp2"))
    vs = m.end()
    n = len(text)
    # A structure: a mapping's or a list's (`"api_key": {…}`, `token: […]`, `KEYS = ["…"]`); after `=`, a
    # `{` is a template (`{{ secrets.X }}`, `{token}`) unless a string starts it, and a marker is no list.
    if vs < n and text[vs] in "{[" and not text.startswith(MARK, vs) and (
            sep == ":" or text[vs] == "[" or text[vs + 1:vs + 2] in ('"', "'", "\n")):
        return _structure(text, vs, kind)
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
        if sep == ":" and type_annotation(v):
            return None
        if _rx("code").match(v):
            return None
        if spaced and sep == "=" and (_is_ident_path(v) and "." in v):
            return None  # token = settings.TOKEN
    else:
        if sep == "=" and spaced and not _random_word(text, vs):
            return None  # `x = token` mid-line is code, not config (unless the value is no name)
        if vs < n and text[vs] in "\"'`":
            # An unterminated quote (a terminated one matched above).
            ve = text.find("\n", vs)
            ve = n if ve < 0 else ve
            return (vs, ve, kind) if text[vs + 1:ve].strip() else None
        ve = _word_end(text, vs)
        if _rx("code").match(text, vs, min(n, ve + 1)):
            return None  # token=get_token(), api_key=os.environ["X"]
        if ve - vs > _JUDGE:
            # A very long word (`token=$token=$token=…`, a blob): judged by its head, so that
            # the keys inside it, each looked at in turn, cost a bounded amount each.
            v = text[vs:vs + _JUDGE]
            if placeholder(v) or _same_name(v, key) or (numeric_ok and number(v)):
                return None
            return vs, ve, kind
        v = text[vs:ve]
        # Drop closers that belong to the surrounding code: f(token=abc),
        # {"token": abc} -- but keep balanced ones: p(ss), [REDACTED:x].
        while v and v[-1] in ")]},":
            c = v[-1]
            if c != "," and v.count(_OPENER[c]) >= v.count(c):
                break
            v = v[:-1]
        ve = vs + len(v)
        if sep == ":" and type_annotation(v):
            return None  # def f(token: str)
    # A struct literal's field (`APIKey: cfg.APIKey,`): its comma is the code's, not the value's.
    named = v[:-1] if v.endswith(",") else v
    if placeholder(v) or _same_name(named, key) or (numeric_ok and number(named)):
        return None
    return vs, ve, kind


def kv_rule(text: str, starts: "list[int]", low: str) -> str:
    """Redact KEY=value values; `starts` are the secret words' positions."""
    kv = _rx("kv")
    out: list[str] = []
    last = 0
    for p in starts:
        if p < last:
            continue  # inside a value already redacted
        m = kv.match(low, p)
        if m is None:
            continue
        found = _kv_value(text, m)
        if found is None:
            continue
        vs, ve, kind = found
        out.append(text[last:vs])
        out.append(marker(kind))
        last = ve
    if not out:
        return text
    out.append(text[last:])
    return "".join(out)
