"""The simulator's maes_state bytes (conversions.state_to_wire, what sim_node publishes without
a recording) read back as the message conversions.state_to_msg builds (what it publishes with
one), for a team that broadcasts, deposits tags and sees its neighbours, tick after tick."""

from __future__ import annotations

import pytest

pytest.importorskip("rclpy", reason="ROS tests run in the pip environment (make test)")

from rclpy.serialization import deserialize_message  # noqa: E402

from maes_interfaces.msg import State  # noqa: E402
from maes_sim.core import Simulation, config_from_dict  # noqa: E402
from maes_sim.ros import conversions as cv  # noqa: E402


def test_published_bytes_read_as_the_built_message():
    sim = Simulation(
        config_from_dict(
            {
                "number_of_robots": 4,
                "random_seeds": [5],
                "map": {"width_in_tiles": 20, "height_in_tiles": 20},
                "world": {"tile_size": 0.3},
            }
        )
    )
    tile, tag_msgs, tag_wire = sim.config.world.tile_size, {}, {}
    checked = {"tags": 0, "nearby": 0, "broadcasts": 0}
    for tick in range(12):
        for i in range(sim.n_robots):
            sim.set_velocity(i, 0.5, 0.4 * (i - 1.5))
            if (tick + i) % 3 == 0:
                sim.deposit_tag(i, f"tick {tick} é")
            if (tick + i) % 4 == 0:
                sim.broadcast(i, f"from {i} at {tick}")
        sim.step()
        obs = sim.observation(tile)
        robot_msgs, robot_wire = {}, {}
        for i in range(sim.n_robots):
            state = obs.state(i)
            sent = deserialize_message(cv.state_to_wire(state, tag_wire, robot_wire), State)
            assert sent == cv.state_to_msg(state, tag_msgs, robot_msgs), (tick, i)
            checked["tags"] += len(sent.tags_nearby)
            checked["nearby"] += len(sent.nearby_robots)
            checked["broadcasts"] += len(sent.incoming_broadcast_msgs)
    assert min(checked.values()) > 0, checked  # every kind of element went over the wire
