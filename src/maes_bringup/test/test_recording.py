"""Recording a run (docs/live_view.md), checked with readers the project did not write:
``mcap-ros2-support`` (decodes CDR from the schema text in the file) and ``rosbags`` (its own
rosbag2 MCAP reader and CDR deserializer, typed from the same schema text).

Direct mode, the embedded stack in-process, and the real ``maes_run`` stopped by a real SIGINT.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("rclpy", reason="ROS tests run in the pip environment (make test)")
pytest.importorskip("mcap_ros2", reason="needs mcap-ros2-support (requirements/venv.txt)")
pytest.importorskip("rosbags", reason="needs rosbags (requirements/venv.txt)")

from mcap.reader import make_reader  # noqa: E402
from mcap_ros2.reader import read_ros2_messages  # noqa: E402

from maes_bringup.runners.direct import run  # noqa: E402
from maes_bringup.runners.embedded import main as maes_run  # noqa: E402
from maes_sim.core import config_from_dict  # noqa: E402

REPO = Path(__file__).resolve().parents[3]
MAES_RUN = REPO / "install" / "maes_bringup" / "lib" / "maes_bringup" / "maes_run"
LOGIC = "maes_controller.algorithms.frontier_explorer:logic"
TICK_NS = 100_000_000  # the default tick: 0.1 s


def small_config(ticks: int | None, robots: int = 2) -> dict:
    return {
        "number_of_robots": robots,
        "random_seeds": [3],
        "end_criteria": {"exploration_percent": None, "tick": ticks},
        "map": {"width_in_tiles": 20, "height_in_tiles": 20, "building_config": {}},
        "results": {"pictures": False},  # the result pictures are not looked at here
    }


def write_config(path: Path, results: Path, ticks: int | None) -> Path:
    end = "null" if ticks is None else ticks
    path.write_text(
        "number_of_robots: 2\nrandom_seeds: [3]\n"
        f"global_settings:\n  statistics_result_path: {results}\n"
        f"end_criteria:\n  exploration_percent: null\n  tick: {end}\n"
        "map:\n  width_in_tiles: 20\n  height_in_tiles: 20\n  building_config: {}\n"
        "results:\n  pictures: false\n"  # the result pictures are not looked at here
    )
    return path


def read_all(path: Path) -> list:
    """Every message decoded by mcap-ros2-support (raises on any that does not decode)."""
    return list(read_ros2_messages(str(path)))


def check_recording(path: Path, robots: int) -> dict[str, int]:
    """The checks every recording must pass; returns the per-topic counts."""
    with open(path, "rb") as stream:
        reader = make_reader(stream)
        header = reader.get_header()
        summary = reader.get_summary()
        metadata = {m.name: m.metadata for m in reader.iter_metadata()}
    assert header.profile == "ros2"
    assert summary is not None, "no summary: the file was not finished"
    assert {s.encoding for s in summary.schemas.values()} == {"ros2msg"}
    assert {c.message_encoding for c in summary.channels.values()} == {"cdr"}
    assert all("offered_qos_profiles" in c.metadata for c in summary.channels.values())
    assert "rosbag2" in metadata and "serialized_metadata" in metadata["rosbag2"]

    messages = read_all(path)
    counts = Counter(m.channel.topic for m in messages)
    assert sum(summary.statistics.channel_message_counts.values()) == len(messages)
    # the clock: /clock carries the log time, ticks 0.1 s apart from 0
    clock = [m for m in messages if m.channel.topic == "/clock"]
    stamps = [m.ros_msg.clock.sec * 10**9 + m.ros_msg.clock.nanosec for m in clock]
    assert stamps == [m.log_time_ns for m in clock]
    assert stamps == [k * TICK_NS for k in range(len(stamps))]
    # one maes_state per robot per tick, its tick field matching the clock
    for i in range(robots):
        states = [m for m in messages if m.channel.topic == f"/robot{i}/maes_state"]
        assert len(states) == len(clock)
        assert [m.ros_msg.tick for m in states] == list(range(len(states)))
        assert [m.log_time_ns for m in states] == stamps
        scans = [m for m in messages if m.channel.topic == f"/robot{i}/scan"]
        assert len(scans) == len(clock) and len(scans[-1].ros_msg.ranges) == 180
        assert counts[f"/robot{i}/tf_static"] == 1
    (truth,) = [m.ros_msg for m in messages if m.channel.topic == "/maes/ground_truth"]
    assert (truth.info.width, truth.info.height) == (20, 20)
    assert set(np.unique(np.asarray(truth.data))) <= {0, 100}
    check_with_rosbags(path, counts)
    return dict(counts)


def check_with_rosbags(path: Path, counts: Counter) -> None:
    """rosbags reads the file as a rosbag2 MCAP and deserializes every message."""
    from rosbags.rosbag2 import Reader
    from rosbags.typesys import Stores, get_types_from_msg, get_typestore

    typestore = get_typestore(Stores.EMPTY)
    with Reader(path) as reader:
        for connection in reader.connections:
            typestore.register(get_types_from_msg(connection.msgdef.data, connection.msgtype))
        seen = Counter()
        for connection, timestamp, data in reader.messages():
            msg = typestore.deserialize_cdr(data, connection.msgtype)
            seen[connection.topic] += 1
            if connection.topic == "/clock":
                assert msg.clock.sec * 10**9 + msg.clock.nanosec == timestamp
    assert seen == counts


def test_a_direct_mode_recording_decodes_and_does_not_change_the_run(tmp_path):
    cfg = config_from_dict(small_config(ticks=25))
    plain = run(cfg, LOGIC)
    recorded = run(cfg, LOGIC, record=tmp_path / "direct.mcap")
    np.testing.assert_array_equal(recorded.exploration, plain.exploration)
    np.testing.assert_array_equal(recorded.sim.poses, plain.sim.poses)
    assert recorded.stats == plain.stats
    counts = check_recording(tmp_path / "direct.mcap", robots=2)
    assert counts["/clock"] == 26  # tick 0 and each of the 25 steps
    assert counts["/robot1/maes_state"] == 26


def test_a_bag_folder_has_the_metadata_yaml_ros2_bag_reads(tmp_path):
    run(config_from_dict(small_config(ticks=5)), LOGIC, record=tmp_path / "bag")
    assert (tmp_path / "bag" / "metadata.yaml").is_file()
    from rosbags.rosbag2 import Reader

    with Reader(tmp_path / "bag") as reader:
        assert reader.message_count == sum(1 for _ in reader.messages())
        assert reader.duration == 5 * TICK_NS + 1  # rosbags: last - first + 1
        assert "/robot0/maes_state" in reader.topics


def test_an_embedded_recording_holds_what_direct_mode_records(tmp_path, capsys):
    cfg = write_config(tmp_path / "run.yaml", tmp_path / "results", ticks=20)
    code = maes_run(
        ["--config", str(cfg), "--real-time-factor", "0", "--record", str(tmp_path / "e.mcap")]
    )
    assert code == 0
    assert "recording to" in capsys.readouterr().err
    embedded = check_recording(tmp_path / "e.mcap", robots=2)
    run(config_from_dict(small_config(ticks=20)), LOGIC, record=tmp_path / "d.mcap")
    direct = check_recording(tmp_path / "d.mcap", robots=2)

    def types(path):
        with open(path, "rb") as stream:
            summary = make_reader(stream).get_summary()
        return {c.topic: summary.schemas[c.schema_id].name for c in summary.channels.values()}

    assert types(tmp_path / "e.mcap") == types(tmp_path / "d.mcap")
    for topic in ("/clock", "/robot0/maes_state", "/robot1/scan", "/tf"):
        assert embedded[topic] == direct[topic] == 21
    # the same run: the last states agree (lockstep makes embedded equal direct mode)
    last = {}
    for name in ("e.mcap", "d.mcap"):
        (state,) = [
            m.ros_msg
            for m in read_all(tmp_path / name)
            if m.channel.topic == "/robot0/maes_state" and m.ros_msg.tick == 20
        ]
        last[name] = (state.position.x, state.position.y, state.heading)
    assert last["e.mcap"] == last["d.mcap"]


def test_a_recording_path_that_exists_is_refused_before_the_run(tmp_path, capsys):
    cfg = write_config(tmp_path / "run.yaml", tmp_path / "results", ticks=5)
    (tmp_path / "taken.mcap").write_bytes(b"keep me")
    code = maes_run(["--config", str(cfg), "--record", str(tmp_path / "taken.mcap")])
    assert code == 2
    assert "taken.mcap exists already" in capsys.readouterr().err
    assert (tmp_path / "taken.mcap").read_bytes() == b"keep me"
    assert not (tmp_path / "results").exists()


@pytest.mark.slow
def test_ctrl_c_leaves_a_finished_readable_recording(tmp_path):
    assert MAES_RUN.exists(), f"workspace not built: {MAES_RUN} missing (make build)"
    cfg = write_config(tmp_path / "run.yaml", tmp_path / "results", ticks=None)
    out = tmp_path / "interrupted.mcap"
    proc = subprocess.Popen(
        [str(MAES_RUN), "--config", str(cfg), "--real-time-factor", "2", "--record", str(out)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        env=os.environ.copy(),
    )
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:  # until the run is ticking
            line = proc.stderr.readline()
            if not line or line.startswith("tick") or "\rtick" in line:
                break
        time.sleep(2.0)
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=90)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, err
    assert "recording written to" in err
    counts = check_recording(out, robots=2)
    assert counts["/clock"] > 5


@pytest.mark.slow
def test_the_embedded_stack_gives_the_same_run_with_and_without_recording(tmp_path):
    results = {}
    for name, extra in (("plain", []), ("recorded", ["--record", str(tmp_path / "r.mcap")])):
        cfg = write_config(tmp_path / f"{name}.yaml", tmp_path / name, ticks=30)
        assert maes_run(["--config", str(cfg), "--real-time-factor", "0", *extra]) == 0
        (run_dir,) = (tmp_path / name).iterdir()
        summary = json.loads((run_dir / "summary.json").read_text())
        results[name] = (
            summary["final"],
            summary["ticks"],
            (run_dir / "robot0_slam.pgm").read_bytes(),
            (run_dir / "robot1_slam.pgm").read_bytes(),
        )
    assert results["plain"] == results["recorded"]
