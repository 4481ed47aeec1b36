"""The simulator core: pure numpy/numba, no ROS.

>>> from maes_sim.core import load_config, Simulation  # doctest: +SKIP
>>> sim = Simulation(load_config("maes_config.yaml"))  # doctest: +SKIP
>>> while not sim.finished:  # doctest: +SKIP
...     sim.step()

See :class:`Simulation` for the observation and command API.
"""

from .commands import CommandError, Status
from .comms import Broadcast, SignalFunctionError
from .config import ConfigError, SimConfig, config_from_dict, config_to_dict, load_config
from .safe_yaml import MAX_YAML_BYTES, load_yaml, read_user_file, short_repr
from .simulation import CommandRejected, Simulation, world_from_config
from .state import NearbyRobot, RobotState, TagView, Vector2D
from .world import MapError, WorldMap

__all__ = [
    "MAX_YAML_BYTES",
    "Broadcast",
    "CommandError",
    "CommandRejected",
    "ConfigError",
    "MapError",
    "NearbyRobot",
    "RobotState",
    "SignalFunctionError",
    "SimConfig",
    "Simulation",
    "Status",
    "TagView",
    "Vector2D",
    "WorldMap",
    "config_from_dict",
    "config_to_dict",
    "load_config",
    "load_yaml",
    "read_user_file",
    "short_repr",
    "world_from_config",
]
