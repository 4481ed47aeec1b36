"""Checks for generator parameters (config objects are duck-typed: any object with the keys)."""

from __future__ import annotations

import math
from numbers import Integral, Real

import numpy as np

from .worldmap import MapError

#: Smallest generated interior (map side minus both borders) in tiles.
MIN_INTERIOR = 5


def as_int(value: object, name: str, minimum: int = 0, maximum: int | None = None) -> int:
    """``value`` as an int within [minimum, maximum]; integral floats (6.0) are accepted."""
    if isinstance(value, bool | np.bool_):
        raise MapError(f"{name} must be an integer, got {value!r}")
    integral_float = (
        isinstance(value, Real) and math.isfinite(float(value)) and float(value).is_integer()
    )
    if not (isinstance(value, Integral) or integral_float):
        raise MapError(f"{name} must be an integer, got {value!r}")
    out = int(value)
    if out < minimum or (maximum is not None and out > maximum):
        upper = "" if maximum is None else f" and <= {maximum}"
        raise MapError(f"{name} must be >= {minimum}{upper}, got {out}")
    return out


def as_real(value: object, name: str, minimum: float, maximum: float) -> float:
    """``value`` as a finite float within [minimum, maximum]."""
    if isinstance(value, bool | np.bool_) or not isinstance(value, Real):
        raise MapError(f"{name} must be a number, got {value!r}")
    out = float(value)
    if not (math.isfinite(out) and minimum <= out <= maximum):
        raise MapError(f"{name} must be within [{minimum}, {maximum}], got {value!r}")
    return out


def attr(config: object, section: str, key: str) -> object:
    """``config.key`` or a MapError naming ``section.key``."""
    try:
        return getattr(config, key)
    except AttributeError:
        raise MapError(f"{section} has no {key!r} setting (got {type(config).__name__})") from None


def map_size(width: object, height: object, border_size: object) -> tuple[int, int, int]:
    """Validated ``(width, height, border_size)`` leaving an interior of at least MIN_INTERIOR."""
    w = as_int(width, "width_in_tiles", 1)
    h = as_int(height, "height_in_tiles", 1)
    b = as_int(border_size, "border_size", 0)
    if w - 2 * b < MIN_INTERIOR or h - 2 * b < MIN_INTERIOR:
        raise MapError(
            f"map {w}x{h} with border_size {b} leaves an interior of {w - 2 * b}x{h - 2 * b} "
            f"tiles; at least {MIN_INTERIOR}x{MIN_INTERIOR} is needed (enlarge the map or "
            "shrink the border)"
        )
    return w, h, b


def add_border(interior: np.ndarray, border: int, fill: bool) -> np.ndarray:
    """Pad a bool (h, w) array with ``border`` tiles of ``fill`` on every side."""
    return np.pad(interior, border, mode="constant", constant_values=fill)
