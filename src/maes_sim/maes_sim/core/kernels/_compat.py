"""Optional numba: the kernels compile with it and fall back to the numpy references without it.

The project installs numba; the fallback exists so that ``maes_sim.core`` still imports (slowly)
on a machine where numba is broken or missing. It warns once, at import.
"""

from __future__ import annotations

import warnings

try:
    import numba as _numba
except ImportError:  # pragma: no cover - exercised in a subprocess by the tests
    _numba = None

#: True when the compiled kernels are in use.
HAVE_NUMBA = _numba is not None

if HAVE_NUMBA:
    njit = _numba.njit
    prange = _numba.prange
else:
    warnings.warn(
        "numba is not importable: maes_sim.core.kernels falls back to the pure-numpy reference "
        "implementations (same results, much slower). Install numba for real-time speed.",
        RuntimeWarning,
        stacklevel=2,
    )

    def njit(*args, **kwargs):
        """Stand-in for ``numba.njit`` that leaves the function as plain Python."""
        if len(args) == 1 and callable(args[0]) and not kwargs:
            return args[0]
        return lambda func: func

    prange = range

#: Options of every compiled kernel: no fastmath so results are bit-identical to the numpy
#: references, and an on-disk cache so the compile cost is paid once per environment.
JIT_OPTIONS = {"cache": True, "fastmath": False, "nogil": True, "error_model": "numpy"}
