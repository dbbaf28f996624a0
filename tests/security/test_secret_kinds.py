"""Issue 35, "secrets reaching ace.db": the ten kinds that reached the store at 42195db, by class,
and the two regressions, through the real write paths.

Kinds: Google OAuth client secrets (`GOCSPX-…`), Groq (`gsk_…`), Tailscale (`tskey-auth-…`,
`tskey-…`), LangSmith (`lsv2_pt_…`, `lsv2_sk_…`), ODBC / ADO connection strings (`Pwd=…;`,
`Password=…;`), PuTTY key files (the `Private-Lines:` body), a JWK's private members (`"d"`, `"p"`,
`"q"`, `"dp"`, `"dq"`, `"qi"`, `"k"` beside a `"kty"`), the secret piped into `--password-stdin`
(`echo`, `printf`, here-strings, here-documents, `gh auth login --with-token`), Google OAuth
refresh tokens (`1//0…`) and "private key 0x<64 hex>". Regressions: `docker login -p X` (with the
tool's own options before `login`, `-pX`, `-p=X`, quoted) and `MAILGUN_KEY key-…` (no `=`).

Each value is planted in a prompt, a Bash command and its output, a file read and a failure
(real hook processes, one session), and in a transcript learned with `ace learn --transcript`;
then every byte under ACE_HOME (the store, its WAL, the spool, the log) is searched for any 12
characters of it. In the hooks' test each context carries a tag that must be found in the store, so
a line the caps cut away cannot pass for a redacted one. Fake values are generated (seeded) or
assembled from pieces, so this file holds no literal a secret scanner would flag. At 42195db, 38
of the 47 contexts reach the store through the hooks and 31 through `ace learn --transcript`;
none now.
"""

import json
import random

import pytest

from ace_engine.redact.redactor import redact
from conftest import ace
from hookutil import payload, run_hook, run_hooks
from test_learning_transcript import Transcript


def sec(*parts):
    return "".join(parts)


_RNG = random.Random(35)
ALNUM = "ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz23456789"
HEXDIGITS = "0123456789abcdef"


def r(n: int, alphabet: str = ALNUM) -> str:
    """A fresh random body: no two contexts share a 12-character stretch."""
    return "".join(_RNG.choice(alphabet) for _ in range(n))



