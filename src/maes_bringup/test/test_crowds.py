"""Crowds (issue 36): a team leaves a packed start, and more robots explore no less.

Direct mode (lockstep, bit-reproducible: the figures below are what these seeds give on any
machine), the default config's keys on a 60x60 building, ``spawn_together``, 1200 ticks (two
simulated minutes), as a new user scaling the team would run it. Before issue 36 the frontier
explorer with 20 robots on seed 0 explored 11.5 % (17 of the 20 robots never left the start
cluster); the measurements behind these tests are in docs/scaling.md.
"""

from __future__ import annotations

import csv
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from maes_bringup.runners import direct
from maes_sim.core import Simulation, load_config

ROOT = Path(__file__).resolve().parents[3]
EXPLORER = "maes_controller.algorithms.frontier_explorer:logic"
TRS = "maes_controller.algorithms.trs:logic"
#: Share of 50 robots 3 m or more from their start after 30 s. Issue 36 asks for 90 %. On the
#: 60x60 building the explorer reaches 50, 88, 54, 82 and 70 % on seeds 0-4 (50, 88, 60, 88
#: and 66 % before a hold's robot that stays in the way was a jam whoever passes by) since
#: robots start one a tile, as MAES 2.0 spawns them (72, 88, 74, 82 and 88 % from the former,
#: 2.4 times denser start, which they had to leave to see anything; seeds 0-2: 36, 72 and 44 %
#: before the explorer spread the team): the test keeps what seed 0 reaches, the rest is open
#: (docs/scaling.md). On the 60x60 cave every seed reaches the 90 %.
DISPERSED = 0.50


