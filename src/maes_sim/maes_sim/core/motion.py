"""Robot motion: the MAES movement model, a differential-drive option, and the tick integrator.

State is a struct of arrays (:class:`MotionState`, robot axis first, grid coordinates). One call
of :func:`advance_tick` advances every robot by one logic tick, i.e. ``physics_steps`` physics
steps of ``dt`` seconds, each split into ``substeps`` collision sub-steps; it returns a new state
and never modifies its inputs.

Speed response (both models, each axis: linear and angular)
    *Driving* towards a target speed ``u`` is a first-order lag,
    ``v <- u + (v - u) * p`` with ``p = 0.5 ** (dt / 0.4 s)``: from standstill a robot reaches
    half its target speed after exactly 0.4 s (4 logic ticks), 99.5 % after 3 s. This is Unity's
    rigid body with linear drag, ``v <- (v + a dt) / (1 + k dt)`` with ``a = k u``, for
    ``k = (2 ** (dt / 0.4) - 1) / dt`` (1.748 /s at dt = 0.01 s, so a = 5.24 tiles/s^2 at top
    speed 3 tiles/s).
    *Braking* (slowing down, reversing, stopping) is a faster lag towards the lower speed,
    ``v <- v * exp(-dt / tau)``, with MAES's own stop-time figures: ``tau = 0.055 s`` linear
    (MAES's ``FiniteMovementTask`` assumes the speed decays by ``e^(-2/11)`` per 10 ms physics
    step) and ``tau = 0.0381 s`` angular (its ``FiniteRotationTask``: ``e^(-1/3.81)``). From top
    speed a robot coasts 0.15 tiles / 0.10 rad and is still after about 0.35 s. A speed below
    0.2 % of the top speed snaps to zero.

Limits
    Top speed ``3 * relative_move_speed`` tiles/s (MAES). Top angular speed
    ``pi * relative_move_speed`` rad/s (180 deg/s): MAES turns with a third of its driving force
    (``RotateForce = 5`` vs ``MoveForce = 15``), i.e. a wheel rim speed of about 1 tile/s, which
    for its default 0.6-tile robot is ~190 deg/s; we keep it independent of the robot's size.

Finite commands (``move``, ``rotate``) brake ahead, as MAES does: at every step the speed is the
largest one (within what driving and braking allow) from which braking lands exactly on the
target, so a robot never overshoots; once the braking speed falls below the snap threshold the
last step covers what is left (at most ``snap * dt / (1 - q)``, < 1e-3 tiles / rad, at a speed
between full braking and full drive), so it stops on the target to rounding error (MAES's own
tests allow 0.1 tiles and 0.5 deg). The command completes when the robot is still.

Models (the registry: :mod:`maes_common.motion_models`; one model per robot, its type's)
    ``"maes"`` (default): a robot rotates in place or moves straight, never both (MAES). A
    command for the other axis first brakes the current one to zero. Velocity commands keep
    only the component with the larger share of its limit (:func:`map_velocity`).
    ``"differential_drive"``: both axes at once with the same limits and response; velocity
    commands map directly, so a Nav2 controller's arcs are followed.
    ``"omnidirectional"``: as ``differential_drive`` plus a sideways speed (``lateral``, to the
    robot's left) with the linear axis's response; the planar speed is capped at the top speed.

Robot types
    :class:`MotionParams` holds one radius, top speeds and model per robot
    (:meth:`MotionParams.for_robots`); the scalar fields describe a uniform team.

Odometry (the pose a robot believes, with optional noise) is :mod:`maes_sim.core.odometry`.

Collisions (:mod:`maes_sim.core.collision`) stop penetration and let robots slide along walls;
a new collision cancels a MAES-style command (``move``, ``rotate`` and the continuous ones), as
MAES's ``NotifyCollided`` does, but not a velocity command (the controller decides). Starting a
command that presses into an obstacle the robot rests against is a new collision too (MAES
re-declares the collision then).
"""

