"""The simulator node's pacing and lockstep waiting (maes_sim.ros.stepping), on a clock the test
moves: no ROS, no sleeping, the same answer on any machine."""

from __future__ import annotations

import doctest
import math

import pytest

from maes_sim.ros import stepping
from maes_sim.ros.stepping import (
    BURST_TICKS,
    LAG_WARNING_S,
    LOCKSTEP_SLACK_S,
    LateWatch,
    Pacer,
)


def free_run(pacer: Pacer, wall: list[float], cost: float, tick: int = 0) -> list[int]:
    """The simulator node's free stepping (SimNode._advance_free) at the wall times ``wall``,
    each step taking ``cost`` wall seconds: the tick reached after each timer call."""
    reached = []
    for now in wall:
        if pacer.unpaced:
            tick += 1
        else:
            due, steps = pacer.due_tick(now), 0
            while tick < due and steps < BURST_TICKS:
                tick, steps = tick + 1, steps + 1
                pacer.record(now + steps * cost, tick)
            if due - tick > 0 and steps == BURST_TICKS:
                pacer.anchor(now, tick)  # behind: what was missed is dropped
        reached.append(tick)
    return reached


def test_a_free_run_keeps_the_speed_asked_for():
    # 100 ms ticks at 2x: 20 ticks a wall second, whatever the timer's rhythm
    pacer = Pacer(0.1, 2.0, now=100.0, tick=0)
    wall = [100.0 + 0.02 * k for k in range(1, 151)]  # 3 s of a 20 ms timer
    reached = free_run(pacer, wall, cost=0.0)
    assert reached[-1] == 60
    assert reached[49] == 20  # after 1 s
    assert pacer.achieved == pytest.approx(2.0, rel=0.05)


def test_a_free_run_that_cannot_keep_up_drops_time_instead_of_bursting():
    # asked for 100x (1000 ticks a second); the timer comes every 20 ms: 20 ticks due a call,
    # at most BURST_TICKS taken, the rest dropped (re-anchored), never caught up later
    pacer = Pacer(0.1, 100.0, now=0.0, tick=0)
    reached = free_run(pacer, [0.02 * k for k in range(1, 11)], cost=0.0)
    assert reached == [BURST_TICKS * k for k in range(1, 11)]


def test_the_lag_warning_comes_at_most_every_few_seconds_and_only_when_lagging():
    pacer = Pacer(0.1, 10.0, now=0.0, tick=0)
    assert not pacer.lag_warning_due(1.0)  # no speed measured yet
    pacer.record(1.0, 10)  # 10 ticks in 1 s: 1x of the 10x asked for
    assert pacer.achieved == pytest.approx(1.0)
    assert pacer.lag_warning_due(1.0)
    assert not pacer.lag_warning_due(1.0 + LAG_WARNING_S / 2)
    assert pacer.lag_warning_due(1.0 + LAG_WARNING_S + 0.1)
    fast = Pacer(0.1, 1.0, now=0.0, tick=0)
    fast.record(1.0, 10)  # 1x of 1x asked for
    assert not fast.lag_warning_due(2.0)


def test_the_achieved_speed_is_measured_over_the_last_seconds():
    pacer = Pacer(0.1, 0.0, now=0.0, tick=0)
    for k in range(1, 101):  # 10 s at 5 ticks a second (0.5x) ...
        pacer.record(0.2 * k, k)
    assert pacer.achieved == pytest.approx(0.5)
    for k in range(1, 81):  # ... then 4 s at 20 ticks a second (2x): the old pace is forgotten
        pacer.record(20.0 + 0.05 * k, 100 + k)
    assert pacer.achieved == pytest.approx(2.0, rel=0.05)


def test_lockstep_steps_are_capped_and_never_caught_up_in_a_burst():
    pacer = Pacer(0.1, 1.0, now=0.0, tick=0)  # a tick every 100 ms at most
    assert not pacer.lockstep_due(0.05, 0)
    assert pacer.lockstep_due(0.1, 0)
    # the participants were slow: tick 1 went at 2.0 s, far behind its 0.2 s schedule; the
    # next may not follow at once, but 100 ms after it (before, 200 ms: the schedule was
    # anchored at the tick before the late step)
    assert pacer.lockstep_due(2.0, 1)
    assert not pacer.lockstep_due(2.05, 2)
    assert pacer.lockstep_due(2.1, 2)
    # a step a little late (within the slack) keeps the schedule
    assert pacer.lockstep_due(2.2 + LOCKSTEP_SLACK_S / 2, 3)
    assert pacer.lockstep_due(2.3, 4)


def test_unpaced_and_a_speed_changed_mid_run():
    pacer = Pacer(0.1, 0.0, now=0.0, tick=0)
    assert pacer.unpaced and pacer.lockstep_due(0.0, 0)
    assert pacer.timer_period(lockstep=False) == 0.0
    assert pacer.timer_period(lockstep=True) == stepping.MAX_TIMER_PERIOD_S
    pacer.set_rate(0.5, now=10.0, tick=40)  # 5 ticks a second from tick 40 at 10 s on
    assert pacer.due_tick(11.0) == 45
    assert pacer.timer_period(lockstep=False) == stepping.MAX_TIMER_PERIOD_S
    slow = Pacer(1.0, 100.0, now=0.0, tick=0)
    assert slow.timer_period(lockstep=True) == pytest.approx(0.01)
    for bad in (-1.0, math.nan, math.inf):
        with pytest.raises(ValueError, match="real_time_factor must be a number >= 0"):
            pacer.set_rate(bad, now=0.0, tick=0)
    assert pacer.real_time_factor == 0.5  # a refused speed changes nothing


def test_a_waiting_tick_looks_at_the_graph_every_second_and_warns_every_timeout():
    watch = LateWatch(sync_timeout=10.0, graph_check_s=1.0, now=50.0)
    checks = [t / 10 for t in range(250) if watch.graph_check_due(50.0 + t / 10)]
    assert checks == pytest.approx([float(k) for k in range(1, 25)])
    watch.restart(50.0)
    warnings = [t for t in range(35) if watch.warning_due(50.0 + t)]
    assert warnings == [10, 20, 30]
    assert watch.waited(62.5) == pytest.approx(12.5)
    watch.restart(100.0)  # a step: the next tick's wait starts afresh
    assert not watch.warning_due(105.0) and watch.warning_due(110.0)


def test_a_short_sync_timeout_also_shortens_the_graph_checks_and_zero_never_looks():
    watch = LateWatch(sync_timeout=0.25, graph_check_s=1.0, now=0.0)
    assert watch.interval == 0.25 and watch.graph_check_due(0.25)
    assert not LateWatch(sync_timeout=0.0, graph_check_s=1.0, now=0.0).active


def test_docstring_examples():
    assert doctest.testmod(stepping).failed == 0
