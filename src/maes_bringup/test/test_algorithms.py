"""The shipped algorithms (maes_controller.algorithms) explore, in direct mode and on ROS."""

from __future__ import annotations

import json
import math
import os
import signal
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from maes_bringup.runners.direct import run
from maes_controller.algorithms import frontier_explorer, swarmbots, trs
from maes_sim.core import config_from_dict

REPO = Path(__file__).resolve().parents[3]
ALGORITHMS = [
    "maes_controller.algorithms.trs:logic",
    "maes_controller.algorithms.trs:logic_unpruned",
    "maes_controller.algorithms.swarmbots:logic",
    "maes_controller.algorithms.space_bt:logic",
    "maes_controller.algorithms.space_cbba:logic",
    "maes_controller.algorithms.space_grape:logic",
]


def small_map(kind: str, robots: int = 3, ticks: int = 2500):
    return config_from_dict(
        {
            "number_of_robots": robots,
            "end_criteria": {"exploration_percent": 95.0, "tick": ticks},
            "robot_constraints": {"slam_position_inaccuracy": 0.0, "distribute_slam": True},
            "robot_spawn_config": {"biggest_room": True},
            "map": {"width_in_tiles": 24, "height_in_tiles": 24, kind: {}},
        }
    )


@pytest.mark.parametrize("kind", ["cave_config", "building_config"])
@pytest.mark.parametrize("spec", ALGORITHMS)
def test_each_algorithm_explores_a_small_map_deterministically(spec, kind):
    cfg = small_map(kind)
    first = run(cfg, spec, seed=1)
    assert first.end_reason is not None and first.end_reason.startswith("exploration reached")
    assert first.exploration[-1] >= 95.0
    assert (first.distance > 1.0).all()  # every robot took part
    again = run(cfg, spec, seed=1)
    assert np.array_equal(first.exploration, again.exploration)
    assert np.array_equal(first.distance, again.distance)


def test_trs_pruning_needs_fewer_ticks_than_cell_by_cell_waypoints():
    cfg = small_map("cave_config", robots=2)
    ticks = {}
    for spec in ALGORITHMS[:2]:
        ticks[spec] = [len(run(cfg, spec, seed=s).exploration) for s in range(3)]
    pruned, unpruned = (sum(ticks[s]) for s in ALGORITHMS[:2])
    assert pruned < unpruned, ticks


def test_trs_subarea_choice_weighs_robots_approaching():
    from maes_controller.algorithms._common import MapView, area_labels
    from maes_controller.navigation import GridMap

    # A 1 x 40 corridor of free cells (1 m each) with unknown at both ends; the robot at x = 12.
    row = np.zeros((1, 40), dtype=np.int8)
    row[0, 0] = row[0, -1] = -1
    view = MapView(GridMap.from_array(row, 1.0), (12.5, 0.5))
    labels = area_labels(view, trs.SUBAREA_SIDE_M)
    allowed = np.ones_like(view.traversable)
    left = int(labels[0, 1])
    right = int(labels[0, 38])
    assert trs.choose_subarea(view, labels, {}, allowed) == left  # 11 m beats 26 m
    # two robots already heading left: 11 + 2 * ALPHA_M > 26
    assert trs.choose_subarea(view, labels, {left: 2}, allowed) == right
    assert trs.approaching_counts({"robot1": (left, 0), "robot2": (left, 500)}, now=520) == {
        left: 1
    }


