"""Yielding between robots (issue 36): a total order, bounded waits, a way out of a crowd.

Two or more navigators drive discs in a small kinematic world (no ROS, no simulator): each
step every navigator gets the others' positions and indices, and a move that would bring two
discs into contact is refused (as the simulator's collisions stop a robot).
"""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pytest

from maes_controller.navigation import GridMap, NavErrorCode, Navigator, NavParams, yielding
from maes_controller.navigation.yielding import (
    Hold,
    as_positions,
    free_heading,
    gap_ahead,
    outranked,
    robot_in_the_way,
    robots_in_the_way,
)
from maes_controller.robot_api import NavStatus

DT = 0.1
PARAMS = NavParams(
    robot_radius=0.3,
    max_linear_speed=1.0,
    max_angular_speed=2.0,
    inflation_radius=0.6,
    yield_margin=0.1,
    yield_lookahead=0.3,
    close_margin=0.01,
    escape_distance=1.0,
)


def grid_of(occ: np.ndarray) -> GridMap:
    h, w = occ.shape
    return GridMap.from_array(occ, 1.0, -w / 2.0, -h / 2.0)


def room(width: int, height: int) -> np.ndarray:
    occ = np.zeros((height, width), dtype=np.int8)
    occ[0, :] = occ[-1, :] = occ[:, 0] = occ[:, -1] = 100
    return occ


def hits_wall(grid: GridMap, x: float, y: float, r: float) -> bool:
    """Whether a disc of radius ``r`` at (x, y) overlaps an occupied cell of ``grid``."""
    occ = grid.array
    h, w = occ.shape
    gx, gy = x - grid.origin_x, y - grid.origin_y
    for iy in range(max(int(gy - r) - 1, 0), min(int(gy + r) + 2, h)):
        for ix in range(max(int(gx - r) - 1, 0), min(int(gx + r) + 2, w)):
            if occ[iy, ix] >= 65:
                nx, ny = min(max(gx, ix), ix + 1), min(max(gy, iy), iy + 1)
                if math.hypot(gx - nx, gy - ny) < r:
                    return True
    return False


def run(navs, poses, grid, max_time=60.0, params=PARAMS, on_end=None):
    """Step every navigator with the others' positions and indices until none is active;
    a move into another robot or a wall is refused.

    ``on_end(i, step, t)`` may start a new goal for robot ``i`` whose goal ended (its logic
    choosing again); returns True then. Returns ({robot: [(final step, time), ...]}, the
    closest approach of any two robots).
    """
    poses = [list(p) for p in poses]
    ends: dict[int, list] = {i: [] for i in range(len(navs))}
    active = set(range(len(navs)))
    closest = math.inf
    t = 0.0
    while t < max_time and active:
        t += DT
        steps = {}
        for i in sorted(active):
            others = [j for j in range(len(navs)) if j != i]
            step = navs[i].update(
                tuple(poses[i]),
                grid,
                t,
                [tuple(poses[j][:2]) for j in others],
                robot_ids=others,
            )
            steps[i] = step
            if step.status is not NavStatus.ACTIVE:
                ends[i].append((step, t))
                if on_end is None or not on_end(i, step, t):
                    active.discard(i)
        for i, step in steps.items():
            x, y, yaw = poses[i]
            nx, ny = x + step.linear * math.cos(yaw) * DT, y + step.linear * math.sin(yaw) * DT
            apart = all(
                math.dist((nx, ny), poses[j][:2]) >= 2 * params.robot_radius
                or math.dist((nx, ny), poses[j][:2]) >= math.dist((x, y), poses[j][:2])
                for j in range(len(navs))
                if j != i
            )
            if apart and not hits_wall(grid, nx, ny, params.robot_radius):
                poses[i][0], poses[i][1] = nx, ny
            poses[i][2] = yaw + step.angular * DT
        for i in range(len(navs)):
            for j in range(i + 1, len(navs)):
                closest = min(closest, math.dist(poses[i][:2], poses[j][:2]))
    return ends, closest


