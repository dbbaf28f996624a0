"""Provenance decides, the pattern list only helps: the one rule on where a lesson's risky parts came from.

A lesson's *risky parts* (`risky_parts`) are what it would make the agent do that reaches beyond the
project: install or run a named package (`install:`), fetch or run remote code (`fetch:`, `exec:`
for fetched code run, `remote:` for a git remote), name a host or registry (`host:`), change the
agent's or ace's own controls (`permission:`: allow rules, bypass flags, hooks, `.claude/`, the
shell's startup files, git's global config, credentials files), or run a command the reader cannot
place (`unplaced:`). Commands are read by structure, not by phrasing (`command_parts.py`, through
`commands`: code spans, fenced blocks and shell-looking prose tokenized, wrappers unwrapped, `--`
honoured, variables resolved); the patterns below add what prose says ("install the package X",
"use npx to fetch X"), and the command-shaped ones among them read prose only. The project's own
(`npm run X`, `make X`, `cargo test`, `go test ./...`, `pip install -e .`) are no parts.

Each part has an *origin*:
- `user`: typed by the user (a prompt, `ace add`, `ace edit`, approved in `ace review`);
- `project`: present in the project's own files (package.json scripts, Makefile targets, mix.exs
  aliases, pyproject / tox / CI config, README) — what the project runs anyway;
- `agent`: chosen by the agent on its own, seen in no text someone else wrote before it used it;
- `foreign`: first seen in text someone else wrote — a tool's output, a file the agent read, a
  transcript's non-user content, a teammate's push, an imported playbook, an MCP proposal. A
  command the agent ran because a tool output told it to is foreign.

The rule (`origin_concerns`): a lesson with a risky part whose origin is `foreign` or unknown is
held for `ace review`, its origin shown, however it is worded — the parts are read from the text
folded by the safety policy's own normalization (`folding.folded`: NFKC, zero-width characters and
look-alike letters, entities, shell quoting), so a paraphrase that still names the package, a
homoglyph or a zero-width split finds the same part. `Playbook.screen` applies it with the
pattern list (`safety.concerns`) on ADD, UPDATE, MERGE, PROMOTE and RESTORE, so a benign ADD
followed by a malicious UPDATE or MERGE is held too.

Where the origins come from: `provenance["origins"] = {part: origin}`, computed for learned
lessons by the learner (`observe/origins.py`, handed to the playbook as its `attribution`) and
recorded by the playbook itself on every content write — a caller's own claim is never read.
Parts without a computed origin take the default of the *operation's source*, from ONE table
(`DEFAULT_ORIGIN`): user / manual / cli → user, bootstrap → project, everything else (team,
import, mcp, transcript, learning without computed origins, unknown) → foreign.

Cost: imports only `re` (the folding, `folding.py`, and the command reader, `command_parts.py`, are
loaded on first use); the patterns compile on
first use, so the hooks, which import the playbook, pay nothing for them. ~0.1 ms a lesson.
"""

from __future__ import annotations

import re

TYPE_CHECKING = False  # not `typing.TYPE_CHECKING`: hooks import this module through playbook.py
if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping
    from typing import Any

ORIGINS = ("user", "project", "agent", "foreign")
# The one table: the origin of a part nobody computed, by the source of the operation that wrote it.
DEFAULT_ORIGIN = {"user": "user", "manual": "user", "cli": "user", "review": "user", "bootstrap": "project"}
LEARNER_SOURCES = ("learning",)  # sources whose origins the learner computes (`Playbook.attribution`)
# How strongly an origin binds when two observations disagree: the user's or the project's word
# settles it; otherwise one sighting in someone else's text taints what the agent chose.
_RANK = {"agent": 0, "foreign": 1, "project": 2, "user": 3}
WHERE = {
    "foreign": "first seen in text someone else wrote (tool output, a file read, a teammate, an import, MCP)",
    "agent": "chosen by the agent", "project": "in the project's own files", "user": "typed by the user",
}
# Where a foreign part came from when nothing more precise was recorded, by the lesson's source.
FROM_SOURCE = {"team": "a teammate's push (ace pull)", "import": "an imported playbook", "mcp": "an MCP proposal",
               "delta": "a delta file", "transcript": "a transcript",
               "learning": "learned before its origins were recorded, or from text the agent read"}

