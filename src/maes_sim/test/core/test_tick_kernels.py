"""The simulator's per-tick compiled calls equal the functions they fuse, to the bit.

:mod:`maes_sim.core.kernels.tick` runs in two calls what the step once ran in seven, and
:class:`~maes_sim.core.motion.MotionStepper` advances the simulator's own state in place where
:func:`~maes_sim.core.motion.advance_tick` copies it: each is held here to the functions it
replaces, on crowded scenarios with collisions, moving obstacles, every motion model and noise.
"""

from __future__ import annotations

import numpy as np
import pytest

from maes_sim.core import commands as C
from maes_sim.core.kernels.raycast import cast_rays_checked, ray_fan
from maes_sim.core.kernels.tick import compiled_entry, cos_sin, move_kernel, sense_kernel
from maes_sim.core.metrics import Metrics
from maes_sim.core.motion import (
    MotionParams,
    MotionState,
    MotionStepper,
    advance_tick,
    no_obstacles,
)
from maes_sim.core.odometry import advance_odometry, draw_scales
from maes_sim.core.stalls import asks_motion

MODELS = ["maes", "differential_drive", "omnidirectional"]


def test_the_kernels_cosine_and_sine_are_numpys():
    # the premise of computing in the kernels what the step took from numpy (kernels/tick.py)
    rng = np.random.default_rng(0)
    angles = np.concatenate(
        [
            rng.uniform(-np.pi, np.pi, 100_000),
            rng.normal(0.0, 1e-3, 10_000),
            rng.uniform(-1e4, 1e4, 10_000),
            np.linspace(-4 * np.pi, 4 * np.pi, 4001),
        ]
    )
    c, s = np.empty_like(angles), np.empty_like(angles)
    cos_sin(angles, c, s)
    assert np.array_equal(c, np.cos(angles)) and np.array_equal(s, np.sin(angles))
    strided = np.empty((angles.size, 2))  # as the lidar's rotations are filled
    cos_sin(angles, strided[:, 0], strided[:, 1])
    assert np.array_equal(strided[:, 0], c) and np.array_equal(strided[:, 1], s)


#: a disc and a box standing in the field (rows kind, x, y, a, b)
OBSTACLES = np.array([[0.0, 10.5, 10.5, 0.6, 0.0], [1.0, 20.0, 6.0, 1.0, 0.5]])


def scenario(seed: int, n: int = 40):
    """Walls, robots at rest on open tiles and a mix of every command kind."""
    rng = np.random.default_rng(seed)
    walls = rng.random((30, 30)) < 0.15
    iy, ix = np.nonzero(~walls)
    pick = rng.choice(len(ix), n, replace=False)
    state = MotionState.at_rest(
        np.stack([ix[pick] + 0.5, iy[pick] + 0.5], 1), rng.uniform(-3, 3, n)
    )
    cmds = C.Commands.idle(n)
    C.move_continuous(cmds, np.arange(0, n, 5))
    C.move(cmds, np.arange(1, n, 5), rng.uniform(-3, 3, len(range(1, n, 5))))
    C.rotate(cmds, np.arange(2, n, 5), rng.uniform(-3, 3, len(range(2, n, 5))))
    k = np.arange(3, n, 5)
    C.set_velocity(cmds, k, rng.uniform(-3, 3, k.size), rng.uniform(-3, 3, k.size), 1.0)
    return walls, state, cmds


def own_copy(state: MotionState) -> MotionState:
    return MotionState._unchecked(*(a.copy() for a in state.arrays()[:4]), state.pressing.copy(),
                                  state.lateral.copy())  # fmt: skip


@pytest.mark.parametrize("model", MODELS)
def test_the_stepper_advances_in_place_as_advance_tick_does(model):
    params = MotionParams.from_values(model=model)
    walls, state, cmds = scenario(1)
    mine, my_cmds = own_copy(state), cmds.copy()
    stepper = MotionStepper(params, state.n)
    contacts = 0
    for _ in range(40):
        res = advance_tick(state, cmds, walls, params, OBSTACLES)
        contacts += int(res.collided.sum())
        colliding, collided, status = stepper.advance(mine, my_cmds, walls, OBSTACLES)
        state, cmds = res.state, res.commands
        for a, b in zip(state.arrays(), mine.arrays(), strict=True):
            assert np.array_equal(a, b)
        for a, b in zip(cmds.arrays(), my_cmds.arrays(), strict=True):
            assert np.array_equal(a, b)
        assert np.array_equal(colliding, res.colliding)
        assert np.array_equal(collided, res.collided) and np.array_equal(status, res.status)
    assert contacts > 0  # the scenario does exercise collisions


