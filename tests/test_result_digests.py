"""Every shipped config and algorithm gives the results it gave before a redesign, to the bit.

Each case runs direct mode (the lockstep twin of the ROS stacks, so the ROS runs follow from
``test_lockstep_runs``) for a fixed number of ticks and hashes what a researcher reads of a
run: every robot's true pose after every tick, each robot's SLAM map, the exploration and
coverage heatmaps, the statistics snapshots, distance and collisions. The hashes live in
``result_digests.json`` beside this file.

A change that is *meant* to change results (a bug fix, a new default) regenerates them, and
its commit says why::

    MAES_UPDATE_DIGESTS=1 scripts/with_env pytest tests/test_result_digests.py

A refactoring must leave the file untouched.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("maes_bringup.runners.direct")

from maes_bringup.runners.direct import run  # noqa: E402
from maes_common.contract import DEFAULT_LOGIC  # noqa: E402
from maes_sim.core import load_config  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
DIGESTS = Path(__file__).with_name("result_digests.json")

#: Statistics columns added after the digests were stored (the radio's counters).
RADIO_COLUMNS = (
    "broadcasts_dropped",
    "broadcasts_over_budget",
    "broadcast_latency_mean_ticks",
    "map_exchanges_dropped",
)
#: Statistics columns added after the digests were stored (issue 36's stalls, core/stalls.py):
#: hashed on their own under "stalls", so the other keys keep covering what they covered.
STALL_COLUMNS = ("stalls", "robots_stalled")
#: (case id, config file, logic spec, ticks). The explorer goes by the name every stack uses
#: for the default, so moving its module keeps the case.
ALG = "maes_controller.algorithms."
CASES = [
    ("default_explorer", "maes_config.yaml", DEFAULT_LOGIC, 700),
    ("cave75_explorer", "configs/cave_75.yaml", DEFAULT_LOGIC, 300),
    ("depot_explorer", "configs/custom_map_depot.yaml", DEFAULT_LOGIC, 300),
    ("maes2_example_explorer", "configs/maes2_example.yaml", DEFAULT_LOGIC, 300),
    ("cave30_random_walk", "experiments/cave_30.yaml", ALG + "random_walk:logic", 300),
    ("default_maes2_explorer", "maes_config.yaml", ALG + "maes2_explorer:logic", 300),
    ("cave30_space_grape", "experiments/cave_30.yaml", ALG + "space_grape:logic", 300),
    ("cave30_space_cbba", "experiments/cave_30.yaml", ALG + "space_cbba:logic", 300),
    ("default_swarmbots", "maes_config.yaml", ALG + "swarmbots:logic", 300),
    ("default_trs", "maes_config.yaml", ALG + "trs:logic", 300),
    # every model of the imperfect world on (noise, a lossy late budgeted radio, walkers)
    ("imperfect_explorer", "configs/imperfect_world.yaml", DEFAULT_LOGIC, 300),
    ("imperfect_space_cbba", "configs/imperfect_world.yaml", ALG + "space_cbba:logic", 300),
]


def _digest_of_run(config_file: str, logic: str, ticks: int) -> dict[str, str]:
    config = load_config(ROOT / config_file)
    poses = hashlib.sha256()

    def progress(sim) -> None:
        poses.update(np.ascontiguousarray(sim.poses, dtype=np.float64).tobytes())

    result = run(config, logic, max_ticks=ticks, progress=progress)
    sim = result.sim

    def h(*arrays) -> str:
        digest = hashlib.sha256()
        for array in arrays:
            array = np.ascontiguousarray(array)
            assert array.dtype != object, (
                "hash numbers, not Python objects (their bytes are addresses)"
            )
            digest.update(str(array.dtype).encode() + str(array.shape).encode())
            digest.update(array.tobytes())
        return digest.hexdigest()[:16]

    radio = sim.mailbox.radio
    if radio.simple:
        # The radio's columns (issue 25) came after the digests: with MAES 2.0's radio they are
        # checked to be the lossless radio's values, and left out of the hash, which covers
        # every column before them.
        for row in result.snapshots:
            lossless = {k: row[k] for k in RADIO_COLUMNS if k != "broadcast_latency_mean_ticks"}
            assert lossless == dict.fromkeys(lossless, 0), lossless
            assert row["broadcast_latency_mean_ticks"] in (0.0, 1.0)  # MAES 2.0: the next tick
        rows = [
            {k: v for k, v in row.items() if k not in RADIO_COLUMNS} for row in result.snapshots
        ]
        extra = {}
    else:  # a case made after them: every column, and the radio's per-robot counters
        rows = result.snapshots
        extra = {"radio": hashlib.sha256(json.dumps(radio.summary()).encode()).hexdigest()[:16]}
    stalls = [{k: row[k] for k in STALL_COLUMNS} for row in rows]
    rows = [{k: v for k, v in row.items() if k not in STALL_COLUMNS} for row in rows]
    stats = json.dumps(rows, sort_keys=True, default=repr)
    return {
        **extra,
        "ticks": str(result.ticks),
        "poses": poses.hexdigest()[:16],
        "slam_maps": h(sim.slam_maps),
        "heatmaps": h(sim.exploration_heatmap(), sim.coverage_heatmap()),
        "statistics": hashlib.sha256(stats.encode()).hexdigest()[:16],
        "distance_collisions": h(result.distance, result.collisions),
        "stalls": hashlib.sha256(json.dumps(stalls).encode()).hexdigest()[:16],
        "messages_tags": "/".join(
            str(n)
            for n in (result.broadcasts_sent, result.broadcasts_delivered, result.tags_deposited)
        ),
    }


@pytest.mark.parametrize(
    ("case", "config_file", "logic", "ticks"), CASES, ids=[c[0] for c in CASES]
)
def test_results_are_unchanged(case, config_file, logic, ticks):
    got = _digest_of_run(config_file, logic, ticks)
    stored = json.loads(DIGESTS.read_text()) if DIGESTS.exists() else {}
    if os.environ.get("MAES_UPDATE_DIGESTS") == "1":
        stored[case] = got
        DIGESTS.write_text(json.dumps(stored, indent=2, sort_keys=True) + "\n")
        return
    assert case in stored, f"no stored digest for {case}: run with MAES_UPDATE_DIGESTS=1 once"
    differing = {k: (stored[case].get(k), v) for k, v in got.items() if stored[case].get(k) != v}
    assert not differing, f"{case}: results changed (stored, now): {differing}"
