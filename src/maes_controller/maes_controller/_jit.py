"""Optional numba for the search kernels (A*, Dijkstra).

The kernels are written once, in the subset of Python that numba compiles, and run compiled when
numba imports, else as plain Python (same results, roughly 50-100x slower). Each kernel keeps its
uncompiled function as ``kernel.py_func`` either way, so tests can compare the two modes.
"""

from __future__ import annotations

import warnings

try:
    import numba as _numba
except ImportError:  # pragma: no cover - numba is installed wherever the project runs
    _numba = None

#: True when the search kernels are compiled.
HAVE_NUMBA = _numba is not None


def kernel(func):
    """Compile ``func`` with ``numba.njit(cache=True)`` if numba is available.

    Without numba the function itself is returned, with ``func.py_func = func`` so callers can
    use ``py_func`` in both cases.
    """
    if HAVE_NUMBA:
        return _numba.njit(cache=True)(func)
    func.py_func = func
    return func


if not HAVE_NUMBA:  # pragma: no cover
    warnings.warn(
        "numba is not importable: maes_controller's path planning runs as plain Python "
        "(same results, much slower). Install numba for speed.",
        RuntimeWarning,
        stacklevel=2,
    )
