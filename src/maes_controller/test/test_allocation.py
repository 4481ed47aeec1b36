"""CBBA and GRAPE (maes_controller.algorithms.allocation): hand-made cases and oracles."""

from __future__ import annotations

import copy
import itertools
import math

import numpy as np
import pytest

from maes_controller.algorithms.allocation import (
    CbbaState,
    cbba_build_bundle,
    cbba_consensus,
    cbba_drop,
    grape_choice,
    grape_mutex,
    grape_satisfied,
    grape_utility,
    path_score,
)
from maes_controller.algorithms.space_cbba import decode as cbba_decode
from maes_controller.algorithms.space_cbba import encode as cbba_encode
from maes_controller.algorithms.space_cbba import encode_part as cbba_encode_part
from maes_controller.algorithms.space_grape import decode as grape_decode
from maes_controller.algorithms.space_grape import encode as grape_encode

LAM = 0.9


def world(agents, tasks):
    """Costs of a 2-D instance: agent positions and task positions, rewards 10."""
    start = [{t: math.dist(a, p) for t, p in tasks.items()} for a in agents]
    reward = dict.fromkeys(tasks, 10.0)

    def between(a, b):
        return math.dist(tasks[a], tasks[b])

    return start, between, reward


def run_cbba(start, between, reward, links, max_bundle, rounds=30, limit=None):
    """Synchronous CBBA: every round each agent builds, then hears its linked neighbours.

    ``limit``: the neighbours hear each agent's broadcast text of at most that many bytes
    (``space_cbba.encode_part``, its tasks in parts when they do not fit) instead of its state.
    """
    n = len(start)
    states = [CbbaState() for _ in range(n)]
    parts = [None] * n
    for now in range(1, rounds + 1):
        for i, st in enumerate(states):
            st.s[i] = now
            cbba_build_bundle(st, i, start[i], between, reward, lam=LAM, max_bundle=max_bundle)
        sent = [copy.deepcopy(st) for st in states]  # what each broadcast this round
        if limit is not None:
            for i, st in enumerate(states):
                text, parts[i] = cbba_encode_part(st, parts[i], limit)
                assert len(text.encode()) <= limit
                sent[i] = cbba_decode(text)
        for i, k in links:
            for receiver, sender in ((i, k), (k, i)):
                cbba_consensus(states[receiver], receiver, sender, sent[sender], now)
    return states


def sequential_greedy(start, between, reward, max_bundle):
    """The oracle CBBA converges to (Choi et al. 2009): a central greedy auction."""
    n = len(start)
    paths = [[] for _ in range(n)]
    free = set(reward)
    while free:
        best = None
        for i in range(n):
            if len(paths[i]) >= max_bundle:
                continue
            base = path_score(paths[i], start[i], between, reward, LAM)
            for t in sorted(free):
                for k in range(len(paths[i]) + 1):
                    trial = paths[i][:k] + [t] + paths[i][k:]
                    g = path_score(trial, start[i], between, reward, LAM) - base
                    if best is None or g > best[0]:
                        best = (g, i, t, k)
        if best is None:
            break
        _, i, t, k = best
        paths[i].insert(k, t)
        free.discard(t)
    return {t: i for i, p in enumerate(paths) for t in p}


def test_cbba_two_agents_two_tasks_each_gets_its_near_task():
    start, between, reward = world([(0, 0), (10, 0)], {1: (1, 0), 2: (9, 0)})
    a, b = run_cbba(start, between, reward, links=[(0, 1)], max_bundle=1, rounds=3)
    assert a.bundle == [1] and b.bundle == [2]
    assert a.z == b.z == {1: 0, 2: 1}
    assert a.y == b.y == pytest.approx({1: 10 * LAM, 2: 10 * LAM})


def test_cbba_outbid_task_and_everything_after_it_is_released():
    st = CbbaState(y={1: 5.0, 2: 4.0, 3: 3.0}, z={1: 0, 2: 0, 3: 0}, bundle=[1, 2, 3])
    st.path = [1, 2, 3]
    other = CbbaState(y={2: 9.0}, z={2: 1}, s={1: 5})
    cbba_consensus(st, 0, 1, other, now=5)
    assert st.bundle == [1] and st.path == [1]
    assert st.z == {1: 0, 2: 1}  # 3 was bid on with 2 in the bundle: its bid is void now
    assert st.s[1] == 5