@pytest.mark.parametrize("announced", [False, True])
def test_trs_leaves_a_subarea_another_robot_finished_to_it(announced):
    """A TRS robot explores the subarea it stands in first; once it hears that another robot
    finished that subarea (``f=`` in a TRS broadcast), it moves on to another one instead, as
    its own map still shows frontier there (each robot maps alone)."""
    from maes_controller.algorithms._common import MapView, area_labels

    shared: dict = {}
    decisions: list = []

    def explorer(robot):
        if "here" not in shared:
            view = MapView.of(robot)
            if view is None or view.robot_cell is None:
                return
            labels = area_labels(view, trs.SUBAREA_SIDE_M)
            shared["here"] = int(labels[view.robot_cell[1], view.robot_cell[0]])
            shared["tick"] = robot.tick
            shared["frontier_here"] = bool(view.reachable_frontier[labels == shared["here"]].any())
            return
        if robot.tick < shared["tick"] + 3:  # the announcer's broadcast reaches us first
            return
        trs.logic(robot)
        if "goal_cell" in robot.memory and not decisions:
            decisions.append((robot.memory["mode"], robot.memory["subarea"]))

    def announcer(robot):
        if "here" in shared:  # a goal off the map: it claims no frontier cell of robot0's
            field = f" f={shared['here']}" if announced else ""
            robot.broadcast_msg(f"trs exploration {shared['here']} 900.00 900.00 1.00{field}")

    cfg = config_from_dict(
        {
            "number_of_robots": 2,
            "end_criteria": {"tick": 40},
            "robot_constraints": {"slam_position_inaccuracy": 0.0, "broadcast_range": 1000.0},
            # together at the centre: robot0's subarea has frontier (biggest_room, MAES's
            # x-then-y order, puts it in a corner subarea it sees whole at the start)
            "robot_spawn_config": {"spawn_together": {}},
            "map": {"width_in_tiles": 40, "height_in_tiles": 40, "cave_config": {}},
        }
    )
    run(cfg, [explorer, announcer], seed=0)
    assert shared["frontier_here"], "robot0's own subarea has no frontier: nothing to test"
    assert decisions, "robot0 never chose a goal"
    mode, subarea = decisions[0]
    if announced:
        assert (mode, subarea != shared["here"]) == (trs.MOVING, True), decisions
    else:
        assert (mode, subarea) == (trs.EXPLORATION, shared["here"]), decisions


def test_trs_broadcasts_of_many_finished_subareas_fit_the_radio_and_send_each_in_turn():
    """A 200 m x 200 m map has 400 subareas: more finished ones than one 1024-byte broadcast
    holds. Each broadcast stays within the limit and every subarea goes out within a few
    broadcasts."""
    from maes_common.contract import MAX_MESSAGE_BYTES

    finished = {(ay + 1000) * 2000 + (ax + 1000) for ay in range(-10, 10) for ax in range(-10, 10)}
    head = "trs exploration 2000999 -95.50 -95.50 123.45"
    sent: set[int] = set()
    for tick in range(4):
        text = head + trs.finished_field(finished, MAX_MESSAGE_BYTES - len(head), tick)
        assert len(text.encode()) <= MAX_MESSAGE_BYTES
        assert trs.parse_message(text) == ("exploration", 2000999, -95.5, -95.5, 123.45)
        got = trs.parse_finished(text)
        assert got and got <= finished
        sent |= got
    assert sent == finished


def _first_goal_of_an_explorer_beside(
    announce: str | None, logic=frontier_explorer.logic
) -> tuple[float, float]:
    """The first goal robot0's explorer (the frontier explorer or TRS) takes, with robot1
    standing still and, from tick 2 on, broadcasting ``announce`` (robot0 chooses from tick 4
    on, after it)."""
    goals: list = []

    def explorer(robot):
        if robot.tick < 4:
            return
        logic(robot)
        memory = robot.memory
        if memory.get("goal") is not None and not goals:  # the frontier explorer's
            goals.append(memory["goal"])
        if memory.get("goal_cell") is not None and not goals:  # TRS's
            goals.append(robot.global_costmap.cell_to_pos(*memory["goal_cell"]))

    def announcer(robot):
        if announce is not None and robot.tick >= 2:
            robot.broadcast_msg(announce)

    cfg = config_from_dict(
        {
            "number_of_robots": 2,
            "end_criteria": {"tick": 12},
            "robot_constraints": {"slam_position_inaccuracy": 0.0, "broadcast_range": 1000.0},
            "robot_spawn_config": {"biggest_room": True},
            "map": {"width_in_tiles": 40, "height_in_tiles": 40, "cave_config": {}},
        }
    )
    run(cfg, [explorer, announcer], seed=0)
    assert goals, "robot0 never chose a goal"
    return goals[0]


