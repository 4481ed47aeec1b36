"""One observation pass per tick: every robot's observation as arrays, robot axis first.

:meth:`Simulation.observation <maes_sim.core.Simulation.observation>` builds one
:class:`Observation` per tick (and per length unit) from the simulation's arrays; everything a
robot observes is read from it: ``Simulation.robot_state(i)`` and ``robot_states()`` are views of
it, the simulator node builds its ``maes_state`` messages from it and direct mode hands its
states to the logics. Lengths are converted once, for all robots, when the observation is made
in metres (``scale = tile_size``): positions and linear speeds are multiplied as arrays, each tag
once for the run. Python objects (:class:`~maes_sim.core.state.RobotState`) are made only when
a state is asked for, from per-tick columns shared by every robot.

Adding a sensor needs no edit here: an entry of :data:`maes_sim.core.sensors.SENSORS` is read
into :attr:`Observation.sensors` (robot axis first, scaled when it measures lengths) and fills
the ``RobotState`` field of its name (``docs/architecture.md``, "How to add a sensor").
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import MISSING, fields, replace
from typing import Any

import numpy as np

from maes_common.contract import maes_robot_id

from .commands import MAES_STATUS_NAMES
from .comms import Broadcast
from .sensors import SENSORS, sensor_value
from .state import NearbyRobot, RobotState, TagView, Vector2D

#: The RobotState fields a state made by :meth:`Observation._state` may leave to their default
#: (the sensors' fields of sensors not configured).
_STATE_DEFAULTS = {f.name: f.default for f in fields(RobotState) if f.default is not MISSING}

__all__ = ["Observation", "scaled_tag"]


class Observation:
    """Every robot's observation at one tick, in one length unit (tiles, or metres).

    Parameters
    ----------
    tick : int
        The logic tick observed.
    scale : float
        Length unit of the arrays, in tiles per unit: 1.0 for tiles, ``tile_size`` for metres.
    positions : ndarray, shape (N, 2)
        Believed positions (world frame, as each robot's SLAM places it).
    headings : ndarray, shape (N,)
        Headings, radians.
    status : ndarray, shape (N,)
        Status codes (``commands.Status``); :attr:`status_names` gives MAES 2.0's names.
    colliding : ndarray, shape (N,)
        Touching a wall or a robot at the end of the tick.
    velocities : ndarray, shape (N, 2)
        Linear (length unit per second) and angular (rad/s) speeds.
    robot_positions : ndarray, shape (N, 2)
        True positions (world frame): where the other robots sense each robot.
    nearby : tuple of ndarray
        ``(observer, observed)`` index pairs of the robots sensing each other, sorted by
        observer.
    inbox : callable
        ``inbox(i)``: the broadcasts robot ``i`` received this tick.
    tags : callable
        ``tags()``: per robot, the tags it reads (in this observation's unit).
    robot_types : sequence of str
        Each robot's type name (``robot_types`` / ``team`` in the config).
    sensors : mapping of str to ndarray, optional
        The state sensors' values (:data:`maes_sim.core.sensors.SENSORS`), by sensor name.

    Examples
    --------
    >>> from maes_sim.core import Simulation, config_from_dict
    >>> sim = Simulation(config_from_dict({"number_of_robots": 3}))
    >>> obs = sim.observation()
    >>> obs.positions.shape, obs.nearby_of(0).dtype
    ((3, 2), dtype('int64'))
    >>> obs.state(1) == sim.robot_state(1) and obs.states() == sim.robot_states()
    True
    >>> m = sim.observation(0.5)  # metres, converted once for every robot
    >>> bool(np.all(m.positions == obs.positions * 0.5))
    True
    """

    #: The array fields holding lengths: scaled when the observation is made in metres.
    LENGTH_FIELDS = ("positions", "robot_positions")

    def __init__(
        self,
        tick: int,
        scale: float,
        positions: np.ndarray,
        headings: np.ndarray,
        status: np.ndarray,
        colliding: np.ndarray,
        velocities: np.ndarray,
        robot_positions: np.ndarray,
        nearby: tuple[np.ndarray, np.ndarray],
        inbox: Callable[[int], list[Broadcast]],
        tags: Callable[[], Sequence[Sequence[TagView]]],
        robot_types: Sequence[str],
        sensors: Mapping[str, np.ndarray] | None = None,
    ) -> None:
        self.tick = int(tick)
        self.scale = float(scale)
        self.positions = positions
        self.headings = headings
        self.status = status
        self.colliding = colliding
        self.velocities = velocities
        self.robot_positions = robot_positions
        self.observer, self.observed = nearby
        self.n_robots = len(headings)
        #: Where robot i's sensed robots start in :attr:`observed` (length N + 1).
        self.nearby_bounds = np.searchsorted(self.observer, np.arange(self.n_robots + 1))
        self._inbox = inbox
        self._tags = tags
        self.robot_types = robot_types
        #: The state sensors' values by name (robot axis first, in this observation's unit).
        self.sensors: Mapping[str, np.ndarray] = {} if sensors is None else sensors
        self._columns: tuple[Any, ...] | None = None

    # -- arrays ---------------------------------------------------------------------------
    @property
    def status_names(self) -> list[str]:
        """MAES 2.0's ``RobotStatus`` name of every robot: "Idle", "Moving" or "Stopping"."""
        names = MAES_STATUS_NAMES
        return [names[k] for k in self.status.tolist()]

    def nearby_of(self, robot: int) -> np.ndarray:
        """Indices of the robots ``robot`` senses this tick (ascending)."""
        return self.observed[self.nearby_bounds[robot] : self.nearby_bounds[robot + 1]]

    def tags(self) -> Sequence[Sequence[TagView]]:
        """Per robot, the tags it reads this tick (deposit order; in this unit)."""
        return self._tags()

    def broadcasts(self, robot: int) -> list[Broadcast]:
        """The broadcasts ``robot`` received this tick."""
        return self._inbox(robot)

    # -- objects (views) ------------------------------------------------------------------
    def state(self, robot: int) -> RobotState:
        """Robot ``robot``'s ``maes_interfaces/State`` (the unit of this observation)."""
        return self._state(int(robot), self._per_tick_columns(), self._tags())

    def states(self) -> list[RobotState]:
        """Every robot's :meth:`state`, in robot order."""
        columns, tags = self._per_tick_columns(), self._tags()
        return [self._state(i, columns, tags) for i in range(self.n_robots)]

    def _per_tick_columns(self) -> tuple[Any, ...]:
        # Python values of every robot, made once per observation and shared by all states.
        if self._columns is None:
            views = np.fromiter(
                (
                    NearbyRobot(id=maes_robot_id(j), pos=Vector2D(x, y))
                    for j, (x, y) in enumerate(self.robot_positions.tolist())
                ),
                dtype=object,
                count=self.n_robots,
            )
            self._columns = (
                self.status_names,
                self.colliding.tolist(),
                self.positions.tolist(),
                self.headings.tolist(),
                views[self.observed].tolist(),  # one shared object per robot
                self.nearby_bounds.tolist(),
                {name: _sensor_column(values) for name, values in self.sensors.items()},
            )
        return self._columns

    def _state(self, i: int, columns: tuple[Any, ...], tags: Sequence[Sequence[TagView]]):
        status, colliding, positions, headings, seen, bounds, sensors = columns
        x, y = positions[i]
        # RobotState(...) without its frozen __init__'s per-field object.__setattr__ (a plain
        # frozen dataclass: no __post_init__, no slots), for every robot on every tick
        state = object.__new__(RobotState)
        state.__dict__.update(
            _STATE_DEFAULTS,
            tick=self.tick,
            status=status[i],
            colliding=colliding[i],
            incoming_broadcast_msgs=self._inbox(i),
            tags_nearby=list(tags[i]),
            nearby_robots=seen[bounds[i] : bounds[i + 1]],
            position=Vector2D(x, y),
            heading=headings[i],
            robot_type=self.robot_types[i],
            **{name: column[i] for name, column in sensors.items()},
        )
        return state

    # -- units ----------------------------------------------------------------------------
    def scaled(self, scale: float, tags: Callable[[], Sequence[Sequence[TagView]]]) -> Observation:
        """This observation with lengths multiplied by ``scale`` (``tags``: the tags in the
        new unit; :class:`~maes_sim.core.Simulation` keeps each tag's scaled copy for the run).
        """
        lengths = {name: getattr(self, name) * scale for name in self.LENGTH_FIELDS}
        velocities = self.velocities.copy()
        velocities[:, 0] *= scale
        sensors = {
            s.name: self.sensors[s.name] * scale if s.length else self.sensors[s.name]
            for s in SENSORS
            if s.name in self.sensors
        }
        return Observation(
            self.tick,
            self.scale * scale,
            headings=self.headings,
            status=self.status,
            colliding=self.colliding,
            velocities=velocities,
            nearby=(self.observer, self.observed),
            inbox=self._inbox,
            tags=tags,
            robot_types=self.robot_types,
            sensors=sensors,
            **lengths,
        )


def scaled_tag(tag: TagView, scale: float) -> TagView:
    """A tag with its position multiplied by ``scale``.

    Examples
    --------
    >>> scaled_tag(TagView("hi", Vector2D(2.0, -1.0), "robot0", 3), 0.5).pos
    Vector2D(x=1.0, y=-0.5)
    """
    return replace(tag, pos=Vector2D(tag.pos.x * scale, tag.pos.y * scale))


def _sensor_column(values: np.ndarray) -> list[Any]:
    """Every robot's :func:`sensor_value` of a sensor's array, in one pass: ``tolist`` gives
    the Python scalars ``item`` gives, a position row becomes a ``Vector2D``."""
    if isinstance(values, np.ndarray) and values.ndim == 1:
        return values.tolist()
    if isinstance(values, np.ndarray) and values.ndim == 2 and values.shape[1] == 2:
        return [Vector2D(float(x), float(y)) for x, y in values.tolist()]
    return [sensor_value(row) for row in values]
