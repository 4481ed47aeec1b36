"""Integration of the core: Simulation stepping, observations, commands, determinism, end."""

import hashlib

import numpy as np
import pytest

from maes_sim.core import (
    CommandRejected,
    SignalFunctionError,
    SimConfig,
    Simulation,
    WorldMap,
)
from maes_sim.core.config_schema import (
    CaveConfig,
    EndCriteria,
    GlobalSettings,
    LidarConfig,
    MapConfig,
    RobotConstraints,
)
from maes_sim.core.grid import OPEN, SOLID
from maes_sim.core.kernels import cast_rays


def open_room(h=12, w=20):
    walls = np.zeros((h, w), dtype=bool)
    walls[0, :] = walls[-1, :] = walls[:, 0] = walls[:, -1] = True
    return WorldMap(walls=walls, name="room")


def place(sim, grid_xy):
    """Teleport robots to grid coordinates (heading 0) through the public API."""
    xy = np.asarray(grid_xy, dtype=float) - np.array([sim.shape[1], sim.shape[0]]) / 2
    sim.place_robots(np.column_stack([xy, np.zeros(len(xy))]))


def small_config(**kw):
    base = {
        "number_of_robots": 2,
        "map": MapConfig(width_in_tiles=30, height_in_tiles=30, cave_config=CaveConfig()),
    }
    base.update(kw)
    return SimConfig(**base)


def run_hash(sim, ticks):
    rng = np.random.default_rng(99)
    h = hashlib.sha256()
    for t in range(ticks):
        if t % 7 == 0:
            sim.set_velocities(rng.uniform(-3, 3, sim.n_robots), rng.uniform(-3, 3, sim.n_robots))
        if t % 11 == 0:
            sim.broadcast(0, f"hello {t}")
            sim.deposit_tag(1, f"tag {t}")
        sim.step()
        h.update(sim.poses.tobytes())
        h.update(sim.lidar_ranges.tobytes())
    h.update(sim.walls.tobytes())
    h.update(sim.slam_maps.tobytes())
    h.update(sim.metrics.explored_tick.tobytes())
    h.update(repr(sim.snapshots).encode())
    return h.hexdigest()


def test_same_seed_gives_bit_identical_runs_and_other_seed_differs():
    cfg = small_config(
        robot_constraints=RobotConstraints(distribute_slam=True, slam_position_inaccuracy=0.5)
    )
    a = run_hash(Simulation(cfg), 60)
    b = run_hash(Simulation(cfg), 60)
    c = run_hash(Simulation(cfg, seed=7), 60)
    assert a == b
    assert a != c


def test_step_advances_tick_time_and_moves_a_commanded_robot_only():
    sim = Simulation(small_config(), world=open_room())
    start = sim.poses
    sim.move(0, 2.0)
    for _ in range(30):
        sim.step()
    assert sim.tick == 30
    assert sim.sim_time == pytest.approx(3.0)
    moved = np.hypot(*(sim.poses[:, :2] - start[:, :2]).T)
    assert moved[0] == pytest.approx(2.0, abs=0.01)
    assert moved[1] == 0.0
    assert sim.statuses == ["Idle", "Idle"]


def test_lidar_ranges_match_the_walls_of_an_open_room():
    sim = Simulation(small_config(number_of_robots=1), world=open_room())
    gx, gy = sim.grid_positions[0]
    ranges = sim.lidar_ranges[0]
    # ray 90 points straight ahead (+x at heading 0): the east wall's inner face is at gx = 19
    assert ranges[90] == pytest.approx(min(19 - gx, 7.0))
    assert ranges[0] == pytest.approx(min(gx - 1, 7.0))  # straight back: west wall at gx = 1
    assert ranges[135] == pytest.approx(min(11 - gy, 7.0))  # +90 degrees: north wall


def test_robots_stop_each_others_rays_and_the_key_off_restores_wall_only_scans():
    runs = {}
    for on in (True, False):
        sim = Simulation(small_config(number_of_robots=6, lidar=LidarConfig(robots_block_rays=on)))
        rng = np.random.default_rng(4)
        scans = []
        for t in range(40):
            if t % 5 == 0:
                sim.set_velocities(rng.uniform(0, 3, 6), rng.uniform(-2, 2, 6))
            sim.step()
            scans.append((sim.lidar_ranges.copy(), sim.lidar_hits.copy()))
            if not on:  # off: exactly the wall-only lidar of the kernel
                want = cast_rays(sim.walls, sim.grid_positions, sim.poses[:, 2], 7.0)
                assert sim.lidar_ranges.tobytes() == want[0].tobytes()
                np.testing.assert_array_equal(sim.lidar_hits, want[1])
        runs[on] = (scans, sim.metrics.explored_tick.copy(), sim.slam_maps.copy(), sim.poses)
    on, off = runs[True], runs[False]
    # the same run either way: the scan differs, exploration, SLAM and motion do not
    np.testing.assert_array_equal(on[1], off[1])
    np.testing.assert_array_equal(on[2], off[2])
    np.testing.assert_array_equal(on[3], off[3])
    shorter = sum(int((a[0] < b[0]).sum()) for a, b in zip(on[0], off[0], strict=True))
    longer = sum(int((a[0] > b[0]).sum()) for a, b in zip(on[0], off[0], strict=True))
    assert shorter > 100 and longer == 0  # robots spawned together see each other


