"""maes-replay: a run as a GIF, from direct mode and from a rosbag2-format MCAP recording.

The recording is written here from a real direct-mode run (lockstep-identical to the ROS stack):
each tick's messages are built by the simulator node's own conversion functions
(``maes_sim.ros.conversions``, ``maes_common.frames``), serialized to CDR by rclpy, and written with
the ``mcap`` package's writer in rosbag2's layout (profile ``ros2``, ``ros2msg`` schemas with
their dependencies, ``cdr`` messages). The replay then reads it with ``mcap-ros2-support``'s
decoder, which this project did not write.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

PIL = pytest.importorskip("PIL.Image")
pytest.importorskip("mcap_ros2", reason="the replay reads recordings with mcap-ros2-support")

from maes_bringup.replay import ReplayRecorder, read_mcap, write_animation  # noqa: E402
from maes_bringup.replay.model import thin_frames  # noqa: E402
from maes_bringup.replay.render import ReplayError, frame_layout  # noqa: E402
from maes_bringup.runners.direct import run  # noqa: E402
from maes_sim.core import config_from_dict, robot_colours  # noqa: E402

CONFIG = {
    "number_of_robots": 3,
    "map": {"width_in_tiles": 30, "height_in_tiles": 30},
    "end_criteria": {"tick": 120},
}
# Broadcasts and tags often, so that the replay has some to show.
LOGIC = """\
from maes_controller.algorithms.frontier_explorer import logic as explore


def logic(robot):
    explore(robot)
    if robot.tick % 7 == 0:
        robot.broadcast_msg(f"{robot.namespace} at tick {robot.tick}")
    if robot.tick % 25 == 3:
        robot.deposit_tag(f"{robot.namespace} was here")
