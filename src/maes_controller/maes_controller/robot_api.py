"""The robot API a logic callback sees: one contract, two implementations.

A user writes ``logic(robot)`` (template: :mod:`maes_controller.logic`) against the attributes
below, with MAES 2.0's names. The same callback runs

* on ROS (``maes_controller.nodes.controller_node``): ``robot`` is backed by topics, tf, services
  and the ``navigate_to_pose`` action of the robot's namespace, on the full stack (Nav2 +
  slam_toolbox) or the embedded one (built-in navigator + simulated SLAM);
* in direct mode (``maes_bringup.runners.direct``): ``robot`` is backed by an in-process Simulation
  and the navigator's planning/following code, lockstep and deterministic.

Units: metres and radians in the ``map`` frame (world origin at the map centre), as on ROS.
Nothing here blocks: navigation, velocity commands, broadcasts and tags are fire-and-forget;
their outcome shows in ``nav_status`` / ``is_nav_complete()`` and in the next states.
"""

from __future__ import annotations

import enum
from collections.abc import Callable
from typing import Any, Protocol, runtime_checkable


class NavStatus(enum.Enum):
    """Where the current navigation goal stands (Nav2's TaskResult plus IDLE/ACTIVE)."""

    IDLE = "idle"  # no goal sent yet
    PENDING = "pending"  # sent, not yet accepted
    ACTIVE = "active"  # accepted, driving
    SUCCEEDED = "succeeded"
    ABORTED = "aborted"  # failed: unreachable goal, timeout, planner failure
    CANCELED = "canceled"
    REJECTED = "rejected"  # the navigator refused the goal

    @property
    def done(self) -> bool:
        """True when no goal is in progress."""
        return self not in (NavStatus.PENDING, NavStatus.ACTIVE)


@runtime_checkable
class Robot(Protocol):
    """What ``logic(robot)`` may use. Attributes mirror MAES 2.0's controller.

    Attributes
    ----------
    robot_id : int
        Index ``i`` of the robot (namespace ``robot<i>``).
    namespace : str
        ``"robot<i>"``.
    tick : int
        The logic tick of :attr:`state`.
    state : object
        The latest ``maes_interfaces/State`` (its fields: ``src/maes_interfaces/msg/State.msg``;
        on ROS read from the message's bytes field by field as the logic reads them, with
        ``.message()`` giving the ``State`` itself; in direct mode a
        ``maes_sim.core.RobotState`` with the same attribute names, positions in metres), or
        None before the first one arrives.
    robot_position : tuple of float or None
        ``(x, y)`` in metres, map frame (map -> base_footprint via tf), None until known.
    robot_heading : float or None
        Yaw in radians, map frame.
    global_costmap : maes_controller.maes_compat.MaesCostmap
        The latest ``global_costmap/costmap`` wrapped with MAES 2.0's helpers
        (``.costmap`` is None until the first one arrives).
    nav_status : NavStatus
        State of the current or last goal.
    nav_feedback : object or None
        Latest ``NavigateToPose`` feedback (``current_pose``, ``distance_remaining``,
        ``navigation_time``...), or None.
    nav_error : str
        Error message of the last failed goal ("" otherwise).
    scan_ranges : numpy.ndarray or None
        The latest lidar scan (``scan``, ``sensor_msgs/LaserScan``): one range per ray in
        metres, ``+inf`` where the ray hit nothing within range (REP-117), float64, shape (R,);
        None before the first scan.
    scan_angles : numpy.ndarray or None
        The angle of each ray in radians, robot frame (0 straight ahead, counter-clockwise
        positive; ``-pi`` first), float64, shape (R,); None before the first scan.
    robot_velocity : tuple of float or None
        The robot's own ``(linear m/s, angular rad/s)`` from ``odom``'s twist (robot frame),
        None before the first.
    logger : object
        ``info/warning/error/debug(text)``.
    memory : dict
        Free per-robot storage kept between calls.
    """

    robot_id: int
    namespace: str
    tick: int
    state: Any
    robot_position: tuple[float, float] | None
    robot_heading: float | None
    global_costmap: Any
    nav_status: NavStatus
    nav_feedback: Any
    nav_error: str
    scan_ranges: Any
    scan_angles: Any
    robot_velocity: tuple[float, float] | None
    logger: Any
    memory: dict

    def nav_to_pos(self, x: float, y: float) -> None:
        """Start navigating to ``(x, y)`` metres in the map frame; replaces any current goal."""

    def cancel_nav(self) -> None:
        """Cancel the current goal (no-op when none)."""

    def is_nav_complete(self) -> bool:
        """True when no goal is in progress (never sent, succeeded, failed or canceled)."""

    def set_velocity(self, linear: float, angular: float, lateral: float = 0.0) -> None:
        """Drive with ``linear`` m/s and ``angular`` rad/s (counter-clockwise positive), and
        ``lateral`` m/s sideways (to the robot's left, ``cmd_vel.linear.y``).

        The command is sent every logic tick until changed; it cancels a navigation goal in
        progress (the robot then stops for this tick and the command starts at the next), and a
        navigation goal ends it. Not two finite numbers (or beyond 1000 m/s or rad/s): refused,
        nothing changes, a warning is logged. Rules: :mod:`maes_controller.velocity`.

        The config's motion model decides what the robot does with it, after capping both parts
        at the robot's top speeds:

        * ``maes`` (default, as MAES 2.0): the robot **rotates in place or moves straight,
          never both**. Of a command with both parts only the one with the larger share of its
          top speed is kept (a tie turns): ``set_velocity(0.4, -0.6)`` only turns. The first
          time in a run this drops part of a robot's command, the robot's log says so once
          (e.g. "maes motion model: rotate or move, never both; forward speed 0.4 m/s dropped
          while turning at -0.6 rad/s").
        * ``differential_drive``: both at once (the robot drives an arc).
        * ``omnidirectional``: as ``differential_drive``, plus ``lateral``: the robot strafes.
          The other models ignore ``lateral`` (the robot's log says so once).
        """

    def broadcast_msg(self, text: str) -> None:
        """Broadcast ``text``; robots in range get it in their next state."""

    def deposit_tag(self, text: str) -> None:
        """Leave an environment tag with ``text`` at the robot's position."""


