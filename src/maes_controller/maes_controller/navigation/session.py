"""One robot's navigation session as events: what the navigator node and direct mode carry.

A :class:`NavSession` owns a robot's one motion task at a time (a goal of ``navigate_to_pose``,
or any task of :mod:`.tasks`): it accepts, preempts, refuses, cancels and steps it, and answers
every call with :class:`SessionEvents`: the velocity command to send, the feedback to publish,
the goals that ended (with their final :class:`~.navigator.NavStep`) and a new plan. The ROS
navigator node turns the events into messages and action results; direct mode turns them into
the simulator's velocity commands and the robot's status, so both follow one logic.

Rules (as Nav2's servers, one task per robot)
    * A new task preempts the current one: it ends ABORTED with error code 0 and
      :data:`PREEMPTED` (Nav2's action servers abort a preempted goal with an empty result),
      and the robot gets one zero command.
    * A goal that cannot be navigated (:func:`~.navigator.goal_problem`, a frame other than
      ``map``) is refused: it ends ABORTED with the planner's code at once, and any running
      task ends as on preemption.
    * A cancelled task ends CANCELED with one zero command; a task that ends by itself sends
      one zero command too; idle robots get no commands.
    * Feedback is emitted only once a route exists (``distance_remaining`` finite): "0 m
      remaining" before a plan would read as arrived.

Nothing here imports rclpy or a message package.

Examples
--------
>>> import numpy as np
>>> from maes_controller.navigation import GridMap, Navigator, NavParams
>>> grid = GridMap.from_array(np.zeros((3, 7), dtype=np.int8), 1.0, origin_x=-3.5, origin_y=-1.5)
>>> s = NavSession(Navigator(NavParams(robot_radius=0.3, max_linear_speed=1, max_angular_speed=2)))
>>> s.submit("goal A", (3.0, -1.0), now=0.0).ended
()
>>> ev = s.step((-3.0, -1.0, 0.0), grid, now=0.1)
>>> ev.command, ev.feedback is not None
((1.0, 0.0, 0.0), True)
>>> ev = s.submit("goal B", (float("nan"), 0.0), now=0.2)
>>> [(e.token, e.step.status.name, e.step.error_code) for e in ev.ended], ev.command
([('goal A', 'ABORTED', 0), ('goal B', 'ABORTED', 204)], (0.0, 0.0, 0.0))
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ..robot_api import NavStatus
from .costmap import GridMap
from .navigator import NavErrorCode, Navigator, NavStep, goal_problem

#: ``error_msg`` of a task that ended because a new one arrived for the same robot.
PREEMPTED = "preempted by a new goal"

#: The frame goals are given in (``header.frame_id``; "" means it too).
GOAL_FRAME = "map"

_ZERO = (0.0, 0.0, 0.0)


def error_text(step: NavStep) -> str:
    """``"error <code>: <message>"`` of a failed step: the one wording of a goal's failure.

    Examples
    --------
    >>> error_text(NavStep(error_code=208, error_msg="no path"))
    'error 208: no path'
    """
    return f"error {step.error_code}: {step.error_msg}"


@dataclass(frozen=True)
class GoalEnd:
    """A task that ended: the carrier's ``token`` for it and its final step."""

    token: Any
    step: NavStep


@dataclass(frozen=True)
class SessionEvents:
    """What one session call asks its carrier to do.

    Attributes
    ----------
    command : (linear m/s, angular rad/s, lateral m/s) or None
        The velocity command to send for this robot (None: send nothing); ``lateral`` is the
        sideways part (``cmd_vel.linear.y``), non-zero only for an omnidirectional robot.
    feedback : NavStep or None
        Progress of the running task to publish as its feedback.
    ended : tuple of GoalEnd
        Tasks that ended, oldest first (send their results).
    plan : list of (x, y) or None
        A new plan of the running task (publish it).
    """

    command: tuple[float, float, float] | None = None
    feedback: NavStep | None = None
    ended: tuple[GoalEnd, ...] = ()
    plan: list[tuple[float, float]] | None = None


