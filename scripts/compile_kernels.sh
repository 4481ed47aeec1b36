#!/usr/bin/env bash
# Compile the numba kernels into the on-disk cache (scripts/compile_kernels.py says why), as a
# setup step: its time printed, its log in log/setup/kernels.log, the stamp written only after it
# succeeded. Called by `make setup`.
set -euo pipefail

# shellcheck source=scripts/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

stamp="$MAES_ROOT/install/.maes-kernels-ok"
rm -f "$stamp"
run_step "compile the simulator's and the navigator's kernels (numba; once per change of their sources)" \
    "read the error above; the kernels then compile on first use instead ('make setup' tries again)" \
    kernels env MAES_ENV_LAYERS="venv workspace" "$MAES_ROOT/scripts/with_env" python \
    "$MAES_ROOT/scripts/compile_kernels.py"
tail -n 1 "$MAES_LOG_DIR/kernels.log" >"$stamp"
