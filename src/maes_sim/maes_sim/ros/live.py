"""Live view: a Foxglove WebSocket server (``foxglove-sdk``) serving what the simulator node
publishes, so Foxglove or Lichtblick shows the robots, maps and scans of a running simulation
without RViz (docs/live_view.md).

Each topic is a channel with its ROS 2 schema (``pkg/msg/Type``, encoding ``ros2msg``, the
complete ``.msg`` definition) and CDR messages, as Foxglove's ROS 2 bridge serves them; the
server advertises the ``time`` capability and sends the sim time, so the app's clock is the
simulation's. Nothing is serialized for a topic no client subscribed to. A latched topic's last
message (ground truth, tf_static, the robots' maps) is sent again when a client subscribes,
as a transient-local subscriber would get it.

One view shows every robot in the ``world`` frame (the global ``/tf``: world -> robot<i>/odom
-> robot<i>/base_footprint). The robots' own frames carry no prefix (``odom``, ``base_scan``,
``map``: the Nav2 multi-robot convention), which one 3-D view cannot tell apart, so the live
view serves them with the robot's prefix: ``/robot<i>/scan`` in ``robot<i>/base_scan``,
``/robot<i>/tf_static`` as robot<i>/base_footprint -> robot<i>/base_link ->
robot<i>/base_scan, ``/robot<i>/map`` (and the navigator's ``plan`` and
``global_costmap/costmap``) in ``world`` (the simulated SLAM's map frame is the world
frame, up to the SLAM's position error); ``/robot<i>/tf`` (already in ``/tf``) is not
served. A recording keeps every topic unchanged.
"""

from __future__ import annotations

import re
import threading

import foxglove
from foxglove import Channel, Context, Schema
from foxglove.websocket import Capability
from rclpy.qos import DurabilityPolicy, QoSProfile

from maes_common.contract import WORLD_FRAME

__all__ = ["LiveServer", "adapt_for_live_view"]

_ROBOT_TOPIC = re.compile(r"^/(robot\d+)/(scan|tf_static|map|tf|plan|global_costmap/costmap)$")
_ROBOT_TF = re.compile(r"^/robot\d+/tf$")
#: Robot topics in the robot's ``map`` frame, served in ``world``.
_IN_MAP = ("map", "plan", "global_costmap/costmap")


def _copy(msg):
    """A shallow copy of a rosidl message (its fields shared, the header a new one)."""
    return type(msg)(**{name: getattr(msg, name) for name in msg.get_fields_and_field_types()})


def adapt_for_live_view(topic: str, msg):
    """The message the live view serves for ``topic`` (robot frames prefixed), or None.

    Examples
    --------
    >>> from sensor_msgs.msg import LaserScan
    >>> scan = LaserScan()
    >>> scan.header.frame_id = "base_scan"
    >>> adapt_for_live_view("/robot3/scan", scan).header.frame_id, scan.header.frame_id
    ('robot3/base_scan', 'base_scan')
    >>> adapt_for_live_view("/robot3/tf", None) is None
    True
    """
    found = _ROBOT_TOPIC.match(topic)
    if found is None:
        return msg
    robot, kind = found.groups()
    if kind == "tf":
        return None
    if kind == "tf_static":
        from tf2_msgs.msg import TFMessage

        transforms = []
        for transform in msg.transforms:
            copy = _copy(transform)
            copy.header = _copy(transform.header)
            copy.header.frame_id = f"{robot}/{transform.header.frame_id}"
            copy.child_frame_id = f"{robot}/{transform.child_frame_id}"
            transforms.append(copy)
        return TFMessage(transforms=transforms)
    out = _copy(msg)
    out.header = _copy(msg.header)
    out.header.frame_id = WORLD_FRAME if kind in _IN_MAP else f"{robot}/{msg.header.frame_id}"
    return out