def test_the_corridor_test_holds_for_an_overlap_only_when_already_close():
    # contact 0.6; a neighbour 0.65 m away: beside it (no overlap on the way), ahead of it
    assert robots_in_the_way((0, 0, 0), 1.0, [(0.15, 0.63)], 0.3, 0.5, 0.5) == [0]
    assert robots_in_the_way((0, 0, 0), 1.0, [(0.15, 0.63)], 0.3, 0.5, 0.5, 0.01) == []
    assert robots_in_the_way((0, 0, 0), 1.0, [(0.46, 0.46)], 0.3, 0.5, 0.5, 0.01) == [0]
    # farther robots keep the full margin
    assert robot_in_the_way((0, 0, 0), 1.0, [(1.0, 0.8)], 0.3, 0.5, 0.5, 0.01)


@pytest.mark.parametrize("seed", range(40))
def test_a_crowd_tested_on_arrays_gives_the_loops_robots(seed, monkeypatch):
    # The array path (ARRAY_FROM robots or more) against the plain loop on the same crowd:
    # the same robots, including those exactly on a limit (positions on a 0.05 m lattice).
    rng = np.random.default_rng(seed)
    n = int(rng.integers(yielding.ARRAY_FROM, 150))
    robots = [tuple(v) for v in (rng.integers(-40, 41, size=(n, 2)) * 0.05).tolist()]
    # every other seed a robot at the origin facing along x: sideways gaps fall exactly on
    # the limits, which must count the same on both paths
    pose = (
        (0.0, 0.0, 0.0)
        if seed % 2
        else (float(rng.normal()) * 0.1, float(rng.normal()) * 0.1, float(rng.uniform(-4, 4)))
    )
    args = [
        (pose, direction, 0.3, margin, lookahead, close)
        for direction in (1.0, -1.0)
        for margin, lookahead, close in (
            (0.2, 0.5, None),
            (0.35, 0.5, 0.01),
            (0.1, 2.0, 0.0),
            (0.2, 0.2, 0.2),
        )
    ]
    on_arrays = [
        robots_in_the_way(p, d, as_positions(robots), r, m, la, c) for p, d, r, m, la, c in args
    ]
    as_lists = [robots_in_the_way(p, d, robots, r, m, la, c) for p, d, r, m, la, c in args]
    heading = free_heading(pose, 1.0, robots, 0.3, 0.2, 0.01, 1.0)
    # free_heading's test of many headings at once (0 and 180 degrees along the lattice)
    headings = [2.0 * math.pi * k / 72 for k in range(72)] + [math.pi]
    at_once = [
        yielding._blocked_headings(*pose[:2], headings, as_positions(robots), 0.3, m, la, c or 0.0)
        for _p, _d, _r, m, la, c in args
    ]
    monkeypatch.setattr(yielding, "ARRAY_FROM", 10**9)  # the loop, whatever the crowd's size
    one_by_one = [
        yielding._blocked_headings(*pose[:2], headings, robots, 0.3, m, la, c or 0.0)
        for _p, _d, _r, m, la, c in args
    ]
    assert at_once == one_by_one
    assert any(map(any, at_once))
    looped = [robots_in_the_way(p, d, robots, r, m, la, c) for p, d, r, m, la, c in args]
    assert on_arrays == as_lists == looped
    assert any(looped)  # the crowds do stand in the way
    assert free_heading(pose, 1.0, robots, 0.3, 0.2, 0.01, 1.0) == heading


@pytest.mark.parametrize("margin, lookahead", [(0.2, 0.5), (0.35, 0.5), (0.1, 2.0)])
def test_robots_exactly_on_the_corridors_limits_count_alike_on_arrays(margin, lookahead):
    # A robot exactly at the lookahead's end is in the way, one exactly at the side limit is
    # not; eleven more far behind make a crowd (the array paths).
    radius = 0.3
    ahead, beside = 2.0 * radius + lookahead, 2.0 * radius + margin
    far = [(-50.0 - k, -50.0) for k in range(yielding.ARRAY_FROM - 1)]
    for robot, expected in (((ahead, 0.0), True), ((1.0, beside), False)):
        crowd = [robot, *far]
        assert len(as_positions(crowd)) == yielding.ARRAY_FROM
        loop = robots_in_the_way((0.0, 0.0, 0.0), 1.0, crowd[:1], radius, margin, lookahead)
        arrays = robots_in_the_way((0.0, 0.0, 0.0), 1.0, crowd, radius, margin, lookahead)
        assert loop == arrays == ([0] if expected else [])
        blocked = yielding._blocked_headings(
            0.0, 0.0, [0.0, math.pi], as_positions(crowd), radius, margin, lookahead, 0.01
        )
        assert blocked == [expected, False]


