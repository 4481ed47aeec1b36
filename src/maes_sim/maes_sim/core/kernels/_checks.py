"""Input checks shared by the public kernel functions (bad input raises, never asserts)."""

from __future__ import annotations

import math

import numpy as np

from maes_sim.core.kernels.reference import AXIS_SNAP


def check_walls(walls: np.ndarray) -> np.ndarray:
    """Return ``walls`` as a C-contiguous bool (H, W) array, or raise naming the problem."""
    if not isinstance(walls, np.ndarray) or walls.dtype != np.bool_ or walls.ndim != 2:
        desc = (
            f"dtype={walls.dtype}, shape={walls.shape}"
            if isinstance(walls, np.ndarray)
            else f"type {type(walls).__name__}"
        )
        raise TypeError(f"walls must be a bool array of shape (H, W), got {desc}")
    if walls.shape[0] < 1 or walls.shape[1] < 1:
        raise ValueError(f"walls must not be empty, got shape {walls.shape}")
    return np.ascontiguousarray(walls)


def check_points(name: str, points: np.ndarray, n: int | None = None) -> np.ndarray:
    """Return ``points`` as a new finite float64 (n, 2) array without negative zeros, or raise."""
    arr = np.ascontiguousarray(points, dtype=np.float64)
    if arr.ndim != 2 or arr.shape[1] != 2 or (n is not None and arr.shape[0] != n):
        want = "(N, 2)" if n is None else f"({n}, 2)"
        raise ValueError(f"{name} must have shape {want}, got {arr.shape}")
    if not np.isfinite(arr).all():
        bad = np.argwhere(~np.isfinite(arr))[0]
        raise ValueError(f"{name} must be finite, {name}[{bad[0]}, {bad[1]}] = {arr[tuple(bad)]}")
    # -0.0 + 0.0 == +0.0: no negative zeros, whose sign min() and np.minimum treat differently.
    return arr + 0.0


def check_vector(name: str, values: np.ndarray, n: int) -> np.ndarray:
    """Return ``values`` as a finite float64 (n,) array, or raise."""
    arr = np.ascontiguousarray(values, dtype=np.float64)
    if arr.shape != (n,):
        raise ValueError(f"{name} must have shape ({n},), got {arr.shape}")
    if not np.isfinite(arr).all():
        bad = int(np.argmax(~np.isfinite(arr)))
        raise ValueError(f"{name} must be finite, {name}[{bad}] = {arr[bad]}")
    return arr


def check_directions(directions: np.ndarray, n: int) -> np.ndarray:
    """Return ``directions`` as a finite float64 (n, R, 2) array of non-zero vectors, or raise."""
    arr = np.ascontiguousarray(directions, dtype=np.float64)
    if arr.ndim != 3 or arr.shape[0] != n or arr.shape[2] != 2:
        raise ValueError(f"directions must have shape ({n}, R, 2), got {arr.shape}")
    if not np.isfinite(arr).all():
        raise ValueError("directions must be finite")
    tiny = np.abs(arr) < AXIS_SNAP
    if (tiny[..., 0] & tiny[..., 1]).any():
        raise ValueError(f"directions must be non-zero vectors (a component >= {AXIS_SNAP})")
    return arr


def check_max_range(max_range: float) -> float:
    """Return ``max_range`` as a float, or raise if it is not finite and positive."""
    value = float(max_range)
    if not math.isfinite(value) or value <= 0.0:
        raise ValueError(f"max_range must be finite and > 0, got {max_range!r}")
    return value


def check_n_rays(n_rays: int) -> int:
    """Return ``n_rays`` as an int, or raise if it is not a positive integer."""
    if isinstance(n_rays, bool) or not isinstance(n_rays, (int, np.integer)) or n_rays < 1:
        raise ValueError(f"n_rays must be a positive integer, got {n_rays!r}")
    return int(n_rays)


def check_marking(
    shape: tuple[int, int],
    n: int,
    explored_tick: np.ndarray | None,
    tick: int,
    slam: np.ndarray | None,
    slam_index: np.ndarray | None,
) -> tuple[np.ndarray | None, int, np.ndarray | None, np.ndarray | None]:
    """Check the optional in-place marking arrays; returns them (slam_index as int64)."""
    if isinstance(tick, bool) or not isinstance(tick, (int, np.integer)):
        raise TypeError(f"tick must be an integer, got {tick!r}")
    if not -(2**31) <= int(tick) < 2**31:
        raise ValueError(f"tick must fit in int32, got {tick}")
    if explored_tick is not None:
        _check_inplace("explored_tick", explored_tick, np.int32, shape)
    if (slam is None) != (slam_index is None):
        raise ValueError("slam and slam_index must be given together")
    if slam is not None:
        if not isinstance(slam, np.ndarray) or slam.ndim != 3:
            raise ValueError(
                f"slam must be an array with dtype uint8 and shape (M, {shape[0]}, {shape[1]})"
            )
        _check_inplace("slam", slam, np.uint8, (slam.shape[0], *shape))
        idx = np.asarray(slam_index)
        if idx.shape != (n,) or not np.issubdtype(idx.dtype, np.integer):
            raise ValueError(
                f"slam_index must be an integer array of shape ({n},), "
                f"got dtype={idx.dtype}, shape={idx.shape}"
            )
        idx = np.ascontiguousarray(idx, dtype=np.int64)
        bad = (idx < -1) | (idx >= slam.shape[0])
        if bad.any():
            k = int(np.argmax(bad))
            raise ValueError(
                f"slam_index[{k}] = {idx[k]} is out of range [-1, {slam.shape[0]}) "
                "(-1 means: do not mark this robot)"
            )
        slam_index = idx
    return explored_tick, int(tick), slam, slam_index


def _check_inplace(name: str, arr: np.ndarray, dtype: type, shape: tuple[int, ...]) -> None:
    if not isinstance(arr, np.ndarray) or arr.dtype != dtype or arr.shape != shape:
        got = f"dtype={arr.dtype}, shape={arr.shape}" if isinstance(arr, np.ndarray) else type(arr)
        raise ValueError(
            f"{name} must be an array with dtype {np.dtype(dtype).name} and shape {shape}, "
            f"got {got}"
        )
    if not arr.flags.c_contiguous or not arr.flags.writeable:
        raise ValueError(f"{name} must be C-contiguous and writeable (it is updated in place)")


def check_bodies(bodies: np.ndarray | None, radius: float) -> tuple[np.ndarray, float]:
    """Check the ray-stopping discs; returns (centres (K, 2) float64, radius); no bodies: (0, 2)."""
    if isinstance(radius, bool) or not isinstance(radius, (int, float, np.integer, np.floating)):
        raise TypeError(f"body_radius must be a number, got {radius!r}")
    r = float(radius)
    if not math.isfinite(r) or r < 0.0:
        raise ValueError(f"body_radius must be finite and >= 0, got {radius!r}")
    if bodies is None:
        return np.empty((0, 2), dtype=np.float64), r
    return check_points("bodies", bodies), r
