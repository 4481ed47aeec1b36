"""Moving obstacles (config ``obstacles``): the config form and its errors, paths at their
speed, rays stopped where an obstacle is (and only then), no trace in the SLAM maps, robots
colliding with them, random walkers staying in free space, bit-identical runs per seed."""

from __future__ import annotations

import math

import numpy as np
import pytest

from maes_sim.core import (
    CommandRejected,
    ConfigError,
    Simulation,
    WorldMap,
    config_from_dict,
    config_to_dict,
)
from maes_sim.core.collision import wall_penetration
from maes_sim.core.kernels import ray_angle_offsets, ray_directions
from maes_sim.core.obstacles import check_paths, stop_rays_at_obstacles

# A 20 x 20 room (world x, y from -10 to 10; 1 m tiles): open inside a one-tile border.
ROOM = np.zeros((20, 20), dtype=bool)
ROOM[0, :] = ROOM[-1, :] = ROOM[:, 0] = ROOM[:, -1] = True

ISSUE_FORM = [  # the issue's form, as written there
    {
        "shape": "disc",
        "radius": 0.5,
        "path": [[2.0, 0.0], [2.0, 4.0]],
        "speed": 0.8,
        "mode": "bounce",
    },
    {"random_walkers": 3, "radius": 0.4, "speed": 0.5},
]


def _sim(obstacles, n=1, walls=ROOM, **extra) -> Simulation:
    cfg = config_from_dict({"number_of_robots": n, "obstacles": obstacles, **extra})
    return Simulation(cfg, world=WorldMap(walls=walls.copy(), name="room"))


def _east_ray(sim: Simulation) -> int:
    """Index of the ray along the robot's heading."""
    rays, fov = sim.lidar_geometry(0)
    return int(np.argmin(np.abs(ray_angle_offsets(rays, fov))))


# ------------------------------------------------------------------------------ config


def test_the_issue_form_loads_and_round_trips():
    cfg = config_from_dict({"number_of_robots": 2, "obstacles": ISSUE_FORM})
    disc, walkers = cfg.obstacles
    assert (disc.shape, disc.radius, disc.path, disc.speed, disc.mode) == (
        "disc",
        0.5,
        ((2.0, 0.0), (2.0, 4.0)),
        0.8,
        "bounce",
    )
    assert (walkers.count, walkers.radius, walkers.speed) == (3, 0.4, 0.5)
    box = {"shape": "box", "size": [1.0, 2.0], "path": [[0, 0]], "speed": 0}
    cfg2 = config_from_dict({"obstacles": [*ISSUE_FORM, box]})
    assert cfg2.obstacles[2].size == (1.0, 2.0) and cfg2.obstacles[2].mode == "loop"
    assert config_from_dict(config_to_dict(cfg2)) == cfg2


DISC = {"shape": "disc", "radius": 0.5, "path": [[0, 0], [2, 0]], "speed": 1.0}


@pytest.mark.parametrize(
    ("entry", "key", "fragment"),
    [
        ({**DISC, "radius": -0.5}, "obstacles[0].radius", "> 0"),
        ({**DISC, "speed": -1.0}, "obstacles[0].speed", "from 0"),
        ({**DISC, "mode": "pingpong"}, "obstacles[0].mode", "'loop', 'bounce'"),
        ({**DISC, "shape": "triangle"}, "obstacles[0].shape", "'disc', 'box'"),
        ({**DISC, "size": [1, 1]}, "obstacles[0].size", "a disc has a radius"),
        ({k: v for k, v in DISC.items() if k != "radius"}, "obstacles[0].radius", "missing"),
        ({**DISC, "path": [[0, 0], [1]]}, "obstacles[0].path[1]", "[x, y]"),
        ({**DISC, "path": []}, "obstacles[0].path", "list of waypoints"),
        ({**DISC, "colour": "red"}, "obstacles[0].colour", "unknown key"),
        ({"random_walkers": 0, "radius": 0.3, "speed": 1}, "obstacles[0].random_walkers", "1"),
        ({"random_walkers": 2, "radius": -1, "speed": 1}, "obstacles[0].radius", "> 0"),
    ],
)
def test_bad_entries_are_named_errors(entry, key, fragment):
    with pytest.raises(ConfigError) as err:
        config_from_dict({"obstacles": [entry]})
    assert err.value.key == key and fragment in str(err.value), str(err.value)


