"""Tests for ace_engine.redact.redactor.

Fake secrets are assembled from pieces so that this file holds no literal
that a secret scanner would flag.
"""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ace_engine.redact.redactor import KINDS, is_secret_key, redact, redact_value
from conftest import examples

ALNUM = "a1B2c3D4e5F6g7H8"

ANTHROPIC = "sk-" + "ant-" + "api03-" + (ALNUM * 6)[:93] + "AA"
OPENAI_PROJ = "sk-" + "proj-" + (ALNUM * 10)[:156]
OPENAI_LEGACY = "sk-" + (ALNUM * 3)[:48]
AWS_ID = "AK" + "IA" + "IOSFODNN7" + "EXAMPLE"
AWS_STS_ID = "AS" + "IA" + "Y34FZKBOKMUTVV7A"
AWS_SECRET = "wJalrXUtnFEMI/K7MDENG/" + "bPxRfiCYEXAMPLEKEY"
GH = {p: p + "_" + (ALNUM * 3)[:36] for p in ("ghp", "gho", "ghu", "ghs", "ghr")}
GH_PAT = "github" + "_pat_" + "11ABCDEFG0" + (ALNUM * 6)[:72]
GITLAB = "gl" + "pat-" + "xY3_kP9-qR2sT5vW8zA1"
SLACK = {p: p + "-" + "1234567890-0987654321-" + "AbCdEfGhIjKl"
         for p in ("xoxb", "xoxp", "xoxa", "xoxr", "xoxs")}
SLACK_HOOK_PATH = "T0123ABCD/B0456EFGH/" + "abcdefghijklmnopqrstuvwx"
GOOGLE = "AI" + "za" + "SyD-" + (ALNUM * 3)[:31]
STRIPE = "sk" + "_live_" + (ALNUM * 2)[:24]
JWT = ("eyJ" + "hbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9" + "." + "eyJ"
       + "zdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4ifQ" + "."
       + "SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c")
PEM_BODY = "MIIEowIBAAKCAQEA" + (ALNUM * 4) + "\n" + (ALNUM * 4) + "=="


def pem(label):
    begin = "-----" + "BEGIN " + label + "PRIVATE KEY-----"
    end = "-----" + "END " + label + "PRIVATE KEY-----"
    return begin + "\n" + PEM_BODY + "\n" + end


def check(text, secret, kind, kept=()):
    """`secret` is gone from redact(text), the kind's marker is there, the
    `kept` fragments survive and a second pass changes nothing."""
    out = redact(text)
    assert secret not in out, out
    assert f"[REDACTED:{kind}]" in out, out
    for frag in kept:
        assert frag in out, (frag, out)
    assert redact(out) == out
    return out


# --- one case per kind ------------------------------------------------------

TOKEN_CASES = [
    ("anthropic-key", ANTHROPIC),
    ("openai-key", OPENAI_PROJ),
    ("openai-key", OPENAI_LEGACY),
    ("aws-access-key", AWS_ID),
    ("aws-access-key", AWS_STS_ID),
    ("gitlab-token", GITLAB),
    ("google-api-key", GOOGLE),
    ("stripe-key", STRIPE),
    ("jwt", JWT),
    ("github-token", GH_PAT),
    *[("github-token", tok) for tok in GH.values()],
    *[("slack-token", tok) for tok in SLACK.values()],
]


@pytest.mark.parametrize("kind,secret", TOKEN_CASES)
def test_token_formats(kind, secret):
    check(f"before {secret} after", secret, kind, kept=("before ", " after"))
    # Also inside quotes, JSON, a shell command and at the edges of the text.
    check(f'{{"value": "{secret}"}}', secret, kind)
    check(f"curl -d 'k={secret}' https://x.test", secret, kind,
          kept=("https://x.test",))
    check(secret, secret, kind)


def test_anthropic_key_is_not_reported_as_openai():
    out = redact(ANTHROPIC)
    assert out == "[REDACTED:anthropic-key]"


def test_slack_webhook_keeps_host():
    url = "https://hooks.slack.com/services/" + SLACK_HOOK_PATH
    out = check(f"post to {url} now", SLACK_HOOK_PATH, "slack-webhook")
    assert "https://hooks.slack.com/services/" in out
    assert out.endswith(" now")


@pytest.mark.parametrize("label", ["", "RSA ", "EC ", "OPENSSH ", "ENCRYPTED ",
                                   "DSA "])
