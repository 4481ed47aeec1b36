#!/usr/bin/env bash
# Add nav2_simple_commander (Nav2's Python task API, BasicNavigator; pure Python, not on PyPI) to
# the pip environment: from the wheel folder $MAES_NAV2_COMMANDER_WHEELS (developer and CI
# machines; default in scripts/lib.sh) where it holds a wheel, otherwise from navigation2's source
# at the tag pinned in requirements/launch-sources.txt (component "commander"), downloaded with
# scripts/upstream_sources.py into .ros-launch/sources. Installed with --no-deps: what it imports
# at run time (rclpy, geometry_msgs, nav2_msgs, action_msgs, lifecycle_msgs) is in the venv and
# the interface stand-ins.
#
# Where neither is available (no network), nothing is installed: it says so once, naming the URL
# it tried, and writes .ros-launch/.maes-commander-absent; scripts/env.sh then exports
# MAES_NAV2_COMMANDER_ABSENT=1, and the tests that drive nav2_simple_commander skip, saying why.
#
# Stamps, each written last and only after every step succeeded:
#   .ros-launch/.maes-commander-wheel     installed from the wheel folder
#   .ros-launch/.maes-commander-sources   the wheel was absent and the sources were tried
set -euo pipefail

# shellcheck source=scripts/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

VENV=${MAES_VENV:-$MAES_ROOT/.venv}
WHEEL_STAMP="$MAES_LAUNCH_PREFIX/.maes-commander-wheel"
SOURCES_STAMP="$MAES_LAUNCH_PREFIX/.maes-commander-sources"
ABSENT_NOTE="$MAES_LAUNCH_PREFIX/.maes-commander-absent"
PINS=$MAES_ROOT/requirements/launch-sources.txt

[ -f "$VENV/.maes-venv-ok" ] || die "no complete venv at $VENV; run 'make setup'"
rm -f "$WHEEL_STAMP" "$SOURCES_STAMP" "$ABSENT_NOTE"
mkdir -p "$MAES_LAUNCH_PREFIX"

shopt -s nullglob
packages=("$MAES_NAV2_COMMANDER_WHEELS"/nav2_simple_commander-*.whl)
shopt -u nullglob
if [ ${#packages[@]} -gt 0 ]; then
    stamp=$WHEEL_STAMP
    origin="the wheel in $MAES_NAV2_COMMANDER_WHEELS"
else
    stamp=$SOURCES_STAMP
    errors=$(mktemp)
    rc=0
    folder=$("$VENV/bin/python" "$MAES_ROOT/scripts/upstream_sources.py" fetch commander \
        "$MAES_LAUNCH_PREFIX/sources" 2>"$errors") || rc=$?
    if [ "$rc" -eq 3 ]; then
        note="no nav2_simple_commander wheel at $MAES_NAV2_COMMANDER_WHEELS, and $(sed 's/^upstream_sources: //' "$errors" | tr '\n' ' ')"
        rm -f "$errors"
        say "$note- nav2_simple_commander is not installed (everything else works; its tests skip). With network: rm $SOURCES_STAMP; make setup."
        echo "$note ($(date -u +%Y-%m-%dT%H:%M:%SZ))" >"$ABSENT_NOTE"
        echo "sources tried, not installed (see .maes-commander-absent)" >"$SOURCES_STAMP"
        exit 0
    fi
    if [ "$rc" -ne 0 ]; then
        cat "$errors" >&2
        rm -f "$errors"
        die "the pinned upstream source of nav2_simple_commander ($PINS) is unusable: read the error above"
    fi
    rm -f "$errors"
    packages=("$folder")
    origin="navigation2's source pinned in $PINS"
    say "no nav2_simple_commander wheel at $MAES_NAV2_COMMANDER_WHEELS: installing it from" \
        "$("$VENV/bin/python" "$MAES_ROOT/scripts/upstream_sources.py" list commander)"
fi

run_step "install nav2_simple_commander ($origin)" \
    "read pip's error above; 'make distclean setup' rebuilds from scratch" \
    commander-pip "$VENV/bin/python" -m pip install --progress-bar off --no-deps \
    "${packages[@]}"

# Imported in the environment a user gets from scripts/env.sh (nav2_msgs from the stand-ins).
# shellcheck disable=SC2016  # $1 expands in the inner bash
run_step "check nav2_simple_commander (import BasicNavigator)" \
    "it installed but does not import: read the error above (nav2_msgs comes from the stand-ins: 'make setup' builds them)" \
    commander-verify bash -c '
        set -e
        MAES_ENV_LAYERS="venv standins" source "$1/scripts/env.sh"
        python -c "from nav2_simple_commander.robot_navigator import BasicNavigator, TaskResult"
    ' commander-verify "$MAES_ROOT"

echo "installed $(date -u +%Y-%m-%dT%H:%M:%SZ): $origin" >"$stamp"
say "nav2_simple_commander ready (source scripts/env.sh)"
