"""Odometry estimate: exact without noise, seeded drift with noise."""

from __future__ import annotations

import numpy as np
import pytest

from maes_sim.core import commands as C
from maes_sim.core.motion import MotionParams, MotionState, advance_tick
from maes_sim.core.odometry import advance_odometry

OPEN = np.zeros((20, 80), dtype=bool)


def one_robot(x, y, heading):
    return MotionState.at_rest(np.array([[x, y]]), np.array([heading])), C.Commands.idle(1)


def test_odometry_without_noise_tracks_truth_and_draws_nothing():
    params = MotionParams.from_values(model="differential_drive")
    state, cmds = one_robot(40.0, 10.5, 0.4)
    est = np.array([[40.0, 10.5, 0.4]])
    rng = np.random.default_rng(1)
    rng_state = rng.bit_generator.state
    C.set_velocity(cmds, 0, 1.5, -0.7)
    for _ in range(30):
        res = advance_tick(state, cmds, OPEN, params)
        state, cmds = res.state, res.commands
        est = advance_odometry(est, res.odom_delta, 0.0, 0.0, rng)
    assert np.allclose(est[0, :2], state.positions[0], atol=1e-9)
    assert est[0, 2] == pytest.approx(state.headings[0], abs=1e-9)
    assert rng.bit_generator.state == rng_state


def test_odometry_noise_is_seeded_and_drifts():
    delta = np.tile([[0.3, 0.0, 0.05]], (200, 1))
    ests = []
    for _ in range(2):
        rng = np.random.default_rng(5)
        est = np.zeros((200, 3))
        for _ in range(50):
            est = advance_odometry(est, delta, 0.05, 0.1, rng)
        ests.append(est)
    assert np.array_equal(ests[0], ests[1])
    exact = np.zeros((1, 3))
    for _ in range(50):
        exact = advance_odometry(exact, delta[:1], 0.0, 0.0, None)
    err = np.hypot(*(ests[0][:, :2] - exact[0, :2]).T)
    assert 0.05 < err.mean() < 2.0  # drifts, but stays plausible for 15 tiles travelled
    assert np.ptp(ests[0][:, 2]) > 0.0  # each robot drew its own heading error
    with pytest.raises(ValueError, match="odometry_noise"):
        advance_odometry(est, delta, -1.0, 0.0, None)


def test_the_simulators_unchecked_step_is_advance_odometry():
    """``dead_reckon`` (the simulator's per-tick call, noises checked once) gives
    ``advance_odometry``'s poses to the bit and draws the same numbers."""
    from maes_sim.core.odometry import check_noises, dead_reckon

    delta = np.random.default_rng(2).normal(size=(6, 3))
    noises = np.array([0.0, 0.1, 0.2, 0.0, 0.05, 0.3])
    for odo, head in ((0.0, 0.0), (noises, 0.1), (0.0, noises)):
        a, b = np.random.default_rng(9), np.random.default_rng(9)
        est_a = est_b = np.zeros((6, 3))
        for _ in range(20):
            est_a = advance_odometry(est_a, delta, odo, head, a)
            est_b = dead_reckon(est_b.copy(), delta, odo, head, check_noises(6, odo, head), b)
        assert np.array_equal(est_a, est_b)
        assert a.bit_generator.state == b.bit_generator.state
    assert check_noises(6, 0.0, np.zeros(6)) is False
    with pytest.raises(ValueError, match="heading_noise"):
        check_noises(6, 0.0, np.zeros(5))
