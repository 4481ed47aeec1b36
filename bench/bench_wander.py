"""Benchmark of the core on the peer-simulator scenario: reactive wanderers with a 360-degree lidar.

The scenario of the comparison with Stage and IR-SIM (``bench/bench_irsim.py`` runs IR-SIM on
it): a 50x50 m cave (MAES's generator, 1 m tiles, seed 0), robots spawned in its biggest open
region, a 180-beam 360-degree lidar of 10 m every 0.1 s (one logic tick), and a reactive wander
controller that reads each robot's scan and commands it through ``Simulation.set_velocities``:
drive straight at 1 m/s while the 60-degree sector ahead is clear for 1.5 m, else turn in place
towards the side with more room. Everything else is MAES-ROS's default (exploration marking,
SLAM every 10 ticks, nearby-robot sensing, collisions); no logic callbacks, no navigator.

Usage::

    python bench/bench_wander.py                        # 1, 10, 100 and 1000 robots
    python bench/bench_wander.py --robots 1 --ticks 5000 --repeat 5
    python bench/bench_wander.py --robots 1 --profile   # where one robot's tick goes

Prints per case: wall ms per tick, the real-time factor (sim seconds per wall second) and the
same from the process's CPU time (steadier on a shared machine), the shares of the wall time
spent in ``Simulation.step`` (of which the compiled lidar calls: for this uniform team the
tick's one compiled call, motion and coverage included), in ``set_velocities`` and in the
controller, and the median over ``--repeat`` runs with the range of the real-time factor.
numba's threads are limited to 1 (one core).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src" / "maes_sim"))
sys.path.insert(0, str(ROOT / "src" / "maes_common"))

import numpy as np  # noqa: E402

#: The scenario (metres; tiles are 1 m).
MAP_SIDE = 50
LIDAR_RANGE = 10.0
N_BEAMS = 180
TICK_S = 0.1
#: The wander controller: cruise speed (m/s), turn rate (rad/s), clearance (m) ahead.
CRUISE = 1.0
TURN = 1.0
CLEARANCE = 1.5
FRONT_HALF_ANGLE = np.pi / 6


def scenario_config(n_robots: int, seed: int = 0):
    """The scenario's ``SimConfig`` for ``n_robots`` robots (MAES-ROS defaults otherwise)."""
    from maes_sim.core import config_from_dict

    return config_from_dict(
        {
            "number_of_robots": n_robots,
            "random_seeds": [seed],
            "map": {"width_in_tiles": MAP_SIDE, "height_in_tiles": MAP_SIDE, "cave_config": {}},
            "robot_constraints": {"slam_raytrace_range": LIDAR_RANGE},
            "robot_spawn_config": {"biggest_room": True},
        }
    )


def beam_angles(n_beams: int = N_BEAMS) -> np.ndarray:
    """Beam angles relative to the heading, as the core casts them: ``-pi + k * 2 pi / n``."""
    return -np.pi + np.arange(n_beams) * (2 * np.pi / n_beams)


