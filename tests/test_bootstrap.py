"""`ace bootstrap` on real repositories: real files, a real git history, a real store.

The repository below is a small Python + TypeScript project with the usual files (pyproject,
Makefile, package.json with a pnpm lock, tsconfig with comments, a CI workflow with inline and
block `run:` steps, editorconfig, pre-commit, prettier, a README) and a history with repeated
fixes of one file, a reverted change and Conventional Commit messages.
"""

import json
import os
import subprocess

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from ace_engine import bootstrap as bs
from ace_engine.bootstrap import files as bf
from ace_engine.bootstrap import readers as br
from ace_engine.cli.app import cli
from ace_engine.core.project import identify
from ace_engine.learning import quality
from ace_engine.playbook.playbook import Playbook
from ace_engine.store.sqlite import SQLiteStore
from conftest import examples

FILES = {
    "pyproject.toml": """\
[project]
name = "widget"
requires-python = ">=3.11"
[project.optional-dependencies]
test = ["pytest"]
[project.scripts]
widget = "widget.cli:main"

[tool.pytest.ini_options]
testpaths = ["tests"]
addopts = "-ra --strict-markers"
markers = ["slow: takes more than a second", "network: needs the internet"]

[tool.ruff]
line-length = 110
target-version = "py311"
[tool.ruff.lint]
select = ["E", "F", "I", "UP"]
[tool.ruff.format]
quote-style = "double"

[tool.mypy]
strict = true

[tool.coverage.report]
fail_under = 90
""",
    "Makefile": """\
VENV := .venv
PYTHON ?= python3
.PHONY: test lint fmt install check

test:
\t@pytest -q -x

lint:
\truff check . && \\
\t  mypy src

fmt:
\truff format .

install:
\t$(PYTHON) -m pip install -e '.[test]'

check: lint test
""",
    "package.json": json.dumps({
        "name": "widget-ui", "type": "module", "engines": {"node": ">=20"},
        "scripts": {"test": "vitest run", "build": "tsc -p .", "lint": "eslint .", "typecheck": "tsc --noEmit",
                    "postinstall": "node scripts/setup.js", "release": "changeset publish"},
    }, indent=2),
    "pnpm-lock.yaml": "lockfileVersion: '9.0'\n",
    "tsconfig.json": """\
{
  // strictness matters here
  "compilerOptions": {
    "strict": true,
    "noUncheckedIndexedAccess": true, /* index access may be undefined */
    "target": "ES2022",
    "paths": { "@/*": ["src/*"], },
  },
}
""",
    ".github/workflows/ci.yml": """\
name: CI
on: [push]
jobs:
  test:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@v4
      - name: Tests
        run: make test
      - run: pnpm test   # the UI too
  lint:
    runs-on: ubuntu-latest
    steps:
      - name: Lint and types
        run: |
          ruff check .
          ruff format --check .
          mypy src
      - run: >
          echo done
""",
    ".editorconfig": "root = true\n\n[*]\nend_of_line = lf\n\n[*.py]\nindent_style = space\nindent_size = 4\n\n"
                     "[*.{ts,json}]\nindent_style = space\nindent_size = 2\n",
    ".pre-commit-config.yaml": "repos:\n  - repo: https://github.com/astral-sh/ruff-pre-commit\n    rev: v0.6.0\n"
                               "    hooks:\n      - id: ruff\n      - id: ruff-format\n",
    ".prettierrc": '{"semi": false, "singleQuote": true, "printWidth": 100}\n',
    "README.md": """\
# widget

## Development

```bash
pip install -e '.[test]'
make test
```

Run one suite:

```console
$ pytest -q tests/unit
3 passed
```

```bash
git clone https://github.com/<you>/widget
```
""",
    "src/widget/parser.py": "def parse(text):\n    return text.split()\n",
    "src/widget/cli.py": "def main():\n    pass\n",
}


REVERTED: dict[str, str] = {}  # repository → the short sha of its reverted commit


def git(root, *args, date="2024-01-01T12:00:00"):
    env = {**os.environ, "GIT_AUTHOR_DATE": date, "GIT_COMMITTER_DATE": date}
    return subprocess.run(["git", "-C", str(root), "-c", "user.name=Dev", "-c", "user.email=dev@example.invalid",
                           "-c", "commit.gpgsign=false", *args], check=True, capture_output=True, text=True, env=env)


def commit(root, message, files: dict[str, str], day: int):
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", message, date=f"2024-01-{day:02d}T12:00:00")
    return git(root, "rev-parse", "--short", "HEAD").stdout.strip()