def _experiment(name: str):
    """The module of ``experiments/<name>.py`` (scripts, not a package)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location(name, ROOT / "experiments" / f"{name}.py")
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    return script


def building(robots: int, ticks: int = 1200):
    """The default config on a 60x60 building, ``robots`` spawned together, ``ticks`` long."""
    base = load_config(ROOT / "maes_config.yaml")
    return replace(
        base,
        number_of_robots=robots,
        map=replace(base.map, width_in_tiles=60, height_in_tiles=60),
        end_criteria=replace(
            base.end_criteria, exploration_percent=None, coverage_percent=None, tick=ticks
        ),
    )


def explored(robots: int, logic: str, seed: int) -> tuple[float, int]:
    """Explored share (%) after 1200 ticks, and the stalls begun (core/stalls.py)."""
    result = direct.run(building(robots), logic, seed=seed)
    assert result.ticks == 1200
    return float(result.exploration[-1]), int(result.stats["stalls"])


@pytest.mark.slow
@pytest.mark.parametrize(
    ("logic", "seed"),
    [
        (EXPLORER, 0),
        (EXPLORER, 2),
        (TRS, 0),
        (TRS, 1),
        ("maes_controller.algorithms.space_cbba:logic", 2),
    ],
)
def test_twice_the_robots_explore_no_less_and_nobody_stalls(logic, seed):
    # seed 0 is the issue's: 20 frontier explorers explored 11.5 % (10: 78.0 %); SPACE CBBA on
    # seed 2 explored 80.6 % with 10 robots and 76.7 % with 20 before its finished areas; TRS
    # on seed 0 explored 96.8 % with 10 robots and 94.5 % with 20 until a robot passing
    # through a hold's way no longer excused one that stayed in it (99.7 % since)
    ten, ten_stalls = explored(10, logic, seed)
    twenty, twenty_stalls = explored(20, logic, seed)
    print(f"{logic} seed {seed}: 10 robots {ten:.1f} %, 20 robots {twenty:.1f} %")
    assert twenty >= ten - 2.0
    assert ten_stalls == twenty_stalls == 0
    if logic == EXPLORER:
        assert twenty >= 90.0


@pytest.mark.slow
@pytest.mark.parametrize(
    ("logic", "stalls_of_fifty"),
    [
        pytest.param(EXPLORER, 0, id="frontier_explorer"),
        pytest.param(TRS, 0, id="trs"),
    ],
)
def test_fifty_robots_from_a_start_room_with_one_door_explore_no_less_than_twenty(
    logic, stalls_of_fifty
):
    # 60x60 building, seed 2: the start room has one door (docs/scaling.md).
    # - The frontier explorer ("The frontier explorer's trails"): 20 robots explore all of it;
    #   50 explored 96.9 % before the trails, leaving a room nobody entered (each robot maps
    #   alone, and most of the 50 took frontiers in their own maps where others had been).
    #   Since robots start one a tile (MAES 2.0's spawn), one of the 50 stalled in the start
    #   room, within 1 m of one place from 10.3 s to 76.5 s with five robots around it; none
    #   since a robot passing through a hold's way no longer excuses one that stays in it.
    # - TRS ("The doubling misses traced"): 20 robots explored 98.3 %, 50 explored 94.0 %. A
    #   robot that made room in the crowd a second time now chooses its next subarea by TRS's
    #   weight, not the nearest frontier of its own: 98.6 %, no stall (the room still holds
    #   35 robots after 90 s). Since the holds changed: 20 robots 99.7 %, 50 robots 97.0 %
    #   (31 of them still in the room at 100 s, most with goals in their own maps' unseen
    #   corners of it). TRS's robots now share their maps over the radio ("TRS shares its
    #   map"): 20 robots 100.0 %, 50 robots 100.0 %, no stall.
    twenty, twenty_stalls = explored(20, logic, 2)
    fifty, fifty_stalls = explored(50, logic, 2)
    print(f"{logic} seed 2: 20 robots {twenty:.1f} %, 50 robots {fifty:.1f} %")
    assert fifty >= twenty - 2.0
    assert twenty_stalls == 0 and fifty_stalls <= stalls_of_fifty


@pytest.mark.slow
def test_a_second_space_cbba_robot_does_not_explore_what_the_first_explored():
    # 60x60 building, seed 0 (docs/scaling.md): each robot maps alone, and CBBA's robots bid
    # on areas the other had explored, still frontier in their own maps: 1 / 2 / 5 robots
    # explored 33.9 / 30.5 / 41.3 % in 2 minutes. Areas a robot explored are finished for all.
    shares = [explored(n, "maes_controller.algorithms.space_cbba:logic", 0) for n in (1, 2, 5)]
    print(f"SPACE CBBA, 1 / 2 / 5 robots: {shares}")
    (one, _), (two, _), (five, _) = shares
    assert two >= 1.5 * one
    assert five >= two - 2.0
    assert all(stalls == 0 for _, stalls in shares)


@pytest.mark.slow
@pytest.mark.parametrize(
    ("logic", "least"),
    [
        # a robot jammed by the crowd at the door drove to its task for 70 s within 1 m of one
        # place, its goal flipping between the area's frontier cells (each new goal restarted
        # the navigator's progress check). It now gives the task up after 30 s without
        # getting 2 m on. Open: since pauses under 10 s count (core/stalls.py), robots stall
        # here: one from the former, denser start (within 1 m of one place from 40.7 s to
        # 106.8 s, two robots near it), two from MAES 2.0's, one robot a tile
        # (docs/scaling.md#stalls); none since a robot whose every task lies in areas others
        # finished heads for unvisited ground (100.0 % explored, 97.2 % before). Since a robot
        # that holds its ground stood at the door again (robot 45 from 42.6 s, its task
        # switching between the room and beyond the door: 1 stall, 99.93 %), none since the
        # robot that goes first passes close in a long jam (99.96 %;
        # navigator.NavParams.jam_pass_after; 98.52 % since SPACE CBBA's bids on finished
        # areas ride in its broadcasts)
        ("maes_controller.algorithms.space_cbba:logic", 85.0),
        # ("Swarmbots' followers on a disc"): every 20 s the leader calls its followers to
        # spots 1.5 m from it, a circle that holds about a dozen robots; the 49 met in the
        # start room's crowd around it, and 3 robots stood there for more than a minute
        # (79.7 %). Now the spots fill a disc that grows with the team heard (70.3 %), and a
        # dispersing robot in a crowd takes its paths around the robots (84.8 %).
        ("maes_controller.algorithms.swarmbots:logic", 80.0),
    ],
    ids=["space_cbba", "swarmbots"],
)
def test_fifty_robots_in_a_start_room_with_one_door_do_not_stall(logic, least):
    # 60x60 building, seed 2 (docs/scaling.md): the start room's one door
    share, stalls = explored(50, logic, 2)
    print(f"{logic}, 50 robots, seed 2: {share:.1f} %, {stalls} stalls")
    assert stalls == 0
    assert share >= least


@pytest.mark.slow
@pytest.mark.parametrize(
    ("logic", "most"),
    [
        ("maes_controller.algorithms.space_grape:logic", 0),
        ("maes_controller.algorithms.swarmbots:logic", 0),
    ],
)
def test_fifty_robots_whose_goals_keep_changing_in_the_crowd_stall_no_more_than_measured(
    logic, most
):
    # 60x60 building, seed 0 (docs/scaling.md): SPACE GRAPE's robots inside the start cluster
    # got a new task every few ticks, Swarmbots' a new goal; each new goal restarted the
    # navigator's progress check, so a held robot never gave up. A goal that preempts another
    # now keeps the check, as Nav2's controller server does. Open: counted with their pauses
    # under 10 s (core/stalls.py), robots still waited in the former, denser start cluster for
    # more than a minute: SPACE GRAPE 2 (both out by 61.4 s), Swarmbots 10 (two still there at
    # the end). Started one a tile, as MAES 2.0 spawns them: SPACE GRAPE 1, Swarmbots none
    # (docs/scaling.md#stalls); both none now (docs/scaling.md, "Now"; Swarmbots 96.5 %
    # since its dispersing robots spread over the frontiers, 78.8 % before)
    share, stalls = explored(50, logic, 0)
    print(f"{logic}, 50 robots, seed 0: {share:.1f} %, {stalls} stalls")
    assert stalls <= most
    assert share >= 75.0


def cave(robots: int):
    """:func:`building`'s run on a 60x60 cave instead (the cave generator's defaults), as
    ``experiments/scaling.yaml``'s cave runs."""
    from maes_sim.core.config_schema import CaveConfig

    config = building(robots)
    return replace(config, map=replace(config.map, building_config=None, cave_config=CaveConfig()))


