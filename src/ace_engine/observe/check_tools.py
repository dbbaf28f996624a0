"""Which tool a shell command runs, and what kind of job that is: the table behind `commands.kind`.

`classify("mix credo --strict")` → `lint`; `classify("mise run test")` → `test` (a task runner:
the task's name says the job); `classify("ls -la")` → `readonly`. Kinds: test / build / lint /
typecheck / format / install / vcs / readonly / other.

The input is ONE command (no `&&`, no `cd`; `commands.parts` splits a line). `strip_launchers`
first removes what only launches the tool (`uv run`, `npx`, `bundle exec`, `python -m`,
`doppler run --`, `fvm` …) and reduces the first word's path to its name (`./node_modules/.bin/tsc`
→ `tsc`), so each row names the tool itself. Rows are tried in order, first match wins: a
specific row (`cargo clippy`) before a general one (`cargo`).

Pure, stdlib only; the regexes compile once, lazily. Cost: one pass over ~60 regexes per command.
"""

from __future__ import annotations

import re

# (ecosystem, kind, regex on one command with its launchers stripped). First match wins.
TOOLS: tuple[tuple[str, str, str], ...] = (
    ("ace", "readonly", r"^!?ace\b"),
    # -- tests -----------------------------------------------------------------------------------
    ("python", "test", r"^(?:pytest|py\.test|unittest|tox|nox|nosetests|ward)\b|^coverage run\b.*\b(?:pytest|unittest)"
                       r"|^hatch test\b|^(?:python3?\S* )?manage\.py test\b"),
    ("javascript", "test", r"^(?:jest|vitest|mocha|ava|tap|playwright test|cypress run|karma start|wdio)\b"
                           r"|^(?:bun|deno) test\b|^node --test\b"),
    ("elixir", "test", r"^mix (?:test|coveralls\S*)\b"),
    ("go", "test", r"^go test\b|^gotestsum\b|^ginkgo\b"),
    ("rust", "test", r"^cargo (?:test|nextest|tarpaulin|llvm-cov)\b"),
    ("dart", "test", r"^(?:dart|flutter) test\b|^flutter drive\b"),
    ("ruby", "test", r"^(?:rspec|minitest)\b|^(?:rails|rake) (?:test|spec)\b|^ruby -I ?test\b"),
    ("jvm", "test", r"^(?:mvn|mvnw)\b.*\b(?:test|verify|integration-test)\b"),
    ("swift", "test", r"^swift test\b|^xcodebuild\b.*\btest\b"),
    ("c", "test", r"^(?:ctest|meson test)\b"),
    ("dotnet", "test", r"^dotnet test\b"),
    ("php", "test", r"^(?:phpunit|pest|paratest)\b"),
    ("haskell", "test", r"^(?:cabal|stack) test\b"),
    ("shell", "test", r"^bats\b"),
    ("build-system", "test", r"^(?:bazel|bazelisk|buck2|pants) test\b|^zig build test\b"),
    # -- type checkers ---------------------------------------------------------------------------
    ("python", "typecheck", r"^(?:mypy|dmypy|pyright|basedpyright|pytype|pyre)\b"),
    ("typescript", "typecheck", r"^(?:tsc|vue-tsc)\b.*(?:--noEmit|--noemit)\b|^(?:svelte-check|tsd)\b|^deno check\b"),
    ("rust", "typecheck", r"^cargo check\b"),
    ("elixir", "typecheck", r"^mix dialyzer\b"),
    ("ruby", "typecheck", r"^(?:srb tc|steep check)\b"),
    ("php", "typecheck", r"^(?:phpstan|psalm)\b"),
    # -- linters ---------------------------------------------------------------------------------
    ("python", "lint", r"^(?:ruff(?! format)|flake8|pylint|pyflakes|pycodestyle|pydocstyle|bandit|vulture)\b"),
    ("javascript", "lint", r"^(?:eslint|stylelint|oxlint|xo|standard|next lint|tslint)\b|^biome (?:check|lint|ci)\b"
                           r"|^deno lint\b"),
    ("elixir", "lint", r"^mix (?:credo|sobelow|deps\.audit|hex\.audit)\b"),
    ("go", "lint", r"^(?:golangci-lint|staticcheck|revive|govulncheck|errcheck)\b|^go vet\b"),
    ("rust", "lint", r"^cargo (?:clippy|deny|audit)\b"),
    ("dart", "lint", r"^(?:dart|flutter) analyze\b"),
    ("ruby", "lint", r"^(?:rubocop|standardrb|reek|brakeman|erb_lint)\b"),
    ("jvm", "lint", r"^(?:ktlint|detekt)\b"),
    ("swift", "lint", r"^swiftlint\b"),
    ("c", "lint", r"^(?:clang-tidy|cppcheck|cpplint)\b"),
    ("markdown", "lint", r"^(?:markdownlint(?:-cli2?)?|mdl|vale|remark)\b"),
    ("shell", "lint", r"^shellcheck\b"),
    ("infra", "lint", r"^(?:hadolint|actionlint|yamllint|tflint|kubeconform|kubeval)\b|^terraform validate\b"),
    ("hooks", "lint", r"^(?:pre-commit|prek) run\b|^lefthook run\b|^lint-staged\b"),
    # -- formatters (checking or writing) --------------------------------------------------------
    ("python", "format", r"^(?:black|isort|autopep8|yapf)\b|^ruff format\b"),
    ("javascript", "format", r"^(?:prettier|dprint)\b|^biome format\b|^deno fmt\b"),
    ("elixir", "format", r"^mix format\b"),
    ("go", "format", r"^(?:gofmt|goimports|gofumpt)\b"),
    ("rust", "format", r"^(?:cargo fmt|rustfmt)\b"),
    ("dart", "format", r"^dart format\b"),
    ("c", "format", r"^clang-format\b"),
    ("swift", "format", r"^(?:swift-format|swiftformat)\b"),
    ("shell", "format", r"^shfmt\b"),
    ("infra", "format", r"^terraform fmt\b"),
    ("dotnet", "format", r"^dotnet format\b"),
    ("php", "format", r"^php-cs-fixer\b"),
    # -- builds ----------------------------------------------------------------------------------
    ("javascript", "build", r"^(?:tsc|webpack|esbuild|rollup|tsup|parcel|swc)\b|^(?:vite|next|nuxt|astro|ng) build\b"
                            r"|^bun build\b"),
    ("elixir", "build", r"^mix compile\b"),
    ("go", "build", r"^go (?:build|generate|install)\b"),
    ("rust", "build", r"^cargo build\b"),
    ("dart", "build", r"^(?:dart|flutter) (?:pub )?run build_runner\b|^flutter build\b|^dart compile\b"),
    ("jvm", "build", r"^(?:mvn|mvnw)\b.*\b(?:package|install|compile)\b"),
    ("swift", "build", r"^swift build\b|^xcodebuild\b"),
    ("c", "build", r"^(?:cmake|ninja|meson|scons)\b"),
    ("dotnet", "build", r"^dotnet build\b"),
    ("python", "build", r"^python3?\S* -m build\b|^(?:uv|hatch|poetry) build\b"),
    ("containers", "build", r"^docker(?: compose| buildx)? build\b"),
    ("build-system", "build", r"^(?:bazel|bazelisk|buck2) build\b|^zig build\b"),
    ("haskell", "build", r"^(?:cabal|stack) build\b"),
)

