"""Shell commands as the learner sees them: the core command inside the noise agents wrap it in,
what kind of command it is (test / build / lint / install / read-only …), and the signature of the
error it failed with.

`key("cd /repo && FOO=1 uv run pytest -q tests 2>&1 | tail -20")` → `uv run pytest -q tests`;
`kind(...)` → `test`; `family(...)` → `pytest`: two runs of the same family are "the same check"
even with different arguments, which is how an error → fix → pass sequence is recognised.
"""

import re

# -- normalizing ---------------------------------------------------------------------------------

_ENV_ASSIGN = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=(?:'[^']*'|\"[^\"]*\"|\S*)\s+")
_TRAILING_NOISE = re.compile(
    r"(?:\s*(?:2>&1|>\s*/dev/null|2>\s*/dev/null|&>\s*/dev/null|;\s*echo\s+\S*\$\?\S*|\|\|\s*true))+\s*$")
_PIPE_TAIL = re.compile(r"\s*\|\s*(?:tail|head|less|more|cat|grep|rg|tee|sort|uniq|wc|cut)\b[^|>]*$")
_WRAPPER = re.compile(r"^(?:timeout\s+\S+\s+|time\s+|nice\s+(?:-n\s*\d+\s+)?|command\s+|exec\s+)")
_SPACE = re.compile(r"\s+")
_SPLIT = re.compile(r"\s*(?:&&|\|\||;|\n)\s*")


def clean(command: str) -> str:
    """One line, collapsed spaces, output plumbing (`2>&1 | tail -20`) dropped."""
    text = _SPACE.sub(" ", str(command)).strip()
    for _ in range(3):
        before = text
        text = _TRAILING_NOISE.sub("", text)
        text = _PIPE_TAIL.sub("", text)
        if text == before:
            break
    return text.strip()


def parts(command: str) -> list[str]:
    """The commands of a `a && b; c` line, each cleaned of env assignments and wrappers."""
    out = []
    for piece in _SPLIT.split(clean(command)):
        piece = piece.strip().strip("()").strip()
        while True:
            stripped = _WRAPPER.sub("", _ENV_ASSIGN.sub("", piece))
            if stripped == piece:
                break
            piece = stripped
        if piece:
            out.append(piece)
    return out


_COMMIT_MESSAGE = re.compile(r"""(\s-(?:m|am|[a-z]*m)\s*)("(?:[^"\\]|\\.)*"|'[^']*'|\S+)""")


def key(command: str) -> str:
    """The command that matters: `cd x && … && <the last non-cd part>`, cleaned; a commit's
    message is elided (`git commit -m '…'`) so every commit is the same command."""
    pieces = [p for p in parts(command) if not re.match(r"^(?:cd|pushd|popd|source|\.|export|set)\b", p)]
    if not pieces:
        return clean(command)[:300]
    # Prefer the last check-like part (`pip install -e . && pytest -q` is a test run).
    chosen = next((p for p in reversed(pieces) if kind(p) in CHECK_KINDS), pieces[-1])
    if chosen.startswith("git commit"):
        chosen = _COMMIT_MESSAGE.sub(lambda m: m.group(1) + "'…'", chosen)
    return chosen[:300]


# -- classifying ---------------------------------------------------------------------------------

CHECK_KINDS = ("test", "build", "lint", "typecheck", "format")

