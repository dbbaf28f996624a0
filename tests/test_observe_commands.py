"""Shell commands as the learner sees them: the normalised key that groups runs and is shown in
lessons, the kind of job a command does (the check-tool table, per ecosystem), its family, its
project-level form, and whether it is a one-off script."""

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ace_engine.observe import check_tools, commands
from conftest import examples

HEREDOC_COMMIT = """git add -A && git commit -m "$(cat <<'EOF'
feat: add the cart total

Co-Authored-By: Someone <someone@example.invalid>
EOF
)\""""


@pytest.mark.parametrize("command, expected", [
    # Unchanged: commands that need no normalising keep the key they always had.
    ("python -m pytest -q", "python -m pytest -q"),
    ("npm test", "npm test"),
    ("uv run pytest -q tests", "uv run pytest -q tests"),
    ("git push", "git push"),
    ("git checkout -- src/a.py", "git checkout -- src/a.py"),
    ("grep -E 'a|b' notes.txt", "grep -E 'a|b' notes.txt"),
    # A leading cd, env assignments, wrappers and output filters go.
    ("cd /repo && FOO=1 uv run pytest -q tests 2>&1 | tail -20", "uv run pytest -q tests"),
    ("cd /home/dev/shop && make test", "make test"),
    ("mix test --seed 0 2>&1 | tail -50", "mix test --seed 0"),
    ("go test ./... 2>&1 | grep -v '^ok' | head", "go test ./..."),
    ("timeout 300 npm run lint 2>&1 | grep -E 'error|warn'", "npm run lint"),
    ("pip install -e . && pytest -q", "pytest -q"),
    ("cd web\nnpm run build", "npm run build"),
    # No commit message, however it is written.
    ("git commit -m 'fix: totals; rounding && tax'", "git commit"),
    (HEREDOC_COMMIT, "git commit"),
    ('git commit -am "wip"', "git commit -a"),
    ('git add -A && git commit --no-verify -m "feat: x" -m "body"', "git commit --no-verify"),
    ("git commit --message='docs: readme'", "git commit"),
    # No branch names.
    ("git push --set-upstream origin spotter-gqc", "git push -u origin HEAD"),
    ("git push origin feature/cart-total 2>&1", "git push origin HEAD"),
    ("git push origin v1.4.0", "git push origin v1.4.0"),
    ("git checkout -b fix/login", "git checkout -b <branch>"),
    ("git switch -c spike", "git switch -c <branch>"),
    ("git branch -D old-one", "git branch -D <branch>"),
    ("git pull --rebase origin main", "git pull --rebase origin <branch>"),
    ("git cherry-pick 82f3e38a1 25b28b969", "git cherry-pick <commit>"),
    # No heredoc body; a loop is one command.
    ("python - <<'PY'\nimport sys\nprint(sys.version)\nPY", "python - <<'PY' …"),
    ("cat > /tmp/t.go << 'EOF'\npackage main\nfunc main() {}\nEOF\ngo run /tmp/t.go", "go run /tmp/t.go"),
    ("for f in a b; do\n  wc -l $f\ndone", "for f in a b; do wc -l $f; done"),
])
def test_key(command, expected):
    assert commands.key(command) == expected


def test_separators_inside_quotes_do_not_split_a_command():
    assert commands.parts("git commit -m 'a; b && c' && git push") == ["git commit -m 'a; b && c'", "git push"]
    assert commands.parts("pytest -q || echo 'tests failed; see log'") == ["pytest -q", "echo 'tests failed; see log'"]
    assert commands.parts("(cd web && npm run build)") == ["cd web", "npm run build"]
    assert commands.clean("echo $(date) && make test") == "echo $(date) && make test"
    assert commands.clean("make \\\n  test") == "make test"
    # A filter stage followed by `||` is not a trailing filter.
    assert commands.key("node x.js | grep -i ready || echo 'not ready'") == "echo 'not ready'"


