# shellcheck shell=bash
# Helpers shared by the setup scripts (sourced, not run).
#
# Every setup action runs through `run_step`, so a failure always says which step failed,
# where its log is and what to do, and the caller's stamp file is never written after a
# failed step (the scripts use `set -e`).

MAES_ROOT=${MAES_ROOT:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}
MAES_LOG_DIR=${MAES_LOG_DIR:-$MAES_ROOT/log/setup}
# Optional wheels folders beside the project on developer and CI machines (ROS 2 Jazzy's launch
# stack and `ros2` CLI; nav2_simple_commander): not on PyPI. A user's machine usually lacks them;
# setup then installs the same versions from upstream sources (scripts/setup_launch.sh,
# scripts/setup_commander.sh). The Makefile names the same defaults.
MAES_LAUNCH_WHEELS=${MAES_LAUNCH_WHEELS:-$(dirname "$MAES_ROOT")/shared/wheels/ros-jazzy-launch}
MAES_NAV2_COMMANDER_WHEELS=${MAES_NAV2_COMMANDER_WHEELS:-$(dirname "$MAES_ROOT")/shared/wheels/nav2-simple-commander}
# Where composition_interfaces (which launch_ros imports) is built: a prefix of its own.
MAES_LAUNCH_PREFIX=${MAES_LAUNCH_PREFIX:-$MAES_ROOT/.ros-launch}

say() {
    printf '[maes setup] %s\n' "$*"
}

die() {
    printf '[maes setup] ERROR: %s\n' "$*" >&2
    exit 1
}

# run_step NAME HINT LOGNAME CMD...
#   Runs CMD with its output in $MAES_LOG_DIR/LOGNAME.log. On failure prints the last lines
#   of the log, then the step name and HINT, and exits 1.
run_step() {
    local name=$1 hint=$2 logname=$3
    shift 3
    local log="$MAES_LOG_DIR/$logname.log"
    mkdir -p "$MAES_LOG_DIR"
    local start=$SECONDS
    say "$name ..."
    local rc=0
    # `|| rc=$?`, not `if ...; fi; rc=$?`: after an if without else, $? is 0.
    "$@" >"$log" 2>&1 || rc=$?
    if [ "$rc" -eq 0 ]; then
        say "$name: done in $((SECONDS - start)) s"
        return 0
    fi
    {
        echo "----- last 40 lines of $log -----"
        tail -n 40 "$log"
        echo "-----"
        echo "[maes setup] ERROR: step '$name' failed (exit code $rc)."
        echo "[maes setup] Full log: $log"
        echo "[maes setup] What to do: $hint"
    } >&2
    exit 1
}

# compile_bytecode PYTHON DIR...
#   Compiles every Python file under the DIRs to its __pycache__ (compileall, both cores;
#   folders that are symlinks are not followed, so the workspace's links into src/ are left
#   alone). Setup does this once for what it installs: where PYTHONDONTWRITEBYTECODE is set
#   (the development machine, many containers) Python never writes bytecode itself, and every
#   process would compile numpy, numba, rclpy and the rest again when it starts (1.5 s of CPU
#   each, measured). A file that is not a module of this Python (a template, another
#   version's code) fails to compile and is read as it is; that is no error.
compile_bytecode() {
    local py=$1
    shift
    "$py" -m compileall -q -j 0 "$@" ||
        echo "(files above that are not modules of this Python are left as they are)"
}
