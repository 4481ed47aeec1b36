"""What the page draws of a simulation: the scene (what stays: the map, the robots' sizes,
types, colours and lidars) and a frame (one moment: poses, scans, links, tags, obstacles).

Pure functions of a :class:`~maes_sim.core.Simulation`: they read it and never change it, never
draw from its generator, so watching a run cannot change its result. The live feed calls them
on the run's own thread, between two ticks (:mod:`.live_feed`). Units: :mod:`.wire`.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from maes_common.contract import map_origin
from maes_sim.core import (
    BROADCAST_RGB,
    EXPLORED_RGB,
    NEVER_RGB,
    OBSTACLE_RGB,
    TAG_RGB,
    WALL_RGB,
    robot_colours,
    robot_name,
)
from maes_sim.core.kernels import ray_angle_offsets

from .wire import packed

__all__ = [
    "MAP_COLOURS",
    "hex_colour",
    "map_scene",
    "robot_state_fields",
    "simulation_frame",
    "simulation_scene",
]

#: Lists of a robot's state (broadcasts, tags, robots nearby) shown up to this many items.
STATE_LIST_ITEMS = 12
#: Above this many robots the page starts with the scan rays and the broadcast links hidden (a
#: tick box shows them): 120 robots near each other make 14 000 links, which say nothing drawn
#: and cost the browser most of its drawing.
SHOWN_UP_TO = 30


def hex_colour(rgb) -> str:
    """An RGB triple (0..1) as ``#rrggbb``.

    Examples
    --------
    >>> hex_colour((1.0, 0.5, 0.0))
    '#ff8000'
    """
    return "#" + "".join(f"{int(round(min(max(c, 0.0), 1.0) * 255)):02x}" for c in rgb[:3])


#: The page's colours, those of the result pictures and replays (maes_sim.core.figures), so a
#: wall, an unexplored tile, a broadcast or a tag looks the same in every picture of a run.
MAP_COLOURS = {
    "wall": hex_colour(WALL_RGB),
    "never": hex_colour(NEVER_RGB),
    "explored": hex_colour(EXPLORED_RGB),
    "broadcast": hex_colour(BROADCAST_RGB),
    "tag": hex_colour(TAG_RGB),
    "obstacle": hex_colour(OBSTACLE_RGB),
}


def map_scene(walls: np.ndarray, tile: float) -> dict:
    """The map part of a scene: ``walls`` (H, W) bool, row 0 at the bottom, ``tile`` metres per
    tile; the world origin is the map's centre (as in the simulator and on ROS)."""
    h, w = walls.shape
    return {
        "width": int(w),
        "height": int(h),
        "tile": float(tile),
        "origin": list(map_origin(w, h, tile)),
        "walls": packed(np.asarray(walls, dtype=np.uint8), "u1"),
    }


def _lidars(sim) -> tuple[list[dict], list[int]]:
    """Each distinct lidar (ray angles relative to the heading, range in metres) and the
    index of every robot's."""
    tile = sim.config.world.tile_size
    kinds: dict[tuple, int] = {}
    lidars: list[dict] = []
    of_robot: list[int] = []
    for i in range(sim.n_robots):
        rays, fov = sim.lidar_geometry(i)
        key = (rays, fov, float(sim.team.types[i].lidar_range))
        if key not in kinds:
            kinds[key] = len(lidars)
            lidars.append({"angles": packed(ray_angle_offsets(rays, fov)), "range": key[2] * tile})
        of_robot.append(kinds[key])
    return lidars, of_robot


def simulation_scene(sim, controls: dict | None = None, mode: str = "live") -> dict:
    """The scene of ``sim`` for the page (JSON-ready, see :mod:`.wire`).

    Parameters
    ----------
    sim : Simulation
    controls : dict, optional
        ``{"pause": bool, "speed": bool}``: what the page may ask of the run.
    mode : str
        ``"live"`` (a running simulation).
    """
    cfg = sim.config
    tile = cfg.world.tile_size
    n = sim.n_robots
    lidars, lidar_of = _lidars(sim)
    end = cfg.end_criteria
    robots = "robot" if n == 1 else "robots"
    return {
        "mode": mode,
        "title": f"{sim.world.name} map, {n} {robots}, seed {sim.seed}",
        "map": map_scene(np.asarray(sim.walls, dtype=bool), tile),
        "robots": {
            "names": [robot_name(i) for i in range(n)],
            "types": list(sim.team.names),
            "radius": packed(np.asarray(sim.team.radii, dtype=float) * tile),
            "colour": [hex_colour(c) for c in robot_colours(n)],
            "lidar": lidar_of,
        },
        "lidars": lidars,
        "colours": MAP_COLOURS,
        "tick_duration": float(sim.tick_duration),
        "end": {
            "exploration_percent": end.exploration_percent,
            "coverage_percent": end.coverage_percent,
            "tick": end.tick,
        },
        "controls": {"pause": False, "speed": False, **(controls or {})},
        "has": {"scans": True, "slam": True, "state": True, "coverage": True},
        "show": {"scans": n <= SHOWN_UP_TO, "links": n <= SHOWN_UP_TO},
    }


