"""Who publishes lockstep reports (maes_common.process.publishing_node_names and
reporting_node_names, which lockstep reads), over real DDS
with another process: a node that stops publishing is no reporter any more, although its name
stays on the graph, and a named publisher is listed under its node's name."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import pytest

rclpy = pytest.importorskip("rclpy")

from rclpy.context import Context  # noqa: E402

from maes_common.process import (  # noqa: E402
    graph_node_names,
    publishing_node_names,
    reporting_node_names,
)

TOPIC = "/maes_test/liveness_reports"

#: The other process: a node publishing on TOPIC; on a line "drop" on stdin it destroys the
#: publisher and keeps the node; on "end" (or end of input) it exits.
OTHER = f"""
import sys, rclpy
from std_msgs.msg import Empty
rclpy.init()
node = rclpy.create_node("reporter", namespace="robot7")
pub = node.create_publisher(Empty, "{TOPIC}", 10)
print("up", flush=True)
for line in sys.stdin:
    if line.strip() == "drop":
        node.destroy_publisher(pub)
        print("dropped", flush=True)
    else:
        break
node.destroy_node()
rclpy.try_shutdown()
"""


def _until(predicate, what: str, bound_s: float = 60.0) -> None:
    """Poll ``predicate`` until true; only a broken graph gets near the bound."""
    end = time.monotonic() + bound_s
    while not predicate():
        assert time.monotonic() < end, f"not within {bound_s:g} s: {what}"
        time.sleep(0.1)


def test_a_node_that_stops_publishing_is_no_reporter_though_still_named():
    other = subprocess.Popen(
        [sys.executable, "-c", OTHER],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        env=dict(os.environ),
    )
    ctx = Context()
    rclpy.init(context=ctx)
    try:
        assert other.stdout.readline().strip() == "up"
        node = rclpy.create_node("watcher", context=ctx)

        def reporters() -> set[str]:
            names, unnamed = publishing_node_names(node, [TOPIC, "/maes_test/nobody_here"])
            return names if not unnamed else set()

        _until(lambda: "/robot7/reporter" in reporters(), "the publisher seen under its name")
        assert "/robot7/reporter" in graph_node_names(node)
        _until(
            lambda: reporting_node_names(node, [TOPIC]) == {"/robot7/reporter"},
            "lockstep's alive set: the publishing node, no other node (the watcher is named)",
        )

        other.stdin.write("drop\n")
        other.stdin.flush()
        assert other.stdout.readline().strip() == "dropped"
        _until(lambda: "/robot7/reporter" not in reporters(), "the publisher gone")
        # the node itself is still there, and the graph still names it
        assert other.poll() is None
        assert "/robot7/reporter" in graph_node_names(node)
        assert publishing_node_names(node, [TOPIC]) == (set(), False)
        assert reporting_node_names(node, [TOPIC]) == set()
        node.destroy_node()
    finally:
        rclpy.try_shutdown(context=ctx)
        if other.poll() is None:
            other.stdin.write("end\n")
            other.stdin.close()
            try:
                other.wait(timeout=30)
            except subprocess.TimeoutExpired:
                other.kill()
                other.wait()
