#!/usr/bin/env bash
# Regenerate requirements/constraints.txt: install requirements/venv.txt and launch.txt (the launch
# wheels' PyPI dependencies) without constraints into a throw-away venv (newest versions that
# resolve) and pin what was installed. Review the diff,
# then `make setup` rebuilds .venv from the new pins.
set -euo pipefail

# shellcheck source=scripts/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
PYTHON=${PYTHON:-python3.11}

"$MAES_ROOT/scripts/check_system.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
run_step "create a throw-away venv" "see the error above" constraints-venv \
    "$PYTHON" -m venv "$tmp/venv"
run_step "resolve requirements/venv.txt and launch.txt" \
    "check that PyPI is reachable and venv.txt / launch.txt resolve" \
    constraints-pip "$tmp/venv/bin/python" -m pip install --progress-bar off \
    -r "$MAES_ROOT/requirements/venv.txt" -r "$MAES_ROOT/requirements/launch.txt"
"$tmp/venv/bin/python" "$MAES_ROOT/scripts/freeze_constraints.py" \
    "$MAES_ROOT/requirements/constraints.txt"
