"""Messages written as the bytes a DDS writer sends (CDR), without rclpy building and
serializing message objects: the simulator's hottest topics (``tf``, ``odom``, ``scan``, the
global ``/tf`` and the markers) are written this way every tick, and rclpy's publishers, the
tap's recording and the live view take the bytes as they are.

- :class:`WireTemplate`: a message whose shape never changes (the same frame names, the same
  number of rays) compiled once into one ``struct`` format; each tick packs the few fields
  that change (the stamp, a pose, the ranges).
- :class:`CdrWriter`: a message written field by field, for shapes that change every tick
  (the markers' point lists).

Wire format: the CDR encoding of ROS 2's rmw layers, as in :mod:`maes_common.state_wire` (a
4-byte encapsulation header, then the fields in declaration order, each primitive aligned to
its size counted from the end of the header; strings as a uint32 length with the terminating
NUL; sequences as a uint32 count, then the elements; fixed arrays as the elements alone).
Padding is written as zeros.
"""

from __future__ import annotations

import struct
from collections.abc import Sequence

import numpy as np

__all__ = ["CDR_HEADER", "CdrWriter", "WireTemplate"]

#: The encapsulation header: CDR, little endian (what rmw writes on little-endian machines).
CDR_HEADER = b"\x00\x01\x00\x00"
#: ``struct`` codes of the ROS 2 primitive types.
_CODES = {
    "boolean": "?",
    "byte": "B",
    "octet": "B",
    "char": "B",
    "uint8": "B",
    "int8": "b",
    "int16": "h",
    "uint16": "H",
    "int32": "i",
    "uint32": "I",
    "int64": "q",
    "uint64": "Q",
    "float": "f",
    "double": "d",
}
_U32 = struct.Struct("<I")


class CdrWriter:
    """A message's bytes written field by field (alignment counted from the end of the
    header); :attr:`out` holds them."""

    __slots__ = ("out",)

    def __init__(self) -> None:
        self.out = bytearray(CDR_HEADER)

    def align(self, size: int) -> None:
        pad = -(len(self.out) - len(CDR_HEADER)) % size
        if pad:
            self.out += bytes(pad)

    def put(self, fmt: struct.Struct, size: int, *values) -> None:
        """``values`` packed by ``fmt``, whose first field is aligned to ``size`` bytes."""
        self.align(size)
        self.out += fmt.pack(*values)

    def string(self, text: str) -> None:
        data = text.encode("utf-8")
        self.put(_U32, 4, len(data) + 1)
        self.out += data + b"\x00"

    def array(self, values: np.ndarray, size: int) -> None:
        """A sequence of fixed-size structs of one floating-point type, ``size`` bytes each
        (``values``: one row per element)."""
        self.put(_U32, 4, len(values))
        if len(values):
            self.align(size)
            self.out += np.ascontiguousarray(values, dtype=f"<f{size}").tobytes()


class WireTemplate:
    """A message compiled into one ``struct`` format: its strings and sequence lengths fixed as
    ``msg`` has them, the fields named in ``slots`` filled by each :meth:`pack`.

    Parameters
    ----------
    msg : rosidl message
        The message as it is to be sent, but for the slots (whose values here only fix the
        shape: a primitive sequence slot keeps its length).
    slots : sequence of str
        Dotted field paths, with ``[k]`` for a sequence's element:
        ``"header.stamp.sec"``, ``"transforms[1].transform.rotation.w"``. A primitive field
        takes a number; a primitive sequence or array (``"ranges"``) takes the bytes of its
        elements (little endian), of the length it has in ``msg``.

    Examples
    --------
    >>> from builtin_interfaces.msg import Time
    >>> t = WireTemplate(Time(), ["sec", "nanosec"])
    >>> t.pack(3, 5).hex(" ", 4)
    '00010000 03000000 05000000'
    """

    def __init__(self, msg, slots: Sequence[str]) -> None:
        self._fmt = ["<"]
        self._args: list = []
        self._pos = 0
        self._at: dict[str, int] = {}
        self._sizes: dict[int, int] = {}  # a bytes slot's index -> its length
        wanted = set(slots)
        self._message(msg, "", wanted)
        missing = sorted(wanted - set(self._at))
        if missing:
            raise ValueError(f"{type(msg).__name__} has no field {', '.join(missing)}")
        self._struct = struct.Struct("".join(self._fmt))
        self._index = [self._at[path] for path in slots]
        #: Bytes of one message.
        self.size = len(CDR_HEADER) + self._struct.size

    def pack(self, *values) -> bytes:
        """The message's bytes with the slots' ``values``, in the order the slots were given."""
        args = self._args.copy()
        for i, value in zip(self._index, values, strict=True):
            if i in self._sizes and len(value) != self._sizes[i]:
                raise ValueError(f"{len(value)} bytes for a field of {self._sizes[i]}")
            args[i] = value
        return CDR_HEADER + self._struct.pack(*args)

    # ------------------------------------------------------------------ compiling
    def _align(self, size: int) -> None:
        pad = -self._pos % size
        if pad:
            self._fmt.append(f"{pad}x")
            self._pos += pad

    def _slot(self, path: str, wanted: set[str]) -> None:
        if path in wanted:
            self._at[path] = len(self._args)

    def _primitive(self, code: str, value, path: str, wanted: set[str]) -> None:
        size = struct.calcsize(code)
        self._align(size)
        self._slot(path, wanted)
        self._fmt.append(code)
        self._args.append(value)
        self._pos += size

    def _bytes(self, data: bytes, path: str, wanted: set[str]) -> None:
        if path in wanted:
            self._sizes[len(self._args)] = len(data)
        self._slot(path, wanted)
        self._fmt.append(f"{len(data)}s")
        self._args.append(data)
        self._pos += len(data)

    def _message(self, msg, prefix: str, wanted: set[str]) -> None:
        for name, kind in msg.get_fields_and_field_types().items():
            self._field(kind, getattr(msg, name), prefix + name, wanted)

    def _field(self, kind: str, value, path: str, wanted: set[str]) -> None:
        if kind in _CODES:
            self._primitive(_CODES[kind], value, path, wanted)
        elif kind == "string" or kind.startswith("string<"):
            if path in wanted:
                raise ValueError(f"{path}: a string's length fixes the layout; it cannot vary")
            data = value.encode("utf-8") + b"\x00"
            self._primitive("I", len(data), "", set())
            self._bytes(data, "", set())
        elif kind.startswith("sequence<") or kind.endswith("]"):
            sequence = kind.startswith("sequence<")
            if sequence:  # sequence<T> or, bounded, sequence<T, N>
                inner = kind[len("sequence<") : kind.rindex(">")].split(",")[0]
            else:  # T[N]
                inner = kind[: kind.index("[")]
            if sequence:
                self._primitive("I", len(value), "", set())
            if inner == "string" or inner.startswith("string<"):
                for item in value:
                    self._field("string", item, "", set())
            elif inner in _CODES:
                code = _CODES[inner]
                if len(value):
                    self._align(struct.calcsize(code))
                self._bytes(struct.pack(f"<{len(value)}{code}", *value), path, wanted)
            else:
                for k, item in enumerate(value):
                    self._message(item, f"{path}[{k}].", wanted)
        else:  # a nested message
            self._message(value, path + ".", wanted)