class GoToPose:
    """The ``navigate_to_pose`` task: the robot's :class:`~.navigator.Navigator` to one goal."""

    def __init__(
        self, navigator: Navigator, goal: tuple[float, float], preempts_goal: bool = False
    ) -> None:
        self.navigator = navigator
        self.goal = goal
        #: It replaced a running ``navigate_to_pose`` goal: the progress check goes on.
        self.preempts_goal = preempts_goal

    def begin(self, now: float) -> None:
        """Start the navigator towards the goal (as Nav2's controller server takes a
        preempting goal's path: its progress checker is not reset)."""
        self.navigator.start(self.goal, now, keep_progress=self.preempts_goal)

    def update(self, inputs: StepInputs) -> NavStep:
        """One navigator step."""
        return self.navigator.update(
            inputs.pose, inputs.grid, inputs.now, inputs.robots, inputs.robot_ids
        )

    def cancel(self, now: float) -> NavStep:
        """Stop the navigator (CANCELED)."""
        return self.navigator.cancel(now)


@dataclass(frozen=True)
class StepInputs:
    """What a task reads at one control step (metres, radians, seconds; map frame).

    ``odom_pose`` is the robot's ``odom -> base_footprint`` (behaviours measure the distance
    and angle travelled on it, as Nav2's behaviour server does); None when not known.
    ``robot_ids`` are the indices of ``robots`` (the yielding order), None when not known.
    """

    pose: Sequence[float] | None
    grid: GridMap | None
    now: float
    robots: Sequence[Sequence[float]] = ()
    odom_pose: Sequence[float] | None = None
    robot_ids: Sequence[int | None] | None = None


