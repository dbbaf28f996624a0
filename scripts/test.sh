#!/usr/bin/env bash
# Install ace-engine with its test dependencies into .venv and run the whole suite, including the
# end-to-end tests against the real Claude Code CLI (installed from npm on first use).
# Extra arguments go to pytest, e.g. `bash scripts/test.sh -k install`.
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON="${PYTHON:-python3}"
if [ ! -x .venv/bin/python ]; then
  "$PYTHON" -m venv .venv
fi
.venv/bin/python -m pip install --quiet --disable-pip-version-check -e '.[test]'
set +e
.venv/bin/python -m pytest "$@"
code=$?
set -e
if [ "$code" -eq 5 ]; then
  echo "pytest collected no tests: treating that as a failure" >&2
  exit 1
fi
exit "$code"
