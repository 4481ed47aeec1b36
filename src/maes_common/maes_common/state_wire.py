"""A serialized ``maes_interfaces/State``: the parts a reader needs read in place, and the
bytes written without building the message.

A ``maes_state`` message carries every tag and neighbour of the robot as a Python object once
rclpy deserializes it (at 50 robots about 120 ``EnvironmentTag`` and 40 ``NearbyRobot`` objects
per robot per tick). Most readers need a few fields: the built-in navigator the tick and the
neighbours' positions, the shipped logics the tick and the broadcasts. A subscription with
``raw=True`` hands over the serialized bytes; these functions read the fields in place from
them (the tags are stepped over, never built). The simulator, in turn, publishes the bytes
written by :func:`encode_state` from pieces it encodes once (:func:`tag_wire` for a tag, for
the run; :func:`nearby_wire` for a neighbour, for a tick) instead of building the message
objects for rclpy to serialize. Pure Python, no rclpy: the one home of State's wire format.

Wire format: the CDR encoding of ROS 2's rmw layers (a 4-byte encapsulation header, then the
fields in declaration order, each primitive aligned to its size counted from the end of the
header; strings as a uint32 length with the terminating NUL, then the bytes; sequences as a
uint32 count, then the elements). The field order is State.msg's: tick, status, colliding,
incoming_broadcast_msgs, tags_nearby, nearby_robots, then the appended position, heading and
robot_type (fields may only be appended, so the order of these readers holds).
"""

from __future__ import annotations

import struct

__all__ = [
    "StateHead",
    "WirePiece",
    "broadcast_wire",
    "encode_state",
    "nearby_wire",
    "read_state_head",
    "read_state_nearby",
    "tag_wire",
]

_HEADER = 4  # encapsulation header: 0x00, kind (0x01 CDR little endian), options (2 bytes)
_U32 = {True: struct.Struct("<I"), False: struct.Struct(">I")}
_I64 = {True: struct.Struct("<q"), False: struct.Struct(">q")}
_XY = {True: struct.Struct("<dd"), False: struct.Struct(">dd")}


class StateHead:
    """A State's leading fields read from its wire bytes: ``tick``, ``status``, ``colliding``,
    ``broadcasts`` (``(msg, sender)`` pairs in order) and ``end``, the offset at which
    ``tags_nearby`` starts."""

    __slots__ = ("broadcasts", "colliding", "end", "status", "tick")

    def __init__(self, tick: int, status: str, colliding: bool, broadcasts: list, end: int) -> None:
        self.tick = tick
        self.status = status
        self.colliding = colliding
        self.broadcasts = broadcasts
        self.end = end


def _little_endian(data: bytes | memoryview) -> bool:
    if len(data) < _HEADER + 8:
        raise ValueError(f"maes_state: {len(data)} bytes is too short for a State message")
    kind = data[1]
    if kind not in (0, 1):
        raise ValueError(f"maes_state: encapsulation kind {kind} is not plain CDR (0 or 1)")
    return kind == 1


def _align(pos: int, size: int) -> int:
    """``pos`` (an offset into the bytes) moved up to a multiple of ``size`` past the header."""
    return pos + (-(pos - _HEADER) % size)


def _string(data, pos: int, u32) -> tuple[str, int]:
    pos = _align(pos, 4)
    (n,) = u32.unpack_from(data, pos)
    pos += 4
    # n counts the terminating NUL
    return bytes(data[pos : pos + n - 1]).decode("utf-8"), pos + n


def _skip_string(data, pos: int, u32) -> int:
    pos = _align(pos, 4)
    return pos + 4 + u32.unpack_from(data, pos)[0]


def read_state_head(data: bytes | memoryview) -> StateHead:
    """The tick, status, collision flag and broadcasts of a serialized State.

    Parameters
    ----------
    data : bytes or memoryview
        A ``maes_interfaces/State`` as a ``raw=True`` subscription receives it.

    Returns
    -------
    StateHead

    Raises
    ------
    ValueError
        When the bytes are too short or not CDR.
    """
    try:
        return _read_head(data)
    except (struct.error, IndexError, UnicodeDecodeError) as exc:
        raise ValueError(f"maes_state: not a State message ({exc})") from None


