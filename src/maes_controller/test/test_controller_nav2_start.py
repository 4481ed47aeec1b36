"""The full stack's start with Nav2: controllers join lockstep at once, goals wait for Nav2.

Nav2 and slam_toolbox cannot be installed here (not on PyPI), so Nav2's side is played by a real
rclpy lifecycle node named ``bt_navigator`` that appears late, as Nav2's does: its
``navigate_to_pose`` server exists once it is configured and accepts goals only once it is
active (what nav2_util's SimpleActionServer does: "Action server is inactive. Rejecting the
goal."), and its ``get_state`` service is rclpy's own. The simulator and the controller are the
project's real nodes over DDS, stepped in lockstep (conftest's Stack).
"""

from __future__ import annotations

import pytest

pytest.importorskip("rclpy", reason="ROS tests run in the pip environment (make test)")

from nav2_msgs.action import NavigateToPose  # noqa: E402
from rclpy.action import ActionServer, GoalResponse  # noqa: E402
from rclpy.lifecycle import LifecycleNode, TransitionCallbackReturn  # noqa: E402

from maes_controller.nodes.controller_node import ControllerNode  # noqa: E402
from maes_controller.robot_api import NavStatus  # noqa: E402
from maes_sim.core import Simulation  # noqa: E402


class LateNav2(LifecycleNode):
    """Nav2's bt_navigator as far as a controller sees it: a lifecycle node whose
    ``navigate_to_pose`` rejects goals until it is active, then succeeds each at once."""

    def __init__(self, **kwargs) -> None:
        super().__init__("bt_navigator", namespace="robot0", **kwargs)
        self.server: ActionServer | None = None
        self.goals: list[tuple[float, float]] = []
        self.rejected = 0
        self.active = False

    def on_configure(self, state) -> TransitionCallbackReturn:
        self.server = ActionServer(
            self,
            NavigateToPose,
            "navigate_to_pose",
            execute_callback=self._execute,
            goal_callback=self._goal,
        )
        return TransitionCallbackReturn.SUCCESS

    def on_activate(self, state) -> TransitionCallbackReturn:
        self.active = True
        return super().on_activate(state)

    def _goal(self, goal) -> GoalResponse:
        if not self.active:
            self.rejected += 1
            return GoalResponse.REJECT
        pose = goal.pose.pose.position
        self.goals.append((pose.x, pose.y))
        return GoalResponse.ACCEPT

    def _execute(self, handle):
        handle.succeed()
        return NavigateToPose.Result()

    def destroy_node(self) -> None:
        if self.server is not None:
            self.server.destroy()
        super().destroy_node()


def test_controllers_join_before_nav2_and_their_goals_wait_for_its_activation(stack, tools):
    log: list[tuple[int, NavStatus]] = []

    def logic(robot):
        m = robot.memory
        log.append((robot.tick, robot.nav_status))
        if "first" not in m:
            m["first"] = robot.tick
            robot.nav_to_pos(4.0, 4.0)  # waits: Nav2 is not up
        elif robot.tick == m["first"] + 1:
            robot.cancel_nav()  # never sent, so cancelled here
        elif robot.tick == m["first"] + 2:
            robot.nav_to_pos(1.0, 0.0)

    sim = Simulation(tools.config(1))
    s = stack(sim, navigator=False, logic={})
    controller = ControllerNode(
        0, logic, wait_for_navigator=False, goals_wait_for_navigator=True, context=s.ctx
    )
    s.add_node(controller)
    s.controllers[0] = controller
    s.wait_ready()  # joined lockstep with no navigate_to_pose server anywhere
    robot = controller.robot

    s.step(10)  # lockstep runs on without Nav2
    statuses = [status for _, status in log]
    assert NavStatus.CANCELED in statuses
    assert robot.nav_status is NavStatus.PENDING and robot.pending_requests == 0
    assert robot.nav_error == ""

    nav2 = LateNav2(context=s.ctx)
    s.add_node(nav2)
    nav2.trigger_configure()  # the server exists now, but rejects goals until active
    assert s.spin_until(controller.nav_client.server_is_ready)
    s.step(10)
    assert robot.nav_status is NavStatus.PENDING and nav2.rejected == 0 and nav2.goals == []

    nav2.trigger_activate()
    # The controller learns it (bt_navigator/get_state, polled on its steady timer) and sends the
    # goal that waited: no tick is needed for that, so none is counted (the machine's speed
    # must not matter).
    assert s.spin_until(lambda: robot.nav_status is NavStatus.SUCCEEDED, timeout=120)
    s.step(5)  # and lockstep goes on
    assert nav2.goals == [(1.0, 0.0)]  # the cancelled goal never went out
    assert nav2.rejected == 0 and controller.navigator_active
    assert NavStatus.REJECTED not in [status for _, status in log]


@pytest.mark.parametrize(
    "parameter, message",
    [
        ("navigator:=nav3", "parameter navigator must be one of builtin, nav2, got 'nav3'"),
        (
            "motion_model:=diff",
            "parameter motion_model: unknown motion model 'diff'; known: maes, "
            "differential_drive, omnidirectional",
        ),
    ],
)
def test_the_navigator_and_motion_model_parameters_are_checked(tmp_path, parameter, message):
    import os
    import subprocess
    from pathlib import Path

    node = Path(__file__).resolve().parents[3] / "install/maes_controller/lib/maes_controller"
    if not (node / "controller_node").exists():
        pytest.skip("console scripts not installed (make build)")
    out = subprocess.run(
        [str(node / "controller_node"), "--ros-args", "-p", parameter],
        capture_output=True,
        text=True,
        timeout=60,
        env=os.environ.copy(),
    )
    assert out.returncode == 2, out.stderr
    assert message in out.stderr