"""


@pytest.fixture(scope="module")
def logic_spec(tmp_path_factory) -> str:
    path = tmp_path_factory.mktemp("logic") / "chatty.py"
    path.write_text(LOGIC)
    return f"{path}:logic"


def _gif_frames(path: Path) -> list[np.ndarray]:
    im = PIL.open(path)
    out = []
    for k in range(im.n_frames):
        im.seek(k)
        out.append(np.asarray(im.convert("RGB")).astype(int))
    return out


def _robot_colour_at(img: np.ndarray, col_row: np.ndarray, colour: np.ndarray) -> bool:
    c, r = np.round(col_row).astype(int)
    patch = img[r - 2 : r + 3, c - 2 : c + 3]
    return bool((np.abs(patch - colour).max(axis=2) <= 24).any())


def test_a_direct_mode_run_becomes_a_gif_with_robots_where_they_are(tmp_path, logic_spec):
    recorder = ReplayRecorder(max_frames=20)
    result = run(config_from_dict(CONFIG), logic_spec, progress=recorder)
    replay = recorder.replay(result.sim)
    frames = thin_frames(replay.frames, 20)
    assert 10 <= len(frames) <= 20 and frames[-1].tick == result.ticks == 120
    assert any(f.links.size for f in frames), "broadcasts were sent but none is shown"
    assert replay.tags.shape[0] == result.tags_deposited > 0
    out = write_animation(replay, tmp_path / "run.gif", fps=5, width_px=640, max_frames=20)
    images = _gif_frames(out)
    lay = frame_layout(replay, 640)
    assert len(images) == len(frames)
    assert all(img.shape == (lay.size[1], lay.size[0], 3) for img in images)
    assert PIL.open(out).info["duration"] == 200  # 5 frames per second
    colours = (robot_colours(3) * 255).round().astype(int)
    for k in (0, len(frames) // 2, len(frames) - 1):
        pixels = lay.pixels(frames[k].positions, replay.tile_size)
        for i in range(3):
            assert _robot_colour_at(images[k][..., :3], pixels[i], colours[i]), (k, i)
    # a robot's colour marks that robot only: where robot 1 stands, robot 0's colour is absent
    last = frames[-1].positions
    if np.linalg.norm(last[0] - last[1]) > 2:
        spot = lay.pixels(last[1], replay.tile_size)
        assert not _robot_colour_at(images[-1], spot, colours[0])


def test_the_recorder_stays_bounded_on_a_long_run():
    recorder = ReplayRecorder(max_frames=8)
    run(
        config_from_dict({**CONFIG, "end_criteria": {"tick": 300}}),
        "maes_controller.algorithms.frontier_explorer:logic",
        progress=recorder,
    )
    ticks = [f.tick for f in recorder.frames]
    assert len(ticks) <= 8 and ticks[-1] == 300 and ticks == sorted(ticks)


# ------------------------------------------------------------------------------ a recording
def _definition(type_name: str) -> str:
    """rosbag2's ``ros2msg`` schema text: the type's .msg file and every type it uses."""
    from ament_index_python.packages import get_package_share_directory

    builtin = {
        "bool",
        "byte",
        "char",
        "float32",
        "float64",
        "int8",
        "uint8",
        "int16",
        "uint16",
        "int32",
        "uint32",
        "int64",
        "uint64",
        "string",
        "wstring",
    }

    def text_of(full: str) -> str:
        pkg, _, name = full.split("/")
        return (Path(get_package_share_directory(pkg)) / "msg" / f"{name}.msg").read_text()

    def deps(full: str, text: str) -> list[str]:
        pkg = full.split("/")[0]
        found = []
        for line in text.splitlines():
            line = line.split("#")[0].strip()
            if not line or "=" in line.split()[1 if len(line.split()) > 1 else 0]:
                continue
            ftype = re.sub(r"\[.*\]$", "", line.split()[0])
            ftype = re.sub(r"<=\d+$", "", ftype)
            if ftype in builtin:
                continue
            if ftype == "Header":
                ftype = "std_msgs/Header"
            p, _, n = ftype.rpartition("/")
            found.append(f"{p or pkg}/msg/{n}")
        return found

    out, seen, todo = [text_of(type_name)], {type_name}, deps(type_name, text_of(type_name))
    while todo:
        dep = todo.pop(0)
        if dep in seen:
            continue
        seen.add(dep)
        text = text_of(dep)
        pkg, _, name = dep.split("/")
        out.append("=" * 80 + f"\nMSG: {pkg}/{name}\n" + text)
        todo += deps(dep, text)
    return "\n".join(out)


def _record(path: Path, logic_spec: str, with_tf: bool = True):
    """Run CONFIG in direct mode and write the sim node's topics of every tick to ``path``."""
    from mcap.writer import Writer
    from rclpy.serialization import serialize_message
    from tf2_msgs.msg import TFMessage

    from maes_common.frames import tick_transforms
    from maes_sim.core import robot_name
    from maes_sim.ros import conversions as cv

    fh = path.open("wb")
    writer = Writer(fh)
    writer.start(profile="ros2", library="maes-ros test")
    channels: dict[str, int] = {}
    schemas: dict[str, int] = {}
    counts: dict[str, int] = {}

    def write(topic: str, msg, sim_time: float) -> None:
        full = f"{type(msg).__module__.split('.')[0]}/msg/{type(msg).__name__}"
        if full not in schemas:
            schemas[full] = writer.register_schema(full, "ros2msg", _definition(full).encode())
        if topic not in channels:
            channels[topic] = writer.register_channel(topic, "cdr", schemas[full])
        t = int(round(sim_time * 1e9))
        writer.add_message(channels[topic], log_time=t, data=serialize_message(msg), publish_time=t)
        counts[topic] = counts.get(topic, 0) + 1

    def publish(sim, first: bool = False) -> None:
        tile = sim.config.world.tile_size
        h, w = sim.shape
        origin = (-w / 2.0 * tile, -h / 2.0 * tile)
        stamp = cv.time_to_msg(sim.sim_time)
        if first:
            truth = np.where(sim.walls, 100, 0).astype(np.int8)
            write(
                "/maes/ground_truth",
                cv.occupancy_to_msg(truth, stamp, "world", tile, origin),
                sim.sim_time,
            )
        odom_rel, _map_odom, world_odom = tick_transforms(
            sim.poses, sim.estimated_poses, sim.odometry_poses, np.zeros((sim.n_robots, 3)), tile
        )
        tf = TFMessage()
        for i in range(sim.n_robots):
            name = robot_name(i)
            tf.transforms.append(cv.transform_to_msg(world_odom[i], "world", f"{name}/odom", stamp))
            tf.transforms.append(
                cv.transform_to_msg(odom_rel[i], f"{name}/odom", f"{name}/base_footprint", stamp)
            )
            write(
                f"/{name}/maes_state", cv.state_to_msg(sim.observation(tile).state(i)), sim.sim_time
            )
        if with_tf:
            write("/tf", tf, sim.sim_time)
        if sim.tick % 10 == 0:
            explo = cv.heatmap_to_values(sim.exploration_heatmap())
            write(
                "/maes/exploration",
                cv.occupancy_to_msg(explo, stamp, "world", tile, origin),
                sim.sim_time,
            )
        write(
            "/maes/stats",
            cv.stats_to_msg(
                sim.stats(), sim.sim_time, sim.metrics.distance, tile, 0.0, sim.finished
            ),
            sim.sim_time,
        )

    recorder = ReplayRecorder(max_frames=400)

    def progress(sim) -> None:
        # called after each step: the recording starts at tick 1 (the node's starts at 0)
        publish(sim, first=sim.tick == 1)
        recorder(sim)

    result = run(config_from_dict(CONFIG), logic_spec, progress=progress)
    writer.finish()
    fh.close()
    return result, recorder, counts