@pytest.fixture
def repo(tmp_path):
    root = tmp_path / "widget"
    root.mkdir()
    subprocess.run(["git", "init", "-q", "-b", "main", str(root)], check=True)
    commit(root, "feat: initial widget", FILES, 1)
    parser = "src/widget/parser.py"
    commit(root, "fix(parser): handle empty input", {parser: "def parse(text):\n    return (text or '').split()\n"}, 2)
    commit(root, "feat(cli): add --version", {"src/widget/cli.py": "def main():\n    print('1.0')\n"}, 3)
    commit(root, "fix(parser): strip tabs", {parser: "def parse(text):\n    return (text or '').replace('\\t', ' ').split()\n"}, 4)
    commit(root, "docs: usage", {"docs/usage.md": "# usage\n"}, 5)
    pooled = commit(root, "feat: add connection pooling", {"src/widget/pool.py": "POOL = []\n"}, 6)
    git(root, "revert", "--no-edit", "HEAD", date="2024-01-07T12:00:00")
    commit(root, "fix(parser): keep unicode words", {parser: "def parse(text):\n    return (text or '').split()  # ok\n"}, 8)
    commit(root, "chore: bump deps", {"pnpm-lock.yaml": "lockfileVersion: '9.1'\n"}, 9)
    commit(root, "test: parser cases", {"tests/test_parser.py": "def test_x():\n    assert True\n"}, 10)
    commit(root, "fix: typo in cli help", {"src/widget/cli.py": "def main():\n    print('1.0.1')\n"}, 11)
    REVERTED[str(root)] = pooled
    return root


def contents(result) -> list[str]:
    return [c["content"] for c in result["candidates"]]


def find(items: list[str], start: str) -> str:
    matches = [c for c in items if c.startswith(start)]
    assert len(matches) == 1, (start, items)
    return matches[0]


# -- what is found -------------------------------------------------------------------------------------

def test_commands_are_found_merged_across_files_and_name_their_sources(repo):
    found = contents(bs.collect(str(repo), "hybrid", "medium"))
    test = find(found, "Run the tests with `make test`")
    # The Makefile target, what it runs, and the other places that run it: CI and the README.
    assert "Makefile target `test` runs `pytest -q -x`" in test
    assert ".github/workflows/ci.yml job `test`" in test and "README.md, “Development”" in test
    lint = find(found, "Lint with `make lint`")
    assert "runs `ruff check . && mypy src`" in lint  # the `\` continuation is joined
    # CI runs `ruff check .` and `mypy src` itself: they are what `make lint` does, so no bullets of their own.
    assert "also in .github/workflows/ci.yml job `lint`" in lint
    assert not any(c.startswith(("Lint with `ruff check .`", "Type-check with `mypy src`")) for c in found)
    assert "Run the tests with `make check` (Makefile target `check` runs the `lint` and `test` targets)." in found
    # Make variables set in the file are substituted.
    assert "Install dependencies with `make install` (Makefile target `install` runs `python3 -m pip install -e '.[test]'`)." in found
    assert "configured in pyproject.toml [tool.pytest.ini_options]: tests in `tests`, always with `-ra --strict-markers`" in test
    assert "Format code with `make fmt` (Makefile target `fmt` runs `ruff format .`" in " ".join(found)
    # package.json scripts, run with the manager whose lock file is committed.
    assert find(found, "Run the tests with `pnpm test`").startswith(
        "Run the tests with `pnpm test` (package.json script `test` runs `vitest run`")
    assert any(c.startswith("Type-check with `pnpm run typecheck`") for c in found)
    assert any(c.startswith("Build with `pnpm run build` (package.json script `build` runs `tsc -p .`)") for c in found)
    assert not any("postinstall" in c or "changeset" in c for c in found)  # hooks and "other" scripts: deep only
    # CI lines that no local file wraps get their own bullet, naming the workflow job.
    assert find(found, "Format code with `ruff format --check .`") == \
        "Format code with `ruff format --check .` (run by CI in .github/workflows/ci.yml job `lint`)."
    assert find(found, "Run the tests with `pytest -q tests/unit`").endswith("(documented in README.md, “Development”).")
    assert not any("echo done" in c or "git clone" in c for c in found)
    # The dev install from the README joins the Makefile's `install` target? No: different commands.
    assert any(c.startswith("Install dependencies with `pip install -e '.[test]'`") for c in found)


