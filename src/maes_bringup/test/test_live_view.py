"""The live view (docs/live_view.md): the real ``maes_run --live`` serving a real WebSocket
client (the ``websockets`` package) that speaks Foxglove's WebSocket protocol as the Foxglove
app does (subprotocol ``foxglove.sdk.v1``: serverInfo, advertise, subscribe, binary message
data and time), and decodes what it receives with ``mcap-ros2-support``'s decoder, built from
the schema the server advertised, and with rclpy's own deserializer.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import signal
import struct
import subprocess
import time
from pathlib import Path

import pytest

pytest.importorskip("rclpy", reason="ROS tests run in the pip environment (make test)")
pytest.importorskip("websockets", reason="needs websockets (requirements/venv.txt)")
pytest.importorskip("foxglove", reason="needs foxglove-sdk (requirements/venv.txt)")

import websockets  # noqa: E402
from mcap.records import Schema  # noqa: E402
from mcap_ros2.decoder import DecoderFactory  # noqa: E402
from rclpy.serialization import deserialize_message  # noqa: E402

from maes_interfaces.msg import State  # noqa: E402

REPO = Path(__file__).resolve().parents[3]
MAES_RUN = REPO / "install" / "maes_bringup" / "lib" / "maes_bringup" / "maes_run"
TICK_NS = 100_000_000
WANTED = (
    "/clock",
    "/robot0/maes_state",
    "/robot1/scan",
    "/robot1/tf_static",
    "/maes/ground_truth",
    "/tf",
)
#: The navigator's plans: there once a robot planned (latched: sent again on subscribe).
PLANS = ("/robot0/plan", "/robot1/plan")


def write_config(path: Path, results: Path) -> Path:
    path.write_text(
        "number_of_robots: 2\nrandom_seeds: [3]\n"
        f"global_settings:\n  statistics_result_path: {results}\n"
        "end_criteria:\n  exploration_percent: null\n  tick: null\n"
        "map:\n  width_in_tiles: 20\n  height_in_tiles: 20\n  building_config: {}\n"
        "results:\n  pictures: false\n"  # the result pictures are not looked at here
    )
    return path


async def watch(url: str, seconds: float, subprotocol: str = "foxglove.sdk.v1") -> dict:
    """Connect asking for ``subprotocol``, subscribe to WANTED once advertised, collect
    messages for ``seconds``."""
    got: dict = {"channels": {}, "messages": {}, "times": []}
    async with websockets.connect(url, subprotocols=[subprotocol]) as ws:
        got["subprotocol"] = ws.subprotocol
        info = json.loads(await asyncio.wait_for(ws.recv(), 10))
        assert info["op"] == "serverInfo"
        got["info"] = info
        subscribed: dict[int, dict] = {}
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            try:
                frame = await asyncio.wait_for(ws.recv(), 2)
            except TimeoutError:
                continue
            if isinstance(frame, str):
                msg = json.loads(frame)
                if msg["op"] == "advertise":
                    new = []
                    for channel in msg["channels"]:
                        got["channels"][channel["topic"]] = channel
                        if channel["topic"] in WANTED + PLANS:
                            sub = len(subscribed) + 1
                            subscribed[sub] = channel
                            new.append({"id": sub, "channelId": channel["id"]})
                    if new:
                        await ws.send(json.dumps({"op": "subscribe", "subscriptions": new}))
                continue
            opcode = frame[0]
            if opcode == 1:  # message data: subscription id, log time, payload
                sub, log_time = struct.unpack_from("<IQ", frame, 1)
                topic = subscribed[sub]["topic"]
                got["messages"].setdefault(topic, []).append((log_time, bytes(frame[13:])))
            elif opcode == 2:  # time
                got["times"].append(struct.unpack_from("<Q", frame, 1)[0])
    return got


def decoder(channel: dict):
    """mcap-ros2-support's CDR decoder for an advertised channel."""
    assert channel["encoding"] == "cdr" and channel["schemaEncoding"] == "ros2msg"
    schema = Schema(
        id=1,
        name=channel["schemaName"],
        encoding="ros2msg",
        data=channel["schema"].encode("utf-8"),
    )
    return DecoderFactory().decoder_for("cdr", schema)


