"""The embedded stack in one process: ``make run`` / ``maes_run``.

The simulator node, the built-in navigator and one controller node per robot share one rclpy
executor (real DDS topics, services and actions between them, as on the full stack), with the
simulator's own SLAM. The run ends at the config's end criteria or on Ctrl-C; either way the
results folder is written and its path printed.

Usage::

    maes_run [--config maes_config.yaml] [--controllers builtin|none] [--logic pkg.mod:fn]
             [--real-time-factor 1.0] [--results DIR] [--max-ticks N]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from maes_sim.core import ConfigError, MapError, Simulation, load_config

DEFAULT_LOGIC = "maes_controller.logic:logic"


class Progress:
    """One live status line (rewritten in place on a terminal, a line every few seconds in
    logs): tick, sim time, real-time factor, exploration and coverage."""

    def __init__(self, stream=None, every_s: float = 0.5, log_every_s: float = 5.0):
        self.stream = stream if stream is not None else sys.stderr
        self.tty = self.stream.isatty()
        self.every = every_s if self.tty else log_every_s
        self._last = 0.0

    @staticmethod
    def line(sim, rtf: float) -> str:
        """The status text for ``sim`` now."""
        end = sim.config.end_criteria
        goal = f"/{end.exploration_percent:g}" if end.exploration_percent is not None else ""
        return (f"tick {sim.tick:6d} | sim {sim.sim_time:7.1f} s | {rtf:5.2f}x real time | "
                f"explored {sim.exploration_percent:5.1f}{goal} % | "
                f"covered {sim.coverage_percent:5.1f} %")

    def update(self, sim, rtf: float, force: bool = False) -> None:
        now = time.monotonic()
        if not force and now - self._last < self.every:
            return
        self._last = now
        text = self.line(sim, rtf)
        if self.tty:
            self.stream.write("\r" + text)
        else:
            self.stream.write(text + "\n")
        self.stream.flush()

    def close(self) -> None:
        if self.tty:
            self.stream.write("\n")
            self.stream.flush()


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="maes_run", description=__doc__.splitlines()[0])
    parser.add_argument("--config", default="maes_config.yaml",
                        help="the run's maes_config.yaml (default: ./maes_config.yaml)")
    parser.add_argument("--controllers", choices=("builtin", "none"), default="builtin",
                        help="'none' starts no controllers: drive the robots from your own "
                             "controller processes (e.g. a MAES 2.0 controller)")
    parser.add_argument("--logic", default=DEFAULT_LOGIC,
                        help=f"logic callback 'package.module:function' (default {DEFAULT_LOGIC})")
    parser.add_argument("--real-time-factor", type=float, default=1.0,
                        help="sim seconds per wall second; 0 = as fast as possible")
    parser.add_argument("--results", default=None,
                        help="parent folder of the results (default: the config's "
                             "statistics_result_path, results/)")
    parser.add_argument("--max-ticks", type=int, default=None,
                        help="stop after this many ticks even if no end criterion is met")
    parser.add_argument("--seed", type=int, default=None, help="override random_seeds[0]")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    """Run the embedded stack; returns the process exit code."""
    args = parse_args(argv)
    # Everything that can be wrong with the input is checked before any node exists.
    try:
        config = load_config(args.config)
        sim = Simulation(config, seed=args.seed)
        logic = None
        if args.controllers == "builtin":
            from maes_controller.robot_api import load_logic

            logic = load_logic(args.logic)
    except (ConfigError, MapError, ValueError) as exc:
        print(f"maes_run: {exc}", file=sys.stderr)
        return 2
    del logic  # imported only to fail early; each controller node loads it by name

    import rclpy
    from rclpy.executors import ExternalShutdownException, SingleThreadedExecutor

    from maes_controller.controller_node import ControllerNode
    from maes_controller.navigator_node import NavigatorNode
    from maes_sim.core import write_run_results
    from maes_sim.ros.sim_node import SimNode

    results_parent = args.results or config.global_settings.statistics_result_path
    rclpy.init()
    nodes = []
    progress = Progress()
    wall0, tick0 = time.monotonic(), sim.tick
    interrupted = False
    sim_node = None
    try:
        sim_node = SimNode(sim, real_time_factor=args.real_time_factor, results_dir=results_parent)
        # the runner writes the full results folder itself (also on Ctrl-C)
        sim_node.write_results_on_finish = False
        nodes.append(sim_node)
        nodes.append(NavigatorNode(config))
        if args.controllers == "builtin":
            nodes.extend(ControllerNode(robot_id=i, logic=args.logic)
                         for i in range(sim.n_robots))
        # (rclpy's experimental EventsExecutor was measured 2.5x slower here with 50 robots)
        executor = SingleThreadedExecutor()
        for node in nodes:
            executor.add_node(node)
        print(f"maes_run: {sim.n_robots} robots on {sim.world.name} "
              f"({sim.shape[1]}x{sim.shape[0]} tiles), seed {sim.seed}, "
              f"controllers: {args.controllers if args.controllers == 'none' else args.logic}",
              file=sys.stderr)
        wall0, tick0 = time.monotonic(), sim.tick
        while rclpy.ok() and not sim_node.done:
            executor.spin_once(timeout_sec=0.05)
            progress.update(sim, sim_node.achieved_real_time_factor)
            if args.max_ticks is not None and sim.tick >= args.max_ticks:
                break
    except (KeyboardInterrupt, ExternalShutdownException):
        interrupted = True
    finally:
        progress.update(sim, sim_node.achieved_real_time_factor if sim_node else 0.0,
                        force=True)
        progress.close()
        reason = sim.end_reason or ("interrupted (Ctrl-C)" if interrupted
                                    else f"stopped at --max-ticks {args.max_ticks}")
        wall = time.monotonic() - wall0
        rtf = (sim.tick - tick0) * sim.tick_duration / wall if wall > 0 else 0.0
        out = write_run_results(sim, results_parent, extra_summary={
            "stack": "embedded", "controllers": args.controllers,
            "logic": args.logic if args.controllers == "builtin" else None,
            "config_file": str(Path(args.config).resolve()), "stopped_because": reason,
            "wall_time_s": round(wall, 3), "real_time_factor_achieved": round(rtf, 3)})
        for node in nodes:
            node.destroy_node()
        if rclpy.ok():
            rclpy.shutdown()
        print(f"maes_run: {reason}; results in {out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
