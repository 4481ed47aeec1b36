"""The config dataclasses: MAES 2.0's sections and keys, MAES 2.0's defaults, and their rules.

Every section is a frozen dataclass that validates itself in ``__post_init__``, so a config built
in Python (or changed with ``dataclasses.replace``) obeys exactly the rules a YAML file does.
Sections, keys and defaults follow MAES 2.0 (its C# YAML loader and its ROS ``maes_config.yaml``);
``world``, ``motion`` and ``stack`` are MAES-ROS additions (see
docs/config_reference.md).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field, fields
from typing import Any, ClassVar

from maes_common.motion_models import MODEL_NAMES
from maes_sim.core.config_checks import (
    Bool,
    Choice,
    ConfigError,
    Float,
    Int,
    IntList,
    Nullable,
    OpenInterval,
    Section,
    Text,
    show,
)
from maes_sim.core.obstacle_config import ObstaclesCheck, ObstacleSpec
from maes_sim.core.radio import RADIO_DEFAULTS, RADIO_MODEL_NAMES, radio_checks
from maes_sim.core.robot_types import (
    MAX_ODOMETRY_NOISE,
    PER_ROBOT_KEYS,
    RobotType,
    RobotTypesCheck,
    RobotTypeSpec,
    TeamCheck,
    TeamEntry,
    resolve_team,
)

#: Map sides (tiles) allowed for generated maps: smaller cannot hold a room and a robot; larger
#: makes the per-robot SLAM maps (N, H, W) unreasonably big.
MIN_MAP_SIDE = 10
MAX_MAP_SIDE = 5000
#: Open tiles left inside the border, per side, at least.
MIN_MAP_INTERIOR = 5
MAX_ROBOTS = 5000
#: Largest tick count of any interval, age or end tick (2^31 - 1 ticks: 6.8 years at 100 ms).
MAX_TICKS = 2**31 - 1
#: Logic tick length: up to 10 s (MAES uses 100 ms). Sensing, SLAM, messages and commands happen
#: once per tick, so a longer tick lets a robot at top speed (30 tiles in 10 s) cross a room
#: unseen; the tick-cost rule below bounds what long ticks cost.
MAX_TICK_MILLIS = 10_000
#: Physics steps per logic tick: up to 100 (1 ms steps at MAES's 100 ms tick).
MAX_PHYSICS_STEPS = 100
#: Collision sub-steps one logic tick may need (physics steps x sub-steps per step; MAES's
#: defaults need 10). A robot moves at most a quarter of its radius per sub-step (that is what
#: rules out tunnelling), so tiny, fast robots or long ticks multiply them; past this budget a
#: tick costs over 100x MAES's and a run of any length would not finish.
MAX_SUBSTEPS_PER_TICK = 1000
#: Top speed factor: up to 100 (300 tiles/s).
MAX_RELATIVE_SPEED = 100.0
#: Smallest robot diameter, tiles.
MIN_AGENT_SIZE = 0.01
#: Ranges and the SLAM pose error never need to exceed the diagonal of the largest map.
MAX_RANGE = 7072.0
#: Per-robot SLAM maps take 1 byte per tile per robot: number_of_robots x map tiles at most
#: (1 GiB, so a run with its other per-tile arrays fits in 4 GiB).
MAX_SLAM_CELLS = 2**30
#: Cave passages: a disc of this radius is swept along each passage (memory grows with its area).
MAX_PASSAGE_WIDTH = 20
#: Cave smoothing converges in a few passes; more only cost time.
MAX_SMOOTHING_RUNS = 100
#: Metres per tile.
MIN_TILE_SIZE, MAX_TILE_SIZE = 1e-3, 1e3
#: File types the custom-map loader reads: MAES's PGM and Nav2 map_server YAML.
CUSTOM_MAP_SUFFIXES = (".pgm", ".yaml", ".yml")
#: statistics_result_path values meaning "the default place" (MAES: "Default" or empty).
DEFAULT_RESULTS_DIR = "results"
#: Tags one robot state carries by default (the nearest in range): a state with thousands of
#: 1 KB tags cost the node most of its speed, every tick (issue 17; bench/bench_tags.py).
DEFAULT_MAX_TAGS_PER_STATE = 100
#: Upper bound of performance.threads (more threads than this no machine here has).
MAX_THREADS = 256
#: Upper bound of stack.max_tags_per_state (the simulator keeps at most 10^6 tags).
MAX_TAGS_PER_STATE = 1_000_000


def _setting(default: Any, check: Any) -> Any:
    return field(default=default, metadata={"check": check})


def _sub(cls: type, *, optional: bool = False) -> dict[str, Any]:
    return {"check": Section(cls, optional), "section": cls}


class _Section:
    """Runs every field's check, then the section's cross-field rules."""

    #: Dotted key path of the section inside the config file ("" for the top level).
    PATH: ClassVar[str] = ""

    def __post_init__(self) -> None:
        for f in fields(self):  # type: ignore[arg-type]
            check = f.metadata.get("check")
            if check is not None:
                object.__setattr__(self, f.name, check(getattr(self, f.name), self.key(f.name)))
        self._check_combination()

    def _check_combination(self) -> None:
        """Rules that involve several keys; override where needed."""

    @classmethod
    def key(cls, name: str) -> str:
        """Dotted key path of setting ``name`` of this section."""
        return f"{cls.PATH}.{name}" if cls.PATH else name

    def _set(self, name: str, value: Any) -> None:
        object.__setattr__(self, name, value)


class _ResultsPath:
    """MAES's ``statistics_result_path``: "Default", "" or null mean :data:`DEFAULT_RESULTS_DIR`."""

    def expected(self) -> str:
        return 'a directory path, or "Default" / "" / null for results/'

    def __call__(self, value: Any, key: str) -> str:
        if value is None or (isinstance(value, str) and value.strip().lower() in ("", "default")):
            return DEFAULT_RESULTS_DIR
        if not isinstance(value, str):
            raise ConfigError(
                f"got {show(value)}, expected {self.expected()}", key=key, value=value
            )
        return value


