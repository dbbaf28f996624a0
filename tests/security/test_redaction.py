"""Attacks on issue 7 part 5 ("redaction at one choke point") and part 7 ("no record dropped
silently"), end to end through public entry points: real hook processes, the `ace` CLI, a real
SQLite file, the log, the spool, `ace export` and the files `ace sync` writes.

Each secret below is planted (in tool inputs and outputs, prompts, session ids, names, `ace add`,
`ace import`, `ace learn --stdin`), then the raw bytes of every place ace-engine writes are
searched for it. Fake secrets are assembled from pieces so this file holds no literal a secret
scanner would flag. At commit 2f8a758 these tests fail (37 of the 54 kinds leak through the
capture path alone; CLI content was never redacted; deep or huge-int records were dropped).
"""

import json
import os
import sqlite3
from pathlib import Path

from conftest import ace as run_ace
from hookutil import payload, run_hook, run_hooks

A = "a1B2c3D4e5F6g7H8j9K0"
H = "0123456789abcdef"


def sec(*parts):
    return "".join(parts)


# (kind, text holding the secret as {s}, secret)
CASES = [
    ("flag-token", "deploy --token {s} --env prod", sec("Tq7", "Lm2Xc9Vb4Nk8Pz3W")),
    ("flag-password", "app-cli login --password {s}", sec("hun", "ter2", "Secret!")),
    ("flag-api-key", "tool --api-key {s} run", sec("ak", "_9fK2mQ7xLp3")),
    ("flag-equals", "tool --client-secret={s}", sec("cs", "Xq81Lmz0PqR")),
    ("mysql-attached", "mysql -u root -p{s} appdb", sec("S3cret", "Pass99")),
    ("mysqldump-attached", "mysqldump -uadmin -p{s} shop > dump.sql", sec("Dump", "Pw4711x")),
    ("curl-u", "curl -u alice:{s} https://api.example.com/v1", sec("Pa55", "word99x")),
    ("curl-user", "curl --user bob:{s} https://x.example.com", sec("Zz9", "passBob")),
    ("docker-login-p", "docker login -u bob -p {s} registry.example.com", sec("Dock3r", "Passw0rd")),
    ("sshpass", "sshpass -p {s} ssh deploy@host", sec("SshP", "ass123")),
    ("url-userpass", "git clone https://carol:{s}@git.example.com/r.git", sec("Url", "Pw5566zz")),
    ("azure-accountkey", "DefaultEndpointsProtocol=https;AccountName=acct;AccountKey={s};EndpointSuffix=core.windows.net",
  sec("Q2x9", "Lk3mPz7Rt0Vb5Nc8Xw4Ys1Ud6Ef2Gh9Ij0KlMn3Op5Qr7St9Uv1Wx3Yz5Ab7Cd9Ef1Gh3Ij5Kl7Mn9Op1Qr3St5Uv==")),
    ("ado-password", "Server=tcp:db.example.com;Database=app;User ID=sa;Password={s};", sec("Sup3r", "S3cret!")),
    ("servicebus-sak", "Endpoint=sb://ns.servicebus.windows.net/;SharedAccessKeyName=Root;SharedAccessKey={s}", sec("k9Lm", "Qz2Xw8Rt5Yp3Ns7Vb1Cd4Fg6Hj0=")),
    ("cookie", "Cookie: sessionid={s}; theme=dark", sec("sess", "A1b2C3d4E5f6")),
    ("set-cookie", "Set-Cookie: auth={s}; Path=/; HttpOnly", sec("ck", "Z9y8X7w6V5u4")),
    ("netrc-line", "machine api.example.com login bob password {s}", sec("Netrc", "Pw8812")),
    ("netrc-multiline", "machine api.example.com\n  login bob\n  password {s}\n", sec("Multi", "Netrc77")),
    ("pypirc", "[pypi]\nusername = __token__\npassword = {s}\n", sec("pypirc", "Pass2024xx")),
    ("npmrc", "//registry.npmjs.org/:_authToken={s}\n", sec("npmrc", "Tok3nValue99")),
    ("stripe-test", "STRIPE={s}", sec("sk", "_test_", A, "ZZ")),
    ("stripe-rk-test", "key {s}", sec("rk", "_test_", A, "QQ")),
    ("stripe-rk-live", "key {s}", sec("rk", "_live_", A, "WW")),
    ("stripe-whsec", "secret is set: {s}", sec("whsec", "_", A, "abcdEFGH1234")),
    ("sendgrid", "export SG={s}", sec("SG", ".", "aB3dE5gH7jK9mN1pQ3sT5v", ".", "xY7zA9bC1dE3fG5hI7jK9lM1nO3pQ5rS7tU9vW1xY3z")),
    ("twilio-sk", "twilio key {s}", sec("SK", H, H)),
    ("twilio-auth-token", "TWILIO_AUTH_TOKEN={s}", sec(H[::-1], H)),
    ("shopify", "shop token {s}", sec("shpat", "_", H, H)),
    ("telegram", "bot {s} started", sec("123456789", ":AA", "Fz8kL2mN4pQ6rS8tU0vW2xY4zA6bC8dE0f")),
    ("vault-hvs", "VAULT {s}", sec("hvs", ".", "CAESI", A, A, "Xy")),
    ("vault-s-context", "export VAULT_TOKEN={s}", sec("s", ".", "Ab3Cd5Ef7Gh9Ij1Kl3Mn5Op7")),
    ("databricks", "host token {s}", sec("dapi", H, H)),
    ("pypi", "upload with {s}", sec("pypi-", "AgEIcHlwaS5vcmc", A, A, A)),
    ("dockerhub", "use {s}", sec("dckr", "_pat_", "Ab3Cd5Ef7Gh9Ij1Kl3Mn5Op7Qr")),
    ("linear", "linear {s}", sec("lin", "_api_", A, A)),
    ("doppler", "doppler {s}", sec("dp", ".pt.", A, A, "Abc")),
    ("gitlab-runner", "runner {s}", sec("glrt", "-", "Ab3Cd5Ef7Gh9Ij1Kl3Mn")),
    ("gitlab-reg", "register {s}", sec("GR1348941", "Ab3Cd5Ef7Gh9Ij1Kl3Mn")),
    ("npm-bare", "token in output {s}", sec("npm", "_", A, "Ab3Cd5Ef7Gh9Ij1K")),
    ("hf-bare", "model dl {s}", sec("hf", "_", "AbCdEfGhIjKlMnOpQrStUvWxYzAbCdEfGh")),
    ("slack-app", "app {s}", sec("xapp", "-1-", "A0123456789-1234567890123-", H, H)),
    ("anthropic-admin", "admin {s}", sec("sk-ant-", "admin01-", A, A, A)),
    ("openai-admin", "admin {s}", sec("sk-", "admin-", A, A)),
    ("github-pat", "gh {s}", sec("ghp", "_", A, "Ab3Cd5Ef7Gh9Ij1K")),
    ("entropy-env", "export MY_SIGNING_SALT={s}", sec("q8Zr", "T3xW9pLm2Vb7Nc4K")),
    ("entropy-generic", "APP_OPAQUE={s}", sec("Hq7Zr2", "Tx9WpL3mVb8Nc4KsD6fG1jY5")),
    ("entropy-json", '{{"hmacKey": "{s}"}}', sec("Rt5Yp3", "Ns7Vb1Cd4Fg6Hj0kL")),
    ("words-password", "my password is {s} please remember it", sec("hunter2", "xyz")),
    ("words-db", "the db password is: {s}", sec("Db", "Pw!2024")),
    ("words-changed", "I changed the password to {s}", sec("Blue", "Moon77")),
    ("aws-pair", "aws_secret_access_key = {s}", sec("wJalrXUtnFEMI/K7MDENG/", "bPxRfiCYEXAMPLEKEY")),
    ("bearer", "Authorization: Bearer {s}", sec("eyJ", "0eXAi.", A, ".", A)),
    ("redis-url", "REDIS_URL=redis://:{s}@cache:6379/0", sec("Red", "isPw771")),
    ("x-api-key-header", "X-Api-Key: {s}", sec("xak", "_Hq7Zr2Tx9W")),
]