# (kind, regex on a single cleaned command). First match wins; order matters.
_KIND_RULES = [
    ("readonly", r"^(?:ace|!ace)\b"),
    ("test", r"^(?:\S*/)?(?:uv run |poetry run |pipenv run |hatch run |pdm run |rye run )?"
             r"(?:python3?(?:\.\d+)? -m )?(?:pytest|py\.test|unittest|tox|nox|nosetests)\b"),
    ("test", r"^(?:npm|pnpm|yarn|bun)(?: run)? test\S*\b|^(?:npx |pnpm exec |yarn )?(?:jest|vitest|mocha|ava|"
             r"playwright test|cypress run)\b"),
    ("test", r"^(?:cargo (?:test|nextest)|go test|deno test|bun test|mix test|dotnet test|ctest|swift test)\b"),
    ("test", r"^(?:bundle exec )?(?:rspec|rake test)\b|^(?:\S*/)?(?:phpunit)\b|^(?:mvn|\S*mvnw)\b.*\btest\b|^(?:gradle|"
             r"\S*gradlew)\b.*\btest\b"),
    ("test", r"^make\b.*\b(?:test|tests|check)\b"),
    ("typecheck", r"^(?:\S*/)?(?:uv run |poetry run )?(?:python3? -m )?(?:mypy|pyright|basedpyright)\b|"
                  r"^(?:npx )?tsc\b.*--noEmit|"
                  r"^(?:npm|pnpm|yarn)(?: run)? (?:typecheck|type-check|tsc|check-types)\b|^cargo check\b"),
    ("lint", r"^(?:\S*/)?(?:uv run |poetry run )?(?:python3? -m )?(?:ruff(?! format)|flake8|pylint|pyflakes|"
             r"pycodestyle|bandit)\b"),
    ("lint", r"^(?:npx )?(?:eslint|stylelint|biome (?:check|lint)|oxlint)\b|^(?:npm|pnpm|yarn)(?: run)? lint\S*\b|"
             r"^(?:golangci-lint|shellcheck|hadolint|rubocop|cargo clippy|pre-commit run)\b|^make\b.*\blint\b"),
    ("format", r"^(?:\S*/)?(?:uv run |poetry run )?(?:python3? -m )?(?:black|isort|ruff format|autopep8|yapf)\b|"
               r"^(?:npx )?prettier\b|^(?:gofmt|goimports|cargo fmt|rustfmt|clang-format)\b|^(?:npm|pnpm|"
               r"yarn)(?: run)? format\b"),
    ("install", r"^(?:\S*/)?(?:uv |python3? -m )?pip3? install\b|^uv (?:sync|add|lock|pip install)\b|"
                r"^poetry (?:install|add|lock)\b|"
                r"^(?:npm|pnpm) (?:install|i|ci|add)\b|^yarn(?: install| add)?$|^yarn (?:install|add)\b|"
                r"^bun (?:install|add)\b|"
                r"^cargo (?:add|fetch)\b|^go (?:get|mod tidy|mod download)\b|^(?:apt-get|apt|brew|dnf|yum|"
                r"apk) (?:install|add)\b|"
                r"^bundle install\b|^gem install\b|^pipx install\b|^conda install\b"),
    ("build", r"^(?:npm|pnpm|yarn|bun)(?: run)? build\S*\b|^(?:cargo build|go build|cmake|ninja|meson|bazel build|"
              r"python3? -m build|docker build|docker compose build|mvn (?:package|install|compile)|gradle build|"
              r"\S*gradlew build|dotnet build|swift build|zig build)\b|^(?:npx )?(?:tsc|webpack|vite build|esbuild|"
              r"rollup|next build)\b|^make\b"),
    ("vcs", r"^git (?:commit|push|pull|merge|rebase|checkout|switch|reset|revert|cherry-pick|stash(?! list)|add|rm|mv|"
            r"tag \S|branch \S)\b"),
    ("readonly", r"^git (?:status|log|diff|show|branch|remote|rev-parse|blame|ls-files|grep|describe|tag|config --get|"
                 r"stash list|reflog|shortlog|fetch --dry-run)\b|^git$"),
    ("readonly", r"^(?:ls|ll|la|cat|bat|head|tail|less|more|grep|egrep|fgrep|rg|ag|ack|find|fd|tree|pwd|echo|printf|"
                 r"which|"
                 r"type|whereis|wc|stat|file|du|df|ps|top|htop|env|printenv|date|uname|whoami|id|hostname|cmp|sort|"
                 r"uniq|"
                 r"cut|jq|yq|man|help|history|true|false|sleep|realpath|dirname|basename|nproc|free|uptime|lsof|column|"
                 r"xxd|hexdump|od|md5sum|sha256sum|tldr|test|\[)\b"),
    ("readonly", r"^(?:python3?|node|npm|pip3?|cargo|go|rustc|ruby|java|gcc|clang|uv|poetry|deno|bun) (?:-V|--version|"
                 r"-v|version)\b|"
                 r"^(?:pip3?|uv pip) (?:list|show|freeze|check)\b|^npm (?:ls|list|view|outdated|config get)\b|"
                 r"^cargo tree\b|"
                 r"^go (?:env|list|version)\b|^docker (?:ps|images|logs|inspect)\b|^kubectl (?:get|describe|logs)\b"),
    ("readonly", r"^sed -n\b|^awk\b(?!.*>)|^(?:curl|wget|http|xh)\b(?!.*(?:-X\s*(?:POST|PUT|DELETE|PATCH)|--data|-d\s|"
                 r"-F\s|--upload|-T\s|-o\s|-O\b))"),
]
_compiled_rules = None