def test_conventions_come_from_the_configuration(repo):
    found = contents(bs.collect(str(repo), "local-files", "medium"))
    ruff = find(found, "Ruff is the Python linter and formatter")
    assert "line-length 110" in ruff and "target py311" in ruff and "rules E, F, I, UP" in ruff and "`ruff format .`" in ruff
    assert find(found, "Types are checked with mypy in strict mode").endswith("(pyproject.toml [tool.mypy]); run `mypy .`.")
    assert any("stay at or above 90%" in c for c in found)
    ts = find(found, "TypeScript (tsconfig.json):")
    assert "`strict` is on" in ts and "`noUncheckedIndexedAccess`" in ts and "`@/*` → `src/*`" in ts and "target `ES2022`" in ts
    assert find(found, "Indentation and line endings (.editorconfig)") == (
        "Indentation and line endings (.editorconfig): `*`: LF line endings; `*.py`: 4 spaces; `*.{ts,json}`: 2 spaces.")
    assert "`ruff`, `ruff-format`" in find(found, "pre-commit hooks run")
    assert "no semicolons, single quotes, printWidth 100" in find(found, "Prettier formats the code")
    assert find(found, "Install JavaScript dependencies with `pnpm install` (pnpm-lock.yaml is committed)")
    assert find(found, "package.json sets `\"type\": \"module\"`")
    assert find(found, "Node.js >=20 is required")
    assert find(found, "Pytest markers (pyproject.toml [tool.pytest.ini_options]): `slow` (takes more than a second), "
                       "`network` (needs the internet)")
    assert find(found, "Console entry points (pyproject.toml [project.scripts]): `widget` → `widget.cli:main`.")
    assert not any("Conventional Commits" in c for c in found)  # git history is not a local file


def test_git_history_finds_fix_hot_spots_reverts_and_the_commit_style(repo):
    result = bs.collect(str(repo), "git-history", "light")
    found = contents(result)
    hot = find(found, "`src/widget/parser.py` needed fixes in 3 of all 11 commits")
    assert "fix(parser): keep unicode words" in hot
    assert not any(c.startswith("`pnpm-lock.yaml`") or c.startswith("`src/widget/cli.py`") for c in found)  # 1 fix only
    revert = find(found, "The change “feat: add connection pooling”")
    assert f"(commit {REVERTED[str(repo)]}) was reverted by commit " in revert and "`src/widget/pool.py`" in revert
    assert find(found, "Commit messages follow Conventional Commits")
    assert all(c["section"] in ("troubleshooting_and_pitfalls", "strategies_and_hard_rules") for c in result["candidates"])


def test_every_bullet_is_specific_and_names_its_source(repo):
    result = bs.collect(str(repo), "hybrid", "deep")
    assert len(result["candidates"]) >= 20
    sources = ("Makefile", "package.json", "pyproject.toml", "tsconfig.json", ".editorconfig", ".pre-commit-config.yaml",
               ".prettierrc", "README.md", ".github/workflows/ci.yml", "pnpm-lock.yaml", "commits", "by commit ")
    for cand in result["candidates"]:
        assert any(s in cand["content"] for s in sources), cand["content"]
        assert cand["evidence"] and cand["key"]
        # The same quality filter that guards learned lessons accepts every bootstrapped one.
        assert quality.check(cand["content"]) is None, (cand["content"], quality.check(cand["content"]))
    assert len({c["key"] for c in result["candidates"]}) == len(result["candidates"])


def test_thoroughness_caps_the_number_of_bullets(repo):
    light = bs.collect(str(repo), "hybrid", "light")
    deep = bs.collect(str(repo), "hybrid", "deep")
    assert len(light["candidates"]) == bs.LEVELS["light"]["max_bullets"] and light["dropped"] > 0
    assert len(deep["candidates"]) > len(light["candidates"])
    # Commands first, and the test command before all others.
    assert light["candidates"][0]["content"].startswith("Run the tests with")


# -- seeding the playbook -------------------------------------------------------------------------------

