"""Reading user files safely: size and type checks before reading, and one strict YAML loader.

Every user file (config, Nav2 map YAML, map images, experiment files) goes through
:func:`read_user_file`, which refuses anything that is not a regular file (a FIFO, ``/dev/zero``,
a directory) or is larger than the caller's cap *before* reading a byte of it.

:func:`load_yaml` is the one place where YAML text becomes plain data and every way PyYAML can
fail becomes the caller's named error (``ConfigError``, ``MapError``, ...), never a raw
traceback. Its loader:

- resolves scalars by the YAML 1.2 core schema (what a user expects: ``1e3`` and ``1.0e3`` are
  numbers, ``0o17`` is octal) and **refuses** plain scalars that YAML 1.1 (PyYAML's default)
  reads differently: ``1:30`` (1.1: 90, base 60), ``010`` (1.1: octal 8), ``1_000``, ``0b101``,
  ``yes``/``no``/``on``/``off`` (1.1: booleans). Quote them to mean text;
- refuses a key written twice in one mapping (plain YAML keeps the last one silently);
- refuses documents that expand to more than :data:`MAX_YAML_NODES` nodes through aliases
  ("billion laughs"), hold an alias inside the value it names (``a: &a [*a]``: a cycle, which
  PyYAML would build as an infinite value), nest deeper than :data:`MAX_YAML_DEPTH`, or hold
  integers of more than :data:`MAX_INT_DIGITS` digits;
- never builds an arbitrary Python object (a ``SafeLoader`` base).

Error messages quote at most a short excerpt of a value (:func:`short_repr`).
"""

from __future__ import annotations

import os
import re
import reprlib
import stat
from pathlib import Path
from typing import Any

import yaml
from yaml.composer import Composer
from yaml.constructor import ConstructorError, SafeConstructor
from yaml.nodes import MappingNode, ScalarNode, SequenceNode
from yaml.parser import Parser
from yaml.reader import Reader
from yaml.resolver import BaseResolver, Resolver
from yaml.scanner import Scanner

__all__ = [
    "MAX_INT_DIGITS",
    "MAX_YAML_BYTES",
    "MAX_YAML_DEPTH",
    "MAX_YAML_NODES",
    "check_user_file",
    "load_yaml",
    "read_user_file",
    "short_repr",
]

#: Largest YAML file read (a full config is a few KiB).
MAX_YAML_BYTES = 1 << 20
#: Most nodes a YAML document may expand to, counting every use of an alias in full.
MAX_YAML_NODES = 100_000
#: Deepest nesting of mappings and sequences (a config nests 3 levels).
MAX_YAML_DEPTH = 64
#: Longest integer literal (seeds need 19 digits; Python refuses over 4300).
MAX_INT_DIGITS = 100

_repr = reprlib.Repr()
_repr.maxlevel, _repr.maxdict, _repr.maxlist, _repr.maxtuple = 3, 6, 6, 6
_repr.maxstring, _repr.maxother, _repr.maxlong = 60, 60, 40


def short_repr(value: Any, limit: int = 60) -> str:
    """``repr`` of ``value`` cut to about ``limit`` characters, at a cost bounded by ``limit``.

    Safe on huge or deeply shared values (a billion-laughs list): containers show only their
    first items and levels.

    Examples
    --------
    >>> short_repr("x" * 1000)
    "'xxxxxxxxxxxxxxxxxxxxxxxxxxx...xxxxxxxxxxxxxxxxxxxxxxxxxxxx'"
    >>> short_repr(list(range(100)))
    '[0, 1, 2, 3, 4, 5, ...]'
    """
    try:
        text = _repr.repr(value)
    except Exception:  # a user object whose __repr__ fails: name its type instead
        text = f"<{type(value).__name__}>"
    if len(text) > limit:
        text = text[: limit - 3] + "..."
    return text