@pytest.mark.parametrize("seed", range(20))
def test_the_gap_ahead_of_a_crowd_on_arrays_is_the_loops(seed):
    # gap_ahead's array path (a crowd from as_positions) against its loop, to the bit, robots
    # on a 0.05 m lattice so some stand exactly on the corridor's limits
    rng = np.random.default_rng(seed)
    n = int(rng.integers(yielding.ARRAY_FROM, 120))
    robots = [tuple(v) for v in (rng.integers(-40, 41, size=(n, 2)) * 0.05).tolist()]
    pose = (0.0, 0.0, 0.0) if seed % 2 else (0.01, -0.02, float(rng.uniform(-4, 4)))
    for margin, reach in ((0.35, 2.0), (0.1, 0.5), (0.0, 3.0)):
        looped = gap_ahead(pose, robots, 0.3, margin, reach)
        assert gap_ahead(pose, as_positions(robots), 0.3, margin, reach) == looped
        # the nearest robot inside the corridor, measured from contact (0 when closer)
        c, s = math.cos(pose[2]), math.sin(pose[2])
        inside = [
            c * (x - pose[0]) + s * (y - pose[1])
            for x, y in robots
            if 0.0 < c * (x - pose[0]) + s * (y - pose[1]) <= 0.6 + reach
            and abs(-s * (x - pose[0]) + c * (y - pose[1])) < 0.6 + margin
        ]
        assert looped == (max(min(inside) - 0.6, 0.0) if inside else math.inf)
    assert gap_ahead(pose, as_positions([]), 0.3, 0.2, 2.0) == math.inf


def test_a_robot_slows_behind_a_robot_ahead_and_stops_at_the_hold():
    # heading east at 1 m/s towards a robot standing 2.2 m ahead, on its line: with
    # approach_time 0.5 s the speed never exceeds twice the gap left to contact (nor falls
    # below approach_min_speed before the hold); without it, full speed until the hold.
    # Either way the hold stops it short of contact.
    grid = grid_of(room(16, 8))
    standing = (1.2, 0.0)
    speeds = {}
    for approach in (0.0, 0.5):
        params = replace(
            PARAMS,
            approach_time=approach,
            approach_distance=2.0,
            approach_min_speed=0.1,
            jam_pass_after=0.0,
            plan_around_robots=False,  # straight at it: the corridor ahead holds it
        )
        nav = Navigator(params, rank=0)
        nav.start((6.0, 0.0), now=0.0)
        (x, y), yaw, t, seen = (-1.0, 0.0), 0.0, 0.0, []
        while t < 2.5:
            t += DT
            step = nav.update((x, y, yaw), grid, t, [standing], robot_ids=[1])
            gap = math.dist((x, y), standing) - 2 * params.robot_radius
            if step.linear > 0:
                seen.append((gap, step.linear))
            x += step.linear * math.cos(yaw) * DT
            yaw += step.angular * DT
        assert math.dist((x, y), standing) > 2 * params.robot_radius + 0.15  # held short
        speeds[approach] = seen
    top = PARAMS.max_linear_speed
    assert all(v == top for _, v in speeds[0.0])  # full speed into the corridor, then held
    assert all(v <= max(0.1, gap / 0.5) + 1e-12 for gap, v in speeds[0.5])
    assert [round(v, 3) for gap, v in speeds[0.5] if gap < 0.5] == [0.8, 0.64]  # slowing