SECRETS = {kind: s for kind, _, s in CASES}
TEXTS = {kind: tmpl.format(s=s) for kind, tmpl, s in CASES}


def ace(*args, input=None, cwd=None):
    return run_ace(*args, input=input, cwd=cwd, catch_exceptions=True)


def written_bytes(ace_home: Path, *extra: Path) -> bytes:
    """Every byte ace-engine wrote: the store (with its WAL), the log, the spool (in ACE_HOME and
    in the fallback directories), plus `extra` files."""
    blobs = []
    places = [ace_home]
    try:
        from ace_engine.core import paths

        places += [Path(p) for p in getattr(paths, "existing_fallback_dirs", lambda: [])()]
    except Exception:  # noqa: BLE001 - the old commit has no fallback directories
        pass
    for place in places:
        for root, _, files in os.walk(place):
            for name in files:
                try:
                    blobs.append(Path(root, name).read_bytes())
                except OSError:
                    pass
    for path in extra:
        if path.exists():
            blobs.append(path.read_bytes())
    return b"\n".join(blobs)


def leaks(blob: bytes) -> list[str]:
    """The kinds whose planted value can be found in `blob` (raw, or JSON-escaped)."""
    found = []
    for kind, secret in SECRETS.items():
        forms = {secret, json.dumps(secret)[1:-1], json.dumps(secret, ensure_ascii=True)[1:-1]}
        if any(f.encode() in blob for f in forms):
            found.append(kind)
    return found