def _plain(value, depth: int = 0):
    """A state field as JSON values (dataclasses as dicts, long lists cut)."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {
            f.name: _plain(getattr(value, f.name), depth + 1) for f in dataclasses.fields(value)
        }
    if isinstance(value, list | tuple):
        items = [_plain(v, depth + 1) for v in value[:STATE_LIST_ITEMS]]
        if depth == 0 and len(value) > STATE_LIST_ITEMS:
            items.append(f"... {len(value) - STATE_LIST_ITEMS} more")
        return items
    if isinstance(value, float | np.floating):
        return round(float(value), 4)
    if isinstance(value, np.integer | np.bool_):
        return value.item()
    return value


def robot_state_fields(state) -> dict:
    """A robot's ``maes_state`` (a :class:`~maes_sim.core.RobotState`, in metres) as JSON
    values, field by field, each list cut at :data:`STATE_LIST_ITEMS` items.

    Examples
    --------
    >>> from maes_sim.core import RobotState, Vector2D
    >>> robot_state_fields(RobotState(4, "Idle", False, position=Vector2D(1.0, 2.5)))["position"]
    {'x': 1.0, 'y': 2.5}
    """
    return {f.name: _plain(getattr(state, f.name)) for f in dataclasses.fields(state)}


def _scans_m(sim, tile: float) -> np.ndarray:
    """Every robot's scan this tick, in metres, robot after robot (R_0 + R_1 + ...,)."""
    if sim.team.same_rays():
        return np.asarray(sim.lidar_ranges, dtype=np.float32).ravel() * np.float32(tile)
    return np.concatenate([sim.lidar_of(i)[0] for i in range(sim.n_robots)]).astype(
        np.float32
    ) * np.float32(tile)


def _links(sim) -> np.ndarray:
    """(sender, receiver) pairs in broadcast range now, (K, 2). With a signal function (which
    may draw random numbers) the links the simulation last evaluated itself are shown instead,
    so that watching never draws from the run's generator."""
    if sim.comms.signal_function is None:
        ia, ib = sim.communication_links()
    else:
        ia, ib = sim.links
    return np.stack([np.asarray(ia), np.asarray(ib)], axis=1).reshape(-1, 2)


def simulation_frame(sim, scans: bool, robots: tuple[int, ...] = (), links: bool = True) -> dict:
    """``sim`` now, for the page: poses, collisions, tags, obstacles, percentages; the scans
    when ``scans``, the broadcast links when ``links``; the ``maes_state`` of each robot of
    ``robots`` (its fields, metres).
    """
    tile = sim.config.world.tile_size
    poses = sim.poses
    poses[:, :2] *= tile
    h, w = sim.shape
    tags = np.empty((0, 2))
    if sim.config.global_settings.show_environment_tags and len(sim.tags.tags):
        tags = (np.asarray(sim.tags.grid_positions, float).reshape(-1, 2) - [w / 2, h / 2]) * tile
    frame = {
        "tick": int(sim.tick),
        "time": float(sim.sim_time),
        "explored": float(sim.exploration_percent),
        "covered": float(sim.coverage_percent),
        "finished": bool(sim.finished),
        "end_reason": sim.end_reason or "",
        "poses": packed(poses),
        "colliding": packed(np.asarray(sim.colliding, dtype=np.uint8), "u1"),
        "links": packed(_links(sim), "i4") if links else None,
        "tags": packed(tags),
        "obstacles": None if sim.obstacles is None else packed(sim.obstacles.in_metres(tile)),
        "scans": packed(_scans_m(sim, tile)) if scans else None,
        "states": {},
    }
    if robots:
        obs = sim.observation(tile)
        frame["states"] = {str(i): robot_state_fields(obs.state(i)) for i in robots}
    return frame


def explored_and_slam(sim) -> dict:
    """The maps the page colours the world with: tiles explored so far (H, W) and the merged
    SLAM map (the union of every robot's map, codes 0 unknown, 1 open, 2 solid: a tile shows
    the most any robot knows of it), row 0 at the bottom."""
    return {
        "explored": packed(sim.metrics.explored_tick >= 0, "u1"),
        "slam": packed(np.max(sim.slam_maps, axis=0), "u1"),
    }