def wander(ranges: np.ndarray, angles: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The reactive wander controller, vectorized over robots.

    Parameters
    ----------
    ranges : float (N, B)
        Each robot's scan (metres), beam ``k`` at ``angles[k]`` from its heading.
    angles : float (B,)
        Beam angles (rad, counter-clockwise from the heading).

    Returns
    -------
    linear, angular : float (N,)
        m/s and rad/s: ``CRUISE`` straight ahead while the sector within ``FRONT_HALF_ANGLE``
        of the heading is clear for ``CLEARANCE``; else ``TURN`` in place towards the side
        (left: angles in (0, pi), right: (-pi, 0)) whose beams reach further on average.

    Examples
    --------
    >>> a = beam_angles(8)
    >>> wander(np.full((1, 8), 5.0), a)
    (array([1.]), array([0.]))
    >>> blocked = np.full((1, 8), 5.0); blocked[0, 4] = 0.5; blocked[0, 1:3] = 1.0
    >>> wander(blocked, a)
    (array([0.]), array([1.]))
    """
    front, left, right = _sectors(angles)  # one scan's layout: computed once per layout
    clear = ranges[:, front].min(axis=1) > CLEARANCE
    towards = np.where(ranges[:, left].sum(axis=1) >= ranges[:, right].sum(axis=1), 1.0, -1.0)
    return np.where(clear, CRUISE, 0.0), np.where(clear, 0.0, TURN * towards)


def _sectors(angles: np.ndarray) -> tuple[slice, slice, slice]:
    """(front, left, right) beams as slices of ``angles`` (ascending, so each is contiguous);
    left and right hold as many beams each, so their sums compare as their means. Kept per
    layout, as a controller would work them out once (it was 13 % of a one-robot tick), and
    found again by the angles array itself (the caller's, unchanged from tick to tick) before
    by its values (hashing its 1.4 kB took 1.5 us a tick, 4 % of a one-robot tick)."""
    last = _LAST_SECTORS.get(id(angles))
    if last is not None and last[0] is angles:
        return last[1]
    a = np.asarray(angles)
    key = (a.shape, a.tobytes())
    if key not in _SECTORS:
        _SECTORS[key] = _sector_slices(a)
    _LAST_SECTORS.clear()
    _LAST_SECTORS[id(angles)] = (angles, _SECTORS[key])  # the array kept: its id stays its own
    return _SECTORS[key]


_SECTORS: dict[tuple, tuple[slice, slice, slice]] = {}
_LAST_SECTORS: dict[int, tuple[np.ndarray, tuple[slice, slice, slice]]] = {}


def _sector_slices(a: np.ndarray) -> tuple[slice, slice, slice]:
    front = np.flatnonzero(np.abs(a) <= FRONT_HALF_ANGLE)
    left = np.flatnonzero((a > 0) & (a < np.pi))
    right = np.flatnonzero(a < 0)[-len(left) :]
    return (
        slice(front[0], front[-1] + 1),
        slice(left[0], left[-1] + 1),
        slice(right[0], right[-1] + 1),
    )


def time_lidar_calls(simulation_module, add) -> Callable[[], None]:
    """Time the compiled lidar calls the simulator makes, handing each call's wall seconds to
    ``add``; returns what undoes it. The calls: the one-call tick of a team with one lidar
    (since 2026-12-02: ``step_kernel``'s entry, made by ``compiled_entry``: motion, lidar,
    coverage and the stall clock; before that ``step_kernel`` itself) and the lidar call of
    the other teams (``cast_rays_checked``; ``cast_rays`` before it skipped re-checking the
    simulator's own state)."""

    def timed(call):
        def timed_call(*a, **k):
            t0 = time.perf_counter()
            try:
                return call(*a, **k)
            finally:
                add(time.perf_counter() - t0)

        return timed_call

    names = ["compiled_entry", "cast_rays_checked"]
    if not hasattr(simulation_module, "compiled_entry"):
        names[0] = "step_kernel"
    found = [name for name in names if hasattr(simulation_module, name)] or ["cast_rays"]
    originals = {name: getattr(simulation_module, name) for name in found}
    for name, call in originals.items():
        if name == "compiled_entry":  # the entry it makes is what each tick calls
            setattr(
                simulation_module, name, lambda kernel, args, make=call: timed(make(kernel, args))
            )
        else:
            setattr(simulation_module, name, timed(call))

    def undo() -> None:
        for name, call in originals.items():
            setattr(simulation_module, name, call)

    return undo


def run_once(n: int, ticks: int, seed: int) -> dict[str, float]:
    """Time ``ticks`` ticks of the scenario with ``n`` robots (after a short warm-up)."""
    from maes_sim.core import Simulation
    from maes_sim.core import simulation as simulation_module

    sim = Simulation(scenario_config(n, seed))
    tile = float(sim.config.world.tile_size)
    angles = beam_angles()
    spent = {"step": 0.0, "lidar": 0.0, "command": 0.0, "control": 0.0}

    def add(seconds: float) -> None:
        spent["lidar"] += seconds

    undo = time_lidar_calls(simulation_module, add)
    try:
        for _ in range(20):  # warm-up: JIT and caches
            linear, angular = wander(sim.lidar_ranges * tile, angles)
            sim.set_velocities(linear / tile, angular)
            sim.step()
        spent.update(dict.fromkeys(spent, 0.0))
        perf = time.perf_counter
        start, cpu0 = perf(), time.process_time()
        for _ in range(ticks):
            t0 = perf()
            linear, angular = wander(sim.lidar_ranges * tile, angles)
            t1 = perf()
            sim.set_velocities(linear / tile, angular)
            t2 = perf()
            sim.step()
            t3 = perf()
            spent["control"] += t1 - t0
            spent["command"] += t2 - t1
            spent["step"] += t3 - t2
        wall = perf() - start
        cpu = time.process_time() - cpu0
    finally:
        undo()
    return {
        "wall": wall / ticks,
        "cpu": cpu / ticks,
        **{k: 100 * v / wall for k, v in spent.items()},
        "collisions": float(sim.metrics.collisions.sum()),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--robots", type=int, nargs="+", default=[1, 10, 100, 1000])
    parser.add_argument("--ticks", type=int, default=None, help="ticks per run (default by size)")
    parser.add_argument("--repeat", type=int, default=3, help="runs per case (median shown)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--profile", action="store_true", help="cProfile one run of each case")
    args = parser.parse_args(argv)
    os.environ.setdefault("NUMBA_NUM_THREADS", "1")

    def ticks_for(n: int) -> int:
        return args.ticks or max(200, min(5000, 20000 // n))

    if args.profile:
        import cProfile
        import pstats

        for n in args.robots:
            run_once(n, 50, args.seed)
            prof = cProfile.Profile()
            prof.runcall(run_once, n, ticks_for(n), args.seed)
            pstats.Stats(prof).sort_stats("tottime").print_stats(25)
        return 0

    print(
        f"{'robots':>6} {'ticks':>6} {'ms/tick':>8} {'RTF':>8} {'CPU RTF':>8} {'step %':>6} "
        f"{'lidar %':>7} {'cmd %':>6} {'ctrl %':>6}  RTF range",
        flush=True,
    )
    runs: dict[int, list[dict[str, float]]] = {n: [] for n in args.robots}
    for _ in range(args.repeat):  # cases alternate, so drift in the machine's speed is shared
        for n in args.robots:
            runs[n].append(run_once(n, ticks_for(n), args.seed))
    for n in args.robots:
        done = sorted(runs[n], key=lambda r: r["wall"])
        mid = done[len(done) // 2]
        print(
            f"{n:>6} {ticks_for(n):>6} {mid['wall'] * 1e3:>8.3f} {TICK_S / mid['wall']:>7.0f}x "
            f"{TICK_S / mid['cpu']:>7.0f}x {mid['step']:>6.0f} {mid['lidar']:>7.0f} "
            f"{mid['command']:>6.0f} {mid['control']:>6.0f}  "
            f"{TICK_S / done[-1]['wall']:.0f}-{TICK_S / done[0]['wall']:.0f}x",
            flush=True,
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
