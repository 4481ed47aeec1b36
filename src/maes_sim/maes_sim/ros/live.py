"""Live view: a Foxglove WebSocket server (``foxglove-sdk``) serving what the simulator node
publishes, so Foxglove or Lichtblick shows the robots, maps and scans of a running simulation
without RViz (docs/live_view.md).

Each topic is a channel with its ROS 2 schema (``pkg/msg/Type``, encoding ``ros2msg``, the
complete ``.msg`` definition) and CDR messages, as Foxglove's ROS 2 bridge serves them; the
server advertises the ``time`` capability and sends the sim time, so the app's clock is the
simulation's. Nothing is serialized for a topic no client subscribed to. A latched topic's last
message (ground truth, tf_static, the robots' maps) is sent again when a client subscribes,
as a transient-local subscriber would get it.
"""

from __future__ import annotations

import threading

import foxglove
from foxglove import Channel, Context, Schema
from foxglove.websocket import Capability
from rclpy.qos import DurabilityPolicy, QoSProfile

from .outputs import DEFAULT_HOST, DEFAULT_PORT

__all__ = ["LiveServer"]


class _Listener:
    """Server callbacks (on the server's thread): remember new subscriptions."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.subscribed: set[str] = set()  # topics subscribed since the last write

    def on_subscribe(self, client, channel) -> None:
        with self.lock:
            self.subscribed.add(channel.topic)


class LiveServer:
    """A :class:`~maes_sim.ros.tap.Sink` serving every tapped topic over Foxglove's WebSocket
    protocol.

    Parameters
    ----------
    host : str
        Address to bind (default 127.0.0.1: this machine only).
    port : int
        TCP port (default 8765; 0 picks a free one, see :attr:`port`).
    name : str
        The server's name, shown by the app.

    Raises
    ------
    RuntimeError
        When the server cannot start (the port is taken, say), naming host and port.
    """

    def __init__(
        self, host: str = DEFAULT_HOST, port: int = DEFAULT_PORT, name: str = "maes_sim"
    ) -> None:
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
            raise RuntimeError(f"live view: cannot serve on {host}:{port}: {exc}") from exc
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

    def wants(self, topic: str) -> bool:
        # A topic not advertised yet is wanted once, to advertise it; latched ones always (their
        # last message is kept for clients that subscribe later).
        if self.closed:
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
        with self._listener.lock:
            topics, self._listener.subscribed = self._listener.subscribed, set()
        for topic in topics:
            if topic in self._latched:
                data, time_ns = self._latched[topic]
                self._channels[topic].log(data, log_time=time_ns)

    def close(self) -> None:
        """Stop serving (clients see the server go); later calls do nothing."""
        if self.closed:
            return
        self.closed = True
        self._server.stop()
