"""The data behind `domains.derive`: which words, commands, files and error messages point where.

Contract: every entry maps to a *signal*, a short string that says what it points to:

    "database"          a domain of its own, whatever the language (`sql`, `postgres` …)
    "~auth"             the same, but weak: a common word (`session`, `cookie`) that counts only
                        next to a strong word of the same domain, or another weak one
    "elixir:testing"    a job (testing / linting / typing / build / packaging) in one ecosystem,
                        named by `domain_name` (`elixir-testing`, `go-modules`, `node-packaging`)
    "python:database"   an ecosystem's tool for a cross-cutting domain: says both
    "rust:"             evidence of an ecosystem only (`crate`, a `.rs` path, `error[E0382]`)
    "*testing"          a job named without a tool (`lint`, `~*testing`: `the tests`): the
                        ecosystem comes from the rest of the lesson, else from the project's
                        languages, else the generic name in GENERIC_JOBS, else nothing

Tables: WORDS (single words and `a.b` / `a-b` terms), COMMANDS (a tool and its subcommand or task),
FILE_NAMES and PATH_RULES (a file's name and its place in the layout), EXTENSIONS (the language a
file is in), ERRORS (messages only one ecosystem prints). Ecosystems: python, javascript,
typescript (JS tooling, TypeScript types), elixir, go, rust, ruby, jvm (Java / Kotlin / Scala with
Maven or Gradle), and a few rows for dart, php, dotnet, swift.
Cost: plain dicts and strings; `domains` imports this module only when it derives or matches.
"""

from __future__ import annotations

KINDS = ("testing", "linting", "typing", "build", "packaging")

# ecosystem -> {"": its bare domain, "*": prefix of its job domains (default: its name),
#               job: a domain name that differs from `<prefix>-<job>`}
ECOSYSTEMS: dict[str, dict[str, str]] = {
    "python": {"": "python"},
    "javascript": {"": "javascript", "*": "js", "packaging": "node-packaging", "typing": "typescript"},
    "typescript": {"": "typescript", "*": "js", "packaging": "node-packaging", "typing": "typescript"},
    "elixir": {"": "elixir"},
    "go": {"": "go", "packaging": "go-modules"},
    "rust": {"": "rust"},
    "ruby": {"": "ruby"},
    "jvm": {"": "jvm"},
    "dart": {"": "dart"},
    "php": {"": "php"},
    "dotnet": {"": "dotnet"},
    "swift": {"": "swift"},
}


def domain_name(ecosystem: str, kind: str) -> str:
    """The domain for a job (or a plain domain) in an ecosystem: (`go`, `packaging`) → `go-modules`."""
    names = ECOSYSTEMS.get(ecosystem, {"": ecosystem})
    if kind == "":
        return names.get("", ecosystem)
    if kind in KINDS:
        return names.get(kind) or f"{names.get('*', ecosystem)}-{kind}"
    return kind


# A job named without a tool, when nothing says which ecosystem: these keep the old generic names.
GENERIC_JOBS = {"linting": "linting", "build": "build", "testing": "testing"}

