"""The simulator's lockstep bookkeeping (ROS-free): the running cmd_vel totals always equal a
recount over the active participants, whatever order reports, drops and leaves come in."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from maes_common.lockstep import JOIN, LEAVE, Barrier

N = 4
_event = st.one_of(
    st.tuples(
        st.just("report"),
        st.sampled_from("abc"),
        st.integers(JOIN, 6),
        st.lists(st.integers(0, N), min_size=1, max_size=3, unique=True),
        st.integers(0, 9),
    ),
    st.tuples(st.just("leave"), st.sampled_from("abc")),
    st.tuples(st.just("drop"), st.integers(0, 6)),
)


def _recount(b: Barrier) -> np.ndarray:
    total = np.zeros(N, dtype=np.int64)
    for p in b.participants.values():
        if not p.dropped:
            np.add.at(total, p.robots, p.cmd_vel_sent)
    return total


@settings(max_examples=300, deadline=None)
@given(st.lists(_event, max_size=40))
def test_running_totals_equal_a_recount(events):
    b = Barrier(N)
    for event in events:
        if event[0] == "report":
            _, name, tick, robots, sent = event
            b.report(name, tick, robots, [sent] * len(robots))
        elif event[0] == "leave":
            b.report(event[1], LEAVE, [], [])
        else:
            b.drop_late(event[1])
        assert np.array_equal(b.expected_cmd_vel(), _recount(b))


def test_counts_never_go_back_and_a_dropped_participant_rejoins_by_reporting():
    b = Barrier(2)
    b.report("nav", 3, [0, 1], [5, 2])
    b.report("nav", 2, [0, 1], [4, 1])  # an older report, overtaken: ignored
    assert b.expected_cmd_vel().tolist() == [5, 2]
    assert b.drop_late(4) == ["nav"] and b.expected_cmd_vel().tolist() == [0, 0]
    b.report("nav", 4, [0, 1], [6, 2])
    assert b.expected_cmd_vel().tolist() == [6, 2] and b.ready(4, np.array([6, 2]))
