"""Issue 20, "secrets by class, not by list": 92 secret contexts like those that reached ace.db at d570f9d
(vendor formats, keyword context, connection strings, schemeless authorities, other languages,
and the evasions: split, zero-width, URL-encoded, base64, full-width), planted through the real
hook processes and the team server's policy, then looked for in every byte under ACE_HOME.

Fake values are assembled from pieces so this file holds no literal a secret scanner would flag.
Also: every row of the gitleaks / detect-secrets table compiles and catches a value generated
from its own pattern, and ordinary text (SHAs, UUIDs, identifiers, base64 of words) is kept.
"""

import base64
import random
import re
import re._constants as C  # noqa: N812
import re._parser as sre

import pytest

from ace_engine.redact.redactor import redact
from hookutil import payload, run_hooks

try:
    from ace_engine.redact import rule_table as secret_rules
except ImportError:  # before issue 20 there was no table: the corpus tests still run (and fail)
    secret_rules = None

A = "a1B2c3D4e5F6g7H8j9K0"
H = "0123456789abcdef"


def sec(*parts):
    return "".join(parts)


GH = sec("ghp", "_", A, "Ab3Cd5Ef7Gh9Ij1K")
AZ = sec("Q2x9", "Lk3mPz7Rt0Vb5Nc8/w4Ys1Ud6Ef2Gh9Ij0KlMn3Op5Qr7St9Uv1Wx3Yz5Ab7Cd9Ef1Gh3Ij5Kl7Mn9Op1Qr3+t5Uv==")
TG = sec("123456789", ":AA", "Fz8kL2mN4pQ6rS8tU0vW2xY4zA6bC8dE0f")

# (class, text with {s}, secret)
CASES = [
    ("hf-digits", "HF model pull with {s}", sec("hf", "_", "aB3dE5gH7jK9mN1pQ3sT5vXy7zA9bC1dE3")),
    ("azure-accountkey", "DefaultEndpointsProtocol=https;AccountName=a;AccountKey={s};EndpointSuffix=core.windows.net", AZ),
    ("curl-b", "curl -b 'session={s}' https://app.example.com/api", sec("Sess", "9f8e7d6c5b4a3210Zz")),
    ("git-schemeless", "git clone alice:{s}@git.example.com:org/repo.git", sec("Cl0ne", "Pw!x77")),
    ("telegram-url", "curl https://api.telegram.org/bot{s}/sendMessage -d chat_id=1", TG),
    ("db-pass", 'DB_PASS = "{s}"', sec("Db", "Pa55w0rdX")),
    ("spanish", "la contraseña: {s}", sec("Hola", "Mundo2024")),
    ("german", "Das Passwort ist {s} bitte merken", sec("Sommer", "2024xY")),
    ("french", "le mot de passe est {s}", sec("Soleil", "77abc")),
    ("portuguese", "senha = {s}", sec("Praia", "99xyz")),
    ("datadog", "DATADOG_API_KEY={s}", sec(H, H, "a1b2c3d4")),
    ("mailgun", "MAILGUN_KEY = key-{s}", sec(H, H)),
    ("square", "square token {s}", sec("sq0atp-", "Ab3Cd5Ef7Gh9Ij1Kl3Mn5O")),
    ("age", "key: {s}", sec("AGE-SECRET-KEY-1", "QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7LQPZRY9X8GF2TVDW0S3JN54KHCE")),
    ("terraform", "TFE_TOKEN {s}", sec("Ab3Cd5Ef7Gh9Ij", ".atlasv1.", "aB3dE5gH7jK9mN1pQ3sT5vXy7zA9bC1dE3fG5hI7jK9lM1nO3pQ5rS7tU9vW1xY")),
    ("sentry-dsn", "SENTRY=https://{s}@o12345.ingest.sentry.io/67890", sec(H, "fedcba9876543210")),
    ("discord-webhook", "https://discord.com/api/webhooks/123456789012345678/{s}",
     sec("AbCdEf", "GhIjKlMnOpQrStUvWxYz0123456789", "-_abcdefGHIJKLmnopQRSTuvwxYZ012345")),
    ("aws-bare", "aws creds AKIAIOSFODNN7EXAMPLE {s}", sec("wJalrXUtnFEMI", "/K7MDENG/bPxRfiCYzz9Kq1Ab3X")),
    ("azure-json", '{{"conn": "DefaultEndpointsProtocol=https;AccountName=a;AccountKey={s}"}}',
     sec("Q2x9Lk3mPz7Rt0Vb5Nc8w4Ys1Ud6Ef2Gh9", "Ij0KlMn3Op5Qr7St9Uv1Wx3Yz5Ab7Cd9Ef1Gh3Ij5Kl7Mn9Op1Qr3Ab")),
    ("curl-b-short", "curl -sS -b 'sid={s}' https://app.example.com/me", sec("8Kq2", "Lm9Xw3")),
    ("datadog-yaml", "monitoring:\n  datadog.appkey: {s}\n", sec(H, H, "a1b2c3d4")),
    ("mailgun-signing", "MAILGUN_SIGNING={s}", sec("a1b2c3d4e5f6a7b8", "c9d0e1f2a3b4c5d6-a1b2c3d4-e5f6a7b8")),
    ("base64-password", "echo {b64pw} | base64 -d > .env", sec("Hunter", "2x!Secret")),
    ("mailchimp", "mc key {s}", sec(H, "fedcba9876543210", "-us14")),
    ("jdbc", "jdbc:postgresql://db:5432/app?user=app&password={s}&ssl=true", sec("Jdbc", "Pw8812x")),
    ("discord-bot", "bot token {s}", sec("MTA4", "NzY1NDMyMTA5ODc2NTQz", ".", "GhIjKl", ".", "AbCdEfGhIjKlMnOpQrStUvWxYz0")),
    ("mysql-long", "mysql --host db --password={s} app", sec("My", "Sql2024pw")),
    ("split", 'token = "{a}" + "{b}"', GH),
    ("zero-width", "here {a}\u200b{b} there", GH),
    ("url-encoded", "open https://x.example.com/?t={enc}&a=1", GH),
    ("base64", "echo {b64} | base64 -d", GH),
    ("full-width", "key {fw} end", GH),
]