@pytest.mark.parametrize("command, kind", [
    # Elixir
    ("mix test", "test"), ("mix test test/shop/cart_test.exs:12", "test"), ("mix format --check-formatted", "format"),
    ("mix credo --strict", "lint"), ("mix dialyzer", "typecheck"), ("mix compile --warnings-as-errors", "build"),
    ("mix deps.get", "install"), ("mix precommit", "test"),
    # Go
    ("golangci-lint run ./...", "lint"), ("go vet ./...", "lint"), ("go test -race ./...", "test"),
    ("go build ./...", "build"), ("gofmt -l .", "format"), ("go mod tidy", "install"),
    # Task runners: the task's name says the job.
    ("mise run lint", "lint"), ("mise run test", "test"), ("mise r fmt", "format"), ("just lint", "lint"),
    ("just test", "test"), ("task check", "test"), ("task typecheck", "typecheck"), ("make -C web test", "test"),
    ("make lint", "lint"), ("make", "build"), ("turbo run lint --filter=web", "lint"), ("nx test web", "test"),
    ("hatch run test", "test"), ("hatch fmt", "format"), ("deno task check", "test"),
    # Markdown
    ("npx markdownlint-cli2 'docs/**/*.md'", "lint"), ("markdownlint README.md", "lint"),
    # Dart / Flutter
    ("dart analyze", "lint"), ("flutter analyze", "lint"), ("dart test", "test"),
    ("flutter test test/widget_test.dart", "test"), ("fvm flutter test", "test"),
    ("dart run build_runner build --delete-conflicting-output", "build"), ("flutter pub get", "install"),
    # Ruby
    ("bundle exec rspec spec/models", "test"), ("rspec", "test"), ("bundle exec rubocop -a", "lint"),
    ("rake test", "test"), ("bin/rails test", "test"), ("bundle install", "install"),
    # Rust
    ("cargo clippy -- -D warnings", "lint"), ("cargo fmt --check", "format"), ("cargo test", "test"),
    ("cargo check", "typecheck"), ("cargo build --release", "build"),
    # JVM
    ("./gradlew test", "test"), ("./gradlew :app:testDebugUnitTest", "test"), ("gradle ktlintCheck", "lint"),
    ("./gradlew build", "build"), ("mvn test", "test"), ("./mvnw -q verify", "test"),
    ("mvn package -DskipTests", "build"), ("ktlint", "lint"), ("mvn checkstyle:check", "lint"),
    # JavaScript / TypeScript
    ("npx biome check .", "lint"), ("npx prettier --check .", "format"), ("bun test", "test"), ("deno test", "test"),
    ("deno lint", "lint"), ("npm run test:unit", "test"), ("pnpm --filter web test", "test"),
    ("bun run --filter web typecheck", "typecheck"), ("yarn workspace web lint", "lint"), ("npx tsc --noEmit", "typecheck"),
    ("./node_modules/.bin/tsc -p .", "build"), ("doppler run -- npm test", "test"), ("npm install", "install"),
    ("pnpm add zod", "install"), ("bun run scripts/test-data.ts", "other"), ("npm start", "other"),
    # Python
    ("uv run pytest -q", "test"), ("python -m mypy src", "typecheck"), ("ruff check .", "lint"),
    ("ruff format --check .", "format"), ("tox -e py312", "test"),
    # Others
    ("swift test", "test"), ("ctest --output-on-failure", "test"), ("pre-commit run --all-files", "lint"),
    ("lefthook run pre-commit", "lint"), ("shellcheck scripts/*.sh", "lint"),
    # Not checks
    ("git commit -m 'x -> y'", "vcs"), ("gh pr create --fill", "vcs"), ("git status", "readonly"),
    ("git branch -vv", "readonly"), ("gh pr view 12", "readonly"), ("ls -la && cat README.md", "readonly"),
    ("echo hi > out.txt", "other"), ("curl -fsSL https://x.example.invalid/i.sh | sh", "other"),
])
def test_kind(command, kind):
    assert commands.kind(command) == kind


def test_the_check_tool_table_names_an_ecosystem_per_row():
    ecosystems = {row[0] for row in check_tools.TOOLS}
    assert {"python", "javascript", "typescript", "elixir", "go", "rust", "dart", "ruby", "jvm", "swift", "c",
            "markdown", "hooks"} <= ecosystems
    for ecosystem, kind, rx in check_tools.TOOLS:
        assert ecosystem and kind in commands.CHECK_KINDS + ("readonly",), (ecosystem, kind)
        re.compile(rx)


@pytest.mark.parametrize("command, expected", [
    ("uv run pytest -q", "pytest -q"),
    ("./node_modules/.bin/tsc -p .", "tsc -p ."),
    ("doppler run --config dev -- bun run deploy", "bun run deploy"),
    ("bundle exec rspec", "rspec"),
    ("FOO=1 npx -y prettier --check .", "prettier --check ."),
    ("python3 -m pytest", "pytest"),
    ("python -m venv .venv", "python -m venv .venv"),
])
def test_launchers_are_not_the_tool(command, expected):
    assert check_tools.strip_launchers(command) == expected


@pytest.mark.parametrize("words, task", [
    ("mise run lint", "lint"), ("pnpm --filter web test", "test"), ("make -C sub check", "check"),
    ("./gradlew :app:test", ":app:test"), ("make", ""), ("pnpm add zod", None), ("bun run scripts/x.ts", None),
    ("yarn workspace web build", "build"), ("nx run-many -t lint", "lint"), ("cargo test", None),
    ("cargo make ci", "ci"), ("ls -la", None),
])
def test_runner_task(words, task):
    assert check_tools.runner_task(words.split()) == task


@pytest.mark.parametrize("task, kind", [
    ("test:unit", "test"), ("lint:fix", "lint"), ("check-types", "typecheck"), ("format:check", "format"),
    ("ktlintCheck", "lint"), ("spotlessCheck", "format"), ("assembleDebug", "build"), ("e2e", "test"),
    ("dev", None), ("deploy", None),
])
def test_task_names(task, kind):
    assert check_tools.task_kind(task) == kind


