"""Direct mode: the controllers and the simulation in one process, lockstep, no ROS.

Each logic tick, every robot's ``logic(robot)`` runs with that tick's state, then the
navigation sessions of the robots that have a goal produce their velocity commands, then the
simulation steps: the order the lockstep ROS stack keeps (docs/lockstep.md), where the
navigator steps a robot only after its controller reported the tick. The values pass through
the same wire rounding as on ROS (``maes_common.contract``), so a run here equals the lockstep
ROS stack's run to the bit (a test holds it). ``robot`` offers the API of
:class:`maes_controller.robot_api.Robot` with the same values the ROS stack gives (metres and
radians in the ``map`` frame), so a controller written for the ROS stack runs here unchanged,
and the reverse:

=====================  ==========================================================================
``state``              ``maes_interfaces/State`` field names (positions in metres)
``robot_position``     the pose the robot's SLAM believes (tf ``map -> base_footprint``)
``global_costmap``     :class:`~maes_controller.maes_compat.MaesCostmap` holding what the built-in
                       navigator publishes on ``global_costmap/costmap``: its costmap of the
                       robot's SLAM map, which is "published" on SLAM update ticks, as the
                       simulator node publishes ``map``
``nav_to_pos`` ...     a :class:`maes_controller.navigation.Navigator` per robot, updated once a
                       tick as the navigator node does: with its smoothed pose
                       (:class:`NavigatorPoses`), the latest map and the robots nearby
``broadcast_msg``      ``Simulation.broadcast``; a refused message is logged, as on ROS
=====================  ==========================================================================

Same config and seed, same results, bit for bit: nothing here reads a clock or a global random
generator. Controllers that need randomness use ``robot.rng`` (direct-mode extra): a
``numpy.random.Generator`` seeded from ``(run seed, robot id)``, independent of the simulation's.

>>> from maes_bringup.runners.direct import run  # doctest: +SKIP
>>> explorer = "maes_controller.algorithms.frontier_explorer:logic"
>>> result = run("maes_config.yaml", explorer, max_ticks=600)  # doctest: +SKIP
>>> result.end_reason, result.time_to_exploration(90)  # doctest: +SKIP
('exploration reached 95.12 %', 41.3)
"""

from __future__ import annotations

import math
import os
import pickle
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from maes_controller.robot_api import LogicFunction, load_logic
from maes_sim.core import (
    SimConfig,
    Simulation,
    SnapshotError,
    load_config,
    load_snapshot,
    save_snapshot,
    state_to_metres,
)

from .direct_robot import (
    DirectLogger,
    DirectRobot,
    NavigatorPoses,
)
from .team import RobotTeam, fewer_gc_passes

__all__ = [
    "DirectLogger",
    "DirectRobot",
    "LogicError",
    "NavigatorPoses",
    "RunResult",
    "resolve_controller",
    "run",
    "state_to_metres",
]


class LogicError(RuntimeError):
    """A logic callback raised; the message names the robot and the tick (cause chained)."""


# ---------------------------------------------------------------------------------- controllers
def resolve_controller(controller: str | LogicFunction) -> LogicFunction:
    """The logic function of ``controller``: a callable, ``"pkg.module:function"`` or
    ``"path/to/file.py:function"`` (a relative path is relative to the working directory).

    Raises ValueError naming the spec when it cannot be imported or is not callable.

    Examples
    --------
    >>> resolve_controller("maes_controller.robot_api:load_logic").__name__
    'load_logic'
    >>> resolve_controller("no_such_module:logic")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: cannot import logic module 'no_such_module' (from 'no_such_module:logic'): ...
    """
    if callable(controller):
        return controller
    if not isinstance(controller, str):
        raise ValueError(
            f"a controller must be a callable or a 'module:function' string, got {controller!r}"
        )
    return load_logic(controller)