def test_the_order_is_the_robot_index():
    assert outranked(5, [7, 2]) and not outranked(2, [7, 5])
    assert not outranked(0, [1, 2, 3])  # robot0 waits for nobody
    assert not outranked(None, [0]) and not outranked(3, [None])


def test_a_hold_tells_a_moving_crowd_from_a_jam():
    hold = Hold(0.0, [(1.0, 0.0), (1.0, 1.0)], [3, 4])
    hold.see([(1.0, 0.0), (1.0, 1.0)], [3, 4])
    assert not hold.moving
    hold.see([(1.0, 0.0)], [3])  # robot 4 left the way: unchanged positions still mean a jam
    assert not hold.moving
    hold.see([(1.0, 0.0), (1.2, 0.3)], [3, 7])  # another robot came, but robot 3 stays
    assert not hold.moving
    hold.see([(1.2, 0.3)], [7])  # robot 3 left the way: the crowd moves
    assert hold.moving
    hold.see([(1.0, 0.0), (1.2, 0.3)], [3, 7])  # robot 3 back where it was: a jam again
    assert not hold.moving


def test_a_robot_passing_by_does_not_excuse_one_that_stays():
    # a door: robot 9 holds robot 0's way and stays; robot 8 walks through the way and on
    hold = Hold(0.0, [(0.5, 0.0)], [9])
    hold.see([(0.5, 0.0), (0.9, -0.2)], [9, 8])
    assert not hold.moving
    hold.see([(0.5, 0.02), (1.4, -0.1)], [9, 8])  # robot 8 moved on; robot 9 did not
    assert not hold.moving
    hold.see([(0.5, 0.25)], [9])  # robot 9 itself moves aside
    assert hold.moving


def test_a_free_heading_leads_out_of_a_crowd_and_none_from_its_middle():
    lattice = [(x * 0.65, y * 0.65) for x in range(-2, 3) for y in range(-2, 3) if (x, y) != (0, 0)]
    assert free_heading((0.0, 0.0, 0.0), 0.0, lattice, 0.3, 0.1, 0.01, 1.0) is None
    edge = [(x, y) for x, y in lattice if x <= 0.0]  # the robot at the crowd's east edge
    heading = free_heading((0.0, 0.0, 0.0), math.pi, edge, 0.3, 0.1, 0.01, 1.0)
    assert heading is not None and abs(heading) < math.radians(30)  # out to the east
    # a wall east of x = 0: the end point must be clear, the heading nearest the desired one
    # (5 degree steps) that ends west of it is 95 degrees
    heading = free_heading((0.0, 0.0, 0.0), 0.0, [], 0.3, 0.1, 0.01, 1.0, lambda x, y: x < 0)
    assert math.degrees(heading) == pytest.approx(95.0)


def test_head_on_in_a_narrow_corridor_the_outranked_robot_gives_way():
    # a corridor one robot wide; robot0 goes west, robot1 east: they meet in the middle
    occ = np.full((5, 14), 100, dtype=np.int8)
    occ[2, 1:13] = 0
    grid = grid_of(occ)
    navs = [Navigator(PARAMS, rank=0), Navigator(PARAMS, rank=1)]
    navs[0].start((-5.5, 0.0), now=0.0)
    navs[1].start((5.5, 0.0), now=0.0)

    chosen = []

    def choose_again(i, step, t):
        # the robots' logic, told that the goal could not be reached: robot1 goes back to the
        # end it came from, robot0 tries again
        if step.status is NavStatus.ABORTED and len(chosen) < 6:
            chosen.append((i, t))
            navs[i].start((-5.5, 0.0) if i == 1 else (-4.0, 0.0), now=t)
            return True
        return False

    result, closest = run(navs, [(4.5, 0.0, math.pi), (-4.5, 0.0, 0.0)], grid, max_time=90.0)
    assert closest >= 2 * PARAMS.robot_radius - 1e-9  # they never touched
    # robot1 (outranked) reported that it cannot make progress, as Nav2 does, in bounded time
    (gave_up, t1), *_ = result[1]
    assert gave_up.status is NavStatus.ABORTED
    assert gave_up.error_code == NavErrorCode.FAILED_TO_MAKE_PROGRESS
    assert t1 <= 2 * PARAMS.progress_timeout + 1.0
    # with a logic that then sends it back to the end it came from, robot0 (which goes
    # first) gets through behind it (perhaps after trying again)
    navs = [Navigator(PARAMS, rank=0), Navigator(PARAMS, rank=1)]
    navs[0].start((-4.0, 0.0), now=0.0)
    navs[1].start((5.5, 0.0), now=0.0)
    start = [(4.5, 0.0, math.pi), (-4.5, 0.0, 0.0)]
    ends, closest = run(navs, start, grid, max_time=90.0, on_end=choose_again)
    assert closest >= 2 * PARAMS.robot_radius - 1e-9
    assert ends[0][-1][0].status is NavStatus.SUCCEEDED
    assert ends[1][0][0].error_code == NavErrorCode.FAILED_TO_MAKE_PROGRESS
    assert ends[1][-1][0].status is NavStatus.SUCCEEDED