class NavSession:
    """One robot's navigation: one task at a time, as events (see the module docstring).

    Parameters
    ----------
    navigator : Navigator
        The robot's navigator (kept across goals: its costmap cache is shared).
    """

    def __init__(self, navigator: Navigator) -> None:
        self.navigator = navigator
        self._task: Any = None
        self._token: Any = None
        self._pending = False  # accepted, starts at the next step
        self._status = NavStatus.IDLE
        self._last = NavStep()
        self.feedback: tuple[NavStep, tuple[float, float, float] | None, float] | None = None

    @property
    def status(self) -> NavStatus:
        """ACTIVE while a task runs (or waits for its first step), else how the last ended."""
        return self._status

    @property
    def last_step(self) -> NavStep:
        """The final step of the last task that ended (or the latest step of the running one)."""
        return self._last

    @property
    def token(self) -> Any:
        """The carrier's token of the running task, None when idle."""
        return self._token

    @property
    def task(self) -> Any:
        """The running task, None when idle."""
        return self._task

    def error(self) -> str:
        """:func:`error_text` of the last task when it was aborted, else ""."""
        return error_text(self._last) if self._status is NavStatus.ABORTED else ""

    # -- calls ------------------------------------------------------------------------------
    def submit(
        self,
        token: Any,
        goal: Any,
        now: float | None,
        frame: str = GOAL_FRAME,
    ) -> SessionEvents:
        """Accept a new task, preempting the current one.

        Parameters
        ----------
        token : any
            The carrier's handle of the task (returned in :class:`GoalEnd`).
        goal : (x, y) or task
            A ``navigate_to_pose`` goal (checked with :func:`goal_problem`), or a task object of
            :mod:`.tasks` (``begin``/``update``/``cancel``).
        now : float or None
            Start now at this time; None: start at the next :meth:`step`, with its time
            (lockstep: the tick the goal arrived in).
        frame : str
            The goal's frame (leading ``/`` ignored); only ``map`` is served.
        """
        ended: list[GoalEnd] = []
        was_running = self._token is not None
        preempts_goal = was_running and isinstance(self._task, GoToPose)
        if was_running:
            ended.append(self._end(NavStep(status=NavStatus.ABORTED, error_msg=PREEMPTED)))
        self.feedback = None  # feedback belongs to a goal
        problem = None
        if frame.lstrip("/") not in ("", GOAL_FRAME):
            problem = (
                NavErrorCode.TF_ERROR,
                f"goal frame {frame!r} is not supported: give goals in {GOAL_FRAME!r}",
            )
        elif not hasattr(goal, "update"):
            if (text := goal_problem(*goal)) is not None:
                problem = (NavErrorCode.GOAL_OUTSIDE_MAP, text)
            else:
                goal = GoToPose(self.navigator, (float(goal[0]), float(goal[1])), preempts_goal)
        if problem is not None:
            code, text = problem
            if code is NavErrorCode.GOAL_OUTSIDE_MAP:
                step = self.navigator.refuse(text)
            else:
                step = NavStep(status=NavStatus.ABORTED, error_code=int(code), error_msg=text)
            self._status, self._last = NavStatus.ABORTED, step
            ended.append(GoalEnd(token, step))
            return SessionEvents(command=_ZERO if was_running else None, ended=tuple(ended))
        self._task, self._token = goal, token
        self._status = NavStatus.ACTIVE
        self._last = NavStep(status=NavStatus.ACTIVE)
        self._pending = now is None
        if now is not None:
            goal.begin(float(now))
        return SessionEvents(command=_ZERO if was_running else None, ended=tuple(ended))

    def refuse(self, token: Any, code: int, text: str) -> SessionEvents:
        """Refuse a new task the carrier found invalid: it ends ABORTED with ``code`` and
        ``text``; as any new task, it ends the running one (preempted, one zero command)."""
        ended: list[GoalEnd] = []
        was_running = self._token is not None
        if was_running:
            ended.append(self._end(NavStep(status=NavStatus.ABORTED, error_msg=PREEMPTED)))
        self.feedback = None
        step = NavStep(status=NavStatus.ABORTED, error_code=int(code), error_msg=str(text))
        self._status, self._last = NavStatus.ABORTED, step
        ended.append(GoalEnd(token, step))
        return SessionEvents(command=_ZERO if was_running else None, ended=tuple(ended))

    def cancel(self, now: float) -> SessionEvents:
        """Cancel the running task (CANCELED, one zero command); nothing when idle."""
        if self._token is None:
            return SessionEvents()
        if self._pending:
            self._task.begin(float(now))
            self._pending = False
        step = self._task.cancel(float(now))
        return SessionEvents(command=_ZERO, ended=(self._end(step),))

    def step(
        self,
        pose: Sequence[float] | None,
        grid: GridMap | None,
        now: float,
        robots: Sequence[Sequence[float]] = (),
        odom_pose: Sequence[float] | None = None,
        robot_ids: Sequence[int | None] | None = None,
    ) -> SessionEvents:
        """One control step of the running task (nothing when idle); ``robots`` are the other
        robots nearby ``(x, y)`` and ``robot_ids`` their indices (the yielding order)."""
        if self._token is None:
            return SessionEvents()
        if self._pending:
            self._task.begin(float(now))
            self._pending = False
        inputs = StepInputs(pose, grid, float(now), robots, odom_pose, robot_ids)
        step = self._task.update(inputs)
        plan = step.path if step.replanned else None
        if step.status is NavStatus.ACTIVE:
            self._last = step
            feedback = None
            if math.isfinite(step.distance_remaining):
                feedback = step
                self.feedback = (step, None if pose is None else tuple(pose), float(now))
            command = (step.linear, step.angular, step.lateral)
            return SessionEvents(command=command, feedback=feedback, plan=plan)
        return SessionEvents(command=_ZERO, ended=(self._end(step),), plan=plan)

    def _end(self, step: NavStep) -> GoalEnd:
        end = GoalEnd(self._token, step)
        self._task = self._token = None
        self._pending = False
        self._status, self._last = step.status, step
        return end
