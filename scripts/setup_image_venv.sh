#!/usr/bin/env bash
# Create .venv-image: the Docker image's Python side on this machine, for `make test-image`.
#
# The image (docker/Dockerfile, Ubuntu 24.04 noble) cannot be built here, so its Python versions
# are reproduced instead: the image's Python (the `# image-python: X.Y` line of
# requirements/image.txt) with exactly the versions pinned there (numpy 1.26.4, numba, ...), plus
# the test tools of requirements/image-test.txt at the pip environment's versions
# (constraints.txt, less the packages image.txt pins). Like setup_venv.sh, the stamp file is
# written last and removed first, so a half-built venv is never taken for a good one.
#
# Environment: IMAGE_PYTHON (an interpreter to use instead of looking for pythonX.Y),
# MAES_IMAGE_VENV (<repo>/.venv-image).
set -euo pipefail

# shellcheck source=scripts/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

IMAGE_REQUIREMENTS=$MAES_ROOT/requirements/image.txt
TEST_REQUIREMENTS=$MAES_ROOT/requirements/image-test.txt
CONSTRAINTS=$MAES_ROOT/requirements/constraints.txt
VENV=${MAES_IMAGE_VENV:-$MAES_ROOT/.venv-image}
STAMP="$VENV/.maes-venv-ok"

version=$(sed -nE 's/^#[[:space:]]*image-python:[[:space:]]*([0-9]+\.[0-9]+)[[:space:]]*$/\1/p' \
    "$IMAGE_REQUIREMENTS")
[ -n "$version" ] || die "$IMAGE_REQUIREMENTS has no '# image-python: X.Y' line"

# An interpreter that runs and is the image's major.minor. pyenv's shim for pythonX.Y exists
# but fails unless that version is selected, so pyenv's own install folder is tried too.
is_image_python() {
    "$1" -c "import sys; sys.exit(sys.version_info[:2] != tuple(map(int, '$version'.split('.'))))" \
        >/dev/null 2>&1
}
find_python() {
    local candidate
    for candidate in "python$version" \
        "$(pyenv root 2>/dev/null || echo "$HOME/.pyenv")"/versions/"$version".*/bin/"python$version"; do
        if is_image_python "$candidate"; then
            echo "$candidate"
            return 0
        fi
    done
    return 1
}
if [ -n "${IMAGE_PYTHON:-}" ]; then
    is_image_python "$IMAGE_PYTHON" || die "IMAGE_PYTHON=$IMAGE_PYTHON is not a working Python $version"
    python=$IMAGE_PYTHON
else
    python=$(find_python) || die "no Python $version found (the Docker image's Python, named in \
$IMAGE_REQUIREMENTS): install python$version (Debian/Ubuntu: apt-get install python$version-venv; \
or pyenv install $version), or set IMAGE_PYTHON=/path/to/python$version"
fi

rm -f "$STAMP"
if [ -e "$VENV" ]; then
    if [ -f "$VENV/pyvenv.cfg" ] || [ -z "$(ls -A "$VENV" 2>/dev/null)" ]; then
        say "discarding the incomplete or outdated venv at $VENV"
        rm -rf "$VENV"
    else
        die "$VENV exists but is not a venv; move it away, then run 'make test-image' again"
    fi
fi

run_step "create the image venv at $VENV ($python)" \
    "make sure '$python -m venv' works and the disk is not full, then run 'make test-image' again" \
    image-venv "$python" -m venv "$VENV"

# The pip environment's pins for everything the image does not pin itself (pytest, hypothesis and
# their dependencies); the image's own pins come from image.txt alone.
constraints=$(mktemp)
trap 'rm -f "$constraints"' EXIT
pinned=$(grep -E '^[A-Za-z0-9]' "$IMAGE_REQUIREMENTS" | cut -d= -f1 | paste -sd'|')
grep -viE "^($pinned)==" "$CONSTRAINTS" >"$constraints"

run_step "install the image's Python packages (requirements/image.txt) and the test tools" \
    "read pip's error above: for a network error check that PyPI is reachable; for a resolver error fix $IMAGE_REQUIREMENTS or $TEST_REQUIREMENTS" \
    image-pip "$VENV/bin/python" -m pip install --progress-bar off --retries 5 \
    -r "$IMAGE_REQUIREMENTS" -r "$TEST_REQUIREMENTS" -c "$constraints"

touch "$VENV/COLCON_IGNORE"
{
    echo "image venv completed $(date -u +%Y-%m-%dT%H:%M:%SZ)"
    "$VENV/bin/python" --version
} >"$STAMP"
say "image venv ready: $VENV"