@dataclass(frozen=True)
class GlobalSettings(_Section):
    """``global_settings``: tick timing, visualisation switches and statistics output."""

    PATH: ClassVar[str] = "global_settings"
    logic_ticks_delta_millis: int = _setting(100, Int(lo=1, hi=MAX_TICK_MILLIS))
    physics_ticks_per_logic_update: int = _setting(10, Int(lo=1, hi=MAX_PHYSICS_STEPS))
    draw_communication: bool = _setting(True, Bool())
    show_environment_tags: bool = _setting(True, Bool())
    should_write_csv_results: bool = _setting(False, Bool())
    statistics_result_path: str = _setting(DEFAULT_RESULTS_DIR, _ResultsPath())
    ticks_per_stats_snapshot: int = _setting(10, Int(lo=1, hi=MAX_TICKS))
    populate_adjacency_and_comm_groups_every_tick: bool = _setting(False, Bool())
    ticks_before_exploration_heatmap_cold: int = _setting(2400, Int(lo=1, hi=MAX_TICKS))
    ticks_before_coverage_heatmap_cold: int = _setting(2400, Int(lo=1, hi=MAX_TICKS))

    @property
    def logic_tick_seconds(self) -> float:
        """Simulated seconds per logic tick (0.1 by default)."""
        return self.logic_ticks_delta_millis / 1000.0

    @property
    def physics_step_seconds(self) -> float:
        """Simulated seconds per physics step (0.01 by default)."""
        return self.logic_tick_seconds / self.physics_ticks_per_logic_update