@pytest.mark.parametrize("command, family", [
    ("python -m pytest -q tests/a.py", "pytest"), ("uv run pytest", "pytest"), ("npm run test:unit", "npm test"),
    ("mise run lint", "mise lint"), ("bun run --filter web typecheck", "bun typecheck"),
    ("./gradlew :app:test", "gradlew test"), ("make -j4 test", "make test"), ("make", "make"),
    ("mix format --check-formatted", "mix format"), ("go test ./...", "go test"),
    ("cargo clippy -- -D warnings", "cargo clippy"), ("git commit -m x", "git commit"),
    ("python reproduce.py", "reproduce.py"), ("python - <<'PY'\nprint(1)\nPY", "python"),
])
def test_family(command, family):
    assert commands.family(command) == family


def test_same_check_ignores_arguments_and_plumbing_but_not_the_tool():
    assert commands.same_check("pytest -q tests/a.py", "python -m pytest -q")
    assert commands.same_check("mise run lint", "cd /repo && mise run lint 2>&1 | tail -30")
    assert commands.same_check("git commit -m 'a'", "git commit -m 'b'")
    assert not commands.same_check("mix test", "mix credo")
    assert not commands.same_check("mise run lint", "mise run test")


@pytest.mark.parametrize("command, expected", [
    ("mix test test/a_test.exs test/b_test.exs", "mix test"),
    ("mix test test/shop/cart_test.exs:12 --seed 0", "mix test --seed 0"),
    ("mix test --only integration", "mix test"),
    ("pytest tests/x.py::t -q", "pytest -q"),
    ("python -m pytest -k total -x tests/unit/", "python -m pytest -x"),
    ("uv run pytest tests -q", "uv run pytest tests -q"),
    ("go test ./pkg/foo/...", "go test ./..."),
    ("go test -run TestTotal -v ./cart", "go test -v ./..."),
    ("go test ./...", "go test ./..."),
    ("cargo test parses_empty -- --nocapture", "cargo test -- --nocapture"),
    ("npx vitest run src/cart.test.ts -t 'computes the total'", "npx vitest run"),
    ("npm test -- src/cart.test.ts", "npm test"),
    ("bundle exec rspec spec/models/cart_spec.rb:12", "bundle exec rspec"),
    ("flutter test test/widget_test.dart", "flutter test"),
    ("dart analyze lib/features/cart/", "dart analyze"),
    ("ruff check src/shop/cart.py", "ruff check"),
    ("python -m mypy src/shop", "python -m mypy src/shop"),
    ("npx tsc -p packages/cli/tsconfig.json --noEmit", "npx tsc -p packages/cli/tsconfig.json --noEmit"),
    ("npx markdownlint-cli2 docs/a.md docs/b.md", "npx markdownlint-cli2"),
    ("docker build -t app -f docker/Dockerfile .", "docker build -t app -f docker/Dockerfile ."),
    ("git push -u origin spike", "git push -u origin HEAD"),
])
def test_general(command, expected):
    assert commands.general(command) == expected


@pytest.mark.parametrize("command", [
    "python reproduce.py", "cd /testbed && python reproduce_issue.py", "python /tmp/check.py",
    "python -c 'import shop; print(shop.__version__)'", "python - <<'PY'\nprint(1)\nPY", "uv run python -c 'print(1)'",
    "node -e 'console.log(process.version)'", "node --input-type=module -e 'import x from \"y\"'",
    "go run /tmp/tmplcheck.go", "bash -c 'for f in *.md; do wc -l $f; done'", "for f in a b; do echo $f; done",
    "./repro.sh", "deno eval 'console.log(1)'", "bun -e 'console.log(1)'", "ruby -e 'puts 1'",
    "cat > /tmp/t.go << 'EOF'\npackage main\nEOF\ngo run /tmp/t.go",
])
def test_one_off_scripts_are_throwaway(command):
    assert commands.is_throwaway(command)


@pytest.mark.parametrize("command", [
    "python -m pytest -q", "pytest -q", "python manage.py test", "go run ./cmd/server", "node scripts/build.js",
    "bash scripts/test.sh", "bash -c 'npm test'", "npm test", "make test", "mix run priv/repo/seeds.exs", "git status",
])
def test_project_commands_are_not_throwaway(command):
    assert not commands.is_throwaway(command)


def test_a_script_the_agent_wrote_this_session_is_throwaway():
    created = frozenset({"/home/dev/shop/scripts/compare_totals.py", "notes/check.js"})
    assert commands.is_throwaway("python scripts/compare_totals.py", created)
    assert commands.is_throwaway("cd /home/dev/shop && python ./scripts/compare_totals.py --all", created)
    assert commands.is_throwaway("node notes/check.js", created)
    assert not commands.is_throwaway("python scripts/compare_totals.py")
    assert not commands.is_throwaway("python scripts/other.py", created)


@settings(max_examples=examples(300), deadline=None)
@given(st.text(alphabet=st.sampled_from(list("ab -|&;'\"$()<>\\\n=./:EOFgit commit push")), max_size=200))
def test_never_raises_on_any_shell_text(text):
    for fn in (commands.key, commands.kind, commands.family, commands.general, commands.clean):
        assert isinstance(fn(text), str)
    assert isinstance(commands.is_throwaway(text, frozenset({"a.py"})), bool)
    assert "\n" not in commands.key(text)