# Package installs: after the checks (`pnpm test` is a runner task, `pnpm add` an install).
INSTALLS = (
    r"^pip3? install\b|^uv (?:sync|add|lock|pip install|tool install)\b|^poetry (?:install|add|lock)\b"
    r"|^(?:pipx|conda|mamba) install\b|^pdm (?:install|add|sync)\b"
    r"|^(?:npm|pnpm) (?:install|i|ci|add)\b|^yarn(?: install| add)?$|^yarn (?:install|add)\b|^bun (?:install|i|add)\b"
    r"|^deno (?:install|add)\b"
    r"|^cargo (?:add|fetch|install)\b|^go (?:get|mod tidy|mod download)\b"
    r"|^mix deps\.get\b|^(?:dart|flutter) pub (?:get|add|upgrade)\b|^flutter pub get\b"
    r"|^bundle(?: install)?$|^bundle (?:install|add)\b|^gem install\b|^composer (?:install|require|update)\b"
    r"|^(?:apt-get|apt|brew|dnf|yum|apk|pacman) (?:install|add|-S)\b|^mise (?:install|use)\b|^asdf install\b"
)
VCS = (r"^git (?:commit|push|pull|merge|rebase|checkout|switch|reset|revert|cherry-pick|stash(?! list)|add|rm|mv|"
       r"restore|worktree (?:add|remove)|tag \S|"
       r"branch (?!-{1,2}(?:a|v|vv|r|l|list|all|remotes|show-current|contains|merged|no-merged)\b)\S)"
       r"|^gh pr (?:create|merge)\b")