@dataclass(frozen=True)
class RobotConstraints(_Section):
    """``robot_constraints``: sensing, communication, SLAM and body settings (tiles, ticks)."""

    PATH: ClassVar[str] = "robot_constraints"
    broadcast_range: float = _setting(15.0, Float(lo=0.0, hi=MAX_RANGE, allow_inf=True))
    broadcast_blocked_by_walls: bool = _setting(False, Bool())
    sense_nearby_agents_range: float = _setting(5.0, Float(lo=0.0, hi=MAX_RANGE, allow_inf=True))
    sense_nearby_agents_blocked_by_walls: bool = _setting(True, Bool())
    automatically_update_slam: bool = _setting(True, Bool())
    slam_update_interval_in_ticks: int = _setting(10, Int(lo=1, hi=MAX_TICKS))
    slam_sync_interval_in_ticks: int = _setting(10, Int(lo=1, hi=MAX_TICKS))
    slam_position_inaccuracy: float = _setting(0.5, Float(lo=0.0, hi=MAX_RANGE))
    distribute_slam: bool = _setting(False, Bool())
    environment_tag_read_range: float = _setting(4.0, Float(lo=0.0, hi=MAX_RANGE, allow_inf=True))
    slam_raytrace_range: float = _setting(7.0, Float(lo=0.0, hi=MAX_RANGE, lo_open=True))
    relative_move_speed: float = _setting(1.0, Float(lo=0.0, hi=MAX_RELATIVE_SPEED, lo_open=True))
    agent_relative_size: float = _setting(0.6, Float(lo=MIN_AGENT_SIZE, hi=1.0))


_PERCENT = Nullable(Float(lo=0.0, hi=100.0, lo_open=True))


@dataclass(frozen=True)
class EndCriteria(_Section):
    """``end_criteria``: the run ends at the first criterion met; all null = it never ends."""

    PATH: ClassVar[str] = "end_criteria"
    coverage_percent: float | None = _setting(None, _PERCENT)
    exploration_percent: float | None = _setting(None, _PERCENT)
    tick: int | None = _setting(None, Nullable(Int(lo=1, hi=MAX_TICKS)))

    @property
    def never_ends(self) -> bool:
        """True when no criterion is set: the run goes on until stopped from outside."""
        return (
            self.coverage_percent is None
            and self.exploration_percent is None
            and (self.tick is None)
        )


@dataclass(frozen=True)
class SpawnTogether(_Section):
    """``robot_spawn_config.spawn_together``: a cluster around a point (world tiles) or centre."""

    PATH: ClassVar[str] = "robot_spawn_config.spawn_together"
    suggested_starting_point_x: int | None = _setting(
        None, Nullable(Int(lo=-MAX_MAP_SIDE, hi=MAX_MAP_SIDE))
    )
    suggested_starting_point_y: int | None = _setting(
        None, Nullable(Int(lo=-MAX_MAP_SIDE, hi=MAX_MAP_SIDE))
    )

    def _check_combination(self) -> None:
        x, y = self.suggested_starting_point_x, self.suggested_starting_point_y
        if (x is None) != (y is None):
            given, missing = ("x", "y") if y is None else ("y", "x")
            raise ConfigError(
                f"suggested_starting_point_{given} is set but suggested_starting_point_{missing} "
                f"is not: give both {self.key('suggested_starting_point_x')} and "
                f"{self.key('suggested_starting_point_y')}, or neither (the map centre)",
                key=self.key(f"suggested_starting_point_{missing}"),
                value=None,
            )

    @property
    def starting_point(self) -> tuple[int, int] | None:
        """``(x, y)`` in world tiles, or None for the map centre."""
        if self.suggested_starting_point_x is None:
            return None
        return (self.suggested_starting_point_x, self.suggested_starting_point_y)


_SPAWN_MODES = ("biggest_room", "spawn_together", "spawn_at_hallway_ends")


@dataclass(frozen=True)
class RobotSpawnConfig(_Section):
    """``robot_spawn_config``: at most one mode; none selected means ``spawn_together: {}``."""

    PATH: ClassVar[str] = "robot_spawn_config"
    biggest_room: bool = _setting(False, Bool(null_as=False))
    spawn_together: SpawnTogether | None = field(
        default=None, metadata=_sub(SpawnTogether, optional=True)
    )
    spawn_at_hallway_ends: bool = _setting(False, Bool(null_as=False))

    def _check_combination(self) -> None:
        chosen = [m for m in _SPAWN_MODES if getattr(self, m) not in (None, False)]
        if len(chosen) > 1:
            raise ConfigError(
                f"select at most one spawn mode, got {' and '.join(chosen)}; set the others to "
                "null/false or delete them",
                key=self.PATH,
                value=tuple(chosen),
            )
        if not chosen:  # MAES-ROS default: robots start together around the map centre
            self._set("spawn_together", SpawnTogether())

    @property
    def mode(self) -> str:
        """``"biggest_room"``, ``"spawn_together"`` or ``"spawn_at_hallway_ends"``."""
        return next(m for m in _SPAWN_MODES if getattr(self, m) not in (None, False))


