"""The radio models (issue 25): loss rates, bursts, latency, the budget, determinism.

Statistical checks go through the core's mailbox directly (thousands of broadcasts in
milliseconds), with fixed seeds: each bound is a few standard errors wide, so a correct model
fails it with a small, fixed probability that the seed makes either always or never.
"""

from __future__ import annotations

import numpy as np
import pytest

from maes_sim.core import Simulation, config_from_dict
from maes_sim.core.comms import Mailbox
from maes_sim.core.radio import Radio, RadioSettings


def _box(n: int, **settings) -> Mailbox:
    return Mailbox(n, Radio([RadioSettings(**settings)] * n, np.full(n, 10.0)))


def _star(n: int) -> tuple[np.ndarray, np.ndarray]:
    """Links from robot 0 to every other robot."""
    return np.zeros(n - 1, dtype=np.int64), np.arange(1, n, dtype=np.int64)


def test_bernoulli_delivered_share_is_within_3_standard_errors():
    p, n, rounds = 0.3, 11, 1000  # 1000 broadcasts to 10 receivers: 10,000 attempts
    box, rng = _box(n, model="bernoulli", loss_probability=p), np.random.default_rng(7)
    for _ in range(rounds):
        box.post(0, "x")
        box.deliver(*_star(n), None, rng)
    attempts = rounds * (n - 1)
    radio = box.radio
    assert (
        radio.delivered.sum() + radio.dropped.sum()
        == attempts
        == box.total_delivered + box.total_dropped
    )
    share = radio.delivered.sum() / attempts
    se = np.sqrt(p * (1 - p) / attempts)
    assert abs(share - (1 - p)) < 3 * se, (share, se)


def test_gilbert_elliott_losses_come_in_bursts_of_the_configured_mean_length():
    # mean burst 1 / b = 4 transmissions; bad share g / (g + b) = 0.2 -> loss 20 %
    g, b = 0.0625, 0.25
    n, ticks = 201, 100  # 200 links (robot 0 to each other robot), 20,000 transmissions
    box = _box(n, model="gilbert_elliott", good_to_bad_probability=g, bad_to_good_probability=b)
    rng = np.random.default_rng(3)
    lost = np.zeros((ticks, n - 1), dtype=bool)
    for t in range(ticks):
        box.post(0, "x")
        box.deliver(*_star(n), None, rng)
        got = np.zeros(n, dtype=bool)
        got[[i for i in range(1, n) if box.inbox_of(i)]] = True
        lost[t] = ~got[1:]
    # lengths of the runs of consecutive losses on each link (a run cut by the end counts)
    padded = np.zeros((ticks + 2, n - 1), dtype=int)
    padded[1:-1] = lost
    edges = np.diff(padded, axis=0).T.ravel()
    bursts = np.flatnonzero(edges == -1) - np.flatnonzero(edges == 1)
    # burst lengths are geometric with mean 1/b = 4 and sd sqrt(1-b)/b ~ 3.46; with ~1000
    # bursts (20,000 x 0.2 / 4) the standard error of the mean is ~0.11: 3 of them ~ 0.33 (the
    # bursts cut by the end of the 100 ticks shorten the mean by ~0.2 % only)
    se = np.sqrt(1 - b) / b / np.sqrt(bursts.size)
    assert bursts.size > 800
    assert abs(bursts.mean() - 1 / b) < 3 * se, (bursts.mean(), se)
    assert abs(lost.mean() - g / (g + b)) < 0.03  # the long-run loss g / (g + b) = 0.2
    # bursty, not independent: a Bernoulli loss of 20 % has mean bursts of 1 / 0.8 = 1.25
    assert bursts.mean() > 3


@pytest.mark.parametrize("k", [0, 1, 3])
def test_latency_k_delivers_exactly_k_ticks_later(k):
    box = _box(2, latency_ticks=k)
    link = (np.array([0]), np.array([1]))
    box.post(0, "hello")
    arrived_at = []
    for step in range(1, 8):
        box.deliver(*link)
        if [m.msg for m in box.inbox_of(1)] == ["hello"]:
            arrived_at.append(step)
    assert arrived_at == [1 + k]  # MAES 2.0's next tick, then k more; and only once
    assert box.radio.mean_latency() == 1 + k


