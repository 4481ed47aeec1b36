"""Rooms and hallways held as one label array (issue 17: memory proportional to the map).

The golden fingerprints were taken with the generators *before* this change (one mask per
room), so they also show the generated maps did not change.
"""

from __future__ import annotations

import hashlib
import tracemalloc

import numpy as np
import pytest

from maes_sim.core.config_schema import BuildingConfig, CaveConfig
from maes_sim.core.world import (
    MapError,
    WorldMap,
    generate_building,
    generate_cave,
    spawn_positions,
)
from maes_sim.core.world.worldmap import Regions


def _fingerprint(world: WorldMap) -> str:
    digest = hashlib.sha256(world.walls.tobytes())
    for masks in (world.rooms, world.hallways):
        index = np.full(world.shape, -1, dtype=np.int32)
        for k, mask in enumerate(masks):
            index[mask] = k
        digest.update(index.tobytes())
    return digest.hexdigest()[:16]


def test_generated_maps_are_the_same_as_before_the_label_arrays():
    building = generate_building(120, 80, 2, BuildingConfig(), np.random.default_rng(7))
    cave = generate_cave(
        90,
        60,
        1,
        CaveConfig(room_threshold_size=0, wall_threshold_size=0),
        np.random.default_rng(7),
    )
    assert _fingerprint(building) == "6deb6750f14b50ea"
    assert _fingerprint(cave) == "2438374b112dfd22"


def test_building_memory_grows_with_the_map_not_with_its_rooms():
    # Before: one full-map mask per room and several copies of each (26 MB at 200x200, 3.9 GB
    # at 700x700). tracemalloc counts numpy's allocations, independent of machine speed.
    tracemalloc.start()
    try:
        world = generate_building(300, 300, 1, BuildingConfig(), np.random.default_rng(0))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert len(world.rooms) > 400
    assert peak < 64 * 300 * 300, f"peak {peak / 1e6:.1f} MB"


def test_regions_behave_as_a_sequence_of_masks():
    labels = np.array([[1, 1, 0], [2, 0, 0]])
    rooms = Regions(labels, 2)
    assert len(rooms) == 2 and rooms.sizes.tolist() == [2, 1]
    assert rooms[0].tolist() == [[True, True, False], [False, False, False]]
    assert rooms[-1].tolist() == [[False, False, False], [True, False, False]]
    assert not rooms[0].flags.writeable and not rooms.labels.flags.writeable
    assert rooms == [rooms[0], rooms[1]] and rooms != ()
    assert len(rooms + ()) == 2 and len(() + rooms) == 2
    with pytest.raises(IndexError):
        rooms[2]
    with pytest.raises(MapError, match="exactly the values 0..3"):
        Regions(labels, 3)


def test_worldmap_takes_masks_and_refuses_overlapping_ones():
    walls = np.zeros((4, 4), dtype=bool)
    a = np.zeros((4, 4), dtype=bool)
    a[:2] = True
    b = np.zeros((4, 4), dtype=bool)
    b[1:3] = True
    world = WorldMap(walls=walls, rooms=(a, ~a))
    assert len(world.rooms) == 2 and np.array_equal(world.rooms[1], ~a)
    with pytest.raises(MapError, match=r"rooms\[1\] overlaps"):
        WorldMap(walls=walls, rooms=(a, b))
    with pytest.raises(MapError, match=r"rooms\[0\] has shape"):
        WorldMap(walls=walls, rooms=(np.zeros((3, 3), dtype=bool),))


def test_spawn_in_the_biggest_room_and_at_hallway_ends_use_the_labels():
    world = generate_building(60, 50, 1, BuildingConfig(), np.random.default_rng(3))
    biggest = world.hallways[0]  # MAES ranks rooms and hallways together: the main hallway
    pts = spawn_positions(world, 3, 0.3, np.random.default_rng(0), biggest_room=True)
    tiles = np.floor(pts).astype(int)
    assert biggest[tiles[:, 1], tiles[:, 0]].all()
    pts = spawn_positions(world, 2, 0.3, np.random.default_rng(0), at_hallway_ends=True)
    tiles = np.floor(pts).astype(int)
    halls = world.hallways.labels > 0
    assert halls[tiles[:, 1], tiles[:, 0]].all()