@pytest.mark.parametrize("model", MODELS)
def test_move_kernel_books_the_tick_as_the_functions_it_fuses(model):
    params = MotionParams.from_values(model=model)
    walls, state, cmds = scenario(2)
    n = state.n
    noise = np.linspace(0.0, 0.1, n)  # per robot, as robot types give them
    est = np.column_stack([state.positions, state.headings])
    distance, collisions = np.zeros(n), np.zeros(n, dtype=np.int64)
    mine, my_cmds, my_est = own_copy(state), cmds.copy(), est.copy()
    my_distance, my_collisions = distance.copy(), collisions.copy()
    stepper = MotionStepper(params, n)
    rng, my_rng = np.random.default_rng(3), np.random.default_rng(3)
    asked = np.empty(n, dtype=np.bool_)
    for _ in range(30):
        want = asks_motion(cmds)
        res = advance_tick(state, cmds, walls, params, OBSTACLES)
        distance += res.distance
        collisions += res.collided
        est = advance_odometry(est, res.odom_delta, noise, noise[::-1], rng)
        state, cmds = res.state, res.commands

        colliding, collided = np.empty(n, dtype=np.bool_), np.empty(n, dtype=np.bool_)
        status = np.empty(n, dtype=np.int8)
        scales = draw_scales(n, noise, noise[::-1], True, my_rng)
        move_kernel(
            walls, no_obstacles(OBSTACLES), *stepper.constants, *mine.arrays(), *my_cmds.arrays(),
            colliding, collided, status, my_distance, my_collisions, my_est, *scales, True, asked,
        )  # fmt: skip
        assert np.array_equal(asked, want)
        assert np.array_equal(mine.positions, state.positions)
        assert np.array_equal(status, res.status) and np.array_equal(collided, res.collided)
        assert np.array_equal(colliding, res.colliding)
        assert np.array_equal(my_distance, distance) and np.array_equal(my_collisions, collisions)
        assert np.array_equal(my_est, est)
    assert collisions.sum() > 0 and rng.bit_generator.state == my_rng.bit_generator.state


@pytest.mark.parametrize("n", [1, 2, 25])  # counted near the robots (1, 2) or afresh (25)
def test_sense_kernel_marks_and_counts_as_the_functions_it_fuses(n):
    walls, state, _ = scenario(4, n=n)
    rng = np.random.default_rng(5)
    reachable = ~walls
    ref, mine = Metrics(reachable, n), Metrics(reachable, n)
    maps = {
        k: np.zeros((n, *walls.shape), np.uint8) for k in ("slam", "seen", "my_slam", "my_seen")
    }
    robots = np.arange(n, dtype=np.int64)
    pos = state.positions
    for tick in range(1, 41):
        head = rng.uniform(-np.pi, np.pi, n)
        fov = None if tick % 2 else 2.0
        slam_due = tick % 3 == 0  # the SLAM maps, then the seen maps in a second pass
        ranges, hit = cast_rays_checked(
            walls, pos, head, 6.0, 90, explored_tick=ref.explored_tick, tick=tick,
            slam=maps["slam" if slam_due else "seen"], slam_index=robots, parallel=False, fov=fov,
        )  # fmt: skip
        ref.mark_covered_and_refresh(pos, 0.3, tick)
        if slam_due:
            cast_rays_checked(
                walls, pos, head, 6.0, 90, explored_tick=None, tick=tick, slam=maps["seen"],
                slam_index=robots, parallel=False, fov=fov,
            )  # fmt: skip
        my_ranges, my_hit = np.empty((n, 90)), np.empty((n, 90), dtype=np.bool_)
        counts = sense_kernel(
            walls, pos, head, ray_fan(90, fov), 6.0, mine.explored_tick, tick,
            maps["my_slam" if slam_due else "my_seen"], robots, robots, my_ranges, my_hit,
            maps["my_seen"], slam_due, mine.covered_tick, mine.mini_covered_tick, reachable, 0.3,
            mine.first_explored_tick, (mine.explored_count, mine.covered_count,
                                       mine.mini_covered_count),
        )  # fmt: skip
        mine.explored_count, mine.covered_count, mine.mini_covered_count = counts
        assert counts == (ref.explored_count, ref.covered_count, ref.mini_covered_count)
        assert np.array_equal(ranges, my_ranges) and np.array_equal(hit, my_hit)
        assert np.array_equal(maps["slam"], maps["my_slam"])
        assert np.array_equal(maps["seen"], maps["my_seen"])
        for name in ("explored_tick", "first_explored_tick", "covered_tick", "mini_covered_tick"):
            assert np.array_equal(getattr(ref, name), getattr(mine, name))
        # wander, staying on the map
        pos = np.clip(pos + rng.uniform(-0.8, 0.8, pos.shape), 0.5, walls.shape[0] - 0.5)
    assert 0 < ref.explored_count < reachable.sum() or n == 25


