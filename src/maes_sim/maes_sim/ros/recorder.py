"""Record a run to MCAP in rosbag2's layout, without ``ros2 bag`` (which the pip environment
lacks).

The file is what ``ros2 bag record -s mcap`` writes: profile ``ros2``, one schema per message
type named ``pkg/msg/Type`` with its complete ``ros2msg`` definition, channels with message
encoding ``cdr`` and their ``offered_qos_profiles``, messages as serialized on the wire with
log and publish times in sim time (nanoseconds), and at the end a ``rosbag2`` metadata record
(``serialized_metadata``: the bag's metadata YAML) before MCAP's summary and footer. A path
ending in ``.mcap`` is that one file; any other path is a rosbag2 bag folder
(``<path>/<name>_0.mcap`` beside ``metadata.yaml``), which ``ros2 bag play`` and ``ros2 bag
info`` take too.
"""

from __future__ import annotations

import functools
import os
from pathlib import Path

import yaml
from mcap.writer import CompressionType, Writer
from rclpy.duration import Duration
from rclpy.qos import QoSProfile

__all__ = ["McapRecorder", "qos_to_yaml"]

#: rosbag2's "infinite" duration (a QoS deadline / lifespan / lease left at the default).
_INFINITE = {"sec": 2147483647, "nsec": 4294967295}