def render(template, secret):
    if template.startswith("{s_evaded}\0"):
        return template.split("\0", 1)[1]
    half = len(secret) // 2
    return template.format(
        s=secret, a=secret[:half], b=secret[half:],
        enc="".join(f"%{ord(c):02X}" if c in "_" else c for c in secret),
        b64=base64.b64encode(("export GITHUB_TOKEN=" + secret).encode()).decode(),
        b64pw=base64.b64encode(("DB_PASSWORD=" + secret).encode()).decode(),
        fw="".join(chr(ord(c) + 0xFEE0) for c in secret))


# Each evasion over several classes (a token, a key=value, a stated password, a URL password):
# the whole context is hidden, as a paste through a chat tool or an encoder would.
EVADED = {
    "gh-token": f"export GITHUB_TOKEN={GH}",
    "aws-id": "aws_access_key_id = AKIA" + "QWERTYUIOP123456",
    "stripe": "STRIPE_KEY=" + sec("sk", "_live_", A, "Zz9"),
    "slack": "SLACK=" + sec("xoxb-", "1234567890-", "0987654321-", "AbCdEfGhIjKlMnOpQrStUvWx"),
    "db-pass": 'DB_PASS = "' + sec("Db", "Pa55w0rdX") + '"',
    "stated": "my password is " + sec("Blue", "Moon7744"),
    "url-pass": "https://deploy:" + sec("Url", "Pw5566zz") + "@git.example.com/r.git",
    "age": sec("AGE-SECRET-KEY-1", "QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7LQPZRY9X8GF2TVDW0S3JN54KHCE"),
    "square": "sq token " + sec("sq0atp-", "Ab3Cd5Ef7Gh9Ij1Kl3Mn5O"),
    "hf": "HF_TOKEN=" + sec("hf", "_", "aB3dE5gH7jK9mN1pQ3sT5vXy7zA9bC1dE3"),
    "spanish": "la contraseña: " + sec("Hola", "Mundo2024"),
    "sentry": "dsn https://" + sec(H, "fedcba9876543210") + "@o1.ingest.sentry.io/2",
}
_SECRET_OF = {k: v.rsplit("=", 1)[-1].split(" ")[-1].strip('"').split("@")[0].split(":")[-1].replace("dsn https//", "")
              for k, v in EVADED.items()}
_SECRET_OF["aws-id"] = "AKIA" + "QWERTYUIOP123456"
_SECRET_OF["sentry"] = sec(H, "fedcba9876543210")
_SECRET_OF["url-pass"] = sec("Url", "Pw5566zz")


def _zero_width(t):
    return "\u200b".join(t[i:i + 5] for i in range(0, len(t), 5))


def _full_width(t):
    return "".join(chr(ord(c) + 0xFEE0) if "!" <= c <= "~" else c for c in t)


def _url_encoded(t):
    return "".join(f"%{ord(c):02X}" if not c.isalnum() else c for c in t)


def _base64(t):
    return "echo " + base64.b64encode(t.encode()).decode() + " | base64 -d"