READONLY = (
    r"^git (?:status|log|diff|show|branch|remote|rev-parse|blame|ls-files|grep|describe|tag|config --get|stash list|"
    r"reflog|shortlog|fetch --dry-run|worktree list)\b|^git$",
    r"^(?:ls|ll|la|cat|bat|head|tail|less|more|grep|egrep|fgrep|rg|ag|ack|find|fd|tree|pwd|echo|printf|which|type|"
    r"whereis|wc|stat|file|du|df|ps|top|htop|env|printenv|date|uname|whoami|id|hostname|cmp|sort|uniq|cut|jq|yq|man|"
    r"help|history|true|false|sleep|realpath|dirname|basename|nproc|free|uptime|lsof|column|xxd|hexdump|od|md5sum|"
    r"sha256sum|tldr|test|\[)\b",
    r"^(?:python3?|node|npm|pip3?|cargo|go|rustc|ruby|java|gcc|clang|uv|poetry|deno|bun|mix|elixir|dart|flutter|"
    r"swift) (?:-V|--version|-v|version)\b"
    r"|^(?:pip3?|uv pip) (?:list|show|freeze|check)\b|^npm (?:ls|list|view|outdated|config get)\b|^cargo tree\b"
    r"|^go (?:env|list|version|doc)\b|^docker (?:ps|images|logs|inspect)\b|^kubectl (?:get|describe|logs)\b"
    r"|^gh (?:pr|issue|run) (?:view|list|status|diff|checks)\b|^mix (?:help|deps\.tree)\b|^flutter doctor\b",
    r"^sed -n\b|^awk\b(?!.*>)|^(?:curl|wget|http|xh)\b(?!.*(?:-X\s*(?:POST|PUT|DELETE|PATCH)|--data|-d\s|"
    r"-F\s|--upload|-T\s|-o\s|-O\b))",
    # Any tool asked what it has or is (`rustup show`, `rustup toolchain list`, `mise ls`, `brew info x`).
    r"^[a-z][\w.-]* (?:(?:toolchain|target|component|plugins?|config|cache) )?(?:list|ls|show|status|info|which|"
    r"outdated|doctor|active-toolchain|--version|-V|--help|help)\b(?![^|]*(?:>|--write|--fix))",
)

# A task runner's task name → the job it does. Whole names first, then each part of the name
# (`test:unit`, `lint-fix`, `ktlintCheck`) in order.
TASK_KINDS: tuple[tuple[str, str], ...] = (
    ("typecheck", r"type-?check|check-?types|types|tsc|mypy|pyright|dialyzer|typing"),
    ("lint", r"lint|lints|linter|clippy|credo|vet|eslint|ruff|staticcheck|analy[sz]e|analysis|style|markdownlint|"
             r"ktlint|detekt|checkstyle|pmd|spotbugs|rubocop|shellcheck"),
    ("format", r"fmt|format|formatting|prettier|spotless"),
    ("test", r"test|tests|spec|specs|e2e|unit|integration|jest|vitest|pytest|check|checks|ci|verify|validate|"
             r"precommit|qa"),
    ("build", r"build|compile|assemble|bundle|dist"),
)

# Runners whose first non-option word is a task / target / script name.
_RUNNERS = {"make", "gmake", "just", "task", "mise", "npm", "pnpm", "yarn", "bun", "deno", "turbo", "nx", "rake",
            "poe", "composer", "gradle", "gradlew", "mvn", "mvnw", "hatch", "mix", "cargo", "melos", "lerna"}