# Linear time: a name starts only where a token starts (the look-behind), so a long run
# of name characters is scanned once, not once per position; flags are possessive (`*+`, `++`), so a
# failed match never re-splits `--a-b` into `-` + `-a-b` (that was 2^n on `npm --ab --ab … !`).
_PKG = r"(?<![\w@/.:+~^=<>!-])([a-z0-9@_][\w@/.:+~^=<>!-]*)"
_FLAGS = r"(?:-{1,2}+[\w-]++(?:=\S++)?+\s++)*+"
_INSTALLS = (
    rf"\b(?:npm|pnpm|yarn|bun|cnpm)\s+{_FLAGS}(?:global\s+)?(?:add|i|in|ins|inst|install|isntall)\s+{_FLAGS}{_PKG}",
    rf"\b(?:npx|bunx|pnpx)\s+{_FLAGS}{_PKG}",
    rf"\b(?:pnpm|yarn|npm|bun)\s+(?:dlx|exec|x|create|init)\s+{_FLAGS}{_PKG}",
    rf"\b(?:pip[\d.]*|pipx|uv\s+pip|uv\s+tool|python[\d.]*\s+-m\s+pip|conda|mamba|micromamba)\s+{_FLAGS}"
    rf"install\s+{_FLAGS}{_PKG}",
    rf"\b(?:pipx|uv\s+tool)\s+run\s+{_FLAGS}{_PKG}",
    rf"\b(?:uv|poetry|pdm|hatch|rye)\s+add\s+{_FLAGS}{_PKG}",
    rf"\buvx\s+{_FLAGS}{_PKG}",
    rf"\b(?:cargo|go|gem|brew|apt|apt-get|dnf|yum|apk|pacman|choco|scoop|winget|snap|port|nix-env|bundle|"
    rf"composer|dotnet|deno|mix\s+archive\.install\s+hex)\s+{_FLAGS}"
    rf"(?:install|add|get|require|-S|tool\s+install|add\s+package)?\s*{_FLAGS}{_PKG}(?<=\S)",
    rf"{_PKG}@(?:latest|next|canary|beta|alpha|nightly|dev|edge|rc)\b",
    rf"\b(?:install|add|fetch|download|get)(?:ing|s)?\s+(?:the\s+|a\s+)?(?:latest\s+)?(?:npm\s+|pypi\s+|python\s+)?"
    rf"(?:package|module|gem|crate|tool|plugin|dependency|library|cli|binary)\s+[`]?{_PKG}",
    # paraphrases around an installer: "use npx to fetch X", "X via npx", "have pip grab X"
    # (an installer right before its own subcommand, `npm run X` / `pnpm, add X`, is a command: the parser's)
    rf"\b(?:npx|bunx|pnpx|uvx|pipx|pip3?|npm|yarn|pnpm|brew|cargo|gem)\b(?![\s,:]*(?:run|install|add|exec|i)\b)[^\n.;`]{{0,30}}?\b(?:fetch|run|install|add|"
    rf"get|grab|pull|download|execute|launch)\s+(?:the\s+)?(?:latest\s+|newest\s+)?(?:package\s+|tool\s+|version\s+of\s+)?"
    rf"[`]?{_PKG}",
    rf"[`]?{_PKG}[`]?\s+(?:via|with|using|through|from)\s+(?:npx|bunx|pnpx|uvx|pipx|pnpm\s+dlx|yarn\s+dlx)\b",
    # "the npm package X", "a package called X", "X from npm", "install X globally"
    rf"\b(?:npm|pypi|pip|crates?|gem|cargo|brew|homebrew|go)\s+(?:package|module|crate|gem|formula|cli|tool)\s+[`]?{_PKG}",
    # ("No module named 'x'" is Python's error about a missing module, not advice to install one.)
    rf"\b(?<!no )(?:package|module|crate|gem|tool|cli)\s+(?:called|named)\s+[`]?{_PKG}",
    rf"[`]?{_PKG}[`]?\s+(?:from|off|on)\s+(?:npm|pypi|crates\.io|rubygems|homebrew|the\s+(?:npm\s+)?registry)\b",
    rf"\b(?:install|add)\s+[`]?{_PKG}[`]?\s+(?:globally|as\s+an?\s+(?:dev\s+)?dependency|with\s+(?:npm|pip|yarn|pnpm|bun|"
    rf"brew|cargo|npx|uv|pipx)|(?:via|using)\s+(?:npm|pip|pip3|yarn|pnpm|bun|brew|cargo|npx|uvx?|pipx|gem|go)\b|"
    rf"from\s+(?:npm|pypi))",
)
_COMMAND_SHAPED = 8  # the patterns above this one read a command's shape; the rest read prose
# `go` / `cargo` / `deno` etc. above also match their ordinary subcommands: only these verbs install.
_INSTALL_VERBS = r"\b(?:install|add|get|require|-s)\b"
_MANAGERS = frozenset(("cargo", "go", "gem", "brew", "apt", "apt-get", "dnf", "yum", "apk", "pacman", "choco", "scoop",
                       "winget", "snap", "port", "nix-env", "bundle", "composer", "dotnet", "deno"))
