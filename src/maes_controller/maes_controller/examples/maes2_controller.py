"""A robot controller written the way MAES 2.0's ROS mode expected one (its own rclpy node).

It uses only the robot-facing interface MAES 2.0 offered, under the same names:
``/robot<i>/maes_state``, ``/robot<i>/global_costmap/costmap``, ``/robot<i>/tf`` (keeping the
transform whose parent frame is ``odom`` as ``robot_position``), the services
``/robot<i>/maes_broadcast`` and ``/robot<i>/maes_deposit_tag``, and Nav2's
``/robot<i>/navigate_to_pose`` action. A MAES 2.0 controller like this one runs against
MAES-ROS (either stack) with one change: its message package, ``maes_msgs``, is called
``maes_interfaces`` here.

Run it in a robot's namespace::

    python -m maes_controller.examples.maes2_controller --ros-args -r __ns:=/robot0 \\
        -p use_sim_time:=true

The logic (``logic_loop_callback``) is a small frontier explorer: go to the frontier cell
(known free, at least two unknown neighbours) nearest to the robot, leave a tag there, tell the
others, and pick a new one once the target is explored or the navigation failed.

Note: ``robot_position`` is the ``odom -> base_footprint`` transform, as in MAES 2.0; in
MAES-ROS the ``odom`` frame starts where the robot spawned, so it is used here only to rank
frontiers, and goals are sent in the ``map`` frame from costmap cells.
"""

import math

import rclpy
from action_msgs.msg import GoalStatus
from geometry_msgs.msg import PoseStamped
from nav2_msgs.action import NavigateToPose
from nav_msgs.msg import OccupancyGrid
from rclpy.action import ActionClient
from rclpy.node import Node
from rclpy.qos import HistoryPolicy, QoSProfile, ReliabilityPolicy
from tf2_msgs.msg import TFMessage

from maes_interfaces.msg import State
from maes_interfaces.srv import BroadcastToAll, DepositTag