@dataclass(frozen=True)
class CaveConfig(_Section):
    """``map.cave_config``: cellular-automaton cave generator."""

    PATH: ClassVar[str] = "map.cave_config"
    smoothing_runs: int = _setting(4, Int(lo=0, hi=MAX_SMOOTHING_RUNS))
    connection_passage_width: int = _setting(4, Int(lo=1, hi=MAX_PASSAGE_WIDTH))
    # 100 % would make the whole map wall before smoothing, leaving nothing to explore.
    random_fill_percent: int = _setting(40, Int(lo=0, hi=99))
    wall_threshold_size: int = _setting(10, Int(lo=0, hi=MAX_MAP_SIDE**2))
    room_threshold_size: int = _setting(10, Int(lo=0, hi=MAX_MAP_SIDE**2))


@dataclass(frozen=True)
class BuildingConfig(_Section):
    """``map.building_config``: rooms and hallways generator."""

    PATH: ClassVar[str] = "map.building_config"
    hall_width: int = _setting(4, Int(lo=1, hi=MAX_MAP_SIDE))
    max_hall_in_percent: float = _setting(20.0, Float(lo=0.0, hi=100.0))
    min_room_side_length: int = _setting(6, Int(lo=1, hi=MAX_MAP_SIDE))
    door_width: int = _setting(2, Int(lo=1, hi=MAX_MAP_SIDE))
    door_padding: int = _setting(2, Int(lo=0, hi=MAX_MAP_SIDE))
    room_split_chance: int = _setting(85, Int(lo=0, hi=100))

    def _check_combination(self) -> None:
        need = 2 * self.door_padding + self.door_width
        if self.min_room_side_length < need:
            raise ConfigError(
                f"got {self.min_room_side_length}, but a room side must fit a door with padding on "
                f"both sides: {self.key('min_room_side_length')} >= 2 * "
                f"{self.key('door_padding')} + {self.key('door_width')} = 2 * "
                f"{self.door_padding} + {self.door_width} = {need}",
                key=self.key("min_room_side_length"),
                value=self.min_room_side_length,
            )


#: The map section's keys choosing a map generator (``maes_sim.core.world.generators``): a
#: generator's section is a ``<kind>_config`` field of :class:`MapConfig`, a map file is
#: ``custom_map_filename`` (kind ``custom``).
_CUSTOM_MAP_KEY = "custom_map_filename"