def test_exploration_grows_and_slam_marks_open_and_solid_tiles():
    sim = Simulation(small_config(number_of_robots=1), world=open_room())
    first = sim.exploration_percent
    assert 0 < first < 100
    sim.rotate_continuous(0)
    sim.move(0, 3.0)
    for _ in range(40):
        sim.step()
    assert sim.exploration_percent > first
    m = sim.slam_maps[0]
    assert (m == OPEN).any() and (m == SOLID).any()
    assert not (sim.walls & (m == OPEN)).any()  # SLAM never calls a wall open
    assert not (~sim.walls & (m == SOLID)).any()  # nor open space solid (exact lidar)


def test_broadcast_arrives_next_tick_within_range_only():
    cfg = small_config(number_of_robots=3, robot_constraints=RobotConstraints(broadcast_range=3.0))
    sim = Simulation(cfg, world=open_room(12, 30))
    # Place robots explicitly: 0 and 1 two tiles apart, 2 twelve tiles away.
    place(sim, [[3.5, 5.5], [5.5, 5.5], [15.5, 5.5]])
    sim.broadcast(0, "ping")
    assert sim.robot_state(1).incoming_broadcast_msgs == []
    sim.step()
    got = sim.robot_state(1).incoming_broadcast_msgs
    assert [(b.msg, b.sender) for b in got] == [("ping", "robot0")]
    assert sim.robot_state(2).incoming_broadcast_msgs == []
    assert sim.robot_state(0).incoming_broadcast_msgs == []  # not to itself
    sim.step()
    assert sim.robot_state(1).incoming_broadcast_msgs == []  # delivered once


def test_broadcast_blocked_by_walls_when_configured():
    world = open_room(12, 20)
    walls = world.walls.copy()
    walls[:, 8] = True  # a full wall between the robots
    world = WorldMap(walls=walls)
    for blocked, expected in ((True, []), (False, ["x"])):
        cfg = small_config(
            robot_constraints=RobotConstraints(
                broadcast_range=10.0, broadcast_blocked_by_walls=blocked
            )
        )
        sim = Simulation(cfg, world=world)
        place(sim, [[5.5, 5.5], [11.5, 5.5]])
        sim.broadcast(0, "x")
        sim.step()
        assert [b.msg for b in sim.robot_state(1).incoming_broadcast_msgs] == expected


def test_signal_function_decides_and_may_use_the_rng_and_errors_are_clear():
    calls = []

    def through_one_wall_only(total, walls, rng):
        calls.append((total, walls))
        return walls <= 1.0 and rng.random() < 2.0

    world = open_room(12, 20)
    walls = world.walls.copy()
    walls[:, 8] = True
    cfg = small_config()
    sim = Simulation(cfg, world=WorldMap(walls=walls), signal_function=through_one_wall_only)
    place(sim, [[5.5, 5.5], [11.5, 5.5]])
    sim.broadcast(0, "through")
    sim.step()
    assert [b.msg for b in sim.robot_state(1).incoming_broadcast_msgs] == ["through"]
    assert calls[0] == (pytest.approx(6.0), pytest.approx(1.0))

    def broken(total, walls):
        raise ZeroDivisionError("boom")

    sim = Simulation(cfg, world=WorldMap(walls=walls), signal_function=broken)
    sim.broadcast(0, "x")
    before = (sim.tick, sim.poses.copy())
    with pytest.raises(SignalFunctionError, match="boom"):
        sim.step()
    assert sim.tick == before[0]
    np.testing.assert_array_equal(sim.poses, before[1])


def test_tags_are_readable_within_range_with_sender_and_tick():
    cfg = small_config(robot_constraints=RobotConstraints(environment_tag_read_range=2.0))
    sim = Simulation(cfg, world=open_room(12, 30))
    place(sim, [[3.5, 5.5], [12.5, 5.5]])
    sim.step()
    sim.deposit_tag(0, "frontier here")
    s0, s1 = sim.robot_state(0), sim.robot_state(1)
    assert [(t.msg, t.sender, t.tick) for t in s0.tags_nearby] == [("frontier here", "robot0", 1)]
    assert (s0.tags_nearby[0].pos.x, s0.tags_nearby[0].pos.y) == (3.5 - 15, 5.5 - 6)
    assert s1.tags_nearby == []