@pytest.mark.slow
@pytest.mark.parametrize("logic", [EXPLORER, TRS, "maes_controller.algorithms.space_cbba:logic"])
def test_on_a_cave_twice_the_robots_explore_no_less_and_get_there_sooner(logic):
    # seed 0 of docs/scaling.md's cave tables: 5, 10 and 20 robots after 2 minutes, and the
    # share after 1 minute
    runs = [direct.run(cave(n), logic, seed=0) for n in (5, 10, 20)]
    two = [float(r.exploration[-1]) for r in runs]
    one = [float(r.exploration[600]) for r in runs]  # after tick 600: 1 simulated minute
    print(f"{logic}: 5/10/20 robots explored {two} % after 2 min, {one} % after 1 min")
    assert all(r.ticks == 1200 and int(r.stats["stalls"]) == 0 for r in runs)
    assert two[1] >= two[0] - 2.0 and two[2] >= two[1] - 2.0
    # after 1 minute too, each doubling explores no less (less the target's 2 points: SPACE
    # CBBA's 10 and 20 robots both have the cave all but done, 99.3 and 99.1 %), and 20 robots
    # explore more than 5
    assert one[1] >= one[0] - 2.0 and one[2] >= one[1] - 2.0
    assert one[2] > one[0] or one[0] == 100.0


def larger(config, size: int = 75):
    """``config`` on a ``size`` x ``size`` map of the same kind (issue 36 sets 75x75 for 120)."""
    return replace(config, map=replace(config.map, width_in_tiles=size, height_in_tiles=size))


@pytest.mark.slow
def test_a_hundred_and_twenty_swarmbots_on_a_cave_spread_out_and_never_stall():
    # 75x75 cave, seed 0 (docs/scaling.md, "Swarmbots in a crowd"): every dispersing robot
    # took the frontier nearest to it once every frontier was within 5 m of a robot it heard,
    # chose again every second, and never sent again a goal the navigator had given up: 17
    # stalls, 99.2 % explored, 75.5 % after 1 minute. Now the spare robots spread over the
    # frontiers and keep the one they chose while it is one.
    result = direct.run(larger(cave(120)), "maes_controller.algorithms.swarmbots:logic", seed=0)
    share, minute = float(result.exploration[-1]), float(result.exploration[600])
    stalls = int(result.stats["stalls"])
    print(f"Swarmbots, 120 robots, 75x75 cave, seed 0: {share:.1f} % ({minute:.1f} % after 1 min)")
    assert result.ticks == 1200
    assert stalls == 0
    assert share >= 98.0 and minute >= 90.0


