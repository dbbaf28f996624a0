"""Domains fit the project: a lesson's domains come from the commands, files and errors it names,
read in the project's ecosystem (`playbook/domains.py`, `playbook/domain_table.py`), and the
project's ecosystems come from its marker files (`project_langs.py`)."""

import os
import subprocess
import sys

import pytest

from ace_engine.core import project_langs
from ace_engine.playbook import domains

EX, GO, RS, RB, JVM, TS, PY = ["elixir"], ["go"], ["rust"], ["ruby"], ["jvm"], ["typescript"], ["python"]
LANGUAGE_DOMAINS = {"python", "elixir", "go", "rust", "ruby", "jvm", "javascript", "typescript"}

# (project languages, lesson, domains it must have, domains it must not have)
CASES = [
    # -- elixir ------------------------------------------------------------------------------------
    pytest.param(EX, "Run the tests with `mix test`; one file with `mix test test/app/accounts_test.exs:42`.",
                 {"elixir-testing"}, {"python-typing", "python-testing", "auth"}, id="ex-mix-test"),
    pytest.param(EX, "`mix test` needs `{:lazy_html, \">= 0.1.0\", only: :test}` in mix.exs for LiveView tests.",
                 {"elixir-testing", "elixir-packaging"}, {"python-typing", "js-testing"}, id="ex-mix-exs-dep"),
    pytest.param(EX, "The session tests in test/spotter/session_test.exs need the Ecto sandbox checked out in setup.",
                 {"elixir-testing"}, {"auth", "python-testing"}, id="ex-session-test-not-auth"),
    pytest.param(EX, "`mix test` fails with `** (DBConnection.OwnershipError) cannot find ownership process` "
                     "when a session process queries outside the sandbox.",
                 {"elixir-testing"}, {"auth", "python-typing"}, id="ex-ownership-error"),
    pytest.param(EX, "Run `mix credo --strict` and `mix format --check-formatted` before committing; CI fails on either.",
                 {"elixir-linting", "ci"}, {"python-linting", "linting"}, id="ex-credo-format"),
    pytest.param(EX, "`mix dialyzer` reports `pattern_match` warnings for unreachable clauses; fix the typespec.",
                 {"elixir-typing"}, {"python-typing"}, id="ex-dialyzer"),
    pytest.param(EX, "After changing a schema run `mix ecto.gen.migration add_index`, then `mix ecto.migrate`.",
                 {"database"}, {"elixir-testing"}, id="ex-ecto-migrate"),
    pytest.param(EX, "`mix compile --warnings-as-errors` fails on unused aliases; remove them before pushing.",
                 {"elixir-build"}, {"build"}, id="ex-compile"),
    pytest.param(EX, "Fetch dependencies with `mix deps.get` after pulling; a stale mix.lock breaks the compile.",
                 {"elixir-packaging"}, {"python-packaging", "node-packaging"}, id="ex-deps-get"),
    pytest.param(EX, "GenServer.call times out after 5 seconds by default; pass a timeout for slow session lookups.",
                 {"elixir"}, {"auth"}, id="ex-genserver-bare"),
    pytest.param(EX, "A `** (UndefinedFunctionError) function Spotter.Session.token/1 is undefined` means the "
                     "module was renamed.", {"elixir"}, {"auth", "auth-jwt"}, id="ex-error-names-in-code"),
    pytest.param(EX, "Run the whole test suite before pushing; flaky tests are tagged with `@tag :flaky`.",
                 {"elixir-testing"}, {"python-testing", "testing"}, id="ex-tests-without-a-tool"),
    pytest.param(EX, "The pre-commit validation still runs with `git commit --no-verify`; fix the `mix credo` "
                     "complexity warnings and `mix dialyzer` before committing.",
                 {"git", "elixir-linting", "elixir-typing"}, {"python-typing"}, id="ex-precommit"),
    # -- go ----------------------------------------------------------------------------------------
    pytest.param(GO, "Run `go test ./...` from the repo root; `go test -race ./internal/...` runs in CI.",
                 {"go-testing", "ci"}, {"python-testing", "elixir-testing"}, id="go-test"),
    pytest.param(GO, "`golangci-lint run` rejects unused parameters; rename them to `_`.",
                 {"go-linting"}, {"python-linting"}, id="go-golangci"),
    pytest.param(GO, "After adding an import run `go mod tidy`; CI fails when go.mod and go.sum are stale.",
                 {"go-modules", "ci"}, {"python-packaging"}, id="go-mod-tidy"),
    pytest.param(GO, "`go vet ./...` flags copying a sync.Mutex by value.", {"go-linting"}, set(), id="go-vet"),
    pytest.param(GO, "The store tests in `internal/store/store_test.go` need Docker running for testcontainers.",
                 {"go-testing", "docker"}, {"python-testing"}, id="go-test-file-docker"),
    pytest.param(GO, "Every handler takes `ctx context.Context` first and passes it down; goroutines must "
                     "respect cancellation.", {"go"}, {"auth"}, id="go-bare"),
    pytest.param(GO, "Keep the test suite green: fix failing tests before asking for review.", {"go-testing"},
                 {"python-testing"}, id="go-tests-without-a-tool"),
    # -- rust --------------------------------------------------------------------------------------
    pytest.param(RS, "Run `cargo clippy --all-targets -- -D warnings`; plain `cargo clippy` misses test code.",
                 {"rust-linting"}, {"python-linting", "linting"}, id="rs-clippy"),
    pytest.param(RS, "`cargo test --workspace` runs every crate's tests; `cargo nextest run` is faster.",
                 {"rust-testing"}, {"python-testing"}, id="rs-cargo-test"),
    pytest.param(RS, "`cargo fmt --check` runs in CI; format before committing.", {"rust-linting", "ci"}, set(),
                 id="rs-fmt"),
    pytest.param(RS, "error[E0502]: cannot borrow `self.buf` as mutable because it is also borrowed as immutable; "
                     "clone the slice first.", {"rust"}, {"python"}, id="rs-borrow-error"),
    pytest.param(RS, "Add dependencies with `cargo add serde --features derive` so Cargo.toml stays sorted.",
                 {"rust-packaging"}, {"python-packaging"}, id="rs-cargo-add"),
    # -- ruby --------------------------------------------------------------------------------------
    pytest.param(RB, "Run the specs with `bundle exec rspec`; plain `rspec` picks the wrong gem versions.",
                 {"ruby-testing"}, {"python-testing", "build"}, id="rb-rspec"),
    pytest.param(RB, "`bundle exec rubocop -a` fixes most offenses; CI runs rubocop without -a.",
                 {"ruby-linting", "ci"}, {"python-linting"}, id="rb-rubocop"),
    pytest.param(RB, "After editing the Gemfile run `bundle install` and commit Gemfile.lock.",
                 {"ruby-packaging"}, {"build", "node-packaging"}, id="rb-bundle-install"),
    pytest.param(RB, "`bin/rails db:migrate` then `bin/rails test`; the session controller test needs fixtures.",
                 {"ruby-testing", "database"}, {"auth"}, id="rb-rails"),
    pytest.param(RB, "NoMethodError: undefined method `name' for nil in the user serializer; guard with `&.`.",
                 {"ruby"}, {"python"}, id="rb-nomethoderror"),
    # -- jvm ---------------------------------------------------------------------------------------
    pytest.param(JVM, "Run `mvn -q test` for unit tests; `mvn verify` also runs the integration tests.",
                 {"jvm-testing"}, {"python-testing", "jvm-build"}, id="jvm-mvn-test"),
    pytest.param(JVM, "`./gradlew test` caches results; add `--rerun-tasks` after changing test resources.",
                 {"jvm-testing"}, {"python-testing"}, id="jvm-gradle-test"),
    pytest.param(JVM, "`./gradlew build` fails on ktlint violations; run `./gradlew ktlintFormat` first.",
                 {"jvm-build", "jvm-linting"}, {"build"}, id="jvm-ktlint"),
    pytest.param(JVM, "JUnit 5 tests need `useJUnitPlatform()` in build.gradle.kts or Gradle finds no tests.",
                 {"jvm-testing", "jvm-build"}, {"python-testing"}, id="jvm-junit"),
    pytest.param(JVM, "A NullPointerException in SessionFilter came from a missing token header.",
                 {"jvm"}, {"auth"}, id="jvm-npe"),
    # -- typescript / javascript -------------------------------------------------------------------
    pytest.param(TS, "Type-check with `npx tsc --noEmit`; `npm test` runs vitest and does not check types.",
                 {"typescript", "js-testing"}, {"python-typing", "node-packaging"}, id="ts-tsc-npm-test"),
    pytest.param(TS, "There is no `npm run lint` script; run `npx eslint src` directly.",
                 {"js-linting"}, {"python-linting", "node-packaging"}, id="ts-lint-script"),
    pytest.param(TS, "error TS2322: Type 'string | undefined' is not assignable to type 'string' in session.ts.",
                 {"typescript"}, {"auth"}, id="ts-error-code"),
    pytest.param(TS, "Use `pnpm install` only; npm creates a second lockfile (package-lock.json).",
                 {"node-packaging"}, {"python-packaging"}, id="ts-pnpm"),
    pytest.param(TS, "`pnpm build` runs vite; the output goes to dist/ and is not committed.",
                 {"js-build"}, {"build"}, id="ts-pnpm-build"),
    pytest.param(TS, "Component tests live next to the component as `Button.test.tsx` and query with getByRole.",
                 {"js-testing"}, {"python-testing"}, id="ts-component-test"),
    # -- python ------------------------------------------------------------------------------------
    pytest.param(PY, "Run the suite with `uv run pytest -q`; plain `pytest` uses the system Python.",
                 {"python-testing"}, {"python-packaging"}, id="py-pytest"),
    pytest.param(PY, "`mypy --strict src/` rejects untyped defs; add annotations instead of `# type: ignore`.",
                 {"python-typing"}, set(), id="py-mypy"),
    pytest.param(PY, "Run `ruff check --fix` and `ruff format` before committing.", {"python-linting"}, set(),
                 id="py-ruff"),
    pytest.param(PY, "Use `alembic revision --autogenerate` after changing models; never edit an applied migration.",
                 {"database"}, set(), id="py-alembic"),
    pytest.param(PY, "The login view sets the session cookie with SameSite=Lax; tests must send it back.",
                 {"auth"}, set(), id="py-session-with-login-is-auth"),
    pytest.param(PY, "ModuleNotFoundError: No module named 'app': install the package with `pip install -e .`.",
                 {"python-packaging"}, set(), id="py-pip"),
    # -- cross-cutting, any project ----------------------------------------------------------------
    pytest.param(None, "`git push` rejected with 'fetch first': `git pull --rebase`, then push again.",
                 {"git"}, set(), id="git-pull-rebase"),
    pytest.param(EX, "A new worktree branch has no upstream: push with `git push --set-upstream origin HEAD`.",
                 {"git"}, {"elixir-testing", "auth"}, id="git-upstream"),
    pytest.param(None, "CI caches node_modules keyed on the lockfile hash in .github/workflows/ci.yml.",
                 {"ci", "node-packaging"}, set(), id="ci-workflow-file"),
    pytest.param(None, "The Dockerfile copies requirements.txt before the source so the pip layer stays cached.",
                 {"docker", "python-packaging"}, set(), id="dockerfile"),
    pytest.param(None, "`kubectl rollout restart deployment/api` picks up the new ConfigMap.",
                 {"kubernetes"}, {"docker"}, id="kubectl"),
    pytest.param(None, "The Bash tool runs zsh, where `status` is read-only: don't use it as a loop variable.",
                 {"shell"}, set(), id="shell"),
    pytest.param(None, "Counting tokens for the session: the transcript has 12k tokens after compaction.",
                 set(), {"auth", "auth-jwt"}, id="tokens-are-not-auth"),
]


