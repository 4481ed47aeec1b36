#!/usr/bin/env bash
# Create the pip environment's venv from scratch: Python 3.11, the pinned ROS 2 Jazzy wheels,
# colcon, CMake and the Python libraries; rewrite the wheels' CMake paths; check that it works.
#
# The stamp file $MAES_VENV/.maes-venv-ok is written last, only after every step succeeded, and
# removed first: a venv without it (interrupted or failed setup) is discarded and built anew, so
# a half-built venv is never taken for a good one. Called by `make setup`; rarely run by hand.
#
# Environment: PYTHON (python3.11), MAES_VENV (<repo>/.venv),
# MAES_REQUIREMENTS (requirements/venv.txt), MAES_CONSTRAINTS (requirements/constraints.txt).
set -euo pipefail

# shellcheck source=scripts/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

PYTHON=${PYTHON:-python3.11}
VENV=${MAES_VENV:-$MAES_ROOT/.venv}
REQUIREMENTS=${MAES_REQUIREMENTS:-$MAES_ROOT/requirements/venv.txt}
CONSTRAINTS=${MAES_CONSTRAINTS:-$MAES_ROOT/requirements/constraints.txt}
STAMP="$VENV/.maes-venv-ok"

"$MAES_ROOT/scripts/check_system.sh"

rm -f "$STAMP"
if [ -e "$VENV" ]; then
    # Only ever delete something that is a venv (or an empty directory).
    if [ -f "$VENV/pyvenv.cfg" ] || [ -z "$(ls -A "$VENV" 2>/dev/null)" ]; then
        say "discarding the incomplete or outdated venv at $VENV"
        rm -rf "$VENV"
    else
        die "$VENV exists but is not a venv; move it away, then run 'make setup' again"
    fi
fi

run_step "create the venv at $VENV" \
    "make sure '$PYTHON -m venv' works (Debian/Ubuntu: apt-get install python3.11-venv) and the disk is not full, then run 'make setup' again" \
    venv "$PYTHON" -m venv "$VENV"

# uv (pinned in the constraints, itself from PyPI) installs the ~240 packages in about 10 s where
# pip takes 60-70 s on a 2-core machine; it reads no pip.conf, so the pip variables that point at
# another index or at local wheels are passed on. If uv cannot be had or fails, pip installs them.
install_packages() {
    local py=$1
    if "$py" -m pip install --progress-bar off --retries 5 -c "$CONSTRAINTS" uv; then
        local -a uv_env=()
        [ -n "${PIP_INDEX_URL:-}" ] && uv_env+=("UV_DEFAULT_INDEX=$PIP_INDEX_URL")
        [ -n "${PIP_EXTRA_INDEX_URL:-}" ] && uv_env+=("UV_INDEX=$PIP_EXTRA_INDEX_URL")
        [ -n "${PIP_FIND_LINKS:-}" ] && uv_env+=("UV_FIND_LINKS=$PIP_FIND_LINKS")
        [ -n "${PIP_NO_INDEX:-}" ] && uv_env+=("UV_NO_INDEX=1")
        # Copies, not hard links into uv's cache: setup rewrites some installed files in place.
        if env "${uv_env[@]}" "$(dirname "$py")/uv" pip install --python "$py" --link-mode copy \
            -r "$REQUIREMENTS" -c "$CONSTRAINTS"; then
            return 0
        fi
        echo "uv failed (above); pip installs the packages instead"
    else
        echo "uv could not be installed (above); pip installs the packages instead"
    fi
    "$py" -m pip install --progress-bar off --retries 5 -r "$REQUIREMENTS" -c "$CONSTRAINTS"
}

run_step "download and install the Python packages (ROS 2 Jazzy wheels, colcon, CMake, numpy, ...)" \
    "read the installer's error above: for a network error check that PyPI is reachable and run 'make setup' again (the partial venv is discarded automatically); for a resolver error fix $REQUIREMENTS or $CONSTRAINTS" \
    pip install_packages "$VENV/bin/python"

run_step "rewrite the ROS wheels' CMake files to this venv's paths" \
    "check that numpy and the Python headers are installed, then run 'make setup' again" \
    patch_cmake "$VENV/bin/python" "$MAES_ROOT/scripts/patch_ros_cmake.py" "$VENV"

run_step "compile the packages' Python files to bytecode (once, not at every start)" \
    "check that the disk is not full, then run 'make setup' again" \
    bytecode compile_bytecode "$VENV/bin/python" "$VENV/lib"

# A real rclpy init/shutdown proves the RMW (Fast DDS) libraries load through the
# ros-wheels-bootstrapper re-exec, not just that the Python files are present.
# shellcheck disable=SC2016  # $1 expands in the inner bash
run_step "check the venv (imports, rclpy init, cmake, colcon, ruff)" \
    "a package installed but does not work: read the error above; 'make distclean setup' rebuilds from scratch" \
    verify bash -c '
        set -e
        "$1/bin/python" -c "
import numpy, numba, yaml, cv2, matplotlib, pytest, hypothesis, colcon_core
import rclpy
rclpy.init()
rclpy.shutdown()
from geometry_msgs.msg import PoseStamped
from sensor_msgs.msg import LaserScan
from nav_msgs.msg import OccupancyGrid
from visualization_msgs.msg import MarkerArray
from std_srvs.srv import Trigger
from rosgraph_msgs.msg import Clock
print(\"numpy\", numpy.__version__, \"numba\", numba.__version__)
"
        "$1/bin/cmake" --version
        "$1/bin/colcon" --help >/dev/null
        "$1/bin/ruff" --version
    ' verify "$VENV"

# colcon must never crawl into the venv (its share/ holds ~100 package.xml files).
touch "$VENV/COLCON_IGNORE"
{
    echo "venv completed $(date -u +%Y-%m-%dT%H:%M:%SZ)"
    "$VENV/bin/python" --version
    grep -E '^(numpy|numba) ' "$MAES_LOG_DIR/verify.log" || true
} >"$STAMP"
say "venv ready: $VENV"