@pytest.mark.parametrize(
    ("path", "mode", "key", "fragment"),
    [
        ([[0, 0], [30, 0]], "bounce", "obstacles[0].path[1]", "off the map"),
        ([[0, 0], [-9.5, 0]], "bounce", "obstacles[0].path[1]", "inside a wall"),
        ([[-2, 3.5], [2, 3.5]], "bounce", "obstacles[0].path[0]", "crosses a wall"),
        # the loop's way back from (2, 3.5) to (-2, 3.5) crosses the pillar; bounce never does
        ([[-2, 3.5], [-2, 5], [2, 5], [2, 3.5]], "loop", "obstacles[0].path[3]", "way back"),
    ],
)
def test_paths_that_do_not_fit_the_map_are_named_errors(path, mode, key, fragment):
    walls = ROOM.copy()
    walls[13, 10] = True  # a pillar at world x 0..1, y 3..4
    entry = {**DISC, "path": path, "mode": mode}
    with pytest.raises(ConfigError) as err:
        _sim([entry], walls=walls)
    assert err.value.key == key and fragment in str(err.value), str(err.value)
    if mode == "loop":  # the same waypoints bouncing are fine
        _sim([{**entry, "mode": "bounce"}], walls=walls)
    spec = config_from_dict({"obstacles": [entry]}).obstacles
    with pytest.raises(ConfigError):  # the same check, called directly
        check_paths(spec, walls, np.array([10.0, 10.0]), 1.0)


def test_the_batched_simulation_refuses_obstacles():
    from maes_sim.core import BatchedSimulation

    with pytest.raises(ValueError, match="no moving obstacles"):
        BatchedSimulation(config_from_dict({"obstacles": ISSUE_FORM}), seeds=[0])


def test_no_room_for_walkers_is_a_named_error():
    with pytest.raises(ConfigError, match="no free place") as err:
        _sim([{"random_walkers": 5, "radius": 8.0, "speed": 1.0}])
    assert err.value.key == "obstacles[0].random_walkers"


def test_a_path_that_starts_on_a_robot_is_a_named_error():
    spawn = {"spawn_together": {"suggested_starting_point_x": 0, "suggested_starting_point_y": 0}}
    box = {"shape": "box", "size": [1.0, 1.0], "speed": 0.5}
    walker = {"random_walkers": 1, "radius": 0.3, "speed": 0.5}
    with pytest.raises(ConfigError, match="starts on robot 0's spawn position") as err:
        _sim([walker, {**box, "path": [[0.0, 0.0], [2.0, 0.0]]}], robot_spawn_config=spawn)
    assert err.value.key == "obstacles[1].path[0]"
    sim = _sim([walker, {**box, "path": [[5.0, 5.0], [5.0, 7.0]]}], robot_spawn_config=spawn)
    assert len(sim.obstacles) == 2  # clear of the robots: fine


# ------------------------------------------------------------------------------ motion


@pytest.mark.parametrize("mode", ["loop", "bounce"])
def test_paths_follow_the_waypoints_at_the_given_speed(mode):
    # 1 m/s with 0.1 s ticks: 0.1 m per tick around a 4 m x 2 m rectangle (12 m long)
    path = [[-2, -1], [2, -1], [2, 1], [-2, 1]]
    sim = _sim([{**DISC, "path": path, "speed": 1.0, "mode": mode}])
    off = np.array([10.0, 10.0])
    seen = {}
    for _ in range(200):
        sim.step()
        seen[sim.tick] = sim.obstacles.positions[0] - off
    expect_loop = {20: (0, -1), 40: (2, -1), 50: (2, 0), 80: (0, 1), 110: (-2, 0), 120: (-2, -1)}
    # bounce: out along the open path (10 m) and straight back
    expect_bounce = {20: (0, -1), 50: (2, 0), 80: (0, 1), 100: (-2, 1), 120: (0, 1), 150: (2, 0)}
    for tick, xy in (expect_loop if mode == "loop" else expect_bounce).items():
        np.testing.assert_allclose(seen[tick], xy, atol=1e-9, err_msg=f"tick {tick}")
    # the speed: 0.1 m per tick, except across a corner (shorter chord) or a turn
    steps = np.hypot(*np.diff(np.array([seen[t] for t in sorted(seen)]), axis=0).T)
    assert np.isclose(steps, 0.1, atol=1e-9).mean() > 0.9 and steps.max() <= 0.1 + 1e-9


def test_random_walkers_stay_in_free_space_and_move():
    sim = _sim([{"random_walkers": 6, "radius": 0.4, "speed": 2.0}], n=2)
    reach = sim.metrics.reachable
    start = sim.obstacles.positions
    for _ in range(300):
        sim.step()
        pos = sim.obstacles.positions
        assert (wall_penetration(sim.walls, pos, 0.4) == 0.0).all(), sim.tick
        assert reach[pos[:, 1].astype(int), pos[:, 0].astype(int)].all()
    assert (np.hypot(*(sim.obstacles.positions - start).T) > 1.0).all()