# ---------------------------------------------------------------------------------- result
@dataclass
class RunResult:
    """What a direct-mode run produced.

    Attributes
    ----------
    ticks : int
        Logic ticks simulated.
    sim_time : float
        Simulated seconds.
    end_reason : str or None
        The end criterion met; None when ``max_ticks`` stopped the run first.
    stats : dict
        Final statistics (``maes_sim.core.metrics.SNAPSHOT_COLUMNS``).
    snapshots : list of dict
        Statistics every ``ticks_per_stats_snapshot`` ticks (and at the end).
    exploration, coverage : ndarray of float, shape (ticks + 1,)
        Percent explored / covered after every tick (index 0: before the first step).
    distance : ndarray of float, shape (N,)
        Metres travelled per robot.
    collisions : ndarray of int, shape (N,)
        Ticks each robot started a collision.
    broadcasts_sent, broadcasts_delivered, tags_deposited : int
        The final counts, named as in ``statistics.csv`` (the metric registry).
    wall_time : float
        Seconds of wall-clock time (the only field that differs between identical runs).
    seed : int
    sim : Simulation
        The simulation, for inspection.
    """

    ticks: int
    sim_time: float
    end_reason: str | None
    stats: dict
    snapshots: list
    exploration: np.ndarray
    coverage: np.ndarray
    distance: np.ndarray
    collisions: np.ndarray
    broadcasts_sent: int
    broadcasts_delivered: int
    tags_deposited: int
    wall_time: float
    seed: int
    sim: Simulation

    @property
    def finished(self) -> bool:
        """True when an end criterion ended the run."""
        return self.end_reason is not None

    @property
    def real_time_factor(self) -> float:
        """Simulated seconds per wall-clock second."""
        return self.sim_time / self.wall_time if self.wall_time > 0 else math.inf

    def _time_to(self, series: np.ndarray, percent: float) -> float | None:
        reached = np.flatnonzero(series >= percent)
        if reached.size == 0:
            return None
        return float(reached[0]) * self.sim.tick_duration

    def time_to_exploration(self, percent: float) -> float | None:
        """First simulated time (s) at which exploration reached ``percent``, or None."""
        return self._time_to(self.exploration, percent)

    def time_to_coverage(self, percent: float) -> float | None:
        """First simulated time (s) at which coverage reached ``percent``, or None."""
        return self._time_to(self.coverage, percent)

    def write(self, parent: str | os.PathLike[str], folder: str | None = None) -> Path:
        """Write the run's result files (``maes_sim.core.results.write_run_results``)."""
        from maes_sim.core import write_run_results

        return write_run_results(
            self.sim,
            parent,
            folder,
            extra_summary={"mode": "direct", "wall_time_s": self.wall_time},
        )


# ---------------------------------------------------------------------------------- runner
def _controllers(controller: Any, n: int) -> list[LogicFunction]:
    if isinstance(controller, Sequence) and not isinstance(controller, str):
        if len(controller) != n:
            raise ValueError(
                f"got {len(controller)} controllers for {n} robots: give one, or one per robot"
            )
        return [resolve_controller(c) for c in controller]
    return [resolve_controller(controller)] * n


def run(
    config: SimConfig | str | os.PathLike[str],
    controller: str | LogicFunction | Sequence[str | LogicFunction],
    *,
    seed: int | None = None,
    max_ticks: int | None = None,
    progress: Callable[[Simulation], None] | None = None,
    record: str | os.PathLike[str] | None = None,
    live: int | None = None,
    live_host: str = "127.0.0.1",
    checkpoint: str | os.PathLike[str] | None = None,
    checkpoint_every: int = 100,
    resume: str | os.PathLike[str] | None = None,
) -> RunResult:
    """Run one simulation with ``controller`` driving every robot, in-process and lockstep.

    Parameters
    ----------
    config : SimConfig or path
        The run's config (a path is read with ``load_config``).
    controller : callable, str, or a sequence of them (one per robot)
        ``logic(robot)``, or its spec ``"pkg.module:function"`` / ``"file.py:function"``.
    seed : int, optional
        Overrides ``config.random_seeds[0]``.
    max_ticks : int, optional
        Stop after this many ticks even if no end criterion is met. Needed when the config has
        no end criteria.
    progress : callable, optional
        ``progress(sim)`` after every tick (e.g. to record trajectories).
    record : path, optional
        Record the run as the simulator node would publish it on ROS, to a ``.mcap`` file
        (or rosbag2 bag folder) in rosbag2's format (docs/live_view.md). Needs rclpy and the
        message packages (the pip environment has them); nothing is published on DDS.
    live : int, optional
        Serve a live view on this port: a page to watch the run in a web browser, and
        Foxglove / Lichtblick on the same port (docs/watching.md, docs/live_view.md).
    live_host : str
        The address the live view binds (default this machine only).
    checkpoint : path, optional
        Write the whole run state (the simulation, every robot's navigator, ``memory`` and
        ``rng``, the series so far) to this file every ``checkpoint_every`` ticks, replacing
        the previous one atomically; robot memories must then be picklable.
    checkpoint_every : int
        Ticks between checkpoints (default 100).
    resume : path, optional
        Continue from a checkpoint file written with the same config, seed and controllers:
        the run goes on exactly as the uninterrupted one would have, to the bit.

    Returns
    -------
    RunResult

    Raises
    ------
    ValueError
        A controller that cannot be resolved, or a run that could never end.
    LogicError
        A logic callback raised (the robot and tick are named; the cause is chained).

    Examples
    --------
    >>> from maes_sim.core import config_from_dict
    >>> cfg = config_from_dict({"number_of_robots": 2, "end_criteria": {"tick": 5},
    ...                         "map": {"width_in_tiles": 20, "height_in_tiles": 20}})
    >>> def idle(robot):
    ...     robot.memory["seen"] = robot.tick
    >>> result = run(cfg, idle)
    >>> result.ticks, result.end_reason, result.sim.n_robots
    (5, 'tick limit 5 reached', 2)
    """

    if not isinstance(config, SimConfig):
        config = load_config(config)
    if max_ticks is None and config.end_criteria.never_ends:
        raise ValueError("the config has no end criteria: pass max_ticks, or the run never ends")
    if max_ticks is not None and (
        isinstance(max_ticks, bool) or not isinstance(max_ticks, int) or max_ticks < 0
    ):
        raise ValueError(f"max_ticks must be an integer >= 0, got {max_ticks!r}")
    if (
        isinstance(checkpoint_every, bool)
        or not isinstance(checkpoint_every, int)
        or (checkpoint_every < 1)
    ):
        raise ValueError(f"checkpoint_every must be an integer >= 1, got {checkpoint_every!r}")
    if resume is not None and (record or live is not None):
        raise ValueError("resume cannot be combined with record or live (a recording restarts)")
    n = config.number_of_robots
    logic = _controllers(controller, n)
    run_key = repr((config, int(config.random_seeds[0] if seed is None else seed)))

    started = time.perf_counter()
    tile = float(config.world.tile_size)
    if resume is not None:
        sim, robots, nav_poses, exploration, coverage, done = _resume(resume, run_key)
        team = RobotTeam(sim, logic, robots, nav_poses)
    else:
        sim = Simulation(config, seed=seed)
        team = RobotTeam.start(sim, logic)
        exploration = [sim.exploration_percent]
        coverage = [sim.coverage_percent]
        done = 0
    outputs = _Outputs(sim, record, live, live_host) if record or live is not None else None

    def stop_the_run(robot: DirectRobot, exc: Exception) -> None:
        raise LogicError(
            f"logic of {robot.namespace} raised at tick {sim.tick}: {type(exc).__name__}: {exc}"
        ) from exc

    with fewer_gc_passes():
        while not sim.finished and (max_ticks is None or done < max_ticks):
            team.tick(stop_the_run)
            done += 1
            if outputs is not None:
                outputs.publish()
            exploration.append(sim.exploration_percent)
            coverage.append(sim.coverage_percent)
            if progress is not None:
                progress(sim)
            if checkpoint is not None and sim.tick % checkpoint_every == 0:
                _checkpoint(
                    checkpoint,
                    run_key,
                    (sim, team.robots, team.nav_poses, exploration, coverage, done),
                )
    wall = time.perf_counter() - started
    if outputs is not None:
        outputs.close()

    stats = sim.stats()
    return RunResult(
        ticks=sim.tick,
        sim_time=sim.sim_time,
        end_reason=sim.end_reason,
        stats=stats,
        snapshots=list(sim.snapshots),
        exploration=np.asarray(exploration),
        coverage=np.asarray(coverage),
        distance=sim.metrics.distance * tile,
        collisions=sim.metrics.collisions.copy(),
        broadcasts_sent=int(stats["broadcasts_sent"]),
        broadcasts_delivered=int(stats["broadcasts_delivered"]),
        tags_deposited=int(stats["tags_deposited"]),
        wall_time=wall,
        seed=sim.seed,
        sim=sim,
    )