def test_private_key_blocks(label):
    text = "key file:\n" + pem(label) + "\nend of output"
    out = check(text, PEM_BODY[:20], "private-key",
                kept=("key file:\n", "\nend of output"))
    assert "PRIVATE KEY" not in out


def test_private_key_in_json_with_escaped_newlines():
    # A GCP service account file, as a tool would print it.
    body = pem("").replace("\n", "\\n")
    text = '{"type": "service_account", "private_key": "' + body + '\\n"}'
    out = check(text, PEM_BODY[:20], "private-key")
    assert '"type": "service_account"' in out


def test_unterminated_private_key_is_redacted_to_the_end():
    text = "head\n" + pem("RSA ").split("-----END")[0] + "more lines\nand more"
    out = redact(text)
    assert out == "head\n[REDACTED:private-key]"


def test_several_private_keys():
    text = pem("") + "\nmiddle\n" + pem("EC ")
    assert redact(text) == (
        "[REDACTED:private-key]\nmiddle\n[REDACTED:private-key]")


def test_certificates_are_not_private_keys():
    cert = ("-----" + "BEGIN CERTIFICATE-----\nMIIB" + ALNUM + "\n-----"
            + "END CERTIFICATE-----")
    assert redact(cert) == cert


@pytest.mark.parametrize("url,user,host", [
    ("postgres://admin:{pw}@db.internal:5432/app", "admin", "db.internal:5432"),
    ("https://bob:{pw}@example.com/path?q=1", "bob", "example.com/path?q=1"),
    ("redis://:{pw}@cache:6379/0", "", "cache:6379/0"),
    ("mongodb+srv://svc:{pw}@cluster0.mongodb.net/db", "svc",
     "cluster0.mongodb.net/db"),
])
def test_url_password(url, user, host):
    pw = "s3cr" + "et-P@ss"
    scheme = url.split("://")[0]
    text = "DATABASE_URL " + url.format(pw=pw)
    out = check(text, pw, "url-password")
    assert f"{scheme}://{user}:[REDACTED:url-password]@{host}" in out


def test_url_without_password_is_kept():
    for text in ("https://example.com:8443/a@b", "ssh://git@github.com:22/x",
                 "git@github.com:org/repo.git", "https://user@host/x"):
        assert redact(text) == text


@pytest.mark.parametrize("header,scheme", [
    ("Authorization: Basic " + "dXNlcjpwYXNzd29yZA==", "Basic"),
    ("Authorization: Bearer " + "abc.DEF-123_xyz", "Bearer"),
    ("authorization: token " + "0123456789abcdef", "token"),
    ("Proxy-Authorization: Basic " + "Zm9vOmJhcg==", "Basic"),
])
def test_authorization_header_keeps_scheme(header, scheme):
    secret = header.rsplit(" ", 1)[1]
    out = check("GET / HTTP/1.1\n" + header + "\nAccept: */*", secret,
                "auth-header", kept=("GET / HTTP/1.1\n", "\nAccept: */*"))
    assert f"{scheme} [REDACTED:auth-header]" in out


def test_authorization_header_in_curl_and_json():
    cred = "dXNlcjpwYXNz" + "d29yZA=="
    out = check(f"curl -H 'Authorization: Basic {cred}' https://api.test",
                cred, "auth-header", kept=("https://api.test",))
    assert "'Authorization: Basic [REDACTED:auth-header]'" in out
    out = check('{"Authorization": "Digest ' + cred + '", "Accept": "json"}',
                cred, "auth-header", kept=('"Accept": "json"',))


def test_authorization_header_with_known_token_keeps_specific_kind():
    out = redact("Authorization: token " + GH["ghp"])
    assert out == "Authorization: token [REDACTED:github-token]"


def test_bare_bearer_token():
    tok = "AbC123" + "dEf456gHi789"
    check(f"use Bearer {tok} here", tok, "bearer-token",
          kept=("use Bearer ", " here"))
    check(f"-H 'x: bearer {tok}'", tok, "bearer-token")