def test_robots_crossing_in_a_room_pass_each_other():
    grid = grid_of(room(14, 10))
    navs = [Navigator(PARAMS, rank=i) for i in range(4)]
    starts = [(-5.0, 0.0, 0.0), (5.0, 0.0, math.pi), (0.0, -3.5, math.pi / 2), (0.0, 3.5, -1.5)]
    goals = [(5.0, 0.2), (-5.0, -0.2), (0.2, 3.5), (-0.2, -3.5)]
    for nav, goal in zip(navs, goals, strict=True):
        nav.start(goal, now=0.0)
    ends, closest = run(navs, starts, grid)
    assert all(e[-1][0].status is NavStatus.SUCCEEDED for e in ends.values())
    assert closest >= 2 * PARAMS.robot_radius - 1e-9


def test_a_packed_crowd_leaves_and_every_goal_ends_in_bounded_time():
    # 9 robots packed 0.65 apart (MAES's spawn spacing for 0.6 robots) in an open room, each
    # going to its own spot on the far side, 1.1 m apart: no two ever touch, every goal ends
    # (arrived, or no progress reported) in bounded time, and most arrive
    grid = grid_of(room(20, 14))
    starts = [(x * 0.65, y * 0.65, 0.0) for x in (-1, 0, 1) for y in (-1, 0, 1)]
    goals = [(7.0, -4.5 + 1.1 * k) for k in range(9)]
    navs = [Navigator(PARAMS, rank=i) for i in range(9)]
    for nav, goal in zip(navs, goals, strict=True):
        nav.start(goal, now=0.0)
    ends, closest = run(navs, starts, grid, max_time=90.0)
    assert closest >= 2 * PARAMS.robot_radius - 1e-9
    last = [e[-1] for e in ends.values()]
    assert all(t <= 40.0 for _, t in last)
    assert all(
        step.status is NavStatus.SUCCEEDED
        or step.error_code == NavErrorCode.FAILED_TO_MAKE_PROGRESS
        for step, _ in last
    )
    assert sum(step.status is NavStatus.SUCCEEDED for step, _ in last) >= 7


def _drive_by(nav: Navigator, grid: GridMap, start, standing, standing_id: int):
    """Step ``nav`` (its goal started) from ``start`` heading east, robot ``standing_id``
    standing at ``standing`` (a move into it is refused), until the goal ends or 60 s
    pass. Returns the last step, when it came, and how close the two robots came."""
    radius = nav.params.robot_radius
    (x, y), yaw, t = start, 0.0, 0.0
    closest = math.inf
    while t < 60.0:
        t += DT
        step = nav.update((x, y, yaw), grid, t, [standing], robot_ids=[standing_id])
        if step.status is not NavStatus.ACTIVE:
            break
        nx, ny = x + step.linear * math.cos(yaw) * DT, y + step.linear * math.sin(yaw) * DT
        if math.dist((nx, ny), standing) >= 2 * radius:
            x, y = nx, ny
        yaw += step.angular * DT
        closest = min(closest, math.dist((x, y), standing))
    return step, t, closest