def test_seeding_is_idempotent_updates_changed_facts_and_respects_removals(ace_home, repo):
    project = identify(str(repo))
    with SQLiteStore() as store:
        playbook = Playbook(store, project)
        first = bs.bootstrap(playbook, str(repo), mode="hybrid", thoroughness="medium")
        assert first["created"] == len(first["bullets"]) >= 15 and first["updated"] == 0
        bullets = playbook.bullets(include_global=False)
        assert len(bullets) == first["created"]
        make_test = next(b for b in bullets if b["content"].startswith("Run the tests with `make test`"))
        assert make_test["provenance"]["source"] == "bootstrap"
        assert make_test["provenance"]["files"] == ["Makefile", ".github/workflows/ci.yml", "README.md", "pyproject.toml"]
        assert make_test["provenance"]["bootstrap_key"] == "cmd:make test"
        assert "python-testing" in make_test["domains"] or "build" in make_test["domains"]
        assert store.changes(make_test["id"])[0]["source"] == "bootstrap"

        again = bs.bootstrap(playbook, str(repo), mode="hybrid", thoroughness="medium")
        assert (again["created"], again["updated"], again["unchanged"]) == (0, 0, first["created"])
        assert len(playbook.bullets(include_global=False)) == first["created"]

        # The repository changes: the bullet about it is updated in place, not duplicated.
        makefile = (repo / "Makefile").read_text().replace("@pytest -q -x", "pytest -q -x -n auto")
        (repo / "Makefile").write_text(makefile)
        # The user removes a bootstrapped bullet: bootstrap does not bring it back.
        prettier = next(b for b in bullets if b["content"].startswith("Prettier formats the code"))
        playbook.remove(prettier["id"], reason="we dropped prettier")
        third = bs.bootstrap(playbook, str(repo), mode="hybrid", thoroughness="medium")
        assert (third["created"], third["updated"]) == (0, 1)
        updated = playbook.get(make_test["id"])
        assert "runs `pytest -q -x -n auto`" in updated["content"] and updated["status"] == "active"
        assert playbook.get(prettier["id"])["status"] == "archived"
        assert len(playbook.bullets(include_global=False)) == first["created"] - 1


def test_dry_run_writes_nothing(ace_home, repo):
    project = identify(str(repo))
    with SQLiteStore() as store:
        playbook = Playbook(store, project)
        result = bs.bootstrap(playbook, str(repo), mode="local-files", thoroughness="light", dry_run=True)
        assert result["dry_run"] and result["created"] > 0 and all(b["id"] is None for b in result["bullets"])
        assert playbook.bullets(include_global=False) == []


def test_a_folder_without_git_or_build_files(ace_home, tmp_path):
    empty = tmp_path / "plain"
    empty.mkdir()
    (empty / "pyproject.toml").write_text("[project\nname = broken")
    result = bs.collect(str(empty), "hybrid", "medium")
    assert result["candidates"] == []
    assert {p["file"] for p in result["problems"]} == {"pyproject.toml", ".git"}
    assert "invalid TOML" in next(p["problem"] for p in result["problems"] if p["file"] == "pyproject.toml")
    with pytest.raises(bs.BootstrapError, match="unknown mode 'all'; use one of: local-files, git-history, docs, hybrid"):
        bs.collect(str(empty), "all", "medium")
    with pytest.raises(bs.BootstrapError, match="is not a directory"):
        bs.collect(str(empty / "missing"), "hybrid", "medium")


# -- the command ---------------------------------------------------------------------------------------

