"""Tests for maes_sim.core.world.cave (MAES-style cellular-automaton caves)."""

from __future__ import annotations

from dataclasses import dataclass, replace
from types import SimpleNamespace

import numpy as np
import pytest

from maes_sim.core.world import MapError, generate_cave, label_regions


@dataclass(frozen=True)
class Cave:
    """Stand-in for the config's CaveConfig (MAES 2.0 default values)."""

    smoothing_runs: int = 4
    connection_passage_width: int = 4
    random_fill_percent: float = 40
    wall_threshold_size: int = 10
    room_threshold_size: int = 10


def make(width: int = 50, height: int = 50, border: int = 1, seed: int = 0, **changes: object):
    return generate_cave(
        width, height, border, replace(Cave(), **changes), np.random.default_rng(seed)
    )


def mean_over_seeds(fn, seeds=range(6)) -> float:
    return float(np.mean([fn(s) for s in seeds]))


@pytest.mark.parametrize(
    ("width", "height", "fill", "passage"),
    [(20, 20, 40, 4), (50, 30, 47, 1), (31, 57, 50, 0), (75, 75, 45, 2)],
)
def test_every_open_tile_reachable(width: int, height: int, fill: int, passage: int) -> None:
    for seed in range(8):
        world = make(
            width, height, seed=seed, random_fill_percent=fill, connection_passage_width=passage
        )
        assert world.shape == (height, width)
        assert world.walls.dtype == np.bool_
        _, sizes = label_regions(world.open_tiles)
        assert sizes.size == 1, f"seed {seed}: {sizes.size} separate open regions"
        assert world.open_count >= 10


def test_large_map_is_connected() -> None:
    world = make(300, 300, seed=5)
    assert world.shape == (300, 300)
    assert label_regions(world.open_tiles)[1].size == 1


@pytest.mark.parametrize("border", [0, 1, 3])
def test_border_is_wall(border: int) -> None:
    world = make(40, 30, border=border, seed=2)
    walls = world.walls
    if border:
        assert walls[:border].all() and walls[-border:].all()
        assert walls[:, :border].all() and walls[:, -border:].all()
    # Inside the border the interior's own edge ring starts as wall but may open up; the map
    # still has room.
    assert world.open_count > 0.2 * (40 - 2 * border) * (30 - 2 * border)


def test_same_seed_same_map_and_rooms() -> None:
    a, b = make(seed=11), make(seed=11)
    np.testing.assert_array_equal(a.walls, b.walls)
    assert len(a.rooms) == len(b.rooms)
    for ra, rb in zip(a.rooms, b.rooms, strict=True):
        np.testing.assert_array_equal(ra, rb)
    assert not np.array_equal(a.walls, make(seed=12).walls)


def test_rooms_are_disjoint_open_and_largest_first() -> None:
    world = make(60, 60, seed=3, random_fill_percent=50)
    sizes = [int(r.sum()) for r in world.rooms]
    assert sizes == sorted(sizes, reverse=True)
    total = np.zeros(world.shape, dtype=int)
    for room in world.rooms:
        assert not (room & world.walls).any()
        total += room
    assert total.max() == 1


def test_more_fill_means_more_wall() -> None:
    fractions = [
        mean_over_seeds(lambda s, f=fill: make(seed=s, random_fill_percent=f).walls.mean())
        for fill in (30, 40, 50)
    ]
    assert fractions[0] < fractions[1] < fractions[2]


def test_more_smoothing_means_smoother_walls() -> None:
    def roughness(runs: int) -> float:
        def one(seed: int) -> float:
            walls = make(60, 60, seed=seed, smoothing_runs=runs, random_fill_percent=45).walls
            edges = (walls[1:] != walls[:-1]).sum() + (walls[:, 1:] != walls[:, :-1]).sum()
            return edges / (~walls).sum()

        return mean_over_seeds(one)

    assert roughness(1) > roughness(3) > roughness(8)


def test_wall_threshold_removes_small_wall_islands() -> None:
    def wall_regions(threshold: int) -> float:
        return mean_over_seeds(
            lambda s: label_regions(make(seed=s, wall_threshold_size=threshold).walls)[1].size
        )

    assert wall_regions(0) > wall_regions(100)


def test_room_threshold_removes_small_rooms() -> None:
    def rooms(threshold: int) -> float:
        return mean_over_seeds(
            lambda s: len(
                make(60, 60, seed=s, random_fill_percent=50, room_threshold_size=threshold).rooms
            )
        )

    assert rooms(0) > rooms(100)
    for seed in range(4):
        world = make(60, 60, seed=seed, random_fill_percent=50, room_threshold_size=40)
        # The main room is kept whatever its size; every other surviving room meets the threshold.
        assert all(int(r.sum()) >= 40 for r in world.rooms[1:])


def test_wider_passages_open_more_tiles() -> None:
    def open_tiles(width: int) -> float:
        return mean_over_seeds(
            lambda s: (
                make(seed=s, random_fill_percent=50, connection_passage_width=width).open_count
            )
        )

    assert open_tiles(0) < open_tiles(3) < open_tiles(6)


def test_zero_fill_is_one_open_cave() -> None:
    world = make(30, 20, seed=0, random_fill_percent=0)
    # Only the interior's edge ring starts as wall and the smoothing keeps its corners.
    assert world.open_count > 0.8 * 28 * 18


def test_full_fill_is_an_error_naming_the_setting() -> None:
    with pytest.raises(MapError, match="random_fill_percent=100"):
        make(30, 30, random_fill_percent=100)


def test_accepts_any_object_with_the_settings() -> None:
    cfg = SimpleNamespace(
        smoothing_runs=3,
        connection_passage_width=2,
        random_fill_percent=45.5,
        wall_threshold_size=5,
        room_threshold_size=5,
    )
    world = generate_cave(25, 25, 2, cfg, np.random.default_rng(0))
    assert world.name == "cave" and world.hallways == ()


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"smoothing_runs": -1}, "cave_config.smoothing_runs must be >= 0, got -1"),
        ({"random_fill_percent": 101}, "cave_config.random_fill_percent"),
        (
            {"connection_passage_width": 1.5},
            "cave_config.connection_passage_width must be an integer",
        ),
        ({"wall_threshold_size": True}, "cave_config.wall_threshold_size must be an integer"),
    ],
)
def test_bad_settings_are_named(changes: dict, message: str) -> None:
    with pytest.raises(MapError, match=message):
        make(30, 30, **changes)


def test_missing_setting_and_bad_sizes() -> None:
    cfg = SimpleNamespace(smoothing_runs=4, connection_passage_width=4, random_fill_percent=40)
    with pytest.raises(MapError, match="'wall_threshold_size'"):
        generate_cave(30, 30, 1, cfg, np.random.default_rng(0))
    with pytest.raises(MapError, match="interior of 2x10"):
        make(10, 18, border=4)
    with pytest.raises(MapError, match="border_size must be >= 0"):
        make(30, 30, border=-1)
    with pytest.raises(TypeError, match="Generator"):
        generate_cave(30, 30, 1, Cave(), 42)
