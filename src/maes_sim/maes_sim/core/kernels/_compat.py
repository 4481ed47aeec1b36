"""Optional numba: the kernels compile with it and fall back to the numpy references without it.

The project installs numba; the fallback exists so that ``maes_sim.core.kernels`` still imports
(and runs, slowly) on a machine where numba is broken or missing. It warns once, at import.
"""

from __future__ import annotations

import warnings

try:
    import numba as _numba
except ImportError:  # pragma: no cover - exercised in a subprocess by the tests
    _numba = None

#: True when the compiled kernels are in use.
HAVE_NUMBA = _numba is not None

#: Options of every compiled kernel: no fastmath (no reassociation, no fused multiply-add) so
#: results are bit-identical to the numpy references; an on-disk cache so the compile cost is
#: paid once per environment; no GIL so other Python threads (ROS executors) run meanwhile.
JIT_OPTIONS = {"cache": True, "fastmath": False, "nogil": True, "error_model": "numpy"}

if HAVE_NUMBA:
    prange = _numba.prange

    def njit(**options):
        """``numba.njit(**options)``, without the on-disk cache where none can be written.

        numba looks for a writable cache directory (beside the source, then the user's cache)
        when the function is decorated and raises if there is none, e.g. in a read-only
        install with no home directory; compiling on every run is better than not importing.
        """

        def decorate(func):
            try:
                return _numba.njit(**options)(func)
            except RuntimeError:
                return _numba.njit(**{**options, "cache": False})(func)

        return decorate

else:
    warnings.warn(
        "numba is not importable: maes_sim.core.kernels falls back to the pure-numpy reference "
        "implementations (same results, much slower). Install numba for real-time speed.",
        RuntimeWarning,
        stacklevel=2,
    )
    prange = range

    def njit(**options):
        """Stand-in for ``numba.njit``: leaves the function as plain Python (never called)."""
        return lambda func: func