from __future__ import annotations

import math
import threading
from dataclasses import dataclass

import numpy as np

from maes_common.motion_models import (
    MODEL_NAMES,
    TOP_ANGULAR_SPEED,
    TOP_SPEED,
    model_code,
    top_speeds,
)

from . import commands as C
from .collision import MAX_STEP_FRACTION, TOUCH_TOL, RobotGrid
from .kernels.physics import (
    map_velocity_kernel,
    status_kernel,
    tick_kernel,
)
from .odometry import advance_odometry

__all__ = [
    "MODELS",
    "MotionParams",
    "MotionState",
    "MotionStepper",
    "TickResult",
    "advance_odometry",  # lives in .odometry; re-exported for the motion API's users
    "advance_tick",
    "map_velocity",
    "map_velocity_lateral",
    "robot_status",
]

#: Time from standstill to half the target speed while driving, s (4 MAES logic ticks).
RISE_HALF_LIFE = 0.4
#: Time constant of braking, linear and angular, s (MAES's stop-time estimators).
BRAKE_TAU = 0.055
ANGULAR_BRAKE_TAU = 0.0381
#: Speeds below this fraction of the top speed snap to zero.
SNAP_FRACTION = 2e-3
#: No moving obstacles (the physics kernels take a (K, 5) array; K = 0 skips them).
_NO_OBSTACLES = np.zeros((0, 5))
MODELS = MODEL_NAMES


def _positive(name: str, value: float) -> float:
    value = float(value)
    if not math.isfinite(value) or value <= 0.0:
        raise ValueError(f"MotionParams.{name} must be a finite number > 0, got {value!r}")
    return value