# signal -> words (lower case; a word with `.`, `-`, `_` or `/` is looked for whole).
WORDS: dict[str, str] = {
    # -- python ----------------------------------------------------------------------------------
    "python:testing": "pytest py.test unittest conftest parametrize monkeypatch tox nox testcase pytest-asyncio "
                      "pytest-xdist pytest-mock factory_boy",
    "python:typing": "mypy pyright typeddict basedpyright type-hints",
    "~python:typing": "typing annotations",
    "python:linting": "ruff flake8 pylint isort pyflakes pycodestyle autopep8",
    "python:packaging": "pip pip3 pipx pyproject setuptools venv virtualenv wheel hatchling site-packages",
    "python:database": "alembic sqlalchemy psycopg psycopg2 joinedload",
    "python:http-api": "fastapi flask django starlette uvicorn",
    "python:async": "asyncio anyio",
    "python:": "python python3 traceback pydantic",
    # -- javascript / typescript -----------------------------------------------------------------
    "javascript:testing": "jest vitest mocha cypress playwright karma jasmine testing-library getbyrole jsdom msw "
                          "supertest",
    "javascript:linting": "eslint prettier biome stylelint oxlint",
    "javascript:packaging": "npm yarn pnpm node_modules",
    "javascript:build": "webpack vite esbuild rollup tsup turbopack",
    "javascript:http-api": "express fastify",
    "javascript:": "javascript nodejs node.js npx",
    "typescript:typing": "tsc tsconfig noemit ts-ignore ts-expect-error",
    "typescript:": "typescript",
    "javascript:frontend-react": "react jsx useeffect usestate redux nextjs next.js",
    # -- elixir ----------------------------------------------------------------------------------
    "elixir:testing": "exunit ex_machina mox",
    "elixir:linting": "credo",
    "elixir:typing": "dialyzer dialyxir typespec typespecs",
    "elixir:packaging": "hex.pm",
    "elixir:database": "ecto",
    "elixir:http-api": "phoenix",
    "elixir:": "elixir erlang genserver liveview heex iex",
    # -- go --------------------------------------------------------------------------------------
    "go:testing": "testify gotestsum ginkgo gomock httptest",
    "go:linting": "golangci-lint gofmt goimports gofumpt staticcheck govulncheck",
    "go:": "golang goroutine goroutines",
    # -- rust ------------------------------------------------------------------------------------
    "rust:testing": "nextest proptest mockall",
    "rust:linting": "clippy rustfmt",
    "rust:packaging": "crates.io",
    "rust:async": "tokio",
    "rust:": "rust rustc cargo crate crates serde rustup",
    # -- ruby ------------------------------------------------------------------------------------
    "ruby:testing": "rspec minitest capybara factory_bot",
    "ruby:linting": "rubocop standardrb",
    "ruby:typing": "sorbet",
    "ruby:packaging": "bundler gemfile gemspec rubygems",
    "ruby:database": "activerecord",
    "ruby:": "ruby rails",
    # -- jvm -------------------------------------------------------------------------------------
    "jvm:testing": "junit testng mockito assertj surefire",
    "jvm:linting": "checkstyle spotless ktlint detekt spotbugs",
    "jvm:build": "maven gradle gradlew mvnw",
    "jvm:database": "hibernate jpa jdbc",
    "jvm:http-api": "spring springboot spring-boot",
    "jvm:": "java kotlin scala jvm",
    # -- others ----------------------------------------------------------------------------------
    "dart:": "dart flutter", "php:testing": "phpunit", "php:typing": "phpstan psalm", "php:packaging": "composer",
    "php:": "php laravel", "dotnet:": "dotnet csharp nuget",
    # -- jobs named without a tool ---------------------------------------------------------------
    "~*testing": "test tests testing suite fixture fixtures flaky",
    "*linting": "lint linter linters linting formatter",
    "*typing": "typecheck type-check typechecker",
    "*build": "build builds compile compiles compiler compilation",
    "~*packaging": "dependency dependencies deps lockfile",
    # -- cross-cutting ---------------------------------------------------------------------------
    "auth-jwt": "jwt jwks",
    "auth": "auth oauth oauth2 login logout password passwords sso authentication authenticate authorization "
            "csrf saml oidc bcrypt",
    "~auth": "session sessions cookie cookies credential credentials permission permissions",
    "database": "sql sqlite postgres postgresql mysql mariadb orm migration migrations prisma redis n+1",
    "~database": "query queries schema transaction transactions",
    "docker": "docker dockerfile docker-compose container containers podman hadolint dockerignore",
    "~docker": "compose image images",
    "kubernetes": "kubernetes k8s kubectl helm",
    "~kubernetes": "pod pods",
    "ci": "ci github-actions gitlab-ci jenkins jenkinsfile circleci buildkite actionlint",
    "~ci": "workflow workflows pipeline pipelines",
    "git": "git rebase cherry-pick stash worktree worktrees gitignore",
    "~git": "merge branch branches commit commits push pull upstream",
    "http-api": "endpoint endpoints graphql openapi grpc webhook webhooks cors",
    "~http-api": "api apis http https request requests route routes router response responses",
    "~frontend-react": "component components",
    "build": "makefile cmake bazel",
    "shell": "bash shell zsh shellcheck",
    "~shell": "sh",
    "config-env": "dotenv .env env-var env-vars envvar",
    "~config-env": "env environment config configuration settings",
    "async": "async await concurrency threading",
    "~async": "promise promises",
    "logging": "logging logger",
    "~logging": "logs",
    "performance": "performance latency profiling benchmark benchmarks",
    "~performance": "slow profile cache caching",
    "unicode-text": "unicode utf-8 utf8 unicodedata accents",
    "~unicode-text": "encoding",
    "cli": "cli argparse typer",
    "~cli": "click",
    "linting": "markdownlint markdownlint-cli2 pre-commit",
}