ENV_CASES = [
    ("DB_PASSWORD=hunter2-x", "hunter2-x", "DB_PASSWORD="),
    ("export GITHUB_TOKEN=\"abc123secret\"", "abc123secret",
     'export GITHUB_TOKEN="'),
    ("export API_KEY='k-9f8e7d'", "k-9f8e7d", "export API_KEY='"),
    ("SECRET_KEY: long passphrase with spaces", "long passphrase", "SECRET_KEY: "),
    ("  client_secret: abcdef0123", "abcdef0123", "  client_secret: "),
    ("- AUTH_TOKEN=xyz789", "xyz789", "- AUTH_TOKEN="),
    ("password = hunter2pass", "hunter2pass", "password = "),
    ("MYSQL_PWD=pa55word", "pa55word", "MYSQL_PWD="),
    ("OPENAI_APIKEY=abc123def", "abc123def", "OPENAI_APIKEY="),
    ("WALLET_PRIVATE_KEY=0x4c0883a69102937d6231", "4c0883a69102937d6231",
     "WALLET_PRIVATE_KEY="),
    ("AWS_ACCESS_KEY=some-value", "some-value", "AWS_ACCESS_KEY="),
    ("GOOGLE_CREDENTIALS=/secure/creds.json", "/secure/creds.json",
     "GOOGLE_CREDENTIALS="),
    ("DB_CREDENTIAL=dbcred42", "dbcred42", "DB_CREDENTIAL="),
    ("BASIC_AUTH=user:pw42", "user:pw42", "BASIC_AUTH="),
    ("X-Api-Key: k3y-v4lue", "k3y-v4lue", "X-Api-Key: "),
    ("SSH_PASSPHRASE=correct horse", "correct", "SSH_PASSPHRASE="),
    ("token: changeme", "changeme", "token: "),
]


@pytest.mark.parametrize("line,secret,kept", ENV_CASES)
def test_env_style_secrets(line, secret, kept):
    check("# config\n" + line + "\nDEBUG=1", secret, "env-secret",
          kept=("# config\n" + kept, "\nDEBUG=1"))


def test_env_value_ends_like_a_shell_word_mid_line():
    out = check("GITHUB_TOKEN=abc123 gh pr create --fill", "abc123",
                "env-secret")
    assert out == "GITHUB_TOKEN=[REDACTED:env-secret] gh pr create --fill"
    out = check("mysql -u root --password=p@ss(w0rd)! mydb", "p@ss(w0rd)!",
                "env-secret")
    assert out.endswith(" mydb")
    out = check("GET /v1/x?api_key=abc123&format=json", "abc123", "env-secret")
    assert out.endswith("&format=json")


def test_several_secrets_on_one_line():
    out = redact("USER=bob DB_PASSWORD=pw1 API_TOKEN=tk2 ./run")
    assert out == ("USER=bob DB_PASSWORD=[REDACTED:env-secret] "
                   "API_TOKEN=[REDACTED:env-secret] ./run")


@pytest.mark.parametrize("line", [
    "EMPTY_TOKEN=",
    "EMPTY_TOKEN=''",
    'API_KEY=""',
    "API_KEY=${API_KEY}",
    "API_KEY=$API_KEY",
    "GITHUB_TOKEN=$(gh auth token)",
    "password: <your-password>",
    "token: {{ vault_token }}",
    "  token: ${{ secrets.GITHUB_TOKEN }}",
    "SECRET_KEY=****",
    "API_KEY=xxxxxxxx",
    "password: null",
    "AUTH_ENABLED=true",
    "PWD=/home/me/project",
    "OLDPWD=/tmp",
])
def test_env_placeholders_are_kept(line):
    assert redact(line) == line


def test_aws_secret_key_next_to_its_name():
    for text in (
        "[default]\naws_access_key_id = " + AWS_ID + "\naws_secret_access_key = "
        + AWS_SECRET + "\n",
        "export AWS_SECRET_ACCESS_KEY=" + AWS_SECRET,
        '{"AccessKeyId": "' + AWS_STS_ID + '", "SecretAccessKey": "'
        + AWS_SECRET + '"}',
    ):
        out = check(text, AWS_SECRET, "aws-secret-key")
        assert AWS_ID not in out and AWS_STS_ID not in out


def test_aws_secret_shape_alone_is_kept():
    # Without a key name a 40-char base64 string cannot be told from data.
    assert redact("blob " + AWS_SECRET) == "blob " + AWS_SECRET


# --- JSON ---------------------------------------------------------------------

@pytest.mark.parametrize("text,secret", [
    ('{"password": "hunter2"}', "hunter2"),
    ('{"api_key":"abc123def"}', "abc123def"),
    ("{'client_secret': 'xyz-987'}", "xyz-987"),
    ('{"user": "bob", "access_token": "tok_abc123", "n": 1}', "tok_abc123"),
    ('{\\"password\\": \\"hunter2\\", \\"x\\": 1}', "hunter2"),  # escaped JSON
    ('{"password": "with \\"quotes\\" inside"}', "quotes"),
])
def test_json_secret_fields(text, secret):
    out = check(text, secret, "secret-field")
    assert out.count("[REDACTED:") == 1


