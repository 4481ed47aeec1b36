"""QoS profiles of the robot-facing interface, one home for every node (ros2/demos style).

The simulator, the navigator and the controllers import these, so a publisher and its
subscribers never disagree.
"""

from __future__ import annotations

from rclpy.qos import (
    DurabilityPolicy,
    HistoryPolicy,
    QoSProfile,
    ReliabilityPolicy,
    qos_profile_sensor_data,
)

__all__ = [
    "CMD_QOS",
    "DEFAULT_QOS",
    "LATCHED_QOS",
    "LOCKSTEP_READER_QOS",
    "LOCKSTEP_WRITER_QOS",
    "MAX_REQUESTS_IN_FLIGHT",
    "SCAN_PUB_QOS",
    "SCAN_READER_QOS",
    "SCAN_QOS",
    "SERVICE_QOS",
    "STATE_QOS",
    "TF_QOS",
]

#: Scans: sensor data (best effort, shallow), as Nav2 and slam_toolbox subscribe.
SCAN_QOS = qos_profile_sensor_data
#: The simulator publishes scans reliably (depth 5): best-effort readers (Nav2, slam_toolbox)
#: match it as before, and a lockstep controller, which waits for every tick's scan, reads it
#: with :data:`SCAN_READER_QOS` and never loses one.
SCAN_PUB_QOS = QoSProfile(depth=5, reliability=ReliabilityPolicy.RELIABLE)
#: How the controller reads scans (reliable: it waits for each tick's).
SCAN_READER_QOS = SCAN_PUB_QOS
#: maes_state: reliable, depth 1, as MAES 2.0's controller expects.
STATE_QOS = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE)
#: Maps, costmaps, plans and other latched data: reliable, transient local.
LATCHED_QOS = QoSProfile(
    depth=1, reliability=ReliabilityPolicy.RELIABLE, durability=DurabilityPolicy.TRANSIENT_LOCAL
)
#: tf: reliable, a deep queue (the tf2 default).
TF_QOS = QoSProfile(depth=100, reliability=ReliabilityPolicy.RELIABLE)
#: maes_broadcast / maes_deposit_tag requests: a deep queue, so a burst is answered, not dropped.
#: Beyond its depth DDS drops the oldest waiting requests silently (no answer ever comes), so a
#: client keeps fewer than this many requests in flight (see MAX_REQUESTS_IN_FLIGHT).
SERVICE_QOS = QoSProfile(depth=1000, reliability=ReliabilityPolicy.RELIABLE)
#: Service requests one controller keeps in flight (sent, unanswered) per service; it refuses
#: further ones itself with a warning. Far below SERVICE_QOS's depth, and far above what the
#: simulator accepts per robot and tick (20 broadcasts, 5 tags).
MAX_REQUESTS_IN_FLIGHT = 100
#: cmd_vel: reliable, shallow.
CMD_QOS = QoSProfile(depth=10, reliability=ReliabilityPolicy.RELIABLE)
#: Everything else published every tick.
DEFAULT_QOS = QoSProfile(depth=10, reliability=ReliabilityPolicy.RELIABLE)
#: /maes/tick and /maes/tick_done writers: reliable, transient local, the latest sample only
#: (reports are cumulative: a late joiner needs only the newest).
LOCKSTEP_WRITER_QOS = QoSProfile(
    depth=1,
    reliability=ReliabilityPolicy.RELIABLE,
    durability=DurabilityPolicy.TRANSIENT_LOCAL,
    history=HistoryPolicy.KEEP_LAST,
)
#: Their readers: as the writers, with room for one report from every participant.
LOCKSTEP_READER_QOS = QoSProfile(
    depth=4096,
    reliability=ReliabilityPolicy.RELIABLE,
    durability=DurabilityPolicy.TRANSIENT_LOCAL,
    history=HistoryPolicy.KEEP_LAST,
)
