"""Poisoning defence. Lessons are mined partly from tool output, which anyone can write into (a
README, a web page, a dependency's error message): a lesson that would make the agent do
something dangerous is quarantined for `ace review`, never injected on its own.

Quarantined when a lesson
- pipes a download into a shell or interpreter (`curl … | sh`, `bash <(wget …)`, `iex (iwr …)`);
- disables a safety check (`--no-verify`, `chmod 777`, TLS verification off, `--insecure`,
  `--dangerously-skip-permissions`, force-pushes, `rm -rf /`), or runs things as root (`sudo`);
- moves data off the machine (`curl -d @file`, `nc`, `scp`/`rsync` to a host, secrets files sent
  anywhere);
- talks to a host that is not a well-known one (package registries, code hosts, docs), the
  project's own remote, or `learning.trusted_hosts`;
- contains a secret (`capture.redact` would change it — see `contains_secret` for the one rule
  that needs a second look in prose);
- speaks to the model rather than teaching it ("ignore previous instructions", fake
  `<system>` / `<ace-…>` tags).
"""

import re

from ..capture.redact import redact

KNOWN_HOSTS = (
    "localhost", "127.0.0.1", "0.0.0.0", "::1", "github.com", "raw.githubusercontent.com", "githubusercontent.com",
    "gitlab.com", "bitbucket.org", "pypi.org", "files.pythonhosted.org", "pythonhosted.org", "python.org",
    "npmjs.com", "npmjs.org", "registry.npmjs.org", "yarnpkg.com", "nodejs.org", "crates.io", "docs.rs",
    "rust-lang.org", "go.dev", "golang.org", "proxy.golang.org", "rubygems.org", "maven.org", "gradle.org",
    "docker.com", "docker.io", "readthedocs.io", "readthedocs.org", "developer.mozilla.org", "mozilla.org",
    "stackoverflow.com", "microsoft.com", "anthropic.com", "claude.com", "example.com", "example.org",
    "example.net", "example.invalid", "test", "invalid", "local", "internal",
)

_RULES = [
    ("pipes a download into a shell",
     r"\b(?:curl|wget|fetch|iwr|invoke-webrequest)\b[^\n|;]*\|\s*(?:sudo\s+)?(?:\w+/)*(?:ba|z|k|da|fi)?sh\b|"
     r"\b(?:curl|wget)\b[^\n|;]*\|\s*(?:sudo\s+)?(?:python3?|perl|ruby|node)\b|"
     r"\b(?:ba|z)?sh\s+(?:-c\s+)?[\"']?<\(\s*(?:curl|wget)|\beval\s+[\"']?\$\(\s*(?:curl|wget)|\biex\b|invoke-expression"),
    ("disables a safety check",
     r"--no-verify\b|\bchmod\s+(?:-R\s+)?0?777\b|--insecure\b|\bcurl\b[^\n]*\s-k\b|\bverify\s*=\s*False\b|"
     r"NODE_TLS_REJECT_UNAUTHORIZED\s*=?\s*[\"']?0|GIT_SSL_NO_VERIFY|sslverify\s*(?:=\s*)?false|"
     r"strict-ssl\s*(?:=\s*)?false|PYTHONHTTPSVERIFY\s*=\s*0|--trusted-host\b|rejectUnauthorized\s*:\s*false|"
     r"InsecureSkipVerify\s*:\s*true|--disable-(?:ssl|tls|cert)\w*|_create_unverified_context|"
     r"--dangerously-skip-permissions|--no-check-certificate|setenforce\s+0|\bufw\s+disable\b|"
     r"\bgit\s+push\b[^\n]*(?:--force\b|\s-f\b)|\brm\s+-[a-z]*r[a-z]*f?[a-z]*\s+(?:/|~|\$HOME)(?:\s|$|[\"'`])"),
    ("runs commands as root", r"\bsudo\b|\bsu\s+-?\s*root\b|\bdoas\b"),
    ("sends data off the machine",
     r"\bcurl\b[^\n]*(?:\s-d|--data(?:-binary|-raw|-urlencode)?|\s-F|--form|\s-T|--upload-file)\s*[\"']?@|"
     r"\b(?:nc|ncat|netcat|socat)\b[^\n]*\s\d{2,5}\b|\bscp\b[^\n]*\s[\w.-]+@[\w.-]+:|\brsync\b[^\n]*[\w.-]+@[\w.-]+:|"
     r"(?:\.ssh/|id_rsa|id_ed25519|\.aws/credentials|\.netrc|/etc/shadow|\.env\b)[^\n]*\b(?:curl|wget|nc|https?://)|"
     r"\b(?:send|upload|post|exfiltrat\w*)\b[^\n]{0,60}\b(?:tokens?|keys?|secrets?|credentials?|passwords?|\.env)\b[^\n]{0,60}https?://"),
    ("addresses the model, not the task",
     r"\bignore (?:all |any )?(?:the )?(?:previous|prior|above|earlier) (?:instructions|rules|messages)|"
     r"\bdisregard (?:the |all )?(?:system|previous|prior)\b|\byou are now\b|\bsystem prompt\b|"
     r"</?(?:system|system-reminder|ace-[\w-]+)\b"),
]
_compiled = None
_URL_HOST = re.compile(r"\b[a-z][a-z0-9+.-]*://(?:[^@/\s]*@)?([^/\s:'\"`)>\]]+)", re.IGNORECASE)
_IP = re.compile(r"(?<![\d.])(?:\d{1,3}\.){3}\d{1,3}(?![\d.])")
_SSH_HOST = re.compile(r"\b(?:ssh|scp|sftp|rsync)\b[^\n]*?\b[\w.-]+@([\w.-]+\.\w+)")