def _split(t):
    half = len(t) // 2
    return f'x = "{t[:half]}" + "{t[half:]}"'


EVASIONS = {"zero-width": _zero_width, "full-width": _full_width, "url-encoded": _url_encoded,
            "base64": _base64, "split": _split}
for _cls, _ctx in EVADED.items():
    for _ev, _how in EVASIONS.items():
        CASES.append((f"{_cls}+{_ev}", "{s_evaded}" + "\0" + _how(_ctx), _SECRET_OF[_cls]))


# Not yet caught when this file was written (issue 20 left open on these): listed, not hidden.
GAPS: set = set()


def _gap(kind):
    if kind in GAPS:
        pytest.xfail(f"{kind}: known gap, see issue 20")


TEXTS = [render(t, s) for _, t, s in CASES]
SECRETS = {kind: s for kind, _, s in CASES}


def revealed(out: str, secret: str) -> bool:
    """Does `out` still give away `secret` -- any 12 characters of it -- once a reader undoes
    the evasions (percent-encoding, zero-width and full-width characters, split strings)?"""
    import unicodedata
    import urllib.parse

    plain = unicodedata.normalize("NFKC", urllib.parse.unquote(out)).replace("\u200b", "")
    plain = re.sub(r"[\"'][ \t]*\+?[ \t]*[\"']", "", plain)
    k = min(12, len(secret))
    return any(secret[i:i + k] in plain for i in range(len(secret) - k + 1))


@pytest.mark.parametrize(("kind", "template", "secret"), CASES, ids=[c[0] for c in CASES])
def test_redact_removes_each_class(kind, template, secret):
    _gap(kind)
    out = redact(render(template, secret))
    assert not revealed(out, secret), out


def _bytes_under(root):
    blobs = []
    for path in root.rglob("*"):
        if path.is_file():
            try:
                blobs.append(path.read_bytes())
            except OSError:
                pass
    return b"\n".join(blobs)


def test_hooks_write_no_secret_of_any_class(ace_home, git_project):
    """PostToolUse and UserPromptSubmit through the real hook engine, a real SQLite store: no
    planted value is in ace.db, its WAL, the spool or the log. One session of 93 events in ONE
    process (`run_hooks`; a process per event took ~6 minutes on the shared test machine), each
    text still its own event."""
    cwd = str(git_project)
    events = [("UserPromptSubmit", payload("UserPromptSubmit", cwd, prompt="\n".join(TEXTS)))]
    for i, text in enumerate(TEXTS):
        events.append(("PostToolUse", payload(
            "PostToolUse", cwd, tool_name="Bash", tool_use_id=f"t-{i}", tool_input={"command": text},
            tool_response={"stdout": text, "stderr": "", "interrupted": False})))
    answers = run_hooks(events)
    assert len(answers) == len(events)
    assert all(code == 0 for code, _ in answers), answers
    assert any(p.name == "ace.db" for p in ace_home.rglob("*"))
    import sqlite3

    con = sqlite3.connect(ace_home / "ace.db")
    try:  # every event was stored: none lost, so none passes for redacted
        assert con.execute("SELECT COUNT(*) FROM tool_events").fetchone()[0] == len(TEXTS)
    finally:
        con.close()
    blob = _bytes_under(ace_home).decode("utf-8", "replace")
    found = [k for k, s in SECRETS.items() if revealed(blob, s) and k not in GAPS]
    assert found == [], f"{len(found)} of {len(CASES)} reached disk: {found}"


def test_server_policy_strips_every_class():
    """The team server's screen (server/policy.py) keeps no planted value in what it would store."""
    from ace_engine.playbook.ids import new_id
    from ace_engine.server import policy

    for i, text in enumerate(TEXTS):
        delta = {"op": "ADD", "key": f"k-{i}", "lesson_id": new_id(1_700_000_000.0 + i), "section": "general",
                 "content": "When deploying: " + text}
        verdict = policy.screen(delta)
        assert "content" in verdict.body, verdict
        body = str(verdict.body) + str(verdict)
        leaked = [k for k, s in SECRETS.items() if revealed(body, s)]
        assert leaked == [], (text, leaked)


# -- the table: every row compiles and catches a value generated from its own pattern -----------

_ALNUM = "abcdefghijkmnpqrstuvwxyzABCDEFGHJKLMNPQRSTUVWXYZ0123456789"


def _category(name, rng):
    name = str(name)
    if "NOT" in name:
        return rng.choice(_ALNUM) if "SPACE" in name else rng.choice(" ;")
    if "DIGIT" in name:
        return rng.choice("0123456789")
    if "WORD" in name:
        return rng.choice(_ALNUM + "_")
    return " "