@pytest.mark.slow
def test_a_hundred_and_twenty_swarmbots_clear_a_door_used_both_ways():
    # 75x75 building, seed 3 (docs/scaling.md, "Swarmbots in a crowd: paths around the
    # robots"): a 2 m door south of the start hallway, robots going south through it while
    # others came north, each held by another: 2 stalls (99.5 %). A dispersing robot that
    # senses 6 robots or more now measures its paths around them, and takes a frontier on its
    # own side of a crowded door.
    result = direct.run(larger(building(120)), "maes_controller.algorithms.swarmbots:logic", seed=3)
    share, stalls = float(result.exploration[-1]), int(result.stats["stalls"])
    print(f"Swarmbots, 120 robots, 75x75 building, seed 3: {share:.1f} %, {stalls} stalls")
    assert result.ticks == 1200
    assert stalls == 0
    assert share >= 98.0


@pytest.mark.slow
@pytest.mark.parametrize(
    ("logic", "kind"),
    [(EXPLORER, "building"), (TRS, "cave"), (TRS, "building")],
    ids=["frontier_explorer-building", "trs-cave", "trs-building"],
)
def test_a_hundred_and_twenty_robots_explore_no_less_than_fifty(logic, kind):
    # issue 36's last doubling: 50 robots on a 60x60 map against 120 on a 75x75 one, seed 0
    # (docs/scaling.md, "Now": the frontier explorer 100.0 -> 99.8 % on the building, TRS
    # 100.0 -> 100.0 % on the cave; no stall in either). TRS's 120 robots on the building
    # stalled 3 times (a knot of robots in the start hallway, each holding for the ones beside
    # it) until the robot that goes first passed close in a long jam (docs/scaling.md#stalls)
    make = building if kind == "building" else cave
    runs = [direct.run(config, logic, seed=0) for config in (make(50), larger(make(120)))]
    shares = [float(r.exploration[-1]) for r in runs]
    print(f"{logic} on the {kind}: 50 robots {shares[0]:.1f} %, 120 robots {shares[1]:.1f} %")
    assert all(r.ticks == 1200 and int(r.stats["stalls"]) == 0 for r in runs)
    assert shares[1] >= shares[0] - 2.0


@pytest.mark.slow
def test_a_hundred_and_twenty_space_cbba_robots_explore_no_less_than_fifty_on_one_map():
    # issue 36's 50 -> 120 doubling on the same 75x75 building, seed 0 (docs/scaling.md, "Bids
    # on finished areas on the air"): 98.5 % with 50 robots, 94.4 % with 120 while bids on
    # finished areas stayed off the air (70 of the 120 crowded one room from 80 s on, each
    # sure it had won a finished area there); 98.6 % since
    logic = "maes_controller.algorithms.space_cbba:logic"
    runs = [direct.run(larger(building(n)), logic, seed=0) for n in (50, 120)]
    shares = [float(r.exploration[-1]) for r in runs]
    print(f"SPACE CBBA, 75x75 building: 50 robots {shares[0]:.2f} %, 120 robots {shares[1]:.2f} %")
    assert all(r.ticks == 1200 and int(r.stats["stalls"]) == 0 for r in runs)
    assert shares[1] >= shares[0] - 2.0


def left_after_30_s(config, seed: int) -> float:
    """Share of the team 3 m or more from its start after 30 s (300 ticks) of ``config``."""
    config = replace(config, end_criteria=replace(config.end_criteria, tick=300))
    start = Simulation(config, seed=seed).poses[:, :2]
    result = direct.run(config, EXPLORER, seed=seed)
    assert result.ticks == 300
    moved = np.hypot(*(result.sim.poses[:, :2] - start).T)
    return float((moved >= 3.0).mean())


@pytest.mark.slow
def test_fifty_robots_leave_a_packed_start():
    # 50 robots spawned together at the centre: after 30 s half or more are 3 m or more from
    # where they started (DISPERSED: the share reached so far, below the issue's 90 %)
    share = left_after_30_s(building(50), 0)
    print(f"50 robots: {share:.0%} 3 m or more from their start after 30 s")
    assert share >= DISPERSED