@dataclass(frozen=True)
class MapConfig(_Section):
    """``map``: size and exactly one map kind; none given means a building with defaults.

    ``custom_map_filename`` is stored as an absolute path (a relative one is resolved against the
    config file's folder when loading a file, against the working directory otherwise).
    ``width_in_tiles``/``height_in_tiles`` are ignored for custom maps (the file sets the size).
    """

    PATH: ClassVar[str] = "map"
    width_in_tiles: int = _setting(50, Int(lo=MIN_MAP_SIDE, hi=MAX_MAP_SIDE))
    height_in_tiles: int = _setting(50, Int(lo=MIN_MAP_SIDE, hi=MAX_MAP_SIDE))
    border_size: int = _setting(1, Int(lo=1, hi=MAX_MAP_SIDE))
    wall_height: float = _setting(2.0, Float(lo=0.0, hi=1e6, lo_open=True))
    cave_config: CaveConfig | None = field(default=None, metadata=_sub(CaveConfig, optional=True))
    building_config: BuildingConfig | None = field(
        default=None, metadata=_sub(BuildingConfig, optional=True)
    )
    custom_map_filename: str | None = _setting(None, Nullable(Text()))

    def _check_combination(self) -> None:
        interior = min(self.width_in_tiles, self.height_in_tiles) - 2 * self.border_size
        if interior < MIN_MAP_INTERIOR:
            raise ConfigError(
                f"got {self.border_size}, which leaves {interior} tiles inside the border of a "
                f"{self.width_in_tiles}x{self.height_in_tiles} map; need min(width_in_tiles, "
                f"height_in_tiles) - 2 * border_size >= {MIN_MAP_INTERIOR}",
                key=self.key("border_size"),
                value=self.border_size,
            )
        keys = self.kind_keys()
        kinds = [k for k in keys if getattr(self, k) is not None]
        if len(kinds) > 1:
            raise ConfigError(
                f"give only one of {', '.join(keys[:-1])} or {keys[-1]}, got {' and '.join(kinds)}",
                key=self.PATH,
                value=tuple(kinds),
            )
        if not kinds:  # MAES-ROS default: a building map with MAES's generator settings
            self._set("building_config", BuildingConfig())
        name = self.custom_map_filename
        if name is not None:
            if not name.lower().endswith(CUSTOM_MAP_SUFFIXES):
                raise ConfigError(
                    f"got {show(name)}, expected a .pgm image or a Nav2 map .yaml file",
                    key=self.key("custom_map_filename"),
                    value=name,
                )
            self._set("custom_map_filename", os.path.abspath(os.path.expanduser(name)))

    @classmethod
    def kind_keys(cls) -> tuple[str, ...]:
        """The keys choosing the map's generator: every ``<kind>_config`` section, sorted,
        then ``custom_map_filename``."""
        sections = sorted(f.name for f in fields(cls) if f.name.endswith("_config"))
        return (*sections, _CUSTOM_MAP_KEY)

    @property
    def kind(self) -> str:
        """The map generator's name: ``"building"``, ``"cave"``, ``"custom"`` (a map file) or
        that of another ``<kind>_config`` section."""
        if self.custom_map_filename is not None:
            return "custom"
        chosen = [k for k in self.kind_keys()[:-1] if getattr(self, k) is not None]
        return chosen[0].removesuffix("_config") if chosen else "building"


@dataclass(frozen=True)
class WorldConfig(_Section):
    """``world`` (MAES-ROS): the scale between MAES tiles and ROS metres."""

    PATH: ClassVar[str] = "world"
    tile_size: float = _setting(1.0, Float(lo=MIN_TILE_SIZE, hi=MAX_TILE_SIZE))


@dataclass(frozen=True)
class MotionConfig(_Section):
    """``motion`` (MAES-ROS): movement model and the odometry noise of the believed pose (of
    every robot type that does not set its own: ``robot_types.<name>.motion``)."""

    PATH: ClassVar[str] = "motion"
    model: str = _setting("maes", Choice(*MODEL_NAMES))
    odometry_noise: float = _setting(0.0, Float(lo=0.0, hi=MAX_ODOMETRY_NOISE))
    heading_noise: float = _setting(0.0, Float(lo=0.0, hi=MAX_ODOMETRY_NOISE))


@dataclass(frozen=True)
class LidarConfig(_Section):
    """``lidar`` (MAES-ROS): what stops the simulated lidar's rays besides walls."""

    PATH: ClassVar[str] = "lidar"
    robots_block_rays: bool = _setting(True, Bool())


_RADIO = radio_checks(RADIO_MODEL_NAMES)


@dataclass(frozen=True)
class CommunicationConfig(_Section):
    """``communication`` (MAES-ROS): the radio model every robot type uses unless it sets its
    own (``robot_types.<t>.communication``); see :mod:`maes_sim.core.radio` and
    docs/radio.md. Keys a model does not use are ignored."""

    PATH: ClassVar[str] = "communication"
    model: str = _setting(RADIO_DEFAULTS["model"], _RADIO["model"])
    loss_probability: float = _setting(0.0, _RADIO["loss_probability"])
    latency_ticks: int = _setting(0, _RADIO["latency_ticks"])
    max_messages_per_tick: int | None = _setting(None, _RADIO["max_messages_per_tick"])
    good_to_bad_probability: float = _setting(0.0, _RADIO["good_to_bad_probability"])
    bad_to_good_probability: float = _setting(1.0, _RADIO["bad_to_good_probability"])
    loss_probability_good: float = _setting(0.0, _RADIO["loss_probability_good"])
    loss_probability_bad: float = _setting(1.0, _RADIO["loss_probability_bad"])
    distance_exponent: float = _setting(2.0, _RADIO["distance_exponent"])