def read_user_file(
    path: str | os.PathLike[str], max_bytes: int, what: str, error: type[Exception]
) -> bytes:
    """The bytes of a user file, after checking it is a regular file of at most ``max_bytes``.

    Parameters
    ----------
    path : str or path-like
        The file (``~`` is not expanded here).
    max_bytes : int
        Size cap; larger files are refused without being read.
    what : str
        What the file is, for messages (``"config file"``).
    error : type
        Exception class raised with a one-line message (``error(message)``).

    Raises
    ------
    error
        Missing, a directory, not a regular file (FIFO, device), unreadable, or too large.

    Examples
    --------
    >>> read_user_file("/dev/zero", 100, "config file", ValueError)
    Traceback (most recent call last):
    ...
    ValueError: /dev/zero: not a regular file (a character device), expected a config file
    >>> read_user_file("map\\0.pgm", 100, "map image", ValueError)
    Traceback (most recent call last):
    ...
    ValueError: 'map\\x00.pgm': a map image path cannot contain a NUL byte (\\x00)
    """
    file = Path(path)
    check_user_file(file, max_bytes, what, error)
    try:
        with open(file, "rb") as handle:
            data = handle.read(max_bytes + 1)  # the file may have grown since the check
    except OSError as exc:
        raise error(f"{file}: cannot read the {what}: {exc.strerror or exc}") from None
    if len(data) > max_bytes:
        raise error(f"{file}: larger than the {_size(max_bytes)} allowed for a {what}")
    return data


def check_user_file(
    path: str | os.PathLike[str], max_bytes: int, what: str, error: type[Exception]
) -> int:
    """Check that ``path`` is a regular file of at most ``max_bytes``; return its size.

    The checks of :func:`read_user_file`, for readers that read the file in parts.
    """
    file = Path(path)
    if "\0" in str(file):
        raise error(f"{short_repr(str(file))}: a {what} path cannot contain a NUL byte (\\x00)")
    try:
        info = os.stat(file)  # follows symlinks: the target is what gets read
    except FileNotFoundError:
        raise error(f"{file}: {what} not found (resolved to {file.absolute()})") from None
    except (OSError, ValueError) as exc:
        reason = getattr(exc, "strerror", None) or exc
        raise error(f"{file}: cannot read the {what}: {reason}") from None
    if stat.S_ISDIR(info.st_mode):
        raise error(f"{file}: is a directory, expected a {what}")
    if not stat.S_ISREG(info.st_mode):
        raise error(f"{file}: not a regular file ({_file_kind(info.st_mode)}), expected a {what}")
    if info.st_size > max_bytes:
        raise error(
            f"{file}: {_size(info.st_size)}, more than the {_size(max_bytes)} allowed for a {what}"
        )
    return int(info.st_size)


def _file_kind(mode: int) -> str:
    for test, name in (
        (stat.S_ISFIFO, "a FIFO"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISSOCK, "a socket"),
    ):
        if test(mode):
            return name
    return "not a plain file"


def _size(n: int) -> str:
    for unit, scale in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= scale:
            return f"{n / scale:.1f} {unit}"
    return f"{n} bytes"


# ------------------------------------------------------------------------- the YAML loader
class _Refused(yaml.YAMLError):
    """A document the strict loader will not build; the message says why and where."""


class _Resolver12(BaseResolver):
    """Implicit types of the YAML 1.2 core schema (bool, int, float, null) plus merge keys."""


_Resolver12.add_implicit_resolver(
    "tag:yaml.org,2002:bool", re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$"), list("tTfF")
)
_Resolver12.add_implicit_resolver(
    "tag:yaml.org,2002:int",
    re.compile(r"^(?:[-+]?[0-9]+|0o[0-7]+|0x[0-9a-fA-F]+)$"),
    list("-+0123456789"),
)
_Resolver12.add_implicit_resolver(
    "tag:yaml.org,2002:float",
    re.compile(
        r"^(?:[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?"
        r"|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$"
    ),
    list("-+0123456789."),
)
_Resolver12.add_implicit_resolver(
    "tag:yaml.org,2002:null", re.compile(r"^(?:~|null|Null|NULL|)$"), ["~", "n", "N", ""]
)
_Resolver12.add_implicit_resolver("tag:yaml.org,2002:merge", re.compile(r"^(?:<<)$"), ["<"])