def test_the_budget_drops_and_counts_the_sends_past_it():
    box = _box(3, max_messages_per_tick=2)
    for text in ("a", "b", "c", "d"):
        box.post(0, text)
    box.post(1, "e")
    box.deliver(np.array([0, 0, 1]), np.array([1, 2, 0]))
    assert [m.msg for m in box.inbox_of(1)] == ["a", "b"]
    assert [m.msg for m in box.inbox_of(0)] == ["e"]
    r = box.radio
    assert r.sent.tolist() == [4, 1, 0] and r.over_budget.tolist() == [2, 0, 0]
    assert r.dropped.tolist() == [4, 0, 0]  # 2 messages x 2 robots in range
    assert r.delivered.tolist() == [4, 1, 0] and r.received.tolist() == [1, 2, 2]
    box.post(0, "next tick")  # the budget is per tick
    box.deliver(np.array([0]), np.array([1]))
    assert [m.msg for m in box.inbox_of(1)] == ["next tick"]


def test_distance_loss_grows_with_distance():
    # 100 robots at 2 tiles and 100 at 8 tiles from robot 0 (range 10), 40 broadcasts
    n = 201
    box = _box(n, model="distance", loss_probability=0.0, distance_exponent=2.0)
    pos = np.zeros((n, 2))
    pos[1:101, 0], pos[101:, 0] = 2.0, 8.0
    rng = np.random.default_rng(1)
    got = np.zeros(n, dtype=np.int64)
    for _ in range(40):
        box.post(0, "x")
        box.deliver(*_star(n), pos, rng)
        got += [len(box.inbox_of(i)) for i in range(n)]
    near, far = got[1:101].sum() / 4000, got[101:].sum() / 4000
    # p(2) = 0.04, p(8) = 0.64: delivered shares 0.96 and 0.36 (standard errors <= 0.008)
    assert abs(near - 0.96) < 0.03 and abs(far - 0.36) < 0.03, (near, far)


_ALL_ON = {
    "number_of_robots": 4,
    "map": {"cave_config": {}, "width_in_tiles": 30, "height_in_tiles": 30},
    "robot_constraints": {"distribute_slam": True, "slam_sync_interval_in_ticks": 5},
    "communication": {
        "model": "bernoulli",
        "loss_probability": 0.3,
        "latency_ticks": 2,
        "max_messages_per_tick": 1,
    },
    "robot_types": {
        "bursty": {
            "communication": {
                "model": "gilbert_elliott",
                "good_to_bad_probability": 0.2,
                "bad_to_good_probability": 0.3,
            }
        },
        "near": {"communication": {"model": "distance", "loss_probability": 0.1}},
    },
    "team": [
        {"type": "default", "count": 2},
        {"type": "bursty", "count": 1},
        {"type": "near", "count": 1},
    ],
}


def _run_all_on(seed: int) -> tuple:
    sim = Simulation(config_from_dict(_ALL_ON), seed=seed)
    inboxes = []
    for t in range(40):
        sim.set_velocities(np.full(4, 1.0), np.array([0.3, -0.3, 0.5, -0.5]))
        for i in range(4):
            sim.broadcast(i, f"{i}@{t}")
            sim.broadcast(i, f"{i}@{t} over budget")
        sim.step()
        inboxes.append(
            [[m.msg for m in sim.robot_state(i).incoming_broadcast_msgs] for i in range(4)]
        )
    return inboxes, sim.snapshots, sim.slam_maps.tobytes(), sim.mailbox.radio.summary()


def test_same_seed_is_bit_identical_with_every_model_on():
    first, second = _run_all_on(5), _run_all_on(5)
    assert first == second
    inboxes, snapshots, _, summary = first
    assert summary["broadcasts_over_budget"] == [40, 40, 40, 40]
    assert sum(summary["broadcasts_dropped"]) > 0 and sum(summary["broadcasts_delivered"]) > 0
    assert snapshots[-1]["broadcast_latency_mean_ticks"] == 3.0  # 1 + latency_ticks
    assert summary["map_exchanges"] > 0
    assert not any("over budget" in m for tick in inboxes for box in tick for m in box)
    assert _run_all_on(6)[0] != first[0]  # the draws come from the seed