def test_a_recording_replays_with_the_runs_poses_broadcasts_and_tags(tmp_path, logic_spec):
    bag = tmp_path / "run.mcap"
    result, recorder, counts = _record(bag, logic_spec)
    assert counts["/robot0/maes_state"] == result.ticks == 120
    replay = read_mcap(bag, max_frames=30)
    sim = result.sim
    assert replay.walls.shape == sim.shape and (replay.walls == sim.walls).all()
    assert replay.tile_size == pytest.approx(sim.config.world.tile_size)
    assert replay.n_robots == 3 and 15 <= len(replay.frames) <= 30
    assert replay.frames[-1].tick == 120
    # poses from /tf match the simulation's own trail at the same ticks
    own = dict(zip(sim.trail.ticks.tolist(), np.moveaxis(sim.trail.positions, 1, 0), strict=True))
    for frame in replay.frames:
        np.testing.assert_allclose(frame.positions, own[frame.tick], atol=1e-4)
    # every broadcast delivered is shown once; tags are where they were left
    seen = {tuple(p) for f in replay.frames for p in f.links.tolist()}
    sent = {tuple(p) for f in recorder.frames for p in f.links.tolist()}
    assert seen == sent and seen
    np.testing.assert_allclose(
        np.sort(replay.tags, axis=0), np.sort(sim.tags.grid_positions, axis=0), atol=1e-6
    )
    # explored tiles come from /maes/exploration
    last = replay.frames[-1].explored(sim.shape)
    assert last is not None and (last == (sim.metrics.explored_tick >= 0)).all()
    out = write_animation(replay, tmp_path / "bag.gif", max_frames=30)
    assert PIL.open(out).n_frames == len(replay.frames)


def test_a_recording_by_the_simulator_node_replays(tmp_path, logic_spec):
    """With direct mode's ``record=`` (issue 14's recorder: the real simulator node's messages
    through its tap), the replay shows the run's own poses, broadcasts and tags."""
    import inspect

    if "record" not in inspect.signature(run).parameters:
        pytest.skip("direct mode cannot record on this branch (the recorder is issue 14 item 2)")
    bag = tmp_path / "node.mcap"
    recorder = ReplayRecorder(max_frames=400)
    result = run(config_from_dict(CONFIG), logic_spec, progress=recorder, record=bag)
    replay = read_mcap(bag, max_frames=25)
    sim = result.sim
    assert replay.n_robots == 3 and replay.frames[-1].tick == result.ticks
    assert (replay.walls == sim.walls).all()
    own = dict(zip(sim.trail.ticks.tolist(), np.moveaxis(sim.trail.positions, 1, 0), strict=True))
    for frame in replay.frames:
        np.testing.assert_allclose(frame.positions, own[frame.tick], atol=1e-4)
    seen = {tuple(p) for f in replay.frames for p in f.links.tolist()}
    assert seen == {tuple(p) for f in recorder.frames for p in f.links.tolist()} and seen
    assert replay.tags.shape[0] == result.tags_deposited


def test_without_tf_the_robots_are_where_they_believed_they_were(tmp_path, logic_spec):
    bag = tmp_path / "no_tf.mcap"
    result, _recorder, counts = _record(bag, logic_spec, with_tf=False)
    assert "/tf" not in counts
    replay = read_mcap(bag, max_frames=20)
    sim = result.sim
    own = dict(zip(sim.trail.ticks.tolist(), np.moveaxis(sim.trail.positions, 1, 0), strict=True))
    off = sim.config.robot_constraints.slam_position_inaccuracy  # tiles
    for frame in replay.frames:
        error = np.linalg.norm(frame.positions - own[frame.tick], axis=1)
        assert (error <= off * np.sqrt(2) + 1e-4).all(), (frame.tick, error)