def _hook(event, data, **kw):
    code, out, err, _ = run_hook(event, data, **kw)
    assert code == 0, err
    return out


def test_hook_capture_redacts_every_kind(ace_home, git_project):
    """Tool inputs, tool outputs, failures and prompts holding every kind of secret: none reaches
    the store file, its WAL or the log."""
    cwd = str(git_project)
    texts = list(TEXTS.values())
    _hook("SessionStart", payload("SessionStart", cwd, source="startup"))
    _hook("UserPromptSubmit", payload("UserPromptSubmit", cwd, prompt="\n".join(texts)))
    # Each one as a command line of its own: one process for the 54 events (`run_hooks`, the real
    # engine; a process each took minutes on the shared test machine).
    answers = run_hooks([("PostToolUse", payload("PostToolUse", cwd, tool_name="Bash", tool_use_id=f"t-{i}",
                                                 tool_input={"command": text},
                                                 tool_response={"stdout": text, "stderr": "", "interrupted": False}))
                         for i, text in enumerate(texts)])
    assert [code for code, _ in answers] == [0] * len(texts)
    _hook("PostToolUse", payload("PostToolUse", cwd, tool_name="Read", tool_use_id="t-file",
                                 tool_input={"file_path": "/home/u/.netrc"},
                                 tool_response={"file": {"content": "\n".join(texts)}}))
    _hook("PostToolUseFailure", payload("PostToolUseFailure", cwd, tool_name="Bash", tool_use_id="t-fail",
                                        tool_input={"command": texts[0]}, error="Exit code 1\n" + "\n".join(texts)))
    _hook("Stop", payload("Stop", cwd, last_assistant_message="Done. " + "\n".join(texts)))
    found = leaks(written_bytes(ace_home))
    assert found == [], f"{len(found)} of {len(CASES)} planted secrets reached disk: {found}"