# Words that only say "run the task named next" (`npm run x`, `mise r x`, `nx run-many`).
_RUN_WORDS = {"npm": {"run", "run-script"}, "pnpm": {"run"}, "yarn": {"run"}, "bun": {"run"},
              "mise": {"run", "r", "tasks"}, "turbo": {"run"}, "nx": {"run", "run-many", "affected"},
              "composer": {"run", "run-script"}, "hatch": {"run"}, "melos": {"run"}, "lerna": {"run"}}
# Runners that run a task only behind a word (`deno task x`, `cargo make x`): anything else is theirs.
_TASK_WORD = {"deno": {"task"}, "cargo": {"make", "xtask"}}
# The runners' own subcommands, which are not tasks (`pnpm add`, `mise install`, `mix deps.get`).
_NOT_TASKS = {
    "npm": {"install", "i", "ci", "add", "exec", "x", "ls", "list", "view", "outdated", "config", "init", "publish",
            "pack", "link", "uninstall", "r", "rm", "update", "audit", "cache", "version", "help", "prune"},
    "pnpm": {"install", "i", "add", "remove", "rm", "exec", "dlx", "update", "up", "why", "list", "ls", "store", "env",
             "create", "init", "publish", "pack", "link", "unlink", "audit", "outdated", "rebuild", "prune", "config"},
    "yarn": {"install", "add", "remove", "dlx", "up", "upgrade", "why", "info", "init", "set", "config", "plugin",
             "pack", "link", "unlink", "version", "node", "exec", "bin", "cache", "dedupe", "explain", "rebuild"},
    "bun": {"install", "i", "add", "remove", "rm", "x", "create", "init", "upgrade", "pm", "link", "unlink", "publish",
            "outdated", "update", "repl", "exec"},
    "mise": {"install", "use", "exec", "x", "ls", "list", "trust", "upgrade", "plugins", "settings", "env", "where",
             "which", "doctor", "activate", "current", "prune", "self-update", "uninstall", "config"},
    "mix": {"deps.get", "deps.update", "deps.compile", "deps.clean", "deps.tree", "help", "new", "run", "hex.info",
            "local.hex", "local.rebar", "archive.install", "igniter.install", "phx.server", "phx.new"},
    "composer": {"install", "require", "update", "remove", "dump-autoload", "show", "outdated", "validate"},
    "hatch": {"env", "shell", "version", "new", "publish", "clean", "status", "python", "dep", "project", "config"},
}
# Options of runners that take a value (`make -C dir test`, `pnpm --filter web test`).
_VALUE_OPTS = {"-C", "-f", "--file", "--makefile", "--justfile", "-d", "--dir", "--directory", "--filter", "-F",
               "-w", "--workspace", "--prefix", "--cwd", "-p", "--project", "-j", "--jobs", "-e", "--env", "-c",
               "--config", "--scope", "-P"}
_TARGET_OPTS = {"-t", "--target", "--targets"}  # nx / turbo: the option's value is the task
_SCRIPT_FILE = re.compile(r"/|\.(?:[cm]?[jt]sx?|py|sh|rb|exs?|go|dart)$")

# Options that pick tests by name or by last run (`pytest -k x`, `go test -run X`, `jest -t x`,
# `mix test --only tag`): `commands.general` drops them, with their value.
TEST_SELECTORS = {"-k", "--deselect", "-run", "-skip", "-t", "--testNamePattern", "--test-name-pattern", "--grep",
                  "-g", "--testPathPattern", "--only", "--name", "-N", "--plain-name", "--tests", "--test", "-Dtest",
                  "--example"}
TEST_SELECTOR_FLAGS = {"--lf", "--last-failed", "--ff", "--failed-first", "--sw", "--stepwise", "--failed", "--stale",
                       "--onlyChanged"}