def test_maes_replay_command_line(tmp_path, logic_spec):
    bag = tmp_path / "run.mcap"
    _record(bag, logic_spec)
    gif = tmp_path / "cli.gif"
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "maes_bringup.replay.cli",
            str(bag),
            "-o",
            str(gif),
            "--frames",
            "12",
            "--width",
            "480",
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    assert "wrote" in proc.stdout and "drawing frame 12/12" in proc.stderr
    im = PIL.open(gif)
    assert im.n_frames == 12 and im.size[0] == 480
    # bad input: one line, exit code 2
    bad = subprocess.run(
        [
            sys.executable,
            "-m",
            "maes_bringup.replay.cli",
            str(tmp_path / "none.mcap"),
            "-o",
            str(gif),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert bad.returncode == 2 and "does not exist" in bad.stderr
    with pytest.raises(ReplayError, match=r"\.gif or \.mp4"):
        write_animation(read_mcap(bag), tmp_path / "run.avi")
    from maes_bringup.replay.mcap_source import RecordingError

    (tmp_path / "text.mcap").write_text("not a recording")
    with pytest.raises(RecordingError, match="not an MCAP file"):
        read_mcap(tmp_path / "text.mcap")
    torn = tmp_path / "torn.mcap"
    torn.write_bytes(bag.read_bytes()[: bag.stat().st_size // 2])  # a recorder killed mid-run
    with pytest.raises(RecordingError, match="cut off"):
        read_mcap(torn)


@pytest.mark.parametrize("name", ["model", "render"])
def test_the_docstring_examples_hold(name):
    import doctest
    import importlib

    result = doctest.testmod(importlib.import_module(f"maes_bringup.replay.{name}"))
    assert result.attempted > 0 and result.failed == 0


@pytest.mark.skipif(shutil.which("ffmpeg") is None, reason="MP4 needs ffmpeg on PATH")
def test_an_mp4_where_ffmpeg_exists(tmp_path, logic_spec):
    recorder = ReplayRecorder(max_frames=12)
    result = run(
        config_from_dict({**CONFIG, "end_criteria": {"tick": 40}}), logic_spec, progress=recorder
    )
    out = write_animation(recorder.replay(result.sim), tmp_path / "run.mp4", max_frames=12)
    probe = subprocess.run(
        [shutil.which("ffmpeg"), "-i", str(out), "-f", "null", "-"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    frames = re.findall(r"frame=\s*(\d+)", probe.stderr)
    assert frames and int(frames[-1]) == len(thin_frames(recorder.frames, 12))
    assert re.search(r"Video: h264.*720x\d+", probe.stderr)


def test_moving_obstacles_are_recorded_replayed_and_drawn(tmp_path, logic_spec):
    """The simulator node publishes the obstacles (``/maes/obstacles`` markers) into the
    recording; the replay reads them back where the run had them, and draws them."""
    from matplotlib.colors import to_rgb

    from maes_bringup.replay.render import OBSTACLE_COLOUR

    config = {
        **CONFIG,
        "end_criteria": {"tick": 40},
        "obstacles": [{"random_walkers": 2, "radius": 0.6, "speed": 1.5}],
    }
    bag = tmp_path / "obstacles.mcap"
    recorder = ReplayRecorder(max_frames=400)
    run(config_from_dict(config), logic_spec, progress=recorder, record=bag)
    own = {f.tick: f.obstacles for f in recorder.frames}
    replay = read_mcap(bag, max_frames=10)
    assert len(replay.frames) >= 5
    for frame in replay.frames:
        assert frame.obstacles is not None and frame.obstacles.shape == (2, 5), frame.tick
    compared = [f for f in replay.frames if f.tick in own]  # the recorder sees ticks 1, 2, ...
    assert len(compared) >= len(replay.frames) - 1
    for frame in compared:
        np.testing.assert_allclose(frame.obstacles, own[frame.tick], atol=1e-9)
    assert not np.allclose(replay.frames[0].obstacles, replay.frames[-1].obstacles)  # they move
    out = write_animation(replay, tmp_path / "obstacles.gif", fps=5, max_frames=10)
    last, lay = _gif_frames(out)[-1], frame_layout(replay, 720)
    colour = (np.array(to_rgb(OBSTACLE_COLOUR)) * 255).round().astype(int)
    for xy in replay.frames[-1].obstacles[:, 1:3]:  # each walker's centre shows its colour
        assert _robot_colour_at(last, lay.pixels(xy, replay.tile_size), colour), xy


def test_a_recording_keeps_the_robots_sizes(tmp_path, logic_spec):
    """Robot types: the recorder notes every robot's radius in the bag's rosbag2 ``custom_data``
    and the replay draws each robot at its size (a recording without the note: all alike)."""
    import yaml

    config = dict(
        CONFIG,
        end_criteria={"tick": 30},
        robot_types={"small": {"agent_relative_size": 0.3}, "big": {"agent_relative_size": 0.9}},
        team=[{"type": "small", "count": 2}, {"type": "big", "count": 1}],
    )
    result = run(config_from_dict(config), logic_spec, record=tmp_path / "bag")
    replay = read_mcap(tmp_path / "bag", max_frames=10)
    np.testing.assert_allclose(replay.radii, [0.15, 0.15, 0.45])
    np.testing.assert_allclose(replay.radii, result.sim.team.radii)
    meta = yaml.safe_load((tmp_path / "bag" / "metadata.yaml").read_text())
    assert "maes.robot_radii_m" in meta["rosbag2_bagfile_information"]["custom_data"]
    # a recording of another recorder (no note) replays with every robot alike
    bag = tmp_path / "other.mcap"
    _record(bag, logic_spec)
    assert read_mcap(bag, max_frames=5).radii is None