def test_the_frontier_explorer_leaves_a_frontier_another_robot_passed_for_one_nobody_did():
    """Each robot maps alone: a frontier in its own map may lie where another robot already
    went. A trail point heard there (``frontier-trail x y``) sends it to another frontier."""
    alone = _first_goal_of_an_explorer_beside(None)
    passed = _first_goal_of_an_explorer_beside(
        f"{frontier_explorer.TRAIL_PREFIX} {alone[0]:.1f} {alone[1]:.1f}"
    )
    assert math.dist(alone, passed) > frontier_explorer.CLAIM_RADIUS_CELLS, (alone, passed)
    # a malformed trail broadcast is no trail: the same goal as alone
    assert _first_goal_of_an_explorer_beside(f"{frontier_explorer.TRAIL_PREFIX} 1.0") == alone


def test_trs_leaves_a_frontier_another_robot_passed_for_one_nobody_did():
    """TRS robots hear the same trails: a frontier cell near a trail point is taken only when
    every other one is."""
    alone = _first_goal_of_an_explorer_beside(None, trs.logic)
    passed = _first_goal_of_an_explorer_beside(
        f"{frontier_explorer.TRAIL_PREFIX} {alone[0]:.1f} {alone[1]:.1f}", trs.logic
    )
    assert math.dist(alone, passed) > trs.CLAIM_RADIUS_CELLS, (alone, passed)  # 1 m cells
    malformed = f"{frontier_explorer.TRAIL_PREFIX} 1.0"
    assert _first_goal_of_an_explorer_beside(malformed, trs.logic) == alone


def _trs_robot_in_a_crowd(prepare) -> dict:
    """robot0 runs TRS in a packed start (5 robots, ``spawn_together``; the others stand
    still). At robot0's first decision with robots around it, ``prepare(robot, view)`` may
    change its memory first. Returns robot0's memory after that decision."""
    from maes_controller.algorithms._common import MapView

    seen: dict = {}

    def explorer(robot):
        if "memory" in seen:
            return
        view = MapView.of(robot)
        if view is None or view.robot_cell is None or robot.tick < 3:
            return
        prepare(robot, view)
        trs.logic(robot)
        if robot.memory.get("waypoints") or robot.memory.get("done"):
            seen["memory"] = robot.memory
            seen["position"] = robot.robot_position
            seen["others"] = [(r.pos.x, r.pos.y) for r in robot.state.nearby_robots]

    cfg = config_from_dict(
        {
            "number_of_robots": 5,
            "end_criteria": {"tick": 80},
            "robot_constraints": {"slam_position_inaccuracy": 0.0, "broadcast_range": 1000.0},
            "robot_spawn_config": {"spawn_together": {}},
            "map": {"width_in_tiles": 40, "height_in_tiles": 40, "cave_config": {}},
        }
    )
    run(cfg, [explorer] + [lambda robot: None] * 4, seed=0)
    assert "memory" in seen, "robot0 never decided"
    return seen


@pytest.mark.parametrize("near_only", [True, False])
def test_trs_leaves_goals_that_failed_and_tries_them_again_when_nothing_else_is_left(near_only):
    """A goal the navigator gave up on (a crowd in the way) is left while other frontier is;
    when every frontier cell failed, the robot tries them again instead of stopping."""
    failed: list = []

    def frontier_failed(robot, view):
        if "failed" not in robot.memory:
            near = view.dist * view.resolution <= 6.0  # within 6 m of path
            cells = np.argwhere(view.frontier & (near if near_only else True))
            failed.extend((int(ix), int(iy)) for iy, ix in cells)
            assert failed and (not near_only or (view.reachable_frontier & ~near).any())
            robot.memory["failed"] = list(failed)

    memory = _trs_robot_in_a_crowd(frontier_failed)["memory"]
    assert not memory.get("done") and memory["waypoints"], memory.get("done")
    gx, gy = memory["goal_cell"]
    gap = min(math.hypot(gx - fx, gy - fy) for fx, fy in failed)
    if near_only:  # another frontier: the failed ones wait
        assert gap > trs.SKIP_RADIUS_CELLS, (memory["goal_cell"], gap)
        assert memory["failed"] == failed
    else:  # nothing else: tried again
        assert memory["failed"] == []


