"""Nav2's task interface on the built-in navigator: action kinds, services, lifecycle states.

:class:`TaskKind` says, for one Nav2 action, how its goal becomes a session task
(:mod:`maes_controller.navigation.tasks`) and how a :class:`~maes_controller.navigation.NavStep`
becomes its feedback and result. :data:`NAVIGATE_TO_POSE` is always served; :func:`serve_nav2_api`
adds, per robot namespace, every other task Nav2 Jazzy's ``BasicNavigator`` calls, the costmap
services and ``get_state`` of the lifecycle nodes a script waits for (see docs/nav2_task_api.md).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from geometry_msgs.msg import PoseWithCovarianceStamped
from lifecycle_msgs.msg import State as LifecycleState
from lifecycle_msgs.srv import GetState
from nav2_msgs.action import (
    BackUp,
    ComputePathThroughPoses,
    ComputePathToPose,
    DriveOnHeading,
    FollowPath,
    FollowWaypoints,
    NavigateThroughPoses,
    NavigateToPose,
    Spin,
)
from nav2_msgs.msg import Costmap, MissedWaypoint
from nav2_msgs.srv import (
    ClearCostmapAroundPose,
    ClearCostmapAroundRobot,
    ClearCostmapExceptRegion,
    ClearEntireCostmap,
    GetCostmap,
)

from ..navigation import Drive, FollowGiven, NavStep, PoseSequence
from ..navigation import Spin as SpinTask
from . import ros_conversions as cv

#: Nodes whose ``<name>/get_state`` answers "active" in each robot namespace: Nav2's
#: navigation nodes (``BasicNavigator.waitUntilNav2Active(navigator=...)``) and ``amcl`` (its
#: default ``localizer``; the simulated SLAM stands in, see :func:`serve_nav2_api`).
LIFECYCLE_NODES = (
    "bt_navigator",
    "planner_server",
    "controller_server",
    "behavior_server",
    "waypoint_follower",
    "smoother_server",
    "velocity_smoother",
    "global_costmap/global_costmap",
    "local_costmap/local_costmap",
    "amcl",
)

#: Side (m) of the local costmap: Nav2's default rolling window is 3 m x 3 m.
LOCAL_COSTMAP_SIZE = 3.0


@dataclass(frozen=True)
class TaskKind:
    """One Nav2 action served per robot.

    ``task(ns, request)`` returns ``(frame, goal)``: the request's frame and an ``(x, y)`` goal
    or a task object (a ``str`` instead of a goal refuses the request with that message and
    ``refuse_code``). ``feedback(step, pose, stamp)`` and ``result(step)`` build its messages.
    ``counted``: its results and feedback count in the navigator's lockstep report, which the
    robot's controller waits for (controllers send ``navigate_to_pose`` goals only; a script's
    other tasks must not hold up a controller that never receives their messages).
    """

    action: type
    name: str
    task: Callable[[Any, Any], tuple[str, Any]]
    feedback: Callable[[NavStep, Any, Any], Any]
    result: Callable[[NavStep], Any]
    refuse_code: int = 0
    counted: bool = False


def _xy(pose_stamped) -> tuple[float, float]:
    p = pose_stamped.pose.position
    return float(p.x), float(p.y)


def _frames(poses) -> str:
    frames = {p.header.frame_id.lstrip("/") for p in poses} - {""}
    return next(iter(frames)) if len(frames) == 1 else ("map" if not frames else ",".join(frames))


def _seconds(duration) -> float:
    return float(duration.sec) + 1e-9 * float(duration.nanosec)


def _navigate_to_pose(ns, request) -> tuple[str, Any]:
    frame, x, y = cv.goal_from_msg(request)
    return frame, (x, y)


def _through_poses(ns, request) -> tuple[str, Any]:
    goals = [_xy(p) for p in request.poses]
    if not goals:
        return _frames(request.poses), "no poses given"
    return _frames(request.poses), PoseSequence(ns.session.navigator, goals, through=True)


def _waypoints(ns, request) -> tuple[str, Any]:
    goals = [_xy(p) for p in request.poses]
    start = int(request.goal_index)
    if start >= max(len(goals), 1) and goals:
        return _frames(request.poses), f"goal_index {start} is beyond the {len(goals)} poses"
    seq = PoseSequence(ns.session.navigator, goals, through=False, start_index=start)
    return _frames(request.poses), seq


def _follow_path(ns, request) -> tuple[str, Any]:
    points = [_xy(p) for p in request.path.poses]
    frame = request.path.header.frame_id or _frames(request.path.poses)
    return frame, FollowGiven(ns.session.navigator, points)


def _spin(ns, request) -> tuple[str, Any]:
    params = ns.session.navigator.params
    target = float(request.target_yaw)
    if not math.isfinite(target):
        return "map", f"target_yaw {target} is not finite"
    return "map", SpinTask(target, params.max_angular_speed, _seconds(request.time_allowance))


def _drive(backwards: bool) -> Callable[[Any, Any], tuple[str, Any]]:
    def make(ns, request) -> tuple[str, Any]:
        nav = ns.session.navigator
        t = request.target
        dist, speed = float(t.x), float(request.speed)
        if t.y != 0.0 or t.z != 0.0 or not (math.isfinite(dist) and math.isfinite(speed)):
            return "map", "only a finite target.x is supported (target.y and target.z must be 0)"
        if backwards:  # as Nav2's BackUp: the magnitudes, driven backwards
            dist, speed = -abs(dist), -abs(speed)
        elif dist * speed < 0:
            return "map", "target.x and speed must have the same sign"
        code = 710 if backwards else 720
        return "map", Drive(
            dist,
            speed,
            nav.params.max_linear_speed,
            _seconds(request.time_allowance),
            code,
            costs=nav.costmap_values,
        )

    return make


def _nav_feedback(action: type, poses_remaining: bool = False):
    def build(step: NavStep, pose, stamp):
        fb = cv.feedback_to_msg(step, pose, stamp, action.Feedback())
        if poses_remaining:
            fb.number_of_poses_remaining = int(min(step.poses_remaining, 32767))
        return fb

    return build


def _plain_result(action: type) -> Callable[[NavStep], Any]:
    return lambda step: action.Result(error_code=int(step.error_code), error_msg=step.error_msg)


def _waypoints_result(step: NavStep) -> FollowWaypoints.Result:
    result = FollowWaypoints.Result(error_code=int(step.error_code), error_msg=step.error_msg)
    result.missed_waypoints = [MissedWaypoint(index=i, error_code=c) for i, c in step.missed]
    return result


def _behaviour_result(action: type) -> Callable[[NavStep], Any]:
    def build(step: NavStep):
        return action.Result(
            total_elapsed_time=cv.duration_to_msg(step.navigation_time),
            error_code=int(step.error_code),
            error_msg=step.error_msg,
        )

    return build


NAVIGATE_TO_POSE = TaskKind(
    NavigateToPose,
    "navigate_to_pose",
    _navigate_to_pose,
    lambda step, pose, stamp: cv.feedback_to_msg(step, pose, stamp),
    cv.result_to_msg,
    counted=True,
)

#: The motion tasks :func:`serve_nav2_api` adds (one at a time per robot, as the session runs).
MOTION_KINDS = (
    TaskKind(
        NavigateThroughPoses,
        "navigate_through_poses",
        _through_poses,
        _nav_feedback(NavigateThroughPoses, poses_remaining=True),
        _plain_result(NavigateThroughPoses),
    ),
    TaskKind(
        FollowWaypoints,
        "follow_waypoints",
        _waypoints,
        lambda step, pose, stamp: FollowWaypoints.Feedback(current_waypoint=int(step.waypoint)),
        _waypoints_result,
        refuse_code=600,
    ),
    TaskKind(
        FollowPath,
        "follow_path",
        _follow_path,
        lambda step, pose, stamp: FollowPath.Feedback(
            distance_to_goal=float(step.distance_remaining), speed=float(abs(step.linear))
        ),
        _plain_result(FollowPath),
        refuse_code=103,
    ),
    TaskKind(
        Spin,
        "spin",
        _spin,
        lambda step, pose, stamp: Spin.Feedback(angular_distance_traveled=float(step.traveled)),
        _behaviour_result(Spin),
        refuse_code=700,
    ),
    TaskKind(
        BackUp,
        "backup",
        _drive(backwards=True),
        lambda step, pose, stamp: BackUp.Feedback(distance_traveled=float(step.traveled)),
        _behaviour_result(BackUp),
        refuse_code=713,
    ),
    TaskKind(
        DriveOnHeading,
        "drive_on_heading",
        _drive(backwards=False),
        lambda step, pose, stamp: DriveOnHeading.Feedback(distance_traveled=float(step.traveled)),
        _behaviour_result(DriveOnHeading),
        refuse_code=724,
    ),
)

#: The planner's actions: answered at the robot's next control step, beside its motion task.
PATH_KINDS = (
    (ComputePathToPose, "compute_path_to_pose", 200),
    (ComputePathThroughPoses, "compute_path_through_poses", 300),
)


def path_request(action: type, request) -> tuple[tuple[float, float] | None, list, str]:
    """``(start or None for the robot's pose, goals, frame)`` of a compute-path request."""
    goals = [request.goal] if action is ComputePathToPose else list(request.goals)
    start = _xy(request.start) if request.use_start else None
    return start, [_xy(g) for g in goals], _frames(goals)


def path_result(action: type, points, code: int, msg: str, stamp, planning_time: float):
    """The compute-path result message."""
    result = action.Result(error_code=int(code), error_msg=msg)
    if points:
        result.path = cv.path_to_msg(points, stamp)
    result.planning_time = cv.duration_to_msg(planning_time)
    return result


# ------------------------------------------------------------------------------ costmaps
def nav2_costs(values: np.ndarray) -> np.ndarray:
    """Occupancy-scale costs (0..100, -1 unknown) as Nav2's raw costmap values (0..255).

    Nav2 publishes its costmap as an OccupancyGrid through a table (0 -> 0, 253 -> 99,
    254 -> 100, 255 -> -1, 1..252 -> 1..98); ``GetCostmap`` returns the raw values, so this is
    that table's inverse.

    Examples
    --------
    >>> nav2_costs(np.array([0, 1, 50, 98, 99, 100, -1], dtype=np.int8)).tolist()
    [0, 1, 128, 252, 253, 254, 255]
    """
    v = np.asarray(values, dtype=np.int16)
    out = np.rint(1 + (v - 1) * 251.0 / 97.0).clip(1, 252)
    out = np.where(v == 0, 0, out)
    out = np.where(v == 99, 253, out)
    out = np.where(v == 100, 254, out)
    out = np.where(v < 0, 255, out)
    return out.astype(np.uint8)


def costmap_msg(grid, values: np.ndarray, stamp, layer: str, window=None) -> Costmap:
    """``nav2_msgs/Costmap`` of ``values`` (on ``grid``'s geometry), or of a window of it.

    ``window`` = ``(x, y, side)`` metres cuts a square centred on ``(x, y)`` (Nav2's rolling
    local costmap), clipped to the map.
    """
    res = grid.resolution
    y0, x0, (h, w) = 0, 0, values.shape
    if window is not None:
        cx, cy, side = window
        half = int(round(0.5 * side / res))
        ix, iy = grid.pos_to_cell(cx, cy)
        x0, y0 = max(ix - half, 0), max(iy - half, 0)
        x1, y1 = min(ix + half, w), min(iy + half, h)
        values = values[y0:y1, x0:x1]
        h, w = values.shape
    msg = Costmap()
    msg.header.stamp = stamp
    msg.header.frame_id = "map"
    meta = msg.metadata
    meta.map_load_time = stamp
    meta.update_time = stamp
    meta.layer = layer
    meta.resolution = float(res)
    meta.size_x, meta.size_y = int(w), int(h)
    meta.origin.position.x = float(grid.origin_x + x0 * res)
    meta.origin.position.y = float(grid.origin_y + y0 * res)
    meta.origin.orientation.w = 1.0
    msg.data = nav2_costs(values).tobytes()
    return msg


def serve_nav2_api(node: Any, ns: Any, prefix: str) -> list[Any]:
    """Create robot ``ns``'s Nav2 services on ``node``; return them (to destroy).

    Services, under ``prefix`` (``/robot<i>``): ``global_costmap/get_costmap`` (the navigator's
    costmap of the latest map), ``local_costmap/get_costmap`` (a 3 m window of it around the
    robot), the ``clear_*`` services (answered; nothing to clear, see the docs), and
    ``<node>/get_state`` answering ``active`` for :data:`LIFECYCLE_NODES`. It also publishes
    ``amcl_pose`` (transient local): the simulated SLAM's pose, the localizer output a Nav2
    script waits for.
    """
    made = []
    active = GetState.Response()
    active.current_state.id = LifecycleState.PRIMARY_STATE_ACTIVE
    active.current_state.label = "active"

    def get_state(_req, _resp):
        return active

    for name in LIFECYCLE_NODES:
        made.append(node.create_service(GetState, f"{prefix}/{name}/get_state", get_state))

    def get_costmap(local: bool):
        def answer(_req, resp):
            msg = node.costmap_for(ns, local)
            return resp if msg is None else GetCostmap.Response(map=msg)

        return answer

    made.append(
        node.create_service(GetCostmap, f"{prefix}/global_costmap/get_costmap", get_costmap(False))
    )
    made.append(
        node.create_service(GetCostmap, f"{prefix}/local_costmap/get_costmap", get_costmap(True))
    )
    clears = (
        (ClearEntireCostmap, "global_costmap/clear_entirely_global_costmap"),
        (ClearEntireCostmap, "local_costmap/clear_entirely_local_costmap"),
        (ClearCostmapExceptRegion, "global_costmap/clear_except_global_costmap"),
        (ClearCostmapExceptRegion, "local_costmap/clear_costmap_except_region"),
        (ClearCostmapAroundRobot, "global_costmap/clear_around_global_costmap"),
        (ClearCostmapAroundRobot, "local_costmap/clear_costmap_around_robot"),
        (ClearCostmapAroundPose, "local_costmap/clear_costmap_around_pose"),
    )
    for srv, name in clears:
        made.append(node.create_service(srv, f"{prefix}/{name}", lambda _req, resp: resp))
    return made


def localizer_pose_msg(pose, stamp) -> PoseWithCovarianceStamped:
    """``amcl_pose``: the robot's believed map pose (covariance zero: not estimated here)."""
    msg = PoseWithCovarianceStamped()
    msg.header.stamp = stamp
    msg.header.frame_id = "map"
    msg.pose.pose = cv.pose_to_msg(pose[0], pose[1], pose[2], stamp).pose
    return msg
