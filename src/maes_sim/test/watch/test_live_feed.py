"""The page's view of a running simulation (maes_sim.watch: scene, frames, the live feed), on a
real Simulation without ROS: what a frame holds equals what the simulation says, watching never
changes a run, the feed samples only while a page asks, and a failure never reaches the run."""

from __future__ import annotations

import base64
import math

import numpy as np
import pytest

from maes_sim.core import Simulation, config_from_dict
from maes_sim.watch import LiveFeed, bad_query, dumps, packed
from maes_sim.watch.scene import explored_and_slam, simulation_frame, simulation_scene


def unpack(p: dict) -> np.ndarray:
    """What the page's ``unpack`` reads (static/app.js)."""
    dtype = {"f4": "<f4", "i4": "<i4", "u1": "u1"}[p["dtype"]]
    return np.frombuffer(base64.b64decode(p["b64"]), dtype=dtype).reshape(p["shape"])


def make_sim(robots: int = 3, seed: int = 4, **extra) -> Simulation:
    cfg = {
        "number_of_robots": robots,
        "random_seeds": [seed],
        "map": {"width_in_tiles": 20, "height_in_tiles": 20},
        "end_criteria": {"exploration_percent": None, "tick": None},
        **extra,
    }
    return Simulation(config_from_dict(cfg))


def drive(sim: Simulation, ticks: int, each=None) -> None:
    for k in range(ticks):
        for i in range(sim.n_robots):
            sim.set_velocity(i, 1.0, 0.6 * math.sin(0.1 * k + i))
        sim.step()
        if each is not None:
            each(sim)


def test_packed_arrays_round_trip_and_json_has_no_nan():
    a = np.arange(6, dtype=float).reshape(3, 2) / 3
    assert np.array_equal(unpack(packed(a)), a.astype(np.float32))
    assert unpack(packed([[1, -2]], "i4")).tolist() == [[1, -2]]
    with pytest.raises(ValueError, match="dtype must be one of"):
        packed([1], "f8")
    with pytest.raises(ValueError):  # a NaN would make JSON the page cannot parse
        dumps({"x": float("nan")})


def test_scene_and_frame_are_the_simulation_in_metres():
    sim = make_sim(robots=4, world={"tile_size": 0.5})
    drive(sim, 12)
    scene = simulation_scene(sim, {"pause": True})
    assert scene["robots"]["names"] == ["robot0", "robot1", "robot2", "robot3"]
    assert scene["map"]["origin"] == [-5.0, -5.0]  # 20 tiles of 0.5 m, origin at the centre
    assert np.allclose(unpack(scene["robots"]["radius"]), np.asarray(sim.team.radii) * 0.5)
    assert np.array_equal(unpack(scene["map"]["walls"]).astype(bool), sim.walls)
    assert len(unpack(scene["lidars"][0]["angles"])) == 180
    assert scene["lidars"][0]["range"] == pytest.approx(sim.team.types[0].lidar_range * 0.5)
    assert scene["controls"] == {"pause": True, "speed": False}

    frame = simulation_frame(sim, scans=True, robots=(2,))
    poses = unpack(frame["poses"])
    expected = sim.poses
    expected[:, :2] *= 0.5
    assert np.allclose(poses, expected, atol=1e-5)
    assert frame["tick"] == 12 and frame["explored"] == pytest.approx(sim.exploration_percent)
    scans = unpack(frame["scans"]).reshape(4, 180)
    assert np.allclose(scans, np.asarray(sim.lidar_ranges) * 0.5, atol=1e-5)
    state = frame["states"]["2"]
    assert state["tick"] == 12 and state["robot_type"] == "default"
    ia, ib = sim.communication_links()
    assert unpack(frame["links"]).tolist() == np.stack([ia, ib], 1).tolist()
    maps = explored_and_slam(sim)
    assert np.array_equal(unpack(maps["slam"]), np.max(sim.slam_maps, axis=0))
    assert np.array_equal(unpack(maps["explored"]).astype(bool), sim.metrics.explored_tick >= 0)


def test_watching_a_run_never_changes_it():
    """Scene, frames with scans and states, and the maps, taken after every tick: the same run
    to the bit as nobody watching (the radio draws random numbers: none taken by watching)."""
    extra = {"communication": {"model": "bernoulli", "loss_probability": 0.3}}
    watched, alone = make_sim(robots=5, **extra), make_sim(robots=5, **extra)

    def watch(sim):
        simulation_scene(sim)
        simulation_frame(sim, scans=True, robots=(0, 3))
        explored_and_slam(sim)

    drive(watched, 40, watch)
    drive(alone, 40)
    assert np.array_equal(watched.poses, alone.poses)
    assert watched.stats() == alone.stats()
    assert watched.rng.bit_generator.state == alone.rng.bit_generator.state


