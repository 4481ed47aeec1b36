"""Benchmark of map generation: time, peak memory and a fingerprint of the map per size.

Time is of an untraced run; peak memory is of a second, traced run: Python's and numpy's
allocations during ``generate_building`` / ``generate_cave`` (``tracemalloc``, which numpy
reports to; tracing slows Python code several times), not the process's RSS. The
fingerprint (SHA-256 of the walls, of each tile's room index and of each tile's hallway index)
shows whether a change to the generators changed the maps.

Run:  scripts/with_env python bench/bench_maps.py [--kinds building cave] [--sizes 200 700]
      [--seed 0]
"""

from __future__ import annotations

import argparse
import hashlib
import time
import tracemalloc

import numpy as np

from maes_sim.core.config_schema import BuildingConfig, CaveConfig
from maes_sim.core.world import generate_building, generate_cave


def _index_map(masks, shape) -> np.ndarray:
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


def run(kind: str, size: int, seed: int) -> dict:
    start = time.perf_counter()
    world = _generate(kind, size, seed)
    seconds = time.perf_counter() - start
    del world
    tracemalloc.start()
    world = _generate(kind, size, seed)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return {
        "kind": kind,
        "size": size,
        "seconds": seconds,
        "peak_mb": peak / 1e6,
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
    generate_cave(30, 30, 1, CaveConfig(), np.random.default_rng(0))  # compile numba first
    print(
        f"{'kind':>8} {'size':>6} {'seconds':>8} {'peak MB':>9} {'rooms':>6} {'halls':>5}  "
        "fingerprint"
    )
    for kind in args.kinds:
        for size in args.sizes:
            r = run(kind, size, args.seed)
            print(
                f"{r['kind']:>8} {r['size']:>6} {r['seconds']:>8.2f} {r['peak_mb']:>9.1f} "
                f"{r['rooms']:>6} {r['hallways']:>5}  {r['fingerprint']}",
                flush=True,
            )


if __name__ == "__main__":
    main()