def _rules():
    global _compiled
    if _compiled is None:
        _compiled = [(reason, re.compile(rx, re.IGNORECASE)) for reason, rx in _RULES]
    return _compiled


def _known(host: str, trusted: tuple[str, ...]) -> bool:
    host = host.lower().rstrip(".")
    for known in KNOWN_HOSTS + trusted:
        known = known.lower()
        if host == known or host.endswith("." + known):
            return True
    return False


def hosts(text: str) -> list[str]:
    found = [m.group(1) for m in _URL_HOST.finditer(text)] + _IP.findall(text) + _SSH_HOST.findall(text)
    return list(dict.fromkeys(h.strip(".").lower() for h in found if h.strip(".")))


def concerns(content: str, trusted_hosts: tuple[str, ...] | list[str] = ()) -> list[str]:
    """Why this lesson must not be injected without review; empty when it may be."""
    text = str(content)
    reasons = [reason for reason, rx in _rules() if rx.search(text)]
    trusted = tuple(trusted_hosts)
    unknown = [h for h in hosts(text) if not _known(h, trusted) and not h.startswith("127.")]
    if unknown:
        reasons.append("contacts unknown host " + ", ".join(unknown[:3]))
    if contains_secret(text):
        reasons.append("contains a secret")
    return reasons


_MARKER = re.compile(r"\[REDACTED:([\w-]+)\]")
_KEY_VALUE_KINDS = ("env-secret", "secret-field")  # `KEY: value` guesses; everything else is a token format
_PASSWORD_KEY = re.compile(r"(?:passw(?:or)?d|passphrase|secret(?:_?key)?|api_?key|token)$")


def contains_secret(text: str) -> bool:
    """Would `capture.redact` change this lesson because of a secret in it?

    Token formats (API keys, private keys, JWTs, passwords in URLs…) always count. The
    `KEY: value` rule is a guess made to be safe in captured output, and in prose it fires on
    words ("the fix in auth.py: the…"), so a value it redacted counts only if it looks like a
    credential — one word of 8+ characters mixing letters and digits, or of 20+ — or if its key
    is a password / secret / token / API key name and the value is one word of 6+.
    """
    red = redact(text)
    if red == text:
        return False
    pieces = _MARKER.split(red)  # literal, kind, literal, kind, …, literal
    if any(kind not in _KEY_VALUE_KINDS for kind in pieces[1::2]):
        return True
    pos = len(pieces[0])
    for i in range(1, len(pieces), 2):
        after = pieces[i + 1]
        end = text.find(after, pos) if after else len(text)
        value = text[pos:end if end >= 0 else len(text)].strip("'\"` ")
        key = re.search(r"([\w.-]*)[\W]*$", pieces[i - 1]).group(1).lower()
        if _credential_like(value) or (_PASSWORD_KEY.search(key) and len(value) >= 6 and " " not in value):
            return True
        pos = (end if end >= 0 else len(text)) + len(after)
    return False


def _credential_like(value: str) -> bool:
    if not value or any(c.isspace() for c in value):
        return len(value) >= 20 and not any(c.isspace() for c in value)
    has_digit = any(c.isdigit() for c in value)
    has_alpha = any(c.isalpha() for c in value)
    return (len(value) >= 8 and has_digit and has_alpha) or len(value) >= 20
