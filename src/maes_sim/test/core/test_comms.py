import numpy as np
import pytest

from maes_sim.core.comms import (
    MAX_BROADCASTS_PER_TICK,
    MAX_MESSAGE_BYTES,
    CommsRule,
    Mailbox,
    SignalFunctionError,
    check_message,
    communication_groups,
)


def walls_with_column(h=8, w=12, col=6):
    walls = np.zeros((h, w), dtype=bool)
    walls[:, col] = True
    return walls


def test_range_rule_is_inclusive_and_directed_pairs_are_sorted():
    rule = CommsRule(3.0, False)
    pos = np.array([[1.0, 1.0], [4.0, 1.0], [4.0, 5.0], [9.0, 9.0]])
    ia, ib = rule.links(np.zeros((12, 12), bool), pos, np.random.default_rng(0))
    assert list(zip(ia.tolist(), ib.tolist(), strict=True)) == [(0, 1), (1, 0)]


def test_walls_block_only_when_configured():
    pos = np.array([[2.5, 3.5], [9.5, 3.5]])
    walls = walls_with_column()
    rng = np.random.default_rng(0)
    assert CommsRule(10.0, True).links(walls, pos, rng)[0].size == 0
    assert CommsRule(10.0, False).links(walls, pos, rng)[0].tolist() == [0, 1]


def test_senders_restrict_the_links():
    pos = np.array([[1.0, 1.0], [2.0, 1.0], [3.0, 1.0]])
    ia, ib = CommsRule(5.0, False).links(
        np.zeros((5, 5), bool), pos, np.random.default_rng(0), np.array([2])
    )
    assert ia.tolist() == [2, 2] and ib.tolist() == [0, 1]


def test_signal_function_gets_distances_and_must_return_bool():
    seen = []

    def fn(total, through):
        seen.append((round(total, 6), round(through, 6)))
        return through == 0.0

    pos = np.array([[2.5, 3.5], [9.5, 3.5], [2.5, 6.5]])
    ia, ib = CommsRule(1.0, False, fn).links(walls_with_column(), pos, np.random.default_rng(0))
    # range is ignored: 0<->2 are 3 tiles apart (> 1.0) yet linked, 0<->1 cross one wall tile
    assert list(zip(ia.tolist(), ib.tolist(), strict=True)) == [(0, 2), (2, 0)]
    assert (7.0, 1.0) in seen

    with pytest.raises(SignalFunctionError, match="must return a bool"):
        CommsRule(1.0, False, lambda t, w: "yes").links(
            walls_with_column(), pos, np.random.default_rng(0)
        )


def test_stochastic_signal_function_draws_from_the_given_rng_only():
    def coin(total, through, rng):
        return bool(rng.random() < 0.5)

    pos = np.random.default_rng(3).uniform(1, 5, size=(6, 2))
    rule = CommsRule(1.0, False, coin)
    a = rule.links(np.zeros((6, 6), bool), pos, np.random.default_rng(42))
    b = rule.links(np.zeros((6, 6), bool), pos, np.random.default_rng(42))
    assert all(np.array_equal(x, y) for x, y in zip(a, b, strict=True))
    assert 0 < a[0].size < 30  # some get through, some don't


def test_communication_groups_are_transitive_and_labelled_by_smallest_index():
    labels = communication_groups(6, np.array([5, 1, 3]), np.array([1, 2, 4]))
    assert labels.tolist() == [0, 1, 1, 3, 3, 1]


def test_message_checks_and_per_tick_limit():
    assert check_message("ok") is None
    assert "empty" in check_message("")
    assert "bytes" in check_message("é" * (MAX_MESSAGE_BYTES // 2 + 1))
    assert "str" in check_message(b"bytes")
    box = Mailbox(2)
    for _ in range(MAX_BROADCASTS_PER_TICK):
        assert box.post(0, "m") is None
    assert "already sent" in box.post(0, "m")
    assert box.post(1, "other robot is not limited by robot 0") is None
    box.deliver(np.array([0]), np.array([1]))
    assert len(box.inbox_of(1)) == MAX_BROADCASTS_PER_TICK
    assert box.inbox_of(0) == []
    assert box.post(0, "new tick, new budget") is None


def test_all_pairs_fast_path_equals_the_per_sender_path():
    rng = np.random.default_rng(5)
    walls = rng.random((20, 20)) < 0.25
    pos = rng.uniform(0, 20, size=(40, 2))
    for blocked in (True, False):
        rule = CommsRule(6.0, blocked)
        everyone = rule.links(walls, pos, np.random.default_rng(0))
        per_sender = rule.links(walls, pos, np.random.default_rng(0), np.arange(39))
        last = rule.links(walls, pos, np.random.default_rng(0), np.array([39]))
        merged = (
            np.concatenate([per_sender[0], last[0]]),
            np.concatenate([per_sender[1], last[1]]),
        )
        order = np.lexsort((merged[1], merged[0]))
        np.testing.assert_array_equal(everyone[0], merged[0][order])
        np.testing.assert_array_equal(everyone[1], merged[1][order])
        assert everyone[0].size > 0


def test_groups_match_a_plain_flood_fill_on_random_graphs():
    rng = np.random.default_rng(2)
    for _ in range(20):
        n = int(rng.integers(1, 60))
        m = int(rng.integers(0, 80))
        ia, ib = rng.integers(0, n, m), rng.integers(0, n, m)
        labels = communication_groups(n, ia, ib)
        adj = {i: set() for i in range(n)}
        for a, b in zip(ia.tolist(), ib.tolist(), strict=True):
            adj[a].add(b)
            adj[b].add(a)
        for i in range(n):  # the label is the smallest index reachable from i
            seen, todo = {i}, [i]
            while todo:
                for j in adj[todo.pop()] - seen:
                    seen.add(j)
                    todo.append(j)
            assert labels[i] == min(seen)


def test_inboxes_are_ordered_by_sender_and_counted():
    box = Mailbox(4)
    box.post(2, "from two")
    box.post(0, "from zero")
    box.post(2, "two again")
    box.deliver(np.array([0, 2, 2, 0]), np.array([1, 1, 3, 3]))
    assert [(m.sender, m.msg) for m in box.inbox_of(1)] == [
        ("robot0", "from zero"),
        ("robot2", "from two"),
        ("robot2", "two again"),
    ]
    assert box.total_sent == 3 and box.total_delivered == 6
    assert box.inbox_of(0) == [] and box.inbox_of(2) == []