# (kind, text with the secret as {s}, secret)
CASES = [
    ("google-oauth", "client_secret {s}", sec("GOCSPX-", r(28))),
    ("google-oauth-json", '{{"web":{{"client_id":"1234-x.apps.googleusercontent.com","client_secret":"{s}"}}}}',
     sec("GOCSPX-", r(14), "-", r(13))),
    ("google-oauth-bare", "the console showed {s} once", sec("GOCSPX-", r(28))),
    ("groq", "export GROQ={s}", sec("gsk_", r(52))),
    ("groq-bare", "use {s} for the groq client", sec("gsk_", r(52))),
    ("tailscale-auth", "tailscale up --auth-key {s}", sec("tskey-", "auth-", r(12), "CNTRL-", r(30))),
    ("tailscale-bare", "key {s}", sec("tskey-", r(12), "CNTRL-", r(30))),
    ("tailscale-api", "TS_API {s}", sec("tskey-", "api-", r(12), "CNTRL-", r(30))),
    ("langsmith-pt", "LANGCHAIN {s}", sec("lsv2_", "pt_", r(32, HEXDIGITS), "_", r(10, HEXDIGITS))),
    ("langsmith-sk", "ls key {s}", sec("lsv2_", "sk_", r(32, HEXDIGITS), "_", r(10, HEXDIGITS))),
    ("odbc-pwd", "Driver={{ODBC Driver 18 for SQL Server}};Server=db;Uid=sa;Pwd={s};", sec("Od", r(10))),
    ("odbc-pwd-last", "DRIVER={{SQL Server}};SERVER=db;UID=sa;PWD={s}", sec("Od", r(10))),
    ("odbc-pwd-braced", "Driver={{x}};Server=db;Uid=sa;Pwd={{{s}}};", sec(r(5), ";", r(7))),
    ("ado-password-spaces", "Server=db;Database=app;User Id=sa;Password={s};Encrypt=true", sec(r(6), " ", r(5), " ", r(6))),
    ("putty", "PuTTY-User-Key-File-3: ssh-ed25519\nEncryption: none\nComment: k\nPublic-Lines: 2\n"
              "AAAAC3NzaC1lZDI1NTE5AAAAIBx\nYZ\nPrivate-Lines: 1\n{s}\nPrivate-MAC: " + "5a" * 32 + "\n",
     sec("AAAAIE", r(38))),
    ("putty-two-lines", "PuTTY-User-Key-File-2: ssh-rsa\nPrivate-Lines: 2\n{s}\nQUFBQUFBQUFB\nPrivate-Hash: x\n",
     sec("AAABAQC", r(40))),
    ("jwk-ec-d", '{{"kty":"EC","crv":"P-256","x":"f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU",'
                 '"y":"x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0","d":"{s}"}}', sec(r(20), "-", r(22))),
    ("jwk-rsa-p", '{{"kty": "RSA", "n": "0vx7agoebGcQSuu", "e": "AQAB", "p": "{s}", "q": "x"}}', sec(r(30), "_", r(30))),
    ("jwk-oct-k", '{{"kty":"oct","k":"{s}","alg":"HS256"}}', r(43)),
    ("jwk-pretty-dq", '{{\n  "kty": "RSA",\n  "e": "AQAB",\n  "dq": "{s}",\n  "qi": "zz"\n}}', sec(r(25), "-", r(30))),
    ("stdin-echo", "echo {s} | docker login -u bob --password-stdin registry.example.com", r(14)),
    ("stdin-echo-quoted", "echo '{s}' | docker login --username bob --password-stdin", sec(r(7), " ", r(7))),
    ("stdin-echo-n", "echo -n {s} | podman login quay.io -u bot --password-stdin", r(14)),
    ("stdin-printf", 'printf "%s" "{s}" | helm registry login r.example.com -u x --password-stdin', r(14)),
    ("stdin-here-string", "docker login -u bob --password-stdin <<< {s}", r(14)),
    ("stdin-here-string-quoted", 'docker login -u bob --password-stdin <<< "{s}"', r(14)),
    ("stdin-here-doc", "docker login -u bob --password-stdin <<EOF\n{s}\nEOF", r(14)),
    ("stdin-gh-token", "echo {s} | gh auth login --with-token", sec("gho_", r(36))),
    ("stdin-powershell", "'{s}' | docker login -u bob --password-stdin registry.example.com", r(14)),
    ("google-refresh", "refresh_token {s}", sec("1//0", r(20), "-", r(40))),
    ("google-refresh-json", '{{"refresh_token": "{s}", "token_type": "Bearer"}}', sec("1//0", r(30), "_", r(30))),
    ("eth-private-key", "private key 0x{s}", r(64, HEXDIGITS)),
    ("eth-private-key-colon", "Private Key: 0x{s}", r(64, HEXDIGITS)),
    ("eth-private-key-env", "PRIVATE_KEY 0x{s}", r(64, HEXDIGITS)),
    ("eth-private-key-is", "the wallet private key is {s}", sec("0x", r(64, HEXDIGITS))),
    # Regressions.
    ("docker-p", "docker login -u bob -p {s} registry.example.com", r(12)),
    ("docker-p-options", "docker --config /tmp/cfg login -u bob -p {s} ghcr.io", r(12)),
    ("docker-p-host", "docker -H tcp://10.0.0.2:2375 login -p {s}", r(12)),
    ("docker-p-equals", "docker login -p={s} r.example.com", r(12)),
    ("docker-p-attached", "docker login -u bob -p{s} r.example.com", r(12)),
    ("docker-p-quoted", "docker login -u bob -p '{s}' r.example.com", sec(r(6), " ", r(6))),
    ("docker-password", "docker login --password {s} registry.example.com", r(12)),
    ("docker-password-equals", "docker login --password={s} registry.example.com", r(12)),
    # SonarQube tokens, met unredacted in a recorded session's curl calls (a token as curl's `-u TOKEN:`).
    ("sonarqube-user", "curl -u squ_{s}: https://sonar.example.com/api/issues/search", r(40, "0123456789abcdef")),
    ("sonarqube-project", "SONAR_TOKEN sqp_{s} mvn sonar:sonar", r(40, "0123456789abcdef")),
    ("mailgun", "MAILGUN_KEY key-{s}", r(32, HEXDIGITS)),
    ("mailgun-tab", "MAILGUN_KEY\tkey-{s}", r(32, HEXDIGITS)),
    ("mailgun-words", "mailgun api key-{s}", r(32, HEXDIGITS)),
    ("mailgun-equals", "MAILGUN_KEY = key-{s}", r(32, HEXDIGITS)),
]

