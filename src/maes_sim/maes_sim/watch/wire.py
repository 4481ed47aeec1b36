"""What the page and its server exchange: JSON, with numeric arrays packed as base64 bytes.

A packed array is ``{"dtype": "f4", "shape": [N, 3], "b64": "..."}`` (little-endian; dtypes
``f4``, ``i4`` and ``u1``, which the page reads into a Float32Array, Int32Array or Uint8Array
without parsing numbers one by one). Everything the page draws is in the world frame in metres
(origin at the map's centre, x to the right, y up), as on ROS; times in simulated seconds.
"""

from __future__ import annotations

import base64
import json
import math

import numpy as np

__all__ = ["dumps", "packed"]

_DTYPES = {"f4": np.float32, "i4": np.int32, "u1": np.uint8}


def packed(values, dtype: str = "f4") -> dict:
    """``values`` as a packed array of ``dtype`` (``"f4"``, ``"i4"`` or ``"u1"``).

    Examples
    --------
    >>> packed([[1.5, 2.0]])
    {'dtype': 'f4', 'shape': [1, 2], 'b64': 'AADAPwAAAEA='}
    """
    if dtype not in _DTYPES:
        raise ValueError(f"dtype must be one of {sorted(_DTYPES)}, got {dtype!r}")
    arr = np.ascontiguousarray(values, dtype=np.dtype(_DTYPES[dtype]).newbyteorder("<"))
    return {
        "dtype": dtype,
        "shape": list(arr.shape),
        "b64": base64.b64encode(arr.tobytes()).decode("ascii"),
    }


def _default(value):
    if isinstance(value, np.integer | np.bool_):
        return value.item()
    if isinstance(value, np.floating):
        value = float(value)
        return value if math.isfinite(value) else None
    if isinstance(value, np.ndarray):
        return value.tolist()
    raise TypeError(f"not JSON: {type(value).__name__}")


def dumps(obj) -> bytes:
    """``obj`` as compact JSON bytes (numpy scalars and arrays taken as numbers and lists).

    Examples
    --------
    >>> dumps({"tick": np.int64(3), "ok": np.bool_(True)})
    b'{"tick":3,"ok":true}'
    """
    return json.dumps(obj, separators=(",", ":"), default=_default, allow_nan=False).encode()