@pytest.mark.parametrize(
    "extra",
    [
        {},
        {  # noise everywhere, moving obstacles, a lossy late radio, SLAM merging
            "robot_constraints": {"distribute_slam": True, "slam_position_inaccuracy": 0.5},
            "communication": {"model": "bernoulli", "loss_probability": 0.3, "latency_ticks": 1},
            "robot_types": {
                "default": {
                    "lidar": {"range_noise_std": 0.05, "dropout_probability": 0.05},
                    "motion": {"odometry_noise": 0.05, "heading_noise": 0.05},
                }
            },
            "obstacles": [{"random_walkers": 3, "radius": 0.5, "speed": 0.5}],
        },
        {"stack": {"slam": "occupancy"}, "robot_constraints": {"distribute_slam": True}},
    ],
)
def test_one_call_ticks_run_as_the_calls_one_by_one(extra):
    # step_kernel (one lidar, one body size) against move_kernel, the lidar calls and the stall
    # clock one after the other (the path of mixed teams), on the same run
    from maes_sim.core import Simulation, config_from_dict

    cfg = config_from_dict(
        {"number_of_robots": 6, "random_seeds": [4], "robot_spawn_config": {"biggest_room": True}}
        | extra
    )
    one, apart = Simulation(cfg), Simulation(cfg)
    assert one._one_lidar
    apart._one_lidar = False
    rng = np.random.default_rng(1)
    for tick in range(60):
        lin, ang = rng.uniform(-1, 3, 6), rng.uniform(-2, 2, 6)
        for sim in (one, apart):
            sim.set_velocities(lin, ang)
            if tick % 7 == 0:
                sim.broadcast(tick % 6, f"m{tick}")
            sim.step()
        assert np.array_equal(one.poses, apart.poses)
        assert np.array_equal(one.odometry_poses, apart.odometry_poses)
        assert np.array_equal(one.lidar_ranges, apart.lidar_ranges)
        assert np.array_equal(one.slam_maps, apart.slam_maps)
        assert one.stats() == apart.stats()
        assert np.array_equal(one.stalls.since, apart.stalls.since)
        assert one.rng.bit_generator.state == apart.rng.bit_generator.state


@pytest.mark.parametrize(
    "extra",
    [
        {},
        {
            "robot_types": {"default": {"motion": {"odometry_noise": 0.05}}},
            "obstacles": [{"random_walkers": 2, "radius": 0.5, "speed": 0.5}],
        },
        {"stack": {"slam": "occupancy"}},
    ],
)
def test_the_one_call_entry_is_always_handed_the_types_it_was_compiled_for(extra, monkeypatch):
    # compiled_entry's entry does not check its arguments: every tick must hand it the types it
    # was made for, also after robots are placed by hand and after a snapshot is restored
    from maes_sim.core import Simulation, config_from_dict
    from maes_sim.core import simulation as simulation_module

    made = []

    def checked_entry(kernel, args):
        types = tuple(kernel.typeof_pyval(a) for a in args)
        entry = compiled_entry(kernel, args)
        made.append(types)

        def call(*a):
            assert tuple(kernel.typeof_pyval(x) for x in a) == types
            return entry(*a)

        return call

    monkeypatch.setattr(simulation_module, "compiled_entry", checked_entry)
    cfg = config_from_dict({"number_of_robots": 3, "random_seeds": [5]} | extra)
    sim = Simulation(cfg)
    rng = np.random.default_rng(2)
    saved = None
    for tick in range(45):
        sim.set_velocities(rng.uniform(0, 2, 3), rng.uniform(-1, 1, 3))
        if tick == 10:
            saved = sim.snapshot()
        if tick == 20:
            sim.place_robots(sim.poses)
        if tick == 30:
            sim.restore(saved)
        if tick % 4 == 0:
            sim.broadcast(tick % 3, "hi")
            sim.deposit_tag(tick % 3, "here")
        sim.step()
    assert len(made) == 3  # the first tick, after place_robots, after restore