def _checkpoint(path: str | os.PathLike[str], run_key: str, state: tuple) -> None:
    try:
        save_snapshot({"direct_run": run_key, "state": state}, path)
    except (pickle.PicklingError, TypeError, AttributeError) as exc:
        raise ValueError(
            f"checkpoint at tick {state[0].tick}: the run state cannot be pickled (keep only "
            f"plain data in robot.memory): {type(exc).__name__}: {exc}"
        ) from exc


def _resume(path: str | os.PathLike[str], run_key: str) -> tuple:
    """The run state a checkpoint holds; refused when it is from another config or seed."""
    payload = load_snapshot(path)
    if not isinstance(payload, dict) or "direct_run" not in payload:
        raise SnapshotError(f"{str(path)!r} is not a direct-mode checkpoint")
    if payload["direct_run"] != run_key:
        raise SnapshotError(
            f"checkpoint {str(path)!r} was written by a run of another config or seed"
        )
    return payload["state"]


class _Outputs:
    """Direct mode's recording and live view: the simulator's message factory turns each tick
    into the messages the ROS stack publishes, handed to the tap alone (no node, no DDS:
    :class:`maes_sim.ros.outputs.TapOutputs`), so a direct-mode recording holds the same
    topics and types as an embedded one.

    Closed by :meth:`close`, or, when the run ends by an exception (a logic error, Ctrl-C),
    once the run's frame is released or at the interpreter's exit (``weakref.finalize``): the
    recording gets its summary and footer either way.
    """

    def __init__(self, sim: Simulation, record, live: int | None, live_host: str) -> None:
        import weakref

        from maes_sim.ros.outputs import TapOutputs, build_tap

        tap = build_tap(
            record,
            live is not None,
            live_host,
            live if live is not None else 0,
            forward=False,
            say=lambda text: print(f"maes direct mode: {text}", file=sys.stderr, flush=True),
        )
        try:
            self.outputs = TapOutputs(sim, tap)
        except BaseException:
            tap.close()
            raise
        self.close = weakref.finalize(self, tap.close)

    def publish(self) -> None:
        """The tick just stepped, as the simulator node publishes it."""
        self.outputs.publish()