@dataclass(frozen=True)
class MotionParams:
    """Constants of the motion model (build with :meth:`from_values`).

    Attributes
    ----------
    radius : float
        Robot disc radius, tiles (``agent_relative_size / 2``).
    max_speed, max_angular_speed : float
        Top speeds, tiles/s and rad/s.
    dt : float
        Physics step, s.
    physics_steps : int
        Physics steps per logic tick.
    substeps : int
        Collision sub-steps per physics step; at least enough that a robot at top speed moves
        at most ``MAX_STEP_FRACTION * radius`` per sub-step (raised to that if given lower).
    model : str
        ``"maes"`` or ``"differential_drive"``.
    rise_half_life, brake_tau, angular_brake_tau : float
        Response times, s (see the module docstring).
    stop_on_collision : bool
        Cancel MAES-style commands on a collision (MAES's behaviour).
    radii, max_speeds, max_angular_speeds, models : tuple, optional
        Per robot (robot types, :meth:`for_robots`); None: every robot has the scalar value.
        The sub-steps then suit the robot needing the most.
    """

    radius: float = 0.3
    max_speed: float = TOP_SPEED
    max_angular_speed: float = TOP_ANGULAR_SPEED
    dt: float = 0.01
    physics_steps: int = 10
    substeps: int = 1
    model: str = "maes"
    rise_half_life: float = RISE_HALF_LIFE
    brake_tau: float = BRAKE_TAU
    angular_brake_tau: float = ANGULAR_BRAKE_TAU
    stop_on_collision: bool = True
    radii: tuple[float, ...] | None = None
    max_speeds: tuple[float, ...] | None = None
    max_angular_speeds: tuple[float, ...] | None = None
    models: tuple[str, ...] | None = None

    def __post_init__(self) -> None:
        for name in (
            "radius",
            "max_speed",
            "max_angular_speed",
            "dt",
            "rise_half_life",
            "brake_tau",
            "angular_brake_tau",
        ):
            _positive(name, getattr(self, name))
        if self.model not in MODELS:
            raise ValueError(f"MotionParams.model must be one of {MODELS}, got {self.model!r}")
        for name in ("physics_steps", "substeps"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 1:
                raise ValueError(f"MotionParams.{name} must be an integer >= 1, got {v!r}")
        per_robot = [self.radii, self.max_speeds, self.max_angular_speeds, self.models]
        if any(v is not None for v in per_robot):
            if any(v is None for v in per_robot) or len({len(v) for v in per_robot}) != 1:
                raise ValueError(
                    "MotionParams.radii, max_speeds, max_angular_speeds and models must be given "
                    "together, one value per robot"
                )
            for name in ("radii", "max_speeds", "max_angular_speeds"):
                values = tuple(_positive(name, v) for v in getattr(self, name))
                object.__setattr__(self, name, values)
            for m in self.models:
                model_code(m)
        # Sub-steps are what rules out tunnelling, so never fewer than the speed requires.
        pairs = [(self.max_speed, self.radius)]
        if self.radii is not None:
            pairs = list(zip(self.max_speeds, self.radii, strict=True))
        need = max(math.ceil(v * self.dt / (MAX_STEP_FRACTION * r) - 1e-12) for v, r in pairs)
        object.__setattr__(self, "substeps", max(int(self.substeps), need, 1))

    @classmethod
    def for_robots(
        cls,
        sizes: list[float],
        relative_move_speeds: list[float],
        models: list[str],
        logic_ticks_delta_millis: float = 100,
        physics_ticks_per_logic_update: int = 10,
    ) -> MotionParams:
        """Parameters of a team, one diameter, speed factor and model per robot.

        A uniform team gets the plain scalar parameters (no per-robot tuples), so its runs are
        those of :meth:`from_values` bit for bit.

        Examples
        --------
        >>> p = MotionParams.for_robots([0.6, 0.4], [1.0, 2.0], ["maes", "omnidirectional"])
        >>> p.radii, p.max_speeds, p.models, p.substeps
        ((0.3, 0.2), (3.0, 6.0), ('maes', 'omnidirectional'), 2)
        """
        first = cls.from_values(
            relative_move_speeds[0],
            sizes[0],
            logic_ticks_delta_millis,
            physics_ticks_per_logic_update,
            models[0],
        )
        if len(set(zip(sizes, relative_move_speeds, models, strict=True))) <= 1:
            return first
        return cls(
            radius=first.radius,
            max_speed=first.max_speed,
            max_angular_speed=first.max_angular_speed,
            dt=first.dt,
            physics_steps=first.physics_steps,
            model=first.model,
            radii=tuple(float(s) / 2.0 for s in sizes),
            max_speeds=tuple(top_speeds(float(v))[0] for v in relative_move_speeds),
            max_angular_speeds=tuple(top_speeds(float(v))[1] for v in relative_move_speeds),
            models=tuple(models),
        )

    def arrays(self, n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Per-robot ``(radius, max_speed, max_angular_speed, model code)`` arrays (n,) each."""
        cached = self.__dict__.get("_arrays")
        if cached is not None and cached[0].shape[0] == n:
            return cached
        if self.radii is None:
            out = (
                np.full(n, self.radius),
                np.full(n, self.max_speed),
                np.full(n, self.max_angular_speed),
                np.full(n, model_code(self.model), dtype=np.int8),
            )
        else:
            if len(self.radii) != n:
                raise ValueError(f"MotionParams describes {len(self.radii)} robots, got {n}")
            out = (
                np.array(self.radii),
                np.array(self.max_speeds),
                np.array(self.max_angular_speeds),
                np.array([model_code(m) for m in self.models], dtype=np.int8),
            )
        for a in out:
            a.flags.writeable = False
        object.__setattr__(self, "_arrays", out)
        return out

    def kernel_constants(self, n: int, grid: RobotGrid) -> tuple:
        """The arguments of :func:`~maes_sim.core.kernels.physics.tick_kernel` that stay the
        same from tick to tick for ``n`` robots: :meth:`limits`, the model codes, the sub-step's
        constants (:meth:`_step_constants`), the snap fraction and touch tolerance, and
        ``grid``'s (:meth:`RobotGrid.args`)."""
        sub_dt, steps, drive, brake, angular_brake, stop_on_collision = self._step_constants()
        return (
            self.limits(n), self.arrays(n)[3], sub_dt, steps, drive, brake, angular_brake,
            SNAP_FRACTION, stop_on_collision, TOUCH_TOL, *grid.args(),
        )  # fmt: skip

    def limits(self, n: int) -> np.ndarray:
        """The radii, top speeds and top turn rates of :meth:`arrays` as the rows of one
        read-only (3, n) array: what the tick's kernel takes (one array to hand over, not
        three)."""
        cached = self.__dict__.get("_limits")
        if cached is None or cached.shape[1] != n:
            cached = np.array(self.arrays(n)[:3])
            cached.flags.writeable = False
            object.__setattr__(self, "_limits", cached)
        return cached

    def _step_constants(self) -> tuple[float, int, float, float, float, bool]:
        """``(sub_dt, sub-steps per tick, drive, brake, angular brake factor,
        stop_on_collision)`` as :func:`advance_tick` hands them to its kernel: worked out once
        (the parameters are frozen), not every tick."""
        cached = self.__dict__.get("_step_consts")
        if cached is None:
            sub_dt = self.dt / self.substeps
            cached = (
                sub_dt,
                self.physics_steps * self.substeps,
                0.5 ** (sub_dt / self.rise_half_life),
                math.exp(-sub_dt / self.brake_tau),
                math.exp(-sub_dt / self.angular_brake_tau),
                bool(self.stop_on_collision),
            )
            object.__setattr__(self, "_step_consts", cached)
        return cached

    def robot_grid(self, n: int) -> RobotGrid:
        """The scratch :class:`~maes_sim.core.collision.RobotGrid` of ``n`` robots of these
        parameters, kept per calling thread (the kernels run without the GIL) and rebuilt
        by every kernel that uses it: not allocated again every tick."""
        grids = self.__dict__.get("_grids")
        if grids is None:
            grids = {}
            object.__setattr__(self, "_grids", grids)
        key = (threading.get_ident(), n)
        grid = grids.get(key)
        if grid is None:
            if len(grids) > 16:
                grids.clear()
            grid = grids[key] = RobotGrid(self.largest_radius, n)
        return grid

    @property
    def largest_radius(self) -> float:
        """The largest robot's radius, tiles (the robot grid's cell size follows it)."""
        return max(self.radii) if self.radii is not None else self.radius

    @classmethod
    def from_values(
        cls,
        relative_move_speed: float = 1.0,
        agent_relative_size: float = 0.6,
        logic_ticks_delta_millis: float = 100,
        physics_ticks_per_logic_update: int = 10,
        model: str = "maes",
        substeps: int = 1,
    ) -> MotionParams:
        """Parameters from MAES's config values.

        Examples
        --------
        >>> p = MotionParams.from_values(relative_move_speed=2.0)
        >>> p.max_speed, round(p.max_angular_speed, 4), p.dt, p.radius, p.substeps
        (6.0, 6.2832, 0.01, 0.3, 1)
        """
        rms = _positive("relative_move_speed", relative_move_speed)
        size = _positive("agent_relative_size", agent_relative_size)
        millis = _positive("logic_ticks_delta_millis", logic_ticks_delta_millis)
        steps = physics_ticks_per_logic_update
        if isinstance(steps, bool) or not isinstance(steps, (int, np.integer)) or steps < 1:
            raise ValueError(
                f"physics_ticks_per_logic_update must be an integer >= 1, got {steps!r}"
            )
        max_speed, max_angular_speed = top_speeds(rms)
        return cls(
            radius=size / 2.0,
            max_speed=max_speed,
            max_angular_speed=max_angular_speed,
            dt=millis / 1000.0 / int(steps),
            physics_steps=int(steps),
            substeps=substeps,
            model=model,
        )

    @property
    def tick_duration(self) -> float:
        """Length of a logic tick, s."""
        return self.dt * self.physics_steps

    @property
    def drag_coefficient(self) -> float:
        """Unity-style linear drag ``k`` (1/s) equivalent to the driving response at ``dt``."""
        return (2.0 ** (self.dt / self.rise_half_life) - 1.0) / self.dt


@dataclass(frozen=True)
class MotionState:
    """Kinematic state of N robots.

    Attributes
    ----------
    positions : ndarray, shape (N, 2)
        Disc centres, grid coordinates (tiles).
    headings : ndarray, shape (N,)
        Radians, counter-clockwise from +x, wrapped to [-pi, pi).
    linear : ndarray, shape (N,)
        Signed speed along the heading, tiles/s.
    angular : ndarray, shape (N,)
        Turn rate, rad/s (counter-clockwise positive).
    pressing : ndarray of bool, shape (N,), optional
        The robot pressed into a wall or robot in the last sub-step (contact memory, so that
        :attr:`TickResult.collided` reports only new contacts). Defaults to all False.
    lateral : ndarray, shape (N,), optional
        Sideways drive speed, tiles/s, to the robot's left (omnidirectional robots). Defaults
        to zeros.

    ``linear`` and ``angular`` are drive (wheel) speeds: against a wall a robot moves slower
    than ``linear`` says (the blocked part of the motion is projected away, see
    :mod:`maes_sim.core.collision`); the motion actually made is in :class:`TickResult`.
    """

    positions: np.ndarray
    headings: np.ndarray
    linear: np.ndarray
    angular: np.ndarray
    pressing: np.ndarray | None = None
    lateral: np.ndarray | None = None

    def __post_init__(self) -> None:
        pos = np.array(self.positions, dtype=np.float64)
        if pos.ndim != 2 or pos.shape[1] != 2:
            raise ValueError(f"MotionState.positions must have shape (N, 2), got {pos.shape}")
        n = pos.shape[0]
        object.__setattr__(self, "positions", pos)
        if self.lateral is None:
            object.__setattr__(self, "lateral", np.zeros(n))
        for name in ("headings", "linear", "angular", "lateral"):
            arr = np.array(getattr(self, name), dtype=np.float64)
            if arr.shape != (n,):
                raise ValueError(f"MotionState.{name} must have shape ({n},), got {arr.shape}")
            object.__setattr__(self, name, arr)
        for name in ("positions", "headings", "linear", "angular", "lateral"):
            if not np.isfinite(getattr(self, name)).all():
                raise ValueError(f"MotionState.{name} holds non-finite values")
        pressing = np.zeros(n, dtype=np.bool_) if self.pressing is None else self.pressing
        pressing = np.array(pressing, dtype=np.bool_)
        if pressing.shape != (n,):
            raise ValueError(f"MotionState.pressing must have shape ({n},), got {pressing.shape}")
        object.__setattr__(self, "pressing", pressing)

    @classmethod
    def _unchecked(
        cls,
        positions: np.ndarray,
        headings: np.ndarray,
        linear: np.ndarray,
        angular: np.ndarray,
        pressing: np.ndarray,
        lateral: np.ndarray,
    ) -> MotionState:
        """A state of arrays the caller owns and knows valid (the kernels' own outputs): no
        copies, no checks, so stepping costs no per-tick validation."""
        state = object.__new__(cls)
        state.__dict__.update(
            positions=positions,
            headings=headings,
            linear=linear,
            angular=angular,
            pressing=pressing,
            lateral=lateral,
        )
        return state

    def arrays(self) -> tuple[np.ndarray, ...]:
        """``(positions, headings, linear, angular, lateral, pressing)``: the order the motion
        kernels take them in."""
        d = self.__dict__
        return d["positions"], d["headings"], d["linear"], d["angular"], d["lateral"], d["pressing"]

    @classmethod
    def at_rest(cls, positions: np.ndarray, headings: np.ndarray | None = None) -> MotionState:
        """Robots standing still at ``positions`` (N, 2) with ``headings`` (N,) (default 0).

        Examples
        --------
        >>> MotionState.at_rest(np.array([[1.5, 2.5]])).linear.tolist()
        [0.0]
        """
        pos = np.asarray(positions, dtype=np.float64)
        n = pos.shape[0] if pos.ndim == 2 else -1
        head = np.zeros(max(n, 0)) if headings is None else headings
        return cls(pos, head, np.zeros(max(n, 0)), np.zeros(max(n, 0)))

    @property
    def n(self) -> int:
        """Number of robots."""
        return self.positions.shape[0]


@dataclass(frozen=True)
class TickResult:
    """Outcome of one logic tick (arrays of shape (N,) unless stated).

    Attributes
    ----------
    state : MotionState
        State at the end of the tick.
    commands : Commands
        Commands after the tick (finished/cancelled ones reset to ``NONE``).
    distance : ndarray
        Path length travelled this tick, tiles (including being pushed).
    odom_delta : ndarray, shape (N, 3)
        True pose increment ``(dx, dy, dtheta)``: translation in the robot frame at the start of
        the tick, rotation unwrapped. Input of :func:`advance_odometry`.
    colliding : ndarray of bool
        Touching a wall or robot at the end of the tick (within ``TOUCH_TOL``).
    collided : ndarray of bool
        A new contact began during the tick: the robot pressed into a wall or robot that it was
        not pressing into in the sub-step before (Unity's ``OnCollisionEnter``). Pressing on
        (sliding along a wall, braking against it) is not a new collision.
    completed : ndarray of bool
        A ``move``/``rotate`` reached its target and the robot came to rest this tick.
    aborted : ndarray of bool
        A command was cancelled by a collision this tick.
    status : ndarray of int8
        :class:`~maes_sim.core.commands.Status` codes after the tick.
    """

    state: MotionState
    commands: C.Commands
    distance: np.ndarray
    odom_delta: np.ndarray
    colliding: np.ndarray
    collided: np.ndarray
    completed: np.ndarray
    aborted: np.ndarray
    status: np.ndarray


def advance_tick(
    state: MotionState,
    commands: C.Commands,
    walls: np.ndarray,
    params: MotionParams,
    obstacles: np.ndarray | None = None,
) -> TickResult:
    """Advance every robot by one logic tick (pure: inputs are not modified).

    Parameters
    ----------
    state : MotionState
        N robots at the start of the tick (discs clear of walls and of each other).
    commands : Commands
        Their current commands.
    walls : ndarray of bool, shape (H, W)
        ``walls[iy, ix]``; outside the array counts as wall.
    params : MotionParams
    obstacles : ndarray, shape (K, 5), optional
        Moving obstacles standing where they are this tick (grid coordinates; rows
        ``kind, x, y, a, b``: :attr:`maes_sim.core.obstacles.Obstacles.shapes`). Robots are
        pushed out of them; a contact is a collision as with a wall.

    Returns
    -------
    TickResult

    Examples
    --------
    >>> from maes_sim.core import commands as C
    >>> walls = np.zeros((5, 20), dtype=bool)
    >>> s, c = MotionState.at_rest(np.array([[2.5, 2.5]])), C.Commands.idle(1)
    >>> C.move(c, 0, 1.0)
    >>> p = MotionParams.from_values()
    >>> for _ in range(30):
    ...     r = advance_tick(s, c, walls, p)
    ...     s, c = r.state, r.commands
    >>> round(float(s.positions[0, 0]), 3), str(C.Status(r.status[0]))
    (3.5, 'idle')
    """
    n = state.n
    if commands.n != n:
        raise ValueError(f"commands hold {commands.n} robots, state holds {n}")
    w = np.ascontiguousarray(walls, dtype=np.bool_)
    if w.ndim != 2:
        raise ValueError(f"walls must have shape (H, W), got {w.shape}")
    new_state = MotionState._unchecked(
        state.positions.copy(),
        state.headings.copy(),
        state.linear.copy(),
        state.angular.copy(),
        state.pressing.copy(),
        state.lateral.copy(),
    )
    cmds = commands.copy()
    distance, dtheta = np.empty(n), np.empty(n)
    collided, completed = np.empty(n, dtype=np.bool_), np.empty(n, dtype=np.bool_)
    aborted, colliding = np.empty(n, dtype=np.bool_), np.empty(n, dtype=np.bool_)
    odom, status = np.empty((n, 3)), np.empty(n, dtype=np.int8)
    # the trigonometry of the start headings stays numpy's (the same bits as ever); the rest
    # is compiled arithmetic in its old order, one call
    tick_kernel(
        w, no_obstacles(obstacles), *params.kernel_constants(n, params.robot_grid(n)),
        state.positions, np.cos(state.headings), np.sin(state.headings),
        *new_state.arrays(), *cmds.arrays(),
        distance, dtheta, collided, completed, aborted, colliding, odom, status,
    )  # fmt: skip
    result = object.__new__(TickResult)  # the arrays made above: no checks to run
    result.__dict__.update(
        state=new_state,
        commands=cmds,
        distance=distance,
        odom_delta=odom,
        colliding=colliding,
        collided=collided,
        completed=completed,
        aborted=aborted,
        status=status,
    )
    return result


def no_obstacles(obstacles: np.ndarray | None) -> np.ndarray:
    """The moving obstacles (K, 5) as the physics kernels take them: float64, C-contiguous, an
    empty (0, 5) array for none."""
    return _NO_OBSTACLES if obstacles is None else np.ascontiguousarray(obstacles, np.float64)


class MotionStepper:
    """The simulator's motion tick: :func:`advance_tick` on a state and commands the caller
    owns, advanced in place.

    The same arithmetic as :func:`advance_tick` (one kernel serves both); what it saves is the
    copies of the state and the commands and the new arrays of every tick.
    :class:`~maes_sim.core.Simulation` hands :attr:`constants` to a kernel that also books the
    tick (:func:`maes_sim.core.kernels.tick.move_kernel`).

    Parameters
    ----------
    params : MotionParams
    n : int
        Number of robots.

    Attributes
    ----------
    constants : tuple
        :meth:`MotionParams.kernel_constants` with this stepper's own robot grid (a stepper is
        used by one thread at a time, as the simulation it belongs to).

    Examples
    --------
    >>> from maes_sim.core import commands as C
    >>> walls = np.zeros((5, 20), dtype=bool)
    >>> p = MotionParams.from_values()
    >>> s, c = MotionState.at_rest(np.array([[2.5, 2.5]])), C.Commands.idle(1)
    >>> C.move(c, 0, 1.0)
    >>> ref = advance_tick(s, c, walls, p)
    >>> colliding, collided, status = MotionStepper(p, 1).advance(s, c, walls)
    >>> bool((s.positions == ref.state.positions).all()), bool((status == ref.status).all())
    (True, True)
    """

    def __init__(self, params: MotionParams, n: int) -> None:
        self.constants = params.kernel_constants(n, RobotGrid(params.largest_radius, n))

    def advance(
        self,
        state: MotionState,
        commands: C.Commands,
        walls: np.ndarray,
        obstacles: np.ndarray | None = None,
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Advance ``state`` and ``commands`` (N robots) by one tick in place; ``walls`` a
        C-contiguous bool (H, W) array, ``obstacles`` as in :func:`advance_tick`.

        Returns
        -------
        colliding, collided : ndarray of bool, shape (N,)
        status : ndarray of int8, shape (N,)
            As in :class:`TickResult`; new arrays, the caller's to keep.
        """
        n = state.positions.shape[0]
        colliding, collided = np.empty(n, dtype=np.bool_), np.empty(n, dtype=np.bool_)
        status = np.empty(n, dtype=np.int8)
        tick_kernel(
            walls, no_obstacles(obstacles), *self.constants,
            state.positions.copy(), np.cos(state.headings), np.sin(state.headings),
            *state.arrays(), *commands.arrays(),
            np.empty(n), np.empty(n), collided, np.empty(n, dtype=np.bool_),
            np.empty(n, dtype=np.bool_), colliding, np.empty((n, 3)), status,
        )  # fmt: skip
        return colliding, collided, status


def robot_status(state: MotionState, commands: C.Commands, params: MotionParams) -> np.ndarray:
    """Status code (:class:`~maes_sim.core.commands.Status`) of every robot, shape (N,) int8.

    ``MOVING``/``ROTATING`` while a command drives that axis (also while it waits for the other
    axis to brake under the MAES model), ``STOPPING`` while braking (after ``stop``, a
    cancelled command, or a ``move``/``rotate`` braking onto its target), else ``IDLE``.

    Examples
    --------
    >>> from maes_sim.core import commands as C
    >>> s, c = MotionState.at_rest(np.zeros((2, 2))), C.Commands.idle(2)
    >>> C.rotate(c, 1, 1.0)
    >>> [str(C.Status(k)) for k in robot_status(s, c, MotionParams())]
    ['idle', 'rotating']
    """
    out = np.zeros(state.n, dtype=np.int8)
    _, vmax, wmax, models = params.arrays(state.n)
    status_kernel(
        state.linear,
        state.angular,
        state.lateral,
        commands.kind,
        commands.linear,
        commands.angular,
        commands.lateral,
        commands.stopping,
        vmax,
        wmax,
        models,
        out,
    )
    return out


def map_velocity(
    linear: np.ndarray, angular: np.ndarray, params: MotionParams, lateral: np.ndarray = 0.0
) -> tuple[np.ndarray, np.ndarray]:
    """Speeds a velocity command actually asks of the model, shapes (N,) each.

    Both are clamped to the top speeds. Under ``"maes"`` only one survives: linear when
    ``|linear| / max_speed > |angular| / max_angular_speed``, else angular (a tie turns: a robot
    should face its way before driving). ``"differential_drive"`` keeps both. With per-robot
    parameters the arrays are the team's, robot by robot. (The sideways part, which only
    ``"omnidirectional"`` keeps, is :func:`map_velocity_lateral`'s.)

    Examples
    --------
    >>> p = MotionParams()
    >>> lin, ang = map_velocity(np.array([1.0, 0.3, 9.0]), np.array([0.5, 2.0, 0.0]), p)
    >>> lin.tolist(), ang.tolist()
    ([1.0, 0.0, 3.0], [0.0, 2.0, 0.0])
    """
    lin, ang, _ = map_velocity_lateral(linear, angular, lateral, params)
    return lin, ang


def map_velocity_lateral(
    linear: np.ndarray, angular: np.ndarray, lateral: np.ndarray, params: MotionParams
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:func:`map_velocity` with the sideways speed: ``(linear, angular, lateral)``.

    Examples
    --------
    >>> p = MotionParams(model="omnidirectional")
    >>> [a.tolist() for a in map_velocity_lateral([3.0], [0.0], [4.0], p)]
    [[1.7999999999999998], [0.0], [2.4]]
    """
    lin = np.array(linear, dtype=np.float64, ndmin=1)
    ang = np.array(angular, dtype=np.float64, ndmin=1)
    lat = np.array(lateral, dtype=np.float64, ndmin=1)
    lin, ang, lat = (a.copy() for a in np.broadcast_arrays(lin, ang, lat))
    if params.radii is None:
        n = lin.shape[0]
        vmax = np.full(n, params.max_speed)
        wmax = np.full(n, params.max_angular_speed)
        models = np.full(n, model_code(params.model), dtype=np.int8)
    else:
        _, vmax, wmax, models = params.arrays(lin.shape[0])
    map_velocity_kernel(lin, ang, lat, vmax, wmax, models)
    return lin, ang, lat
