"""``TagStore.nearby`` against a brute-force reading of its rule, with many ties.

The rule: each robot gets the tags within ``read_range``, in deposit order; with ``limit``, only
the ``limit`` nearest (ties: the earlier deposited), still in deposit order.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from maes_sim.core.tags import TagStore


def _brute(tag_xy: np.ndarray, robots: np.ndarray, read_range: float, limit: int | None):
    out = []
    for rx, ry in robots.tolist():
        near = []
        for k, (tx, ty) in enumerate(tag_xy.tolist()):
            d = math.hypot(tx - rx, ty - ry)
            if d <= read_range:
                near.append((d, k))
        if limit is not None:
            near = sorted(near)[:limit]  # nearest first, ties by deposit order
        out.append(sorted(k for _, k in near))
    return out


@pytest.mark.parametrize("seed", range(40))
def test_nearby_follows_its_rule(seed):
    rng = np.random.default_rng(seed)
    n, t = int(rng.integers(1, 25)), int(rng.integers(0, 150))
    store = TagStore(n)
    tag_xy = np.round(rng.uniform(0, 10, (t, 2)) * 2) / 2  # half-tile grid: equal distances
    for k, xy in enumerate(tag_xy):
        assert store.deposit(k % n, f"t{k}", xy, xy, 0) is None
        store.new_tick()
    robots = np.round(rng.uniform(0, 10, (n, 2)) * 2) / 2
    read_range = float(rng.uniform(0, 6))
    for limit in (None, int(rng.integers(1, 8))):
        got = [
            [int(tag.msg[1:]) for tag in tags] for tags in store.nearby(robots, read_range, limit)
        ]
        assert got == _brute(tag_xy, robots, read_range, limit)