@pytest.mark.parametrize("languages,lesson,wanted,unwanted", CASES)
def test_domains_fit_the_lesson_and_the_project(languages, lesson, wanted, unwanted):
    found = domains.derive(lesson, languages=languages)
    assert wanted <= set(found), found
    assert not unwanted & set(found), found
    assert len(found) <= 3


def test_there_are_enough_cases_in_every_ecosystem():
    ids = [case.id for case in CASES]
    assert len(ids) >= 40
    for prefix in ("ex-", "go-", "rs-", "rb-", "jvm-", "ts-", "py-"):
        assert sum(i.startswith(prefix) for i in ids) >= 4, prefix


@pytest.mark.parametrize("languages,expected", [
    (["elixir"], "elixir-testing"), (["go"], "go-testing"), (["rust"], "rust-testing"), (["ruby"], "ruby-testing"),
    (["jvm"], "jvm-testing"), (["typescript"], "js-testing"), (["python", "javascript"], "python-testing"),
    (None, "testing"),
])
def test_a_job_without_a_tool_takes_the_projects_main_language(languages, expected):
    lesson = "Run the whole test suite before pushing; the flaky ones are marked."
    assert domains.derive(lesson, languages=languages)[0] == expected


def test_what_the_lesson_names_beats_the_projects_language():
    # A Go tool named in an Elixir project is still Go; the project only fills in what is unnamed.
    assert domains.derive("The proxy's own tests run with `go test ./proxy/...`.", languages=EX) == ["go-testing"]
    assert "python-testing" in domains.derive("Run `pytest -x` on the scripts/ helpers.", languages=RB)


