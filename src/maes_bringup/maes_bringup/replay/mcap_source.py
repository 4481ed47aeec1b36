"""A :class:`~maes_bringup.replay.model.Replay` from a recording: an MCAP file in rosbag2's
format (ROS 2 ``ros2msg`` schemas, CDR), read with ``mcap`` and ``mcap-ros2-support``.

Topics used (the simulator node's names): ``/maes/ground_truth`` (the map; required),
``/maes/stats`` (tick <-> time, exploration %), ``/maes/obstacles`` (the moving obstacles'
markers, when the run had any), ``/tf`` (true poses: ``world -> robot<i>/odom
-> robot<i>/base_footprint``), ``/robot<i>/maes_state`` (broadcasts received, tags nearby;
and the believed positions when ``/tf`` is missing), ``/maes/exploration`` (explored tiles; else
the union of the ``/robot<i>/map`` SLAM maps). Times are the messages' header stamps
(simulated time), so a recording's log times do not matter. The robots' radii come from the
bag's rosbag2 ``custom_data`` (``maes_common.contract.RECORDING_RADII_KEY``, written by the
simulator's recorder); without them every robot is drawn alike.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np

from maes_common.contract import RECORDING_RADII_KEY
from maes_sim.core import Trail

from .model import MAX_FRAMES, Replay, ReplayFrame

ROBOT_TOPIC = re.compile(r"^/?robot(\d+)/(maes_state|map)$")
ROBOT_FRAME = re.compile(r"^/?robot(\d+)/(odom|base_footprint)$")
GROUND_TRUTH, STATS, TF, EXPLORATION, OBSTACLES = (
    "/maes/ground_truth",
    "/maes/stats",
    "/tf",
    "/maes/exploration",
    "/maes/obstacles",
)
#: visualization_msgs/Marker's CYLINDER type: a disc obstacle (anything else: a box).
_CYLINDER = 3


class RecordingError(ValueError):
    """A recording cannot be replayed; the message says what is missing or wrong."""


def _stamp(msg) -> float:
    return msg.sec + msg.nanosec * 1e-9


def _yaw(q) -> float:
    return math.atan2(2.0 * (q.w * q.z + q.x * q.y), 1.0 - 2.0 * (q.y * q.y + q.z * q.z))


def _messages(path: Path, topics: set[str] | Callable[[str], bool]) -> Iterator[tuple[str, object]]:
    from mcap.reader import make_reader
    from mcap_ros2.decoder import DecoderFactory

    wanted = topics if callable(topics) else topics.__contains__
    with path.open("rb") as fh:
        reader = make_reader(fh, decoder_factories=[DecoderFactory()])
        try:
            for _schema, channel, _message, decoded in reader.iter_decoded_messages(
                topics=None, log_time_order=True
            ):
                if wanted(channel.topic):
                    yield channel.topic, decoded
        except Exception as exc:  # a torn file: use what was read, say why it ended
            if type(exc).__name__ in ("EndOfFile", "InvalidMagic", "RecordLengthLimitExceeded"):
                return
            raise


def _radii_m(path: Path) -> np.ndarray | None:
    """Every robot's radius (metres) from the bag's ``custom_data``, or None (a recording of
    another recorder, or a torn file without its metadata record)."""
    import yaml
    from mcap.reader import make_reader

    try:
        with path.open("rb") as fh:
            for record in make_reader(fh).iter_metadata():
                if record.name != "rosbag2":
                    continue
                meta = yaml.safe_load(record.metadata.get("serialized_metadata", "")) or {}
                info = meta.get("rosbag2_bagfile_information", {}) or {}
                value = (info.get("custom_data") or {}).get(RECORDING_RADII_KEY)
                if value is None:
                    return None
                radii = np.asarray(json.loads(value), dtype=np.float64)
                ok = radii.ndim == 1 and np.isfinite(radii).all() and (radii > 0).all()
                return radii if ok else None
    except Exception:  # no summary (a torn file) or unreadable metadata: draw all alike
        return None
    return None


def _grid(msg) -> tuple[np.ndarray, float, tuple[float, float]]:
    info = msg.info
    data = np.frombuffer(bytes(np.asarray(msg.data, dtype=np.int8).tobytes()), dtype=np.int8)
    grid = data.reshape(info.height, info.width)
    return grid, float(info.resolution), (info.origin.position.x, info.origin.position.y)


def read_mcap(
    path: str | Path,
    max_frames: int = MAX_FRAMES,
    progress: Callable[[str], None] | None = None,
) -> Replay:
    """Read a rosbag2-format MCAP recording of a run into a :class:`Replay`.

    Parameters
    ----------
    path : path
        The ``.mcap`` file (or a rosbag2 folder holding one).
    max_frames : int
        Frames at most; a longer recording is subsampled evenly.
    progress : callable, optional
        ``progress(text)`` at each of the three passes over the file.

    Raises
    ------
    RecordingError
        The file does not exist, is not MCAP, or lacks ``/maes/ground_truth``.
    """
    path = Path(path)
    if path.is_dir():
        found = sorted(path.glob("*.mcap"))
        if not found:
            raise RecordingError(f"{path} is a folder without an .mcap file")
        path = found[0]
    if not path.is_file():
        raise RecordingError(f"recording {str(path)!r} does not exist")
    with path.open("rb") as fh:
        if fh.read(8) != b"\x89MCAP0\r\n":
            raise RecordingError(f"{path} is not an MCAP file (wrong magic bytes)")
        fh.seek(-8, 2)
        cut_off = fh.read(8) != b"\x89MCAP0\r\n"
    torn = (
        " (the file is cut off: it has no MCAP footer, so the messages of its last, unfinished"
        " chunk are lost)"
        if cut_off
        else ""
    )
    say = progress or (lambda _text: None)

    # Pass 1: the map and the clock (tick <-> simulated time).
    say("reading the map and the clock")
    walls = tile = origin = None
    tick_time: dict[int, float] = {}
    percent: dict[int, float] = {}
    coverage: dict[int, float] = {}
    n = 0  # robots: from the topic names and /maes/stats

    def first_pass(topic: str) -> bool:
        nonlocal n
        robot = ROBOT_TOPIC.match(topic)
        if robot:
            n = max(n, int(robot.group(1)) + 1)
        return topic in (GROUND_TRUTH, STATS)

    for topic, msg in _messages(path, first_pass):
        if topic == GROUND_TRUTH and walls is None:
            grid, tile, origin = _grid(msg)
            walls = grid >= 50
        elif topic == STATS:
            tick_time[int(msg.tick)] = _stamp(msg.sim_time)
            percent[int(msg.tick)] = float(msg.exploration_percent)
            coverage[int(msg.tick)] = float(msg.coverage_percent)
            n = max(n, int(msg.number_of_robots))
    if walls is None:
        raise RecordingError(
            f"{path} holds no {GROUND_TRUTH} message: record that topic (it is published once, "
            f"latched, when the run starts){torn}"
        )
    h, w = walls.shape
    ticks_known = sorted(t for t in tick_time if t > 0)
    dt = tick_time[ticks_known[-1]] / ticks_known[-1] if ticks_known else 0.1

    def tick_of(seconds: float) -> int:
        return int(round(seconds / dt))

    def to_grid(x: float, y: float) -> tuple[float, float]:
        return (x - origin[0]) / tile, (y - origin[1]) / tile

    # Pass 2: poses (bounded: straight into Trails), broadcasts, tags.
    say("reading poses, broadcasts and tags")
    if n == 0:
        raise RecordingError(
            f"{path} holds neither /robot<i>/maes_state nor /maes/stats: no robots to show{torn}"
        )
    world_odom: dict[int, tuple[float, float, float]] = {}
    true_trail, believed_trail = Trail(n), Trail(n)
    true_xy, believed_xy = np.full((n, 2), np.nan), np.full((n, 2), np.nan)
    # headings as (cos, sin), kept at the same ticks as the positions
    true_heads, believed_heads = Trail(n), Trail(n)
    true_head, believed_head = np.full((n, 2), np.nan), np.full((n, 2), np.nan)
    last_tf_tick, believed_tick = -1, -1
    links: list[tuple[int, int, int]] = []
    tags: dict[tuple, tuple[float, float, int]] = {}
    obstacles_at: dict[int, np.ndarray] = {}

    def robot_topic(topic: str) -> bool:
        if topic in (TF, OBSTACLES):
            return True
        return bool(ROBOT_TOPIC.match(topic)) and topic.endswith("maes_state")

    for topic, msg in _messages(path, robot_topic):
        if topic == OBSTACLES:
            if msg.markers:
                rows = [
                    (
                        0.0 if m.type == _CYLINDER else 1.0,
                        *to_grid(m.pose.position.x, m.pose.position.y),
                        m.scale.x / 2.0 / tile,
                        m.scale.y / 2.0 / tile,
                    )
                    for m in msg.markers
                ]
                obstacles_at[tick_of(_stamp(msg.markers[0].header.stamp))] = np.array(rows)
            continue
        if topic == TF:
            tick = None
            for tf in msg.transforms:
                child = ROBOT_FRAME.match(tf.child_frame_id)
                if child is None or int(child.group(1)) >= n:
                    continue
                i = int(child.group(1))
                t = tf.transform
                pose = (t.translation.x, t.translation.y, _yaw(t.rotation))
                if child.group(2) == "odom":
                    world_odom[i] = pose
                elif i in world_odom:
                    ox, oy, oyaw = world_odom[i]
                    c, s = math.cos(oyaw), math.sin(oyaw)
                    true_xy[i] = to_grid(
                        ox + c * pose[0] - s * pose[1], oy + s * pose[0] + c * pose[1]
                    )
                    true_head[i] = (math.cos(oyaw + pose[2]), math.sin(oyaw + pose[2]))
                    tick = tick_of(_stamp(tf.header.stamp))
            if tick is not None and tick > last_tf_tick:
                true_trail.record(tick, true_xy)
                true_heads.record(tick, true_head)
                last_tf_tick = tick
            continue
        i = int(ROBOT_TOPIC.match(topic).group(1))
        tick = int(msg.tick)
        if tick > believed_tick >= 0:  # a new tick: keep the last one's positions
            believed_trail.record(believed_tick, believed_xy)
            believed_heads.record(believed_tick, believed_head)
        believed_tick = max(believed_tick, tick)
        believed_xy[i] = to_grid(msg.position.x, msg.position.y)
        believed_head[i] = (math.cos(msg.heading), math.sin(msg.heading))
        for b in msg.incoming_broadcast_msgs:
            sender = re.match(r"^robot(\d+)$", b.sender)
            if sender and int(sender.group(1)) < n:
                links.append((tick, int(sender.group(1)), i))
        for tag in msg.tags_nearby:
            key = (tag.sender, int(tag.tick), tag.msg, round(tag.pos.x, 6), round(tag.pos.y, 6))
            tags.setdefault(key, (*to_grid(tag.pos.x, tag.pos.y), int(tag.tick)))
    if believed_tick >= 0:
        believed_trail.record(believed_tick, believed_xy)
        believed_heads.record(believed_tick, believed_head)
    # true poses from /tf; the robots' own beliefs (maes_state) only without /tf
    trail, heads = (
        (true_trail, true_heads) if true_trail.ticks.size else (believed_trail, believed_heads)
    )
    trail_ticks, trail_xy = trail.ticks, trail.positions
    head_xy = heads.positions
    if not trail_ticks.size:
        raise RecordingError(f"{path} holds no robot poses")

    # Pass 3: explored tiles at the frames' ticks.
    keep = np.unique(
        np.round(np.linspace(0, trail_ticks.size - 1, min(max_frames, trail_ticks.size))).astype(
            int
        )
    )
    frame_ticks = trail_ticks[keep]
    say(f"reading explored tiles for {frame_ticks.size} frames")
    explored_at: dict[int, np.ndarray] = {}
    explored = None
    slam: dict[int, np.ndarray] = {}
    k = 0
    has_exploration = False

    def grid_topic(topic: str) -> bool:
        return topic == EXPLORATION or (bool(ROBOT_TOPIC.match(topic)) and topic.endswith("/map"))

    for topic, msg in _messages(path, grid_topic):
        tick = tick_of(_stamp(msg.header.stamp))
        while k < frame_ticks.size and frame_ticks[k] < tick:
            if explored is not None:
                explored_at[int(frame_ticks[k])] = np.packbits(explored)
            k += 1
        grid, _res, _origin = _grid(msg)
        if grid.shape != (h, w):
            continue  # a SLAM map of another size (slam_toolbox): not comparable
        if topic == EXPLORATION:
            has_exploration = True
            explored = grid >= 0
        elif not has_exploration:
            slam[int(ROBOT_TOPIC.match(topic).group(1))] = grid >= 0
            explored = np.logical_or.reduce(list(slam.values()))
    for t in frame_ticks[k:]:
        if explored is not None:
            explored_at[int(t)] = np.packbits(explored)

    link_arr = np.asarray(links, dtype=np.int64).reshape(-1, 3)
    obstacle_ticks = np.array(sorted(obstacles_at), dtype=np.int64)
    frames = []
    previous = -1
    for idx, t in zip(keep.tolist(), frame_ticks.tolist(), strict=True):
        sel = (link_arr[:, 0] > previous) & (link_arr[:, 0] <= t)
        pct = percent.get(t)
        frames.append(
            ReplayFrame(
                tick=int(t),
                sim_time=tick_time.get(t, t * dt),
                positions=trail_xy[:, idx].astype(np.float64),
                explored_bits=explored_at.get(int(t)),
                links=np.unique(link_arr[sel, 1:], axis=0),
                exploration_percent=pct,
                obstacles=_latest(obstacles_at, obstacle_ticks, t),
                headings=np.arctan2(head_xy[:, idx, 1], head_xy[:, idx, 0]).astype(np.float64),
                coverage_percent=coverage.get(t),
            )
        )
        previous = t
    tag_list = sorted(tags.values(), key=lambda v: v[2])
    radii_m = _radii_m(path)
    radii = radii_m / float(tile) if radii_m is not None and len(radii_m) == n else None
    return Replay(
        walls=walls,
        tile_size=float(tile),
        title=f"recording {path.name}, {n} robot{'s' if n != 1 else ''}",
        frames=frames,
        trail_ticks=trail_ticks,
        trail=trail_xy,
        tags=np.array([v[:2] for v in tag_list], dtype=np.float64).reshape(-1, 2),
        tag_ticks=np.array([v[2] for v in tag_list], dtype=np.int64),
        radii=radii,
        tick_duration=float(dt),
    )


def _latest(by_tick: dict[int, np.ndarray], ticks: np.ndarray, tick: int) -> np.ndarray | None:
    """The entry of ``by_tick`` at ``tick`` or the last one before it (None: none yet)."""
    k = int(np.searchsorted(ticks, tick, side="right"))
    return by_tick[int(ticks[k - 1])] if k else None
