"""The config error type and the value checks the config dataclasses are built from.

Each check is a small callable ``check(value, key) -> value`` that returns the value in its stored
form (an ``int`` given for a float setting becomes a ``float``, a list of seeds becomes a tuple)
or raises :class:`ConfigError` naming the key path, the bad value and what was expected. The same
checks run for YAML files and for dataclasses built in Python, so there is one set of rules.
"""

from __future__ import annotations

import difflib
import math
import numbers
import re
from collections.abc import Iterable, Sequence
from typing import Any

from maes_sim.core.safe_yaml import short_repr


class _NoValue:
    """Marks a :class:`ConfigError` without an offending value (None can be a bad value)."""

    def __repr__(self) -> str:
        return "<no value>"

    def __reduce__(self) -> str:
        return "_NO_VALUE"  # pickles as a reference, so the marker stays a singleton


_NO_VALUE = _NoValue()


class ConfigError(ValueError):
    """An invalid config file or value.

    The message names the source (file path or ``"<dict>"``), the dotted key path, the bad value
    and what was expected; the same pieces are kept as attributes for programs.

    Attributes
    ----------
    problem : str
        What is wrong, without the source and key.
    key : str or None
        Dotted key path such as ``"map.cave_config.random_fill_percent"`` (None for file errors).
    value : object
        The offending value (absent for file errors).
    source : str or None
        The config file path, ``"<dict>"``, or None when the dataclass was built directly.

    Examples
    --------
    >>> err = ConfigError("got 150, expected an integer from 0 to 99",
    ...                   key="map.cave_config.random_fill_percent", value=150, source="a.yaml")
    >>> str(err)
    'a.yaml: map.cave_config.random_fill_percent: got 150, expected an integer from 0 to 99'
    """

    def __init__(
        self,
        problem: str,
        *,
        key: str | None = None,
        value: Any = _NO_VALUE,
        source: str | None = None,
    ) -> None:
        self.problem = problem
        self.key = key
        self.value = value
        self.source = source
        where = f"{source}: " if source else ""
        what = f"{key}: " if key else ""
        super().__init__(f"{where}{what}{problem}")

    def with_source(self, source: str) -> ConfigError:
        """Return this error with ``source`` filled in (unchanged if it already has one)."""
        if self.source is not None:
            return self
        return ConfigError(self.problem, key=self.key, value=self.value, source=source)

    def __reduce__(self):  # keyword-only __init__: pickle (multiprocessing) needs this
        return (_rebuild_error, (self.problem, self.key, self.value, self.source))


def _rebuild_error(problem: str, key: str | None, value: Any, source: str | None) -> ConfigError:
    return ConfigError(problem, key=key, value=value, source=source)


def show(value: Any, limit: int = 60) -> str:
    """Short ``repr`` of a user value for messages, with its type when that is informative.

    Examples
    --------
    >>> show("5")
    "'5' (a string)"
    >>> show(3)
    '3'
    """
    text = short_repr(value, limit)  # bounded cost even for a huge or alias-shared value
    kinds = {bool: "a boolean", str: "a string", list: "a list", dict: "a mapping"}
    kind = kinds.get(type(value))
    if kind is None and not isinstance(value, numbers.Real | type(None)):
        kind = f"a {type(value).__name__}"
    return f"{text} ({kind})" if kind else text


def _num(x: float) -> str:
    return str(x) if isinstance(x, int) else f"{x:g}"


def _range_text(noun: str, lo: float | None, hi: float | None, lo_open: bool) -> str:
    lo_op = ">" if lo_open else ">="
    if lo is not None and hi is not None and not lo_open:
        return f"{noun} from {_num(lo)} to {_num(hi)}"
    if lo is not None and hi is not None:
        return f"{noun} {lo_op} {_num(lo)} and <= {_num(hi)}"
    if lo is not None:
        return f"{noun} {lo_op} {_num(lo)}"
    if hi is not None:
        return f"{noun} <= {_num(hi)}"
    return noun


class Int:
    """An integer (``bool`` is not one) within ``[lo, hi]``.

    Examples
    --------
    >>> Int(lo=1)(5, "number_of_robots")
    5
    """

    def __init__(self, lo: int | None = None, hi: int | None = None) -> None:
        self.lo, self.hi = lo, hi

    def expected(self) -> str:
        return _range_text("an integer", self.lo, self.hi, False)

    def __call__(self, value: Any, key: str) -> int:
        if isinstance(value, bool) or not isinstance(value, numbers.Integral):
            raise ConfigError(
                f"got {show(value)}, expected {self.expected()}", key=key, value=value
            )
        number = int(value)
        if (self.lo is not None and number < self.lo) or (self.hi is not None and number > self.hi):
            raise ConfigError(
                f"got {show(number)}, expected {self.expected()}", key=key, value=value
            )
        return number


