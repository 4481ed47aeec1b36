"""Tests for maes_sim.core.world.building (MAES-style offices: hallways, rooms, doors)."""

from __future__ import annotations

from dataclasses import dataclass, replace
from types import SimpleNamespace

import numpy as np
import pytest

from maes_sim.core.world import MapError, generate_building, label_regions


@dataclass(frozen=True)
class Building:
    """Stand-in for the config's BuildingConfig (MAES 2.0 default values)."""

    hall_width: int = 4
    max_hall_in_percent: float = 20
    min_room_side_length: int = 6
    door_width: int = 2
    door_padding: int = 2
    room_split_chance: float = 85


def make(width: int = 60, height: int = 50, border: int = 1, seed: int = 0, **changes: object):
    cfg = replace(Building(), **changes)
    return generate_building(width, height, border, cfg, np.random.default_rng(seed))


def mean_over_seeds(fn, seeds=range(6)) -> float:
    return float(np.mean([fn(s) for s in seeds]))


def bbox(mask: np.ndarray) -> tuple[int, int, int, int]:
    ys, xs = np.nonzero(mask)
    return int(xs.min()), int(ys.min()), int(xs.max()), int(ys.max())


def run_lengths(mask: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Length of the horizontal and vertical runs of True through every tile (0 where False)."""
    out = []
    for m in (mask, mask.T):
        lengths = np.zeros(m.shape, dtype=int)
        for r, row in enumerate(m):
            c = 0
            while c < row.size:
                if row[c]:
                    e = c
                    while e < row.size and row[e]:
                        e += 1
                    lengths[r, c:e] = e - c
                    c = e
                else:
                    c += 1
        out.append(lengths)
    return out[0], out[1].T


@pytest.mark.parametrize(
    ("width", "height", "changes"),
    [
        (20, 20, {}),
        (60, 50, {}),
        (33, 71, {"hall_width": 2, "min_room_side_length": 4}),
        (80, 80, {"room_split_chance": 100, "door_padding": 0, "door_width": 1}),
        (50, 50, {"max_hall_in_percent": 0}),
    ],
)
def test_every_open_tile_reachable(width: int, height: int, changes: dict) -> None:
    for seed in range(8):
        world = make(width, height, seed=seed, **changes)
        assert world.shape == (height, width)
        _, sizes = label_regions(world.open_tiles)
        assert sizes.size == 1, f"seed {seed}: {sizes.size} separate open regions"
        assert len(world.rooms) >= 1


def test_large_map_is_connected() -> None:
    world = make(300, 300, seed=1)
    assert label_regions(world.open_tiles)[1].size == 1
    assert len(world.rooms) > 100


@pytest.mark.parametrize("border", [0, 1, 4])
def test_border_is_wall(border: int) -> None:
    world = make(50, 40, border=border, seed=2)
    b = border + 1  # the interior's outer ring is always wall too (closes the hallway ends)
    assert world.walls[:b].all() and world.walls[-b:].all()
    assert world.walls[:, :b].all() and world.walls[:, -b:].all()


def test_same_seed_same_map() -> None:
    a, b = make(seed=4), make(seed=4)
    np.testing.assert_array_equal(a.walls, b.walls)
    assert [int(r.sum()) for r in a.rooms] == [int(r.sum()) for r in b.rooms]
    for ha, hb in zip(a.hallways, b.hallways, strict=True):
        np.testing.assert_array_equal(ha, hb)
    assert not np.array_equal(a.walls, make(seed=5).walls)


def test_rooms_are_rectangles_no_smaller_than_min_side() -> None:
    for seed in range(6):
        world = make(70, 60, seed=seed, min_room_side_length=5)
        sizes = [int(r.sum()) for r in world.rooms]
        assert sizes == sorted(sizes, reverse=True)
        for room in world.rooms:
            x0, y0, x1, y1 = bbox(room)
            assert room[y0 : y1 + 1, x0 : x1 + 1].all(), "room is not a rectangle"
            assert min(x1 - x0 + 1, y1 - y0 + 1) >= 5
            assert not (room & world.walls).any()
            for hall in world.hallways:
                assert not (room & hall).any()


def test_hallways_have_hall_width() -> None:
    for width in (3, 5):
        world = make(80, 80, seed=0, hall_width=width)
        assert world.hallways
        halls = np.zeros(world.shape, dtype=bool)
        for hall in world.hallways:
            halls |= hall
        across, along = run_lengths(halls)
        thickness = np.minimum(across, along)[halls]
        assert thickness.min() == width


def test_hall_percentage_is_respected() -> None:
    def hall_tiles(percent: float) -> float:
        def one(seed: int) -> int:
            return sum(
                int(h.sum()) for h in make(80, 80, seed=seed, max_hall_in_percent=percent).hallways
            )

        return mean_over_seeds(one)

    assert hall_tiles(0) == 0
    assert hall_tiles(10) < hall_tiles(25)


def test_higher_split_chance_means_more_rooms() -> None:
    def rooms(chance: float) -> float:
        return mean_over_seeds(lambda s: len(make(80, 80, seed=s, room_split_chance=chance).rooms))

    assert rooms(0) < rooms(50) < rooms(100)


def test_doors_have_door_width_and_padding() -> None:
    for seed in range(6):
        world = make(70, 60, seed=seed, door_width=3, door_padding=2, min_room_side_length=8)
        door_tiles = world.open_tiles.copy()
        for mask in world.rooms + world.hallways:
            door_tiles &= ~mask
        assert door_tiles.any()
        for room in world.rooms:
            x0, y0, x1, y1 = bbox(room)
            # Doors in the room's left/right walls, then bottom/top walls.
            for column in (x0 - 1, x1 + 1):
                ys = np.flatnonzero(door_tiles[y0 : y1 + 1, column]) + y0
                assert ys.size % 3 == 0
                assert ys.size == 0 or (ys.min() >= y0 + 2 and ys.max() <= y1 - 2)
            for row in (y0 - 1, y1 + 1):
                xs = np.flatnonzero(door_tiles[row, x0 : x1 + 1]) + x0
                assert xs.size % 3 == 0
                assert xs.size == 0 or (xs.min() >= x0 + 2 and xs.max() <= x1 - 2)


@pytest.mark.parametrize(
    "changes",
    [
        # Doors 4 wide with padding 3 need 10-tile walls; 5-9 tile rooms need the padding dropped.
        {"min_room_side_length": 5, "door_width": 4, "door_padding": 3},
        # Doors 5 wide cannot fit 3-tile walls at all: they shrink to fit.
        {"min_room_side_length": 3, "door_width": 5, "door_padding": 1, "hall_width": 2},
    ],
)
def test_door_fallback_connects_rooms_when_doors_cannot_fit(changes: dict) -> None:
    for seed in range(5):
        world = make(40, 40, seed=seed, **changes)
        assert label_regions(world.open_tiles)[1].size == 1
        assert len(world.rooms) > 1


def test_accepts_any_object_with_the_settings() -> None:
    cfg = SimpleNamespace(
        hall_width=3,
        max_hall_in_percent=15.5,
        min_room_side_length=5.0,  # MAES stores it as a float
        door_width=2,
        door_padding=1,
        room_split_chance=60,
    )
    world = generate_building(45, 45, 1, cfg, np.random.default_rng(0))
    assert world.name == "building"


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"hall_width": 0}, "building_config.hall_width must be >= 1, got 0"),
        ({"door_width": 0}, "building_config.door_width must be >= 1"),
        ({"door_padding": -1}, "building_config.door_padding must be >= 0"),
        ({"room_split_chance": 150}, "building_config.room_split_chance"),
        ({"max_hall_in_percent": float("nan")}, "building_config.max_hall_in_percent"),
        ({"min_room_side_length": 0}, "building_config.min_room_side_length"),
    ],
)
def test_bad_settings_are_named(changes: dict, message: str) -> None:
    with pytest.raises(MapError, match=message):
        make(40, 40, **changes)


def test_missing_setting_and_bad_sizes() -> None:
    cfg = SimpleNamespace(hall_width=3, max_hall_in_percent=20, min_room_side_length=6)
    with pytest.raises(MapError, match="'door_width'"):
        generate_building(40, 40, 1, cfg, np.random.default_rng(0))
    with pytest.raises(MapError, match="interior of 4x4"):
        make(8, 8, border=2)