@pytest.mark.slow
def test_fifty_robots_leave_a_start_on_the_cave_as_the_issue_asks():
    # issue 36's dispersal target, 90 % of 50 robots 3 m out after 30 s, on the 60x60 cave
    # (seeds 0-4: 96, 96, 100, 94, 100 %; 96, 96, 100, 96, 100 % before a hold's robot that
    # stays in the way was a jam whoever passes by; 100, 90, 94, 78, 88 % from the former,
    # denser start)
    shares = [left_after_30_s(cave(50), seed) for seed in range(5)]
    print(f"50 robots on the cave, 3 m out after 30 s: {shares}")
    assert min(shares) >= 0.90


def test_the_explorer_s_cached_goal_check_answers_as_a_fresh_one(monkeypatch):
    """The frontier explorer checks every tick whether a robot that goes first announced a goal
    near its own; the answer is kept until a claim is heard or the goal or map changes, a "no"
    is brought up to date from the claims heard since, and each announced or passed point's cell
    is computed once. In a packed 20-robot start every kept or updated answer and every kept
    cell equals one computed afresh."""
    import maes_controller.algorithms.frontier_explorer as explorer

    check = explorer._outranked_near_goal
    calls = {"kept": 0, "updated": 0, "true": 0}
    from maes_controller.algorithms._common import (
        cells_of,
        remembered_points,
        trail_cells,
        trail_points,
    )

    def compared(memory, costmap, namespace):
        claimed = explorer._claim_cells(memory, costmap.grid)
        points = [(x, y) for x, y, _ in memory["claims"].values()]
        points += remembered_points(memory, "visited").tolist()
        assert list(map(tuple, claimed.tolist())) == cells_of(costmap.grid, points)
        trails = trail_cells(memory, costmap.grid)
        assert list(map(tuple, trails.tolist())) == cells_of(costmap.grid, trail_points(memory))
        fresh = dict(memory)
        kept = fresh.pop("outranked", None)
        answer = check(fresh, costmap, namespace)
        if kept is not None and kept[0] == fresh["outranked"][0]:
            calls["kept" if kept[1] == fresh["outranked"][1] else "updated"] += 1
        calls["true"] += answer
        got = check(memory, costmap, namespace)
        assert got == answer
        return got

    monkeypatch.setattr(explorer, "_outranked_near_goal", compared)
    direct.run(building(20, ticks=200), EXPLORER, seed=0)
    print(calls)
    # the cache was used, an answer was brought up to date, and both answers were seen
    assert calls["kept"] > 100 and calls["updated"] > 100 and calls["true"] > 0


def test_the_explorer_s_claim_cells_follow_the_map_s_origin_and_resolution():
    """The cells of the announced goals are kept per point, for one map geometry: a map with
    another origin or resolution gets them anew."""
    import maes_controller.algorithms.frontier_explorer as explorer
    from maes_controller.algorithms._common import cells_of, remember_point, remembered_points
    from maes_controller.navigation import GridMap

    memory = {"claims": {"robot1": (1.2, 3.4, 5.0)}}
    remember_point(memory, "visited", (1.2, 3.4), explorer.VISITED_LIMIT)
    for claims_heard, grid in enumerate(
        [
            GridMap(40, 40, 0.5, -10.0, -10.0),
            GridMap(40, 40, 0.5, -9.7, -10.0),
            GridMap(40, 40, 0.25, -9.7, -10.0),
            GridMap(40, 40, 0.5, -10.0, -10.0),
        ]
    ):
        memory["claims_heard"] = claims_heard
        memory["claims"][f"robot{claims_heard + 2}"] = (claims_heard - 0.3, 0.26, 1.0)
        remember_point(memory, "visited", (claims_heard - 0.3, 0.26), explorer.VISITED_LIMIT)
        claimed = explorer._claim_cells(memory, grid)
        points = [c[:2] for c in memory["claims"].values()]
        points += remembered_points(memory, "visited").tolist()
        assert list(map(tuple, claimed.tolist())) == cells_of(grid, points)