# A flag, with its value when it takes one (`--rm` takes none: the image follows it). Read as the
# CLI reads it, one way only: the first alternative that fits wins and is never re-split (atomic,
# possessive), so `-e -e -e … x` costs linear time, not 2^n.
_OPTS = (r"(?>(?:-{1,2}[\w-]+=\S+|(?:-[evpwub]|--(?:name|network|entrypoint|env|volume|publish|platform|user|mount|"
         r"workdir|env-file|depth|branch|origin|config|reference|filter|jobs))\s+\S+|-{1,2}[\w-]+)\s+)*+")
_FETCHES = (
    rf"\b(?:docker|podman)\s+(?:container\s+)?(?:run|pull|create)\s+{_OPTS}([a-z0-9][\w./:@-]*)",
    rf"\bgit\s+clone\s+{_OPTS}(\S+)",
)
# A host written without a scheme, before a path or port (`cdn.example.net/x.sh`, `evil.io:8080`).
_BARE_HOST = (r"(?<![\w@./-])((?:[a-z0-9-]+\.)+(?:com|net|org|io|dev|sh|co|app|xyz|me|ai|cloud|site|tech|info|biz|"
              r"ru|cn|de|uk|run|to|gg|ly|so|cc|top|online|pw|tk|page|link|click|zip|mov))(?=[/:][\w.])")
_PERMISSIONS = (
    r"--dangerously-skip-permissions|--allow-dangerously-skip-permissions|bypass\W*permissions|"
    r"--permission-mode[\s=]+\S+|permissions\W*(?:allow|defaultmode|additionaldirectories)|--allowedtools\b|"
    r"dangerouslydisablesandbox|enableallprojectmcpservers|skipdangerousmodepermissionprompt|"
    r"disable\W*all\W*hooks|\bace_disabled\b|\bace\s+(?:uninstall|disable)\b|\bclaude\b[^\n]{0,40}\s--bare\b|"
    r"\bbash\([^()\n]*\*\s*\)|\.claude/settings[\w.-]*\.json|\ballowed_?tools\b|\bdefaultmode\b|"
    r"\bcore\.hookspath\b|\bgit\s+config\s+--(?:global|system)\b|\buninstall\W+(?:-\S+\s+)*ace[-_]engine\b|"
    # the agent's and the shell's own files, where prose says to change them ("append to ~/.bashrc")
    r"\b(?:append|add|write|edit|change|modify|move|rename|remove|delete|disable|put|echo|set)\b[^\n.;]{0,40}?"
    r"(?:~/|\$home/|(?<![\w./-]))(?:\.(?:bashrc|bash_profile|zshrc|zprofile|zshenv|profile)\b|\.claude\b[\w./-]*)|"
    r"(?:~/|\$home/)\.(?:netrc|npmrc|pypirc|git-credentials|ssh/|aws/credentials|docker/config\.json|bashrc|"
    r"bash_profile|zshrc|zprofile|zshenv|profile)\b"
)
# Names that are words of the sentence, not packages (`npm install the deps`, `npx to run`).
_NOT_NAMES = frozenset(("the", "a", "an", "to", "it", "and", "or", "with", "in", "on", "for", "of", "first", "then",
                        "this", "that", "all", "your", "its", "deps", "dependencies", "packages", "requirements",
                        "everything", "them", "install", "add", "run", "i", "-", "--", "only", "again", "once",
                        "before", "after", "when", "if", "from", "via", "using", "now", "here", "there", "test",
                        "tests",
                        "build", "lint", "script", "scripts", "command", "commands", "server", "app", "suite",
                        "checks", "linter", "formatter", "project", "code", "package", "tool", "version"))
