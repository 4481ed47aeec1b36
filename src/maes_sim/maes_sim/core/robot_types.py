"""Robot types and the team: which robot has which body, speed, motion model, lidar and ranges.

A config may declare named types (``robot_types``) and a team (``team``, a list of
``{type, count}``). A type sets any of the per-robot keys of ``robot_constraints``
(:data:`PER_ROBOT_KEYS`), ``motion: {model, odometry_noise, heading_noise}`` and
``lidar: {rays, field_of_view_deg, range, range_noise_std, dropout_probability}``;
what it leaves out comes from ``robot_constraints`` and ``motion``, as does the whole of the
``default`` type (which a config may also restate to change it). Without a team every robot is of
the ``default`` type, so a MAES 2.0 config loads and runs exactly as before.

The team fixes the robot count: robots ``0 .. count_1 - 1`` are of the first entry's type, the
next ``count_2`` of the second, and so on. ``number_of_robots`` may then be left out (the loader
fills in the sum) or must equal the sum.

Examples
--------
>>> from maes_sim.core.config import config_from_dict
>>> cfg = config_from_dict({
...     "robot_types": {"scout": {"agent_relative_size": 0.4, "lidar": {"rays": 90}}},
...     "team": [{"type": "scout", "count": 2}, {"type": "default", "count": 1}]})
>>> [(t.name, t.radius, t.lidar_rays) for t in cfg.robot_type_per_robot()]
[('scout', 0.2, 90), ('scout', 0.2, 90), ('default', 0.3, 180)]
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, fields
from typing import Any, ClassVar

from maes_common.motion_models import MODEL_NAMES, top_speeds
from maes_sim.core.config_checks import (
    Choice,
    ConfigError,
    Float,
    Int,
    show,
    suggestion,
    unknown_key_error,
)
from maes_sim.core.radio import RADIO_MODEL_NAMES, RadioSettings, radio_checks, resolve_radio

#: Largest odometry / heading noise (std dev per tile travelled / per radian turned).
MAX_ODOMETRY_NOISE = 10.0
#: Largest lidar range noise (std dev, metres).
MAX_RANGE_NOISE = 1000.0

#: The name of the type every robot has when the config names no team.
DEFAULT_TYPE = "default"
#: Keys of ``robot_constraints`` a robot type may set (the rest are run-wide: the SLAM
#: schedule and merging, and whether walls block radio and sensing).
PER_ROBOT_KEYS = (
    "agent_relative_size",
    "relative_move_speed",
    "broadcast_range",
    "sense_nearby_agents_range",
    "environment_tag_read_range",
    "slam_raytrace_range",
    "slam_position_inaccuracy",
)
#: MAES 2.0's lidar: 180 rays over the full circle.
DEFAULT_RAYS = 180
DEFAULT_FOV_DEG = 360.0
MAX_RAYS = 10_000
#: Longest type name (a name appears in messages, ``maes_state`` and summary.json).
MAX_TYPE_NAME = 64
MAX_TYPES = 64


def _setting(default: Any, check: Any) -> Any:
    return field(default=default, metadata={"check": check})


class _TypeSection:
    """Checks every field; ``PATH`` is filled in per type (``robot_types.<name>``)."""

    KEYS: ClassVar[tuple[str, ...]] = ()

    @classmethod
    def build(cls, data: Any, path: str) -> Any:
        """The section from mapping ``data`` found at ``path`` (None = all inherited)."""
        if data is None:
            data = {}
        if isinstance(data, cls):  # built in Python: the same checks as from YAML
            data = {f.name: getattr(data, f.name) for f in fields(cls)}  # type: ignore[arg-type]
        if not isinstance(data, Mapping):
            raise ConfigError(
                f"got {show(data)}, expected a mapping of {', '.join(cls.KEYS)}",
                key=path,
                value=data,
            )
        known = {f.name: f for f in fields(cls)}  # type: ignore[arg-type]
        kwargs = {}
        for key, value in data.items():
            if key not in known:
                raise unknown_key_error(key, path, list(known), ())
            check = known[key].metadata.get("check")
            sub = known[key].metadata.get("section")
            if sub is not None:
                value = sub.build(value, f"{path}.{key}")
            elif value is not None:
                value = check(value, f"{path}.{key}")
            kwargs[key] = value
        return cls(**kwargs)


@dataclass(frozen=True)
class TypeMotion(_TypeSection):
    """``robot_types.<name>.motion``: the type's motion model and odometry noise (None: as in
    ``motion``)."""

    KEYS: ClassVar[tuple[str, ...]] = ("model", "odometry_noise", "heading_noise")
    model: str | None = _setting(None, Choice(*MODEL_NAMES))
    odometry_noise: float | None = _setting(None, Float(lo=0.0, hi=MAX_ODOMETRY_NOISE))
    heading_noise: float | None = _setting(None, Float(lo=0.0, hi=MAX_ODOMETRY_NOISE))


@dataclass(frozen=True)
class TypeLidar(_TypeSection):
    """``robot_types.<name>.lidar``: ray count, field of view (centred on the heading), range,
    and noise (Gaussian range error, std dev in metres; the probability a ray returns nothing).

    ``range`` is the type's ``slam_raytrace_range`` under a lidar's name (give one of the two).
    """

    KEYS: ClassVar[tuple[str, ...]] = (
        "rays",
        "field_of_view_deg",
        "range",
        "range_noise_std",
        "dropout_probability",
    )
    rays: int | None = _setting(None, Int(lo=1, hi=MAX_RAYS))
    field_of_view_deg: float | None = _setting(None, Float(lo=0.0, hi=360.0, lo_open=True))
    range: float | None = _setting(None, Float(lo=0.0, hi=7072.0, lo_open=True))
    range_noise_std: float | None = _setting(None, Float(lo=0.0, hi=MAX_RANGE_NOISE))
    dropout_probability: float | None = _setting(None, Float(lo=0.0, hi=1.0))


_RADIO = radio_checks(RADIO_MODEL_NAMES)


@dataclass(frozen=True)
class TypeCommunication(_TypeSection):
    """``robot_types.<name>.communication``: the type's radio (a key left out: the global
    ``communication``'s). The sender's type decides a broadcast's fate."""

    KEYS: ClassVar[tuple[str, ...]] = tuple(_RADIO)
    model: str | None = _setting(None, _RADIO["model"])
    loss_probability: float | None = _setting(None, _RADIO["loss_probability"])
    latency_ticks: int | None = _setting(None, _RADIO["latency_ticks"])
    max_messages_per_tick: int | None = _setting(None, _RADIO["max_messages_per_tick"])
    good_to_bad_probability: float | None = _setting(None, _RADIO["good_to_bad_probability"])
    bad_to_good_probability: float | None = _setting(None, _RADIO["bad_to_good_probability"])
    loss_probability_good: float | None = _setting(None, _RADIO["loss_probability_good"])
    loss_probability_bad: float | None = _setting(None, _RADIO["loss_probability_bad"])
    distance_exponent: float | None = _setting(None, _RADIO["distance_exponent"])