def test_json_keeps_structure_and_other_fields():
    text = '{"user": "bob", "password": "hunter2", "max_tokens": 1024}'
    assert redact(text) == (
        '{"user": "bob", "password": "[REDACTED:secret-field]", '
        '"max_tokens": 1024}')


def test_json_non_secret_values_are_kept():
    for text in ('{"input_tokens": 12, "output_tokens": 34}',
                 '{"token_count": 5, "auth_required": false}',
                 '{"password": null, "token": ""}',
                 '{"author": "Ada", "authority": "x"}'):
        assert redact(text) == text


# --- false positives ----------------------------------------------------------

NEGATIVES = [
    # identifiers
    "commit 3f2a9c1e8b7d6a5f4e3d2c1b0a9f8e7d6c5b4a39",
    "id 123e4567-e89b-12d3-a456-426614174000",
    "/home/user/project/src/ace_engine/redact/redactor.py:42",
    "C:\\Users\\me\\AppData\\Local\\token_cache\\file.json",
    # code
    "token = get_token()",
    "password_field = forms.CharField(widget=forms.PasswordInput)",
    "self.token = token",
    "    api_key = os.environ['OPENAI_API_KEY']",
    "API_TOKEN = settings.API_TOKEN",
    "client = Client(api_key=api_key, token=self._token)",
    "creds = load(token=get_token(), password=prompt())",
    "def login(username: str, password: str) -> Token:",
    "token: Optional[str] = None",
    "    password: string;",
    "if token == expected_token:",
    "for token in tokens:",
    "(token := next(it))",
    "return {'token': token, 'password': password}",
    'headers["Authorization"] = f"Bearer {token}"',
    "headers = {'Authorization': 'Bearer ' + token}",
    "def get(authorization: str = Header(None)):",
    "auth_header = request.headers.get('Authorization')",
    # words that contain trigger letters
    "task-list-manager-for-everyone-here and desk-lamp",
    "sk-some-kebab-case-identifier-name",
    "the bearer authentication scheme is described in RFC 6750",
    "author: Ada Lovelace\ngit log --author=ada",
    "max_tokens=4096 input_tokens: 12",
    "TOKENIZERS_PARALLELISM=false",
    "GITHUB_ACTIONS=true HOME=/root",
    "See ASIA region and AKIA docs",
    "eyJ is how base64 JSON starts",
    # data
    "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlE"
    "QVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==",
    "-----BEGIN CERTIFICATE-----",
    "",
    "plain words, nothing secret here: 1 + 2 = 3",
]


@pytest.mark.parametrize("text", NEGATIVES)
def test_no_false_positives(text):
    assert redact(text) == text


# Code, help text and prose seen in real Claude Code sessions (the corpus' recorded prompts), where a
# secret word is followed by no secret: the text reaches the reflector and the lessons intact.
CODE_AROUND_SECRET_WORDS = [
    'return fmt.Errorf("failed to redact secrets: %w", err)',   # a format verb
    'fmt.Sprintf("token: %-8s", name)',
    'if s.CondensedTranscriptLines > 0 {',                       # a receiver's field, not a Vault token
    '"token_usage": {',                                          # a structure opens
    '"bytes_per_token": 3.5,',                                   # a number a token key counts
    '-APIKey string `json:"api_key"`',                           # a struct field on a diff's removed line
    "\tAPIKey: apiKey,",                                         # a struct literal's field
    "\tAPIKey: cfg.APIKey,",
    "\tAPIKey:     PostHogAPIKey,",                                # a constant named for what it holds
    "token: default_token",
    '+    return {\\n+        \\"bytes_per_token\\": bytes_per_token),\\n+',  # JSON-escaped code
    "  --token string   API token (default from the keychain)",   # cobra help: the value's type
    "  --token TOKEN    ENTSO-E security token",                   # argparse help: the metavariable
    "  --api-key API_KEY",
    "passing the generated token to GoReleaser",                 # a name after a bare "to"
    'echo "ENTSOE_API_TOKEN: set"',                              # a check's report of a secret
    'echo "ENTSOE_API_TOKEN: visible to my shell"',
]


@pytest.mark.parametrize("text", CODE_AROUND_SECRET_WORDS)
def test_code_around_secret_words_is_kept(text):
    assert redact(text) == text


