"""Benchmark: what recording and the live view cost a run (docs/live_view.md).

Paired, interleaved runs of the embedded stack (``maes_run``, unpaced, the default map, the
example explorer, a fixed number of ticks), each in its own process, in these variants:

=========  =====================================================================
``plain``  no switch (this tree)
``record`` ``--record run.mcap``
``live``   ``--live 0`` (the server up, no client connected)
``base``   no switch, another tree's code (``--base PATH``: e.g. a detached
           ``git worktree add /tmp/base main``; its ``src/`` packages go first on
           PYTHONPATH, the messages are this workspace's)
``base_record``  ``--record run.mcap`` with the other tree's code (with ``--base``)
``listen``  no switch, with an outside listener (``--listen``: ``bench/listen_all.py`` in
           its own process subscribed to every robot's ``scan``, ``tf`` and ``maes_state``,
           as a recorder would be); ``base_listen`` the same with the other tree's code
=========  =====================================================================

Printed per variant: the median CPU time (the child's user + system), wall time and real-time
factor (the run's ``summary.json``) over the rounds, the times' ratio to ``plain``, and the
recording's size; with ``--base``, the other tree's recorded run against this tree's, paired.
The machine's speed drifts, so the variants take turns within each round. The runs get a ROS
domain of their own (locked as the tests lock theirs, discovery on this machine only): another
stack on the default domain would otherwise talk to them. Run it in the pip environment::

    scripts/with_env python bench/bench_recording.py --robots 5 --ticks 200 --rounds 3
    scripts/with_env python bench/bench_recording.py --base /tmp/base-h14-live
    scripts/with_env python bench/bench_recording.py --robots 120 --map-size 75 --base /tmp/base
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[1]


def one_run(
    config: Path,
    ticks: int,
    extra: list[str],
    env: dict,
    out: Path,
    listen: int = 0,
    heard: dict | None = None,
) -> tuple[float, float, float]:
    """(CPU seconds, wall seconds, real-time factor from the first tick) of one ``maes_run``;
    ``listen``: with an outside listener to that many robots' topics (its CPU not counted;
    what it heard is printed, and put in ``heard`` when given: ``listen_all.py``'s JSON)."""
    listener = None
    if listen:
        listener = subprocess.Popen(
            [sys.executable, str(REPO / "bench" / "listen_all.py"), "--robots", str(listen)],
            stdout=subprocess.PIPE,
            text=True,
            env=env,
        )
        if listener.stdout.readline().strip() != "ready":
            raise SystemExit("the listener did not start")
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "maes_bringup.runners.embedded",
            "--config",
            str(config),
            "--real-time-factor",
            "0",
            "--max-ticks",
            str(ticks),
            "--results",
            str(out),
            *extra,
        ],
        capture_output=True,
        text=True,
        env=env,
    )
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        raise SystemExit(f"maes_run failed: {proc.stderr[-2000:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if listener is not None:
        listener.send_signal(signal.SIGINT)
        got = json.loads(listener.communicate(timeout=60)[0].strip().splitlines()[-1])
        if heard is not None:
            heard.update(got)
        per_robot = got["counts"]["maes_state"] / listen
        newest = got["newest_tick"]
        print(f"  the listener heard {got['counts']}: {per_robot:.1f} maes_state per robot for "
              f"ticks 0-{ticks} (tick 0 comes twice), the newest tick "
              f"{min(newest)}-{max(newest)}")  # fmt: skip
    summary = max(out.glob("*/summary.json"), key=lambda p: p.stat().st_mtime)
    return cpu, wall, float(json.loads(summary.read_text())["real_time_factor_achieved"])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--robots", type=int, default=5)
    parser.add_argument("--ticks", type=int, default=200, help="logic ticks per run")
    parser.add_argument("--rounds", type=int, default=3, help="runs of every variant")
    parser.add_argument("--base", default=None, help="another tree to compare (its src/ code)")
    parser.add_argument("--config", default=str(REPO / "maes_config.yaml"))
    parser.add_argument("--listen", action="store_true", help="add the listener variants")
    parser.add_argument(
        "--map-size", type=int, default=None, help="a generated map's side, tiles (the config's)"
    )
    args = parser.parse_args(argv)

    cfg = yaml.safe_load(Path(args.config).read_text())
    cfg["number_of_robots"] = args.robots
    if args.map_size:
        cfg["map"] = dict(cfg.get("map", {}), width_in_tiles=args.map_size)
        cfg["map"]["height_in_tiles"] = args.map_size
    cfg["end_criteria"] = {"exploration_percent": None, "coverage_percent": None, "tick": None}
    sys.path.insert(0, str(REPO))
    from conftest import acquire_ros_domain_id  # the tests' domain locks (repository root)

    domain, _lock = acquire_ros_domain_id(os.getpid(), Path(tempfile.gettempdir()))
    env = dict(os.environ, ROS_DOMAIN_ID=str(domain), ROS_AUTOMATIC_DISCOVERY_RANGE="LOCALHOST")
    variants: dict[str, tuple[list[str], dict]] = {
        "plain": ([], env),
        "record": (["--record", "RECORD"], env),
        "live": (["--live", "0"], env),
    }
    if args.listen:
        variants["listen"] = (["LISTEN"], env)
    if args.base:
        src = Path(args.base) / "src"
        paths = [str(src / p) for p in ("maes_sim", "maes_controller", "maes_bringup")]
        base_env = dict(env, PYTHONPATH=os.pathsep.join([*paths, env.get("PYTHONPATH", "")]))
        variants["base"] = ([], base_env)
        variants["base_record"] = (["--record", "RECORD"], base_env)
        if args.listen:
            variants["base_listen"] = (["LISTEN"], base_env)
    times: dict[str, list[tuple[float, float, float]]] = {name: [] for name in variants}
    sizes: list[int] = []
    with tempfile.TemporaryDirectory() as tmp:
        config = Path(tmp) / "bench.yaml"
        config.write_text(yaml.safe_dump(cfg))
        for name, (_, run_env) in variants.items():  # numba's caches (per source tree) first
            one_run(config, 5, [], run_env, Path(tmp) / f"warm_{name}")
        for k in range(args.rounds):
            for name, (extra, run_env) in variants.items():
                record = Path(tmp) / f"{name}_{k}.mcap"
                listen = args.robots if "LISTEN" in extra else 0
                extra = [str(record) if a == "RECORD" else a for a in extra if a != "LISTEN"]
                times[name].append(
                    one_run(config, args.ticks, extra, run_env, Path(tmp) / name, listen)
                )
                if name.endswith("record"):
                    sizes.append(record.stat().st_size)
                cpu, wall, rtf = times[name][-1]
                print(f"round {k + 1}/{args.rounds} {name}: cpu {cpu:.1f} s, wall {wall:.1f} s, "
                      f"real-time factor {rtf:.2f}x", flush=True)  # fmt: skip
    plain_cpu = statistics.median(c for c, _, _ in times["plain"])
    plain_wall = statistics.median(w for _, w, _ in times["plain"])
    print(f"\n{args.robots} robots, {args.ticks} ticks, median of {args.rounds} (loaded machine?)")
    print(f"{'variant':>11} {'cpu s':>7} {'x plain':>8} {'wall s':>7} {'x plain':>8} {'RTF':>6}")
    for name, runs in times.items():
        cpu = statistics.median(c for c, _, _ in runs)
        wall = statistics.median(w for _, w, _ in runs)
        rtf = statistics.median(r for _, _, r in runs)
        print(f"{name:>11} {cpu:7.1f} {cpu / plain_cpu:8.3f} {wall:7.1f} {wall / plain_wall:8.3f}"
              f" {rtf:5.2f}x")  # fmt: skip
    if sizes:
        print(f"recording: {statistics.median(sizes) / 1e6:.1f} MB ({args.ticks} ticks)")
    if args.base:
        print(f"recording, {args.base}'s time over this tree's: {_ratio(times, 'base_record')}")
        if args.listen:
            ratio = _ratio(times, "base_listen", "listen")
            print(f"listened to, {args.base}'s time over this tree's: {ratio}")
    return 0


def _ratio(times: dict, base: str, this: str = "record") -> str:
    """``base``'s CPU and wall time over ``this``'s: medians and ranges over the rounds
    (paired; on a loaded machine the CPU time is the steadier of the two)."""
    out = []
    for what, k in (("cpu", 0), ("wall", 1)):
        pairs = [b[k] / r[k] for r, b in zip(times[this], times[base], strict=True)]
        low, high = min(pairs), max(pairs)
        out.append(f"{what} {statistics.median(pairs):.2f}x (range {low:.2f}-{high:.2f})")
    return ", ".join(out)


if __name__ == "__main__":
    raise SystemExit(main())