def test_a_dropped_map_exchange_is_not_merged():
    base = {
        "number_of_robots": 2,
        "map": {"cave_config": {}, "width_in_tiles": 30, "height_in_tiles": 30},
        "robot_constraints": {"distribute_slam": True, "slam_sync_interval_in_ticks": 1},
    }
    lossless = Simulation(config_from_dict(base), seed=1)
    lossless.step()
    assert (lossless.slam_maps[0] == lossless.slam_maps[1]).all()  # merged at the sync
    lost = Simulation(
        config_from_dict({**base, "communication": {"model": "bernoulli", "loss_probability": 1}}),
        seed=1,
    )
    lost.step()
    assert (lost.slam_maps[0] != lost.slam_maps[1]).any()  # each keeps its own
    assert lost.mailbox.radio.map_exchanges_dropped == lost.mailbox.radio.map_exchanges == 1
    assert lost.stats()["map_exchanges_dropped"] == 1


def test_a_snapshot_keeps_the_messages_in_flight_and_the_link_states():
    sim = Simulation(config_from_dict(_ALL_ON), seed=2)

    def drive(ticks: int) -> list:
        out = []
        for _ in range(ticks):
            sim.set_velocities(np.full(4, 1.0), np.array([0.3, -0.3, 0.5, -0.5]))
            for i in range(4):
                sim.broadcast(i, f"{i}@{sim.tick}")
            sim.step()
            out.append(
                [[m.msg for m in sim.robot_state(i).incoming_broadcast_msgs] for i in range(4)]
            )
        return out

    drive(10)
    assert sim.mailbox.in_flight() > 0  # latency 2: copies are on their way
    saved = sim.snapshot()
    first = drive(15), sim.mailbox.radio.summary()
    sim.restore(saved)
    assert (drive(15), sim.mailbox.radio.summary()) == first


@pytest.mark.parametrize("seed", range(6))
def test_the_compiled_models_decide_and_draw_as_the_python_models(seed):
    """kernels/radio.py against the models' own ``keep`` (the reference): a mixed team (the
    three lossy models, one with an exponent numpy does not special-case, and the range rule),
    attempts in any order with links used several times (several messages a tick, a SLAM map
    exchange), then the same outputs, the same generator state and the same Gilbert-Elliott
    link states, tick after tick."""
    setup = np.random.default_rng(100 + seed)
    n = 40
    settings = [
        RadioSettings("bernoulli", loss_probability=0.3),
        RadioSettings(
            "gilbert_elliott",
            good_to_bad_probability=0.3,
            bad_to_good_probability=0.4,
            loss_probability_good=0.1,
            loss_probability_bad=0.8,
        ),
        RadioSettings("distance", loss_probability=0.05, distance_exponent=(2.0, 1.7)[seed % 2]),
        RadioSettings(),
    ]
    team = [settings[k] for k in setup.integers(0, len(settings), n)]
    ranges = setup.uniform(3.0, 12.0, n)
    radios = [Radio(team, ranges) for _ in range(2)]
    radios[1].compiled = False
    rngs = [np.random.default_rng(seed), np.random.default_rng(seed)]
    for _tick in range(30):
        k = int(setup.integers(0, 400))
        senders = setup.integers(0, n, k)
        receivers = (senders + setup.integers(1, n, k)) % n
        if setup.random() < 0.5:  # sorted by link, as the mailbox sends them
            order = np.lexsort((receivers, senders))
            senders, receivers = senders[order], receivers[order]
        positions = setup.uniform(0.0, 20.0, (n, 2))
        kept = [r.keep(senders, receivers, positions, g) for r, g in zip(radios, rngs, strict=True)]
        np.testing.assert_array_equal(kept[0], kept[1])
        assert rngs[0].bit_generator.state == rngs[1].bit_generator.state
        a, b = (radios[i].exchange_links(senders, receivers, positions, rngs[i]) for i in range(2))
        np.testing.assert_array_equal(np.concatenate(a), np.concatenate(b))
    for m0, m1 in zip(*(r.models for r in radios), strict=True):
        if m0.name == "gilbert_elliott":
            np.testing.assert_array_equal(m0.bad, m1.bad)
            assert m0.bad.any() and not m0.bad.all()
    assert 0.2 < kept[0].mean() < 0.95  # losses happened, and deliveries
