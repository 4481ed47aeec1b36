#!/usr/bin/env bash
# make test-stress: the tests that talk DDS or start processes (marker dds_or_process, fast and
# slow; conftest.py sets it) RUNS times in a row with BURNERS busy loops beside them, each run in
# parallel workers as `make test` runs them. A flaky test shows up here before CI meets it.
# Prints each run's outcome, time and failures, and at the end how many runs passed; every run's
# output stays in log/stress/run<k>.log. Exit code 0 only when every run passed.
#
#   scripts/stress_tests.sh [RUNS] [BURNERS] [pytest arguments...]   (defaults: 10 runs, 2 burners)
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.." || exit 1
runs=${1:-10}
burners=${2:-2}
shift $(($# > 2 ? 2 : $#))
logs=log/stress
mkdir -p "$logs"
pids=()
trap 'kill "${pids[@]}" 2>/dev/null' EXIT
for _ in $(seq 1 "$burners"); do
    (while :; do :; done) &
    pids+=($!)
done
echo "[maes stress] $runs runs of the DDS and process tests (marker dds_or_process, not bench_smoke) beside $burners busy loops"
passed=0
for k in $(seq 1 "$runs"); do
    start=$SECONDS
    # --durations: the slowest tests, the ones nearest their time limit under load
    scripts/run_tests.sh -m "dds_or_process and not bench_smoke" -p no:cacheprovider --durations=15 "$@" \
        >"$logs/run$k.log" 2>&1
    rc=$?
    summary=$(grep -E "^=+ .*(passed|failed|error).* in " "$logs/run$k.log" | tail -n 1 | tr -d '=')
    if [ "$rc" -eq 0 ]; then
        passed=$((passed + 1))
        echo "[maes stress] run $k: passed in $((SECONDS - start)) s ($summary)"
    else
        echo "[maes stress] run $k: FAILED (exit $rc) in $((SECONDS - start)) s ($summary); $logs/run$k.log"
        grep -E "^(FAILED|ERROR) " "$logs/run$k.log" | sed 's/^/[maes stress]   /'
    fi
done
echo "[maes stress] $passed of $runs runs passed"
[ "$passed" -eq "$runs" ]
