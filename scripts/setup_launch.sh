#!/usr/bin/env bash
# Add ROS 2 Jazzy's launch stack and `ros2` command line to the pip environment, where the wheels
# folder $MAES_LAUNCH_WHEELS (default ../shared/wheels/ros-jazzy-launch, beside the repository)
# exists: launch, launch_ros, launch_testing, ros2launch, ros2cli and its verbs are pure Python
# but not on PyPI. Installs those wheels into .venv (--no-deps; their PyPI dependencies come from
# requirements/launch.txt under the usual constraints), then builds composition_interfaces (which
# launch_ros imports) from the folder's src/ into .ros-launch/install. After it, with
# `source scripts/env.sh`: ros2 launch / run / topic / node / service / action.
#
# Where the folder does not exist (a user's fresh machine) nothing is installed: it says so once
# and writes .ros-launch/.maes-launch-absent, so setup goes on and does not repeat the message;
# the launch tests then skip, naming the folder. The Makefile picks the stamp to make by whether
# the folder holds wheels, so a folder that appears later is installed by the next `make setup`.
#
# Stamps: .ros-launch/install/.maes-launch-ok (installed) or .ros-launch/.maes-launch-absent,
# each written last and only after every step succeeded.
set -euo pipefail

# shellcheck source=scripts/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

VENV=${MAES_VENV:-$MAES_ROOT/.venv}
CONSTRAINTS=${MAES_CONSTRAINTS:-$MAES_ROOT/requirements/constraints.txt}
LAUNCH_REQUIREMENTS=$MAES_ROOT/requirements/launch.txt
PRESENT_STAMP="$MAES_LAUNCH_PREFIX/install/.maes-launch-ok"
ABSENT_STAMP="$MAES_LAUNCH_PREFIX/.maes-launch-absent"

[ -f "$VENV/.maes-venv-ok" ] || die "no complete venv at $VENV; run 'make setup'"
rm -f "$PRESENT_STAMP" "$ABSENT_STAMP"

shopt -s nullglob
wheels=("$MAES_LAUNCH_WHEELS"/*.whl)
shopt -u nullglob
if [ ${#wheels[@]} -eq 0 ]; then
    say "no ROS 2 launch wheels at $MAES_LAUNCH_WHEELS: 'ros2 launch' and the 'ros2' CLI are" \
        "not installed (everything else works; the launch tests skip). They come with the" \
        "Docker image (docker/) or an apt install of ROS 2 Jazzy."
    mkdir -p "$MAES_LAUNCH_PREFIX"
    echo "no wheels at $MAES_LAUNCH_WHEELS ($(date -u +%Y-%m-%dT%H:%M:%SZ))" >"$ABSENT_STAMP"
    exit 0
fi
[ -d "$MAES_LAUNCH_WHEELS/src/composition_interfaces" ] ||
    die "$MAES_LAUNCH_WHEELS has wheels but no src/composition_interfaces (launch_ros needs it); restore the folder or remove it"

run_step "install ROS 2 launch and the ros2 CLI (${#wheels[@]} wheels from $MAES_LAUNCH_WHEELS)" \
    "read pip's error above; the wheels must be the Jazzy ones described in $MAES_LAUNCH_WHEELS/README.md, and their PyPI dependencies ($LAUNCH_REQUIREMENTS) must resolve under $CONSTRAINTS" \
    launch-pip bash -c '
        set -e
        py="$1/bin/python"
        "$py" -m pip install --progress-bar off --retries 5 -r "$2" -c "$3"
        shift 3
        "$py" -m pip install --progress-bar off --no-deps "$@"
    ' launch-pip "$VENV" "$LAUNCH_REQUIREMENTS" "$CONSTRAINTS" "${wheels[@]}"

"$MAES_ROOT/scripts/build_ws.sh" launch

# The real commands, in the environment a user gets from scripts/env.sh: the entry points are
# registered, launch_ros imports (composition_interfaces found), and the ament index of the
# prefix holds composition_interfaces.
# shellcheck disable=SC2016  # $1 expands in the inner bash
run_step "check the launch stack (import launch_ros, ros2 launch -h, ros2 pkg prefix)" \
    "the wheels installed but do not work: read the error above; 'make distclean setup' rebuilds from scratch" \
    launch-verify bash -c '
        set -e
        MAES_ENV_LAYERS="venv launch" source "$1/scripts/env.sh"
        python -c "import launch, launch_ros.actions, launch_testing, composition_interfaces.srv"
        ros2 launch --help >/dev/null
        for verb in run topic node service action param; do ros2 "$verb" --help >/dev/null; done
        ros2 pkg prefix composition_interfaces
    ' launch-verify "$MAES_ROOT"

echo "installed $(date -u +%Y-%m-%dT%H:%M:%SZ) from $MAES_LAUNCH_WHEELS: ${#wheels[@]} wheels" \
    >"$PRESENT_STAMP"
say "ros2 launch and the ros2 CLI ready (source scripts/env.sh)"