class Float:
    """A real number (an integer is accepted and stored as float), never NaN.

    Infinity is accepted only with ``allow_inf`` (written ``.inf`` in YAML), meaning "unlimited".

    Examples
    --------
    >>> Float(lo=0.0, lo_open=True)(2, "world.tile_size")
    2.0
    """

    def __init__(
        self,
        lo: float | None = None,
        hi: float | None = None,
        *,
        lo_open: bool = False,
        allow_inf: bool = False,
    ) -> None:
        self.lo, self.hi, self.lo_open, self.allow_inf = lo, hi, lo_open, allow_inf

    def expected(self) -> str:
        text = _range_text("a number", self.lo, self.hi, self.lo_open)
        return text + " (or .inf for unlimited)" if self.allow_inf else text

    def __call__(self, value: Any, key: str) -> float:
        if isinstance(value, bool) or not isinstance(value, numbers.Real):
            raise ConfigError(
                f"got {show(value)}, expected {self.expected()}", key=key, value=value
            )
        try:
            number = float(value)
        except OverflowError:  # an integer beyond float range: out of any range we allow
            number = math.inf if value > 0 else -math.inf
            if self.allow_inf:  # .inf means "unlimited"; a 400-digit integer is a mistake
                raise ConfigError(
                    f"got {show(value)}, expected {self.expected()}", key=key, value=value
                ) from None
        unlimited = self.allow_inf and number == math.inf
        bad = math.isnan(number) or (math.isinf(number) and not unlimited)
        if self.lo is not None:
            bad = bad or number < self.lo or (self.lo_open and number == self.lo)
        if self.hi is not None and not unlimited:
            bad = bad or number > self.hi
        if bad:
            raise ConfigError(
                f"got {show(value)}, expected {self.expected()}", key=key, value=value
            )
        return number


class OpenInterval:
    """A real number strictly between ``lo`` and ``hi`` (e.g. a probability that must move an
    occupancy cell: above or below one half); ``why`` says what the bounds are for.

    Examples
    --------
    >>> OpenInterval(0.0, 0.5, "a miss lowers")(0.4, "stack.occupancy.miss_probability")
    0.4
    >>> OpenInterval(0.0, 0.5, "a miss lowers")(0.5, "k")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    maes_sim.core.config_checks.ConfigError: k: got 0.5, expected a number in ]0, 0.5[ (a miss...
    """

    def __init__(self, lo: float, hi: float, why: str) -> None:
        self.lo, self.hi, self.why = lo, hi, why
        self._number = Float(lo=lo, hi=hi)

    def expected(self) -> str:
        return f"a number in ]{self.lo:g}, {self.hi:g}[ ({self.why})"

    def __call__(self, value: Any, key: str) -> float:
        number = self._number(value, key)
        if not self.lo < number < self.hi:
            raise ConfigError(
                f"got {show(value)}, expected {self.expected()}", key=key, value=value
            )
        return number


class Bool:
    """``true`` or ``false``; with ``null_as`` set, YAML ``null`` is accepted and stored as it.

    Examples
    --------
    >>> Bool(null_as=False)(None, "robot_spawn_config.biggest_room")
    False
    """

    def __init__(self, null_as: bool | None = None) -> None:
        self.null_as = null_as

    def expected(self) -> str:
        return "true or false" + (" (or null)" if self.null_as is not None else "")

    def __call__(self, value: Any, key: str) -> bool:
        if value is None and self.null_as is not None:
            return self.null_as
        if not isinstance(value, bool):
            raise ConfigError(
                f"got {show(value)}, expected {self.expected()}", key=key, value=value
            )
        return value


class Choice:
    """One of a fixed set of strings; a near miss gets a "did you mean" suggestion.

    Examples
    --------
    >>> Choice("builtin", "nav2")("nav2", "stack.nav")
    'nav2'
    """

    def __init__(self, *options: str) -> None:
        self.options = options

    def expected(self) -> str:
        return "one of " + ", ".join(repr(o) for o in self.options)

    def __call__(self, value: Any, key: str) -> str:
        if isinstance(value, str) and value in self.options:
            return value
        text = f"got {show(value)}, expected {self.expected()}"
        if isinstance(value, str):
            text += suggestion(value, self.options)
        raise ConfigError(text, key=key, value=value)


