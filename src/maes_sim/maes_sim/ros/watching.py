"""The web page's hold on the simulator node: the page's commands carried out on the node's
thread, the run's speed and state in every sample, and the navigation of the robots a page
clicked on, heard from their ``navigate_to_pose`` action's status topic (the built-in
navigator's or Nav2's alike).

The node calls :meth:`LiveFeed.offer` after each tick's outputs and :meth:`LiveFeed.drain`
from its timer (:mod:`maes_sim.watch.live_feed`); nothing here runs unless a page is served.
Direct mode, which has no node, follows its run with :func:`follow_caller`.
"""

from __future__ import annotations

from action_msgs.msg import GoalStatus, GoalStatusArray
from rclpy.qos import qos_profile_action_status_default

from maes_common.contract import robot_namespace

__all__ = ["NavWatch", "follow", "follow_caller"]

#: GoalStatus codes by name, as a person reads them.
_STATUS_NAMES = {
    GoalStatus.STATUS_UNKNOWN: "unknown",
    GoalStatus.STATUS_ACCEPTED: "accepted",
    GoalStatus.STATUS_EXECUTING: "navigating",
    GoalStatus.STATUS_CANCELING: "cancelling",
    GoalStatus.STATUS_SUCCEEDED: "arrived (succeeded)",
    GoalStatus.STATUS_CANCELED: "cancelled",
    GoalStatus.STATUS_ABORTED: "failed (aborted)",
}


def status_line(msg: GoalStatusArray | None, goals_seen: int) -> str:
    """A robot's navigation in words, from its action's latest status message.

    Examples
    --------
    >>> status_line(None, 0)
    'no goal heard yet'
    >>> s = GoalStatus(status=GoalStatus.STATUS_EXECUTING)
    >>> status_line(GoalStatusArray(status_list=[s]), 3)
    'navigating (3 goals so far)'
    """
    if msg is None or not msg.status_list:
        return "no goal heard yet" if not goals_seen else f"idle ({goals_seen} goals so far)"
    latest = max(
        msg.status_list,
        key=lambda s: (s.goal_info.stamp.sec, s.goal_info.stamp.nanosec),
    )
    name = _STATUS_NAMES.get(latest.status, f"status {latest.status}")
    return f"{name} ({goals_seen} goal{'s' if goals_seen != 1 else ''} so far)"


class NavWatch:
    """Hears ``/robot<i>/navigate_to_pose/_action/status`` of the robots a page shows (only
    those: subscriptions come and go with the page's selection).

    Where the navigation runs in the simulator's own process (``maes_run``'s built-in
    controllers: no action server), the node's ``nav_status_source(robot)`` gives the same
    words and nothing is subscribed.
    """

    def __init__(self, node) -> None:
        self.node = node
        self._subs: dict[int, object] = {}
        self._last: dict[int, GoalStatusArray] = {}
        self._goals: dict[int, set[bytes]] = {}

    def select(self, robots: tuple[int, ...]) -> None:
        """Hear exactly ``robots`` (on the node's thread)."""
        if getattr(self.node, "nav_status_source", None) is not None:
            self._subs = dict.fromkeys(robots)  # asked in-process; nothing to hear
            return
        for i in set(self._subs) - set(robots):
            self.node.destroy_subscription(self._subs.pop(i))
        for i in set(robots) - set(self._subs):
            topic = f"/{robot_namespace(i)}/navigate_to_pose/_action/status"
            self._subs[i] = self.node.create_subscription(
                GoalStatusArray,
                topic,
                lambda msg, i=i: self._heard(i, msg),
                qos_profile_action_status_default,
            )

    def _heard(self, robot: int, msg: GoalStatusArray) -> None:
        self._last[robot] = msg
        seen = self._goals.setdefault(robot, set())
        seen.update(bytes(s.goal_info.goal_id.uuid) for s in msg.status_list)

    def status(self, robot: int) -> str | None:
        """Robot ``robot``'s navigation in words, or None before it is heard."""
        if robot not in self._subs:
            return None
        source = getattr(self.node, "nav_status_source", None)
        if source is not None:
            return source(robot)
        return status_line(self._last.get(robot), len(self._goals.get(robot, ())))


#: A run its caller steps, as the page shows it (the feed measures the speed itself).
_CALLER_STEPS = {"paused": False, "started": True, "rtf_cap": 0.0}


def follow(node, feed) -> None:
    """Let ``feed`` (a :class:`maes_sim.watch.LiveFeed`) follow the simulator ``node``'s run:
    the page may pause, resume and set the speed. (Direct mode, with no node, uses
    :func:`follow_caller`.)

    Parameters
    ----------
    node : SimNode
    feed : LiveFeed
    """
    nav = NavWatch(node)

    def apply(command: dict) -> None:
        op = command["op"]
        if op == "pause":
            node.pause()
        elif op == "resume":
            node.resume()
        elif op == "speed":
            node.set_real_time_factor(command["rtf"])

    def run_info() -> dict:
        return {
            "rtf": float(node.achieved_real_time_factor),
            "rtf_cap": float(node.real_time_factor),
            "paused": bool(node.paused),
            "started": bool(node.started),
            "sync": node.sync,
        }

    feed.attach(
        node.sim,
        apply=apply,
        controls={"pause": True, "speed": True},
        run_info=run_info,
        on_select=nav.select,
        nav_status=nav.status,
    )


def follow_caller(sim, feed) -> None:
    """Let ``feed`` follow a run its caller steps, with no simulator node (direct mode): the
    page has no controls and hears no navigation (no navigator runs)."""
    feed.attach(
        sim,
        controls={"pause": False, "speed": False},
        run_info=lambda: dict(_CALLER_STEPS),
    )