def test_ace_bootstrap_command(ace_home, repo):
    runner = CliRunner()
    result = runner.invoke(cli, ["bootstrap", "--project", str(repo), "--mode", "local-files", "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data["created"] > 5 and data["mode"] == "local-files" and data["project"] == "widget"
    assert {s["step"] for s in data["steps"]} >= {"pyproject", "make", "ci", "conventions"}

    human = runner.invoke(cli, ["bootstrap", "--project", str(repo), "--mode", "local-files"])
    assert human.exit_code == 0, human.output
    assert "Added 0 new bullets, updated 0" in human.output and "already there" in human.output
    assert "exists" in human.output

    dry = runner.invoke(cli, ["bootstrap", "--project", str(repo), "--mode", "git-history", "--dry-run"])
    assert dry.exit_code == 0 and "Would add 3 new bullets" in dry.output and "Run without --dry-run" in dry.output

    bad = runner.invoke(cli, ["bootstrap", "--project", str(repo), "--thoroughness", "extreme"])
    assert bad.exit_code == 2 and "'extreme' is not one of 'light', 'medium', 'deep'" in bad.output


# -- the parsers ---------------------------------------------------------------------------------------

def test_yaml_run_steps_without_a_yaml_library():
    text = """\
jobs:
  build:
    steps:
      - run: npm ci
      - run: "npm run build -- --prod"
      - name: many
        run: |
          pytest -q \\
            --maxfail=1
          # a comment
          ruff check .
      - run: >-
          cargo test
          --all
  other-job:
    steps:
      - run: make lint  # trailing comment
"""
    assert br.yaml_commands(text) == [
        ("build", "npm ci"), ("build", "npm run build -- --prod"), ("build", "pytest -q --maxfail=1"),
        ("build", "ruff check ."), ("build", "cargo test --all"), ("other-job", "make lint"),
    ]
    gitlab = "test:\n  script:\n    - pip install -e .\n    - pytest -q\nlint:\n  script: ruff check .\n"
    assert br.yaml_commands(gitlab, ("script",)) == [("test", "pip install -e ."), ("test", "pytest -q"), ("lint", "ruff check .")]


def test_makefile_parsing():
    text = ("GO := go\nFLAGS ?= -race # fast enough\nSHA = $(shell git rev-parse HEAD)\nall: build test\n.PHONY: all\n"
            "build:\n\t$(GO) build ./...\n%.o: %.c\n\tcc $<\ntest unit:\n\t-$(GO) test ${FLAGS} ./...\n\t@echo $(SHA)\n")
    assert bf.parse_makefile(text) == {"all": (["build", "test"], []), "build": ([], ["go build ./..."]),
                                       "test": ([], ["go test -race ./...", "echo $(SHA)"]),
                                       "unit": ([], ["go test -race ./...", "echo $(SHA)"])}


@settings(max_examples=examples(50), deadline=None)
@given(st.lists(st.from_regex(r"[a-z][a-z0-9 ._=/-]{0,40}[a-z0-9]", fullmatch=True), min_size=1, max_size=6))
def test_block_run_steps_round_trip(lines):
    text = "jobs:\n  j:\n    steps:\n      - run: |\n" + "".join(f"          {line}\n" for line in lines)
    assert br.yaml_commands(text) == [("j", line.strip()) for line in lines]


def test_json_with_comments():
    text = '{"a": "http://x//y", /* c */ "b": [1, 2,], // tail\n "c": "/*not*/"}'
    assert json.loads(br.strip_json_comments(text)) == {"a": "http://x//y", "b": [1, 2], "c": "/*not*/"}


def test_ini_configs_task_runners_and_other_ci(tmp_path):
    """A project configured the older way (setup.cfg, tox.ini, pytest.ini) with task runners
    (poe, hatch, just, nox), uv and GitLab CI."""
    root = tmp_path / "legacy"
    files = {
        "setup.cfg": "[flake8]\nmax-line-length = 99\nextend-ignore = E203, W503\n\n[mypy]\ndisallow_untyped_defs = True\n",
        "tox.ini": "[tox]\nenvlist = py311, lint\n\n[testenv]\ncommands = pytest {posargs}\n\n"
                   "[testenv:lint]\ncommands = ruff check src\n",
        "pytest.ini": "[pytest]\naddopts = -x\nmarkers =\n    db: needs the database\n",
        "pyproject.toml": '[tool.poe.tasks]\ntest = "pytest -q"\nserve = {cmd = "uvicorn app:app --reload"}\n'
                          '[tool.hatch.envs.lint.scripts]\ncheck = ["ruff check .", "mypy src"]\n',
        "uv.lock": "version = 1\n",
        "justfile": "# recipes\ntest *args:\n    pytest {{args}}\n\nbuild:\n    uv build\n",
        "noxfile.py": "import nox\n\n@nox.session(python=['3.11'])\ndef tests(session):\n    session.run('pytest')\n",
        ".gitlab-ci.yml": "stages: [test]\nunit:\n  stage: test\n  script:\n    - uv sync\n    - uv run pytest -q --cov\n",
    }
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    found = contents(bs.collect(str(root), "local-files", "deep"))
    assert find(found, "flake8 lints the Python code (max line length 99; ignoring E203, W503) — setup.cfg [flake8]")
    assert find(found, "Types are checked with mypy with `disallow_untyped_defs` (setup.cfg [mypy])")
    assert find(found, "Run the tests with `tox -e py311` (tox.ini env `py311` runs `pytest {posargs}`")
    assert find(found, "Lint with `tox -e lint` (tox.ini env `lint` runs `ruff check src`)")
    assert find(found, "Pytest markers (pytest.ini [pytest]): `db` (needs the database)")
    assert find(found, "Run the tests with `poe test` (pyproject.toml [tool.poe.tasks] `test` runs `pytest -q`")
    assert find(found, "Start the app locally with `poe serve`")
    assert find(found, "Lint with `hatch run lint:check` (pyproject.toml [tool.hatch.envs.lint.scripts] `check` runs "
                       "`ruff check . && mypy src`)")
    # pytest.ini's options join the command that runs pytest (the first found: a recipe outranks tox).
    assert find(found, "Run the tests with `just test`") == (
        "Run the tests with `just test` (justfile recipe `test` runs `pytest {{args}}`; configured in pytest.ini [pytest]: "
        "always with `-x`).")
    assert find(found, "Build with `just build`")
    assert find(found, "Run the tests with `nox -s tests`")
    assert find(found, "Run the tests with `uv run pytest -q --cov` (run by CI in .gitlab-ci.yml job `unit`)")
    assert find(found, "Python dependencies are managed with uv (uv.lock is committed)")
