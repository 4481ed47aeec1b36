"""``performance.threads``: validated like every key, and never changes a result."""

from __future__ import annotations

import numpy as np
import pytest

from maes_sim.core import Simulation, config_from_dict
from maes_sim.core.config import ConfigError


@pytest.mark.parametrize("bad", [0, -1, 1.5, "2", True, None, 257])
def test_bad_thread_counts_are_refused_naming_the_key(bad):
    with pytest.raises(ConfigError) as info:
        config_from_dict({"performance": {"threads": bad}})
    assert "performance.threads" in str(info.value)


def test_unknown_performance_key_is_refused():
    with pytest.raises(ConfigError, match="performance.thread"):
        config_from_dict({"performance": {"thread": 2}})


def _run(threads: int) -> tuple[bytes, bytes, bytes, float]:
    cfg = config_from_dict(
        {
            "number_of_robots": 40,
            "random_seeds": [3],
            "map": {"width_in_tiles": 50, "height_in_tiles": 50, "cave_config": {}},
            "robot_constraints": {"distribute_slam": True, "slam_update_interval_in_ticks": 2},
            "performance": {"threads": threads},
        }
    )
    sim = Simulation(cfg)
    rng = np.random.default_rng(0)
    for k in range(30):
        if k % 5 == 0:
            sim.set_velocities(rng.uniform(-2, 2, 40), rng.uniform(-1, 1, 40))
        sim.step()
    return (
        sim.poses.tobytes(),
        sim.slam_maps.tobytes(),
        sim.metrics.explored_tick.tobytes(),
        sim.exploration_percent,
    )


def test_two_threads_give_the_same_run_as_one():
    # numba's pool may hold a single thread here (NUMBA_NUM_THREADS=1): then the serial kernel
    # runs in both, and the test still checks that the key is accepted and changes nothing
    assert _run(2) == _run(1)