@dataclass(frozen=True)
class RobotTypeSpec(_TypeSection):
    """One entry of ``robot_types`` as written: None means "as ``robot_constraints``/``motion``".

    Attributes
    ----------
    name : str
        The type's name (its key in ``robot_types``).
    """

    KEYS: ClassVar[tuple[str, ...]] = (*PER_ROBOT_KEYS, "motion", "lidar", "communication")
    name: str = DEFAULT_TYPE
    agent_relative_size: float | None = None
    relative_move_speed: float | None = None
    broadcast_range: float | None = None
    sense_nearby_agents_range: float | None = None
    environment_tag_read_range: float | None = None
    slam_raytrace_range: float | None = None
    slam_position_inaccuracy: float | None = None
    motion: TypeMotion = field(default_factory=TypeMotion, metadata={"section": TypeMotion})
    lidar: TypeLidar = field(default_factory=TypeLidar, metadata={"section": TypeLidar})
    communication: TypeCommunication = field(
        default_factory=TypeCommunication, metadata={"section": TypeCommunication}
    )

    def __post_init__(self) -> None:
        path = f"robot_types.{self.name}"
        for key, cls in (
            ("motion", TypeMotion),
            ("lidar", TypeLidar),
            ("communication", TypeCommunication),
        ):
            object.__setattr__(self, key, cls.build(getattr(self, key), f"{path}.{key}"))
        if self.slam_raytrace_range is not None and self.lidar.range is not None:
            raise ConfigError(
                "give the lidar range once: lidar.range and slam_raytrace_range are the same "
                "setting",
                key=f"{path}.lidar.range",
                value=self.lidar.range,
            )

    def checked(self, checks: Mapping[str, Any]) -> RobotTypeSpec:
        """This spec with every per-robot value run through ``checks`` (key -> the check of
        ``robot_constraints``' key: the same rules, the key path ``robot_types.<name>.<key>``)."""
        path = f"robot_types.{self.name}"
        for key, check in checks.items():
            value = getattr(self, key)
            if value is not None:
                object.__setattr__(self, key, check(value, f"{path}.{key}"))
        return self

    @classmethod
    def from_data(cls, name: str, data: Any) -> RobotTypeSpec:
        """Build the type ``name`` from its YAML mapping (unknown keys: named errors)."""
        path = f"robot_types.{name}"
        if data is None:
            data = {}
        if not isinstance(data, Mapping):
            raise ConfigError(
                f"got {show(data)}, expected a mapping of some of {', '.join(cls.KEYS)}",
                key=path,
                value=data,
            )
        for key in data:
            if key not in cls.KEYS:
                raise unknown_key_error(key, path, list(cls.KEYS), ())
        return cls(name=name, **dict(data))

    def to_plain(self) -> dict[str, Any]:
        """The keys this type sets, as YAML-safe data (what :func:`from_data` reads back)."""
        out: dict[str, Any] = {k: getattr(self, k) for k in PER_ROBOT_KEYS}
        out = {k: v for k, v in out.items() if v is not None}
        for key in ("motion", "lidar", "communication"):
            sub = {f.name: getattr(getattr(self, key), f.name) for f in fields(getattr(self, key))}
            sub = {k: v for k, v in sub.items() if v is not None}
            if sub:
                out[key] = sub
        return out