def test_cbba_sender_saying_the_receiver_won_resets_a_stale_third_party_claim():
    # Table 1, sender k says i won; receiver i believes m won with older news than k's.
    st = CbbaState(y={7: 6.0}, z={7: 2}, s={2: 3})
    cbba_consensus(st, 0, 1, CbbaState(y={7: 6.0}, z={7: 0}, s={2: 4}), now=5)
    assert 7 not in st.z and 7 not in st.y
    # ... but keeps it when its own news of m is the fresher one.
    st = CbbaState(y={7: 6.0}, z={7: 2}, s={2: 9})
    cbba_consensus(st, 0, 1, CbbaState(y={7: 6.0}, z={7: 0}, s={2: 4}), now=5)
    assert st.z == {7: 2}


def test_cbba_a_dropped_task_spreads_as_no_winner():
    st = CbbaState(y={4: 2.0}, z={4: 1}, s={1: 1})
    sender = CbbaState(y={4: 2.0}, z={4: 1}, bundle=[4], path=[4], s={1: 2})
    cbba_drop(sender, 4)
    cbba_consensus(st, 0, 1, sender, now=3)
    assert st.z == {} and st.y == {}


@pytest.mark.parametrize("seed", range(12))
def test_cbba_converges_to_the_sequential_greedy_assignment(seed):
    rng = np.random.default_rng(seed)
    agents = [tuple(p) for p in rng.uniform(0, 20, (3, 2))]
    tasks = {t: tuple(p) for t, p in enumerate(rng.uniform(0, 20, (6, 2)))}
    start, between, reward = world(agents, tasks)
    # A line of agents (0-1-2): 0 and 2 only hear each other through 1.
    states = run_cbba(start, between, reward, links=[(0, 1), (1, 2)], max_bundle=2)
    want = sequential_greedy(start, between, reward, max_bundle=2)
    for st in states:
        assert st.z == want  # every agent agrees, on the greedy auction's result
    for i, st in enumerate(states):
        assert sorted(st.bundle) == sorted(t for t, a in want.items() if a == i)


def test_cbba_broadcast_round_trip_and_bad_messages():
    st = CbbaState(y={3: 1.25, 4: 2.0}, z={3: 0, 4: 2}, s={0: 7, 2: 5})
    back = cbba_decode(cbba_encode(st))
    assert (back.y, back.z, back.s) == (st.y, st.z, st.s)
    for bad in ("cbba {", "cbba []", 'cbba {"y": {}}', "frontier-goal 1 2", "cbba", "cbba 1:xa:2|"):
        assert cbba_decode(bad) is None


def test_cbba_bids_on_finished_tasks_ride_in_the_broadcast():
    """A finished task (``<task>:x<winner>:<bid>``) keeps its winner and bid on the air: robots
    left with only areas others finished bid on them, and without the bids every one of them
    believed it had won the same area (14 of 120 robots on one area of a 75x75 building)."""
    st = CbbaState(y={4: 0.5, 6: 2.0}, z={4: 3, 6: 1}, done={4, 5}, s={1: 9})
    text = cbba_encode(st)
    assert text == "cbba 4:x3:0.5;5:x:;6:1:2.0|1:9"
    back = cbba_decode(text)
    assert (back.y, back.z, back.done) == (st.y, st.z, st.done)
    # two robots that bid on the same finished area agree on one winner
    a = CbbaState(y={4: 0.5}, z={4: 0}, bundle=[4], path=[4], done={4}, s={0: 1})
    b = CbbaState(y={4: 0.8}, z={4: 1}, bundle=[4], path=[4], done={4}, s={1: 1})
    cbba_consensus(a, 0, 1, cbba_decode(cbba_encode(b)), now=2)
    cbba_consensus(b, 1, 0, cbba_decode(cbba_encode(a)), now=2)
    assert (a.z[4], b.z[4], a.bundle, b.bundle) == (1, 1, [], [4])


