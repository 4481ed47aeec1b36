"""Input checks shared by the pure modules (bad input raises naming the value, never asserts)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np


def check_bool_grid(name: str, grid: Any) -> np.ndarray:
    """Return ``grid`` as a bool (H, W) array, or raise ``TypeError`` naming the problem."""
    arr = np.asarray(grid)
    if arr.dtype != np.bool_ or arr.ndim != 2:
        raise TypeError(
            f"{name} must be a bool (H, W) array, got dtype={arr.dtype}, shape={arr.shape}"
        )
    return arr


def check_int_grid(name: str, grid: Any) -> np.ndarray:
    """Return ``grid`` as an integer (H, W) array, or raise ``TypeError`` naming the problem."""
    arr = np.asarray(grid)
    if arr.ndim != 2 or not np.issubdtype(arr.dtype, np.integer):
        raise TypeError(
            f"{name} must be an integer (H, W) array, got dtype={arr.dtype}, shape={arr.shape}"
        )
    return arr


def check_non_negative(name: str, value: Any) -> float:
    """Return ``value`` as a float if it is a finite number >= 0, else raise ``ValueError``."""
    ok = isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, bool)
    if not (ok and 0 <= value < math.inf):
        raise ValueError(f"{name} must be a finite number >= 0, got {value!r}")
    return float(value)