_FILE_ARGS = (r"(?:^|\s)(?:-r|-c|-e|-f|-i|--requirement|--constraint|--editable|--find-links|--index-url|"
                        r"--extra-index-url|--path|--manifest-path|-t|--target)\s*$")
_NAME_END = r"(?<=.)(?:@[^/@]*$|==.*|>=.*|<=.*|~=.*|!=.*|\[.*|:.*)"

_compiled: dict[str, Any] = {}


def _rx(name: str) -> Any:
    if name not in _compiled:  # first use only: hooks import this module and run none of it
        _compiled["installs"] = [re.compile(p, re.IGNORECASE) for p in _INSTALLS]
        _compiled["fetches"] = [re.compile(p, re.IGNORECASE) for p in _FETCHES]
        _compiled["permissions"] = re.compile(_PERMISSIONS, re.IGNORECASE)
        _compiled["verbs"] = re.compile(_INSTALL_VERBS)
        _compiled["file_args"] = re.compile(_FILE_ARGS)
        _compiled["name_end"] = re.compile(_NAME_END)
        _compiled["bare_host"] = re.compile(_BARE_HOST)
        _compiled["code"] = re.compile(_CODE)
        _compiled["controls"] = re.compile(r"\.(?:bashrc|bash_profile|zshrc|zprofile|zshenv|profile)\b|\.claude\b|"
                                           r"ace[-_]engine\b")
    return _compiled[name]


def fold(text: str) -> str:
    """The lesson text as the safety policy reads it (its own normalization), lower case."""
    from ..core.escape import plain
    from .folding import DASHES, folded  # the one folding (the safety policy's)

    # Controls and ANSI sequences first (`npx \x1b[0mevil` reads as `npx evil`); then dashes as hyphens.
    return folded(plain(str(text))).lower().translate(DASHES)


def commands(content: str) -> tuple[list[str], list[str]]:
    """(the risky parts of the commands in `content`, read by structure; the safety policy's reasons
    among them): `command_parts.lesson`, loaded on first use (hooks import this module, never call it)."""
    from . import command_parts

    return command_parts.lesson(content)


_CODE = r"(?ms)^[ \t]*(```|~~~)[^\n]*\n.*?(?:^[ \t]*\1[ \t]*$|\Z)|(`{1,3})[^`\n]+?\2"


def _name(raw: str) -> str:
    name = raw.strip("`'\".,;:)(]}[{<>*")
    name = _rx("name_end").sub("", name) or name
    return name.rstrip("`'\".,;:)(]}").lower()


def _is_name(name: str) -> bool:
    return len(name) >= 2 and name not in _NOT_NAMES and not name.startswith(("-", ".", "/", "~", "$")) and \
        not name.endswith((".txt", ".toml", ".cfg", ".lock", ".json", ".in")) and any(c.isalpha() for c in name)