_YAML11 = Resolver()  # PyYAML's YAML 1.1 rules, only to spot scalars the two versions read apart
_TYPED = {"tag:yaml.org,2002:bool", "tag:yaml.org,2002:int", "tag:yaml.org,2002:float"}
_LEADING_ZERO = re.compile(r"^[-+]?0[0-9]+$")


def _yaml11_trap(value: str) -> str | None:
    """Why plain ``value`` would mean something else to a YAML 1.1 reader, or None."""
    tag11 = _YAML11.resolve(ScalarNode, value, (True, False))
    tag12 = _STRICT_RESOLVER.resolve(ScalarNode, value, (True, False))
    if tag11 not in _TYPED:
        return None
    if ":" in value and tag12 != tag11:
        return "YAML 1.1 reads it as a base-60 number (1:30 = 90); write the number itself"
    if tag11 == "tag:yaml.org,2002:bool" and tag12 != tag11:
        return "YAML 1.1 reads it as a boolean; write true or false"
    if _LEADING_ZERO.match(value):
        return "YAML 1.1 reads a leading zero as octal (010 = 8); write 10, or 0o10 for octal"
    if value.lstrip("+-").startswith("0b"):
        return "YAML 1.1 reads it as a binary number; write it in decimal or as 0x.."
    if tag12 != tag11:
        return "YAML 1.1 reads it as a number; write it without '_'"
    return None


class _StrictComposer(Composer):
    """Composer with a depth limit, an expansion budget for aliases and the YAML 1.1 traps."""

    def compose_document(self):
        self._depth = 0
        node = super().compose_document()
        _check_expansion(node)
        return node

    def compose_node(self, parent, index):
        self._depth += 1
        try:
            if self._depth > MAX_YAML_DEPTH:
                mark = self.peek_event().start_mark
                raise _Refused(f"nesting deeper than {MAX_YAML_DEPTH} levels{_at(mark)}")
            return super().compose_node(parent, index)
        finally:
            self._depth -= 1

    def compose_scalar_node(self, anchor):
        event = self.peek_event()
        if event.tag is None and event.implicit[0]:  # plain (unquoted, untagged) scalar
            trap = _yaml11_trap(event.value)
            if trap is not None:
                raise _Refused(
                    f"{short_repr(event.value)} is ambiguous: {trap}; quote it to mean text"
                    f"{_at(event.start_mark)}"
                )
            digits = event.value.lstrip("+-")
            if len(digits) > MAX_INT_DIGITS and digits.isdigit():
                raise _Refused(
                    f"an integer of {len(digits)} digits is too long (at most {MAX_INT_DIGITS})"
                    f"{_at(event.start_mark)}"
                )
        return super().compose_scalar_node(anchor)


def _check_expansion(root) -> None:
    """Refuse a node graph that expands (aliases counted in full) beyond MAX_YAML_NODES."""
    if root is None:
        return
    sizes: dict[int, int] = {}
    open_nodes: set[int] = set()  # expanded, not yet sized: the current path from the root
    # Post-order over distinct nodes (each aliased node sized once): cost linear in the file.
    stack: list[tuple[Any, bool]] = [(root, False)]
    while stack:
        node, done = stack.pop()
        if id(node) in sizes:
            continue
        children = _children(node)
        if not done:
            if id(node) in open_nodes:  # reached again from inside itself
                raise _Refused(
                    "an alias refers to the value that contains it (a cycle: the anchored "
                    f"value would be infinite){_at(node.start_mark)}"
                )
            open_nodes.add(id(node))
            stack.append((node, True))
            stack.extend((c, False) for c in children if id(c) not in sizes)
            continue
        total = 1 + sum(sizes.get(id(c), 0) for c in children)
        if total > MAX_YAML_NODES:
            raise _Refused(
                f"the document expands to more than {MAX_YAML_NODES} values through aliases "
                f"(anchors reused as *name){_at(node.start_mark)}"
            )
        sizes[id(node)] = total
        open_nodes.discard(id(node))