@dataclass(frozen=True)
class TeamEntry:
    """One entry of ``team``: ``count`` robots of type ``type``."""

    type: str
    count: int


class RobotTypesCheck:
    """``robot_types``: a mapping of type names to :class:`RobotTypeSpec`, stored as a tuple.

    ``checks`` maps each of :data:`PER_ROBOT_KEYS` to ``robot_constraints``' check of that key
    (the schema hands them over: one set of rules)."""

    def __init__(self, checks: Mapping[str, Any]) -> None:
        self.checks = dict(checks)

    def expected(self) -> str:
        return "a mapping of type names to type settings"

    def __call__(self, value: Any, key: str) -> tuple[RobotTypeSpec, ...]:
        if value is None:
            return ()
        if isinstance(value, tuple) and all(isinstance(v, RobotTypeSpec) for v in value):
            return tuple(v.checked(self.checks) for v in value)
        if not isinstance(value, Mapping):
            raise ConfigError(
                f"got {show(value)}, expected {self.expected()}", key=key, value=value
            )
        if len(value) > MAX_TYPES:
            raise ConfigError(
                f"got {len(value)} types, at most {MAX_TYPES} allowed", key=key, value=len(value)
            )
        out = []
        for name, data in value.items():
            _check_name(name, key)
            out.append(RobotTypeSpec.from_data(name, data).checked(self.checks))
        return tuple(out)