def test_ids_and_names_are_redacted(ace_home, git_project):
    """Secrets placed where ids and names go (session id, agent id and type, tool name and id,
    tool_use_id, hook_event_name, SessionStart source) are redacted like content."""
    cwd = str(git_project)
    stripe = SECRETS["stripe-test"]
    npm = SECRETS["npm-bare"]
    hf = SECRETS["hf-bare"]
    sid = f"sess-{stripe}"
    data = payload("PostToolUse", cwd, session_id=sid, tool_name=f"mcp__x__{npm}", tool_use_id=f"t-{hf}",
                   agent_id=SECRETS["sendgrid"], agent_type=SECRETS["github-pat"],
                   tool_input={SECRETS["dockerhub"]: "key as a field name"}, tool_response={"ok": True})
    data["hook_event_name"] = f"PostToolUse {SECRETS['linear']}"
    _hook("PostToolUse", data)
    _hook("SessionStart", payload("SessionStart", cwd, session_id=sid, source=SECRETS["doppler"]))
    blob = written_bytes(ace_home)
    found = [k for k in ("stripe-test", "npm-bare", "hf-bare", "sendgrid", "github-pat", "dockerhub",
                         "linear", "doppler") if k in leaks(blob)]
    assert found == [], f"ids or names leaked: {found}"
    con = sqlite3.connect(ace_home / "ace.db")
    try:
        assert con.execute("SELECT COUNT(*) FROM tool_events").fetchone()[0] == 1, "the record was not kept"
    finally:
        con.close()


def test_spooled_records_are_redacted(ace_home, git_project):
    """While the store is locked the hook spools its record: the spool file holds no secret, and
    neither does the store once the record is replayed into it. Every kind, each its own event, in
    one process (`run_hooks`), each waiting a short busy timeout (20 ms, not the 2 s default: what is
    checked is the spooled bytes, not the wait)."""
    cwd = str(git_project)
    _hook("SessionStart", payload("SessionStart", cwd, source="startup"))
    events = [("PostToolUse", payload("PostToolUse", cwd, session_id=f"s-{SECRETS['vault-hvs']}", tool_name="Bash",
                                      tool_use_id=f"sp-{i}", tool_input={"command": text},
                                      tool_response={"stdout": text}))
              for i, text in enumerate(TEXTS.values())]
    lock = sqlite3.connect(ace_home / "ace.db", timeout=0, isolation_level=None)
    lock.execute("BEGIN EXCLUSIVE")
    try:
        answers = run_hooks(events, env={"ACE_STORE_BUSY_TIMEOUT_MS": "20"})
        assert all(code == 0 for code, _ in answers), answers
        spooled = written_bytes(ace_home)
    finally:
        lock.execute("ROLLBACK")
        lock.close()
    assert b'"event"' in spooled, "nothing was spooled: the attack did not run"
    found = leaks(spooled)
    assert found == [], f"spooled records hold secrets: {found}"
    _hook("SessionStart", payload("SessionStart", cwd, source="resume"))  # replays the spool
    con = sqlite3.connect(ace_home / "ace.db")
    try:  # every record was spooled and replayed: none lost, so none passes for redacted
        assert con.execute("SELECT COUNT(*) FROM tool_events").fetchone()[0] == len(TEXTS)
    finally:
        con.close()
    assert leaks(written_bytes(ace_home)) == []


def test_cli_content_is_redacted_everywhere(ace_home, git_project, tmp_path):
    """`ace add`, `ace import` and `ace learn --stdin` content holding secrets: the store, the log,
    `ace export` and CLAUDE.md / AGENTS.md after `ace sync` hold none of them."""
    cwd = str(git_project)
    kinds = list(TEXTS)
    for kind in kinds[:20]:
        result = ace("add", f"When the deploy step fails, check the command: {TEXTS[kind]}",
                     "--section", "pitfalls", "--project", cwd)
        assert result.exit_code == 0, result.output
    items = [{"content": f"Remember for the release job: {TEXTS[k]}", "section": "troubleshooting_and_pitfalls"}
             for k in kinds[20:40]]
    imported = tmp_path / "shared-playbook.json"
    imported.write_text(json.dumps(items))
    result = ace("import", imported, "--project", cwd)
    assert result.exit_code == 0, result.output
    learn = {
        "task": "Fix the failing deploy: " + " ".join(TEXTS[k] for k in kinds[40:]),
        "trajectory": [{"step": i, "tool": "Bash", "action": TEXTS[k], "result": "Exit code 1\nerror: " + TEXTS[k]}
                       for i, k in enumerate(kinds[40:], 1)],
        "result": {"success": True, "output": "fixed " + TEXTS[kinds[-1]], "summary": "deploy fixed"},
        "playbook_used": [], "session_id": "learn-1", "agent_type": "main",
    }
    result = ace("learn", "--stdin", "--json", "--project", cwd, input=json.dumps(learn))
    assert result.exit_code == 0, result.output
    export = tmp_path / "export.json"
    result = ace("export", "-o", export, "--project", cwd)
    assert result.exit_code == 0, result.output
    result = ace("sync", "--k", "200", "--project", cwd)
    assert result.exit_code == 0, result.output
    files = [export, git_project / "CLAUDE.md", git_project / "AGENTS.md"]
    assert "Remember for the release job" in export.read_text(), "the import did not land"
    found = leaks(written_bytes(ace_home, *files))
    assert found == [], f"{len(found)} planted secrets reached disk from the CLI: {found}"
    out = ace("export", "--project", cwd)  # stdout too
    assert leaks(out.output.encode()) == []


