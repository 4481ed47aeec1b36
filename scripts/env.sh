# shellcheck shell=bash
# Set up the pip environment in the current bash shell:   source scripts/env.sh
# (or run one command in it:                             scripts/with_env CMD ARGS...)
#
# Layers, each only if it was built by `make setup`:
#   venv      .venv: Python 3.11 with the ROS 2 Jazzy wheels; the venv is the ROS prefix
#   standins  .standins/install: the tf2_msgs / nav2_msgs interface stand-ins
#   launch    .ros-launch/install: composition_interfaces for launch_ros (built only where the
#             launch wheels exist; see scripts/setup_launch.sh)
#   workspace install/: this workspace, built by colcon with --symlink-install
# MAES_ENV_LAYERS selects layers (default "venv standins launch workspace"; the build scripts
# use fewer).
#
# MAES_NAV2_COMMANDER_ABSENT=1 is exported only where setup could install nav2_simple_commander
# neither from its wheel nor from its pinned source (no network; .ros-launch/.maes-commander-absent
# says why): the tests that drive it skip then, and only then.
#
# ROS variables inherited from the calling shell (e.g. a sourced /opt/ros/jazzy) are replaced,
# not extended: mixing apt ROS with the PyPI wheels loads two different builds of the same
# libraries.

_maes_env_main() {
    local root venv layers libs d nounset launch_prefix
    root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
    venv=${MAES_VENV:-$root/.venv}
    layers=${MAES_ENV_LAYERS:-venv standins launch workspace}
    launch_prefix=${MAES_LAUNCH_PREFIX:-$root/.ros-launch}

    if [ ! -f "$venv/.maes-venv-ok" ]; then
        echo "scripts/env.sh: no complete pip environment at $venv; run 'make setup' first" >&2
        return 1
    fi

    export MAES_ROOT=$root
    export VIRTUAL_ENV=$venv
    case ":$PATH:" in
        *":$venv/bin:"*) ;;
        *) export PATH="$venv/bin:$PATH" ;;
    esac
    export AMENT_PREFIX_PATH=$venv
    export CMAKE_PREFIX_PATH=$venv
    unset COLCON_PREFIX_PATH PYTHONPATH ROS_DISTRO ROS_VERSION ROS_PYTHON_VERSION

    # What the ros-wheels-bootstrapper's .pth hook would do: put the wheels' shared libraries on
    # LD_LIBRARY_PATH. Doing it here and setting its guard variable stops it from re-executing
    # every Python process once more (it would work, but doubles start-up time).
    libs="$venv/lib"
    for d in "$venv"/lib/python3.11/site-packages/ros_*.libs; do
        [ -d "$d" ] && libs="$libs:$d"
    done
    export LD_LIBRARY_PATH="$libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
    export _ROS_WHEELS_BOOTSTRAP_COMPLETE=1

    # colcon's setup scripts read unset variables: relax `set -u` of a strict caller meanwhile.
    nounset=0
    case $- in *u*) nounset=1; set +u ;; esac
    case " $layers " in
        *" standins "*)
            if [ -f "$root/.standins/install/setup.bash" ]; then
                # shellcheck disable=SC1091
                source "$root/.standins/install/setup.bash"
            fi ;;
    esac
    case " $layers " in
        *" launch "*)
            if [ -f "$launch_prefix/install/setup.bash" ]; then
                # shellcheck disable=SC1091
                source "$launch_prefix/install/setup.bash"
            fi ;;
    esac
    case " $layers " in
        *" workspace "*)
            if [ -f "$root/install/setup.bash" ]; then
                # shellcheck disable=SC1091
                source "$root/install/setup.bash"
                # Console scripts install where `ros2 run` finds them (lib/<package>); the
                # command-line tools the docs use (maes-batch, maes_run) go on PATH too.
                d="$root/install/maes_bringup/lib/maes_bringup"
                case ":$PATH:" in *":$d:"*) ;; *) export PATH="$d:$PATH" ;; esac
            fi ;;
    esac
    [ "$nounset" = 1 ] && set -u
    if [ -f "$launch_prefix/.maes-commander-absent" ]; then
        export MAES_NAV2_COMMANDER_ABSENT=1
    else
        unset MAES_NAV2_COMMANDER_ABSENT
    fi
    # Lets tests tell "inside the project's environment" (ROS must work) from a bare run.
    export MAES_ROS_ENV=1
}

# The status of the last command is the status of `source scripts/env.sh`.
if _maes_env_main; then
    unset -f _maes_env_main
else
    unset -f _maes_env_main
    false
fi