def test_trs_makes_room_in_a_crowd_when_every_frontier_is_announced():
    """With every frontier announced by others, a TRS robot in a crowd first drives where the
    robots it senses are farthest (then chooses again), as the frontier explorer does."""

    def every_frontier_announced(robot, view):
        robot.memory["claims"] = {
            f"robot{100 + k}": (*view.pos_of((int(ix), int(iy))), 0.0)
            for k, (iy, ix) in enumerate(np.argwhere(view.frontier))
        }

    seen = _trs_robot_in_a_crowd(every_frontier_announced)
    memory = seen["memory"]
    assert memory.get("spreading") and memory["sharing"], memory.get("mode")
    spot, here, others = memory["waypoints"][0], seen["position"], seen["others"]
    assert min(math.dist(spot, o) for o in others) > min(math.dist(here, o) for o in others)


def test_frontier_explorers_announce_their_way_every_few_metres():
    heard: dict = {}

    def explorer(robot):
        for message in robot.state.incoming_broadcast_msgs:
            if message.msg.startswith(frontier_explorer.TRAIL_PREFIX + " "):
                _, x, y = message.msg.split()
                heard.setdefault(message.sender, []).append((float(x), float(y)))
        frontier_explorer.logic(robot)

    cfg = config_from_dict(
        {
            "number_of_robots": 2,
            "end_criteria": {"tick": 400},
            "robot_constraints": {"broadcast_range": 1000.0},
            "map": {"width_in_tiles": 40, "height_in_tiles": 40, "building_config": {}},
        }
    )
    result = run(cfg, [explorer, explorer], seed=0)
    for sender, points in heard.items():
        steps = [math.dist(a, b) for a, b in zip(points, points[1:], strict=False)]
        # rounded to 0.1 m in the broadcast
        assert min(steps) >= frontier_explorer.TRAIL_STEP_M - 0.15, (sender, steps)
    driven = result.distance  # metres per robot; one point per 3 m driven at most
    assert sorted(heard) == ["robot0", "robot1"]
    for i, sender in enumerate(sorted(heard)):
        assert 2 <= len(heard[sender]) <= driven[i] / frontier_explorer.TRAIL_STEP_M + 1


def test_swarmbots_re_elect_a_leader_that_falls_silent(monkeypatch):
    monkeypatch.setattr(swarmbots, "STUCK_TICKS", 10**9)  # no robot declares itself dead here
    monkeypatch.setattr(swarmbots, "MAX_FAILURES", 10**9)
    states = {}

    def leader_then_silent(robot):
        if robot.tick < 100:
            swarmbots.logic(robot)
        elif not robot.is_nav_complete():
            robot.cancel_nav()

    def watched(robot):
        swarmbots.logic(robot)
        states.setdefault(robot.robot_id, []).append(robot.memory["state"])

    cfg = config_from_dict(
        {
            "number_of_robots": 3,
            "end_criteria": {"tick": 300},
            "robot_constraints": {"slam_position_inaccuracy": 0.0, "broadcast_range": 1000.0},
            "map": {"width_in_tiles": 24, "height_in_tiles": 24, "cave_config": {}},
        }
    )
    run(cfg, [leader_then_silent, watched, watched], seed=2)
    # robot0 led once they heard each other: robots 1 and 2 followed it ...
    assert states[1][10:100] == ["follow"] * 90 and states[2][10:100] == ["follow"] * 90
    # ... and LEADER_TIMEOUT ticks after it fell silent, robot1 leads and robot2 follows it.
    after = 100 + swarmbots.LEADER_TIMEOUT + 2
    assert set(states[1][after:]) == {"lead"}
    assert set(states[2][after:]) == {"follow"}