@pytest.mark.parametrize("text,secret,kind", [
    # The same shapes with a value in them stay redacted.
    ("VAULT_TOKEN=s." + "AbCdEfGhIjKlMnOpQrStUvW1", "AbCdEfGhIjKlMnOpQrStUvW1", "vault-service-token"),
    ('\tAPIKey: "sk-' + "abcdef123456" + '",', "abcdef123456", "env-secret"),
    ("\tAPIKey: mysecret" + "value9,", "mysecretvalue9", "env-secret"),
    ("--token abc123" + "def456", "abc123def456", "cli-secret"),
    ("--token ABCDEF" + "GHIJ", "ABCDEFGHIJ", "cli-secret"),     # capitals, but not the flag's name
    ("set the token to Xy7abc" + "!def", "Xy7abc!def", "stated-secret"),
    ("secret: %wab" + "c123", "%wabc123", "env-secret"),          # a verb with more after it
    ("password: hunt" + "er2", "hunter2", "env-secret"),
    ("POSTGRES_PASSWORD: mypass" + "word", "mypassword", "env-secret"),  # no word starts at "password"
    ("PASSWORD=abc" + "\\def9", "abc\\def9", "env-secret"),        # a backslash inside a value
])
def test_values_beside_those_shapes_are_still_redacted(text, secret, kind):
    check(text, secret, kind)


@pytest.mark.parametrize("text,secret,kind", [
    # A structure under a secret key: its values are the secret, whatever their own keys are called.
    ('"api_key": {"value": "abc123' + 'secret"}', "abc123secret", "secret-field"),
    ('{\\"credentials\\": {\\"value\\": \\"s3cr3t' + 'val\\"}, \\"n\\": 1}', "s3cr3tval", "secret-field"),
    ('"auth": {"type": "basic", "value": "abc' + '123"}', "abc123", "secret-field"),
    ('"api_keys": [\n  "first' + 'key9",\n  "second"\n]', "firstkey9", "secret-field"),
    ("API_KEYS = [\"abc' + '123\", \"def\"]".replace("\\", ""), "abc123", "env-secret"),
])
def test_a_structure_under_a_secret_key_is_redacted(text, secret, kind):
    check(text, secret, kind)


@pytest.mark.parametrize("text", [
    '"token_usage": {"input_tokens": 12, "output_tokens": 3, "model": "claude-x-4"}',  # numbers, a description
    '"auth": {"type": "oauth", "scopes": ["repo", "read:org"]}',
    '"secrets": {"GITHUB_TOKEN": "${{ secrets.GITHUB_TOKEN }}"}',                      # a reference
    '"token_usage": { // Token usage: per checkpoint\n  "input_tokens": 1500,\n}',       # a comment's words
    '+"token_usage": { // Token usage for this checkpoint | +"input_tokens": 1500, | +" […]',
])
def test_a_structure_holding_no_secret_is_kept(text):
    assert redact(text) == text


def test_redact_value_treats_a_structure_under_a_secret_key_alike():
    out = redact_value({"api_key": {"value": "abc123" + "secret", "type": "static"},
                        "auth": {"type": "oauth", "scopes": ["repo"]},
                        "token_usage": {"input_tokens": 12, "model": "claude-x-4"}})
    assert out == {"api_key": {"value": "[REDACTED:secret-field]", "type": "static"},
                   "auth": {"type": "oauth", "scopes": ["repo"]},
                   "token_usage": {"input_tokens": 12, "model": "claude-x-4"}}


def test_sk_inside_word_is_not_a_key():
    text = "task-" + (ALNUM * 3)[:30]
    assert redact(text) == text


# --- robustness -----------------------------------------------------------------

def test_non_str_is_returned_unchanged():
    for obj in (None, 1, b"sk-" + b"x" * 30):
        assert redact(obj) is obj


def test_lone_surrogates_and_odd_unicode_do_not_raise():
    text = "\ud800 token=abc\udfff İstanbul API_KEY=İx \x00 " + ANTHROPIC
    out = redact(text)
    assert ANTHROPIC not in out
    assert "[REDACTED:env-secret]" in out


def test_markers_are_stable():
    every = "\n".join(f"[REDACTED:{k}]" for k in KINDS)
    assert redact(every) == every
    lines = "\n".join(f"KEY_TOKEN=[REDACTED:{k}]" for k in KINDS)
    assert redact(lines) == lines


def test_idempotent_on_all_positive_cases():
    texts = [s for _, s in TOKEN_CASES] + [c[0] for c in ENV_CASES] + [
        pem("RSA "), "Authorization: Bearer abc123def456",
        "postgres://u:p@h/db", '{"password": "x"}']
    blob = "\n".join(texts)
    once = redact(blob)
    assert redact(once) == once