@dataclass(frozen=True)
class OccupancyConfig(_Section):
    """``stack.occupancy`` (MAES-ROS): the log-odds update of ``stack.slam: occupancy``
    (:mod:`maes_sim.core.occupancy`), as probabilities: a returned ray's end cell is updated
    with ``hit_probability``, every cell a ray crosses with ``miss_probability``, and a cell's
    probability stays within ``[clamp_min_probability, clamp_max_probability]`` so it can change
    its mind. The defaults are OctoMap's."""

    PATH: ClassVar[str] = "stack.occupancy"
    hit_probability: float = _setting(0.7, OpenInterval(0.5, 1.0, "above 0.5: a hit raises"))
    miss_probability: float = _setting(0.4, OpenInterval(0.0, 0.5, "below 0.5: a miss lowers"))
    clamp_min_probability: float = _setting(
        0.12, OpenInterval(0.0, 0.5, "below 0.5: a free cell stays free")
    )
    clamp_max_probability: float = _setting(
        0.97, OpenInterval(0.5, 1.0, "above 0.5: an occupied cell stays occupied")
    )


#: The values of ``stack.slam``: who builds the robots' maps.
SLAM_MODES = ("simulated", "occupancy", "slam_toolbox")
#: The ``stack.slam`` values whose maps the simulator builds and publishes (``map``, ``map ->
#: odom``); with the others a SLAM node per robot does.
SIMULATOR_SLAM_MODES = ("simulated", "occupancy")


@dataclass(frozen=True)
class StackConfig(_Section):
    """``stack`` (MAES-ROS): which SLAM and navigation serve the robots, how ``occupancy``
    maps are updated, and what one robot state carries (``max_tags_per_state``: the nearest
    tags in range, at most this many; the same in direct mode)."""

    PATH: ClassVar[str] = "stack"
    slam: str = _setting("simulated", Choice(*SLAM_MODES))
    nav: str = _setting("builtin", Choice("builtin", "nav2"))
    cmd_vel_timeout: float = _setting(0.5, Float(lo=0.0, hi=1e6, lo_open=True))
    max_tags_per_state: int = _setting(DEFAULT_MAX_TAGS_PER_STATE, Int(lo=1, hi=MAX_TAGS_PER_STATE))
    occupancy: OccupancyConfig = field(
        default_factory=OccupancyConfig, metadata=_sub(OccupancyConfig)
    )


@dataclass(frozen=True)
class PerformanceConfig(_Section):
    """``performance`` (MAES-ROS): how the simulator uses the machine; never changes a result.

    ``threads``: CPU threads the lidar kernel (ray casting with exploration and SLAM marking)
    splits the robots over; 1 runs it serially. numba's thread pool caps it
    (``NUMBA_NUM_THREADS``, default the number of cores)."""

    PATH: ClassVar[str] = "performance"
    threads: int = _setting(1, Int(lo=1, hi=MAX_THREADS))


@dataclass(frozen=True)
class ResultsConfig(_Section):
    """``results`` (MAES-ROS): what a run writes besides MAES 2.0's statistics; never changes a
    result.

    ``pictures``: the result pictures (``exploration.png``, ``coverage.png``,
    ``exploration_first_seen.png``, ``progress.png``); false leaves them out, and matplotlib
    with them, for many short runs (a sweep, a test)."""

    PATH: ClassVar[str] = "results"
    pictures: bool = _setting(True, Bool())