def risky_parts(content: str) -> list[str]:
    """The lesson's risky parts as `kind:name` (`install:snapshot-refresher`, `fetch:evil.example`,
    `host:evil.example`, `permission:--dangerously-skip-permissions`), in order, each once."""
    text = fold(content)
    # Command-shaped patterns read prose only: code (spans, fenced blocks) is the parser's alone.
    prose = fold(_rx("code").sub(" \u00b6 ", content)) if "`" in content or "~~~" in content else text
    found: list[str] = []
    # Where the code spans lie in the folded text: a paraphrase pattern that reads the whole text (it
    # must see `X` in "install the package `X`") leaves a match inside one span to the parser.
    spans = [m.span() for m in _rx("code").finditer(text)] if "`" in text else []
    for k, rx in enumerate(_rx("installs")):
        read = prose if k < _COMMAND_SHAPED else text  # the match's offsets are this text's
        for match in rx.finditer(read):
            if read is text and any(a <= match.start() and match.end() <= b for a, b in spans):
                continue  # `npx turbo run typecheck`: one command, read by structure
            if _rx("file_args").search(read, max(0, match.start(1) - 40), match.start(1)):
                continue  # `pip install -r requirements.txt`, `-e .`: the project's own files
            head = read[match.start():match.start(1)]
            if (head.split() or [""])[0] in _MANAGERS and not _rx("verbs").search(head):
                continue  # `go test ./...`, `cargo build`: ordinary commands
            name = _name(match.group(1))
            if _is_name(name):
                found.append("install:" + name)
    parsed, _runs = commands(content)
    for part in parsed:
        kind, _, name = part.partition(":")
        if kind == "install":
            name = _name(name)
            if not _is_name(name):
                continue
        found.append(f"{kind}:{name}")
    for rx in _rx("fetches"):
        for match in rx.finditer(prose):
            name = match.group(1).strip("`'\".,;:)(]}[{<>*").lower()
            if _is_name(name):
                found.append("fetch:" + name)
    from . import safety

    named = safety.hosts(text) + [m.group(1) for m in _rx("bare_host").finditer(text)]
    for host in dict.fromkeys(named):  # registries and docs may be named; any other host is a part
        bare = host[4:] if host.startswith("www.") else host
        if bare not in safety.KNOWN_HOSTS and not bare.startswith("127."):
            found.append("host:" + bare)
    for match in _rx("permissions").finditer(text):
        said = " ".join(match.group(0).split())
        # "append … to ~/.bashrc", "uninstall ace-engine": the file or the package is the part
        control = _rx("controls").search(said) if said[:1].isalpha() and not said.startswith(("bash(", "bypass",
                                                                                            "permissions")) else None
        found.append("permission:" + (control.group(0) if control else said))
    return list(dict.fromkeys(found))


def needle(part: str) -> str:
    """What to look for, folded, in the texts a part may have come from (`install:x` → `x`)."""
    return part.split(":", 1)[1] if ":" in part else part


def default_origin(source: str | None) -> str:
    """The origin of a part nobody computed, written by an operation of `source` (the one table)."""
    return DEFAULT_ORIGIN.get(str(source or ""), "foreign")


def stronger(a: str | None, b: str | None) -> str:
    """Two observations' origins of one part, combined (the user's or project's word settles it;
    else one foreign sighting taints the agent's choice)."""
    if a is None or b is None:
        return a or b or "foreign"
    return a if _RANK.get(a, 1) >= _RANK.get(b, 1) else b


def record(content: str, provenance: Mapping[str, Any] | None, source: str | None, computed: Mapping[str, str] | None,
           *, replace: bool = False) -> dict[str, str]:
    """The origins to store for `content` written by an operation of `source`: `computed` (the
    learner's, for its own sources only) else the source's default, combined with what the lesson
    had (`stronger`) unless `replace` (a user's write or approval states the origin anew)."""
    kept = (provenance or {}).get("origins")
    old = {} if replace or not isinstance(kept, dict) else dict(kept)
    fallback = default_origin(source)
    learned = str(source or "") in LEARNER_SOURCES and computed is not None
    out: dict[str, str] = {}
    for part in risky_parts(content):
        new = (computed or {}).get(part) if learned else None
        new = new if new in ORIGINS else fallback
        out[part] = stronger(old.get(part), new) if part in old else new
    return out


