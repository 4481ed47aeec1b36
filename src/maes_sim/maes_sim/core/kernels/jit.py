"""The one place the project imports numba: ``njit`` and ``prange`` for every compiled kernel.

numba is a hard dependency (the core's speed targets need compiled hot loops, see DESIGN.md):
there is no pure-Python fallback, and a missing numba fails at import with what to install.
Every package compiles through this module (``maes_controller`` imports it from
``maes_sim.core.kernels``), so the compile options, the on-disk cache policy and the first-run
notice live in one place.

Kernels are compiled on first use and cached on disk (``cache=True``): the first run in a new
environment compiles for a while (~40 s on a 2-core machine), later runs load the cache. The
first time one of the project's kernels starts compiling in a process, one line says so on
stderr, and at exit one line says how long compiling took.

numba's on-disk cache is invalidated only when a function's *own* source file changes: a cached
kernel that calls a compiled function of another module keeps the old callee after that module
is edited. Keep the compiled functions that call each other in one module (as
:mod:`~maes_sim.core.kernels.physics` does), or clear the cache after editing (``make clean``).
"""

from __future__ import annotations

import atexit
import sys
import time
from collections.abc import Callable
from typing import Any

try:
    import numba as _numba
    from numba.core import event as _event
except ImportError as exc:  # pragma: no cover - exercised in a subprocess by the tests
    raise ImportError(
        "maes_sim needs numba (its kernels are compiled with it; there is no pure-Python "
        f"fallback): {exc}. Install it into this environment, e.g. `pip install numba` "
        "(make setup does)."
    ) from exc

__all__ = ["JIT_OPTIONS", "compile_seconds", "njit", "prange"]

#: Options of the hot kernels: no fastmath (no reassociation, no fused multiply-add) so results
#: are bit-identical to the numpy references; an on-disk cache so the compile cost is paid once
#: per environment; no GIL so other Python threads (ROS executors) run meanwhile.
JIT_OPTIONS: dict[str, Any] = {
    "cache": True, "fastmath": False, "nogil": True, "error_model": "numpy"}

#: numba's parallel range (a plain ``range`` in a kernel compiled without ``parallel=True``).
prange = _numba.prange

#: Rough first-run compile time of all kernels, shown in the notice.
FIRST_RUN_SECONDS = 40
_PACKAGES = ("maes_sim", "maes_controller")


def njit(**options: Any) -> Callable[[Callable], Any]:
    """``numba.njit(**options)``, without the on-disk cache where none can be written.

    numba looks for a writable cache directory (beside the source, then the user's cache) when
    a function is decorated and raises if there is none, e.g. in a read-only install with no
    home directory; compiling on every run is better than not importing.

    Parameters
    ----------
    **options
        ``numba.njit`` options, e.g. ``**JIT_OPTIONS`` or ``cache=True``.

    Returns
    -------
    callable
        A decorator turning a function into a numba dispatcher (``.py_func`` is the original).

    Examples
    --------
    >>> @njit(cache=False)
    ... def twice(x):
    ...     return 2 * x
    >>> twice(21), twice.py_func(21)
    (42, 42)
    """

    def decorate(func: Callable) -> Any:
        try:
            return _numba.njit(**options)(func)
        except RuntimeError:
            return _numba.njit(**{**options, "cache": False})(func)

    return decorate


class _CompileNotice(_event.Listener):
    """Says once that the project's kernels are compiling, and sums the top-level compile time
    (a kernel's callees compile inside it and are not counted twice)."""

    def __init__(self) -> None:
        self.announced = False
        self.depth = 0
        self.started = 0.0
        self.seconds = 0.0

    @staticmethod
    def _ours(event: Any) -> bool:
        dispatcher = (event.data or {}).get("dispatcher")
        module = getattr(getattr(dispatcher, "py_func", None), "__module__", "") or ""
        return module.split(".")[0] in _PACKAGES

    def on_start(self, event: Any) -> None:
        if self.depth == 0:
            if not self._ours(event):
                return
            self.started = time.perf_counter()
            if not self.announced:
                self.announced = True
                print(f"maes_sim: compiling kernels (first run only, ~{FIRST_RUN_SECONDS} s; "
                      "cached for later runs) ...", file=sys.stderr, flush=True)
        self.depth += 1

    def on_end(self, event: Any) -> None:
        if self.depth == 0:
            return
        self.depth -= 1
        if self.depth == 0:
            self.seconds += time.perf_counter() - self.started

    def report(self) -> None:
        if self.announced:
            print(f"maes_sim: compiled kernels in {self.seconds:.1f} s (cached: later runs skip "
                  "this)", file=sys.stderr, flush=True)


_notice = _CompileNotice()
_event.register("numba:compile", _notice)
atexit.register(_notice.report)


def compile_seconds() -> float:
    """Seconds this process spent compiling the project's kernels (0.0 with a warm cache).

    Examples
    --------
    >>> compile_seconds() >= 0.0
    True
    """
    return _notice.seconds