def _rules():
    global _compiled_rules
    if _compiled_rules is None:
        _compiled_rules = [(k, re.compile(rx)) for k, rx in _KIND_RULES]
    return _compiled_rules


def kind(command: str) -> str:
    """test / build / lint / typecheck / format / install / vcs / readonly / other, of the command
    that matters in the line (see `key`). A line is read-only only if every part is."""
    pieces = parts(command)
    if not pieces:
        return "readonly"
    kinds = [_kind_one(p) for p in pieces]
    for wanted in CHECK_KINDS + ("install", "vcs"):
        if wanted in kinds:
            return wanted
    if all(k == "readonly" or k == "cd" for k in kinds):
        return "readonly"
    return "other"


def _kind_one(piece: str) -> str:
    if re.match(r"^(?:cd|pushd|popd|source|\.|export|set)\b", piece):
        return "cd"
    if "|" in piece:  # a pipeline is as read-only as its least read-only stage
        stages = [_kind_one(stage.strip()) for stage in re.split(r"(?<!\|)\|(?!\|)", piece) if stage.strip()]
        if len(stages) > 1:
            return next((k for k in stages if k not in ("readonly", "cd")), "readonly")
    if "sed -i" in piece or re.search(r"(?<![<>2&])>>?\s*[^\s&|]", piece):
        if not re.search(r">\s*/dev/null", piece):
            return "other"  # writes a file
    for name, rx in _rules():
        if rx.search(piece):
            return name
    return "other"


def is_state_changing(command: str) -> bool:
    """Does this command do work (anything but reading and `ace` itself)?"""
    return kind(command) != "readonly"


_FAMILY_SKIP = re.compile(r"^(?:\S*/)?(?:uv run|poetry run|pipenv run|hatch run|pdm run|rye run|npx|pnpm exec|"
                          r"bundle exec|"
                          r"python3?(?:\.\d+)? -m|python3?(?:\.\d+)?)\s+")


def family(command: str) -> str:
    """The tool behind a command, for "is this the same check again?": `python -m pytest -q
    tests/a.py` and `uv run pytest` are both `pytest`; `npm run test:unit` is `npm test`."""
    core = key(command)
    while True:
        stripped = _FAMILY_SKIP.sub("", core)
        if stripped == core:
            break
        core = stripped
    words = core.split()
    if not words:
        return ""
    tool = words[0].rsplit("/", 1)[-1]
    if tool in ("npm", "pnpm", "yarn", "bun", "cargo", "go", "make", "git", "docker", "dotnet", "mvn", "gradle", "deno",
                "mix", "swift", "uv", "poetry", "pip", "pip3", "kubectl", "terraform") and len(words) > 1:
        sub = words[1] if words[1] != "run" or len(words) < 3 else words[2]
        sub = re.split(r"[:]", sub)[0]
        if tool == "make" and sub.startswith("-"):
            return tool
        return f"{tool} {sub}"
    return tool


def same_check(a: str, b: str) -> bool:
    """Two runs of the same check (or the same git operation), arguments aside."""
    return key(a) == key(b) or (family(a) == family(b) and kind(a) == kind(b) and kind(a) in CHECK_KINDS + ("vcs",))


# -- errors --------------------------------------------------------------------------------------

