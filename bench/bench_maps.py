"""Benchmark of map generation: time, peak memory and a fingerprint of the map per size.

Per map: wall-clock and CPU seconds (``time.process_time``: on a loaded machine the wall time
grows, the CPU time much less) and the process's peak resident memory during the generation
(Linux: ``VmHWM`` after resetting it through ``/proc/self/clear_refs``; it includes the ~150 MB
of the interpreter, numpy and numba, and counts the arrays the numba kernels allocate, which
``tracemalloc`` does not see; elsewhere the process's peak so far). The fingerprint (SHA-256 of
the walls, of each tile's room index and of each tile's hallway index) shows whether a change to
the generators changed the maps.

Run:  scripts/with_env python bench/bench_maps.py [--kinds building cave] [--sizes 200 700]
      [--seed 0]
"""

from __future__ import annotations

import argparse
import hashlib
import resource
import time

import numpy as np

from maes_sim.core.config_schema import BuildingConfig, CaveConfig
from maes_sim.core.world import generate_building, generate_cave


def _index_map(masks, shape) -> np.ndarray:
    labels = getattr(masks, "labels", None)  # Regions: 0 none, k + 1 region k
    if labels is not None:
        return labels.astype(np.int32) - 1  # the loop below's result, without a mask per region
    index = np.full(shape, -1, dtype=np.int32)
    for k, mask in enumerate(masks):
        index[mask] = k
    return index


def fingerprint(world) -> str:
    """Short hash of the walls and of which room / hallway each tile belongs to."""
    digest = hashlib.sha256(world.walls.tobytes())
    digest.update(_index_map(world.rooms, world.shape).tobytes())
    digest.update(_index_map(world.hallways, world.shape).tobytes())
    return digest.hexdigest()[:16]


def _generate(kind: str, size: int, seed: int):
    rng = np.random.default_rng(seed)
    if kind == "building":
        return generate_building(size, size, 1, BuildingConfig(), rng)
    return generate_cave(size, size, 1, CaveConfig(), rng)


def _reset_peak_rss() -> bool:
    """Start a new peak of resident memory (Linux >= 4.0); False where that is not possible."""
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
        return True
    except OSError:
        return False


def _peak_rss_mb(reset: bool) -> float:
    if reset:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # kB on Linux


def run(kind: str, size: int, seed: int) -> dict:
    reset = _reset_peak_rss()
    start, cpu = time.perf_counter(), time.process_time()
    world = _generate(kind, size, seed)
    seconds, cpu_seconds = time.perf_counter() - start, time.process_time() - cpu
    peak = _peak_rss_mb(reset)
    return {
        "kind": kind,
        "size": size,
        "seconds": seconds,
        "cpu_seconds": cpu_seconds,
        "peak_mb": peak,
        "rooms": len(world.rooms),
        "hallways": len(world.hallways),
        "fingerprint": fingerprint(world),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kinds", nargs="+", default=["building", "cave"])
    parser.add_argument("--sizes", nargs="+", type=int, default=[50, 200, 700])
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    # compile (or load) the kernels first, outside the timings
    generate_building(60, 60, 1, BuildingConfig(), np.random.default_rng(0))
    generate_cave(200, 200, 1, CaveConfig(), np.random.default_rng(0))  # one with passages
    print(
        f"{'kind':>8} {'size':>6} {'seconds':>8} {'CPU s':>7} {'peak MB':>9} {'rooms':>6} "
        f"{'halls':>5}  fingerprint"
    )
    for kind in args.kinds:
        for size in args.sizes:
            r = run(kind, size, args.seed)
            print(
                f"{r['kind']:>8} {r['size']:>6} {r['seconds']:>8.2f} {r['cpu_seconds']:>7.2f} "
                f"{r['peak_mb']:>9.0f} {r['rooms']:>6} {r['hallways']:>5}  {r['fingerprint']}",
                flush=True,
            )


if __name__ == "__main__":
    main()
