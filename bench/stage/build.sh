#!/bin/sh
# Builds Stage 4.3's wander controller plugin (bench/stage/wander_bench.cc) for
# bench/bench_stage.py, with -O2 against an installed Stage (docs/benchmarks.md says how to
# build Stage itself). STAGE_PREFIX: Stage's install prefix (default ~/stage/install); the
# plugin goes to .stage-bench/ at the repository's root (not tracked).
set -e
here=$(cd "$(dirname "$0")" && pwd)
prefix=${STAGE_PREFIX:-$HOME/stage/install}
out=${STAGE_PLUGIN_DIR:-$here/../../.stage-bench}
if [ ! -f "$prefix/lib/pkgconfig/stage.pc" ]; then
    echo "bench/stage/build.sh: no Stage at $prefix (set STAGE_PREFIX to its install prefix)" >&2
    exit 1
fi
mkdir -p "$out"
g++ -O2 -DNDEBUG -Wall -fPIC -shared -o "$out/wander_bench.so" "$here/wander_bench.cc" \
    $(PKG_CONFIG_PATH="$prefix/lib/pkgconfig" pkg-config --cflags stage) \
    -L"$prefix/lib" -lstage -Wl,-rpath,"$prefix/lib"
echo "built $out/wander_bench.so"
