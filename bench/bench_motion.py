"""Benchmark of motion + collisions (``maes_sim.core.motion.advance_tick``).

Robots on a 75x75 map with random walls (seeded) drive around under a mix of commands
(continuous moves, finite moves and rotations, velocity commands); idle robots get a new
random command every tick so the load does not fade as robots bump into walls.

Run:  PYTHONPATH=src/maes_sim:src/maes_common python bench/bench_motion.py [--ticks 100]
      [--robots 1 30 120 1000]
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from maes_sim.core import commands as C
from maes_sim.core.collision import robot_overlap, wall_penetration
from maes_sim.core.motion import MotionParams, MotionState, advance_tick


def random_walls(size: int, fill: float, rng: np.random.Generator) -> np.ndarray:
    """Random wall tiles with a solid border, shape (size, size)."""
    walls = rng.random((size, size)) < fill
    walls[0, :] = walls[-1, :] = walls[:, 0] = walls[:, -1] = True
    return walls


def place_robots(walls, n, radius, rng) -> np.ndarray:
    """Centres of open tiles, one robot per tile (a disc of radius <= 0.5 fits in its tile)."""
    iy, ix = np.nonzero(~walls)
    pick = rng.choice(len(ix), size=n, replace=False)
    return np.stack([ix[pick] + 0.5, iy[pick] + 0.5], axis=1)


def reissue(cmds: C.Commands, status: np.ndarray, rng: np.random.Generator) -> None:
    idle = np.nonzero(status == C.Status.IDLE)[0]
    if idle.size == 0:
        return
    kind = rng.integers(0, 4, idle.size)
    for k, fn in enumerate(
        (
            lambda i: C.move_continuous(cmds, i, reverse=bool(rng.random() < 0.3)),
            lambda i: C.move(cmds, i, rng.uniform(-3, 5, i.size)),
            lambda i: C.rotate(cmds, i, rng.uniform(-np.pi, np.pi, i.size)),
            lambda i: C.set_velocity(
                cmds, i, rng.uniform(-1, 3, i.size), rng.uniform(-2, 2, i.size)
            ),
        )
    ):
        sel = idle[kind == k]
        if sel.size:
            fn(sel)


def run(n: int, ticks: int, model: str, seed: int = 7) -> dict:
    rng = np.random.default_rng(seed)
    walls = random_walls(75, 0.2, rng)
    params = MotionParams.from_values(model=model)
    state = MotionState.at_rest(
        place_robots(walls, n, params.radius, rng), rng.uniform(-np.pi, np.pi, n)
    )
    cmds = C.Commands.idle(n)
    status = np.zeros(n, dtype=np.int8)
    advance_tick(state, cmds, walls, params)  # compile / warm up
    elapsed = 0.0
    collisions = 0
    worst_overlap = 0.0
    for _ in range(ticks):
        reissue(cmds, status, rng)
        t0 = time.perf_counter()
        res = advance_tick(state, cmds, walls, params)
        elapsed += time.perf_counter() - t0
        state, cmds, status = res.state, res.commands, res.status
        collisions += int(res.collided.sum())
        # Checks outside the timed region: never inside a wall, overlaps stay small.
        assert wall_penetration(walls, state.positions, params.radius).max() <= 1e-9
        worst_overlap = max(worst_overlap, robot_overlap(state.positions, params.radius))
    per_tick = elapsed / ticks
    return {
        "robots": n,
        "ms_per_tick": 1e3 * per_tick,
        "logic_ticks_per_s": 1.0 / per_tick,
        "physics_steps_per_s": params.physics_steps / per_tick,
        "realtime_factor": params.tick_duration / per_tick,
        "collisions": collisions,
        "max_overlap": worst_overlap,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ticks", type=int, default=100)
    ap.add_argument("--robots", type=int, nargs="+", default=[1, 30, 120, 1000])
    ap.add_argument("--model", default="maes", choices=["maes", "differential_drive"])
    args = ap.parse_args()
    print(f"motion+collisions, 75x75 map, 20% random walls, {args.ticks} ticks, {args.model}")
    print(
        f"{'robots':>7} {'ms/tick':>9} {'ticks/s':>9} {'phys/s':>10} {'x realtime':>10} "
        f"{'collisions':>10} {'worst overlap':>13}",
        flush=True,
    )
    for n in args.robots:
        r = run(n, args.ticks, args.model)
        print(
            f"{r['robots']:>7} {r['ms_per_tick']:>9.3f} {r['logic_ticks_per_s']:>9.0f} "
            f"{r['physics_steps_per_s']:>10.0f} {r['realtime_factor']:>10.0f} "
            f"{r['collisions']:>10} {r['max_overlap']:>13.2e}",
            flush=True,
        )


if __name__ == "__main__":
    main()
