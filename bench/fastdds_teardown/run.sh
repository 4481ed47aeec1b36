#!/usr/bin/env bash
# The Fast DDS participant-deletion hang, reproduced: bench/fastdds_teardown/README.md.
#
#   bench/fastdds_teardown/run.sh plain|fix|both ITERATIONS [PEERS] [BURNERS] [OUTDIR]
#
# Each iteration starts PEERS (default 6) peer.py processes on one ROS domain that spin, then
# all destroy their node at the same instant, while BURNERS busy loops (default 2) load the
# cores. A peer still alive 30 s after that instant is hung: the native stacks of its threads go
# to OUTDIR/hang_<i>_<peer>.gdb (gdb -batch), then it is killed. "fix" has every peer detach its
# participant's discovery listener first (maes_common.fastdds); "both" alternates plain and fix
# iterations, so that both meet the same machine. Prints a line every 20 iterations and the
# counts at the end.
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
mode=${1:?plain, fix or both}
iterations=${2:?number of iterations}
peers=${3:-6}
burners=${4:-2}
out=${5:-$(mktemp -d "${TMPDIR:-/tmp}/fastdds-teardown-XXXXXX")}
mkdir -p "$out"
# shellcheck source=scripts/env.sh
source "$here/../../scripts/env.sh"
export ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST
export ROS_DOMAIN_ID=${ROS_DOMAIN_ID:-$((150 + RANDOM % 50))}
burner_pids=()
trap 'kill "${burner_pids[@]}" 2>/dev/null' EXIT
for _ in $(seq 1 "$burners"); do
    (while :; do :; done) &
    burner_pids+=($!)
done
declare -A runs=([plain]=0 [fix]=0) hung=([plain]=0 [fix]=0)
for i in $(seq 1 "$iterations"); do
    this=$mode
    if [ "$mode" = both ]; then
        this=$([ $((i % 2)) -eq 1 ] && echo plain || echo fix)
    fi
    go=$(python3 -c "import time; print(time.time() + 3.0)")
    pids=()
    for k in $(seq 0 $((peers - 1))); do
        python "$here/peer.py" "$go" "peer$k" "$this" >"$out/peer$k.log" 2>&1 &
        pids+=($!)
    done
    # Ends by itself in a few seconds; a loaded machine may take longer to start six Pythons,
    # so a peer counts as hung only once it is still there 30 s after the instant.
    end=$((SECONDS + 33))
    while [ $SECONDS -lt $end ]; do
        alive=0
        for p in "${pids[@]}"; do kill -0 "$p" 2>/dev/null && alive=1; done
        [ $alive = 0 ] && break
        sleep 0.5
    done
    runs[$this]=$((runs[$this] + 1))
    stuck=0
    for k in "${!pids[@]}"; do
        p=${pids[$k]}
        if kill -0 "$p" 2>/dev/null; then
            stuck=1
            echo "iteration $i ($this): peer$k (pid $p) still alive 30 s after the end; stacks in $out/hang_${i}_$k.gdb"
            gdb -p "$p" -batch -ex "thread apply all bt" >"$out/hang_${i}_$k.gdb" 2>&1
            kill -9 "$p"
        fi
    done
    hung[$this]=$((hung[$this] + stuck))
    wait "${pids[@]}" 2>/dev/null
    if [ $((i % 20)) -eq 0 ]; then
        echo "iteration $i of $iterations ($(date +%T)): plain ${hung[plain]} hung of ${runs[plain]}, fix ${hung[fix]} hung of ${runs[fix]}"
    fi
done
echo "iterations with a hung peer: plain ${hung[plain]} of ${runs[plain]}, fix ${hung[fix]} of ${runs[fix]} ($peers peers, $burners burners; logs in $out)"