@pytest.mark.slow
def test_a_websocket_client_sees_the_run_live_and_decodes_it(tmp_path):
    assert MAES_RUN.exists(), f"workspace not built: {MAES_RUN} missing (make build)"
    cfg = write_config(tmp_path / "run.yaml", tmp_path / "results")
    proc = subprocess.Popen(
        [str(MAES_RUN), "--config", str(cfg), "--real-time-factor", "2", "--live", "0"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        env=os.environ.copy(),
    )
    try:
        url = None
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            line = proc.stderr.readline()
            if not line:
                break
            found = re.search(r"maes_run: watch at http://(127\.0\.0\.1:\d+)/", line)
            if found:
                url = f"ws://{found.group(1)}"  # Foxglove's protocol on the page's port
            if url and (line.startswith("tick") or "\rtick" in line):
                break
        assert url, "maes_run did not say where the live view is"
        got = asyncio.run(watch(url, seconds=6.0))
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=90)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, err

    assert "time" in got["info"]["capabilities"]
    channels = got["channels"]
    assert channels["/robot0/maes_state"]["schemaName"] == "maes_interfaces/msg/State"
    assert channels["/maes/ground_truth"]["schemaName"] == "nav_msgs/msg/OccupancyGrid"
    assert {"/robot0/map", "/robot1/odom", "/maes/markers", "/maes/stats"} <= set(channels)
    assert channels["/tf"]["schemaName"] == "tf2_msgs/msg/TFMessage"
    messages = got["messages"]
    assert set(WANTED) <= set(messages), f"no data on {set(WANTED) - set(messages)}"

    states = [
        (t, decoder(channels["/robot0/maes_state"])(data))
        for t, data in messages["/robot0/maes_state"]
    ]
    assert len(states) >= 5
    for log_time, state in states:
        assert log_time == state.tick * TICK_NS  # sim time
    ticks = [state.tick for _, state in states]
    assert ticks == sorted(ticks) and len(set(ticks)) == len(ticks)
    # rclpy's deserializer reads the same bytes to the same values
    ros_state = deserialize_message(messages["/robot0/maes_state"][-1][1], State)
    assert (ros_state.tick, ros_state.position.x, ros_state.heading) == (
        states[-1][1].tick,
        states[-1][1].position.x,
        states[-1][1].heading,
    )
    scan = decoder(channels["/robot1/scan"])(messages["/robot1/scan"][-1][1])
    # robot frames prefixed, so one view in `world` places every robot's scan
    assert len(scan.ranges) == 180 and scan.header.frame_id == "robot1/base_scan"
    static = decoder(channels["/robot1/tf_static"])(messages["/robot1/tf_static"][0][1])
    assert [(t.header.frame_id, t.child_frame_id) for t in static.transforms] == [
        ("robot1/base_footprint", "robot1/base_link"),
        ("robot1/base_link", "robot1/base_scan"),
    ]
    assert "/robot0/tf" not in channels  # its frames are in /tf, prefixed
    # the navigator's plans, heard by the simulator node, served in the world frame
    plans = [
        decoder(channels[topic])(data)
        for topic in PLANS
        if topic in messages
        for _, data in messages[topic]
    ]
    assert plans, f"no plan served; advertised: {sorted(channels)}"
    assert all(p.header.frame_id == "world" for p in plans)
    assert any(len(p.poses) >= 1 for p in plans)
    # latched: published before the client came, sent again on subscribe
    truth = decoder(channels["/maes/ground_truth"])(messages["/maes/ground_truth"][0][1])
    assert (truth.info.width, truth.info.height) == (20, 20)
    clock = decoder(channels["/clock"])
    stamps = [clock(data).clock for _, data in messages["/clock"]]
    assert [s.sec * 10**9 + s.nanosec for s in stamps] == [t for t, _ in messages["/clock"]]
    assert got["times"] and got["times"] == sorted(got["times"])
    assert got["times"][-1] % TICK_NS == 0