def test_a_big_teams_space_cbba_broadcasts_all_reach_the_radio(caplog, monkeypatch):
    """50 SPACE CBBA robots on a 60x60 building (the default config's keys, seed 1): within 500
    ticks a robot knows more areas, open or finished, than one 1024-byte broadcast holds. Its
    state then goes out in parts (``cbba @<first>..<last> ...``) and the simulator refuses none
    of them; before the parts, 137 of the 2,865 broadcasts of the first 300 ticks were refused
    (docs/algorithms.md)."""
    import yaml

    from maes_controller.algorithms import space_cbba

    sent = []
    plain = space_cbba.encode_part

    def encode_part(*args, **kwargs):
        text, following = plain(*args, **kwargs)
        sent.append(text)
        return text, following

    monkeypatch.setattr(space_cbba, "encode_part", encode_part)
    data = yaml.safe_load((REPO / "maes_config.yaml").read_text())
    data["number_of_robots"] = 50
    data["map"] = dict(data["map"], width_in_tiles=60, height_in_tiles=60)
    data["end_criteria"] = {"tick": 500, "exploration_percent": None, "coverage_percent": None}
    with caplog.at_level("WARNING"):
        run(config_from_dict(data), "maes_controller.algorithms.space_cbba:logic", seed=1)
    assert len(sent) > 4000
    parts = [t for t in sent if t.startswith("cbba @")]
    assert parts, "no state outgrew one broadcast: the test no longer tests the parts"
    assert max(len(t.encode()) for t in sent) <= 1024
    refused = [r.getMessage() for r in caplog.records if "refused" in r.getMessage()]
    assert refused == []


def test_swarmbots_take_another_goal_when_the_navigator_gives_one_up(monkeypatch):
    """A lone Swarmbot leads itself to the nearest frontier. With every goal given up after
    1.5 s (the navigator's ``goal_timeout``: ABORTED, as a crowd makes it), it takes another
    goal at once: the next frontier (the one given up is skipped), or the same place again
    (a follow spot, a recovery), each attempt's abort counting towards MAX_FAILURES. Before,
    the nearest frontier was most often the goal just given up, and a goal chosen again was
    never sent again: the robot stood for the rest of the run (a leader with 20 robots around
    it, 50 robots on the 75x75 building, seed 3)."""
    from maes_controller.navigation import NavParams

    plain = NavParams.from_config
    monkeypatch.setattr(
        NavParams,
        "from_config",
        lambda cfg, robot=0, **o: plain(cfg, robot, **{**o, "goal_timeout": 1.5}),
    )
    aborts, sent = [], []

    def watched(robot):
        status = robot.nav_status
        swarmbots.logic(robot)
        if status.name == "ABORTED":
            aborts.append(robot.tick)
            if not robot.nav_status.done:
                sent.append(robot.tick)  # a goal went out in the tick that saw the abort

    cfg = config_from_dict(
        {
            "number_of_robots": 1,
            "end_criteria": {"tick": 400},
            "robot_constraints": {"slam_position_inaccuracy": 0.0},
            "map": {"width_in_tiles": 24, "height_in_tiles": 24, "cave_config": {}},
        }
    )
    result = run(cfg, watched, seed=1)
    assert len(aborts) >= 5, aborts  # the short timeout gives goals up
    assert sent == aborts  # never left standing with a goal given up
    assert result.distance[0] > 10.0
    assert result.exploration[-1] > 60.0


def test_a_dispersing_swarmbot_in_a_crowd_takes_a_frontier_it_reaches_around_the_robots():
    """In a crowd (``swarmbots.CROWD_ROBOTS`` robots or more sensed) a dispersing Swarmbot
    measures its paths to the frontiers around the robots: a frontier behind a door full of
    robots costs the way around them, or is out of reach, so it takes one on its own side.
    Before, every dispersing robot measured its paths through the crowd, and robots on both
    sides of a door chose frontiers across it: the knot of 120 robots on the 75x75 building's
    seed 3 (docs/scaling.md)."""
    from maes_controller.algorithms._common import MapView
    from maes_controller.navigation import GridMap

    # 7 x 20 cells of 1 m: a wall at x = 10 with a door of 3 cells (y = 2..4); unknown at the
    # west end (x = 0) and east of x = 14. The robot at (8.5, 3.5).
    grid = np.zeros((7, 20), dtype=np.int8)
    grid[:, 10] = 100
    grid[2:5, 10] = 0
    grid[:, 0] = -1
    grid[:, 14:] = -1
    robot = (8.5, 3.5)
    door = [(x + 0.5, y + 0.5) for x in (10, 11) for y in (2, 3, 4)]  # six robots in the door
    plain = MapView(GridMap.from_array(grid, 1.0), robot)
    east = swarmbots._frontier_goal(plain, [], [])
    assert east is not None and east[0] > 10.0  # through the door: 5 m against 7 m west
    around = MapView(GridMap.from_array(grid, 1.0), robot, avoid=door)
    assert around.goes_around
    west = swarmbots._frontier_goal(around, [], [])
    assert west is not None and west[0] < 2.0
    # with robots that leave the door passable, it still goes through
    few = MapView(GridMap.from_array(grid, 1.0), robot, avoid=door[:2])
    assert few.goes_around
    assert swarmbots._frontier_goal(few, [], [])[0] > 10.0


