#!/usr/bin/env bash
# Build with colcon, in the pip environment:
#   build_ws.sh standins    the tf2_msgs / geographic_msgs / nav2_msgs stand-ins into .standins/install
#                           (copied from the user's build cache when built before with the same
#                           inputs: scripts/build_cache.py)
#   build_ws.sh workspace   the packages in src/ into install/ (--symlink-install)
#   build_ws.sh launch      composition_interfaces from $MAES_LAUNCH_SRC (the launch wheels'
#                           folder's src/, or its pinned upstream source) into .ros-launch/install
#
# Each writes its stamp (<install base>/.maes-build-ok) only after colcon succeeded. If the venv
# was rebuilt since the last build, the old build and install trees are removed first: their CMake
# caches point at the previous venv's files.
set -euo pipefail

# shellcheck source=scripts/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

what=${1:-}
# The interface packages' generated sources (one C / C++ file per message and type support)
# are compiled in batches (CMake's unity build; scripts/unity_build.cmake says which files stay
# alone): each batch parses the type support headers once instead of once per message.
# MAES_UNITY_BUILD=OFF builds them one file at a time, as a plain colcon build does.
unity=()
if [ "${MAES_UNITY_BUILD:-ON}" != OFF ]; then
    unity=(-DCMAKE_UNITY_BUILD=ON "-DCMAKE_PROJECT_INCLUDE=$MAES_ROOT/scripts/unity_build.cmake")
fi
case "$what" in
    standins)
        layers="venv"
        base_paths=("$MAES_ROOT/standins/tf2_msgs" "$MAES_ROOT/standins/geographic_msgs"
            "$MAES_ROOT/standins/nav2_msgs")
        build_base="$MAES_ROOT/.standins/build"
        install_base="$MAES_ROOT/.standins/install"
        log_base="$MAES_ROOT/.standins/log"
        # One prefix for both stand-ins; nothing edits them, so plain copies.
        extra=(--merge-install)
        cmake_args=(-DMAES_PYTHON_ONLY_INTERFACES=ON "${unity[@]}")
        name="build the tf2_msgs / geographic_msgs / nav2_msgs stand-ins (colcon)"
        ;;
    workspace)
        # Not the stand-ins: they are only run-time dependencies, and `make setup` may be
        # building them at the same time (scripts/env.sh layers both for a run).
        layers="venv"
        base_paths=("$MAES_ROOT/src")
        build_base="$MAES_ROOT/build"
        install_base="$MAES_ROOT/install"
        log_base="$MAES_ROOT/log"
        # Python packages are symlinked, so edits to their .py files need no rebuild.
        extra=(--symlink-install)
        cmake_args=(-DMAES_PYTHON_ONLY_INTERFACES=ON "${unity[@]}")
        name="build the workspace src/ (colcon)"
        ;;
    launch)
        layers="venv"
        base_paths=("${MAES_LAUNCH_SRC:-$MAES_LAUNCH_WHEELS/src}")
        build_base="$MAES_LAUNCH_PREFIX/build"
        install_base="$MAES_LAUNCH_PREFIX/install"
        log_base="$MAES_LAUNCH_PREFIX/log"
        extra=(--merge-install)
        cmake_args=()
        name="build composition_interfaces for launch_ros (colcon)"
        ;;
    *)
        echo "usage: $0 standins|workspace|launch" >&2
        exit 2
        ;;
esac

"$MAES_ROOT/scripts/check_system.sh"

# shellcheck source=scripts/env.sh
MAES_ENV_LAYERS=$layers source "$MAES_ROOT/scripts/env.sh"

stamp="$install_base/.maes-build-ok"
venv_id_file="$build_base/.maes-venv-id"
venv_id=$(head -n 1 "$VIRTUAL_ENV/.maes-venv-ok")
rm -f "$stamp"
if [ -f "$venv_id_file" ] && [ "$(cat "$venv_id_file")" != "$venv_id" ]; then
    say "the venv was rebuilt since the last build: removing $build_base and $install_base"
    rm -rf "$build_base" "$install_base"
fi
mkdir -p "$build_base"
echo "$venv_id" >"$venv_id_file"

# colcon's CMake builds run make. Called from `make -j2 setup`, the environment carries the outer
# make's jobserver flags, whose pipes are not passed to this script, so the inner make would fall
# back to one job ("jobserver unavailable: using -j1"). Give it its own job count, and no load
# limit (colcon's default -l would idle it while the workspace and the kernels build beside it).
export MAKEFLAGS="-j${MAES_BUILD_JOBS:-$(nproc)}"
unset MFLAGS MAKELEVEL

cd "$MAES_ROOT"
# The stand-ins' install tree, content-keyed, is shared by this user's clones
# (scripts/build_cache.py; MAES_BUILD_CACHE=off builds every time).
if [ "$what" = standins ]; then
    start=$SECONDS
    rc=0
    msg=$("$VIRTUAL_ENV/bin/python" "$MAES_ROOT/scripts/build_cache.py" restore standins \
        "$install_base" 2>&1) || rc=$?
    if [ "$rc" -eq 0 ]; then
        say "$name: copied from the build cache in $((SECONDS - start)) s (${msg#build cache: })"
        mkdir -p "$MAES_LOG_DIR"
        compile_bytecode "$VIRTUAL_ENV/bin/python" "$install_base" \
            >"$MAES_LOG_DIR/bytecode-$what.log" 2>&1
        echo "restored $(date -u +%Y-%m-%dT%H:%M:%SZ) from the build cache against: $venv_id" \
            >"$stamp"
        exit 0
    elif [ "$rc" -ne 3 ]; then
        say "the build cache could not be used, so the stand-ins are built: $msg"
    fi
fi
run_step "$name" \
    "read the compiler / colcon error above (colcon's own logs: $log_base/latest_build); after fixing it run 'make build'. If the error names a stale path, 'make clean' and try again" \
    "colcon-$what" \
    colcon --log-base "$log_base" build \
    --base-paths "${base_paths[@]}" \
    --build-base "$build_base" --install-base "$install_base" \
    "${extra[@]}" \
    --event-handlers console_cohesion+ status- \
    --cmake-args -DBUILD_TESTING=OFF "${cmake_args[@]}"

if [ "$what" = standins ]; then
    "$VIRTUAL_ENV/bin/python" "$MAES_ROOT/scripts/build_cache.py" store standins "$install_base" \
        >>"$MAES_LOG_DIR/colcon-$what.log" 2>&1 ||
        say "the stand-ins could not be stored in the build cache (the build is fine): see $MAES_LOG_DIR/colcon-$what.log"
fi
# bytecode (scripts/lib.sh: compile_bytecode); not kept in the build cache, which is stored above
compile_bytecode "$VIRTUAL_ENV/bin/python" "$install_base" >"$MAES_LOG_DIR/bytecode-$what.log" 2>&1
echo "built $(date -u +%Y-%m-%dT%H:%M:%SZ) against: $venv_id" >"$stamp"