def with_origins(provenance: Mapping[str, Any], origins: Mapping[str, str],
                 seen: Mapping[str, str] | None = None) -> dict[str, Any]:
    """`provenance` recording `origins` (replacing any claim it carried) and, for its foreign parts,
    where they were first seen (`seen`: the learner's notes; earlier notes kept)."""
    out = {k: v for k, v in provenance.items() if k not in ("origins", "origin_notes")}
    if origins:
        out["origins"] = dict(origins)
    kept, seen = provenance.get("origin_notes"), seen or {}
    notes = {**(kept if isinstance(kept, dict) else {}), **{p: seen[p] for p in origins if p in seen}}
    notes = {p: str(n) for p, n in notes.items() if origins.get(p) == "foreign"}
    if notes:
        out["origin_notes"] = notes
    return out


def origin_of(part: str, provenance: Mapping[str, Any] | None, source: str | None = None) -> str:
    """A part's recorded origin; otherwise the default of the lesson's source (`provenance["source"]`,
    or `source` when the provenance names none)."""
    prov = provenance or {}
    origins = prov.get("origins")
    if isinstance(origins, dict) and origins.get(part) in ORIGINS:
        return str(origins[part])
    return default_origin(prov.get("source") or source)


def project_hosts(provenance: Mapping[str, Any] | None, source: str | None = None) -> frozenset[str]:
    """The hosts the learner placed in the project's own files for a lesson it wrote (`host:X` →
    `project`, found in the README, config, CI): the project's, for the host check too. Only the
    learner's computed origins count: a source's default (a bootstrap lesson is `project` by
    default, made of the repository's text alone) never trusts a host."""
    if str(source or (provenance or {}).get("source") or "") not in LEARNER_SOURCES:
        return frozenset()
    origins = (provenance or {}).get("origins")
    return frozenset(p[5:] for p, o in (origins if isinstance(origins, dict) else {}).items()
                     if str(p).startswith("host:") and o == "project")


def origin_concerns(content: str, provenance: Mapping[str, Any] | None = None, source: str | None = None,
                    trusted_hosts: Iterable[str] = (), said: Iterable[str] = ()) -> list[str]:
    """One concern per risky part whose origin is foreign or unknown: it names the part and where it
    came from, so `ace review` shows it. [] when every risky part is the user's, the project's or
    the agent's own. `trusted_hosts` (the user's, the project's remote) are not parts; what the
    pattern list already `said` ("contacts unknown host X", "fetches and runs code") is not said twice."""
    out = []
    said = list(said)
    trusted = {f"host:{h}" for h in trusted_hosts}
    unknown = " ".join(c for c in said if c.startswith("contacts unknown host "))[len("contacts unknown host "):]
    skip = {f"host:{h}" for h in unknown.replace(",", " ").split()}
    for part in risky_parts(content):
        origin = origin_of(part, provenance, source)
        if origin in ("user", "project", "agent") or part in trusted or part in skip or (
                part.startswith("exec:") and "fetches and runs code" in said):
            continue
        kind, name = part.split(":", 1)
        what = {"install": "installs or runs package", "fetch": "fetches or runs", "host": "names host",
                "permission": "widens permissions with", "exec": "runs fetched code from",
                "remote": "sends to or adds remote", "unplaced": "runs a command ace cannot place:"}.get(kind, kind)
        notes = (provenance or {}).get("origin_notes")
        where = notes.get(part) if isinstance(notes, dict) else None
        where = where or FROM_SOURCE.get(str((provenance or {}).get("source") or source or ""))
        out.append(f"{what} `{name[:80]}`, {WHERE['foreign']}" + (f": {str(where)[:160]}" if where else ""))
    return out