SECRETS = {kind: s for kind, _, s in CASES}
TEXTS = {kind: tmpl.format(s=s) for kind, tmpl, s in CASES}


def tag(kind: str) -> str:
    return f"[case {kind}]"


# Each context is preceded by its tag on a line of its own (`echo PW | …` must start its line, and
# a value that runs to the end of its line must not take the tag with it).
LINES = [f"{tag(kind)}\n{TEXTS[kind]}" for kind, _, _ in CASES]


def revealed(blob: str, secret: str) -> bool:
    """Any 12 characters of `secret` in `blob` (raw or JSON-escaped)."""
    k = min(12, len(secret))
    forms = {secret, json.dumps(secret)[1:-1]}
    return any(f[i:i + k] in blob for f in forms for i in range(len(f) - k + 1))


def _stored(ace_home) -> str:
    blobs = []
    for path in ace_home.rglob("*"):
        if path.is_file():
            try:
                blobs.append(path.read_bytes())
            except OSError:
                pass
    return b"\n".join(blobs).decode("utf-8", "replace")


def _leaked(blob: str) -> list[str]:
    return [kind for kind, secret in SECRETS.items() if revealed(blob, secret)]


@pytest.mark.parametrize(("kind", "template", "secret"), CASES, ids=[c[0] for c in CASES])
def test_redact_removes_each_kind(kind, template, secret):
    out = redact(template.format(s=secret))
    assert not revealed(out, secret), out
    assert redact(out) == out  # idempotent


def test_the_corpus_fits_the_capture_caps():
    """Every line must be stored whole for the tests below to mean anything (the tags check it too)."""
    assert len("\n".join(LINES)) < 7_500


def test_hooks_write_no_secret_of_any_kind(ace_home, git_project):
    """One session, real hook processes: a prompt, a Bash command and its output, a file read and
    a failure, each holding every context, then each context as a Bash call of its own. No value
    is on disk; every line was stored."""
    cwd = str(git_project)
    corpus = "\n".join(LINES)
    events = [
        ("SessionStart", {"source": "startup"}),
        ("UserPromptSubmit", {"prompt": corpus}),
        ("PostToolUse", {"tool_name": "Bash", "tool_use_id": "t-bash", "tool_input": {"command": corpus},
                         "tool_response": {"stdout": corpus, "stderr": "", "interrupted": False}}),
        ("PostToolUse", {"tool_name": "Read", "tool_use_id": "t-read", "tool_input": {"file_path": f"{cwd}/creds.txt"},
                         "tool_response": {"type": "text", "file": {"filePath": f"{cwd}/creds.txt", "content": corpus}}}),
        ("PostToolUseFailure", {"tool_name": "Bash", "tool_use_id": "t-fail", "tool_input": {"command": corpus},
                                "error": "Exit code 1\n" + corpus}),
    ]
    for event, fields in events:
        code, _, err, _ = run_hook(event, payload(event, cwd, **fields))
        assert code == 0, err
    # And each context as a command of its own (one process for the 47 events: `run_hooks`).
    answers = run_hooks([("PostToolUse", payload(
        "PostToolUse", cwd, tool_name="Bash", tool_use_id=f"t-{kind}", tool_input={"command": TEXTS[kind]},
        tool_response={"stdout": TEXTS[kind], "stderr": "", "interrupted": False})) for kind in SECRETS])
    assert [code for code, _ in answers] == [0] * len(SECRETS)
    blob = _stored(ace_home)
    missing = [kind for kind in SECRETS if tag(kind) not in blob]
    assert missing == [], f"lines not stored at all (cut, not redacted): {missing}"
    found = _leaked(blob)
    assert found == [], f"{len(found)} of {len(CASES)} contexts reached disk through the hooks: {found}"