# Options whose value is a setting, not a file under test (`tsc -p tsconfig.json`): kept with it.
SETTING_OPTIONS = {"-p", "--project", "-c", "--config", "--config-file", "-C", "--cwd", "--rootdir", "--prefix", "-w",
                   "--workspace", "--filter", "-F", "--cov", "--cov-config", "--tb", "-n", "--numprocesses", "-m",
                   "--reporter", "--seed", "-e", "--env", "--tags", "-tags", "--target", "--manifest-path",
                   "--package", "--features", "-j", "--jobs", "--maxfail", "-r", "--timeout", "-timeout",
                   "--profile", "--max-warnings", "--format", "--out-format", "-coverprofile", "--junitxml",
                   "--cov-report", "-f", "--file"}

_LAUNCHERS = re.compile(
    r"^(?:[A-Za-z_]\w*=(?:'[^']*'|\"[^\"]*\"|\S*)\s+"              # FOO=1 cmd
    r"|env(?:\s+-\S+)*\s+(?=\S)"                                   # env [-i] cmd
    r"|(?:timeout|gtimeout)\s+(?:-\S+\s+)*\S+\s+|time\s+|nice\s+(?:-n\s*-?\d+\s+)?|command\s+|exec\s+|nohup\s+"
    r"|(?:uv|poetry|pipenv|pdm|rye)\s+run(?:\s+--?[\w-]+(?:=\S+)?)*\s+"
    r"|npx(?:\s+(?:-y|--yes|--no-install|-p\s+\S+|--package[= ]\S+))*\s+|bunx\s+|bun\s+x\s+"
    r"|(?:pnpm|yarn)\s+(?:exec|dlx)\s+|bundle\s+exec\s+|(?:mise|rtx)\s+(?:exec|x)(?:\s+\S+@\S+)*\s+(?:--\s+)?"
    r"|asdf\s+exec\s+|direnv\s+exec\s+\S+\s+|(?:doppler|op|infisical)\s+run(?:\s+(?!--\s)-\S+(?:\s+[^-\s]\S*)?)*\s+--\s+"
    r"|dotenv(?:\s+-\S+(?:\s+\S+)?)*\s+--\s+|fvm\s+|xvfb-run(?:\s+-\S+)*\s+|nix\s+develop\s+(?:\S+\s+)?-c\s+"
    r"|(?:\S*/)?python[\d.]*\s+-m\s+(?!build\b|http\.server\b|venv\b|pip\b))")


# Of `_LAUNCHERS`, those that only time, renice, re-exec or fetch-and-run a command: they say nothing
# of how this project runs its tools. The others do (an environment, a tool version, secrets, an
# X server): `uv run pytest` fails as `pytest` where the tools live in uv's environment.
_PLAIN_LAUNCHER = re.compile(r"^(?:env|timeout|gtimeout|time|nice|command|exec|nohup|npx|bunx|bun\s+x|pnpm|yarn|"
                             r"(?:\S*/)?python[\d.]*)\b")
# Options that change what a check builds or reads (`go test -tags=integration`, `cargo test --features x`,
# `pytest -c ci.ini`): the project's way, not a cosmetic flag such as `-q` or `-v`.
_TELLING_OPTIONS = {"-tags", "--tags", "--features", "--all-features", "-c", "--config", "--config-file",
                    "--manifest-path", "-e", "--env", "--profile", "--settings", "--ds", "-P"}


def telling_form(command: str) -> bool:
    """Does ONE command say something the ecosystem's obvious form would not: a launcher that sets
    up the tool's environment (one of `_LAUNCHERS`, not a `_PLAIN_LAUNCHER`) or an option that changes what it checks
    (`_TELLING_OPTIONS`, also as `-tags=x`)? `pytest -q` and `npx vitest run` do not."""
    core = command.strip()
    for _ in range(8):  # the launchers `strip_launchers` takes off, one by one
        m = _LAUNCHERS.match(core)
        if m is None:
            break
        if not _PLAIN_LAUNCHER.match(m.group(0)):
            return True
        core = core[m.end():]
    return any(word.split("=", 1)[0] in _TELLING_OPTIONS for word in strip_launchers(core).split()[1:])