def test_a_lone_common_word_says_nothing():
    for word in ("session", "token", "test", "config", "branch", "query"):
        assert domains.derive(f"Check the {word} first.", languages=EX) == ["general"], word


def test_files_the_lesson_came_from_count():
    assert domains.derive("Keep the handler small.", files=["lib/app_web/live/user_live.ex"]) == ["elixir"]
    assert domains.derive("Keep assertions specific.", files=["test/app/user_test.exs"])[0] == "elixir-testing"
    assert "docker" in domains.derive("Pin the base image.", files=["deploy/Dockerfile"])
    assert "ci" in domains.derive("Cache the toolchain.", files=[".github/workflows/ci.yml"])


def test_old_callers_without_languages_still_work():
    assert domains.derive("Run pytest with a conftest fixture")[0] == "python-testing"
    assert domains.derive("Nothing technical here") == ["general"]
    assert domains.derive("docker compose with jest and npm and ruff", limit=2).__len__() == 2


# -- matching a touched file to a known domain -----------------------------------------------------


def test_match_path_uses_the_layout_of_each_ecosystem():
    known = ["elixir-testing", "elixir-linting", "database", "docker", "ci", "git"]
    assert domains.match_path("test/spotter/session_test.exs", known) == ("elixir-testing", 2)
    assert domains.match_path("internal/geo/tiles_test.go", ["go-testing", "go-modules"]) == ("go-testing", 2)
    assert domains.match_path("spec/models/user_spec.rb", ["ruby-testing", "auth"])[0] == "ruby-testing"
    assert domains.match_path("deploy/Dockerfile", known)[0] == "docker"
    assert domains.match_path(".github/workflows/ci.yml", known)[0] == "ci"
    assert domains.match_path("priv/repo/migrations/20240101_add_users.exs", known)[0] == "database"
    assert domains.match_path("test/app/user_test.exs", ["testing", "auth"]) == ("testing", 2)


