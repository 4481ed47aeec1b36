"""Benchmark of the simulator node's maes_state bytes when robots broadcast: ms per tick.

Every robot's ``maes_state`` carries the broadcasts it received. The node writes the bytes
itself (``conversions.state_to_wire``), encoding each message once per tick
(``maes_common.broadcast_wire``) and joining it into every state that holds it. This times
building all robots' states of a tick that way against encoding each message again for each
receiver (the ``(msg, sender)`` form of ``encode_state``, what the node did before), paired on
the same ticks (alternating which goes first), checks that both give the same bytes, and
prints ms per tick and the ratio. Run it in the pip environment::

    scripts/with_env python bench/bench_state_wire.py                 # 30 and 120 robots, K = 1
    scripts/with_env python bench/bench_state_wire.py --send-every 5
"""

from __future__ import annotations

import argparse
import time


def _per_receiver(cv, state, tag_cache: dict, robot_cache: dict) -> bytes:
    """``state_to_wire`` with each broadcast encoded for this receiver (the old way)."""
    return cv.encode_state(
        state.tick,
        state.status,
        state.colliding,
        [(b.msg, b.sender) for b in state.incoming_broadcast_msgs],
        cv._pieces(
            state.tags_nearby,
            tag_cache,
            lambda t: cv.tag_wire(t.msg, t.pos.x, t.pos.y, t.sender, t.tick),
        ),
        cv._pieces(
            state.nearby_robots, robot_cache, lambda r: cv.nearby_wire(r.id, r.pos.x, r.pos.y)
        ),
        (state.position.x, state.position.y),
        state.heading,
        state.robot_type,
    )


def run(robots: int, ticks: int, every: int) -> tuple[float, float, float]:
    """(per-receiver ms, once-per-tick ms, broadcasts received per tick)."""
    from maes_sim.core import Simulation, config_from_dict
    from maes_sim.ros import conversions as cv

    sim = Simulation(
        config_from_dict(
            {
                "number_of_robots": robots,
                "random_seeds": [1],
                "map": {"width_in_tiles": 60, "height_in_tiles": 60},
            }
        )
    )
    tile = sim.config.world.tile_size
    ways = {
        "per receiver": lambda s, tags, per_tick: _per_receiver(cv, s, tags, per_tick),
        "once per tick": cv.state_to_wire,
    }
    spent = dict.fromkeys(ways, 0.0)
    tag_caches: dict[str, dict] = {name: {} for name in ways}
    received = 0
    for t in range(ticks):
        for i in range(robots):
            sim.set_velocity(i, 0.5, 0.3)
            if (t + i) % every == 0:  # staggered: the same load every tick
                sim.broadcast(i, f"robot {i} claims the frontier at ({t}, {3 * i})")
        sim.step()
        states = sim.observation(tile).states()
        received += sum(len(s.incoming_broadcast_msgs) for s in states)
        out = {}
        for name in list(ways) if t % 2 == 0 else list(ways)[::-1]:
            per_tick: dict = {}
            start = time.perf_counter()
            out[name] = [ways[name](s, tag_caches[name], per_tick) for s in states]
            spent[name] += time.perf_counter() - start
        if out["per receiver"] != out["once per tick"]:
            raise SystemExit(f"tick {t}: the two encodings differ")
    old, new = (spent[name] * 1000.0 / ticks for name in ways)
    return old, new, received / ticks


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--robots", type=int, nargs="+", default=[30, 120])
    parser.add_argument("--ticks", type=int, default=40)
    parser.add_argument("--send-every", type=int, default=1, metavar="K")
    args = parser.parse_args(argv)
    print(
        f"building every robot's maes_state bytes, each robot broadcasting on every "
        f"K-th tick (K = {args.send_every}); mean of {args.ticks} ticks, the bytes checked equal"
    )
    print(
        f"{'robots':>6} {'received/tick':>13} {'per receiver ms':>15} "
        f"{'once per tick ms':>16} {'ratio':>6}"
    )
    for robots in args.robots:
        old, new, received = run(robots, args.ticks, args.send_every)
        print(f"{robots:>6} {received:>13.0f} {old:>15.2f} {new:>16.2f} {new / old:>6.3f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
