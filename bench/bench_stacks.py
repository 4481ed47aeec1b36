"""Benchmark of the three ways to run, side by side: robots x stack -> real-time factor, CPU time
per tick, peak RSS (and per robot), with the machine's load average.

Stacks: ``embedded`` (``maes_run``: one process, lockstep), ``launch`` (``ros2 launch
maes_bringup multi_robot.launch.py``: a process per node, lockstep, the simulator's SLAM and the
built-in navigator), ``composed`` (the same launch with ``use_composition:=true``: the whole
stack in one ``maes_run`` process, its parts handed their data in-process), ``container`` (the
same with ``nav2_api:=true`` too, which keeps the simulator and the navigator apart: the
controllers alone in one ``controller_container``, over DDS), ``direct`` (no ROS), ``core``
(the simulator alone, no logic and no navigator: ``bench/bench_wander.py``'s reactive
wanderers, commanded through ``Simulation.set_velocities``; what the stacks above add is their
cost). Each case runs the
example explorer (``core``: the wanderers) on the config's map (maes_config.yaml's building)
for a fixed number of ticks, unpaced, in its own process tree:

* real-time factor: simulated seconds per wall second from the first tick on (the run's
  summary.json: start-up and compiling excluded);
* CPU per tick: user + system CPU time of the whole process tree (start-up included) over the
  ticks, so it also counts what runs on the second core;
* peak RSS: the largest sum of the tree's resident sets, sampled every 0.2 s.

The machine's load average (1 min) is printed before each case: on a shared machine the figures
are noisy, and only runs of one session, alternated, compare. The ROS stacks need a ROS domain
of their own::

    ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST ROS_DOMAIN_ID=95 \\
        flock -n /tmp/maes-ros-domain-95.lock \\
        scripts/with_env python bench/bench_stacks.py --robots 1 5 20 --stacks embedded launch
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import psutil
import yaml

REPO = Path(__file__).resolve().parents[1]
STACKS = ("core", "direct", "embedded", "composed", "container", "launch")


def _command(stack: str, config: Path, results: Path, ticks: int) -> list[str]:
    if stack == "core":
        return [sys.executable, __file__, "--core-run", str(config), str(results), str(ticks)]
    if stack == "embedded":
        return [
            sys.executable,
            *("-m", "maes_bringup.runners.embedded", "--config", str(config)),
            *("--real-time-factor", "0", "--max-ticks", str(ticks), "--results", str(results)),
        ]
    if stack == "direct":
        return [
            sys.executable,
            *("-m", "maes_bringup.runners.direct_cli", "--config", str(config)),
            *("--max-ticks", str(ticks), "--results", str(results)),
        ]
    # the launch ends with the run (the config's end_criteria.tick), its results in the config's
    # statistics_result_path. "composed": the whole stack in one process; "container": the
    # controllers alone in one process (Nav2's task interface keeps the navigator apart).
    composed = {
        "composed": ("use_composition:=true",),
        "container": ("use_composition:=true", "nav2_api:=true"),
    }.get(stack, ())
    return [
        "ros2",
        *("launch", "maes_bringup", "multi_robot.launch.py", f"config:={config}"),
        *("real_time_factor:=0", "slam:=simulated", "nav:=builtin", *composed),
    ]


def _tree_rss(proc: psutil.Process) -> int:
    total = 0
    try:
        family = [proc, *proc.children(recursive=True)]
    except psutil.Error:
        return 0
    for p in family:
        with contextlib.suppress(psutil.Error):  # a process that ended meanwhile
            total += p.memory_info().rss
    return total


def run_case(stack: str, robots: int, ticks: int, base: dict, tmp: Path) -> dict:
    """One run of ``stack`` with ``robots`` robots for ``ticks`` ticks; its figures."""
    out = tmp / f"{stack}_{robots}"
    cfg = dict(base, number_of_robots=robots)
    cfg["end_criteria"] = {"exploration_percent": None, "coverage_percent": None, "tick": ticks}
    cfg["global_settings"] = dict(base.get("global_settings", {}), statistics_result_path=str(out))
    path = tmp / f"{stack}_{robots}.yaml"
    path.write_text(yaml.safe_dump(cfg))
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    log = (tmp / f"{stack}_{robots}.log").open("w")
    proc = subprocess.Popen(
        _command(stack, path, out, ticks), stdout=log, stderr=subprocess.STDOUT, cwd=tmp
    )
    watched, peak = psutil.Process(proc.pid), 0
    while proc.poll() is None:
        peak = max(peak, _tree_rss(watched))
        time.sleep(0.2)
    log.close()
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    runs = sorted(out.glob("*/summary.json")) if out.exists() else []
    if proc.returncode != 0 or not runs:
        tail = (tmp / f"{stack}_{robots}.log").read_text().strip().splitlines()[-2:]
        return {"error": f"exit {proc.returncode}: {' | '.join(tail)}"}
    summary = json.loads(runs[-1].read_text())
    rtf = summary.get("real_time_factor_achieved")
    if rtf is None and summary.get("wall_time_s"):  # direct mode, core: their wall time alone
        tick_s = base.get("global_settings", {}).get("logic_ticks_delta_millis", 100) / 1000.0
        rtf = summary["ticks"] * tick_s / summary["wall_time_s"]
    return {
        "ticks": summary["ticks"],
        "rtf": rtf,
        "cpu_ms_per_tick": 1000.0 * cpu / max(summary["ticks"], 1),
        "peak_rss_mib": peak / 2**20,
        "explored": summary["final"]["exploration_percent"],
    }


def core_run(config: Path, results: Path, ticks: int) -> None:
    """The ``core`` stack's process: ``ticks`` ticks of the wanderers on ``config``, its
    summary.json as the other stacks write theirs (ticks, wall time from the first tick)."""
    sys.path[:0] = [
        str(REPO / "bench"),
        *(str(REPO / "src" / p) for p in ("maes_common", "maes_sim")),
    ]
    from bench_wander import beam_angles, wander

    from maes_sim.core import Simulation, load_config

    cfg = load_config(config)
    tile = float(cfg.world.tile_size)
    warm = Simulation(cfg, seed=1)  # JIT and disk caches load here, not in the timed ticks
    warm.step()
    sim = Simulation(cfg)
    angles = beam_angles(sim.lidar_ranges.shape[1])
    start = time.perf_counter()
    for _ in range(ticks):
        linear, angular = wander(sim.lidar_ranges * tile, angles)
        sim.set_velocities(linear / tile, angular)
        sim.step()
    wall = time.perf_counter() - start
    run = results / "core"
    run.mkdir(parents=True, exist_ok=True)
    summary = {
        "ticks": sim.tick,
        "wall_time_s": wall,
        "final": {"exploration_percent": sim.metrics.exploration_percent},
    }
    (run / "summary.json").write_text(json.dumps(summary))


def main(argv: list[str] | None = None) -> int:
    if argv is None and sys.argv[1:2] == ["--core-run"]:
        core_run(Path(sys.argv[2]), Path(sys.argv[3]), int(sys.argv[4]))
        return 0
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--robots", type=int, nargs="+", default=[1, 5, 20, 50, 120])
    parser.add_argument("--stacks", nargs="+", choices=STACKS, default=list(STACKS))
    parser.add_argument("--ticks", type=int, default=300, help="logic ticks per case")
    parser.add_argument("--config", default=str(REPO / "maes_config.yaml"))
    parser.add_argument(
        "--keep",
        default=None,
        metavar="DIR",
        help="keep each case's config, log and results folder in DIR (default: a temporary "
        "folder, removed at the end)",
    )
    args = parser.parse_args(argv)
    base = yaml.safe_load(Path(args.config).read_text())
    print(f"cores {os.cpu_count()}, {args.ticks} ticks per case, config {args.config}")
    print(
        f"{'robots':>6} {'stack':>8} {'load1':>5} {'RTF':>8} {'CPU ms/tick':>11} "
        f"{'peak RSS MiB':>12} {'MiB/robot':>9} {'explored':>8}",
        flush=True,
    )
    if args.keep:
        Path(args.keep).mkdir(parents=True, exist_ok=True)
    with contextlib.nullcontext(args.keep) if args.keep else tempfile.TemporaryDirectory() as tmp:
        for n in args.robots:
            for stack in args.stacks:
                load = os.getloadavg()[0]
                r = run_case(stack, n, args.ticks, base, Path(tmp))
                head = f"{n:>6} {stack:>8} {load:5.2f}"
                if "error" in r:
                    print(f"{head} failed: {r['error']}", flush=True)
                    continue
                rtf = f"{r['rtf']:7.2f}x" if r["rtf"] is not None else "      - "
                print(
                    f"{head} {rtf} {r['cpu_ms_per_tick']:11.1f} {r['peak_rss_mib']:12.0f} "
                    f"{r['peak_rss_mib'] / n:9.1f} {r['explored']:7.1f}%",
                    flush=True,
                )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