def asked(feed: LiveFeed, **query) -> dict:
    return feed.frame({k: str(v) for k, v in query.items()})


def test_the_feed_samples_only_while_a_page_asks():
    sim = make_sim()
    feed = LiveFeed(period_s=0.0)
    feed.attach(sim)
    drive(sim, 5, lambda s: feed.offer())  # no page yet: nothing sampled
    first = asked(feed)
    assert first["tick"] == 0  # the sample taken when the feed attached
    drive(sim, 5, lambda s: feed.offer())  # now a page asks (the request above)
    later = asked(feed, seq=first["seq"])
    assert later["tick"] == 10 and later["seq"] > first["seq"]
    assert asked(feed, seq=later["seq"]) == {"seq": later["seq"], "failed": None}
    feed.idle_s = 0.0  # the page went away
    drive(sim, 3, lambda s: feed.offer())
    assert asked(feed)["tick"] == 10


def test_paths_and_history_come_in_pieces_that_add_up():
    sim = make_sim(global_settings={"ticks_per_stats_snapshot": 2})
    feed = LiveFeed(period_s=0.0)
    feed.attach(sim)
    asked(feed)
    ticks: list[int] = []
    xy = np.empty((3, 0, 2))
    rows = np.empty((0, 3))
    seq, last, stride = -1, -1, 0
    for _ in range(4):
        drive(sim, 7, lambda s: feed.offer())
        f = asked(feed, seq=seq, trail=last, stride=stride, hist=len(rows))
        seq, stride = f["seq"], f["trail"]["stride"]
        ticks += f["trail"]["ticks"]
        xy = np.concatenate([xy, unpack(f["trail"]["xy"])], axis=1)
        last = ticks[-1]
        assert f["history"]["from"] == len(rows)
        rows = np.concatenate([rows, unpack(f["history"]["rows"])])
    h, w = sim.shape
    assert ticks == sim.trail.ticks.tolist()
    assert np.allclose(xy, (sim.trail.positions - [w / 2, h / 2]) * 1.0, atol=1e-5)
    assert np.allclose(rows[:, 0], [s["sim_time"] for s in sim.snapshots], atol=1e-5)
    assert np.allclose(rows[:, 1], [s["exploration_percent"] for s in sim.snapshots], atol=1e-4)


def test_commands_wait_for_the_run_and_bad_ones_are_refused():
    sim = make_sim()
    feed = LiveFeed()
    done: list[dict] = []
    feed.attach(sim, apply=done.append, controls={"pause": True, "speed": True})
    assert feed.control({"op": "pause"})["ok"]
    assert feed.control({"op": "speed", "rtf": 4})["ok"]
    assert done == []  # not on the server's thread
    feed.drain()  # the run's thread
    assert done == [{"op": "pause"}, {"op": "speed", "rtf": 4.0}]
    for bad, why in (
        ({"op": "jump"}, "op must be pause, resume or speed"),
        ({"op": "speed", "rtf": -1}, "rtf must be a number from 0"),
        ({"op": "speed", "rtf": "fast"}, "rtf must be a number from 0"),
        ([], "op must be"),
    ):
        with pytest.raises(bad_query, match=why):
            feed.control(bad)
    with pytest.raises(bad_query, match="robot must be below 3"):
        feed.frame({"robot": "3"})
    with pytest.raises(bad_query, match="seq must be an integer"):
        feed.frame({"seq": "x"})
    quiet = LiveFeed()
    quiet.attach(make_sim())  # no controls: direct mode
    with pytest.raises(bad_query, match="cannot be paused"):
        quiet.control({"op": "pause"})


def test_a_failure_while_sampling_stops_the_page_not_the_run():
    sim = make_sim()
    lines: list[str] = []
    feed = LiveFeed(period_s=0.0, log=lines.append)

    def broken() -> dict:
        raise RuntimeError("a broken run_info")

    feed.attach(sim)
    asked(feed)
    feed._run_info = broken  # a bug in what the run hands the feed
    drive(sim, 3, lambda s: feed.offer())  # never raises into the run
    assert sim.tick == 3
    assert feed.failed == "RuntimeError: a broken run_info"
    assert asked(feed)["failed"] == feed.failed
    assert len(lines) == 1 and "stopped following the run (it goes on)" in lines[0]


def test_the_selected_robot_is_followed_and_its_state_sent():
    sim = make_sim()
    feed = LiveFeed(period_s=0.0)
    followed: list[tuple] = []
    feed.attach(sim, on_select=followed.append, nav_status=lambda i: f"nav of {i}")
    asked(feed, robot=1)
    feed.drain()  # the selection changed: told on the run's thread, and sampled again
    assert followed == [(1,)]
    f = asked(feed, robot=1)
    assert f["states"]["1"]["tick"] == 0 and f["nav"] == {"1": "nav of 1"}
