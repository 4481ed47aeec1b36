"""``robot.set_velocity``: one rule set for both robots (ROS and direct mode).

A logic callback drives the robot either through navigation goals (the navigator sends
``cmd_vel``) or directly with ``set_velocity(linear, angular, lateral=0.0)``; never both in one
tick, since
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
  :data:`MAX_ANGULAR`; a sideways part that is not a finite number within :data:`MAX_LINEAR`)
  is refused: nothing changes and a warning names it;
* ``lateral`` (m/s, to the robot's left: ``cmd_vel.linear.y``) moves only an omnidirectional
  robot (``motion.model: omnidirectional``); other models ignore it, and :class:`MotionNote`
  says so once.

Pure Python, no ROS: :class:`~maes_controller.nodes.controller_node.RosRobot` publishes what
:meth:`VelocityCommand.to_send` returns after each logic call,
:class:`~maes_bringup.runners.direct_robot.DirectRobot` applies it in the same tick.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from maes_common.motion_models import MODELS, model_code

#: The largest |linear| (m/s) and |angular| (rad/s) a command may ask for (the motion model
#: caps the speed anyway; these only keep absurd values out).
MAX_LINEAR = 1000.0
MAX_ANGULAR = 1000.0


def velocity_problem(linear: Any, angular: Any, lateral: Any = 0.0) -> str | None:
    """Why ``(linear, angular)`` (and the sideways ``lateral``) cannot be a velocity command, or
    None when it can.

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
    >>> velocity_problem(0.0, 0.0, lateral=float("nan"))
    'lateral velocity nan is not a finite number within 1000 m/s'
    """
    problem = _linear_angular_problem(linear, angular)
    if problem is not None or (type(lateral) is float and lateral == 0.0):
        return problem
    bad = isinstance(lateral, bool) or not isinstance(
        lateral, (int, float, np.integer, np.floating)
    )
    if not bad:
        try:
            value = float(lateral)
        except (OverflowError, ValueError):
            bad = True
        else:
            bad = not math.isfinite(value) or abs(value) > MAX_LINEAR
    if bad:
        return f"lateral velocity {lateral!r:.40} is not a finite number within {MAX_LINEAR:g} m/s"
    return None


def _linear_angular_problem(linear: Any, angular: Any) -> str | None:
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
    (True, (0.3, 0.1, 0.0))
    >>> v.goal_sent(refused=True)  # a refused goal stops the robot once
    >>> v.to_send(7), v.to_send(8)
    ((0.0, 0.0, 0.0), None)
    """

    def __init__(self) -> None:
        #: ``(linear m/s, angular rad/s, lateral m/s)`` while the logic drives, else None.
        self.command: tuple[float, float, float] | None = None
        self._start_tick = 0
        self._stop_pending = False

    @property
    def active(self) -> bool:
        """True while a velocity command drives the robot (or will, from the next tick)."""
        return self.command is not None

    def set(
        self,
        linear: float,
        angular: float,
        tick: int,
        goal_in_progress: bool,
        lateral: float = 0.0,
    ) -> None:
        """Take a valid command (check it with :func:`velocity_problem` first)."""
        if goal_in_progress:
            self._start_tick = tick + 1  # the navigator stops the robot at this tick
        elif self.command is None:
            self._start_tick = tick
        self.command = (float(linear), float(angular), float(lateral))

    def goal_sent(self, refused: bool) -> None:
        """``nav_to_pos`` was called: the velocity command ends (a refused goal stops)."""
        if self.command is not None and refused:
            self._stop_pending = True
        self.command = None

    def to_send(self, tick: int) -> tuple[float, float, float] | None:
        """The command ``(linear, angular, lateral)`` to send for ``tick`` (after the logic
        ran), or None to send nothing."""
        if self.command is not None and tick >= self._start_tick:
            self._stop_pending = False
            return self.command
        if self._stop_pending:
            self._stop_pending = False
            return (0.0, 0.0, 0.0)
        return None