def test_match_path_ignores_the_extension_alone():
    # In an Elixir project every file is Elixir: opening one is no shift to any elixir-* domain.
    assert domains.match_path("lib/spotter/sessions.ex", ["elixir-testing", "elixir-linting"]) is None
    assert domains.match_path("src/app/main.py", ["python-testing", "python"]) is None


def test_the_hook_import_stays_light():
    # Hooks import `domains` (retrieval, domain shift); the table loads only when it is used.
    src = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "src")
    probe = (f"import sys; sys.path.insert(0, {src!r})\n"
             "from ace_engine.playbook import domains\n"
             "domains.path_words('src/auth/jwt.py')\n"
             "before = sorted({'typing', 'ace_engine.playbook.domain_table'} & set(sys.modules))\n"
             "domains.match_path('test/a_test.exs', ['elixir-testing'])\n"
             "print(before, 'ace_engine.playbook.domain_table' in sys.modules)\n")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[] True"


# -- the project's languages -----------------------------------------------------------------------


def _project(tmp_path, *files):
    for name in files:
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("")
    return str(tmp_path)


@pytest.mark.parametrize("files,expected", [
    (["mix.exs", "mix.lock"], ("elixir",)),
    (["go.mod", "main.go"], ("go",)),
    (["Cargo.toml"], ("rust",)),
    (["pom.xml"], ("jvm",)),
    (["build.gradle.kts", "settings.gradle.kts"], ("jvm",)),
    (["Gemfile", "package.json"], ("ruby", "javascript")),
    (["package.json", "tsconfig.json"], ("typescript",)),
    (["package.json"], ("javascript",)),
    (["pyproject.toml", "package.json"], ("python", "javascript")),
    (["setup.py"], ("python",)),
    (["mix.exs", "assets/package.json"], ("elixir",)),
    (["backend/go.mod", "web/package.json", "web/tsconfig.json"], ("go", "typescript")),
    (["node_modules/left-pad/package.json", "README.md"], ()),
    (["README.md"], ()),
])
def test_detect_reads_the_marker_files(tmp_path, files, expected):
    assert project_langs.detect(_project(tmp_path, *files)) == expected


def test_detect_without_a_readable_root():
    assert project_langs.detect(None) == ()
    assert project_langs.detect("/nonexistent/ace-engine/project") == ()


def test_detect_lists_the_root_once_per_process(tmp_path, monkeypatch):
    root = _project(tmp_path, "mix.exs")
    calls = []
    real = os.scandir

    def counting(path):
        calls.append(path)
        return real(path)

    monkeypatch.setattr(os, "scandir", counting)
    assert project_langs.detect(root) == ("elixir",)
    (tmp_path / "go.mod").write_text("")
    assert project_langs.detect(root) == ("elixir",), "cached: no second look at the repository"
    assert calls == [root]


def test_detected_languages_lead_derive(tmp_path):
    root = _project(tmp_path, "mix.exs")
    lesson = "Run the whole test suite before pushing; the flaky ones are marked."
    assert domains.derive(lesson, languages=project_langs.detect(root)) == ["elixir-testing"]