# tool -> {subcommand or task: signal}. "" is what the tool alone says (absent: nothing, because
# the word is also English: `go`, `make`, `mix`, `bundle`); "=run" reads the next word as a task
# name (`npm run lint`); "=skip" says the next word is the real tool (`bundle exec rspec`).
# A key ending in `*` matches any subcommand with that prefix (`ecto.*`).
COMMANDS: dict[str, dict[str, str]] = {
    "mix": {"test": "elixir:testing", "coveralls*": "elixir:testing", "credo": "elixir:linting",
            "format": "elixir:linting", "sobelow": "elixir:linting", "dialyzer": "elixir:typing",
            "compile": "elixir:build", "deps*": "elixir:packaging", "hex*": "elixir:packaging",
            "ecto*": "elixir:database", "phx*": "elixir:http-api", "precommit": "elixir:linting"},
    "iex": {"": "elixir:"},
    "go": {"test": "go:testing", "vet": "go:linting", "fmt": "go:linting", "build": "go:build",
           "generate": "go:build", "install": "go:build", "mod": "go:packaging", "get": "go:packaging",
           "work": "go:packaging", "run": "go:"},
    "cargo": {"test": "rust:testing", "nextest": "rust:testing", "clippy": "rust:linting", "fmt": "rust:linting",
              "build": "rust:build", "check": "rust:build", "run": "rust:", "add": "rust:packaging",
              "update": "rust:packaging", "install": "rust:packaging", "audit": "rust:linting", "": "rust:"},
    "bundle": {"exec": "=skip", "install": "ruby:packaging", "update": "ruby:packaging", "add": "ruby:packaging"},
    "rails": {"test*": "ruby:testing", "spec": "ruby:testing", "db*": "ruby:database", "": "ruby:"},
    "rake": {"db*": "ruby:database", "": "=run"},
    "gem": {"install": "ruby:packaging", "build": "ruby:packaging"},
    "mvn": {"test": "jvm:testing", "verify": "jvm:testing", "dependency*": "jvm:packaging", "": "jvm:build"},
    "gradle": {"test": "jvm:testing", "check": "jvm:testing", "dependencies": "jvm:packaging", "": "jvm:build"},
    "npm": {"test": "javascript:testing", "t": "javascript:testing", "run": "=run", "run-script": "=run",
            "exec": "=skip", "x": "=skip", "": "javascript:packaging"},
    "pnpm": {"test": "javascript:testing", "run": "=run", "exec": "=skip", "dlx": "=skip", "": "javascript:packaging"},
    "yarn": {"test": "javascript:testing", "run": "=run", "dlx": "=skip", "exec": "=skip",
             "": "javascript:packaging"},
    "bun": {"test": "javascript:testing", "run": "=run", "x": "=skip", "install": "javascript:packaging",
            "add": "javascript:packaging", "": "javascript:"},
    "npx": {"": "=skip"}, "bunx": {"": "=skip"},
    "deno": {"test": "typescript:testing", "lint": "typescript:linting", "fmt": "typescript:linting",
             "check": "typescript:typing", "task": "=run", "": "typescript:"},
    "node": {"--test": "javascript:testing", "": "javascript:"},
    "python": {"-m": "=skip", "": "python:"}, "python3": {"-m": "=skip", "": "python:"},
    "uv": {"run": "=skip", "": "python:packaging"},
    "poetry": {"run": "=skip", "": "python:packaging"},
    "pipenv": {"run": "=skip", "": "python:packaging"},
    "hatch": {"test": "python:testing", "run": "=skip", "": "python:packaging"},
    "black": {"": "python:linting"},
    "make": {"": "=run"}, "just": {"": "=run"}, "task": {"": "=run"},
    "dotnet": {"test": "dotnet:testing", "build": "dotnet:build", "format": "dotnet:linting",
               "add": "dotnet:packaging", "restore": "dotnet:packaging", "": "dotnet:"},
    "flutter": {"test": "dart:testing", "analyze": "dart:linting", "pub": "dart:packaging", "build": "dart:build",
                "": "dart:"},
    "dart": {"test": "dart:testing", "analyze": "dart:linting", "format": "dart:linting", "pub": "dart:packaging"},
    "swift": {"test": "swift:testing", "build": "swift:build"},
    "docker": {"": "docker"}, "kubectl": {"": "kubernetes"}, "helm": {"": "kubernetes"},
    "git": {"": "git"}, "gh": {"pr": "git", "run": "ci", "workflow": "ci"},
}
COMMAND_ALIASES = {"mvnw": "mvn", "gradlew": "gradle", "pnpx": "npx", "mise": "task", "nx": "npm", "turbo": "npm",
                   "podman": "docker", "docker-compose": "docker"}