def _check_name(name: Any, key: str) -> None:
    if (
        not isinstance(name, str)
        or not name
        or len(name) > MAX_TYPE_NAME
        or not all(c.isalnum() or c in "_-" for c in name)
    ):
        raise ConfigError(
            f"got type name {show(name)}, expected letters, digits, '_' or '-' "
            f"(1 to {MAX_TYPE_NAME} characters)",
            key=key,
            value=name,
        )


class TeamCheck:
    """``team``: a list of ``{type, count}``, stored as a tuple of :class:`TeamEntry`."""

    def expected(self) -> str:
        return "a list of {type: <name>, count: <robots>} entries"

    def __call__(self, value: Any, key: str) -> tuple[TeamEntry, ...]:
        if value is None or (isinstance(value, list | tuple) and not value):
            return ()  # no team: every robot is of the default type
        if isinstance(value, tuple) and all(isinstance(v, TeamEntry) for v in value):
            return value
        if isinstance(value, str | bytes) or not isinstance(value, Sequence):
            raise ConfigError(
                f"got {show(value)}, expected a list of {{type: <name>, count: <robots>}} "
                "entries (or none: every robot is of the default type)",
                key=key,
                value=value,
            )
        out = []
        for i, entry in enumerate(value):
            where = f"{key}[{i}]"
            if not isinstance(entry, Mapping):
                raise ConfigError(
                    f"got {show(entry)}, expected {{type: <name>, count: <robots>}}",
                    key=where,
                    value=entry,
                )
            for k in entry:
                if k not in ("type", "count"):
                    raise unknown_key_error(k, where, ["type", "count"], ())
            if "type" not in entry or "count" not in entry:
                missing = "type" if "type" not in entry else "count"
                raise ConfigError(f"missing {missing!r}", key=f"{where}.{missing}", value=None)
            name = entry["type"]
            _check_name(name, f"{where}.type")
            count = Int(lo=1, hi=5000)(entry["count"], f"{where}.count")
            out.append(TeamEntry(name, count))
        return tuple(out)


@dataclass(frozen=True)
class RobotType:
    """A resolved robot type: every per-robot setting, nothing left to inherit.

    Attributes
    ----------
    name : str
    agent_relative_size, relative_move_speed : float
        Diameter (tiles) and top speed factor.
    motion_model : str
        A name of :data:`maes_common.motion_models.MODEL_NAMES`.
    lidar_rays : int
    lidar_fov_deg : float
        Field of view, degrees, centred on the heading (360: the full circle).
    lidar_range : float
        Tiles (``slam_raytrace_range``).
    broadcast_range, sense_nearby_agents_range, environment_tag_read_range : float
        Tiles.
    lidar_range_noise_std : float
        Std dev of the lidar's range error, metres (0: exact).
    lidar_dropout_probability : float
        Probability that a ray returns nothing (``inf``).
    odometry_noise, heading_noise : float
        Odometry drift (:func:`maes_sim.core.odometry.advance_odometry`).
    slam_position_inaccuracy : float
        Tiles (:mod:`maes_sim.core.slam`).
    radio : RadioSettings
        The type's radio (``communication`` with the type's own keys).
    """

    name: str
    agent_relative_size: float
    relative_move_speed: float
    motion_model: str
    lidar_rays: int
    lidar_fov_deg: float
    lidar_range: float
    broadcast_range: float
    sense_nearby_agents_range: float
    environment_tag_read_range: float
    lidar_range_noise_std: float = 0.0
    lidar_dropout_probability: float = 0.0
    odometry_noise: float = 0.0
    heading_noise: float = 0.0
    slam_position_inaccuracy: float = 0.0
    radio: RadioSettings = RadioSettings()

    @property
    def radius(self) -> float:
        """Disc radius, tiles."""
        return self.agent_relative_size / 2.0

    @property
    def max_speed(self) -> float:
        """Top linear speed, tiles/s."""
        return top_speeds(self.relative_move_speed)[0]

    @property
    def max_angular_speed(self) -> float:
        """Top angular speed, rad/s."""
        return top_speeds(self.relative_move_speed)[1]

    @property
    def lidar_fov(self) -> float:
        """Field of view, radians."""
        return math.radians(self.lidar_fov_deg)

    @property
    def full_circle(self) -> bool:
        """Whether the lidar sees all around (MAES 2.0's)."""
        return self.lidar_fov_deg >= 360.0