class Text:
    """A non-empty string (not only blanks).

    Examples
    --------
    >>> Text()("map.pgm", "map.custom_map_filename")
    'map.pgm'
    """

    def expected(self) -> str:
        return "a non-empty string"

    def __call__(self, value: Any, key: str) -> str:
        if not isinstance(value, str) or not value.strip():
            raise ConfigError(
                f"got {show(value)}, expected {self.expected()}", key=key, value=value
            )
        return value


class Nullable:
    """``None`` (YAML ``null``) or a value accepted by ``inner``.

    Examples
    --------
    >>> Nullable(Int(lo=1))(None, "end_criteria.tick") is None
    True
    """

    def __init__(self, inner: Any) -> None:
        self.inner = inner

    def expected(self) -> str:
        return f"{self.inner.expected()} or null"

    def __call__(self, value: Any, key: str) -> Any:
        if value is None:
            return None
        try:
            return self.inner(value, key)
        except ConfigError as err:
            raise ConfigError(
                err.problem.replace(self.inner.expected(), self.expected()), key=key, value=value
            ) from None


class IntList:
    """A non-empty list of integers in ``[lo, hi]``, stored as a tuple.

    Examples
    --------
    >>> IntList(lo=0)([1, 2], "random_seeds")
    (1, 2)
    """

    def __init__(self, lo: int | None = None, hi: int | None = None) -> None:
        self.item = Int(lo, hi)

    def expected(self) -> str:
        return f"a non-empty list of integers ({self.item.expected()} each), e.g. [0]"

    def __call__(self, value: Any, key: str) -> tuple[int, ...]:
        if isinstance(value, str | bytes) or not isinstance(value, Sequence) or not value:
            raise ConfigError(
                f"got {show(value)}, expected {self.expected()}", key=key, value=value
            )
        return tuple(self.item(item, f"{key}[{i}]") for i, item in enumerate(value))


class Section:
    """A nested config dataclass of type ``cls`` (or ``None`` when ``optional``).

    Examples
    --------
    >>> Section(dict, optional=True)(None, "map.cave_config") is None
    True
    """

    def __init__(self, cls: type, optional: bool = False) -> None:
        self.cls, self.optional = cls, optional

    def expected(self) -> str:
        return f"a {self.cls.__name__}" + (" or None" if self.optional else "")

    def __call__(self, value: Any, key: str) -> Any:
        if (value is None and self.optional) or isinstance(value, self.cls):
            return value
        raise ConfigError(f"got {show(value)}, expected {self.expected()}", key=key, value=value)


def _snake(name: str) -> str:
    """``BroadcastRange`` -> ``broadcast_range`` (MAES's C# spelling of its YAML keys)."""
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", name).lower()


def suggestion(word: str, candidates: Iterable[str]) -> str:
    """``"; did you mean 'x'?"`` for the closest candidate, or ``""`` if none is close.

    Examples
    --------
    >>> suggestion("smothing_runs", ["smoothing_runs", "random_fill_percent"])
    "; did you mean 'smoothing_runs'?"
    """
    candidates = list(candidates)
    folded = {c.lower(): c for c in candidates}
    match = difflib.get_close_matches(_snake(word), list(folded), n=1, cutoff=0.6)
    return f"; did you mean {folded[match[0]]!r}?" if match else ""


def unknown_key_error(key: str, parent: str, allowed: Sequence[str], all_paths: Sequence[str]):
    """The :class:`ConfigError` for ``key`` not being a setting of section ``parent``.

    Suggests the closest key of the same section; failing that, the same key in another section
    (e.g. ``tile_size`` written at the top level instead of under ``world``).

    Examples
    --------
    >>> unknown_key_error("tile_size", "", ["world"], ["world", "world.tile_size"]).problem
    "unknown key 'tile_size'; did you mean 'world.tile_size'? (it belongs in another section)"
    """
    name = str(key) if len(str(key)) <= 60 else short_repr(str(key))[1:-1]
    path = f"{parent}.{name}" if parent else name
    hint = suggestion(name, allowed)
    if not hint:
        elsewhere = [p for p in all_paths if p.rsplit(".", 1)[-1] == _snake(name) and p != path]
        if elsewhere:
            hint = f"; did you mean {elsewhere[0]!r}? (it belongs in another section)"
        else:
            hint = "; known keys here: " + ", ".join(allowed)
    return ConfigError(f"unknown key {short_repr(key)}{hint}", key=path, value=key)