# Tools whose name is also a common English word: a command only inside a `code span`.
CODE_ONLY = frozenset({"black", "task", "just", "hatch", "node", "mise", "gem", "python", "python3"})
# The ecosystem of a task runner or launcher: `npm run lint` is JS linting, `make lint` anyone's.
RUNNER_ECOSYSTEM = {"npm": "javascript", "pnpm": "javascript", "yarn": "javascript", "bun": "javascript",
                    "npx": "javascript", "bunx": "javascript", "deno": "typescript", "rake": "ruby", "bundle": "ruby",
                    "mvn": "jvm", "gradle": "jvm", "uv": "python", "poetry": "python", "pipenv": "python",
                    "hatch": "python", "python": "python", "python3": "python"}

# A task name's parts (`test:unit`, `lint-fix`, `db:migrate`) → the job it does.
TASK_JOBS: dict[str, str] = {}
for _job, _names in {
    "testing": "test tests spec specs e2e unit integration check checks verify coverage",
    "linting": "lint lints eslint credo clippy fmt format prettier style vet rubocop ktlint spotless",
    "typing": "typecheck types tsc mypy pyright dialyzer",
    "build": "build compile assemble bundle dist all",
    "packaging": "install deps dependencies",
}.items():
    for _name in _names.split():
        TASK_JOBS[_name] = _job

# Exact file names (lower case) → signal.
FILE_NAMES: dict[str, str] = {
    "mix.exs": "elixir:packaging", "mix.lock": "elixir:packaging", ".credo.exs": "elixir:linting",
    ".formatter.exs": "elixir:linting", ".dialyzer_ignore.exs": "elixir:typing",
    "go.mod": "go:packaging", "go.sum": "go:packaging", "go.work": "go:packaging",
    ".golangci.yml": "go:linting", ".golangci.yaml": "go:linting",
    "cargo.toml": "rust:packaging", "cargo.lock": "rust:packaging", "clippy.toml": "rust:linting",
    "rustfmt.toml": "rust:linting",
    "gemfile": "ruby:packaging", "gemfile.lock": "ruby:packaging", ".rubocop.yml": "ruby:linting",
    "rakefile": "ruby:build", ".rspec": "ruby:testing",
    "pom.xml": "jvm:build", "build.gradle": "jvm:build", "build.gradle.kts": "jvm:build",
    "settings.gradle": "jvm:build", "settings.gradle.kts": "jvm:build", "gradle.properties": "jvm:build",
    "package.json": "javascript:packaging", "package-lock.json": "javascript:packaging",
    "pnpm-lock.yaml": "javascript:packaging", "yarn.lock": "javascript:packaging", ".npmrc": "javascript:packaging",
    "tsconfig.json": "typescript:typing", ".eslintrc": "javascript:linting", ".eslintrc.json": "javascript:linting",
    ".eslintrc.js": "javascript:linting", "eslint.config.js": "javascript:linting",
    "eslint.config.mjs": "javascript:linting", ".prettierrc": "javascript:linting", "biome.json": "javascript:linting",
    "jest.config.js": "javascript:testing", "jest.config.ts": "javascript:testing",
    "vitest.config.ts": "javascript:testing", "vitest.config.js": "javascript:testing",
    "playwright.config.ts": "javascript:testing",
    "pyproject.toml": "python:packaging", "setup.py": "python:packaging", "setup.cfg": "python:packaging",
    "requirements.txt": "python:packaging", "uv.lock": "python:packaging", "poetry.lock": "python:packaging",
    "pipfile": "python:packaging", "conftest.py": "python:testing", "pytest.ini": "python:testing",
    "tox.ini": "python:testing", "noxfile.py": "python:testing", "mypy.ini": "python:typing",
    "ruff.toml": "python:linting", ".flake8": "python:linting", "alembic.ini": "python:database",
    "dockerfile": "docker", "docker-compose.yml": "docker", "docker-compose.yaml": "docker",
    "compose.yml": "docker", "compose.yaml": "docker", ".dockerignore": "docker",
    "makefile": "build", "justfile": "build", "cmakelists.txt": "build",
    ".gitignore": "git", ".gitattributes": "git", ".gitmodules": "git",
    ".gitlab-ci.yml": "ci", "jenkinsfile": "ci", ".env": "config-env", ".env.example": "config-env",
    ".pre-commit-config.yaml": "linting",
}