class _Listener:
    """Server callbacks (on the server's thread): remember new subscriptions."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.subscribed: set[str] = set()  # topics subscribed since the last write

    def on_subscribe(self, client, channel) -> None:
        with self.lock:
            self.subscribed.add(channel.topic)


#: How to choose another port, in every entry point's words (a busy port's error says it).
PORT_HINT = (
    "is another run's live view on that port? Choose another: make run LIVE=1 LIVE_PORT=8766, "
    "maes_run --live 8766, ros2 launch ... live_port:=8766, or direct mode's live=8766"
)


class LiveServer:
    """A :class:`~maes_sim.ros.tap.Sink` serving every tapped topic over Foxglove's WebSocket
    protocol, and what the simulator node hears of the navigator (``takes_heard``: each robot's
    ``plan`` and ``global_costmap/costmap``).

    Parameters
    ----------
    host : str
        Address to bind (``maes_sim.ros.outputs.DEFAULT_HOST``, 127.0.0.1: this machine only).
    port : int
        TCP port (``DEFAULT_PORT``, 8765; 0 picks a free one, see :attr:`port`).
    name : str
        The server's name, shown by the app.

    Raises
    ------
    RuntimeError
        When the server cannot start (the port is taken, say), naming host and port.
    """

    def __init__(self, host: str, port: int, name: str = "maes_sim") -> None:
        self._context = Context()
        self._listener = _Listener()
        try:
            self._server = foxglove.start_server(
                name=name,
                host=host,
                port=int(port),
                capabilities=[Capability.Time],
                supported_encodings=["cdr"],
                server_listener=self._listener,
                context=self._context,
            )
        except Exception as exc:
            raise RuntimeError(
                f"live view: cannot serve on {host}:{port}: {exc}; {PORT_HINT}"
            ) from exc
        self.host = host
        self.port = self._server.port
        self._channels: dict[str, Channel] = {}
        self._latched: dict[str, tuple[bytes, int]] = {}  # topic -> last message, its time
        self._last_time = -1
        self.closed = False

    @property
    def url(self) -> str:
        """``ws://host:port`` to give the app."""
        return f"ws://{self.host}:{self.port}"

    def _channel(self, topic: str, type_name: str, definition: str) -> Channel:
        channel = self._channels.get(topic)
        if channel is None:
            schema = Schema(name=type_name, encoding="ros2msg", data=definition.encode("utf-8"))
            channel = Channel(topic, schema=schema, message_encoding="cdr", context=self._context)
            self._channels[topic] = channel
        return channel

    takes_heard = True

    def adapt(self, topic: str, msg):
        """Robot frames prefixed for one view of every robot (:func:`adapt_for_live_view`)."""
        return adapt_for_live_view(topic, msg)

    def adapts(self, topic: str) -> bool:
        """True for the topics whose messages :meth:`adapt` changes (a robot's frames)."""
        return _ROBOT_TOPIC.match(topic) is not None

    def wants(self, topic: str) -> bool:
        # A topic not advertised yet is wanted once, to advertise it; latched ones always (their
        # last message is kept for clients that subscribe later). A robot's own tf is never
        # served (the global /tf carries it): not wanted, so it is not even built for the view.
        if self.closed or _ROBOT_TF.match(topic):
            return False
        channel = self._channels.get(topic)
        return channel is None or topic in self._latched or channel.has_sinks()

    def write(
        self,
        topic: str,
        type_name: str,
        definition: str,
        qos: QoSProfile,
        data: bytes,
        time_ns: int,
    ) -> None:
        channel = self._channel(topic, type_name, definition)
        if qos.durability == DurabilityPolicy.TRANSIENT_LOCAL:
            self._latched[topic] = (data, time_ns)
        self._resend_latched()
        if time_ns != self._last_time:
            self._last_time = time_ns
            self._server.broadcast_time(time_ns)
        channel.log(data, log_time=time_ns)

    def _resend_latched(self) -> None:
        # A topic stays pending until the server counts the subscription (the callback may come
        # first), so the resent message is not dropped.
        with self._listener.lock:
            pending = set(self._listener.subscribed)
        for topic in pending:
            channel = self._channels.get(topic)
            if channel is not None and not channel.has_sinks():
                continue
            with self._listener.lock:
                self._listener.subscribed.discard(topic)
            if topic in self._latched:
                data, time_ns = self._latched[topic]
                channel.log(data, log_time=time_ns)

    def close(self) -> None:
        """Stop serving (clients see the server go); later calls do nothing."""
        if self.closed:
            return
        self.closed = True
        self._server.stop()
