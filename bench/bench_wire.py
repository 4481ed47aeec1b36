"""Benchmark: what writing a tick's messages costs the simulator, per topic (issue 35).

For every robot of a team (default 120 robots on a 75x75 building, the default config's keys,
stepped 20 ticks so the robots have scans and links), the time to turn one tick into the bytes
a DDS writer sends: each robot's ``tf``, ``odom``, ``scan`` and ``maes_state``, the global
``/tf`` and ``/maes/markers``. A message the factory returns as an object is serialized by
rclpy (what ``Publisher.publish`` and a recording then do); bytes are taken as they are.

With ``--base PATH`` (another checkout, e.g. ``git worktree add /tmp/base <commit>``) the
same is measured with that tree's ``src/`` code, in rounds that alternate the two trees, each
in its own process; printed: microseconds per tick for each topic family, median over the
rounds, and the base's time over this tree's.

Usage (the pip environment)::

    scripts/with_env python bench/bench_wire.py
    scripts/with_env python bench/bench_wire.py --robots 50 --base /tmp/base --rounds 5
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FAMILIES = ("tf", "odom", "scan", "maes_state", "/tf", "markers")


def measure(robots: int, size: int, repeat: int) -> dict[str, float]:
    """Microseconds per tick for each family, the best of ``repeat`` passes (this process's
    code; the garbage collector off while timing, as ``timeit`` does)."""
    import gc
    import time

    import yaml
    from rclpy.serialization import serialize_message

    from maes_sim.core import Simulation, load_config
    from maes_sim.ros.messages import MessageFactory

    cfg = yaml.safe_load((ROOT / "maes_config.yaml").read_text())
    cfg["number_of_robots"] = robots
    cfg["map"]["width_in_tiles"] = cfg["map"]["height_in_tiles"] = size
    path = Path(os.environ.get("TMPDIR", "/tmp")) / f"bench_wire_{os.getpid()}.yaml"
    path.write_text(yaml.safe_dump(cfg))
    sim = Simulation(load_config(path))
    path.unlink()
    for _ in range(20):
        for i in range(sim.n_robots):
            sim.set_velocity(i, 1.0, 0.3)
        sim.step()
    factory = MessageFactory(sim)
    frame = factory.frame()

    def wire(msg) -> bytes:
        return msg if isinstance(msg, bytes) else serialize_message(msg)

    n = range(sim.n_robots)
    jobs = {
        "tf": lambda: [wire(factory.robot_tf(frame, i)) for i in n],
        "odom": lambda: [wire(factory.odom(frame, i)) for i in n],
        "scan": lambda: [wire(factory.scan(frame, i)) for i in n],
        "maes_state": lambda: [wire(factory.state(frame, i)) for i in n],
        "/tf": lambda: wire(factory.global_tf(frame)),
        "markers": lambda: wire(factory.markers(frame)),
    }
    best = {}
    for name, job in jobs.items():
        times = []
        for _ in range(repeat):
            gc.collect()
            gc.disable()
            start = time.perf_counter()
            job()
            times.append(time.perf_counter() - start)
            gc.enable()
        best[name] = min(times) * 1e6
    return best


def _run(tree: Path, args: argparse.Namespace) -> dict[str, float]:
    paths = [str(tree / "src" / p) for p in ("maes_common", "maes_sim", "maes_controller")]
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([*paths, os.environ.get("PYTHONPATH", "")]))
    out = subprocess.run(
        [sys.executable, __file__, "--child", *("--robots", str(args.robots))]
        + ["--size", str(args.size), "--repeat", str(args.repeat)],
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    if out.returncode != 0:
        raise SystemExit(f"{tree}: {out.stderr[-2000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--robots", type=int, default=120)
    parser.add_argument("--size", type=int, default=75, help="the building's side (tiles)")
    parser.add_argument("--repeat", type=int, default=5, help="passes per process (best kept)")
    parser.add_argument("--rounds", type=int, default=3, help="processes per tree")
    parser.add_argument("--base", default=None, help="another checkout to compare")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        print(json.dumps(measure(args.robots, args.size, args.repeat)))
        return 0
    trees = {"this tree": ROOT} | ({"base": Path(args.base)} if args.base else {})
    runs: dict[str, list[dict[str, float]]] = {name: [] for name in trees}
    for k in range(args.rounds):
        for name, tree in trees.items():
            runs[name].append(_run(tree, args))
        print(f"round {k + 1}/{args.rounds} done", flush=True)
    print(f"\n{args.robots} robots, {args.size}x{args.size} building: microseconds per tick")
    print(f"{'topic':>11} " + " ".join(f"{name:>10}" for name in trees) + "  base / this")
    for family in (*FAMILIES, "all"):
        medians = {
            name: statistics.median(
                sum(r.values()) if family == "all" else r[family] for r in rounds
            )
            for name, rounds in runs.items()
        }
        ratio = f"  {medians['base'] / medians['this tree']:9.1f}x" if args.base else ""
        print(f"{family:>11} " + " ".join(f"{v:10.0f}" for v in medians.values()) + ratio)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