def _duration(value: Duration) -> tuple[tuple[str, int], ...]:
    nanos = value.nanoseconds
    if nanos <= 0:
        return tuple(_INFINITE.items())
    return (("sec", nanos // 1_000_000_000), ("nsec", nanos % 1_000_000_000))


def qos_to_yaml(qos: QoSProfile) -> str:
    """``offered_qos_profiles`` of one publisher, as rosbag2 (Jazzy) writes it.

    Examples
    --------
    >>> from rclpy.qos import QoSProfile, DurabilityPolicy
    >>> print(qos_to_yaml(QoSProfile(depth=1, durability=DurabilityPolicy.TRANSIENT_LOCAL)))
    ... # doctest: +ELLIPSIS
    - history: keep_last
      depth: 1
      reliability: reliable
      durability: transient_local
    ...
    """
    profile = (
        ("history", qos.history.name.lower()),
        ("depth", int(qos.depth)),
        ("reliability", qos.reliability.name.lower()),
        ("durability", qos.durability.name.lower()),
        ("deadline", _duration(qos.deadline)),
        ("lifespan", _duration(qos.lifespan)),
        ("liveliness", qos.liveliness.name.lower()),
        ("liveliness_lease_duration", _duration(qos.liveliness_lease_duration)),
        ("avoid_ros_namespace_conventions", bool(qos.avoid_ros_namespace_conventions)),
    )
    return _profile_yaml(profile)


@functools.lru_cache(maxsize=64)
def _profile_yaml(profile: tuple) -> str:
    # A recording of 120 robots registers about 730 channels with a handful of distinct QoS
    # profiles: dumped once each (PyYAML takes milliseconds a dump).
    mapping = {key: dict(value) if isinstance(value, tuple) else value for key, value in profile}
    return yaml.safe_dump([mapping], sort_keys=False).rstrip("\n")


class McapRecorder:
    """A :class:`~maes_sim.ros.tap.Sink` writing every message it gets to a rosbag2 MCAP file.

    Parameters
    ----------
    path : str or PathLike
        ``run.mcap`` (one file) or a bag folder that does not exist yet.
    topics : collection of str, optional
        Record only these topics (default: every topic tapped).

    Raises
    ------
    FileExistsError
        When the file or folder exists already (a recording is never overwritten).
    """

    def __init__(self, path: str | os.PathLike[str], topics=None) -> None:
        path = Path(path)
        if path.exists():
            raise FileExistsError(f"recording {path} exists already; give a new path")
        if path.suffix == ".mcap":
            path.parent.mkdir(parents=True, exist_ok=True)
            self.bag_dir: Path | None = None
            self.path = path
        else:
            path.mkdir(parents=True)
            self.bag_dir = path
            self.path = path / f"{path.name}_0.mcap"
        self.topics = None if topics is None else frozenset(topics)
        self._stream = open(self.path, "wb")  # noqa: SIM115 (closed in close())
        self._writer = Writer(self._stream, compression=CompressionType.ZSTD)
        self._writer.start(profile="ros2", library="maes_sim.ros.recorder")
        self._schemas: dict[str, int] = {}
        self._channels: dict[str, tuple[int, str, str]] = {}  # topic -> (id, type, qos yaml)
        self._sequence = 0
        self.counts: dict[str, int] = {}
        #: rosbag2's ``custom_data`` of the bag (string keys and values), written at the end.
        self.custom_data: dict[str, str] = {}
        self.start_ns: int | None = None
        self.end_ns = 0
        self.closed = False

    def wants(self, topic: str) -> bool:
        return not self.closed and (self.topics is None or topic in self.topics)

    def write(
        self,
        topic: str,
        type_name: str,
        definition: str,
        qos: QoSProfile,
        data: bytes,
        time_ns: int,
    ) -> None:
        channel = self._channels.get(topic)
        if channel is None:
            schema = self._schemas.get(type_name)
            if schema is None:
                schema = self._writer.register_schema(
                    name=type_name, encoding="ros2msg", data=definition.encode("utf-8")
                )
                self._schemas[type_name] = schema
            qos_yaml = qos_to_yaml(qos)
            channel_id = self._writer.register_channel(
                topic=topic,
                message_encoding="cdr",
                schema_id=schema,
                metadata={"offered_qos_profiles": qos_yaml, "topic_type_hash": ""},
            )
            channel = self._channels[topic] = (channel_id, type_name, qos_yaml)
        self._writer.add_message(
            channel_id=channel[0],
            log_time=time_ns,
            publish_time=time_ns,
            data=data,
            sequence=self._sequence,
        )
        self._sequence += 1
        self.counts[topic] = self.counts.get(topic, 0) + 1
        if self.start_ns is None:
            self.start_ns = time_ns
        self.end_ns = max(self.end_ns, time_ns)

    def metadata(self) -> dict:
        """The bag's metadata as rosbag2 writes ``metadata.yaml`` (version 9, Jazzy)."""
        start = self.start_ns or 0
        total = sum(self.counts.values())
        return {
            "rosbag2_bagfile_information": {
                "version": 9,
                "storage_identifier": "mcap",
                "duration": {"nanoseconds": self.end_ns - start},
                "starting_time": {"nanoseconds_since_epoch": start},
                "message_count": total,
                "topics_with_message_count": [
                    {
                        "topic_metadata": {
                            "name": topic,
                            "type": type_name,
                            "serialization_format": "cdr",
                            "offered_qos_profiles": qos_yaml,
                            "type_description_hash": "",
                        },
                        "message_count": self.counts.get(topic, 0),
                    }
                    for topic, (_, type_name, qos_yaml) in self._channels.items()
                ],
                "compression_format": "",
                "compression_mode": "",
                "relative_file_paths": [self.path.name],
                "files": [
                    {
                        "path": self.path.name,
                        "starting_time": {"nanoseconds_since_epoch": start},
                        "duration": {"nanoseconds": self.end_ns - start},
                        "message_count": total,
                    }
                ],
                "custom_data": dict(self.custom_data),
                "ros_distro": "jazzy",
            }
        }

    def close(self) -> None:
        """Write the rosbag2 metadata record, MCAP's summary and footer (and ``metadata.yaml``
        for a bag folder). Later calls do nothing."""
        if self.closed:
            return
        self.closed = True
        meta = yaml.safe_dump(self.metadata(), sort_keys=False)
        try:
            self._writer.add_metadata("rosbag2", {"serialized_metadata": meta})
            self._writer.finish()
        finally:
            self._stream.close()
        if self.bag_dir is not None:
            (self.bag_dir / "metadata.yaml").write_text(meta, encoding="utf-8")