@pytest.mark.parametrize("subprotocol", ["foxglove.websocket.v1", "foxglove.sdk.v1"])
def test_direct_mode_serves_the_live_view_too(tmp_path, subprotocol):
    """A client asking for either name of Foxglove's protocol (Lichtblick before December 2025
    and PlotJuggler: foxglove.websocket.v1; foxglove_bridge 3.x and current apps:
    foxglove.sdk.v1) gets the run on the live port, where the web page is served too."""
    import socket
    import threading
    import urllib.request

    from maes_bringup.runners.direct import run
    from maes_sim.core import config_from_dict

    with socket.socket() as probe:  # a free port
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    cfg = config_from_dict(
        {
            "number_of_robots": 2,
            "end_criteria": {"tick": 400},
            "map": {"width_in_tiles": 20, "height_in_tiles": 20},
        }
    )
    done = threading.Event()
    worker = threading.Thread(
        target=lambda: (
            run(
                cfg,
                "maes_controller.algorithms.frontier_explorer:logic",
                live=port,
                progress=lambda s: time.sleep(0.01),
            ),
            done.set(),
        ),
        daemon=True,
    )
    worker.start()

    async def connect_and_watch():
        for _ in range(200):  # until the server is up (the run compiles nothing: cached)
            try:
                # the page, on the same port, while the run goes
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/scene") as answer:
                    scene = json.loads(answer.read())
                return scene, await watch(f"ws://127.0.0.1:{port}", 3.0, subprotocol)
            except OSError:
                await asyncio.sleep(0.1)
        raise AssertionError("direct mode's live view never came up")

    scene, got = asyncio.run(connect_and_watch())
    worker.join(timeout=120)
    assert done.is_set()
    assert got["subprotocol"] == subprotocol
    assert scene["robots"]["names"] == ["robot0", "robot1"]
    assert scene["controls"] == {"pause": False, "speed": False}  # direct mode steps itself
    channels, messages = got["channels"], got["messages"]
    states = [
        decoder(channels["/robot0/maes_state"])(data) for _, data in messages["/robot0/maes_state"]
    ]
    assert states and [s.tick for s in states] == sorted({s.tick for s in states})
    for log_time, data in messages["/robot0/maes_state"]:
        assert log_time == deserialize_message(data, State).tick * TICK_NS


def test_a_busy_port_names_the_setting_to_change(tmp_path):
    """``maes_run --live PORT`` on a port another live view holds: exit 2, naming LIVE_PORT."""
    import socket

    from maes_sim.ros.outputs import build_tap

    with socket.socket() as probe:  # a free port
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    first = build_tap(live=True, port=port)  # another run's live view holds it
    try:
        cfg = tmp_path / "c.yaml"
        cfg.write_text("number_of_robots: 1\nend_criteria: {tick: 5}\n")
        done = subprocess.run(
            [str(MAES_RUN), "--config", str(cfg), "--live", str(port), "--results", str(tmp_path)],
            capture_output=True,
            text=True,
            timeout=300,
        )
    finally:
        first.close()
    assert done.returncode == 2, done.stderr[-2000:]
    line = done.stderr.strip().splitlines()[-1]
    assert f"cannot serve on 127.0.0.1:{port}" in line, line
    assert "LIVE_PORT=" in line and "--live " in line and "live_port:=" in line, line
    assert "Traceback" not in done.stderr


def test_a_page_looking_never_changes_the_run(tmp_path):
    """Direct mode with the live view and a client asking for frames the whole run (scans, a
    robot's state, the maps: what the page asks), against the same run nobody watches: the
    same run to the bit. Sampling reads the simulation between ticks and draws no random
    number."""
    import socket
    import threading
    import urllib.request

    from maes_bringup.runners.direct import run
    from maes_sim.core import config_from_dict

    with socket.socket() as probe:  # a free port
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    cfg = config_from_dict(
        {
            "number_of_robots": 3,
            "random_seeds": [11],
            "end_criteria": {"tick": 80},
            "map": {"width_in_tiles": 20, "height_in_tiles": 20},
            "communication": {"model": "bernoulli", "loss_probability": 0.2},
        }
    )
    frames: list[int] = []
    stop = threading.Event()

    def look() -> None:
        url = f"http://127.0.0.1:{port}/api/frame?scans=1&robot=1&maps=0"
        while not stop.is_set():
            try:
                with urllib.request.urlopen(url, timeout=5) as answer:
                    frames.append(json.loads(answer.read())["tick"])
            except OSError:
                pass  # not up yet, or over
            time.sleep(0.02)

    looker = threading.Thread(target=look, daemon=True)
    looker.start()
    logic = "maes_controller.algorithms.frontier_explorer:logic"
    try:
        # slowed a little, so that the page sees many ticks
        watched = run(cfg, logic, live=port, progress=lambda s: time.sleep(0.01))
    finally:
        stop.set()
        looker.join(timeout=10)
    alone = run(cfg, logic)
    assert len(set(frames)) >= 5, f"the page saw ticks {sorted(set(frames))}"
    assert watched.ticks == alone.ticks == 80
    assert (watched.sim.poses == alone.sim.poses).all()
    assert watched.sim.stats() == alone.sim.stats()
