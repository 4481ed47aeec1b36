#!/usr/bin/env bash
# Add ROS 2 Jazzy's launch stack and `ros2` command line to the pip environment: launch,
# launch_ros, launch_testing, ros2launch, ros2cli and its verbs are pure Python but not on PyPI.
#
# From the wheels folder $MAES_LAUNCH_WHEELS (developer and CI machines; its default is set in
# scripts/lib.sh) where it holds wheels; otherwise (a user's fresh machine) from the upstream
# sources pinned by tag in requirements/launch-sources.txt, the same versions, downloaded with
# scripts/upstream_sources.py into .ros-launch/sources. Either way: the packages go into .venv
# (--no-deps; their PyPI dependencies come from requirements/launch.txt under the usual
# constraints; source folders are built in pip's isolated build environment, setuptools and
# wheel from PyPI), then composition_interfaces (which launch_ros imports) is built into
# .ros-launch/install. After it, with `source scripts/env.sh`: ros2 launch / run / topic / node /
# service / action.
#
# Where the sources cannot be downloaded either (no network), nothing is installed: it says so
# once, naming the URLs it tried, and writes .ros-launch/.maes-launch-absent (the launch tests then
# skip, quoting it) and the stamp, so setup goes on and does not repeat the message. The Makefile
# picks the stamp to make by whether the wheels folder holds wheels, so a folder that appears
# later is installed by the next `make setup`.
#
# Stamps, each written last and only after every step succeeded:
#   .ros-launch/install/.maes-launch-ok   installed (from the wheels or from the sources)
#   .ros-launch/.maes-launch-sources      the wheels were absent and the sources were tried
set -euo pipefail

# shellcheck source=scripts/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

VENV=${MAES_VENV:-$MAES_ROOT/.venv}
CONSTRAINTS=${MAES_CONSTRAINTS:-$MAES_ROOT/requirements/constraints.txt}
LAUNCH_REQUIREMENTS=$MAES_ROOT/requirements/launch.txt
PRESENT_STAMP="$MAES_LAUNCH_PREFIX/install/.maes-launch-ok"
SOURCES_STAMP="$MAES_LAUNCH_PREFIX/.maes-launch-sources"
ABSENT_NOTE="$MAES_LAUNCH_PREFIX/.maes-launch-absent"
PINS=$MAES_ROOT/requirements/launch-sources.txt

[ -f "$VENV/.maes-venv-ok" ] || die "no complete venv at $VENV; run 'make setup'"
rm -f "$PRESENT_STAMP" "$SOURCES_STAMP" "$ABSENT_NOTE"

shopt -s nullglob
packages=("$MAES_LAUNCH_WHEELS"/*.whl)
shopt -u nullglob
if [ ${#packages[@]} -gt 0 ]; then
    origin="${#packages[@]} wheels from $MAES_LAUNCH_WHEELS"
    MAES_LAUNCH_SRC="$MAES_LAUNCH_WHEELS/src"
    [ -d "$MAES_LAUNCH_SRC/composition_interfaces" ] ||
        die "$MAES_LAUNCH_WHEELS has wheels but no src/composition_interfaces (launch_ros needs it); restore the folder or remove it"
    hint="the wheels must be the Jazzy ones described in $MAES_LAUNCH_WHEELS/README.md"
else
    sources="$MAES_LAUNCH_PREFIX/sources"
    fetched=$(mktemp)
    errors=$(mktemp)
    rc=0
    "$VENV/bin/python" "$MAES_ROOT/scripts/upstream_sources.py" fetch launch,launch-cmake \
        "$sources" >"$fetched" 2>"$errors" || rc=$?
    if [ "$rc" -eq 3 ]; then
        mkdir -p "$MAES_LAUNCH_PREFIX"
        note="no ROS 2 launch wheels at $MAES_LAUNCH_WHEELS, and $(sed 's/^upstream_sources: //' "$errors" | tr '\n' ' ')"
        rm -f "$fetched" "$errors"
        say "$note- 'ros2 launch' and the 'ros2' CLI are not installed (everything else works; the launch tests skip). With network: rm $SOURCES_STAMP; make setup. They also come with the Docker image (docker/) or an apt install of ROS 2 Jazzy."
        echo "$note ($(date -u +%Y-%m-%dT%H:%M:%SZ))" >"$ABSENT_NOTE"
        echo "sources tried, not installed (see .maes-launch-absent)" >"$SOURCES_STAMP"
        exit 0
    fi
    if [ "$rc" -ne 0 ]; then
        cat "$errors" >&2
        rm -f "$fetched" "$errors"
        die "the pinned upstream sources of the launch stack ($PINS) are unusable: read the error above"
    fi
    mapfile -t packages < <(grep -v '/composition_interfaces$' "$fetched")
    MAES_LAUNCH_SRC=$(grep '/composition_interfaces$' "$fetched")
    rm -f "$fetched" "$errors"
    origin="${#packages[@]} packages from the upstream sources pinned in $PINS"
    hint="the sources are those pinned in $PINS (unpacked in $sources)"
    say "no ROS 2 launch wheels at $MAES_LAUNCH_WHEELS: installing the launch stack from its" \
        "upstream sources: $("$VENV/bin/python" "$MAES_ROOT/scripts/upstream_sources.py" list \
            launch,launch-cmake | tr '\n' ' ')"
fi
export MAES_LAUNCH_SRC

run_step "install ROS 2 launch and the ros2 CLI ($origin)" \
    "read pip's error above; $hint, and their PyPI dependencies ($LAUNCH_REQUIREMENTS) must resolve under $CONSTRAINTS" \
    launch-pip bash -c '
        set -e
        py="$1/bin/python"
        "$py" -m pip install --progress-bar off --retries 5 -r "$2" -c "$3"
        shift 3
        "$py" -m pip install --progress-bar off --no-deps "$@"
    ' launch-pip "$VENV" "$LAUNCH_REQUIREMENTS" "$CONSTRAINTS" "${packages[@]}"

"$MAES_ROOT/scripts/build_ws.sh" launch

# The real commands, in the environment a user gets from scripts/env.sh: the entry points are
# registered, launch_ros imports (composition_interfaces found), and the ament index of the
# prefix holds composition_interfaces.
# shellcheck disable=SC2016  # $1 expands in the inner bash
run_step "check the launch stack (import launch_ros, ros2 launch -h, ros2 pkg prefix)" \
    "the packages installed but do not work: read the error above; 'make distclean setup' rebuilds from scratch" \
    launch-verify bash -c '
        set -e
        MAES_ENV_LAYERS="venv launch" source "$1/scripts/env.sh"
        python -c "import launch, launch_ros.actions, launch_testing, composition_interfaces.srv"
        ros2 launch --help >/dev/null
        for verb in run topic node service action param; do ros2 "$verb" --help >/dev/null; done
        ros2 pkg prefix composition_interfaces
    ' launch-verify "$MAES_ROOT"

echo "installed $(date -u +%Y-%m-%dT%H:%M:%SZ): $origin" >"$PRESENT_STAMP"
if [ -n "${sources:-}" ]; then
    echo "installed from the sources (see install/.maes-launch-ok)" >"$SOURCES_STAMP"
fi
say "ros2 launch and the ros2 CLI ready (source scripts/env.sh)"
