"""One DDS participant of a run that ends at once: a node with publishers, subscriptions, a
service and a client, spinning until the shared instant GO_AT (wall clock), then destroyed (its
participant is deleted while the other peers delete theirs, so discovery callbacks about their
readers and writers going are in flight); prints how long the destruction took.

``python peer.py GO_AT NAME fix`` first detaches the participant's discovery listener with a
time limit (maes_common.fastdds, the workaround); ``... plain`` does not. Run by run.sh."""

import sys
import time

import rclpy
from rclpy.node import Node
from std_msgs.msg import String
from std_srvs.srv import Trigger

go_at, name, mode = float(sys.argv[1]), sys.argv[2], sys.argv[3]
rclpy.init()
node = Node(name)
pubs = [node.create_publisher(String, f"t{k}", 10) for k in range(4)]
subs = [node.create_subscription(String, f"t{k}", lambda m: None, 10) for k in range(4)]
service = node.create_service(Trigger, f"{name}/trigger", lambda request, response: response)
client = node.create_client(Trigger, "peer0/trigger")
while time.time() < go_at:
    rclpy.spin_once(node, timeout_sec=0.01)
    for pub in pubs:
        pub.publish(String(data=name))
start = time.monotonic()
if mode == "fix":
    from maes_common.fastdds import detach_participant_listener

    detach_participant_listener(node)
node.destroy_node()
print(f"{name} destroyed in {time.monotonic() - start:.3f} s", flush=True)
rclpy.try_shutdown()
