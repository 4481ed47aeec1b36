"""Tests for maes_sim.core.world.spawn (MAES spawn modes for disc-shaped robots)."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from maes_sim.core.world import (
    SPAWN_MARGIN,
    MapError,
    WorldMap,
    generate_building,
    generate_cave,
    largest_open_region,
    spawn_positions,
)


def draw(rows: list[str], **fields: object) -> WorldMap:
    """A WorldMap from a picture: '#' wall, '.' open; the first string is the TOP row."""
    walls = np.array([[c == "#" for c in row] for row in rows[::-1]], dtype=bool)
    return WorldMap(walls=walls, **fields)


def box(width: int, height: int) -> WorldMap:
    walls = np.ones((height, width), dtype=bool)
    walls[1:-1, 1:-1] = False
    return WorldMap(walls=walls, name="box")


def assert_valid(world: WorldMap, pos: np.ndarray, radius: float) -> None:
    """Independent brute-force check: no disc overlaps a wall tile or another disc."""
    walls = world.walls
    h, w = walls.shape
    assert pos.dtype == np.float64 and pos.ndim == 2 and pos.shape[1] == 2
    assert np.all((pos >= radius) & (pos <= np.array([w, h]) - radius))
    wy, wx = np.nonzero(walls)
    for gx, gy in pos:
        nearest_x = np.clip(gx, wx, wx + 1)
        nearest_y = np.clip(gy, wy, wy + 1)
        gap = np.hypot(nearest_x - gx, nearest_y - gy)
        assert gap.min(initial=np.inf) >= radius + SPAWN_MARGIN - 1e-9
    if len(pos) > 1:
        d = np.hypot(*(pos[:, None, :] - pos[None, :, :]).transpose(2, 0, 1))
        d[np.diag_indices(len(pos))] = np.inf
        assert d.min() >= 2 * radius + SPAWN_MARGIN - 1e-9


CAVE = SimpleNamespace(
    smoothing_runs=4,
    connection_passage_width=2,
    random_fill_percent=45,
    wall_threshold_size=10,
    room_threshold_size=10,
)
BUILDING = SimpleNamespace(
    hall_width=4,
    max_hall_in_percent=20,
    min_room_side_length=6,
    door_width=2,
    door_padding=2,
    room_split_chance=85,
)


@pytest.mark.parametrize("radius", [0.3, 0.5, 0.8])
def test_default_spawns_together_at_the_centre(radius: float) -> None:
    world = box(20, 16)
    pos = spawn_positions(world, 9, radius, np.random.default_rng(0))
    assert pos.shape == (9, 2)
    assert_valid(world, pos, radius)
    assert np.floor(pos[0]).tolist() == [10.0, 8.0]  # the tile holding the centre first
    # Together: one robot a tile (every second tile for robots wider than 0.95 of a tile),
    # a compact group around the centre.
    stride = 1 if 2 * radius + SPAWN_MARGIN <= 1 else 2
    assert np.linalg.norm(pos - [10.5, 8.5], axis=1).max() <= 2 * stride + 1e-9


def test_together_is_maes_flood_of_one_robot_a_tile() -> None:
    # MAES 2.0's SpawnRobotsTogether: breadth first from the start tile, neighbours left, down,
    # up, right; no robot on a tile next to a wall while others are free.
    world = box(12, 12)  # open tiles 1..10; tiles 2..9 have open tiles all round
    pos = spawn_positions(world, 6, 0.3, np.random.default_rng(0))
    tiles = np.floor(pos).astype(int).tolist()
    assert tiles == [[6, 6], [5, 6], [6, 5], [6, 7], [7, 6], [4, 6]]
    np.testing.assert_array_equal(pos - np.floor(pos), 0.5)  # tile centres
    many = np.floor(spawn_positions(world, 64, 0.3, np.random.default_rng(0))).astype(int)
    assert many.min() == 2 and many.max() == 9  # the 8 x 8 tiles off the walls, all of them
    assert len({tuple(t) for t in many.tolist()}) == 64


def test_together_skips_doorways_and_fills_the_next_room() -> None:
    world = draw(
        [
            "#############",
            "#.....#.....#",
            "#.....#.....#",
            "#...........#",
            "#...........#",
            "#.....#.....#",
            "#.....#.....#",
            "#############",
        ]
    )
    # the left room has 3 x 4 tiles off the walls; the doorway (x = 6) is next to walls
    pos = spawn_positions(world, 16, 0.3, np.random.default_rng(0), together_at=(-3.0, 0.0))
    assert_valid(world, pos, 0.3)
    tiles = np.floor(pos).astype(int)
    assert (tiles[:12, 0] <= 4).all()  # the left room first (x 2..4, y 2..5)
    assert (tiles[12:, 0] >= 8).all()  # then the right room, from its tile nearest the target
    assert not (tiles[:, 0] == 6).any()  # never in the doorway


def test_together_takes_tiles_next_to_walls_when_no_others_are_left() -> None:
    world = box(6, 5)  # 4 x 3 open tiles; two of them, (2, 2) and (3, 2), off the walls
    pos = spawn_positions(world, 12, 0.3, np.random.default_rng(0))
    assert_valid(world, pos, 0.3)
    tiles = [tuple(t) for t in np.floor(pos).astype(int).tolist()]
    assert sorted(tiles[:2]) == [(2, 2), (3, 2)] and len(set(tiles)) == 12


def test_many_robots_on_a_cave() -> None:
    world = generate_cave(50, 50, 1, CAVE, np.random.default_rng(2))
    pos = spawn_positions(world, 200, 0.3, np.random.default_rng(0))
    assert_valid(world, pos, 0.3)
    tiles = np.floor(pos).astype(int)
    assert world.open_tiles[tiles[:, 1], tiles[:, 0]].all()


def test_together_at_a_suggested_point_in_world_tiles() -> None:
    world = box(30, 20)
    pos = spawn_positions(world, 4, 0.3, np.random.default_rng(0), together_at=(-10.0, 5.0))
    target = np.array([-10.0, 5.0]) + [15.0, 10.0]  # world -> grid
    assert_valid(world, pos, 0.3)
    assert np.floor(pos[0]).tolist() == target.tolist()
    assert np.linalg.norm(pos - target, axis=1).max() < 2.0


def test_together_at_a_wall_searches_outward_along_open_tiles() -> None:
    world = draw(
        [
            "##########",
            "#........#",
            "#.######.#",
            "#.#....#.#",
            "#.#....#.#",
            "#.##.###.#",
            "#........#",
            "##########",
        ]
    )
    # Grid point (3.0, 4.5) sits in the wall left of the inner room; the nearest open tile is
    # inside it (tile (3, 4)), so the robots fill the inner room first and then leave by its door.
    pos = spawn_positions(world, 6, 0.3, np.random.default_rng(1), together_at=(-2.0, 0.5))
    assert_valid(world, pos, 0.3)
    tiles = np.floor(pos).astype(int)
    inner = (tiles[:, 0] >= 3) & (tiles[:, 0] <= 6) & (tiles[:, 1] >= 3) & (tiles[:, 1] <= 4)
    assert inner[:5].all()


def tiles_of(pos: np.ndarray) -> list[tuple[int, int]]:
    np.testing.assert_array_equal(pos - np.floor(pos), 0.5)  # tile centres
    return [(int(x), int(y)) for x, y in np.floor(pos).astype(int).tolist()]


TWO_ROOMS = [
    "###############",
    "#....#.......##",
    "#....#.......##",
    "#....#.......##",
    "#............##",
    "#....#.......##",
    "#....#.......##",
    "###############",
]


def two_rooms() -> WorldMap:
    """Left room x 1..4, right room x 6..12 (y 1..6), a doorway at (5, 3) in neither."""
    walls = draw(TWO_ROOMS).walls
    left, right = np.zeros_like(walls), np.zeros_like(walls)
    left[1:7, 1:5] = True
    right[1:7, 6:13] = True
    return WorldMap(walls=walls, rooms=(right, left))


def test_biggest_room_is_maes_two_layers_off_the_edge_in_x_then_y_order() -> None:
    # MAES 2.0's SpawnRobotsInBiggestRoom: the room less its edge tiles (a side on a wall, or
    # on the doorway, which is outside the room) and less the next layer, sorted by x, then y.
    world = two_rooms()
    pos = spawn_positions(world, 6, 0.3, np.random.default_rng(0), biggest_room=True)
    assert_valid(world, pos, 0.3)
    assert tiles_of(pos) == [(8, 3), (8, 4), (9, 3), (9, 4), (10, 3), (10, 4)]
    # A 7th robot does not fit two layers in: one layer is peeled off, in the same order.
    pos = spawn_positions(world, 7, 0.3, np.random.default_rng(0), biggest_room=True)
    assert tiles_of(pos) == [(7, 2), (7, 3), (7, 4), (7, 5), (8, 2), (8, 3), (8, 4)]
    # 21 robots: none peeled off (tiles next to walls, which a 0.6-tile robot clears).
    pos = spawn_positions(world, 21, 0.3, np.random.default_rng(0), biggest_room=True)
    assert_valid(world, pos, 0.3)
    assert tiles_of(pos)[:7] == [(6, y) for y in range(1, 7)] + [(7, 1)]
    assert all(x >= 6 for x, _ in tiles_of(pos))  # never in the doorway or the other room
    with pytest.raises(MapError, match=r"room for 42 robots .* in the biggest room"):
        spawn_positions(world, 43, 0.3, np.random.default_rng(0), biggest_room=True)


def test_biggest_room_takes_every_second_tile_for_wide_robots() -> None:
    world = two_rooms()
    pos = spawn_positions(world, 2, 0.5, np.random.default_rng(0), biggest_room=True)
    assert_valid(world, pos, 0.5)
    assert tiles_of(pos) == [(8, 3), (10, 3)]  # the 3 x 2 inner tiles hold two
    pos = spawn_positions(world, 3, 0.5, np.random.default_rng(0), biggest_room=True)
    assert_valid(world, pos, 0.5)
    assert tiles_of(pos) == [(7, 2), (7, 4), (9, 2)]  # three: one layer off (x 7..11, y 2..5)


def test_biggest_room_ranks_by_maes_size_less_edge_tiles_and_counts_hallways() -> None:
    # RoomSizeExcludingEdgeTiles: tiles less one per side on a wall. A long thin room has more
    # tiles (2 x 20 = 40, key 40 - 44) than a square one (6 x 6 = 36, key 36 - 24) but loses.
    walls = np.ones((10, 30), dtype=bool)
    long_, square, hall = (np.zeros_like(walls) for _ in range(3))
    long_[1:3, 1:21] = True
    square[3:9, 22:28] = True
    walls[long_ | square] = False
    walls[2:4, 21:23] = False  # a passage between them, in no room
    world = WorldMap(walls=walls, rooms=(long_, square))
    pos = spawn_positions(world, 4, 0.3, np.random.default_rng(0), biggest_room=True)
    assert tiles_of(pos) == [(24, 5), (24, 6), (25, 5), (25, 6)]  # the square, 2 layers in
    # MAES keeps hallways in the same list, so a building's biggest room is usually its main
    # hallway. Ties (two 6 x 6 squares): a hallway first, then the order listed.
    walls = np.ones((8, 16), dtype=bool)
    a, b = np.zeros_like(walls), np.zeros_like(walls)
    a[1:7, 1:7] = True
    b[1:7, 9:15] = True
    walls[a | b] = False
    walls[3, 7:9] = False  # a passage, in neither
    first = {}
    for name, rooms, halls in (("a b", (a, b), ()), ("b a", (b, a), ()), ("hall b", (a,), (b,))):
        world = WorldMap(walls=walls, rooms=rooms, hallways=halls)
        pos = spawn_positions(world, 1, 0.3, np.random.default_rng(0), biggest_room=True)
        first[name] = tiles_of(pos)[0]
    assert first == {"a b": (3, 3), "b a": (11, 3), "hall b": (11, 3)}


def test_biggest_room_with_many_small_labels() -> None:
    # 10 hallways and 250 rooms: the rooms' labels fit a uint8, room k + 10 hallways do not;
    # the biggest room, listed last, must not be merged with another region.
    walls = np.zeros((12, 30), dtype=bool)
    halls = []
    for y in range(10):  # one-tile hallways on x = 0
        hall = np.zeros_like(walls)
        hall[y, 0] = True
        halls.append(hall)
    free = [(x, y) for x in range(7, 30) for y in range(12)][:249]
    rooms = []
    for x, y in free:  # one-tile rooms
        room = np.zeros_like(walls)
        room[y, x] = True
        rooms.append(room)
    big = np.zeros_like(walls)
    big[2:6, 2:6] = True  # 4 x 4: 16 tiles less 16 sides, above every one-tile region's -3
    world = WorldMap(walls=walls, rooms=(*rooms, big), hallways=tuple(halls))
    pos = spawn_positions(world, 16, 0.3, np.random.default_rng(0), biggest_room=True)
    assert tiles_of(pos) == [(x, y) for x in range(2, 6) for y in range(2, 6)]


def test_biggest_room_on_a_building_is_the_main_hallway() -> None:
    world = generate_building(60, 60, 1, BUILDING, np.random.default_rng(5))
    pos = spawn_positions(world, 50, 0.3, np.random.default_rng(0), biggest_room=True)
    assert_valid(world, pos, 0.3)
    tiles = np.floor(pos).astype(int)
    assert (world.hallways[0][tiles[:, 1], tiles[:, 0]]).all()
    order = np.lexsort((tiles[:, 1], tiles[:, 0]))
    np.testing.assert_array_equal(order, np.arange(50))  # in order of x, then y


def test_biggest_room_on_a_cave_and_on_a_map_without_rooms() -> None:
    cave = generate_cave(60, 60, 1, CAVE, np.random.default_rng(0))
    pos = spawn_positions(cave, 5, 0.3, np.random.default_rng(0), biggest_room=True)
    tiles = np.floor(pos).astype(int)
    inner = cave.rooms[0].copy()
    for _ in range(2):  # two layers of tiles with a side outside the region peeled off
        pad = np.pad(inner, 1)
        inner &= pad[:-2, 1:-1] & pad[2:, 1:-1] & pad[1:-1, :-2] & pad[1:-1, 2:]
    ys, xs = np.nonzero(inner.T)[::-1]
    assert tiles.tolist() == np.stack([xs, ys], axis=1)[:5].tolist()
    plain = box(10, 10)  # no rooms recorded: the largest open region (x, y 1..8) is used
    pos = spawn_positions(plain, 3, 0.3, np.random.default_rng(0), biggest_room=True)
    assert tiles_of(pos) == [(3, 3), (3, 4), (3, 5)]


def test_hallway_ends_are_maes_tiles_off_the_edge_nearest_the_border() -> None:
    # MAES 2.0's SpawnAtHallWayEnds: hallway tiles less their edge tiles (one layer), by
    # distance to the map's border, min(x, W-1-x, y, H-1-y); ties here: x, then y.
    world = draw(
        [
            "############",
            "#####...####",
            "#####...####",
            "#..........#",
            "#..........#",
            "#..........#",
            "#####...####",
            "#####...####",
            "############",
        ]
    )
    world = WorldMap(walls=world.walls, hallways=(world.open_tiles,))  # one cross-shaped hall
    pos = spawn_positions(world, 16, 0.3, np.random.default_rng(0), at_hallway_ends=True)
    assert_valid(world, pos, 0.3)
    assert tiles_of(pos) == [
        (2, 4), (6, 2), (6, 6), (9, 4),  # 2 tiles from the border
        (3, 4), (5, 3), (5, 5), (6, 3), (6, 5), (7, 3), (7, 5), (8, 4),  # 3
        (4, 4), (5, 4), (6, 4), (7, 4),  # 4: the 16 tiles off the hall's edge, all of them
    ]  # fmt: skip
    # A 17th robot: MAES 2.0 spawns 16; here the edge tiles are used too, in the same order.
    pos = spawn_positions(world, 17, 0.3, np.random.default_rng(0), at_hallway_ends=True)
    assert_valid(world, pos, 0.3)
    assert tiles_of(pos)[:4] == [(1, 3), (1, 4), (1, 5), (5, 1)]
    with pytest.raises(MapError, match=r"room for 42 robots .* in the hallways"):
        spawn_positions(world, 43, 0.3, np.random.default_rng(0), at_hallway_ends=True)


def test_hallway_ends_spawn_in_hallways_near_the_outer_edge() -> None:
    world = generate_building(60, 60, 1, BUILDING, np.random.default_rng(5))
    halls = np.zeros(world.shape, dtype=bool)
    for hall in world.hallways:
        halls |= hall
    pos = spawn_positions(world, 6, 0.3, np.random.default_rng(0), at_hallway_ends=True)
    assert_valid(world, pos, 0.3)
    tiles = np.floor(pos).astype(int)
    assert halls[tiles[:, 1], tiles[:, 0]].all()
    h, w = world.shape
    ys, xs = np.nonzero(halls)
    hall_edge = np.minimum(np.minimum(xs + 0.5, w - xs - 0.5), np.minimum(ys + 0.5, h - ys - 0.5))
    robot_edge = np.minimum(
        np.minimum(pos[:, 0], w - pos[:, 0]), np.minimum(pos[:, 1], h - pos[:, 1])
    )
    assert robot_edge.max() <= np.percentile(hall_edge, 10)


def test_hallway_ends_need_hallways() -> None:
    cave = generate_cave(30, 30, 1, CAVE, np.random.default_rng(0))
    with pytest.raises(MapError, match="at_hallway_ends needs a map with hallways"):
        spawn_positions(cave, 2, 0.3, np.random.default_rng(0), at_hallway_ends=True)


def test_imported_map_spawns_in_the_largest_region_only() -> None:
    world = draw(
        [
            "#######",
            "#..#..#",
            "#..#..#",
            "#..####",
            "#..#..#",
            "#######",
        ]
    )
    # Aim at the small pocket on the right: robots still go to the largest region.
    pos = spawn_positions(world, 4, 0.3, np.random.default_rng(0), together_at=(1.5, 1.0))
    tiles = np.floor(pos).astype(int)
    assert largest_open_region(world.walls)[tiles[:, 1], tiles[:, 0]].all()


def test_no_room_names_capacity_and_request() -> None:
    world = box(5, 4)  # 3 x 2 open tiles
    capacity = None
    with pytest.raises(
        MapError, match=r"room for (\d+) robots of radius 0.3 .*, 50 requested"
    ) as err:
        spawn_positions(world, 50, 0.3, np.random.default_rng(0))
    capacity = int(str(err.value).split("room for ")[1].split()[0])
    assert capacity > 0
    assert_valid(world, spawn_positions(world, capacity, 0.3, np.random.default_rng(0)), 0.3)
    with pytest.raises(MapError, match="biggest room"):
        building = generate_building(30, 30, 1, BUILDING, np.random.default_rng(0))
        spawn_positions(building, 5000, 0.3, np.random.default_rng(0), biggest_room=True)


def test_same_seed_same_positions() -> None:
    world = generate_cave(40, 40, 1, CAVE, np.random.default_rng(7))
    a = spawn_positions(world, 30, 0.3, np.random.default_rng(9))
    b = spawn_positions(world, 30, 0.3, np.random.default_rng(9))
    np.testing.assert_array_equal(a, b)
    hall_world = generate_building(50, 50, 1, BUILDING, np.random.default_rng(1))
    c = spawn_positions(hall_world, 8, 0.3, np.random.default_rng(4), at_hallway_ends=True)
    d = spawn_positions(hall_world, 8, 0.3, np.random.default_rng(4), at_hallway_ends=True)
    np.testing.assert_array_equal(c, d)


def test_zero_robots_and_bad_arguments() -> None:
    world = box(6, 6)
    assert spawn_positions(world, 0, 0.3, np.random.default_rng(0)).shape == (0, 2)
    rng = np.random.default_rng(0)
    with pytest.raises(MapError, match="radius must be a finite number > 0, got -0.1"):
        spawn_positions(world, 1, -0.1, rng)
    with pytest.raises(MapError, match="radius"):
        spawn_positions(world, 1, float("nan"), rng)
    with pytest.raises(MapError, match="non-negative integer, got -2"):
        spawn_positions(world, -2, 0.3, rng)
    with pytest.raises(MapError, match="biggest_room and at_hallway_ends"):
        spawn_positions(world, 1, 0.3, rng, biggest_room=True, at_hallway_ends=True)
    with pytest.raises(MapError, match="together_at must be a finite"):
        spawn_positions(world, 1, 0.3, rng, together_at=(1.0, float("inf")))
    with pytest.raises(TypeError, match="Generator"):
        spawn_positions(world, 1, 0.3, 7)


@pytest.mark.parametrize("mode", ["together", "biggest_room", "at_hallway_ends"])
def test_spawn_on_a_huge_region_stays_small(mode: str):
    # Issue 17: a candidate lattice over a whole 2400 x 2400 region (~14 M points, ~1.4 GB of
    # arrays) was built to place a few robots. Every mode now works on a few tile masks.
    import tracemalloc

    from maes_sim.core.collision import robot_overlap, wall_penetration

    walls = np.zeros((2400, 2400), dtype=bool)
    walls[0, :] = walls[-1, :] = walls[:, 0] = walls[:, -1] = True
    walls[1195:1205, 1100:1300] = True  # a wall across the centre
    world = WorldMap(walls=walls, hallways=(~walls,) if mode == "at_hallway_ends" else ())
    kw = {} if mode == "together" else {mode: True}
    tracemalloc.start()
    try:
        a = spawn_positions(world, 40, 0.3, np.random.default_rng(5), **kw)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    b = spawn_positions(world, 40, 0.3, np.random.default_rng(5), **kw)
    np.testing.assert_array_equal(a, b)  # deterministic
    assert peak < 400e6, f"{peak / 1e6:.0f} MB"
    assert wall_penetration(walls, a, 0.3 + SPAWN_MARGIN - 1e-9).max() == 0.0
    assert robot_overlap(a, 0.3) == 0.0
    if mode == "together":  # outward from the centre: within a few tiles of it
        assert np.hypot(*(a - 1200.0).T).max() < 15
    elif mode == "biggest_room":  # the first tiles two off the walls, x then y
        assert tiles_of(a) == [(3, y) for y in range(3, 43)]
    else:  # one tile off the walls, nearest the border (ties: x, then y)
        assert tiles_of(a) == [(2, y) for y in range(2, 42)]