def test_same_seed_is_bit_identical_and_no_obstacles_draw_nothing():
    def run(seed, obstacles):
        cfg = config_from_dict(
            {"number_of_robots": 4, "random_seeds": [seed], "obstacles": obstacles}
        )
        sim = Simulation(cfg, world=WorldMap(walls=ROOM.copy(), name="room"))
        sim.set_velocities(np.full(4, 1.0), np.array([0.0, 0.5, -0.5, 1.0]))
        for _ in range(60):
            sim.step()
        return sim

    a, b, c = run(3, ISSUE_FORM), run(3, ISSUE_FORM), run(4, ISSUE_FORM)
    assert np.array_equal(a.obstacles.shapes, b.obstacles.shapes)
    assert np.array_equal(a.poses, b.poses) and np.array_equal(a.lidar_ranges, b.lidar_ranges)
    assert np.array_equal(a.slam_maps, b.slam_maps) and a.snapshots == b.snapshots
    assert not np.array_equal(a.obstacles.shapes, c.obstacles.shapes)
    # a snapshot carries the obstacles (and the walkers' headings): the run goes on the same
    saved = a.snapshot()
    a.run(max_ticks=20)
    after = a.obstacles.shapes.copy()
    a.restore(saved)
    a.run(max_ticks=20)
    assert np.array_equal(a.obstacles.shapes, after)
    # an empty list is no obstacles: the generator is not touched
    plain, empty = run(3, None), run(3, [])
    assert empty.obstacles is None
    assert np.array_equal(plain.poses, empty.poses)
    assert plain.rng.bit_generator.state == empty.rng.bit_generator.state


# ------------------------------------------------------------------------------ rays, SLAM


def test_a_passing_obstacle_shortens_the_rays_only_while_it_is_there_and_leaves_no_slam_trace():
    # robot at (-5, 0) facing east; a 0.5 m disc goes north along x = -2 from y = -6 at 1 m/s:
    # it crosses the east ray around tick 60 and is gone by tick 80.
    passing = [{"shape": "disc", "radius": 0.5, "path": [[-2, -6], [-2, 6]], "speed": 1.0}]
    sims = [_sim(passing), _sim([])]
    for sim in sims:
        sim.place_robots(np.array([[-5.0, 0.0, 0.0]]))
    with_obstacle, without = sims
    east = _east_ray(with_obstacle)
    rays, fov = with_obstacle.lidar_geometry(0)
    offsets = ray_angle_offsets(rays, fov)
    low = (offsets <= 0.0) & (offsets >= -math.pi / 2)  # east to south: y <= 0 all along
    for tick in range(1, 101):
        for sim in sims:
            sim.step()
        ranges, hits = with_obstacle.lidar_of(0)
        plain, _ = without.lidar_of(0)
        if tick == 60:  # the disc's centre is on the ray: 3 m ahead less its radius
            assert math.isclose(ranges[east], 2.5, abs_tol=1e-9) and hits[east]
        if tick >= 70:  # gone north (its lowest point above y = 0.5): those rays are clear
            assert np.array_equal(ranges[low], plain[low]), tick
        # the SLAM maps and the exploration never see the obstacle
        assert np.array_equal(with_obstacle.slam_maps, without.slam_maps), tick
        assert with_obstacle.exploration_percent == without.exploration_percent
    assert with_obstacle.metrics.reachable.sum() == without.metrics.reachable.sum()


def test_stop_rays_at_obstacles_inside_and_behind():
    shapes = np.array([[0.0, 5.0, 5.0, 1.0, 1.0]])
    ranges = np.full((2, 4), 3.0)
    r, h = stop_rays_at_obstacles(
        ranges, np.zeros((2, 4), bool), np.array([[5.2, 5.0], [1.0, 5.0]]), np.zeros(2), shapes
    )
    assert (r[0] == 0.0).all() and h[0].all()  # a ray starting inside an obstacle stops at once
    assert r[1].tolist() == [3.0, 3.0, 3.0, 3.0]  # the disc is 3 m east: exactly the range's end
    # a box (x 4..6, y 4.5..5.5) seen along and beside its axes, and diagonally at its corner
    box = np.array([[1.0, 5.0, 5.0, 1.0, 0.5]])
    origins = np.array([[1.0, 5.0], [1.0, 5.6], [3.0, 3.5]])
    r, h = stop_rays_at_obstacles(
        np.full((3, 4), 9.0),
        np.zeros((3, 4), bool),
        origins,
        np.array([0.0, 0.0, math.pi / 4]),
        box,
    )
    assert r[0].tolist() == [9.0, 9.0, 3.0, 9.0] and h[0].tolist() == [False, False, True, False]
    assert r[1].tolist() == [9.0] * 4 and not h[1].any()  # 0.1 m above its top: all clear
    assert math.isclose(r[2, 2], math.sqrt(2.0), rel_tol=1e-12)  # to the corner (4, 4.5)