def test_the_explorer_s_kept_claim_cells_equal_cells_computed_afresh():
    """The cells the explorer keeps for the goals others announced (claims replaced per sender as
    the logic's loop does, the map's origin moving) and reads for the goals it remembers (the
    shared store, ``remembered_cells``: tested in maes_controller's test_remembered_points.py)
    equal ``cells_of`` of every point, in order, after every step."""
    import maes_controller.algorithms.frontier_explorer as explorer
    from maes_controller.algorithms._common import cells_of, remember_point, remembered_points
    from maes_controller.navigation import GridMap

    rng = np.random.default_rng(7)
    grids = [GridMap(40, 40, 0.5, -10.0, -10.0), GridMap(40, 40, 0.25, -9.7, -10.0)]
    memory = {"claims": {}}
    for step in range(400):
        grid = grids[(step // 100) % 2]
        kept = memory.get("point_cells")
        for _ in range(int(rng.integers(0, 4))):
            point = (round(float(rng.uniform(-10, 10)), 1), round(float(rng.uniform(-10, 10)), 1))
            sender = f"robot{int(rng.integers(0, 8))}"
            memory["claims"][sender] = (point[0] + 0.03, point[1] - 0.02, 1.0)
            if kept is not None:
                kept["claims"][sender] = None
                kept["new"].append(sender)
            memory["claims_heard"] = memory.get("claims_heard", 0) + 1
            remember_point(memory, "visited", point, 12)
        if step % 3:
            continue  # (claims heard over several ticks before the cells are asked for)
        cells = explorer._point_cells(memory, grid)["claims"]
        claimed = [c[:2] for c in memory["claims"].values()]
        assert list(cells) == list(memory["claims"])
        assert list(cells.values()) == cells_of(grid, claimed)
        remembered = cells_of(grid, remembered_points(memory, "visited"))
        claimed = explorer._claim_cells(memory, grid)
        assert claimed.dtype == np.float64 and not claimed.flags.writeable
        assert list(map(tuple, claimed.tolist())) == list(cells.values()) + remembered
    assert len(memory["claims"]) == 8 and len(remembered_points(memory, "visited")) == 12


def test_the_explorer_s_kept_fruitless_searches_answer_as_fresh_ones(monkeypatch):
    """A frontier search that found nothing is kept with the map and not made again from the
    same cell around the same robots: in a packed 30-robot start every search answered so is
    fruitless when made afresh."""
    import maes_controller.algorithms.frontier_explorer as explorer

    search = explorer._search
    answered = {"kept": 0, "searched": 0}

    def checked(robot, costmap, here, own, patient):
        fruitless = costmap.grid.derived("frontier explorer fruitless searches", lambda _g: set())
        kept = set(fruitless)
        found, claimed = search(robot, costmap, here, own, patient)
        if found is None and fruitless == kept:  # answered from the kept searches
            answered["kept"] += 1
            fruitless.clear()
            assert search(robot, costmap, here, own, patient)[0] is None
            fruitless.update(kept)
        else:
            answered["searched"] += 1
        return found, claimed

    monkeypatch.setattr(explorer, "_search", checked)
    direct.run(building(30, ticks=150), EXPLORER, seed=0)
    print(answered)
    assert answered["kept"] > 20 and answered["searched"] > 20


@pytest.mark.slow
def test_the_stall_table_s_script_counts_the_pauses_as_the_doc_gives_them(tmp_path):
    # docs/scaling.md#stalls: 50 SPACE CBBA robots on the 60x60 building, seed 2, started one a
    # tile (MAES 2.0's spawn), counted with a one tick, 5 s, 10 s (the simulator's own count,
    # checked inside) and no pause: 0 / 0 / 0 / 0 and 98.52 % explored since SPACE CBBA's bids
    # on finished areas ride in its broadcasts (the pauses are told apart below); 0 / 0 / 0 / 1
    # and 99.96 % since the robot that goes first passes close in a long jam; 0 / 1 / 1 / 3
    # and 99.93 % before it, since a hold's robot that stays in the way is a jam whoever passes
    # by (that stall: robot 45 at the start room's door, its CBBA task switching between the
    # room and the hallway every few seconds); 0 / 0 / 0 / 1 and 100.0 % before that; 0 / 1 /
    # 2 / 2 and 97.19 % before a robot whose every task lies in areas others finished headed
    # for unvisited ground.
    script = _experiment("stall_pauses")
    out = tmp_path / "stalls.csv"
    args = ["--logic", "space_cbba", "--robots", "50", "--seeds", "2", "--out", str(out)]
    assert script.main(args) == 0
    with out.open() as f:
        (row,) = list(csv.DictReader(f))
    counts = [int(row[f"stalls_{name}"]) for name in ("one_tick", "5s", "10s", "never")]
    assert counts == [0, 0, 0, 0]
    assert row["explored_pct"] == "98.52" and row["stalled_at_end_10s"] == "0"
    # the script's clocks tell the pauses apart: a robot driven in one place for 30 s, left
    # without a command for 7 s, then driven 35 s more stalls for the 10 s pause and no pause
    # (the 7 s do not restart its clock), not for a pause of one tick or of 5 s
    clocks = script._Clocks(np.zeros((1, 2)), 1.0, 600, 100, tick_s=0.1)
    for tick in range(1, 721):
        driven = not 300 < tick <= 370
        if driven:
            clocks.driven(0)
        clocks.update(tick, np.zeros((1, 2)), np.array([driven]), exploring=True)
    assert [clocks.clocks[name].count for name in script.PAUSES] == [0, 0, 1, 1]


def test_the_yielding_experiment_switches_the_navigators_yielding():
    # experiments/crowd_yielding.py (docs/scaling.md, "The start as MAES 2.0 spawns it"): a
    # variant reaches every robot's navigator; robots that do not yield touch far more often
    script = _experiment("crowd_yielding")
    with pytest.raises(ValueError, match="yield_margin takes a float, got 'wide'"):
        script.parse_variant("x:yield_margin=wide")
    with pytest.raises(ValueError, match="'speed=1' is not FIELD=VALUE with a NavParams field"):
        script.parse_variant("x:speed=1")
    rows = [script.run(v, 20, 30, 0, ticks=300) for v in ("default", "off:yield_to_robots=false")]
    print(rows)
    assert [row["variant"] for row in rows] == ["default", "off"]
    assert rows[1]["collisions"] > 3 * rows[0]["collisions"] > 0
    assert {"left_30s_pct", "explored_end_pct", "stalls"} <= set(rows[0])


@pytest.mark.slow
def test_robots_slowing_behind_robots_ahead_collide_less_leaving_a_packed_start():
    # NavParams.approach_time, off by default (docs/scaling.md, "Slowing behind a robot"): 50
    # frontier explorers leaving a packed start on the 60x60 building, 30 s, seeds 0-4, with
    # it (0.5 s, the hold's corridor 0.2 m ahead) against the default rule (full speed until
    # a robot is within 0.5 m of contact ahead, then stop). Measured: 58 collisions against
    # 104, 73 % of the robots 3 m out against 69 %
    script = _experiment("crowd_yielding")
    slowing = "slowing:approach_time=0.5,yield_lookahead=0.2"
    rows = {
        name: [script.run(variant, 50, 60, seed, ticks=300) for seed in range(5)]
        for name, variant in (("slowing", slowing), ("default", "default"))
    }
    hits = {name: sum(row["collisions"] for row in runs) for name, runs in rows.items()}
    out = {name: sum(row["left_30s_pct"] for row in runs) / 5 for name, runs in rows.items()}
    print(f"collisions {hits}, 3 m out after 30 s (mean %) {out}")
    assert hits["slowing"] <= 0.7 * hits["default"]
    assert out["slowing"] >= out["default"] - 3.0


def test_the_oracle_goals_lead_every_robot_out_of_the_start_on_the_true_map():
    # experiments/crowd_yielding.py --goals oracle (docs/scaling.md, "Leaving a packed start"):
    # one goal per robot, spaced, ORACLE_OUT_M of path from its own start and ORACLE_NEAR_M
    # from every start; with the yielding off nearly every robot gets 3 m out in 30 s
    from maes_sim.core.world.connectivity import path_steps

    script = _experiment("crowd_yielding")
    sim = Simulation(script.config(20, 30, 300), seed=0)
    goals = script.oracle_goals(sim)
    h, w = sim.walls.shape
    half = np.array([w / 2.0, h / 2.0])
    cells = np.floor(goals + half).astype(np.int64)  # tile 1 m in the default config
    gaps = np.hypot(*(goals[:, None, :] - goals[None, :, :]).transpose(2, 0, 1))
    assert gaps[~np.eye(len(goals), dtype=bool)].min() >= script.ORACLE_SPACING
    for robot, start in enumerate(np.floor(sim.poses[:, :2] + half).astype(np.int64)):
        steps = path_steps(~sim.walls, start)[cells[:, 1], cells[:, 0]]
        assert (steps >= script.ORACLE_NEAR_M).all(), steps
        assert steps[robot] >= script.ORACLE_OUT_M, (robot, steps[robot])
    row = script.run("off:yield_to_robots=false", 20, 30, 0, ticks=300, goals="oracle")
    assert row["goals"] == "oracle" and row["left_30s_pct"] >= 90.0, row