@pytest.mark.parametrize("seed", range(6))
def test_cbba_converges_when_its_broadcasts_carry_the_tasks_in_parts(seed):
    """More tasks than a broadcast holds (a big map): each broadcast carries the next part of
    the sender's tasks and says which ids it speaks for; CBBA still reaches the greedy auction's
    assignment, on a line of agents that relay each other's news."""
    rng = np.random.default_rng(seed)
    agents = [tuple(p) for p in rng.uniform(0, 20, (3, 2))]
    tasks = {100 + t: tuple(p) for t, p in enumerate(rng.uniform(0, 20, (12, 2)))}
    start, between, reward = world(agents, tasks)
    want = sequential_greedy(start, between, reward, max_bundle=4)
    whole = run_cbba(start, between, reward, links=[(0, 1), (1, 2)], max_bundle=4, rounds=2)
    assert len(cbba_encode(whole[1]).encode()) > 90  # a whole state would not fit
    states = run_cbba(
        start, between, reward, links=[(0, 1), (1, 2)], max_bundle=4, rounds=150, limit=90
    )
    for st in states:
        assert st.z == want
    for i, st in enumerate(states):
        assert sorted(st.bundle) == sorted(t for t, a in want.items() if a == i)


def test_a_cbba_round_of_parts_carries_every_task_once():
    """The parts of a state too big for one broadcast: each within the limit, their ranges
    consecutive from unbounded below to unbounded above, every task in exactly one, with its
    winner and bid; the round then starts again."""
    from maes_common.contract import MAX_MESSAGE_BYTES

    rng = np.random.default_rng(1)
    ids = sorted(int(t) for t in rng.choice(5000, 150, replace=False))
    st = CbbaState(
        y={t: float(rng.uniform(0, 500)) for t in ids},
        z={t: int(rng.integers(0, 120)) for t in ids[::2]},  # some bids without a winner
        s={a: 1000 + a for a in range(50)},
    )
    assert len(cbba_encode_part(st, None)[0].encode()) <= MAX_MESSAGE_BYTES
    seen, first, spans = {}, None, []
    while True:
        text, first = cbba_encode_part(st, first)
        assert len(text.encode()) <= MAX_MESSAGE_BYTES
        part = cbba_decode(text)
        spans.append(part.covers)
        lo, hi = part.covers
        assert all((lo is None or t >= lo) and (hi is None or t <= hi) for t in part.y)
        assert not set(part.y) & set(seen)
        seen.update(part.y)
        assert part.z == {t: w for t, w in st.z.items() if t in part.y}
        assert part.s  # the freshest timestamps ride along
        if first is None:
            break
    assert seen == {t: round(v, 6) for t, v in st.y.items()}
    assert spans[0][0] is None and spans[-1][1] is None and len(spans) >= 3
    assert all(a[1] + 1 == b[0] for a, b in itertools.pairwise(spans))
    assert cbba_encode_part(st, None) == cbba_encode_part(st, first)  # the round starts again


def test_a_big_teams_cbba_broadcast_fits_the_radio_with_every_task():
    """120 agents' timestamps and 40 tasks (a 120-robot run): the text stays within the radio's
    limit (it used to exceed it, and the simulator refused it); every task and the freshest
    timestamps are kept, the stalest left out."""
    from maes_common.contract import MAX_MESSAGE_BYTES

    rng = np.random.default_rng(0)
    st = CbbaState(
        y={t: float(rng.uniform(0, 500)) for t in range(100, 140)},
        z={t: int(rng.integers(0, 120)) for t in range(100, 140)},
        s={a: 1000 + 7 * a for a in range(120)},
    )
    text = cbba_encode(st)
    assert len(text.encode()) <= MAX_MESSAGE_BYTES
    back = cbba_decode(text)
    assert back.z == st.z and back.y == {t: round(v, 6) for t, v in st.y.items()}
    kept = sorted(back.s)
    assert len(kept) < 120 and kept == list(range(120 - len(kept), 120))  # the freshest
    assert all(back.s[a] == st.s[a] for a in kept)


def test_cbba_finished_areas_travel_in_parts_and_join_as_a_union():
    """Finished tasks (``<task>:x:``) ride in the parts of a state too big for one broadcast;
    a receiver that hears one round knows every one of them, and keeps those it knew."""
    rng = np.random.default_rng(2)
    ids = sorted(int(t) for t in rng.choice(5000, 80, replace=False))
    st = CbbaState(
        y={t: float(rng.uniform(0, 500)) for t in ids[:40]},
        z={t: int(rng.integers(0, 9)) for t in ids[:40]},
        done=set(ids[40:]),
    )
    receiver = CbbaState(done={7})
    first, parts = None, 0
    while True:
        text, first = cbba_encode_part(st, first, limit=200)
        assert len(text.encode()) <= 200
        part = cbba_decode(text)
        assert not part.done & set(part.y)  # nobody bid on these finished tasks
        cbba_consensus(receiver, 20, 1, part, now=parts)
        parts += 1
        if first is None:
            break
    assert parts >= 3
    assert receiver.done == st.done | {7}