class RobotController(Node):
    """One robot's controller node; its namespace (``/robot<i>``) comes from the launch."""

    def __init__(self, **node_kwargs):
        super().__init__("maes_robot_controller", **node_kwargs)
        self.topic_namespace_prefix = self.get_namespace().rstrip("/")
        self.logger = self.get_logger()

        # Navigation state
        self.nav_goal_handle = None
        self.nav_result_future = None
        self.nav_feedback = None
        self.nav_status = None

        # Latest inputs
        self.global_costmap = None  # nav_msgs/OccupancyGrid
        self.robot_position = None  # geometry_msgs/TransformStamped, odom -> base_footprint
        self.tick = None

        # Variables of the logic below
        self.next_target = None  # (x, y) in the map frame
        self.next_target_index = None
        self.failed_targets = set()

        self._register_subs_srvs_actions()

    # ------------------------------------------------------------------ the robot's logic
    def logic_loop_callback(self, state: State):
        """Called for every new state from the simulator (once per logic tick)."""
        self.tick = state.tick
        if self.global_costmap is None:
            return

        if self.next_target is None:
            index = self.nearest_frontier_index()
            if index is None:
                return  # nothing left to explore
            self.next_target_index = index
            self.next_target = self.costmap_index_to_pos(index)
            self.deposit_tag(f"target of {self.topic_namespace_prefix} at tick {state.tick}")
            x, y = self.next_target
            self.broadcast_msg(f"{self.topic_namespace_prefix} heads to {x:.1f} {y:.1f}")
            self.nav_to_pos(*self.next_target)
        elif self.is_nav_complete():
            succeeded = self.nav_status == GoalStatus.STATUS_SUCCEEDED
            if not succeeded or self.is_frontier(self.next_target_index):
                self.failed_targets.add(self.next_target_index)  # don't try it again
            self.next_target = None
        elif not self.is_frontier(self.next_target_index):
            self.next_target = None  # explored on the way: the next goal replaces this one

    # ------------------------------------------------------------------ costmap helpers
    def costmap_index_to_pos(self, index):
        """Map-frame centre of the costmap cell at ``index``."""
        info = self.global_costmap.info
        x_tile, y_tile = index % info.width, index // info.width
        return (
            info.origin.position.x + (x_tile + 0.5) * info.resolution,
            info.origin.position.y + (y_tile + 0.5) * info.resolution,
        )

    def unknown_neighbours(self, index):
        info, data = self.global_costmap.info, self.global_costmap.data
        x_tile, y_tile = index % info.width, index // info.width
        count = 0
        for dx in (-1, 0, 1):
            for dy in (-1, 0, 1):
                x, y = x_tile + dx, y_tile + dy
                if (dx or dy) and 0 <= x < info.width and 0 <= y < info.height:
                    count += data[y * info.width + x] == -1
        return count

    def is_frontier(self, index):
        value = self.global_costmap.data[index]
        return 0 <= value < 65 and self.unknown_neighbours(index) >= 2

    def nearest_frontier_index(self):
        if self.robot_position is not None:
            here = (
                self.robot_position.transform.translation.x,
                self.robot_position.transform.translation.y,
            )
        else:
            here = (0.0, 0.0)
        best, best_distance = None, math.inf
        for index in range(len(self.global_costmap.data)):
            if index in self.failed_targets or not self.is_frontier(index):
                continue
            x, y = self.costmap_index_to_pos(index)
            distance = math.hypot(x - here[0], y - here[1])
            if distance < best_distance:
                best, best_distance = index, distance
        return best

    # ------------------------------------------------------------------ robot interface
    def nav_to_pos(self, pose_x, pose_y):
        goal_pose = PoseStamped()
        goal_pose.header.frame_id = "map"
        goal_pose.header.stamp = self.get_clock().now().to_msg()
        goal_pose.pose.position.x = float(pose_x)
        goal_pose.pose.position.y = float(pose_y)
        goal_pose.pose.orientation.w = 1.0
        goal = NavigateToPose.Goal()
        goal.pose = goal_pose
        self.nav_status = None
        self.nav_result_future = None
        send_goal_future = self.nav_to_pose_client.send_goal_async(
            goal, feedback_callback=self._nav_feedback_callback
        )
        send_goal_future.add_done_callback(self._nav_goal_response_callback)

    def _nav_feedback_callback(self, msg):
        self.nav_feedback = msg.feedback

    def _nav_goal_response_callback(self, future):
        self.nav_goal_handle = future.result()
        if not self.nav_goal_handle.accepted:
            self.logger.error("Goal was rejected!")
            self.nav_status = GoalStatus.STATUS_ABORTED
            return
        self.nav_result_future = self.nav_goal_handle.get_result_async()

    def cancel_nav(self):
        if self.nav_goal_handle is not None and self.nav_result_future is not None:
            self.nav_goal_handle.cancel_goal_async()

    def is_nav_complete(self):
        """True once the last goal finished (never waits: the result arrives by callback)."""
        if self.nav_status is not None:
            return True
        if self.nav_result_future is None or not self.nav_result_future.done():
            return False
        self.nav_status = self.nav_result_future.result().status
        return True

    def broadcast_msg(self, msg):
        self.broadcast_srv.call_async(BroadcastToAll.Request(msg=msg))

    def deposit_tag(self, tag_msg):
        self.deposit_env_tag_srv.call_async(DepositTag.Request(msg=tag_msg))

    # ------------------------------------------------------------------ wiring
    def _register_subs_srvs_actions(self):
        prefix = self.topic_namespace_prefix
        self.broadcast_srv = self.create_client(BroadcastToAll, prefix + "/maes_broadcast")
        self.deposit_env_tag_srv = self.create_client(DepositTag, prefix + "/maes_deposit_tag")
        self.nav_to_pose_client = ActionClient(self, NavigateToPose, prefix + "/navigate_to_pose")
        qos_profile = QoSProfile(
            reliability=ReliabilityPolicy.BEST_EFFORT, history=HistoryPolicy.KEEP_LAST, depth=2
        )
        self.create_subscription(
            State, prefix + "/maes_state", self.logic_loop_callback, qos_profile
        )
        self.create_subscription(
            OccupancyGrid, prefix + "/global_costmap/costmap", self._costmap_callback, qos_profile
        )
        self.create_subscription(TFMessage, prefix + "/tf", self._tf_callback, qos_profile)

    def _costmap_callback(self, msg):
        self.global_costmap = msg

    def _tf_callback(self, msg):
        odom = [t for t in msg.transforms if t.header.frame_id == "odom"]
        if len(odom) == 1:
            self.robot_position = odom[0]


def main(args=None):
    rclpy.init(args=args)
    controller = RobotController()
    try:  # noqa: SIM105 - a MAES 2.0 controller's imports: no contextlib
        rclpy.spin(controller)
    except KeyboardInterrupt:
        pass
    controller.destroy_node()
    if rclpy.ok():
        rclpy.shutdown()


if __name__ == "__main__":
    main()
