"""maes_common.fastdds: the participant's discovery listener is detached through the real
middleware (rmw_fastrtps_cpp and Fast DDS of the pip environment), and nothing else is touched.

The hang it avoids needs a discovery callback in progress at the very moment a loaded machine
deletes a participant; it is reproduced, with and without the workaround, by
``bench/fastdds_teardown`` (its README gives the figures), not here.
"""

from __future__ import annotations

import pytest

rclpy = pytest.importorskip("rclpy", reason="ROS tests run in the pip environment (make test)")

from rclpy.context import Context  # noqa: E402

from maes_common.fastdds import detach_participant_listener  # noqa: E402
from maes_common.process import destroy_nodes  # noqa: E402


@pytest.fixture
def context():
    ctx = Context()
    rclpy.init(context=ctx)
    yield ctx
    ctx.try_shutdown()


def test_the_listener_is_detached_through_the_middlewares_api(context):
    node = rclpy.create_node("detach_probe", context=context)
    other = rclpy.create_node("detach_peer", context=context)
    assert other.get_node_names()  # the context's discovery works before
    assert detach_participant_listener(node) is True
    assert detach_participant_listener(node) is True  # again: nothing left to wait for
    node.destroy_node()
    other.destroy_node()


def test_a_destroyed_node_or_another_object_is_left_alone(context):
    node = rclpy.create_node("detach_gone", context=context)
    node.destroy_node()
    assert detach_participant_listener(node) is False
    assert detach_participant_listener(object()) is False


def _recorded(node, order):
    """``node`` whose destroy_node also appends its name to ``order``."""
    destroy = node.destroy_node

    def destroy_node():
        order.append(node.get_name())
        destroy()

    node.destroy_node = destroy_node
    return node


def test_destroy_nodes_destroys_them_all_the_last_first(context):
    order = []
    nodes = [_recorded(rclpy.create_node(f"destroy_{k}", context=context), order) for k in range(3)]
    destroy_nodes(nodes)
    assert order == ["destroy_2", "destroy_1", "destroy_0"]


def test_destroy_nodes_ends_the_readers_first_and_the_newest_first(context):
    # the order that keeps Fast DDS's "is this type still used?" scans short (process.py)
    from std_msgs.msg import String
    from std_srvs.srv import Trigger

    node = rclpy.create_node("destroy_entities", context=context)
    made = []
    for k in range(3):
        made.append(("publisher", node.create_publisher(String, f"p{k}", 1)))
        made.append(("subscription", node.create_subscription(String, f"s{k}", print, 1)))
        made.append(("service", node.create_service(Trigger, f"v{k}", lambda q, r: r)))
    names = {id(entity): f"{kind} {k // 3}" for k, (kind, entity) in enumerate(made)}
    gone = []
    for kind in ("publisher", "subscription", "service"):
        destroy = getattr(node, "destroy_" + kind)

        def record(entity, destroy=destroy):
            gone.append(names.get(id(entity), "rclpy's own"))
            return destroy(entity)

        setattr(node, "destroy_" + kind, record)
    destroy_nodes([node])
    mine = [g for g in gone if g != "rclpy's own"]
    assert mine == [
        *("service 2", "service 1", "service 0"),
        *("subscription 2", "subscription 1", "subscription 0"),
        *("publisher 2", "publisher 1", "publisher 0"),
    ]
    assert not list(node.publishers) and not list(node.services)


def test_destroy_nodes_quiet_skips_a_node_that_fails(context):
    class HalfBuilt:
        context = None

        def destroy_node(self):
            raise RuntimeError("half built")

    order = []
    node = _recorded(rclpy.create_node("destroy_ok", context=context), order)
    with pytest.raises(RuntimeError, match="half built"):
        destroy_nodes([HalfBuilt()])
    destroy_nodes([node, HalfBuilt()], quiet=True)
    assert order == ["destroy_ok"]  # the good one is still destroyed