def _at(mark) -> str:
    return f" (line {mark.line + 1}, column {mark.column + 1})"


def _children(node) -> list:
    if isinstance(node, SequenceNode):
        return list(node.value)
    if isinstance(node, MappingNode):
        return [n for pair in node.value for n in pair]
    return []


class _StrictConstructor(SafeConstructor):
    """SafeConstructor with YAML 1.2 integers and a refusal of duplicate keys."""

    def construct_yaml_int(self, node):
        value = self.construct_scalar(node)
        sign = -1 if value.startswith("-") else 1
        digits = value.lstrip("+-")
        if digits.startswith("0o"):
            return sign * int(digits[2:], 8)
        if digits.startswith("0x"):
            return sign * int(digits[2:], 16)
        return sign * int(digits)

    def construct_mapping(self, node, deep=False):
        if isinstance(node, MappingNode):
            seen: set[Any] = set()
            for key_node, _ in node.value:
                if key_node.tag == "tag:yaml.org,2002:merge":
                    continue  # "<<: *anchor" merges; explicit keys may override merged ones
                key = self.construct_object(key_node, deep=deep)
                try:
                    duplicate = key in seen
                    seen.add(key)
                except TypeError:
                    continue  # the base class reports unhashable keys
                if duplicate:
                    raise ConstructorError(
                        None,
                        None,
                        f"key {short_repr(key)} appears twice in one mapping",
                        key_node.start_mark,
                    )
        return super().construct_mapping(node, deep=deep)


_StrictConstructor.add_constructor("tag:yaml.org,2002:int", _StrictConstructor.construct_yaml_int)


class _StrictLoader(Reader, Scanner, Parser, _StrictComposer, _StrictConstructor, _Resolver12):
    """The strict loader (see the module docstring)."""

    def __init__(self, stream):
        Reader.__init__(self, stream)
        Scanner.__init__(self)
        Parser.__init__(self)
        _StrictComposer.__init__(self)
        _StrictConstructor.__init__(self)
        _Resolver12.__init__(self)


_STRICT_RESOLVER = _Resolver12()


def load_yaml(text: bytes | str, where: str, error: type[Exception]) -> Any:
    """Parse one YAML document with the strict loader; any failure becomes ``error``.

    Parameters
    ----------
    text : bytes or str
        The document (bytes are decoded as UTF-8).
    where : str
        The file name, for messages.
    error : type
        Exception class raised as ``error(message)``; the message starts with ``where``.

    Returns
    -------
    object
        Plain data: dicts, lists, str, int, float, bool, None (and dates/bytes where tagged).

    Examples
    --------
    >>> load_yaml("a: 1.0e3\\nb: 0o17\\n", "x.yaml", ValueError)
    {'a': 1000.0, 'b': 15}
    >>> load_yaml("robots: 1:30\\n", "x.yaml", ValueError)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: x.yaml: invalid YAML: '1:30' is ambiguous: YAML 1.1 reads it as a base-60 ...
    """
    if isinstance(text, bytes):
        try:
            text = text.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise error(
                f"{where}: cannot read the file: not UTF-8 text ({exc.reason} at byte {exc.start})"
            ) from None
    try:
        return yaml.load(text, Loader=_StrictLoader)  # noqa: S506 - a SafeConstructor subclass
    except yaml.YAMLError as exc:
        text = str(exc).replace('in "<unicode string>", ', "at ")
        raise error(f"{where}: invalid YAML: {_cut(text)}") from None
    except RecursionError:
        raise error(f"{where}: invalid YAML: nesting too deep") from None
    except (ValueError, OverflowError, TypeError) as exc:  # a value PyYAML could not convert
        raise error(f"{where}: invalid YAML: {_cut(str(exc))}") from None


def _cut(text: str, limit: int = 600) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."