# Layout conventions of each ecosystem: (directory, name ending, name start, signal) — a path
# matches when it lies under that directory (anywhere in the path), its name ends and starts so;
# "" is no condition. Plain string tests, not regexes: `match_path` runs in a hook.
PATH_RULES: tuple[tuple[str, str | tuple[str, ...], str, str], ...] = (
    (".github/workflows", "", "", "ci"), (".circleci", "", "", "ci"), (".buildkite", "", "", "ci"),
    ("", "_test.exs", "", "elixir:testing"), ("test", ".exs", "", "elixir:testing"),
    ("", "_test.go", "", "go:testing"),
    ("", ("_spec.rb", "_test.rb"), "", "ruby:testing"), ("spec", ".rb", "", "ruby:testing"),
    ("test", ".rb", "", "ruby:testing"),
    ("", ".py", "test_", "python:testing"), ("", "_test.py", "", "python:testing"),
    ("tests", ".py", "", "python:testing"), ("test", ".py", "", "python:testing"),
    ("", tuple(f".{k}.{e}" for k in ("test", "spec") for e in ("ts", "tsx", "js", "jsx", "mjs", "cjs", "mts")), "",
     "javascript:testing"),
    ("__tests__", "", "", "javascript:testing"),
    ("src/test", (".java", ".kt", ".scala", ".groovy"), "", "jvm:testing"),
    ("", ("test.java", "tests.java", "test.kt", "test.scala"), "", "jvm:testing"),
    ("tests", ".rs", "", "rust:testing"),
    ("migrations", "", "", "database"), ("migration", "", "", "database"), ("migrate", "", "", "database"),
    ("", ".sql", "", "database"),
    ("k8s", "", "", "kubernetes"), ("kubernetes", "", "", "kubernetes"), ("helm", "", "", "kubernetes"),
    ("charts", "", "", "kubernetes"),
    ("", ".dockerfile", "", "docker"), ("", "", "dockerfile", "docker"),
)

# File extension → the language it is written in (a bare-language signal), and for a few, a domain.
EXTENSIONS: dict[str, str] = {
    ".ex": "elixir:", ".exs": "elixir:", ".heex": "elixir:", ".eex": "elixir:", ".go": "go:", ".rs": "rust:",
    ".rb": "ruby:", ".rake": "ruby:", ".erb": "ruby:", ".java": "jvm:", ".kt": "jvm:", ".kts": "jvm:",
    ".scala": "jvm:", ".groovy": "jvm:", ".ts": "typescript:", ".mts": "typescript:", ".cts": "typescript:",
    ".tsx": "typescript:frontend-react", ".js": "javascript:", ".mjs": "javascript:", ".cjs": "javascript:",
    ".jsx": "javascript:frontend-react", ".py": "python:", ".pyi": "python:", ".dart": "dart:", ".php": "php:",
    ".cs": "dotnet:", ".swift": "swift:", ".sh": "shell", ".bash": "shell", ".zsh": "shell", ".sql": "database",
    ".md": "docs", ".mdx": "docs", ".rst": "docs", ".css": "frontend-css", ".scss": "frontend-css",
    ".html": "frontend-html", ".vue": "javascript:", ".svelte": "javascript:",
}

# (regex on the lower-case text, signal): error messages that only one ecosystem prints.
ERRORS: tuple[tuple[str, str], ...] = (
    (r"\b(?:modulenotfounderror|importerror|attributeerror|indentationerror|valueerror)\b"
     r"|traceback \(most recent call last\)", "python:"),
    (r"\b(?:undefinedfunctionerror|functionclauseerror|matcherror)\b|\*\* \((?:[a-z]+\.)*[a-z]+error\)"
     r"|\{:error,", "elixir:"),
    (r"\berror ts\d{4}\b|\bts\d{4}:", "typescript:typing"),
    (r"\bcannot find module\b", "javascript:"),
    (r"\bpanic: |nil pointer dereference|declared and not used|missing go\.sum entry|\bgo: ", "go:"),
    (r"\berror\[e\d{4}\]|borrow checker|cannot borrow|does not live long enough", "rust:"),
    (r"\bnomethoderror\b|undefined method [`'‘]|uninitialized constant|\bloaderror\b", "ruby:"),
    (r"\b(?:nullpointerexception|classnotfoundexception|noclassdeffounderror)\b|\bjava\.lang\.", "jvm:"),
)