def test_nearby_robots_respect_range_and_walls():
    world = open_room(12, 30)
    walls = world.walls.copy()
    walls[:, 10] = True
    cfg = small_config(
        number_of_robots=3,
        robot_constraints=RobotConstraints(
            sense_nearby_agents_range=5.0, sense_nearby_agents_blocked_by_walls=True
        ),
    )
    sim = Simulation(cfg, world=WorldMap(walls=walls))
    place(sim, [[5.5, 5.5], [8.5, 5.5], [12.5, 5.5]])
    sim.step()
    assert [r.id for r in sim.robot_state(0).nearby_robots] == ["1"]
    assert [r.id for r in sim.robot_state(1).nearby_robots] == ["0"]  # 2 is behind the wall
    assert sim.robot_state(2).nearby_robots == []


def test_distributed_slam_merges_maps_of_robots_in_range():
    rc = RobotConstraints(
        distribute_slam=True,
        slam_sync_interval_in_ticks=2,
        slam_update_interval_in_ticks=1,
        broadcast_range=100.0,
    )
    sim = Simulation(small_config(robot_constraints=rc), world=open_room(12, 40))
    place(sim, [[3.5, 5.5], [35.5, 5.5]])
    sim.step()
    assert not np.array_equal(sim.slam_maps[0], sim.slam_maps[1])
    sim.step()  # tick 2: sync
    np.testing.assert_array_equal(sim.slam_maps[0], sim.slam_maps[1])


def test_bad_commands_are_rejected_and_leave_the_state_valid():
    sim = Simulation(small_config(), world=open_room())
    sim.set_velocity(0, 1.0, 0.0)
    with pytest.raises(CommandRejected, match="nan"):
        sim.set_velocity(0, float("nan"), 0.0)
    with pytest.raises(CommandRejected, match="out of range"):
        sim.move(5, 1.0)
    with pytest.raises(CommandRejected, match="empty"):
        sim.broadcast(0, "")
    with pytest.raises(CommandRejected, match="bytes"):
        sim.deposit_tag(0, "x" * 5000)
    sim.step()
    assert np.isfinite(sim.poses).all()
    assert sim.velocities[0, 0] > 0  # the valid command before the bad one still holds


def test_end_criteria_stop_the_run_and_snapshots_are_taken():
    cfg = small_config(
        end_criteria=EndCriteria(tick=25, exploration_percent=None),
        global_settings=GlobalSettings(ticks_per_stats_snapshot=10),
    )
    sim = Simulation(cfg)
    sim.run()
    assert sim.finished and sim.tick == 25
    assert "tick limit" in sim.end_reason
    assert [s["tick"] for s in sim.snapshots] == [0, 10, 20, 25]
    cfg = small_config(end_criteria=EndCriteria(exploration_percent=1.0))
    sim = Simulation(cfg)
    assert sim.finished  # the first lidar sweep already sees more than 1 %
    assert "exploration" in sim.end_reason


def test_heatmaps_are_recent_where_robots_look():
    sim = Simulation(small_config(number_of_robots=1), world=open_room())
    for _ in range(5):
        sim.step()
    heat = sim.exploration_heatmap()
    tile = np.floor(sim.grid_positions[0]).astype(int)
    assert heat[tile[1], tile[0]] == pytest.approx(1.0)
    assert (heat == -1).any()
    assert sim.coverage_heatmap()[tile[1], tile[0]] == pytest.approx(1.0)


def test_place_robots_refuses_walls_and_overlaps_and_changes_nothing_then():
    sim = Simulation(small_config(), world=open_room())
    before = sim.poses
    with pytest.raises(CommandRejected, match="wall"):
        place(sim, [[0.5, 0.5], [5.5, 5.5]])
    with pytest.raises(CommandRejected, match="overlap"):
        place(sim, [[5.5, 5.5], [5.7, 5.5]])
    np.testing.assert_array_equal(sim.poses, before)
    place(sim, [[5.5, 5.5], [8.5, 5.5]])
    assert sim.poses[1, 0] - sim.poses[0, 0] == pytest.approx(3.0)
    # observations follow the new poses: robot 0 now sees the west wall 4.5 tiles behind it
    assert sim.lidar_ranges[0, 0] == pytest.approx(4.5)


def test_links_are_evaluated_once_when_messages_and_slam_sync_share_a_step():
    calls = []

    def counting(total, walls):
        calls.append(total)
        return True

    rc = RobotConstraints(distribute_slam=True, slam_sync_interval_in_ticks=1)
    sim = Simulation(
        small_config(number_of_robots=3, robot_constraints=rc),
        world=open_room(),
        signal_function=counting,
    )
    sim.broadcast(0, "hi")
    sim.step()  # a sync tick with a message pending: one evaluation of the 3 x 2 ordered pairs
    assert len(calls) == 6
    assert [b.msg for b in sim.robot_state(1).incoming_broadcast_msgs] == ["hi"]
    np.testing.assert_array_equal(sim.slam_maps[0], sim.slam_maps[2])  # merged via the links
