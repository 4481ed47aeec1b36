"""The simulator core: pure numpy/numba, no ROS.

>>> from maes_sim.core import load_config, Simulation  # doctest: +SKIP
>>> sim = Simulation(load_config("maes_config.yaml"))  # doctest: +SKIP
>>> while not sim.finished:  # doctest: +SKIP
...     sim.step()

See :class:`Simulation` for the observation and command API.

Everything another package (``maes_controller``, ``maes_bringup``) uses from the core is
exported here; they import from ``maes_sim.core`` (and compiled-kernel helpers from
``maes_sim.core.kernels``), never from its modules, so the modules can move freely (a test
checks it).
"""

from .batch import BatchedSimulation
from .commands import CommandError, Status
from .comms import Broadcast, SignalFunctionError, robot_name
from .config import (
    ConfigError,
    SimConfig,
    config_from_dict,
    config_to_dict,
    key_paths,
    load_config,
    with_slam,
)
from .config_checks import Float, Int, Nullable, suggestion
from .config_schema import SIMULATOR_SLAM_MODES, SLAM_MODES
from .figures import (
    BROADCAST_RGB,
    EXPLORED_RGB,
    NEVER_RGB,
    OBSTACLE_RGB,
    TAG_RGB,
    WALL_RGB,
    agg_pyplot,
    crop_box,
    distinct_colours,
    marker_areas,
    robot_colours,
)
from .metric_registry import MetricInputs, canonical_metric_name, metric, registered_metrics
from .motion import ANGULAR_BRAKE_TAU, BRAKE_TAU, RISE_HALF_LIFE, TOP_ANGULAR_SPEED, TOP_SPEED
from .obstacle_config import PathObstacle, RandomWalkers
from .obstacles import Obstacles
from .results import write_run_results
from .safe_yaml import MAX_YAML_BYTES, load_yaml, read_user_file, short_repr
from .simulation import CommandRejected, Simulation, world_from_config
from .slam import to_occupancy
from .snapshot import SimSnapshot, SnapshotError, load_snapshot, save_snapshot
from .state import NearbyRobot, RobotState, TagView, Vector2D, state_to_metres
from .trails import Trail
from .world import MapError, WorldMap, load_custom_map

__all__ = [
    "ANGULAR_BRAKE_TAU",
    "BRAKE_TAU",
    "BatchedSimulation",
    "BROADCAST_RGB",
    "EXPLORED_RGB",
    "OBSTACLE_RGB",
    "TAG_RGB",
    "MAX_YAML_BYTES",
    "NEVER_RGB",
    "Broadcast",
    "CommandError",
    "CommandRejected",
    "ConfigError",
    "Float",
    "Int",
    "MapError",
    "MetricInputs",
    "NearbyRobot",
    "Nullable",
    "Obstacles",
    "PathObstacle",
    "RandomWalkers",
    "RISE_HALF_LIFE",
    "RobotState",
    "SIMULATOR_SLAM_MODES",
    "SLAM_MODES",
    "SignalFunctionError",
    "SimConfig",
    "SimSnapshot",
    "SnapshotError",
    "Simulation",
    "Status",
    "TOP_ANGULAR_SPEED",
    "TOP_SPEED",
    "TagView",
    "Trail",
    "Vector2D",
    "WALL_RGB",
    "WorldMap",
    "agg_pyplot",
    "canonical_metric_name",
    "config_from_dict",
    "crop_box",
    "distinct_colours",
    "config_to_dict",
    "key_paths",
    "load_config",
    "load_custom_map",
    "marker_areas",
    "metric",
    "registered_metrics",
    "robot_colours",
    "robot_name",
    "suggestion",
    "to_occupancy",
    "load_yaml",
    "load_snapshot",
    "save_snapshot",
    "read_user_file",
    "short_repr",
    "state_to_metres",
    "with_slam",
    "world_from_config",
    "write_run_results",
]
