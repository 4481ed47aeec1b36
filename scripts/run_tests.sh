#!/usr/bin/env bash
# Run pytest over every package (what `make test` runs, inside scripts/with_env).
# Arguments go to pytest; with none, pytest's testpaths (pyproject.toml) are used: src/*/test
# and tests/. The ROS domain is chosen per run by the root conftest.py.
set -uo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.." || exit 1
# Discovery stays on this machine; the per-run ROS_DOMAIN_ID (conftest.py) keeps two runs apart.
export ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST
# In parallel (pytest-xdist): the tests mostly wait (DDS discovery, processes starting), so more
# workers than cores pay. Each worker is a pytest process with a ROS domain of its own
# (conftest.py); a file's tests stay on one worker (--dist loadfile), so a module's fixtures are
# made once. MAES_TEST_JOBS=N sets the workers (1: no workers, one process); a `-n N` in the
# arguments wins.
jobs=${MAES_TEST_JOBS:-4}
parallel=()
if [ "$jobs" != 1 ]; then
    parallel=(-n "$jobs" --dist loadfile)
fi
# The pytest console script, not `python -m pytest`, which would put the repo root on sys.path.
pytest "${parallel[@]}" "$@"
rc=$?
if [ "$rc" -eq 5 ]; then
    echo "[maes test] pytest collected no tests: check the paths / -k expression given (PYTEST_ARGS='$*'); a long end-to-end test (marker slow) runs with make test-slow, not make test" >&2
fi
exit "$rc"