def test_ace_learn_transcript_writes_no_secret_of_any_kind(ace_home, git_project, tmp_path):
    """A transcript holding every context, as a prompt and as one Bash call each, learned by the
    real `ace learn --transcript`: no value is on disk (what it keeps of them: the learning run's
    task, the per-command statistics, the session summary)."""
    t = Transcript(git_project, session="sess-secrets")
    t.prompt("Log in to the registries:\n" + "\n".join(LINES), parent=None)
    for i, line in enumerate(LINES):
        t.calls((f"c{i}", "Bash", {"command": line}, line, i % 3 == 0))
    path = t.write(tmp_path / "sess-secrets.jsonl")
    result = ace("learn", "--transcript", path, "--project", git_project, "--heuristic", "--json", cwd=git_project)
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["turns"], "nothing was learned: the attack did not run"
    blob = _stored(ace_home)
    found = _leaked(blob)
    assert found == [], f"{len(found)} of {len(CASES)} contexts reached disk through ace learn: {found}"


# -- ordinary text around the new rules is kept -------------------------------------------------

ORDINARY = [
    "cd $PWD && ls; export OLDPWD=/tmp",
    "PWD=/home/dev/project make test",
    '{"kty":"EC","crv":"P-256","x":"f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU","y":"x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0"}',
    '{"kty": "RSA", "e": "AQAB", "d": "2024-01-01", "kid": "key-1"}',
    "cat ~/.docker/pw.txt | docker login -u bob --password-stdin",
    'echo "$REGISTRY_PASSWORD" | docker login -u bob --password-stdin',
    "docker login --password-stdin < ~/pw.txt",
    "the cache key 3f2a9c1d8e7b6a5f4e3d2c1b0a9f8e7d6c5b4a39 was evicted",
    "public key AAAAC3NzaC1lZDI1NTE5AAAAIBx7Kq2Lm9Xw3Rt5Yp8Ns1V",
    "Private-Lines: N is the number of base64 lines that follow",
    "the api key field is required",
    "Server=db;Database=app;Trusted_Connection=yes;",
    "Driver={ODBC};Server=db;Uid=sa;Pwd={password};",
    "key-value store, tokenizer tokens, sort keys by value",
    "docker login registry.example.com -u bob",
    "tx hash 0x4c0883a69102937d6231471b5dbb6204fe5129617082792ae468d01a3f362318",
]


@pytest.mark.parametrize("text", ORDINARY)
def test_ordinary_text_is_kept(text):
    assert redact(text) == text


# -- the class, beyond the kinds that reached the store ----------------------------------------

NAMED = [  # a value named as a secret with only blanks (or "is") before it
    ("gpg passphrase {s}", sec(r(10), "7", r(6), "3", r(6))),
    ("the signing key is {s}", r(26)),
    ("CLIENT_SECRET {s}", r(32)),
    ("deploy token: {s}", r(30)),
    ("SECRET_KEY {s}", r(48, HEXDIGITS)),
    ("API_TOKEN\t{s}", r(40, HEXDIGITS)),
]


@pytest.mark.parametrize(("template", "secret"), NAMED, ids=[t.split(" {")[0] for t, _ in NAMED])
def test_a_value_named_as_a_secret_is_redacted_by_class(template, secret):
    out = redact(template.format(s=secret))
    assert not revealed(out, secret), out