def _reference_cut(ranges, origins, headings, shapes):
    """The ray cut in plain numpy (all rays, all obstacles), to check the compiled kernel."""
    out = ranges.copy()
    d = ray_directions(headings, ranges.shape[1])
    o = origins[:, None, :]
    for kind, cx, cy, a, b in shapes.tolist():
        rel = o - (cx, cy)
        if kind == 0:
            proj = (rel * d).sum(-1)
            inside = np.broadcast_to((rel * rel).sum(-1) - a * a, proj.shape)
            disc = proj * proj - inside
            with np.errstate(invalid="ignore"):
                t = np.where(inside <= 0, 0.0, -proj - np.sqrt(disc))
            meets = (inside <= 0) | ((disc >= 0) & (proj < 0))
        else:
            near, far = np.full(out.shape, -np.inf), np.full(out.shape, np.inf)
            for axis, half in ((0, a), (1, b)):
                lo, hi, u = -half - rel[..., axis], half - rel[..., axis], d[..., axis]
                with np.errstate(divide="ignore", invalid="ignore"):
                    t1, t2 = lo / u, hi / u
                inside = (lo <= 0) & (hi >= 0)
                flat = u == 0
                near = np.maximum(
                    near, np.where(flat, np.where(inside, -np.inf, np.inf), np.minimum(t1, t2))
                )
                far = np.minimum(
                    far, np.where(flat, np.where(inside, np.inf, -np.inf), np.maximum(t1, t2))
                )
            meets, t = (near <= far) & (far >= 0), np.maximum(near, 0.0)
        cut = meets & (t < out)
        out[cut] = t[cut]
    return out


def test_the_compiled_ray_cut_equals_a_plain_numpy_one():
    rng = np.random.default_rng(5)
    origins = rng.uniform(0, 20, (60, 2))
    heads = rng.uniform(-np.pi, np.pi, 60)
    shapes = np.column_stack(
        [rng.integers(0, 2, 12), rng.uniform(0, 20, (12, 2)), rng.uniform(0.2, 2.0, (12, 2))]
    ).astype(float)
    shapes[shapes[:, 0] == 0, 4] = shapes[shapes[:, 0] == 0, 3]
    ranges = np.full((60, 90), 7.0)
    got, hits = stop_rays_at_obstacles(ranges, np.zeros((60, 90), bool), origins, heads, shapes)
    want = _reference_cut(ranges, origins, heads, shapes)
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
    assert (hits == (want < 7.0)).all() and 0 < hits.mean() < 0.9


# ------------------------------------------------------------------------------ collisions


def test_a_robot_driving_into_an_obstacle_collides_and_stops_at_it():
    box = {"shape": "box", "size": [1.0, 2.0], "path": [[0.5, 0.0]], "speed": 0.0}
    away = {"spawn_together": {"suggested_starting_point_x": -4, "suggested_starting_point_y": 0}}
    sim = _sim([box], robot_spawn_config=away)  # (spawned on the box: a ConfigError)
    sim.place_robots(np.array([[-4.0, 0.0, 0.0]]))
    sim.move_continuous(0)
    for _ in range(40):
        sim.step()
    r = sim.radius
    assert sim.poses[0, 0] <= 0.0 - r + 1e-6 and sim.poses[0, 0] > -0.5  # against the box
    assert sim.metrics.collisions[0] == 1 and sim.colliding[0]
    with pytest.raises(CommandRejected, match="robot 0 at .* would overlap a moving obstacle"):
        sim.place_robots(np.array([[-0.2, 0.0, 0.0]]))  # 0.3 m robot, the box starts at x = 0
    sim.place_robots(np.array([[-0.31, 0.0, 0.0]]))  # clear of it: fine


def test_an_obstacle_running_into_a_robot_pushes_it_and_counts_a_collision():
    sweeping = [{"shape": "disc", "radius": 0.5, "path": [[-6, 0], [6, 0]], "speed": 2.0}]
    sim = _sim(sweeping, n=1)
    sim.place_robots(np.array([[0.0, 0.5, 0.0]]))  # in the disc's way, off its centre line
    for _ in range(50):
        sim.step()
    assert sim.metrics.collisions[0] >= 1
    # pushed aside (north) to the disc's edge as it went by (0.8 m from its path), not run
    # through: the disc moves 0.2 m a tick, so the last push was from a little off x = 0
    assert 0.79 <= sim.poses[0, 1] <= 0.8 + 1e-9 and abs(sim.poses[0, 0]) < 0.5


def test_the_docs_example_loads_and_fits_the_default_map():
    import re
    from pathlib import Path

    import yaml

    page = Path(__file__).resolve().parents[4] / "docs" / "obstacles.md"
    block = re.search(r"```yaml\n(.*?)```", page.read_text(), re.S).group(1)
    sim = Simulation(config_from_dict(yaml.safe_load(block)))
    assert len(sim.obstacles) == 5  # a disc, a box, three walkers