#: The motion models that drive and turn at once, and those that move sideways: what a note
#: suggests in place of a model that drops part of a command.
_SIMULTANEOUS = [m.name for m in MODELS.values() if m.simultaneous]
_LATERAL = [m.name for m in MODELS.values() if m.lateral]


def check_motion_model(name: str) -> str:
    """``name`` if it is a motion model (:data:`maes_common.motion_models.MODELS`); else
    ValueError naming the models.

    Examples
    --------
    >>> check_motion_model("differential_drive")
    'differential_drive'
    """
    model_code(name)  # raises the error naming the models
    return name


def motion_model_note(
    linear: float,
    angular: float,
    model: str,
    max_speed: float | None = None,
    max_angular_speed: float | None = None,
) -> str | None:
    """What ``model`` drops of the command ``(linear m/s, angular rad/s)``, or None.

    Under ``"maes"`` a robot rotates in place or moves straight, never both: of a command with
    both parts, only the one with the larger share of its top speed survives (a tie turns), the
    simulator's rule (``maes_sim.core.motion.map_velocity``). ``max_speed`` (m/s) and
    ``max_angular_speed`` (rad/s) are the robot's top speeds; without them the note says only
    that one part is dropped. ``"differential_drive"`` keeps both: None.

    Examples
    --------
    >>> motion_model_note(0.4, -0.6, "maes", 3.0, 3.1416)
    'maes motion model: rotate or move, never both; forward speed 0.4 m/s dropped while turning \
at -0.6 rad/s (motion.model: differential_drive drives both)'
    >>> motion_model_note(0.4, 0.0, "maes") is None
    True
    >>> motion_model_note(0.4, -0.6, "differential_drive", 3.0, 3.1416) is None
    True
    """
    if MODELS[model].simultaneous or linear == 0.0 or angular == 0.0:
        return None
    head = f"{model} motion model: rotate or move, never both; "
    tail = f" (motion.model: {_SIMULTANEOUS[0]} drives both)"
    if not max_speed or not max_angular_speed:
        return (
            f"{head}of ({linear:g} m/s, {angular:g} rad/s) only the part with the larger share "
            f"of its top speed is kept{tail}"
        )
    # both capped at the top speeds first, as the simulator does
    if min(abs(linear), max_speed) / max_speed > min(abs(angular), max_angular_speed) / (
        max_angular_speed
    ):
        return f"{head}turn rate {angular:g} rad/s dropped while moving at {linear:g} m/s{tail}"
    return f"{head}forward speed {linear:g} m/s dropped while turning at {angular:g} rad/s{tail}"


class MotionNote:
    """Logs, once per robot and run, what the motion model did with a ``set_velocity`` command.

    Parameters
    ----------
    model : str
        The config's ``motion.model`` (ValueError naming the models for another name).
    max_speed, max_angular_speed : float or None
        Top speeds (m/s, rad/s); None or 0 when unknown.

    Examples
    --------
    >>> note = MotionNote("maes", 3.0, 3.1416)
    >>> note.check(0.4, -0.6) is not None, note.check(0.4, -0.6)
    (True, None)
    """

    def __init__(
        self, model: str, max_speed: float | None = None, max_angular_speed: float | None = None
    ) -> None:
        self.model = check_motion_model(model)
        self.max_speed = max_speed
        self.max_angular_speed = max_angular_speed
        self.logged = False

    def check(self, linear: float, angular: float, lateral: float = 0.0) -> str | None:
        """The note to log for this command, the first time one applies; else None."""
        if self.logged:
            return None
        if lateral != 0.0 and not MODELS[self.model].lateral:
            note = (
                f"{self.model} motion model: the sideways part {float(lateral):g} m/s is "
                f"dropped (only motion.model: {' or '.join(_LATERAL)} moves sideways)"
            )
        else:
            note = motion_model_note(
                float(linear), float(angular), self.model, self.max_speed, self.max_angular_speed
            )
        if note is not None:
            self.logged = True
        return note