def strip_launchers(command: str) -> str:
    """`uv run pytest -q` → `pytest -q`; `./node_modules/.bin/tsc -p .` → `tsc -p .`;
    `doppler run -- bun run deploy` → `bun run deploy`."""
    core = command.strip()
    for _ in range(8):
        stripped = _LAUNCHERS.sub("", core, count=1)
        if stripped == core:
            break
        core = stripped
    first, _, rest = core.partition(" ")
    if "/" in first and not first.endswith("/"):
        first = first.rsplit("/", 1)[-1]
    if first in ("cargo", "rustc", "rustdoc") and rest.startswith("+"):  # `cargo +1.96.0 test`: a toolchain pick
        rest = rest.partition(" ")[2]
    return f"{first} {rest}".strip()


def runner_task(words: list[str]) -> str | None:
    """The task a runner line names (`mise run lint` → `lint`, `pnpm --filter web test` → `test`,
    `make -C sub check` → `check`, `./gradlew :app:test` → `:app:test`, `make` → ``); None for
    anything else: other tools, a runner's own subcommands (`pnpm add x`), a script file
    (`bun run scripts/x.ts`)."""
    if not words:
        return None
    tool = words[0].rsplit("/", 1)[-1]
    if tool not in _RUNNERS:
        return None
    gate = _TASK_WORD.get(tool)
    rest = words[1:]
    i = 0
    while i < len(rest):
        word = rest[i]
        if word in _TARGET_OPTS and tool in ("nx", "turbo") and i + 1 < len(rest):
            return rest[i + 1]
        if word.startswith("-"):
            i += 2 if word in _VALUE_OPTS else 1
            continue
        if "=" in word and tool in ("make", "gmake", "just", "rake"):
            i += 1  # VAR=value
            continue
        if gate is not None:
            if word not in gate:
                return None
            gate = None
            i += 1
            continue
        if word in _RUN_WORDS.get(tool, ()):
            i += 1
            continue
        if tool == "yarn" and word in ("workspace", "workspaces"):
            i += 2 if word == "workspace" else 1
            continue
        if word in _NOT_TASKS.get(tool, ()) or _SCRIPT_FILE.search(word):
            return None
        return word
    return "" if tool in ("make", "gmake", "just", "task") and gate is None else None


def task_kind(task: str) -> str | None:
    """The job a task name says it does (`test:unit` → test, `ktlintCheck` → lint, `dev` → None)."""
    name = task.lower().lstrip(":")
    for kind, rx in TASK_KINDS:
        if re.fullmatch(rx, name):
            return kind
    words = [w.lower() for w in re.findall(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d+", task.lstrip(":"))]
    for word in words:
        for kind, rx in TASK_KINDS:
            if re.fullmatch(rx, word):
                return kind
    return None


_compiled: list[tuple[str, re.Pattern[str]]] | None = None


def _rows() -> list[tuple[str, re.Pattern[str]]]:
    global _compiled
    if _compiled is None:
        _compiled = [(kind, re.compile(rx)) for _, kind, rx in TOOLS]
        _compiled += [("install", re.compile(INSTALLS)), ("vcs", re.compile(VCS))]
        _compiled += [("readonly", re.compile(rx)) for rx in READONLY]
    return _compiled


def classify(command: str) -> str:
    """The kind of ONE command (see the module docstring); `other` when no row matches."""
    core = strip_launchers(command)
    rows = _rows()
    checks = len(TOOLS)
    for kind, rx in rows[:checks]:
        if rx.search(core):
            return kind
    words = core.split()
    task = runner_task(words)
    if task is not None:
        kinds = [task_kind(t) for t in _targets(words, task)]
        for wanted in ("test", "build", "lint", "typecheck", "format"):
            if wanted in kinds:
                return wanted
        if words[0] in ("make", "gmake"):
            return "build"  # `make`, `make all`, `make dist`: a build unless the target says otherwise
    for kind, rx in rows[checks:]:
        if rx.search(core):
            return kind
    return "other"


def _targets(words: list[str], first: str) -> list[str]:
    """Every target of a multi-target runner line (`make clean build test`, `mvn clean verify`)."""
    if words[0].rsplit("/", 1)[-1] not in ("make", "gmake", "just", "gradle", "gradlew", "mvn", "mvnw", "rake"):
        return [first]
    start = words.index(first) if first in words else len(words)
    return [w for w in words[start:] if not w.startswith("-") and "=" not in w] or [first]
