"""One name per metric, and a metric added in one place reaches every table."""

from __future__ import annotations

import csv
import json
import subprocess
import sys
from pathlib import Path

from maes_sim.core import (
    Simulation,
    canonical_metric_name,
    config_from_dict,
    registered_metrics,
)
from maes_sim.core.metrics import SNAPSHOT_COLUMNS

SRC = Path(__file__).resolve().parents[3]
STATS_MSG = SRC / "maes_interfaces" / "msg" / "Stats.msg"
FORMER = {"messages_sent", "messages_delivered", "messages_broadcast", "total_collisions"}


def test_the_snapshot_is_the_registry_in_order():
    names = [spec.name for spec in registered_metrics()]
    assert len(set(names)) == len(names)
    assert SNAPSHOT_COLUMNS[: 2 + len(names)] == ("tick", "sim_time", *names)
    sim = Simulation(config_from_dict({"number_of_robots": 2, "end_criteria": {"tick": 3}}))
    sim.run()
    assert tuple(sim.stats()) == SNAPSHOT_COLUMNS
    assert not FORMER & set(SNAPSHOT_COLUMNS)


def test_former_names_map_to_the_one_name():
    assert canonical_metric_name("messages_sent") == "broadcasts_sent"
    assert canonical_metric_name("messages_broadcast") == "broadcasts_sent"
    assert canonical_metric_name("messages_delivered") == "broadcasts_delivered"
    assert canonical_metric_name("exploration_percent") == "exploration_percent"


def test_the_stats_message_uses_the_registry_names():
    fields = {}
    for line in STATS_MSG.read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            kind, name = line.split()[:2]
            fields[name] = kind
    names = {spec.name for spec in registered_metrics()}
    # Every numeric field but the run's own facts is a registered metric, by its one name
    # (stats_to_msg fills them by name).
    numeric = {n for n, k in fields.items() if k in ("float64", "int64", "int32", "uint64")}
    assert numeric - {"tick", "real_time_factor", "number_of_robots"} <= names
    assert {"broadcasts_sent", "tags_deposited", "collisions", "exploration_percent"} <= numeric
    assert not FORMER & set(fields)


_ADD_A_METRIC = """
import json, sys
from maes_sim.core import MetricInputs, Simulation, config_from_dict, metric, write_run_results

@metric("robots_touching", "count", "robots touching a wall or a robot now")
def robots_touching(m: MetricInputs) -> int:
    return int(m.sim.colliding.sum())

cfg = config_from_dict({"number_of_robots": 3, "end_criteria": {"tick": 4},
                        "global_settings": {"should_write_csv_results": True}})
sim = Simulation(cfg)
sim.set_velocities([3.0] * 3, [0.0] * 3)
sim.run()
out = write_run_results(sim, sys.argv[1], "run")
print(json.dumps({"value": sim.stats()["robots_touching"], "truth": int(sim.colliding.sum())}))
"""


def test_a_registered_metric_reaches_the_snapshot_the_csv_and_the_summary(tmp_path):
    # In a subprocess: registering changes the process's registry for good.
    done = subprocess.run(
        [sys.executable, "-c", _ADD_A_METRIC, str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    got = json.loads(done.stdout.strip().splitlines()[-1])
    assert got["value"] == got["truth"]
    with open(tmp_path / "run" / "statistics.csv", newline="") as fh:
        rows = list(csv.DictReader(fh))
    assert "robots_touching" in rows[0] and rows[-1]["robots_touching"] == str(got["truth"])
    summary = json.loads((tmp_path / "run" / "summary.json").read_text())
    assert summary["final"]["robots_touching"] == got["truth"]


def test_the_stats_message_carries_each_metric_under_its_name():
    import pytest

    pytest.importorskip("rclpy", reason="ROS messages need the pip environment")
    from maes_sim.ros import conversions as cv

    sim = Simulation(config_from_dict({"number_of_robots": 3, "end_criteria": {"tick": 6}}))
    sim.set_velocities([2.0, 2.0, 2.0], [0.0, 0.5, -0.5])
    for k in range(6):
        sim.broadcast(k % 3, f"hello {k}")
        sim.step()
    row = sim.stats(explore_bench=False)
    radio = sim.mailbox.radio
    msg = cv.stats_to_msg(row, sim.sim_time, sim.metrics.distance, 0.5, 1.0, sim.finished, radio)
    assert msg.broadcasts_sent == row["broadcasts_sent"] == 6
    # the radio's counters (issue 25): run totals by name, per robot as arrays
    assert msg.broadcasts_delivered == row["broadcasts_delivered"] == radio.delivered.sum()
    assert msg.broadcasts_dropped == row["broadcasts_dropped"] == 0
    assert msg.broadcast_latency_mean_ticks == row["broadcast_latency_mean_ticks"]
    assert list(msg.broadcasts_sent_per_robot) == [2, 2, 2]
    assert list(msg.broadcasts_received_per_robot) == radio.received.tolist()
    assert sum(msg.broadcasts_delivered_per_robot) == sum(msg.broadcasts_received_per_robot)
    for name in ("exploration_percent", "coverage_percent", "explored_tiles", "collisions"):
        assert getattr(msg, name) == row[name]
    assert msg.covered_tiles == int(row["covered_tiles"]) and msg.finished