def test_deep_nesting_is_stored_with_a_marker(ace_home, git_project):
    """A tool input nested 900 deep is stored, cut at a depth with a marker (it was dropped)."""
    cwd = str(git_project)
    deep: object = "bottom"
    for _ in range(900):
        deep = {"a": deep}
    _hook("PostToolUse", payload("PostToolUse", cwd, tool_name="Bash", tool_use_id="t-deep",
                                 tool_input={"command": "echo", "x": deep}, tool_response={"stdout": "ok"}))
    con = sqlite3.connect(ace_home / "ace.db")
    try:
        row = con.execute("SELECT input FROM tool_events WHERE tool_use_id='t-deep'").fetchone()
    finally:
        con.close()
    assert row is not None, "the record was dropped"
    assert "[ace: nested deeper than" in row[0]


def test_huge_exit_code_is_stored_with_a_marker(ace_home, git_project):
    """exitCode 2**70 (and duration_ms 2**80) don't fit SQLite's integers: the record is kept,
    failed, with a marker naming the exit code (it was dropped)."""
    cwd = str(git_project)
    _hook("PostToolUse", payload("PostToolUse", cwd, tool_name="Bash", tool_use_id="t-big", duration_ms=2**80,
                                 tool_input={"command": "weird"},
                                 tool_response={"stdout": "", "exitCode": 2**70, "interrupted": False}))
    con = sqlite3.connect(ace_home / "ace.db")
    try:
        row = con.execute("SELECT success, exit_code, error, response FROM tool_events"
                          " WHERE tool_use_id='t-big'").fetchone()
    finally:
        con.close()
    assert row is not None, "the record was dropped"
    success, exit_code, error, response = row
    assert success == 0 and exit_code is None
    assert str(2**70) in error and "[ace:" in error
    assert str(2**70) in response


GIANT_KEYS = 100_000  # a 2.4 MB response: 30 times the cap, parsed in ~0.1 s even on a loaded machine


def test_giant_object_is_stored_truncated(ace_home, git_project):
    """A tool response of 100,000 keys is stored, truncated, with a marker. At 2f8a758 every item
    was cleaned, redacted and serialized before the cut, and at 1.5 million keys (39 MB) the hook's
    5 s watchdog fired first and the record was lost. That size is now a benchmark case
    (bench/budgets_bench.py, `giant object`, checked against the hook's own budget): here, on a
    loaded 2-core machine, parsing 39 MB alone could outlast the watchdog, so the test owns a size
    that exercises the cut without racing it."""
    cwd = str(git_project)
    giant = {f"k{i}": [i, "v"] for i in range(GIANT_KEYS)}
    _hook("PostToolUse", payload("PostToolUse", cwd, tool_name="Bash", tool_use_id="t-giant",
                                 tool_input={"command": "dump"}, tool_response=giant))
    con = sqlite3.connect(ace_home / "ace.db")
    try:
        row = con.execute("SELECT response FROM tool_events WHERE tool_use_id='t-giant'").fetchone()
    finally:
        con.close()
    assert row is not None, "the record was dropped"
    assert "[ace:" in row[0] and len(row[0]) < 100_000