def _read_head(data) -> StateHead:
    little = _little_endian(data)
    u32 = _U32[little]
    (tick,) = _I64[little].unpack_from(data, _HEADER)
    status, pos = _string(data, _HEADER + 8, u32)
    colliding = bool(data[pos])
    pos = _align(pos + 1, 4)
    (count,) = u32.unpack_from(data, pos)
    pos += 4
    broadcasts = []
    for _ in range(count):
        msg, pos = _string(data, pos, u32)
        sender, pos = _string(data, pos, u32)
        broadcasts.append((msg, sender))
    return StateHead(tick, status, colliding, broadcasts, pos)


def read_state_nearby(data: bytes | memoryview) -> tuple[int, list[tuple[float, float]]]:
    """The tick of a serialized State and its ``nearby_robots``' positions ``(x, y)`` in
    order (metres, as in the message); the tags are stepped over, not built.

    Parameters
    ----------
    data : bytes or memoryview
        A ``maes_interfaces/State`` as a ``raw=True`` subscription receives it.

    Returns
    -------
    tuple of (int, list of (float, float))

    Raises
    ------
    ValueError
        When the bytes are too short or not CDR.
    """
    tick, positions, _ = read_state_neighbours(data)
    return tick, positions


def read_state_neighbours(
    data: bytes | memoryview,
) -> tuple[int, list[tuple[float, float]], list[str]]:
    """:func:`read_state_nearby`, with each nearby robot's ``id`` too (``"2"`` for robot2).

    Returns
    -------
    tuple of (int, list of (float, float), list of str)
        The tick, the positions and the ids, in the message's order.

    Raises
    ------
    ValueError
        When the bytes are too short or not CDR.
    """
    try:
        return _read_nearby(data)
    except (struct.error, IndexError, UnicodeDecodeError) as exc:
        raise ValueError(f"maes_state: not a State message ({exc})") from None


def _read_nearby(data) -> tuple[int, list[tuple[float, float]], list[str]]:
    little = _little_endian(data)
    u32, i64, xy = _U32[little], _I64[little], _XY[little]
    (tick,) = i64.unpack_from(data, _HEADER)
    pos = _skip_string(data, _HEADER + 8, u32) + 1  # status, then colliding (1 byte)
    pos = _align(pos, 4)
    (count,) = u32.unpack_from(data, pos)
    pos += 4
    for _ in range(count):  # broadcasts: msg, sender
        pos = _skip_string(data, _skip_string(data, pos, u32), u32)
    pos = _align(pos, 4)
    (count,) = u32.unpack_from(data, pos)
    pos += 4
    # Each tag and neighbour starts 4-aligned (after the count or an 8-byte field), so the
    # loops below step by lengths alone (the hot part of a 50-robot tick: ~120 tags a state).
    unpack, pair = u32.unpack_from, xy.unpack_from
    for _ in range(count):  # tags: msg, pos (2 x float64), sender, tick (int64)
        pos += 4 + unpack(data, pos)[0]
        pos += (_HEADER - pos) % 8 + 16
        pos += 4 + unpack(data, pos)[0]
        pos += (_HEADER - pos) % 8 + 8
    pos = _align(pos, 4)
    (count,) = unpack(data, pos)
    pos += 4
    nearby, ids = [], []
    for _ in range(count):  # neighbours: id, pos
        size = unpack(data, pos)[0]
        ids.append(bytes(data[pos + 4 : pos + 3 + size]).decode())
        pos += 4 + size
        pos += (_HEADER - pos) % 8
        nearby.append(pair(data, pos))
        pos += 16
    return tick, nearby, ids


# ---------------------------------------------------------------------------------- writing
_LE_U32, _LE_I64, _LE_F64 = struct.Struct("<I"), struct.Struct("<q"), struct.Struct("<d")
_ENCAPSULATION = b"\x00\x01\x00\x00"  # CDR little endian, as rmw writes it


def _put_string(out: bytearray, text: bytes) -> None:
    out += bytes(-(len(out) - _HEADER) % 4)
    out += _LE_U32.pack(len(text) + 1)
    out += text
    out += b"\x00"


def _put_f64(out: bytearray, *values: float) -> None:
    out += bytes(-(len(out) - _HEADER) % 8)
    for value in values:
        out += _LE_F64.pack(value)