@dataclass(frozen=True)
class SimConfig(_Section):
    """A whole run: MAES 2.0's top-level keys plus the ``world``, ``motion``, ``lidar``,
    ``stack``, ``performance`` and ``results`` sections, the robot types and team
    (:mod:`maes_sim.core.robot_types`) and the moving obstacles
    (:mod:`maes_sim.core.obstacle_config`).

    Examples
    --------
    >>> cfg = SimConfig(number_of_robots=3, map=MapConfig(cave_config=CaveConfig()))
    >>> cfg.map.kind, cfg.robot_spawn_config.mode, cfg.random_seeds
    ('cave', 'spawn_together', (0,))
    """

    random_seeds: tuple[int, ...] = _setting((0,), IntList(lo=0, hi=2**63 - 1))
    number_of_robots: int = _setting(1, Int(lo=1, hi=MAX_ROBOTS))
    global_settings: GlobalSettings = field(
        default_factory=GlobalSettings, metadata=_sub(GlobalSettings)
    )
    robot_constraints: RobotConstraints = field(
        default_factory=RobotConstraints, metadata=_sub(RobotConstraints)
    )
    end_criteria: EndCriteria = field(default_factory=EndCriteria, metadata=_sub(EndCriteria))
    robot_spawn_config: RobotSpawnConfig = field(
        default_factory=RobotSpawnConfig, metadata=_sub(RobotSpawnConfig)
    )
    map: MapConfig = field(default_factory=MapConfig, metadata=_sub(MapConfig))
    world: WorldConfig = field(default_factory=WorldConfig, metadata=_sub(WorldConfig))
    motion: MotionConfig = field(default_factory=MotionConfig, metadata=_sub(MotionConfig))
    lidar: LidarConfig = field(default_factory=LidarConfig, metadata=_sub(LidarConfig))
    communication: CommunicationConfig = field(
        default_factory=CommunicationConfig, metadata=_sub(CommunicationConfig)
    )
    stack: StackConfig = field(default_factory=StackConfig, metadata=_sub(StackConfig))
    performance: PerformanceConfig = field(
        default_factory=PerformanceConfig, metadata=_sub(PerformanceConfig)
    )
    results: ResultsConfig = field(default_factory=ResultsConfig, metadata=_sub(ResultsConfig))
    robot_types: tuple[RobotTypeSpec, ...] = _setting(
        (),
        RobotTypesCheck(
            {
                f.name: f.metadata["check"]
                for f in fields(RobotConstraints)
                if f.name in PER_ROBOT_KEYS
            }
        ),
    )
    team: tuple[TeamEntry, ...] = _setting((), TeamCheck())
    obstacles: tuple[ObstacleSpec, ...] = _setting((), ObstaclesCheck())

    def robot_type_per_robot(self) -> tuple[RobotType, ...]:
        """Every robot's resolved type, robot 0 first (all ``default`` without a team)."""
        return resolve_team(self)

    def _check_combination(self) -> None:
        resolve_team(self)  # unknown types, counts that do not add up
        self._check_cost()
        spawn, world_map = self.robot_spawn_config, self.map
        if spawn.spawn_at_hallway_ends and world_map.kind != "building":
            raise ConfigError(
                f"got true, but only building maps have hallways (this map is {world_map.kind}); "
                "use biggest_room or spawn_together",
                key=RobotSpawnConfig.key("spawn_at_hallway_ends"),
                value=True,
            )
        point = spawn.spawn_together.starting_point if spawn.spawn_together else None
        if point is None or world_map.kind == "custom":
            return  # a custom map's size is known only once the file is read
        for axis, coord, side in zip(
            "xy", point, (world_map.width_in_tiles, world_map.height_in_tiles), strict=True
        ):
            lo, hi = -(side // 2), (side + 1) // 2 - 1  # world tiles of a side-tile map
            if not lo <= coord <= hi:
                raise ConfigError(
                    f"got {coord}, expected a world tile from {lo} to {hi} (the map is {side} "
                    f"tiles along {axis}, origin at its centre)",
                    key=SpawnTogether.key(f"suggested_starting_point_{axis}"),
                    value=coord,
                )

    def _check_cost(self) -> None:
        """Refuse combinations whose ticks or memory no run could afford (see the constants)."""
        gs, rc = self.global_settings, self.robot_constraints
        # every robot shares the sub-step, so the smallest, fastest robot sets it
        checks = [(rc, RobotConstraints.key("agent_relative_size"))]
        for spec in self.robot_types:
            if spec.agent_relative_size is not None or spec.relative_move_speed is not None:
                t = spec.name
                checks.append(
                    (
                        _Body(
                            spec.agent_relative_size or rc.agent_relative_size,
                            spec.relative_move_speed or rc.relative_move_speed,
                        ),
                        f"robot_types.{t}.agent_relative_size",
                    )
                )
        for body, key in checks:
            need = substeps_per_tick(
                gs.logic_ticks_delta_millis,
                gs.physics_ticks_per_logic_update,
                body.relative_move_speed,
                body.agent_relative_size,
            )
            if need > MAX_SUBSTEPS_PER_TICK:
                raise ConfigError(
                    f"got {body.agent_relative_size:g}, but a robot of this size at "
                    f"relative_move_speed {body.relative_move_speed:g} with "
                    f"{gs.logic_ticks_delta_millis} ms ticks needs {need} collision sub-steps per "
                    f"tick (it may move a quarter of its radius per sub-step), more than the "
                    f"{MAX_SUBSTEPS_PER_TICK} allowed; use bigger or slower robots or shorter "
                    "ticks",
                    key=key,
                    value=body.agent_relative_size,
                )
        if self.map.kind != "custom":
            check_slam_memory(
                self.number_of_robots,
                self.map.width_in_tiles,
                self.map.height_in_tiles,
                slam_bytes_per_tile(self.stack.slam, self.robot_constraints.distribute_slam),
            )


@dataclass(frozen=True)
class _Body:
    agent_relative_size: float
    relative_move_speed: float


def substeps_per_tick(
    millis: float, physics_steps: int, relative_move_speed: float, agent_size: float
) -> int:
    """Collision sub-steps one logic tick takes, by the motion model's own rule.

    A robot at top speed may move at most a quarter of its radius per sub-step; every physics
    step takes at least one (:class:`maes_sim.core.motion.MotionParams`).

    Examples
    --------
    >>> substeps_per_tick(100, 10, 1.0, 0.6)  # MAES's defaults
    10
    """
    from maes_sim.core.motion import MotionParams  # the rule's one home; loads numba lazily

    params = MotionParams.from_values(
        relative_move_speed=relative_move_speed,
        agent_relative_size=agent_size,
        logic_ticks_delta_millis=millis,
        physics_ticks_per_logic_update=physics_steps,
    )
    return params.physics_steps * params.substeps


def slam_bytes_per_tile(slam: str, distribute_slam: bool = False) -> int:
    """Bytes one robot's SLAM map takes per tile: the map's code, an occupancy grid's float32
    log-odds beside it (``stack.slam: occupancy``), and its own evidence's when the robots merge
    their maps (``distribute_slam``).

    Examples
    --------
    >>> slam_bytes_per_tile("simulated"), slam_bytes_per_tile("occupancy")
    (1, 5)
    >>> slam_bytes_per_tile("occupancy", distribute_slam=True)
    9
    """
    if slam != "occupancy":
        return 1
    return 9 if distribute_slam else 5


def check_slam_memory(robots: int, width: int, height: int, bytes_per_tile: int = 1) -> None:
    """Raise ConfigError when the per-robot SLAM maps (``bytes_per_tile`` per tile:
    :func:`slam_bytes_per_tile`) exceed MAX_SLAM_CELLS bytes.

    Examples
    --------
    >>> check_slam_memory(5000, 5000, 5000)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    maes_sim.core.config_checks.ConfigError: number_of_robots: got 5000, but 5000 robots ...
    """
    size = robots * width * height * bytes_per_tile
    if size > MAX_SLAM_CELLS:
        per_tile = "one byte" if bytes_per_tile == 1 else f"{bytes_per_tile} bytes"
        raise ConfigError(
            f"got {robots}, but {robots} robots on a {width}x{height} map need {size / 2**30:.1f}"
            f" GiB of SLAM maps ({per_tile} per tile per robot), more than the "
            f"{MAX_SLAM_CELLS / 2**30:g} GiB allowed; use fewer robots or a smaller map",
            key="number_of_robots",
            value=robots,
        )