# --- redact_value ---------------------------------------------------------------

def test_redact_value_walks_containers():
    obj = {
        "command": "export GITHUB_TOKEN=" + GH["ghp"],
        "password": "hunter2",
        "ANTHROPIC_API_KEY": "x",
        "nested": [{"api_key": "abc"}, ("t", ANTHROPIC), 3, 2.5, None, True],
        "max_tokens": 100,
        "description": "run the tests",
    }
    out = redact_value(obj)
    assert out == {
        "command": "export GITHUB_TOKEN=[REDACTED:github-token]",
        "password": "[REDACTED:secret-field]",
        "ANTHROPIC_API_KEY": "[REDACTED:secret-field]",
        "nested": [{"api_key": "[REDACTED:secret-field]"},
                   ("t", "[REDACTED:anthropic-key]"), 3, 2.5, None, True],
        "max_tokens": 100,
        "description": "run the tests",
    }
    assert obj["password"] == "hunter2"  # the input is not modified


def test_redact_value_secret_keys_keep_placeholders_and_non_strings():
    obj = {"token": "", "password": None, "api_key": 123, "secret": "${X}",
           "credentials": {"user": "bob", "pass": "${PASS}"}, "author": "Ada"}
    out = redact_value(obj)
    assert out == obj
    # Inside a structure under a secret key every value is secret but one that describes it (the user).
    out = redact_value({"credentials": {"user": "bob", "pass": "p"}})
    assert out == {"credentials": {"user": "bob", "pass": "[REDACTED:secret-field]"}}
    out = redact_value({"credentials": {"user": "bob", "password": "p"}})
    assert out == {"credentials": {"user": "bob",
                                   "password": "[REDACTED:secret-field]"}}


def test_redact_value_scalars():
    assert redact_value("k " + OPENAI_PROJ) == "k [REDACTED:openai-key]"
    for obj in (1, 1.5, None, True, b"bytes"):
        assert redact_value(obj) is obj


@pytest.mark.parametrize("key,expected", [
    ("password", True), ("PASSWORD", True), ("db_passwd", True),
    ("GITHUB_TOKEN", True), ("api_key", True), ("apiKey", True),
    ("x-api-key", True), ("client_secret", True), ("privateKey", True),
    ("AWS_ACCESS_KEY_ID", True), ("credentials", True), ("Authorization", True),
    ("auth", True), ("passphrase", True),
    ("max_tokens", False), ("input_tokens", False), ("author", False),
    ("PWD", False), ("description", False), ("command", False),
    ("tokenizer", False), (3, False),
])
def test_is_secret_key(key, expected):
    assert is_secret_key(key) is expected


# --- properties -------------------------------------------------------------------

SECRETS = [ANTHROPIC, OPENAI_PROJ, OPENAI_LEGACY, AWS_ID, GH["ghp"], GH_PAT,
           GITLAB, SLACK["xoxb"], GOOGLE, STRIPE, JWT]

any_text = st.text(st.characters(exclude_categories=()), max_size=200)


@settings(max_examples=examples(300), deadline=None)
@given(prefix=any_text, suffix=any_text, secret=st.sampled_from(SECRETS),
       sep1=st.sampled_from([" ", "\n", "\t", " = ", "\n\n", ": ", "\"", "'"]),
       sep2=st.sampled_from([" ", "\n", "\t", "\"", "'", ",", ".\n"]))
def test_embedded_secret_never_survives(prefix, suffix, secret, sep1, sep2):
    out = redact(prefix + sep1 + secret + sep2 + suffix)
    assert secret not in out
    # No fragment long enough to matter survives either.
    assert secret[-16:] not in out


@settings(max_examples=examples(200), deadline=None)
@given(prefix=any_text, suffix=any_text)
def test_embedded_private_key_never_survives(prefix, suffix):
    out = redact(prefix + "\n" + pem("RSA ") + "\n" + suffix)
    assert PEM_BODY[:16] not in out


FRAGMENTS = [
    "token", "TOKEN", "password", "api_key", "secret", "auth", "pwd", "PWD",
    "Authorization", "bearer ", "Bearer ", "Basic ", "=", " = ", ":", ": ",
    '"', "'", "\\", "\n", " ", "\t", "export ", "- ", "$", "{", "}", "(", ")",
    "[", "]", ",", "&", "@", "://", "http", "user", "abc123", "xYz", "null",
    "sk-", "ant-", "ghp_", "AKIA", "eyJ", ".", "-----BEGIN PRIVATE KEY-----",
    "-----END PRIVATE KEY-----", "[REDACTED:env-secret]", "[REDACTED:", "A1b2",
    "0123456789", "aws_secret_access_key", "hooks.slack.com/services/", "İ",
    "\ud800",
]
fragment_text = st.lists(
    st.one_of(st.sampled_from(FRAGMENTS), st.text(max_size=3)),
    max_size=40).map("".join)