def _gen(items, rng):
    """A string matching the parsed pattern `items` (random within classes, short repeats)."""
    out = []
    for op, av in items:
        if op is C.LITERAL:
            out.append(chr(av))
        elif op is C.NOT_LITERAL:
            out.append(rng.choice(_ALNUM))
        elif op is C.IN:
            if av and av[0][0] is C.NEGATE:
                out.append(rng.choice(" ;\"'a1"))  # retried until the whole sample matches
                continue
            chars = []
            for kind, v in av:
                if kind is C.LITERAL:
                    chars.append(chr(v))
                elif kind is C.RANGE:
                    chars.extend(chr(x) for x in range(v[0], v[1] + 1))
                elif kind is C.CATEGORY:
                    chars.append(_category(v, rng))
            out.append(rng.choice(chars or ["a"]))
        elif op in (C.MAX_REPEAT, C.MIN_REPEAT):
            lo, hi, sub = av
            k = lo + 16 if hi == C.MAXREPEAT else (lo if lo else min(hi, 1))
            for _ in range(k):
                out.append(_gen(list(sub), rng))
        elif op is C.SUBPATTERN:
            out.append(_gen(list(av[3]), rng))
        elif op is C.BRANCH:
            out.append(_gen(list(rng.choice(av[1])), rng))
        elif op is C.CATEGORY:
            out.append(_category(av, rng))
        elif op is C.ANY:
            out.append(rng.choice(_ALNUM))
    return "".join(out)


def _sample(pattern, flags, rng):
    for _ in range(200):
        s = _gen(list(sre.parse(pattern, flags)), rng)
        if re.search(pattern, s, flags):
            return s
    return None


TOKEN_ROWS = secret_rules.TOKEN_RULES + secret_rules.DETECT_SECRETS_RULES if secret_rules else ()
CONTEXT_ROWS = secret_rules.CONTEXT_RULES + secret_rules.DETECT_SECRETS_CONTEXT if secret_rules else ()


def test_every_row_compiles():
    for _rid, _, pattern, icase, _, _ in TOKEN_ROWS:
        re.compile(pattern, re.I if icase else 0)
    for _rid, _, name, value, _ in CONTEXT_ROWS:
        re.compile("(?:" + name + ")" + value, re.I)
    assert len(TOKEN_ROWS) + len(CONTEXT_ROWS) > 200


@pytest.mark.parametrize("row", CONTEXT_ROWS, ids=[r[0] for r in CONTEXT_ROWS])
def test_context_row_catches_its_sample(row):
    rid, keywords, _, value, _ = row
    _gap(rid)
    rng = random.Random(rid)
    v = _sample("(?:" + value + ")", re.I, rng)
    assert v, rid
    key = keywords[0].upper().replace(".", "_") + "_SECRET"
    out = redact(f"{key} = {v}\n" if v.startswith('"') else f'{key} = "{v}"\n')
    assert v not in out, (rid, out)


@pytest.mark.parametrize("row", TOKEN_ROWS, ids=[r[0] for r in TOKEN_ROWS])
def test_token_row_catches_its_sample(row):
    rid, _, pattern, icase, group, _ = row
    _gap(rid)
    rng = random.Random(rid)
    s = _sample(pattern, re.I if icase else 0, rng)
    assert s is not None, f"{rid}: no sample generated from its pattern"
    m = re.search(pattern, s, re.I if icase else 0)
    secret = m.group(group if group <= m.re.groups else 0) or m.group(0)
    out = redact(f"{' '.join(row[1])} value: {s} \n")  # its keywords nearby, as gitleaks wants
    assert secret not in out, (rid, out)


# -- ordinary text is kept ----------------------------------------------------------------------

ORDINARY = [
    "commit 3f2a9c1d8e7b6a5f4e3d2c1b0a9f8e7d6c5b4a39 fixed the parser",
    "/tmp/build/5b2f6c1e-3d4a-4b8e-9f10-2a3b4c5d6e7f/output.log",
    "def compute_incremental_reindex_for_partition_boundaries(self, partitions):",
    "echo " + base64.b64encode(b"the quick brown fox jumps over the lazy dog").decode(),
    "Passwort vergessen? Klicken Sie hier.",
    "mailto:bob@example.com and git@github.com:org/repo.git",
    "docker run -u 1000:1000 image:1.2@sha256:" + H * 4,
    "collected 42 items\ntests/test_api.py ......... [ 21%]",
]


@pytest.mark.parametrize("text", ORDINARY)
def test_ordinary_text_is_kept(text):
    assert redact(text) == text