def test_swarmbots_election_rule():
    heard = {0: ("dead", 50), 1: ("follow", 50), 3: ("lead", 10)}
    assert swarmbots.elect_leader(2, "follow", heard, now=55) == 1
    assert swarmbots.elect_leader(2, "follow", heard, now=200) == 2  # nobody heard lately
    assert swarmbots.elect_leader(2, "dead", {}, now=0) == 2


# --------------------------------------------------------------------------------- ROS stack
pytest_ros = pytest.mark.skipif(
    "rclpy" not in sys.modules and not os.environ.get("AMENT_PREFIX_PATH"),
    reason="ROS tests run in the pip environment (make test)",
)


@pytest_ros
@pytest.mark.parametrize(
    "spec",
    [
        "maes_controller.algorithms.trs:logic",
        "maes_controller.algorithms.swarmbots:logic",
        "maes_controller.algorithms.space_bt:logic",
        "maes_controller.algorithms.space_cbba:logic",
        "maes_controller.algorithms.space_grape:logic",
    ],
)
def test_each_algorithm_runs_on_the_ros_stack_with_maes_run(spec, tmp_path, maes_run_small):
    """The real ``maes_run`` (embedded ROS stack: sim, navigator and controller nodes, DDS)."""
    proc = maes_run_small(tmp_path, spec, ticks=400, spawn="biggest_room", size=24)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "Traceback" not in proc.stderr and "LogicError" not in proc.stderr
    (folder,) = (tmp_path / "results").iterdir()
    summary = json.loads((folder / "summary.json").read_text())
    assert summary["ticks"] == 400
    assert summary["final"]["exploration_percent"] > 60.0  # they explored, not just started


@pytest.mark.slow
@pytest_ros
def test_an_algorithm_runs_in_separate_controller_node_processes(tmp_path):
    """``maes_run --controllers none`` plus one ``controller_node -p logic:=...`` per robot."""
    cfg = tmp_path / "run.yaml"
    cfg.write_text(
        "number_of_robots: 2\n"
        "random_seeds: [1]\n"
        f"global_settings:\n  statistics_result_path: {tmp_path / 'results'}\n"
        "robot_constraints:\n  slam_position_inaccuracy: 0.0\n"
        "end_criteria:\n  tick: 300\n"
        "robot_spawn_config:\n  biggest_room: true\n"
        "map:\n  width_in_tiles: 24\n  height_in_tiles: 24\n  cave_config: {}\n"
        "results: {pictures: false}\n"
    )
    sim = subprocess.Popen(
        [
            str(REPO / "install" / "maes_bringup" / "lib" / "maes_bringup" / "maes_run"),
            *("--config", str(cfg), "--controllers", "none", "--real-time-factor", "0"),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    node = REPO / "install" / "maes_controller" / "lib" / "maes_controller" / "controller_node"
    logic = "maes_controller.algorithms.space_cbba:logic"
    controllers = [
        subprocess.Popen(
            [str(node), "--ros-args", "-p", f"robot_id:={i}", "-p", f"logic:={logic}"],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        for i in range(2)
    ]
    try:
        _, err = sim.communicate(timeout=600)
    finally:
        logs = []
        for proc in controllers:
            proc.send_signal(signal.SIGINT)  # Ctrl-C, as a user stops them
            logs.append(proc.communicate(timeout=60)[0])
    assert sim.returncode == 0, err[-3000:]
    for log in logs:
        assert "Traceback" not in log and "logic callback raised" not in log, log[-3000:]
    (folder,) = (tmp_path / "results").iterdir()
    summary = json.loads((folder / "summary.json").read_text())
    assert summary["ticks"] == 300 and summary["final"]["broadcasts_sent"] > 0
    assert summary["final"]["exploration_percent"] > 60.0