@settings(max_examples=examples(1000), deadline=None)
@given(fragment_text)
def test_idempotent_and_total_on_secret_like_text(text):
    once = redact(text)
    assert isinstance(once, str)
    assert redact(once) == once


@settings(max_examples=examples(300), deadline=None)
@given(any_text)
def test_never_raises_on_any_text(text):
    assert isinstance(redact(text), str)


# --- issue 7: command lines, connection strings, cookies, files, vendors, prose, entropy ---------

HEX = "0123456789abcdef"
NEW_CASES = [
    # (text, secret, kind)
    ("deploy --token {s} --env prod", "Tq7" + "Lm2Xc9Vb4Nk8Pz3W", "cli-secret"),
    ("app login --password '{s}'", "hun" + "ter2 Secret", "cli-secret"),
    ("tool --api-key {s} run", "ak_9" + "fK2mQ7xLp3", "cli-secret"),
    ("mysql -u root -p{s} appdb", "S3cret" + "Pass99", "cli-secret"),
    ("docker login -u bob -p {s} reg.example.com", "Dock3r" + "Passw0rd", "cli-secret"),
    ("sshpass -p {s} ssh deploy@host", "SshP" + "ass123", "cli-secret"),
    ("curl -u alice:{s} https://api.example.com", "Pa55" + "word99x", "user-password"),
    ("curl --user bob:{s} https://x.example.com", "Zz9" + "passBob", "user-password"),
    ("AccountName=a;AccountKey={s};EndpointSuffix=core.windows.net",
     "Q2x9Lk3mPz7Rt0Vb5Nc8Xw4Ys1Ud6Ef2Gh9Ij0KlMn3Op5Qr7St9Uv1Wx3Yz5Ab7Cd9Ef1Gh3Ij5Kl7Mn9Op1Qr3St5Uv==",
     "high-entropy"),
    ("Server=tcp:db;User ID=sa;Password={s};", "Sup3r" + "S3cret!", "connection-password"),  # issue 35: read to the `;` (was env-secret, one word)
    ("Cookie: sessionid={s}; theme=dark", "sess" + "A1b2C3d4E5f6", "cookie"),
    ("Set-Cookie: auth={s}; Path=/; HttpOnly", "ck" + "Z9y8X7w6V5u4", "cookie"),
    ("machine api.example.com login bob password {s}", "Netrc" + "Pw8812", "netrc-password"),
    ("machine h\n  login bob\n  password {s}\n", "Multi" + "Netrc77", "netrc-password"),
    ("[pypi] username = __token__ password = {s}", "pypirc" + "Pass2024xx", "env-secret"),
    ("//registry.npmjs.org/:_authToken={s}", "npmrc" + "Tok3nValue99", "env-secret"),
    ("key {s}", "sk" + "_test_" + ALNUM + "ZZzz", "stripe-key"),
    ("key {s}", "rk" + "_live_" + ALNUM + "ZZzz", "stripe-key"),
    ("x {s}", "whsec" + "_" + ALNUM + "abcdEFGH1234", "stripe-key"),
    ("x {s}", "SG" + ".aB3dE5gH7jK9mN1pQ3sT5v.xY7zA9bC1dE3fG5hI7jK9lM1nO3pQ5rS7tU9vW1xY3z", "sendgrid-key"),
    ("x {s}", "SK" + HEX + HEX, "twilio-key"),
    ("x {s}", "shpat" + "_" + HEX + HEX, "shopify-token"),
    ("bot {s} up", "123456789" + ":AA" + "Fz8kL2mN4pQ6rS8tU0vW2xY4zA6bC8dE0f", "telegram-token"),
    ("x {s}", "hvs" + ".CAESI" + ALNUM + ALNUM, "vault-token"),
    ("x {s}", "dapi" + HEX + HEX, "databricks-token"),
    ("x {s}", "pypi-" + "AgEIcHlwaS5vcmc" + ALNUM * 3, "pypi-token"),
    ("x {s}", "dckr" + "_pat_" + "Ab3Cd5Ef7Gh9Ij1Kl3Mn5Op7Qr", "dockerhub-token"),
    ("x {s}", "lin" + "_api_" + ALNUM * 3, "linear-key"),
    ("x {s}", "dp" + ".pt." + ALNUM * 3, "doppler-token"),
    ("x {s}", "glrt" + "-Ab3Cd5Ef7Gh9Ij1Kl3Mn", "gitlab-token"),
    ("x {s}", "GR1348941" + "Ab3Cd5Ef7Gh9Ij1Kl3Mn", "gitlab-token"),
    ("x {s}", "npm" + "_" + ALNUM * 2 + "Ab3C", "npm-token"),
    ("x {s}", "hf" + "_AbCdEfGhIjKlMnOpQrStUvWxYzAbCdEfGh", "huggingface-token"),
    ("x {s}", "xapp" + "-1-A0123456789-1234567890123-" + HEX * 4, "slack-token"),
    ("x {s}", "sk-" + "ant-admin01-" + ALNUM * 4, "anthropic-key"),
    ("export MY_SIGNING_SALT={s}", "q8Zr" + "T3xW9pLm2Vb7Nc4K", "high-entropy"),
    ('{{"hmacKey": "{s}"}}', "Rt5Yp3" + "Ns7Vb1Cd4Fg6Hj0kL", "high-entropy"),
    ("my password is {s} please", "hunter2" + "xyz", "stated-secret"),
    ("the db password is: {s}", "Db" + "Pw!2024", "stated-secret"),
    ("I changed the password to {s}", "Blue" + "Moon77", "stated-secret"),
]


