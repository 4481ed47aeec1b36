"""The embedded stack in one process: ``make run`` / ``maes_run``.

With the built-in controllers (the default) every robot's controller and navigator run in the
simulator's process and are handed their data in-process, in lockstep's order
(:mod:`maes_bringup.runners.in_process`): the run equals direct mode's to the bit, and the
simulator node publishes each robot's topics only while someone outside listens (RViz, Foxglove,
a recorder, your own node). With ``--controllers none`` your controllers join over DDS, as on
the full stack: the simulator node and the built-in navigator share one rclpy executor here,
and every tick waits for them all. The run ends at the config's end criteria or on Ctrl-C;
either way the results folder is written and its path printed.

Usage::

    maes_run [--config maes_config.yaml] [--controllers builtin|none] [--logic pkg.mod:fn]
             [--slam simulated|occupancy]
             [--real-time-factor 1.0] [--sync lockstep|free] [--sync-timeout S]
             [--start-timeout S] [--join-grace S] [--results DIR] [--max-ticks N] [--verbose]
             [--nav2-api auto|on|off]
             [--record run.mcap] [--live [PORT]] [--live-host HOST] [--keep-going]
             [--domain auto|N] [--ros-args ...]

The run is in lockstep (docs/lockstep.md): every tick waits until the navigator and the
controllers have handled the last one, so the result does not depend on the machine's speed or
load, and ``--real-time-factor`` only caps the speed. With ``--controllers none``, ``--sync
free`` lets the simulator run on the wall clock alone (results then depend on the machine).

``--record run.mcap`` writes everything the simulator publishes to an MCAP file in rosbag2's
format; ``--live`` serves a page to watch the run in a web browser at http://127.0.0.1:8765/
(the run prints ``maes_run: watch at http://...``) and Foxglove or Lichtblick on the same port
(docs/watching.md, docs/live_view.md). Neither changes the run's result.

Before it starts anything, the run looks for another MAES-ROS run (a simulator or a built-in
navigator) on its ROS domain: found, it stops with one line naming the domain (exit code 3),
since two runs on one domain mix their robots' traffic; ``--domain auto`` picks a free domain
instead and says which (``maes_common.domain``).

ROS arguments after ``--ros-args`` (up to a lone ``--``) go to rclpy, as for any ROS
executable: ``--ros-args --log-level debug``. This is how ``ros2 launch ...
use_composition:=true`` starts this stack as its one process (docs/ros_launch.md).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import signal
import sys
import time
import traceback
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from maes_sim.core import SimConfig, Simulation
    from maes_sim.ros.outputs import Tap


class Progress:
    """One live status line (rewritten in place on a terminal, a line every few seconds in
    logs): tick, sim time, real-time factor, exploration and coverage, and once they happen
    the logic's failures and the robots' stalls (``maes_sim.core.stalls``)."""

    def __init__(self, stream=None, every_s: float = 0.5, log_every_s: float = 5.0):
        self.stream = stream if stream is not None else sys.stderr
        self.tty = self.stream.isatty()
        self.every = every_s if self.tty else log_every_s
        self._last = 0.0

    @staticmethod
    def line(sim, rtf: float, logic_failures: int = 0) -> str:
        """The status text for ``sim`` now (with the logic's failures so far, once there are)."""
        end = sim.config.end_criteria
        goal = f"/{end.exploration_percent:g}" if end.exploration_percent is not None else ""
        failures = f" | logic failures {logic_failures}" if logic_failures else ""
        stalls = sim.stalls
        if stalls.count:
            failures += f" | stalls {stalls.count} ({int(stalls.stalled.sum())} now)"
        return (
            f"tick {sim.tick:6d} | sim {sim.sim_time:7.1f} s | {rtf:5.2f}x real time | "
            f"explored {sim.exploration_percent:5.1f}{goal} % | "
            f"covered {sim.coverage_percent:5.1f} %{failures}"
        )

    def update(self, sim, rtf: float, force: bool = False, logic_failures: int = 0) -> None:
        now = time.monotonic()
        if not force and now - self._last < self.every:
            return
        self._last = now
        text = self.line(sim, rtf, logic_failures)
        if self.tty:
            self.stream.write("\r" + text)
        else:
            self.stream.write(text + "\n")
        self.stream.flush()

    def close(self) -> None:
        if self.tty:
            self.stream.write("\n")
            self.stream.flush()


def nav2_robots(text: str, controllers: str, n: int) -> bool | list[int]:
    """``--nav2-api``'s value: True/False for every robot, or the robot indices.

    Examples
    --------
    >>> nav2_robots("auto", "none", 3), nav2_robots("auto", "builtin", 3)
    (True, False)
    >>> nav2_robots("0,2", "builtin", 3)
    [0, 2]
    >>> nav2_robots("5", "none", 3)
    Traceback (most recent call last):
    ...
    ValueError: --nav2-api: robot 5 is not in 0..2
    """
    if text in ("auto", "on", "off"):
        return text == "on" or (text == "auto" and controllers == "none")
    try:
        robots = [int(part) for part in text.split(",")]
    except ValueError:
        raise ValueError(
            f"--nav2-api: got {text!r}, expected auto, on, off or robot indices like 0,2"
        ) from None
    for i in robots:
        if not 0 <= i < n:
            raise ValueError(f"--nav2-api: robot {i} is not in 0..{n - 1}")
    return robots


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    # numpy, numba: imported after the signal handler
    from maes_common.contract import DEFAULT_LOGIC
    from maes_sim.core import SIMULATOR_SLAM_MODES

    parser = argparse.ArgumentParser(prog="maes_run", description=__doc__.splitlines()[0])
    parser.add_argument(
        "--config",
        default="maes_config.yaml",
        help="the run's maes_config.yaml (default: ./maes_config.yaml)",
    )
    parser.add_argument(
        "--controllers",
        choices=("builtin", "none"),
        default="builtin",
        help="'none' starts no controllers: drive the robots from your own "
        "controller processes (e.g. a MAES 2.0 controller)",
    )
    parser.add_argument(
        "--nav2-api",
        default="auto",
        metavar="auto|on|off|I,J,...",
        help="serve Nav2's whole task interface (docs/nav2_task_api.md), not only "
        "navigate_to_pose: on for every robot, or for the robots of these indices only; "
        "auto (default): on with --controllers none, off otherwise",
    )
    parser.add_argument(
        "--logic",
        default=DEFAULT_LOGIC,
        help="logic callback 'package.module:function' or 'path/file.py:function' "
        f"(default {DEFAULT_LOGIC})",
    )
    parser.add_argument(
        "--slam",
        choices=SIMULATOR_SLAM_MODES,
        default=None,
        help="who maps, replacing the config's stack.slam: 'simulated' (the simulator's "
        "SLAM) or 'occupancy' (occupancy grids from each robot's own scans)",
    )
    parser.add_argument(
        "--real-time-factor",
        type=float,
        default=1.0,
        help="most sim seconds per wall second (only the speed, never the result); "
        "0 = as fast as lockstep allows",
    )
    parser.add_argument(
        "--sync",
        choices=("lockstep", "free"),
        default="lockstep",
        help="--controllers none: lockstep (default): each tick waits for the navigator and "
        "the controllers, results independent of the machine; free: the simulator runs on "
        "the wall clock alone (machine-dependent). The built-in controllers run in this "
        "process, always in lockstep",
    )
    parser.add_argument(
        "--sync-timeout",
        type=float,
        default=10.0,
        help="--controllers none, lockstep: wall seconds between warnings about a late "
        "participant still running (it is waited for); one whose node is gone is dropped "
        "within a second (default 10; 0 = never checked, wait for ever)",
    )
    parser.add_argument(
        "--start-timeout",
        type=float,
        default=None,
        help="--controllers none: start without the robots' missing controllers once S wall "
        "seconds passed in which none arrived (default: wait for every one for ever)",
    )
    parser.add_argument(
        "--keep-going",
        action="store_true",
        help=f"run on when the logic raised on every call of the first {ALL_FAILED_TICKS} "
        f"ticks (by default the run stops there; either way it exits {LOGIC_FAILED_EXIT})",
    )
    parser.add_argument(
        "--join-grace",
        type=float,
        default=10.0,
        metavar="S",
        help="--controllers none: a node reading a robot's maes_state that has not joined "
        "lockstep (a MAES 2.0 controller) drives that robot, outside lockstep, once it has "
        "waited S wall seconds (default 10; docs/lockstep.md)",
    )
    parser.add_argument(
        "--verbose",
        action="store_true",
        help="--controllers none: the navigator logs every navigation goal (by default only "
        "failures)",
    )
    parser.add_argument(
        "--results",
        default=None,
        help="parent folder of the results (default: the config's "
        "statistics_result_path, results/)",
    )
    parser.add_argument(
        "--max-ticks",
        type=int,
        default=None,
        help="stop after this many ticks even if no end criterion is met",
    )
    parser.add_argument("--seed", type=int, default=None, help="override random_seeds[0]")
    parser.add_argument(
        "--record",
        default=None,
        metavar="PATH",
        help="record the simulator's topics to PATH: a .mcap file, or else a rosbag2 bag "
        "folder (rosbag2's MCAP format; docs/live_view.md)",
    )
    parser.add_argument(
        "--live",
        type=int,
        nargs="?",
        const=8765,
        default=None,
        metavar="PORT",
        help="serve a page to watch the run in a web browser at http://HOST:PORT/ and, on the "
        "same port, Foxglove / Lichtblick (default port 8765; 0: a free one)",
    )
    parser.add_argument(
        "--domain",
        default=None,
        metavar="auto|N",
        help="the ROS domain to run on (default: ROS_DOMAIN_ID, else 0); 'auto': that one if "
        "no other MAES-ROS run uses it, else a free one (the run says which)",
    )
    parser.add_argument(
        "--live-host",
        default="127.0.0.1",
        help="address the live view binds (default 127.0.0.1, this machine only; "
        "0.0.0.0 serves the network)",
    )
    if argv is None:
        argv = sys.argv[1:]
    # With ROS arguments, rclpy gets the whole command line and reads its --ros-args parts;
    # argparse gets the rest, as rcl splits them (rclpy.utilities.remove_ros_args).
    ros_argv = None
    if "--ros-args" in argv:
        from rclpy.utilities import remove_ros_args

        ros_argv = ["maes_run", *argv]
        argv = remove_ros_args(ros_argv)[1:]
    args = parser.parse_args(argv)
    args.ros_argv = ros_argv
    return args


def _executor():
    """The run's executor: :func:`maes_common.process.events_executor` (one home)."""
    from maes_common.process import events_executor

    return events_executor()


def _signal_exit_code(signum: int) -> int:
    """Exit code of a run stopped by a signal before a simulation existed (no results): 128 +
    the signal's number, the shell's convention (130 for SIGINT, 143 for SIGTERM)."""
    return 128 + int(signum)


#: Exit code when an unexpected error inside a node ended the run (results are still written).
INTERNAL_ERROR_EXIT = 1
#: Exit code of a run whose logic raised on every call (results are still written).
LOGIC_FAILED_EXIT = 3
#: A run whose logic raised on every call of this many ticks stops (unless ``--keep-going``).
ALL_FAILED_TICKS = 20
#: Exit code when another MAES-ROS run uses the ROS domain (nothing was started).
DOMAIN_BUSY_EXIT = 4


class StopSignals:
    """SIGINT / SIGTERM handler of ``maes_run``: remember the first, never lose the results.

    The handler never raises: an exception thrown into numba's compiler or rclpy's C++ (where
    a signal lands at any bytecode) comes out as another error, or a traceback. It records the
    first signal; start-up stops at its next step (:meth:`check`: after loading the config,
    after each kernel a first run compiles, after building the world, after building the
    nodes), the run loop within 50 ms. Later signals (a double Ctrl-C while the results are
    written) are counted and otherwise ignored, with a one-line note: the results folder is
    always complete.

    "First" is the first to arrive (:class:`maes_common.process.SignalArrivals`): Python runs
    the handlers of signals that arrived during one long C call in the order of their numbers.
    """

    def __init__(self) -> None:
        self.signum: int | None = None
        self.received = 0
        self.starting = True
        self._previous: dict[int, Any] = {}
        self._arrivals: Any = None  # a SignalArrivals once installed

    @property
    def signal_name(self) -> str | None:
        """``"SIGINT"`` or ``"SIGTERM"`` once one arrived, else None."""
        return None if self.signum is None else signal.Signals(self.signum).name

    def install(self) -> None:
        """Handle SIGINT and SIGTERM, except one the parent set to be ignored (``nohup``, a
        background job of a script), which stays ignored. From the main thread only."""
        for sig in (signal.SIGINT, signal.SIGTERM):
            if signal.getsignal(sig) is not signal.SIG_IGN:
                self._previous[sig] = signal.signal(sig, self)
        if self._previous and self._arrivals is None:
            # (numpy comes with maes_common: imported once the handlers are in place)
            from maes_common.process import SignalArrivals

            self._arrivals = SignalArrivals()
            self._arrivals.open()

    def check(self) -> None:
        """Raise ``KeyboardInterrupt`` (start-up: stop here) once a signal arrived."""
        if self.signum is not None:
            raise KeyboardInterrupt

    def restore(self) -> None:
        for sig, handler in self._previous.items():
            signal.signal(sig, handler)
        self._previous.clear()
        if self._arrivals is not None:
            self._arrivals.close()
            self._arrivals = None

    def __call__(self, signum: int, frame: object) -> None:
        self.received += 1
        first = self._arrivals.first(signum) if self._arrivals is not None else signum
        if self.signum is None:
            self.signum = first
            if self.starting:
                os.write(2, b"\nmaes_run: stopping once the current start-up step ends\n")
        elif self.received == 2:
            os.write(2, b"\nmaes_run: stopping; the results are being written, please wait\n")


def main(argv: list[str] | None = None) -> int:
    """Run the embedded stack; returns the process exit code.

    0 when the run ended (end criterion, ``--max-ticks``, or a stop signal: the results folder
    is complete either way, ``summary.json``'s ``stopped_because`` says which); 3 when the
    logic raised on every call (a line says so; the results are written); 2 for a bad
    config, map or logic spec; 4 when another MAES-ROS run uses the ROS domain (nothing
    started); 128 + the signal's number (130, 143) when a signal came before
    the simulation existed (nothing to write); 1 when an unexpected error inside a node ended
    the run (its traceback logged, the results written), or when the nodes' teardown hung
    for ``MAES_TEARDOWN_LIMIT_S`` seconds (default 30) after the results were written
    (``Timeout (0:00:30)!`` and the stack printed; maes_common.process.teardown_limit).
    Run as the program (``argv`` None), nodes holding more DDS reader-writer pairs than
    ``MAES_QUICK_EXIT_PAIRS`` are not destroyed one by one: the process ends at once with its
    code, after the results and the recording (maes_common.process.quick_exit_due).
    """
    stop = StopSignals()
    stop.install()
    # As the program (the command line's arguments), a run whose nodes hold very many DDS
    # endpoints ends without destroying them one by one (maes_common.process.quick_exit_due):
    # after the results and the recording are written, the process ends at once.
    ending: dict[str, Any] | None = {} if argv is None else None
    try:
        code = _main(argv, stop, ending)
        if ending and ending.get("endpoints") is not None:
            from maes_common.process import end_process_now

            stop.restore()
            end_process_now("maes_run", ending["endpoints"], code)
        return code
    except KeyboardInterrupt:
        if stop.signum is None:
            raise
        print(f"maes_run: interrupted ({stop.signal_name}) before the run started", file=sys.stderr)
        return _signal_exit_code(stop.signum)
    finally:
        stop.restore()
        if argv is None:  # the program: what is left is the interpreter's exit
            from maes_common.process import skip_exit_collection

            skip_exit_collection()


def _main(argv: list[str] | None, stop: StopSignals, ending: dict | None = None) -> int:
    """``ending``: a dict when the process may end without destroying its nodes (``main``
    as the program); ``ending["endpoints"]`` is then set when it should."""
    args = parse_args(argv)
    args.ending = ending
    # Modules are imported here, after the signal handler is in place: a Ctrl-C while numpy,
    # numba and rclpy load ends quietly too.
    try:
        probe, domain_lock = _claim_domain(args.domain)
    except (ValueError, RuntimeError) as exc:
        print(f"maes_run: {exc}", file=sys.stderr)
        return 2
    try:
        return _checked_main(args, stop, probe)
    finally:
        if probe is not None:
            probe.close()
        if domain_lock is not None:
            domain_lock.close()


def _claim_domain(request: str | None):
    """The run's ROS domain: ``(probe, lock)``. With ``--domain auto`` the domain is chosen
    now (and ``lock`` holds it); otherwise ``probe`` watches the domain while the config loads
    and the world is built, and is finished before any node exists."""
    from maes_common.domain import DomainProbe, choose_domain, current_domain, parse_domain

    if request is not None and request != "auto":
        os.environ["ROS_DOMAIN_ID"] = str(parse_domain(request))
    if request != "auto":
        return DomainProbe(current_domain()), None
    preferred = current_domain()
    domain, found, lock = choose_domain(preferred)
    if domain != preferred:
        os.environ["ROS_DOMAIN_ID"] = str(domain)
        print(
            f"maes_run: ROS domain {preferred} is in use by another MAES-ROS run "
            f"({', '.join(found)}); this run uses ROS domain {domain} (start its controllers "
            f"and tools with ROS_DOMAIN_ID={domain})",
            file=sys.stderr,
        )
    return None, lock


def _checked_main(args: argparse.Namespace, stop: StopSignals, probe) -> int:
    """``_main`` once the domain is settled: load and check the input, then run."""
    from maes_common.jit import stop_between_compiles
    from maes_common.process import teardown_limit_seconds
    from maes_sim.core import ConfigError, MapError, Simulation, load_config, with_slam

    # Everything that can be wrong with the input is checked before any node exists.
    try:
        stop.check()
        config = load_config(args.config)
        if args.slam and args.slam != config.stack.slam:
            config = with_slam(config, args.slam)
        stop.check()
        with stop_between_compiles(stop.check):  # a first run compiles here: stop in between
            sim = Simulation(config, seed=args.seed)
        stop.check()
        args.nav2_api = nav2_robots(args.nav2_api, args.controllers, sim.n_robots)
        if args.controllers == "builtin" and args.nav2_api:
            raise ValueError(
                "--nav2-api serves Nav2's task interface to scripts that drive the robots: "
                "use it with --controllers none (the built-in controllers drive them in this "
                "process)"
            )
        args.teardown_limit = teardown_limit_seconds()  # a bad MAES_TEARDOWN_LIMIT_S
        logic = None
        if args.controllers == "builtin":
            from maes_controller.robot_api import load_logic

            logic = load_logic(args.logic)
    except (ConfigError, MapError, ValueError) as exc:
        print(f"maes_run: {exc}", file=sys.stderr)
        return 2
    del logic  # imported only to fail early; each controller node loads it by name
    if probe is not None:
        from maes_common.domain import busy_message, current_domain

        found = probe.finish()
        if found:
            print(busy_message("maes_run", current_domain(), found), file=sys.stderr)
            return DOMAIN_BUSY_EXIT
    tap = None
    if args.record or args.live is not None:
        from maes_sim.ros.outputs import build_tap

        try:
            tap = build_tap(
                args.record,
                args.live is not None,
                args.live_host,
                args.live if args.live is not None else 0,
                say=lambda text: print(f"maes_run: {text}", file=sys.stderr),
            )
        except (ValueError, OSError, RuntimeError, ImportError) as exc:
            print(f"maes_run: {exc}", file=sys.stderr)
            return 2
    try:
        return _run(args, stop, config, sim, tap)
    finally:
        if tap is not None:  # also on Ctrl-C: the recording gets its summary and footer
            tap.close()
            if args.record:
                print(f"maes_run: recording written to {args.record}", file=sys.stderr)


def _run(
    args: argparse.Namespace,
    stop: StopSignals,
    config: SimConfig,
    sim: Simulation,
    tap: Tap | None,
) -> int:
    """Build the nodes, run until the end, write the results (``_main``'s second half)."""
    if sys.stderr.isatty() and "RCUTILS_CONSOLE_OUTPUT_FORMAT" not in os.environ:
        # Each log line first clears the progress line it would otherwise be glued to.
        os.environ["RCUTILS_CONSOLE_OUTPUT_FORMAT"] = "\r\x1b[K[{severity}] [{name}]: {message}"
    import rclpy
    from rclpy.executors import ExternalShutdownException
    from rclpy.signals import SignalHandlerOptions

    from maes_common.process import destroy_nodes, quick_exit_due, teardown_limit
    from maes_controller.nodes.navigator_node import NavigatorNode
    from maes_sim.core import write_run_results
    from maes_sim.ros.sim_node import SimNode

    results_parent = args.results or config.global_settings.statistics_result_path
    # Our handler alone sees the signals: rclpy's would shut the context down under the nodes.
    # ROS arguments (``--ros-args --log-level debug``) only when given
    rclpy.init(args=args.ros_argv, signal_handler_options=SignalHandlerOptions.NO)
    nodes = []
    progress = Progress()
    wall0, tick0 = time.monotonic(), sim.tick
    error: BaseException | None = None
    sim_node = None
    executor = None
    logic_stop = False  # the logic raised on every call of the first ALL_FAILED_TICKS ticks
    try:
        builtin = args.controllers == "builtin"
        if builtin:
            # The robots run in this process (runners/in_process.py): the node only publishes
            # for outside listeners and serves the services; the driver steps it.
            sim_node = SimNode(
                sim,
                real_time_factor=args.real_time_factor,
                steps_itself=False,
                results_dir=results_parent,
                tap=tap,
            )
        else:
            start_timeout = args.start_timeout
            if start_timeout is not None and start_timeout <= 0:
                start_timeout = None
            sim_node = SimNode(
                sim,
                real_time_factor=args.real_time_factor,
                sync=args.sync,
                sync_timeout=args.sync_timeout,
                start_timeout=start_timeout,
                wait_for_navigator=True,
                wait_for_controllers="external",
                join_grace=args.join_grace,
                exclusive=True,  # behind the domain check: never start beside another simulator
                results_dir=results_parent,
                tap=tap,
            )
        # the runner writes the full results folder itself (also on Ctrl-C)
        sim_node.write_results_on_finish = False
        nodes.append(sim_node)
        if not builtin:
            # Nav2's whole task API when scripts drive the robots (docs/nav2_task_api.md); the
            # in-process nodes take part in this run only, whatever else is on the domain.
            nodes.append(
                NavigatorNode(
                    config,
                    verbose=args.verbose,
                    nav2_api=args.nav2_api,  # checked before any node exists
                    run_id=sim_node.admission.run_id,
                )
            )
        # rclpy's events executor wakes for each ready entity instead of rebuilding a wait set
        # of every entity for every batch: lockstep's short hops per tick made the wait-set
        # executor 6-8x slower (20 robots, 0.2x vs 1.6x real time; docs/lockstep.md).
        executor = _executor()
        for node in nodes:
            executor.add_node(node)
        print(
            f"maes_run: {sim.n_robots} robots on {sim.world.name} "
            f"({sim.shape[1]}x{sim.shape[0]} tiles), seed {sim.seed}, "
            f"controllers: {args.controllers if args.controllers == 'none' else args.logic}",
            file=sys.stderr,
        )
        if not builtin:
            joins = (
                "to join lockstep"
                if args.sync == "lockstep"
                else "to start (--sync free: then the run steps on the wall clock, never "
                "waiting for them)"
            )
            print(
                "maes_run: waiting for a controller on every robot "
                f"(/robot0 .. /robot{sim.n_robots - 1}) {joins}; start yours now "
                "(docs/running.md: 'Your own controller processes')",
                file=sys.stderr,
            )
        wall0, tick0 = time.monotonic(), sim.tick
        stop.starting = False  # from here on a signal ends the loop below
        stop.check()
        if builtin:
            logic_stop = _drive_in_process(args, sim, sim_node, executor, stop, progress)
        else:
            logic_stop = _drive_over_dds(args, sim, sim_node, executor, stop, progress)
    except KeyboardInterrupt:
        if stop.signum is None:
            raise
    except ExternalShutdownException:
        pass  # someone shut rclpy down: a normal end
    except Exception as exc:  # a bug in a node: keep what the run has, say what happened
        error = exc
        print(f"maes_run: internal error:\n{traceback.format_exc()}", file=sys.stderr)
    finally:
        stop.starting = False
        _show_progress(progress, sim, sim_node, force=True)
        progress.close()
        reason = _stop_reason(sim, stop, error, args.max_ticks)
        if logic_stop and not sim.end_reason:
            reason = (
                f"stopped: the logic raised on every call of the first {sim.tick} ticks "
                "(--keep-going runs on)"
            )
        if sim_node is not None and sim_node.conflict:
            reason = f"not started: {sim_node.conflict}"
        if sim_node is not None and sim_node.started_wall is not None:
            wall0 = sim_node.started_wall  # the run's speed: from its first tick on
        wall = time.monotonic() - wall0
        rtf = (sim.tick - tick0) * sim.tick_duration / wall if wall > 0 else 0.0
        out = write_run_results(
            sim,
            results_parent,
            extra_summary={
                "stack": "embedded",
                "controllers": args.controllers,
                "logic": args.logic if args.controllers == "builtin" else None,
                "config_file": str(Path(args.config).resolve()),
                "stopped_because": reason,
                "sync": args.sync,
                "lockstep_deadline_misses": sim_node.admission.deadline_misses if sim_node else 0,
                **(sim_node.admission.logic_summary() if sim_node else {}),
                "wall_time_s": round(wall, 3),
                "real_time_factor_achieved": round(rtf, 3),
            },
        )
        if sim_node is not None:
            # External controllers leave when they hear that the run is over.
            with contextlib.suppress(Exception):
                sim_node.announce_end(reason)
                sim_node.flush_announcements()
        # A hang in the middleware's teardown ends the process (exit code 1, its stack
        # printed) once the results are written: maes_common.process.teardown_limit.
        with teardown_limit(args.teardown_limit):
            # The executor first: rclpy's events executor keeps its nodes in use, and a node in
            # use is not destroyed but left on the graph (with the built-in controllers in this
            # process the simulator node is the only one, and a next run in the same process
            # found it there: "ROS domain ... is in use by another MAES-ROS run").
            if executor is not None:
                executor.shutdown()
            due = quick_exit_due(nodes) if args.ending is not None else None
            if due is not None:  # left for the process's end (main): minutes otherwise
                args.ending["endpoints"] = due
            else:
                # (a node may be half built after an early signal)
                destroy_nodes(nodes[::-1], quiet=True)
                if rclpy.ok():
                    rclpy.shutdown()
        print(f"maes_run: {reason}; results in {out}", file=sys.stderr)
        failed_always = sim_node is not None and sim_node.admission.logic_always_failed
        if sim_node is not None and sim_node.logic_failure_line():
            print(f"maes_run: {sim_node.logic_failure_line()}", file=sys.stderr)
    if error is not None:
        return INTERNAL_ERROR_EXIT
    if sim_node is not None and sim_node.conflict:
        return DOMAIN_BUSY_EXIT
    return LOGIC_FAILED_EXIT if failed_always else 0


def _show_progress(progress: Progress, sim: Simulation, sim_node: Any, force: bool = False) -> None:
    """The progress line's update: the tick, the achieved speed and the logic's failures (none
    while the simulator node is not built)."""
    progress.update(
        sim,
        sim_node.achieved_real_time_factor if sim_node else 0.0,
        force=force,
        logic_failures=int(sim_node.admission.logic_failures.sum()) if sim_node else 0,
    )


def _logic_always_failed(args: argparse.Namespace, sim_node: Any, tick: int) -> bool:
    """Whether the run should stop because the logic raised on every call so far (checked
    once per tick, right after the step: once calls were made, a later report can end "always
    failed", not start it)."""
    return (
        not args.keep_going and tick >= ALL_FAILED_TICKS and sim_node.admission.logic_always_failed
    )


def _drive_in_process(
    args: argparse.Namespace,
    sim: Simulation,
    sim_node: Any,
    executor: Any,
    stop: StopSignals,
    progress: Progress,
) -> bool:
    """Run the built-in controllers in this process until the run ends; True when it stopped
    because the logic always failed."""
    from maes_controller.robot_api import load_logic

    from .in_process import TeamDriver, robot_logger
    from .team import RobotTeam

    team = RobotTeam.start(sim, [load_logic(args.logic)] * sim.n_robots, logger=robot_logger)
    driver = TeamDriver(sim_node, team, executor, args.real_time_factor)
    driver.start()
    polled = 0.0
    while not sim_node.done and stop.signum is None:
        if sim_node.paused:  # the pause service
            driver.idle()
            continue
        if args.max_ticks is not None and sim.tick >= args.max_ticks:
            break
        driver.step()
        if _logic_always_failed(args, sim_node, sim.tick):
            return True
        driver.wait_until_due(lambda: stop.signum is not None)
        now = time.monotonic()
        if now - polled >= 0.1:
            polled = now
            _show_progress(progress, sim, sim_node)
    return False


def _drive_over_dds(
    args: argparse.Namespace,
    sim: Simulation,
    sim_node: Any,
    executor: Any,
    stop: StopSignals,
    progress: Progress,
) -> bool:
    """Spin the nodes (controllers in other processes join over DDS) until the run ends; True
    when it stopped because the logic always failed."""
    import rclpy

    from maes_common.process import SPIN_SLICE_S, SpinSlices

    # The executor spins until the next tick has been stepped (or a slice of 0.05 s ended:
    # SpinSlices, since the events executor minds its own timeout only when nothing else is
    # ready, and the simulator's timer unpaced in free mode always is): the step's callback
    # ends the slice, which stops the spin right after it, so the loop looks at every tick
    # as when it spun one event at a time. Not one spin_once per event: the events executor
    # resumes every pending action goal (one per robot) after each event, each resumption a
    # spin_once of its own. Whether the logic always failed is checked once per tick, right
    # after the step; the rest runs every 0.1 s.
    slices = SpinSlices(sim_node)
    sim_node.on_tick.append(slices.end)
    try:
        checked_tick = -1
        polled = 0.0
        while not sim_node.done and stop.signum is None:
            executor.spin_until_future_complete(slices.next(), timeout_sec=SPIN_SLICE_S)
            tick = sim.tick
            if args.max_ticks is not None and tick >= args.max_ticks:
                break
            if tick != checked_tick:
                checked_tick = tick
                if _logic_always_failed(args, sim_node, tick):
                    return True
            now = time.monotonic()
            if now - polled >= 0.1:
                polled = now
                if not rclpy.ok():
                    break
                if sim_node.started:
                    _show_progress(progress, sim, sim_node)
        return False
    finally:
        sim_node.on_tick.remove(slices.end)
        if rclpy.ok():
            slices.close()


def _stop_reason(
    sim: Simulation, stop: StopSignals, error: BaseException | None, max_ticks: int | None
) -> str:
    """Why the run ended, for ``summary.json``: the first true cause."""
    if sim.end_reason:
        return sim.end_reason
    if stop.signum is not None:
        return f"interrupted ({stop.signal_name})"
    if error is not None:
        return f"internal error: {type(error).__name__}: {error}"
    if max_ticks is not None and sim.tick >= max_ticks:
        return f"stopped at --max-ticks {max_ticks}"
    return "stopped: ROS was shut down"


if __name__ == "__main__":
    raise SystemExit(main())