def test_a_cbba_robot_leaves_areas_others_finished_while_it_has_others():
    """Each robot maps alone: an area another robot explored still shows frontier in this
    robot's map. Told it is finished, the robot drops it and takes the next one; when nothing
    else is left it goes there anyway."""
    from maes_controller.algorithms.space_bt import Task
    from maes_controller.algorithms.space_cbba import CbbaPlugin

    near, far = Task((1, 0), 10, 1.0, (1.0, 0.0)), Task((9, 0), 10, 9.0, (9.0, 0.0))
    robot = CbbaPlugin(0)
    assert robot.decide({1: near, 2: far}, now=0) == 1
    other = CbbaPlugin(1)
    other.explored({1})
    robot.receive(1, other.message(), now=1)
    assert robot.decide({1: near, 2: far}, now=1) == 2
    assert robot.state.done == {1} and 1 not in robot.state.bundle
    assert robot.decide({1: near}, now=2) == 1  # nothing else left to it


# ------------------------------------------------------------------------------------- GRAPE
def test_grape_utility_is_space_equation_1():
    assert grape_utility(12.0, 2.0, 3, 1.0) == pytest.approx(12 / 3 - 2 * 3)
    assert grape_utility(12.0, 2.0, 2, 2.0) == pytest.approx(12 / 2 - 2 * 4)


def test_grape_satisfaction_rule():
    reward, cost = {5: 10.0, 6: 10.0}, {5: 1.0, 6: 3.0}
    # alone on 6: 10 - 3 = 7 beats sharing 5 (10/2 - 1*2 = 3): satisfied
    assert grape_satisfied(0, {0: 6, 1: 5}, reward, cost, 1.0)
    # sharing 5 while 6 is free: not satisfied, and the choice is 6
    assert not grape_satisfied(0, {0: 5, 1: 5}, reward, cost, 1.0)
    assert grape_choice(0, {0: 5, 1: 5}, reward, cost, 1.0) == (6, 7.0)
    # an equally good task is no reason to move
    assert grape_satisfied(0, {0: 5}, {5: 10.0, 6: 10.0}, {5: 1.0, 6: 1.0}, 1.0)
    # a current task the agent no longer knows: unsatisfied while it knows any
    assert not grape_satisfied(0, {0: 9}, reward, cost, 1.0)
    assert grape_satisfied(0, {0: None}, {}, {}, 1.0)


def test_grape_with_a_switching_margin_moves_only_for_more_than_the_margin():
    reward, cost = {5: 10.0, 6: 10.0}, {5: 1.0, 6: 3.0}
    # sharing 5 gives 3, 6 alone 7: a gain of 4 moves the agent for a margin under 4 only
    assert not grape_satisfied(0, {0: 5, 1: 5}, reward, cost, 1.0, margin=3.9)
    assert grape_satisfied(0, {0: 5, 1: 5}, reward, cost, 1.0, margin=4.0)
    # the margin never keeps an agent on a task it no longer knows
    assert not grape_satisfied(0, {0: 9}, reward, cost, 1.0, margin=100.0)


def test_a_space_grape_robot_keeps_its_task_while_another_gains_less_than_the_margin():
    """A robot's path costs jump as a crowd jostles: it moves to another task only for more
    than SWITCH_MARGIN (docs/scaling.md, SPACE GRAPE in a crowd)."""
    import numpy as np

    from maes_controller.algorithms.space_bt import Task
    from maes_controller.algorithms.space_grape import SWITCH_MARGIN, GrapePlugin

    def tasks(cost_6: float) -> dict:
        return {5: Task((0, 0), 10, 5.0, (0.0, 0.0)), 6: Task((9, 0), 10, cost_6, (9.0, 0.0))}

    plugin = GrapePlugin(0, np.random.default_rng(0))
    assert plugin.decide(tasks(9.0), now=0) == 5  # its nearest task first (10 - 5 = 5)
    assert plugin.decide(tasks(5.0 - SWITCH_MARGIN + 0.5), now=1) == 5  # gains 2.5: stays
    evolution = plugin.evolution
    assert plugin.decide(tasks(5.0 - SWITCH_MARGIN - 0.5), now=2) == 6  # gains 3.5: moves
    assert plugin.evolution == evolution + 1