#: A logic callback: called once per logic tick with the robot's API.
LogicFunction = Callable[[Robot], None]


def _load_file_logic(path: str, attr: str, spec: str) -> LogicFunction:
    import hashlib
    import importlib.util
    import sys
    from pathlib import Path

    file = Path(path).expanduser()
    if not file.is_file():
        raise ValueError(
            f"logic file {path!r} (from {spec!r}) does not exist "
            f"(relative paths start at {Path.cwd()})"
        )
    name = "maes_user_logic_" + hashlib.sha256(str(file.resolve()).encode()).hexdigest()[:12]
    module = sys.modules.get(name)
    if module is None:
        loader_spec = importlib.util.spec_from_file_location(name, file)
        module = importlib.util.module_from_spec(loader_spec)
        sys.modules[name] = module  # dataclasses and pickling look modules up here
        try:
            loader_spec.loader.exec_module(module)
        except Exception as exc:  # user code: report any import-time failure by name
            del sys.modules[name]
            raise ValueError(
                f"cannot import logic file {path!r} (from {spec!r}): {type(exc).__name__}: {exc}"
            ) from exc
    fn = getattr(module, attr, None)
    if not callable(fn):
        raise ValueError(
            f"{attr!r} in {path!r} (from {spec!r}) is not a callable logic function"
            f"{_did_you_mean(module, attr)}"
        )
    return fn


def _did_you_mean(module: Any, attr: str) -> str:
    """``"; did you mean 'logic'?"`` naming the module's callables closest to ``attr``."""
    import difflib

    names = [
        name
        for name, value in vars(module).items()
        if callable(value) and not name.startswith("__") and not isinstance(value, type)
    ]
    close = difflib.get_close_matches(attr, names, n=3, cutoff=0.6)
    if close:
        return "; did you mean " + " or ".join(repr(name) for name in close) + "?"
    public = sorted(n for n in names if not n.startswith("_"))[:8]
    return f"; its functions: {', '.join(public)}" if public else ""


def load_logic(spec: str) -> LogicFunction:
    """Import a logic callback from ``"package.module:function"`` or ``"path/file.py:function"``.

    The one loader of every entry point (``make run --logic``, ``controller_node -p logic:=``,
    direct mode, experiments). A module is looked up on ``sys.path`` and then in the working
    directory, so a module next to where you run the command is found by all of them; a path
    ending in ``.py`` is loaded from that file (relative to the working directory).

    Raises ValueError naming the spec when it is malformed, cannot be imported, or is not
    callable.

    Examples
    --------
    >>> load_logic("maes_controller.robot_api:load_logic").__name__
    'load_logic'
    >>> load_logic("maes_controller.logic:lgic")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: 'lgic' in 'maes_controller.logic' ... logic function; did you mean 'logic'?
    >>> load_logic("no_such_module:logic")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: cannot import logic module 'no_such_module' (from 'no_such_module:logic'): ...
    """
    import importlib
    import os
    import sys

    if not isinstance(spec, str):
        raise ValueError(f"a logic spec must be a 'package.module:function' string, got {spec!r}")
    module_name, sep, attr = spec.rpartition(":")
    if not sep or not module_name or not attr:
        raise ValueError(
            f"logic spec {spec!r} must look like 'package.module:function' or "
            "'path/to/file.py:function'"
        )
    if module_name.endswith(".py"):
        return _load_file_logic(module_name, attr, spec)
    try:
        try:
            module = importlib.import_module(module_name)
        except ModuleNotFoundError as exc:
            cwd = os.getcwd()
            top = module_name.split(".")[0]
            if exc.name != top or cwd in sys.path or "" in sys.path:
                raise
            sys.path.append(cwd)  # console scripts do not put the working directory there
            module = importlib.import_module(module_name)
    except Exception as exc:  # any import-time failure of user code: report it by name
        raise ValueError(
            f"cannot import logic module {module_name!r} (from {spec!r}): "
            f"{type(exc).__name__}: {exc}"
        ) from exc
    fn = getattr(module, attr, None)
    if not callable(fn):
        raise ValueError(
            f"{attr!r} in {module_name!r} (from {spec!r}) is not a callable logic function"
            f"{_did_you_mean(module, attr)}"
        )
    return fn