#: An element of ``tags_nearby`` or ``nearby_robots`` written once: its bytes when it starts
#: 8-aligned (``[0]``) and 4 bytes past that (``[4]``). Each such element ends with an 8-byte
#: field, so every element after the first of a sequence starts 8-aligned.
WirePiece = dict[int, bytes]


def _piece(write) -> WirePiece:
    pieces = {}
    for phase in (0, 4):
        out = bytearray(_HEADER + phase)
        write(out)
        pieces[phase] = bytes(out[_HEADER + phase :])
    return pieces


def tag_wire(msg: str, x: float, y: float, sender: str, tick: int) -> WirePiece:
    """An ``EnvironmentTag`` (payload, position in metres, sender, tick) written once.

    Examples
    --------
    >>> len(tag_wire("a", 1.0, 2.0, "robot0", 3)[0])
    48
    """
    text, who = msg.encode("utf-8"), sender.encode("utf-8")

    def write(out: bytearray) -> None:
        _put_string(out, text)
        _put_f64(out, float(x), float(y))
        _put_string(out, who)
        out += bytes(-(len(out) - _HEADER) % 8)
        out += _LE_I64.pack(int(tick))

    return _piece(write)


def broadcast_wire(msg: str, sender: str) -> bytes:
    """A ``Broadcast`` (payload, sender) written once, for :func:`encode_state`: its bytes from
    a 4-aligned start, padded to a multiple of 4 bytes (the padding the next element's or
    field's alignment would add), so that pieces are simply joined.

    Examples
    --------
    >>> broadcast_wire("hi", "robot0").hex(" ", 4)
    '03000000 68690000 07000000 726f626f 74300000'
    """
    out = bytearray(_HEADER)
    _put_string(out, msg.encode("utf-8"))
    _put_string(out, sender.encode("utf-8"))
    out += bytes(-(len(out) - _HEADER) % 4)
    return bytes(out[_HEADER:])


def nearby_wire(robot_id: str, x: float, y: float) -> WirePiece:
    """A ``NearbyRobot`` (its id text, position in metres) written once."""
    text = robot_id.encode("utf-8")

    def write(out: bytearray) -> None:
        _put_string(out, text)
        _put_f64(out, float(x), float(y))

    return _piece(write)


def _put_pieces(out: bytearray, pieces: list[WirePiece]) -> None:
    out += bytes(-(len(out) - _HEADER) % 4)
    out += _LE_U32.pack(len(pieces))
    if pieces:
        out += pieces[0][(len(out) - _HEADER) % 8]
        out += b"".join([piece[0] for piece in pieces[1:]])


def encode_state(
    tick: int,
    status: str,
    colliding: bool,
    broadcasts: list[tuple[str, str]] | list[bytes],
    tags: list[WirePiece],
    nearby: list[WirePiece],
    position: tuple[float, float],
    heading: float,
    robot_type: str,
) -> bytes:
    """A State message's bytes, as ``rclpy.serialization.serialize_message`` writes them.

    Parameters
    ----------
    tick, status, colliding, heading, robot_type
        The fields of the same names.
    broadcasts : list of (str, str), or list of bytes
        ``incoming_broadcast_msgs`` as ``(msg, sender)``, or each written once by
        :func:`broadcast_wire` (a message heard by many robots is then encoded once).
    tags, nearby : list of WirePiece
        ``tags_nearby`` (:func:`tag_wire`) and ``nearby_robots`` (:func:`nearby_wire`).
    position : (float, float)
        ``position`` in metres.

    Returns
    -------
    bytes
        Ready for ``Publisher.publish``.
    """
    out = bytearray(_ENCAPSULATION)
    out += _LE_I64.pack(int(tick))
    _put_string(out, status.encode("utf-8"))
    out += b"\x01" if colliding else b"\x00"
    out += bytes(-(len(out) - _HEADER) % 4)
    out += _LE_U32.pack(len(broadcasts))
    if broadcasts and isinstance(broadcasts[0], bytes):  # pieces: 4-aligned here, padded
        out += b"".join(broadcasts)
    else:
        for text, sender in broadcasts:
            _put_string(out, text.encode("utf-8"))
            _put_string(out, sender.encode("utf-8"))
    _put_pieces(out, tags)
    _put_pieces(out, nearby)
    _put_f64(out, float(position[0]), float(position[1]), float(heading))
    _put_string(out, robot_type.encode("utf-8"))
    return bytes(out)