# (name, pattern): the first line matching, searched in this order, is the error's signature.
_SIGNATURES = [
    ("pytest", r"^(?:FAILED|ERROR) (\S+::\S+|\S+\.py)(?: - (.+))?$"),
    ("python", r"^(?:E\s+|\S+:\d+:\s+)?((?:[A-Za-z_][\w.]*\.)?[A-Z]\w*(?:Error|Exception|Exit|Warning|Interrupt|"
               r"NotFound|Failure))(?::\s*(.*))?$"),
    ("ts", r"(error TS\d+:.*)$"),
    ("rust", r"^(error(?:\[E\d+\])?:.*)$"),
    ("go", r"^(\S+\.go:\d+(?::\d+)?: .*)$"),
    ("npm", r"^(npm (?:ERR!|error) (?:code|missing|ERESOLVE|404|notarget|enoent|Missing script).*)$"),
    ("node", r"^((?:Type|Reference|Syntax|Range)Error: .*|Error: Cannot find module .*)$"),
    ("shell", r"^(?:(?:ba|z)?sh: (?:line \d+: )?)?(.*(?:command not found|No such file or directory|Permission denied|"
              r"not found in PATH|Could not find|cannot find|Unable to locate|unrecognized arguments?|"
              r"No module named).*)$"),
    ("assert", r"^\s*(assert .+)$"),
    ("compiler", r"^(\S+:\d+:\d+: (?:fatal )?error: .*)$"),
    ("lint", r"^(\S+\.\w+:\d+:\d+: [A-Z]+\d+ .*)$"),                     # ruff / flake8 / pylint
    ("generic", r"^(.*\b(?:[Ee]rror|ERROR|FAIL(?:ED)?|[Ff]atal)\b.*)$"),
]
_compiled_signatures = None
_ABS_PATH = re.compile(r"(?:/[\w.@+-]+){2,}/")
_NUMBERS = re.compile(r"\b0x[0-9a-f]{6,}\b|\s+in\s+\d+(?:\.\d+)?m?s\b")  # addresses, "in 0.04s"
_EXIT_LINE = re.compile(r"^(?:Error: )?Exit code -?\d+\s*$")


def _signatures():
    global _compiled_signatures
    if _compiled_signatures is None:
        _compiled_signatures = [(n, re.compile(rx, re.MULTILINE)) for n, rx in _SIGNATURES]
    return _compiled_signatures


def error_signature(text: str | None, root: str | None = None) -> str | None:
    """The most telling line of a failure (`ModuleNotFoundError: No module named 'textutil'`,
    `error TS2322: …`), with the machine-specific bits (absolute paths, timings) removed; None
    when the text holds nothing recognisable."""
    if not text:
        return None
    text = str(text)
    if len(text) > 20_000:
        text = text[:8_000] + "\n" + text[-12_000:]
    lines = [ln.rstrip() for ln in text.splitlines() if ln.strip() and not _EXIT_LINE.match(ln.strip())]
    body = "\n".join(lines)
    for name, rx in _signatures():
        matches = list(rx.finditer(body))
        if not matches:
            continue
        # Python tracebacks end with the innermost error; pytest's FAILED lines come in order.
        m = matches[0] if name in ("pytest", "ts", "rust", "go", "compiler", "npm") else matches[-1]
        if name == "pytest":
            sig = m.group(1) + (f" - {m.group(2)}" if m.group(2) else "")
        else:
            sig = ": ".join(g.strip() for g in m.groups() if g and g.strip())
        if name == "generic" and len(sig) > 200:
            continue
        return normalize_signature(sig, root)
    return None


_LINE_COL = re.compile(r"(\.[A-Za-z]\w{0,5})[:(]\d+(?:[:,]\d+)?\)?(?=[:\s]|$)")


def normalize_signature(sig: str, root: str | None = None) -> str:
    """Stable across runs and machines: no project root, no line:column, no timings."""
    if root:
        sig = sig.replace(root.rstrip("/") + "/", "")
    sig = _LINE_COL.sub(r"\1", sig)
    sig = _ABS_PATH.sub(lambda m: "…/" if m.group(0).count("/") > 4 else m.group(0), sig)
    sig = _NUMBERS.sub("", sig)
    sig = _SPACE.sub(" ", sig).strip(" :-")
    return sig[:200]


_SUMMARY = re.compile(
    r"(\d+ (?:passed|failed|errors?|skipped|tests?)\b.*|test result: .*|Tests?: .*\d+ (?:passed|failed).*|"
    r"^(?:ok|FAIL)\s+\S+.*|Found \d+ errors?.*|All checks passed!?|Success: no issues found.*|"
    r"\d+ problems? \(.*\)|Compiled successfully.*|Build succeeded.*|built in .*)$",
    re.MULTILINE)


def outcome_line(text: str | None) -> str | None:
    """The summary line of a check's output (`3 passed in 0.2s`, `Found 2 errors`), else the last
    non-empty line, shortened."""
    if not text:
        return None
    tail = str(text)[-6000:]
    found = _SUMMARY.findall(tail)
    if found:
        return _SPACE.sub(" ", found[-1]).strip()[:160]
    for line in reversed(tail.splitlines()):
        line = line.strip()
        if line and not _EXIT_LINE.match(line):
            return line[:160]
    return None
