"""``robot.set_velocity``: one rule set for both robots (ROS and direct mode).

A logic callback drives the robot either through navigation goals (the navigator sends
``cmd_vel``) or directly with ``set_velocity(linear, angular)``; never both in one tick, since
the simulator applies ``cmd_vel`` messages in the order they arrive, and two senders on one
topic have no order. :class:`VelocityCommand` keeps the rules in one place:

* ``set_velocity`` holds a command that is sent once per logic tick until it is changed or a
  navigation goal is sent (the simulator's ``stack.cmd_vel_timeout`` never stops the robot);
* it cancels a goal in progress. The navigator then sends its one zero command at this tick,
  and the velocity command starts at the next tick, so exactly one sender drives each tick;
* ``nav_to_pos`` ends the velocity command; the navigator drives from this tick. A refused goal
  (not two finite numbers) ends it too and sends one zero command, as a refused goal stops a
  navigating robot;
* a bad command (not two finite real numbers, or beyond :data:`MAX_LINEAR` /
  :data:`MAX_ANGULAR`) is refused: nothing changes and a warning names it.

Pure Python, no ROS: :class:`~maes_controller.nodes.controller_node.RosRobot` publishes what
:meth:`VelocityCommand.to_send` returns after each logic call,
:class:`~maes_bringup.runners.direct_robot.DirectRobot` applies it in the same tick.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

#: The largest |linear| (m/s) and |angular| (rad/s) a command may ask for (the motion model
#: caps the speed anyway; these only keep absurd values out).
MAX_LINEAR = 1000.0
MAX_ANGULAR = 1000.0


def velocity_problem(linear: Any, angular: Any) -> str | None:
    """Why ``(linear, angular)`` cannot be a velocity command, or None when it can.

    Examples
    --------
    >>> velocity_problem(0.5, -1) is None
    True
    >>> velocity_problem(float("inf"), 0.0)
    'velocity (inf, 0.0) is not two finite numbers'
    >>> velocity_problem("1", 0.0)
    "velocity ('1', 0.0) is not two numbers"
    >>> velocity_problem(2000.0, 0.0)
    'velocity (2000.0, 0.0) is out of range (|linear| <= 1000 m/s, |angular| <= 1000 rad/s)'
    """
    for v in (linear, angular):
        if isinstance(v, bool) or not isinstance(v, (int, float, np.integer, np.floating)):
            return f"velocity ({linear!r:.40}, {angular!r:.40}) is not two numbers"
    try:
        lin, ang = float(linear), float(angular)
    except (OverflowError, ValueError):  # an int beyond float range
        return f"velocity ({linear!r:.40}, {angular!r:.40}) is not two finite numbers"
    if not (math.isfinite(lin) and math.isfinite(ang)):
        return f"velocity ({lin!r}, {ang!r}) is not two finite numbers"
    if abs(lin) > MAX_LINEAR or abs(ang) > MAX_ANGULAR:
        return (
            f"velocity ({lin!r}, {ang!r}) is out of range (|linear| <= {MAX_LINEAR:g} m/s, "
            f"|angular| <= {MAX_ANGULAR:g} rad/s)"
        )
    return None


class VelocityCommand:
    """The velocity command of one robot, as ``set_velocity`` / ``nav_to_pos`` left it.

    Examples
    --------
    >>> v = VelocityCommand()
    >>> v.set(0.3, 0.1, tick=5, goal_in_progress=True)  # a goal is cancelled this tick
    >>> v.to_send(5) is None, v.to_send(6)
    (True, (0.3, 0.1))
    >>> v.goal_sent(refused=True)  # a refused goal stops the robot once
    >>> v.to_send(7), v.to_send(8)
    ((0.0, 0.0), None)
    """

    def __init__(self) -> None:
        #: ``(linear m/s, angular rad/s)`` while the logic drives, else None.
        self.command: tuple[float, float] | None = None
        self._start_tick = 0
        self._stop_pending = False

    @property
    def active(self) -> bool:
        """True while a velocity command drives the robot (or will, from the next tick)."""
        return self.command is not None

    def set(self, linear: float, angular: float, tick: int, goal_in_progress: bool) -> None:
        """Take a valid command (check it with :func:`velocity_problem` first)."""
        if goal_in_progress:
            self._start_tick = tick + 1  # the navigator stops the robot at this tick
        elif self.command is None:
            self._start_tick = tick
        self.command = (float(linear), float(angular))

    def goal_sent(self, refused: bool) -> None:
        """``nav_to_pos`` was called: the velocity command ends (a refused goal stops)."""
        if self.command is not None and refused:
            self._stop_pending = True
        self.command = None

    def to_send(self, tick: int) -> tuple[float, float] | None:
        """The command to send for ``tick`` (after the logic ran), or None to send nothing."""
        if self.command is not None and tick >= self._start_tick:
            self._stop_pending = False
            return self.command
        if self._stop_pending:
            self._stop_pending = False
            return (0.0, 0.0)
        return None
