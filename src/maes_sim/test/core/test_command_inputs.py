"""Bad arguments to the Simulation command API: CommandRejected naming the argument, no change.

numpy turns many non-numbers into numbers (``'1.0'``, ``True``, a complex's real part); the
command API must not.
"""

from __future__ import annotations

import numpy as np
import pytest

from maes_sim.core import CommandRejected, SimConfig, Simulation, WorldMap


def _sim(n: int = 2) -> Simulation:
    walls = np.zeros((12, 20), dtype=bool)
    walls[0, :] = walls[-1, :] = walls[:, 0] = walls[:, -1] = True
    walls[6, 10] = True  # a pillar (world x 0..1, y 0..1)
    return Simulation(SimConfig(number_of_robots=n), world=WorldMap(walls=walls, name="room"))


def _state(sim: Simulation) -> tuple:
    c = sim._commands  # the held commands: a refused command must leave them as they were
    return (c.kind.copy(), c.target.copy(), c.linear.copy(), c.angular.copy(), sim.poses.copy())


def _same(a: tuple, b: tuple) -> bool:
    return all(np.array_equal(x, y) for x, y in zip(a, b, strict=True))


BAD_NUMBERS = [
    "1.0",
    True,
    np.True_,
    1 + 2j,
    {"x": 1},
    None,
    [1.0, "a"],
    [[1.0], [2.0, 3.0]],
    b"1",
    10**400,
    object(),
]


@pytest.mark.parametrize("value", BAD_NUMBERS, ids=lambda v: type(v).__name__ + repr(v)[:12])
@pytest.mark.parametrize(
    ("method", "argument"),
    [("move", "distance"), ("rotate", "angle"), ("set_velocity", "linear")],
)
def test_non_numbers_are_refused_naming_the_argument(method, argument, value):
    sim = _sim()
    sim.set_velocity(1, 0.5, 0.0)
    before = _state(sim)
    args = (value, 0.0) if method == "set_velocity" else (value,)
    with pytest.raises(CommandRejected, match=f"^{argument} must be a real number"):
        getattr(sim, method)(0, *args)
    assert _same(before, _state(sim))


def test_numbers_of_any_numpy_type_are_taken():
    sim = _sim()
    sim.move(0, np.float32(1.5))
    sim.rotate(1, np.int16(2))
    sim.set_velocity(np.int64(0), 3, np.float64(0.0))
    sim.set_velocities(np.array([0.5, 0.25]), [0, 0])


def test_wrongly_shaped_arrays_are_refused():
    sim = _sim()
    before = _state(sim)
    with pytest.raises(CommandRejected, match=r"linear must have shape \(2,\), got shape \(2, 1\)"):
        sim.set_velocities(np.zeros((2, 1)), np.zeros(2))
    with pytest.raises(CommandRejected, match=r"angular must have shape \(2,\), got shape \(3,\)"):
        sim.set_velocities(np.zeros(2), np.zeros(3))
    assert _same(before, _state(sim))


@pytest.mark.parametrize("robot", [True, 1.0, "0", None, {"r": 0}, [0.5], 2**70, -1, 2])
def test_bad_robot_indices_are_refused(robot):
    sim = _sim()
    before = _state(sim)
    with pytest.raises(CommandRejected, match="robot ind"):
        sim.move(robot, 1.0)
    with pytest.raises(CommandRejected, match="robot ind"):
        sim.broadcast(robot, "hi")
    assert _same(before, _state(sim))


@pytest.mark.parametrize("flag", ["no", 0, 1, None, np.array([True, False])])
def test_flags_must_be_booleans(flag):
    sim = _sim()
    with pytest.raises(CommandRejected, match="reverse must be True or False"):
        sim.move_continuous(0, reverse=flag)
    with pytest.raises(CommandRejected, match="counter_clockwise must be True or False"):
        sim.rotate_continuous(0, counter_clockwise=flag)


def test_lone_surrogate_and_huge_texts_are_refused_with_short_messages():
    sim = _sim()
    with pytest.raises(CommandRejected, match="lone surrogate at character 3"):
        sim.broadcast(0, "abc\ud800def")
    with pytest.raises(CommandRejected, match="lone surrogate"):
        sim.deposit_tag(0, "\udfff")
    huge = "x" * 2_000_000
    for call in (sim.broadcast, sim.deposit_tag):
        with pytest.raises(CommandRejected) as info:
            call(0, huge)
        assert len(str(info.value)) < 200 and "2000000 bytes" in str(info.value)
    with pytest.raises(CommandRejected) as info:
        sim.move(0, [huge])
    assert len(str(info.value)) < 200


@pytest.mark.parametrize(
    ("xy", "fragment"),
    [
        ((50.0, 0.0), "off the map"),
        ((-1e300, 0.0), "off the map"),
        ((-9.9, 0.0), "off the map"),  # the centre is on the map, the disc is not
        ((0.5, 0.5), "wall"),  # the pillar
        ((-9.5, -5.5), "wall"),  # inside the border
    ],
)
def test_place_robots_refuses_poses_off_the_map_or_in_walls(xy, fragment):
    sim = _sim(1)
    before = _state(sim)
    with pytest.raises(CommandRejected, match=fragment):
        sim.place_robots([[xy[0], xy[1], 0.0]])
    assert _same(before, _state(sim))


@pytest.mark.parametrize(
    "poses",
    [[["1", "2", "0"]], [[1 + 1j, 2, 0]], [[True, 2.0, 0.0]], [[1.0, 2.0]], "pose", {"x": 1}],
)
def test_place_robots_refuses_non_numeric_or_misshaped_poses(poses):
    sim = _sim(1)
    with pytest.raises(CommandRejected, match="poses must"):
        sim.place_robots(poses)
