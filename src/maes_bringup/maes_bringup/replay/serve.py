"""``maes-replay --serve``: a finished run on the page that watches live runs, with a time slider.

The run comes from a recording (MCAP, :mod:`.mcap_source`) or from a results folder: its
``summary.json`` names the config, seed and logic, and direct mode runs it again (lockstep runs
are reproducible to the bit, so this is the run that was made; the replay says so when the
ticks differ). A folder holding a recording (``*.mcap``) is read instead.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from pathlib import Path

import numpy as np

from maes_sim.core import config_from_dict, robot_colours, robot_name
from maes_sim.watch import MAP_COLOURS, bad_query, hex_colour, map_scene, packed, query_int

from .model import SERVE_FRAMES, Replay

__all__ = ["ReplayFeed", "replay_of_results"]


def _to_world(grid_xy: np.ndarray, shape: tuple[int, int], tile: float) -> np.ndarray:
    """Grid coordinates (tiles, corner origin) -> world metres (origin at the map's centre)."""
    h, w = shape
    return (np.asarray(grid_xy, dtype=np.float64) - [w / 2.0, h / 2.0]) * tile


class ReplayFeed:
    """A :class:`Replay`'s frames for the page server (``maes_sim.watch.PageServer``).

    Parameters
    ----------
    replay : Replay
    """

    mode = "replay"

    def __init__(self, replay: Replay) -> None:
        if not replay.frames:
            raise ValueError("the replay has no frames")
        self.replay = replay
        n, tile, shape = replay.n_robots, replay.tile_size, replay.walls.shape
        radii = replay.radii
        if radii is None:  # a recording without the sizes: every robot the default size
            radii = np.full(n, config_from_dict({}).robot_constraints.agent_relative_size / 2)
        times = [float(f.sim_time) for f in replay.frames]
        history = [
            (
                f.sim_time,
                np.nan if f.exploration_percent is None else f.exploration_percent,
                np.nan if f.coverage_percent is None else f.coverage_percent,
            )
            for f in replay.frames
        ]
        self._scene = {
            "mode": "replay",
            "title": replay.title,
            "map": map_scene(replay.walls, tile),
            "robots": {
                "names": [robot_name(i) for i in range(n)],
                "types": list(replay.types) if replay.types else [""] * n,
                "radius": packed(np.asarray(radii, dtype=float) * tile),
                "colour": [hex_colour(c) for c in robot_colours(n)],
                "lidar": [],
            },
            "lidars": [],
            "colours": MAP_COLOURS,
            "tick_duration": replay.tick_duration,
            "end": {"exploration_percent": None, "coverage_percent": None, "tick": None},
            "controls": {"pause": False, "speed": False},
            "has": {
                "scans": False,
                "slam": False,
                "state": False,
                "coverage": any(f.coverage_percent is not None for f in replay.frames),
            },
            "show": {"scans": False, "links": True},
            "frames": {
                "count": len(replay.frames),
                "times": times,
                "ticks": [int(f.tick) for f in replay.frames],
            },
            "trail": {
                "ticks": replay.trail_ticks.tolist(),
                "xy": packed(_to_world(replay.trail, shape, tile)),
            },
            "history": packed(np.asarray(history, dtype=float).reshape(-1, 3)),
        }

    def scene(self) -> dict:
        """The map, robots, frame times, paths and the percentages over time."""
        return self._scene

    def frame(self, query: Mapping[str, str]) -> dict:
        """Frame ``at`` (an index into the frames, ``/api/frame?at=K``)."""
        replay = self.replay
        k = query_int(query, "at", 0)
        if not 0 <= k < len(replay.frames):
            raise bad_query(f"at must be a frame from 0 to {len(replay.frames) - 1}, got {k}")
        f = replay.frames[k]
        n, tile, shape = replay.n_robots, replay.tile_size, replay.walls.shape
        poses = np.full((n, 3), np.nan)
        poses[:, :2] = _to_world(f.positions, shape, tile)
        if f.headings is not None:
            poses[:, 2] = f.headings
        tags = replay.tags[replay.tag_ticks <= f.tick] if len(replay.tags) else replay.tags
        obstacles = None
        if f.obstacles is not None:
            obstacles = np.asarray(f.obstacles, dtype=float).copy()
            obstacles[:, 1:3] = _to_world(obstacles[:, 1:3], shape, 1.0)
            obstacles[:, 1:] *= tile
        explored = f.explored(shape)
        return {
            "seq": k,
            "index": k,
            "tick": int(f.tick),
            "time": float(f.sim_time),
            "explored": f.exploration_percent,
            "covered": f.coverage_percent,
            "finished": k == len(replay.frames) - 1,
            "end_reason": "",
            "poses": packed(poses),
            "colliding": packed(np.zeros(n), "u1"),
            "links": packed(np.asarray(f.links).reshape(-1, 2), "i4"),
            "tags": packed(_to_world(np.asarray(tags).reshape(-1, 2), shape, tile)),
            "obstacles": None if obstacles is None else packed(obstacles),
            "maps": None
            if explored is None
            else {"seq": k + 1, "explored": packed(explored, "u1"), "slam": None},
            "states": {},
            "nav": {},
        }

    def control(self, command: Mapping) -> dict:
        """A replay takes no commands: the page's slider and Play button drive it."""
        raise bad_query("a replay is driven by the page itself (its slider and Play button)")


def replay_of_results(
    folder: str | Path,
    max_frames: int = SERVE_FRAMES,
    progress: Callable[[str], None] | None = None,
    warn: Callable[[str], None] | None = None,
) -> Replay:
    """The :class:`Replay` of a results folder: its recording when it holds one, else its run
    made again in direct mode from ``summary.json`` (config, seed, logic).

    Raises
    ------
    ValueError
        The folder has no ``summary.json``, or its run cannot be made again (controllers of
        your own drove it: record such a run with ``--record`` to replay it).
    """
    from maes_bringup.runners.direct import run

    from .mcap_source import read_mcap
    from .model import ReplayRecorder

    folder = Path(folder)
    say = progress or (lambda _text: None)
    recordings = sorted(folder.glob("*.mcap"))
    if recordings:
        return read_mcap(recordings[0], max_frames, say)
    summary_path = folder / "summary.json"
    if not summary_path.is_file():
        raise ValueError(
            f"{folder} is neither an MCAP recording nor a results folder (no summary.json)"
        )
    summary = json.loads(summary_path.read_text())
    if summary.get("controllers") == "none" or "config" not in summary:
        raise ValueError(
            f"{folder}: the robots of this run were driven by controllers of your own, which "
            "cannot be run again here; record such a run (make run RECORD=run.mcap, "
            "maes_run --record run.mcap) and serve the recording"
        )
    logic = summary.get("logic") or "maes_controller.algorithms.frontier_explorer:logic"
    cfg = config_from_dict(summary["config"])
    recorder = ReplayRecorder(max_frames=max_frames)

    def follow(sim) -> None:
        recorder(sim)
        say(f"running the run again: tick {sim.tick} of {summary.get('ticks', '?')}")

    ticks = summary.get("ticks")
    if summary.get("sync") == "free":
        (warn or say)(
            f"{folder}: this run ran free (sync free), so running it again gives another run; "
            "record such a run to replay it as it was"
        )
    result = run(cfg, logic, seed=summary.get("seed"), max_ticks=ticks, progress=follow)
    if ticks is not None and result.ticks != ticks:
        (warn or say)(
            f"the run made again ended at tick {result.ticks}, the results at tick {ticks}: "
            "a free-running run (sync free) or a changed logic gives another run"
        )
    return recorder.replay(result.sim)