def test_grape_mutex_prefers_evolution_then_stamp():
    local = (4, 0.9, {0: 1})
    assert grape_mutex(local, [(3, 0.99, {0: 2})]) is local
    assert grape_mutex(local, [(4, 0.95, {0: 3})])[2] == {0: 3}
    assert grape_mutex(local, [(5, 0.0, {0: 4}), (4, 0.99, {0: 5})])[2] == {0: 4}
    assert grape_mutex(local, []) is local


@pytest.mark.parametrize("seed", range(8))
def test_grape_game_reaches_a_nash_stable_partition(seed):
    rng = np.random.default_rng(seed)
    n_agents, n_tasks = 5, 4
    reward = {t: float(rng.integers(5, 30)) for t in range(n_tasks)}
    cost = [{t: float(rng.uniform(0, 10)) for t in range(n_tasks)} for _ in range(n_agents)]
    partition = {}
    for _ in range(200):  # agents move one at a time until nobody wants to
        moved = False
        for i in range(n_agents):
            if not grape_satisfied(i, partition, reward, cost[i], 1.0):
                partition[i] = grape_choice(i, partition, reward, cost[i], 1.0)[0]
                moved = True
        if not moved:
            break
    assert not moved
    for i in range(n_agents):  # Nash stable: no agent gains by moving alone
        mine = grape_utility(
            reward[partition[i]],
            cost[i][partition[i]],
            sum(1 for t in partition.values() if t == partition[i]),
            1.0,
        )
        for t in range(n_tasks):
            if t != partition[i]:
                others = sum(1 for a, u in partition.items() if u == t and a != i)
                assert grape_utility(reward[t], cost[i][t], others + 1, 1.0) <= mine + 1e-12


def test_grape_broadcast_round_trip_and_bad_messages():
    assert grape_decode(grape_encode(7, 0.5, {0: 3, 2: None})) == (7, 0.5, {0: 3, 2: None})
    assert grape_decode(grape_encode(0, 0.1, {})) == (0, 0.1, {})
    bad_ones = ("grape {", 'grape {"r": 1}', "grape", "cbba {}", "grape 1 0.5", "grape 1 x 0003")
    for bad in (*bad_ones, "grape 1 0.5 003", "grape 1 0.5 00!3", "grape 1.5 0.5 0003"):
        assert grape_decode(bad) is None
    with pytest.raises(ValueError, match="cannot be broadcast"):
        grape_encode(1, 0.5, {0: 64**4})


@pytest.mark.parametrize("robots", [120, 240])
def test_a_big_teams_grape_broadcast_fits_the_radio(robots):
    """A big team's partition (tasks: area ids as area_labels numbers them, some robots without
    one, a few not in it) fits the radio's 1024 bytes and comes back whole; the random stamp
    exactly. (120 robots' took 1,600 bytes as JSON, and the simulator refused it.)"""
    from maes_common.contract import MAX_MESSAGE_BYTES

    rng = np.random.default_rng(3)
    partition = {a: int(rng.integers(0, 4_000_000)) for a in range(robots - 10)}
    for a in (5, 17, robots - 1):
        partition[a] = None
    for a in (3, 99):
        del partition[a]
    stamp = float(rng.random())
    text = grape_encode(12345, stamp, partition)
    assert len(text.encode()) <= MAX_MESSAGE_BYTES
    assert grape_decode(text) == (12345, stamp, partition)


@pytest.mark.parametrize("fresher", [(False, False), (True, False), (False, True)])
def test_cbba_same_news_leaves_a_task_as_it_is(fresher):
    """The consensus skips a task the sender reports exactly as the receiver knows it (same
    winner, same bid): Table 1 never resets such a task, and an update writes what is there."""
    from maes_controller.algorithms.allocation import _table1

    i, k, m = 0, 1, 2
    newer_m, older_m = fresher
    for z in (i, k, m, None):
        action = _table1(i, k, z, 4.5, z, 4.5, lambda a: newer_m, lambda a: older_m)
        assert action in ("leave", "update"), (z, action)
