"""A tap on a node's publishers: every message published also goes, serialized once (CDR, as
on the wire), to sinks such as the MCAP recorder and the live view. A message published as its
bytes (the simulator's ``tf``, ``odom``, ``scan``, ``maes_state`` and markers: written without
message objects) goes to them as it is.

The simulator node wraps its own publishers (``SimNode(..., tap=Tap([...]))``), so a recording
holds exactly what the node published, with sim-time stamps, whatever DDS delivers; direct mode
publishes the same messages to outlets of the tap alone (:meth:`Tap.outlet`: no node, no DDS).
A run without a tap has plain publishers: nothing here costs it anything.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any, Protocol

from rclpy.qos import QoSProfile
from rclpy.serialization import deserialize_message, serialize_message

from maes_common.publishers import subscription_counter

from .message_definitions import message_definition, type_name

__all__ = ["Sink", "Tap", "TapOutlet", "TappedPublisher"]


class Sink(Protocol):
    """Where a tap's messages go (the recorder, the live view). A sink may also have
    ``adapt(topic, msg) -> msg or None``: the message it takes instead (None: skip it), with
    ``adapts(topic) -> bool``: whether it changes ``topic``'s messages at all (a message
    published as bytes is read back into its message object only for a sink that does)."""

    def wants(self, topic: str) -> bool:
        """True when a message on ``topic`` should be serialized and written now."""

    def write(
        self,
        topic: str,
        type_name: str,
        definition: str,
        qos: QoSProfile,
        data: bytes,
        time_ns: int,
    ) -> None:
        """Take one serialized (CDR) message published at ``time_ns`` (sim time)."""

    def close(self) -> None:
        """Finish (flush, write the file's summary, stop serving); called once."""


class Tap:
    """Serializes what wrapped publishers publish and hands it to the sinks.

    Parameters
    ----------
    sinks : sequence of Sink
    clock_ns : callable, optional
        The time a message is stamped with, in integer nanoseconds (the simulator's sim time);
        set by the node that owns the publishers.
    forward : bool
        Also publish on DDS (True) or feed the sinks only (False; :meth:`outlet`'s
        publishers never publish on DDS).
    page : maes_sim.watch.PageServer, optional
        The web page served beside the sinks (the live view): the simulator node lets its
        feed follow the run; :meth:`close` stops it.
    """

    def __init__(
        self,
        sinks: Sequence[Sink],
        clock_ns: Callable[[], int] | None = None,
        forward: bool = True,
        page: Any = None,
    ) -> None:
        self.sinks = list(sinks)
        self.page = page
        self.clock_ns = clock_ns or (lambda: 0)
        self.forward = forward
        self._closed = False
        self._muted = False
        #: Messages handed to the sinks per topic.
        self.counts: dict[str, int] = {}

    def describe(self, key: str, value: str) -> None:
        """Note ``key: value`` about the run in every sink that keeps such notes (a recorder's
        ``custom_data``: rosbag2's metadata of the bag)."""
        for sink in self.sinks:
            notes = getattr(sink, "custom_data", None)
            if isinstance(notes, dict):
                notes[str(key)] = str(value)

    def wants(self, topic: str) -> bool:
        """True when some sink takes ``topic`` now."""
        return not self._closed and any(sink.wants(topic) for sink in self.sinks)

    def wrap(self, publisher: Any, msg_type: type, qos: QoSProfile) -> TappedPublisher:
        """``publisher`` with its messages also going to the sinks."""
        return TappedPublisher(publisher, self, msg_type, qos)

    def outlet(self, msg_type: type, topic: str, qos: QoSProfile) -> TapOutlet:
        """A publisher of ``topic`` whose messages go to the sinks alone (no node, no DDS):
        for a run the caller steps and only records or shows (direct mode). Its arguments
        are ``Node.create_publisher``'s."""
        return TapOutlet(self, msg_type, topic, qos)

    @contextmanager
    def muted(self) -> Iterator[None]:
        """Within the block, messages are published (when forwarding) but not recorded: for a
        repeat the sinks have already (the simulator publishes tick 0 again at the start)."""
        self._muted = True
        try:
            yield
        finally:
            self._muted = False

    def record(
        self, topic: str, msg_type: type, qos: QoSProfile, msg: Any, heard: bool = False
    ) -> None:
        """Serialize ``msg`` once and give it to every sink that wants ``topic``.

        ``msg``: a message of ``msg_type``, or its serialized bytes (given as they are).
        ``heard``: a message received from another node (the navigator's plans), which only
        sinks with ``takes_heard`` (the live view, not the recording) take.
        """
        if self._closed or self._muted:
            return
        sinks = [
            sink
            for sink in self.sinks
            if (not heard or getattr(sink, "takes_heard", False)) and sink.wants(topic)
        ]
        if not sinks:
            return
        name, definition = type_name(msg_type), message_definition(msg_type)
        now = int(self.clock_ns())
        raw = isinstance(msg, bytes)
        serialized: dict[int, bytes] = {id(msg): msg} if raw else {}  # serialize each once
        for sink in sinks:
            adapt = getattr(sink, "adapt", None)  # a sink may serve a changed copy
            out = msg
            if adapt is not None and (not raw or sink.adapts(topic)):
                out = adapt(topic, deserialize_message(msg, msg_type) if raw else msg)
            if out is None:
                continue
            data = serialized.get(id(out))
            if data is None:
                data = serialized[id(out)] = serialize_message(out)
            sink.write(topic, name, definition, qos, data, now)
        self.counts[topic] = self.counts.get(topic, 0) + 1

    def listen(self, node: Any, topic: str, msg_type: type, qos: QoSProfile) -> None:
        """Subscribe ``node`` to ``topic`` and hand what it hears to the sinks that take heard
        messages (nothing is subscribed when none does)."""
        if any(getattr(sink, "takes_heard", False) for sink in self.sinks):
            node.create_subscription(
                msg_type, topic, lambda msg: self.record(topic, msg_type, qos, msg, True), qos
            )

    def close(self) -> None:
        """Close every sink (once; later calls do nothing). Every sink is closed even when one
        fails; the first error is raised afterwards."""
        if self._closed:
            return
        self._closed = True
        error: BaseException | None = None
        if self.page is not None:
            self.page.feed.close()
        for sink in self.sinks:
            try:
                sink.close()
            except Exception as exc:  # close the others first
                error = error or exc
        if self.page is not None:
            try:
                self.page.close()
            except Exception as exc:
                error = error or exc
        if error is not None:
            raise error


class TappedPublisher:
    """A publisher whose messages also go to a :class:`Tap` (everything else passes through).

    ``get_subscription_count`` counts a sink that wants the topic as one more subscriber, so a
    node that builds a message only when someone listens (heatmaps, markers) builds it for the
    recording and the live view too.
    """

    def __init__(self, publisher: Any, tap: Tap, msg_type: type, qos: QoSProfile) -> None:
        self._publisher = publisher
        self._readers = subscription_counter(publisher)
        self._tap = tap
        self._msg_type = msg_type
        self._qos = qos
        self.topic = publisher.topic_name

    def publish(self, msg: Any) -> None:
        if self._tap.forward:
            self._publisher.publish(msg)
        self._tap.record(self.topic, self._msg_type, self._qos, msg)

    def get_subscription_count(self) -> int:
        return self._readers() + int(self._tap.wants(self.topic))

    def __getattr__(self, name: str) -> Any:
        return getattr(self._publisher, name)


class TapOutlet:
    """What a :class:`TappedPublisher` of a tap that does not forward is, without the DDS
    publisher: ``publish`` hands the message to the tap, ``get_subscription_count`` is 1 while
    a sink wants the topic (so a message built only when someone listens is built for the
    sinks), else 0."""

    def __init__(self, tap: Tap, msg_type: type, topic: str, qos: QoSProfile) -> None:
        self._tap = tap
        self._msg_type = msg_type
        self._qos = qos
        self.topic = topic

    def publish(self, msg: Any) -> None:
        self._tap.record(self.topic, self._msg_type, self._qos, msg)

    def get_subscription_count(self) -> int:
        return int(self._tap.wants(self.topic))