def test_a_robot_blocked_for_good_reports_no_progress_in_bounded_time():
    # the only gap is taken by a robot that never moves (parked: no navigator)
    occ = room(14, 8)
    occ[1:7, 7] = 100
    occ[4, 7] = 0
    grid = grid_of(occ)
    nav = Navigator(PARAMS, rank=1)
    nav.start((5.0, 0.5), now=0.0)
    step, t, _ = _drive_by(nav, grid, (-5.0, 0.5), (0.5, 0.5), 0)
    assert step.status is NavStatus.ABORTED
    assert step.error_code == NavErrorCode.FAILED_TO_MAKE_PROGRESS
    assert t <= 30.0


def _drive_past(params: NavParams, standing: tuple[float, float], rank: int = 0, grid=None):
    """Robot ``rank`` (0: it goes first) from (-2, 0) east to (2.5, 0) in an open room (or
    ``grid``), past robot 5 standing at ``standing``. Returns the goal's last step, when it
    ended, and how close the two came."""
    grid = grid_of(room(12, 8)) if grid is None else grid
    nav = Navigator(params, rank=rank)
    nav.start((2.5, 0.0), now=0.0)
    return _drive_by(nav, grid, (-2.0, 0.0), standing, 5)


@pytest.mark.parametrize("standing", [(-1.4, 0.8), (-1.3, 0.7), (-1.2, 0.75)])
def test_in_a_long_jam_the_robot_that_goes_first_passes_as_close_as_contact_allows(standing):
    # the default config's margins: 0.35 m for the pose error, 0.01 m for contact (two radii:
    # 0.6 m). The standing robot is 0.7-0.8 m from the line of travel: in the way only by the
    # pose-error margin, and it never moves, so re-planning around it finds no freer way.
    params = replace(PARAMS, yield_margin=0.35, yield_lookahead=0.5, jam_pass_after=5.0)
    assert robot_in_the_way((-2.0, 0.0, 0.0), 1.0, [standing], 0.3, 0.35, 0.5, 0.01)
    assert not robot_in_the_way((-2.0, 0.0, 0.0), 1.0, [standing], 0.3, 0.01, 0.5, 0.01)
    step, t, closest = _drive_past(params, standing)
    assert step.status is NavStatus.SUCCEEDED
    assert 5.0 < t < 15.0  # it held for the 5 s of jam first
    assert closest >= 2 * params.robot_radius
    # without the rule it holds its ground (it goes first: it never backs up) until its
    # recoveries run out and it reports no progress, the standing robot still in its way
    step, t, _ = _drive_past(replace(params, jam_pass_after=0.0), standing)
    assert step.status is NavStatus.ABORTED
    assert step.error_code == NavErrorCode.FAILED_TO_MAKE_PROGRESS


def test_a_robot_outranked_by_the_robot_in_its_way_keeps_the_margin_after_the_jam():
    # a corridor one cell wide: robot 9 cannot go round robot 5, which stands 0.7 m from its
    # line of travel (in the way by the pose-error margin only) and goes first. However long
    # the jam lasts, robot 9 keeps two radii plus that margin from it and finally reports no
    # progress; robot 0 in its place passes
    params = replace(
        PARAMS,
        yield_margin=0.35,
        yield_lookahead=0.5,
        jam_pass_after=5.0,
        outranked_recoveries=20,
        max_recoveries=20,
        progress_timeout=30.0,
    )
    grid = grid_of(room(12, 3))
    standing = (-1.3, 0.7)
    step, t, closest = _drive_past(params, standing, rank=9, grid=grid)
    assert step.status is NavStatus.ABORTED and t > 10.0
    assert closest >= 2 * params.robot_radius + params.yield_margin
    step, _, closest = _drive_past(params, standing, rank=0, grid=grid)
    assert step.status is NavStatus.SUCCEEDED
    assert 2 * params.robot_radius <= closest < 2 * params.robot_radius + params.yield_margin
    with pytest.raises(ValueError, match="jam_pass_after"):
        replace(PARAMS, jam_pass_after=-1.0)
    with pytest.raises(ValueError, match="jam_radius"):
        replace(PARAMS, jam_radius=0.0)