@pytest.mark.parametrize("text,secret,kind", NEW_CASES, ids=[c[2] + ":" + c[0][:20] for c in NEW_CASES])
def test_issue7_kinds(text, secret, kind):
    check(text.format(s=secret), secret, kind)


NEW_BENIGN = [
    "docker run -u 1000:1000 python:3.11-slim",
    "mysql -p appdb < schema.sql",
    "mkdir -p build/out && cp -p a b",
    "pip install --user requests",
    "the password is required",
    "error: token is expired, log in again",
    "if token is None:\n    return",
    "echo $PW | docker login --password-stdin -u bob registry.example.com",
    "gh auth login --with-token < token.txt",
    "max_tokens = 4096 and --max-tokens 100",
    "commit 3f2a9b8c7d6e5f4a3b2c1d0e9f8a7b6c5d4e3f2a",
    '"integrity": "sha512-V2hZ8nA6mVk0mYvxTgP4wJY9iXQqk4Z3L0aYhC2dRfY7Qm3JdQ1cF8bN9x1Yq2ZtRr0Xw5uHk6pLs3Mn8Vb2Q=="',
    '{"tool_use_id":"toolu_01AbCdEfGhIjKlMnOpQrStUv","session_id":"123e4567-e89b-12d3-a456-426614174000"}',
    "PYTHONPATH=src/ace_engine/capture:src/ace_engine/store",
    "git log --format=%H --token-file ~/.config/tok",
    "TASK LIST: ASK SKIP MASK",
    "version: 1.2.3\nimage: python:3.11-slim",
    "self.password = password",
    "password = get_password()",
    "Forgot password? Reset it on the login page.",
    "TODO_LIST_MANAGER_CLASS_NAME=TodoListManagerClassName",
    "Set-Cookie: <name>=<value>",
    "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
    "the secret is to keep functions small",
]


@pytest.mark.parametrize("text", NEW_BENIGN)
def test_issue7_benign_text_survives(text):
    assert redact(text) == text


def test_redacting_twice_is_free_and_stable():
    text = "\n".join(c[0].format(s=c[1]) for c in NEW_CASES) * 3
    once = redact(text)
    assert redact(once) == once
    assert redact(once) is once  # recognised by identity: the store doesn't scan it again


def test_a_sudoers_tag_is_no_password_but_a_passwd_value_still_is():
    # `NOPASSWD:` tags a sudoers rule; a learned lesson about it would otherwise be dropped as holding a secret.
    assert redact("ALL ALL=(ALL) NOPASSWD: ALL") == "ALL ALL=(ALL) NOPASSWD: ALL"
    assert redact("deploy ALL=(root) PASSWD: /usr/bin/systemctl") == "deploy ALL=(root) PASSWD: /usr/bin/systemctl"
    assert "hunter2Secret9" not in redact("passwd: hunter2Secret9")
    assert "Xy7abc99Q" not in redact("DB_PASSWD: Xy7abc99Q")