def resolve_type(
    spec: RobotTypeSpec | None, name: str, rc: Any, motion: Any, communication: Any = None
) -> RobotType:
    """The :class:`RobotType` of ``spec`` over ``robot_constraints`` ``rc``, ``motion`` and
    ``communication`` (None: the default radio)."""

    def pick(key: str) -> Any:
        own = getattr(spec, key) if spec is not None else None
        return getattr(rc, key) if own is None else own

    lidar = spec.lidar if spec is not None else TypeLidar()
    own_motion = spec.motion if spec is not None else TypeMotion()
    model = own_motion.model

    def motion_pick(key: str) -> float:
        own = getattr(own_motion, key)
        return float(getattr(motion, key) if own is None else own)

    lidar_range = lidar.range if lidar.range is not None else pick("slam_raytrace_range")
    return RobotType(
        name=name,
        agent_relative_size=pick("agent_relative_size"),
        relative_move_speed=pick("relative_move_speed"),
        motion_model=model if model is not None else motion.model,
        lidar_rays=lidar.rays if lidar.rays is not None else DEFAULT_RAYS,
        lidar_fov_deg=(
            lidar.field_of_view_deg if lidar.field_of_view_deg is not None else DEFAULT_FOV_DEG
        ),
        lidar_range=float(lidar_range),
        broadcast_range=pick("broadcast_range"),
        sense_nearby_agents_range=pick("sense_nearby_agents_range"),
        environment_tag_read_range=pick("environment_tag_read_range"),
        lidar_range_noise_std=float(lidar.range_noise_std or 0.0),
        lidar_dropout_probability=float(lidar.dropout_probability or 0.0),
        odometry_noise=motion_pick("odometry_noise"),
        heading_noise=motion_pick("heading_noise"),
        slam_position_inaccuracy=float(pick("slam_position_inaccuracy")),
        radio=resolve_radio(communication, spec.communication if spec is not None else None),
    )


def resolve_team(config: Any) -> tuple[RobotType, ...]:
    """Every robot's :class:`RobotType`, robot 0 first (checks the team against the types).

    Raises
    ------
    ConfigError
        A team entry names an unknown type, or the counts do not add up to
        ``number_of_robots``.
    """
    specs = {s.name: s for s in config.robot_types}
    types = {
        name: resolve_type(
            specs.get(name),
            name,
            config.robot_constraints,
            config.motion,
            getattr(config, "communication", None),
        )
        for name in {DEFAULT_TYPE, *specs}
    }
    if not config.team:
        return (types[DEFAULT_TYPE],) * config.number_of_robots
    out: list[RobotType] = []
    for i, entry in enumerate(config.team):
        if entry.type not in types:
            known = sorted(types)
            raise ConfigError(
                f"unknown robot type {entry.type!r}{suggestion(entry.type, known)}; declared "
                f"types: {', '.join(known)}",
                key=f"team[{i}].type",
                value=entry.type,
            )
        out.extend([types[entry.type]] * entry.count)
    if len(out) != config.number_of_robots:
        raise ConfigError(
            f"got {config.number_of_robots}, but the team's counts add up to {len(out)} "
            f"({' + '.join(str(e.count) for e in config.team)}); leave number_of_robots out "
            "(the team sets it) or make them equal",
            key="number_of_robots",
            value=config.number_of_robots,
        )
    return tuple(out)
