"""The one place the project imports numba: ``njit`` and ``prange`` for every compiled kernel.

numba is a hard dependency (the core's speed targets need compiled hot loops, docs/architecture.md):
there is no pure-Python fallback, and a missing numba fails at import with what to install.
Every package compiles through this module (``maes_sim``'s core kernels and
``maes_controller``'s navigator import ``njit`` from here), so the compile options, the on-disk
cache policy and the first-run notice live in one place.

Kernels are compiled on first use and cached on disk (``cache=True``): the first run in a new
environment compiles for a while (20-40 s on a 2-core machine: 21 s for a direct-mode run of
maes_config.yaml, 31 s for every kernel the core tests use), later runs load the cache. The
first time one of the project's kernels really compiles in a process (numba fires its compile
event only for a kernel it did not find in the cache), one line says so on stderr, and at exit
one line says how long compiling took.

numba's on-disk cache is invalidated only when a function's *own* source file changes: a cached
kernel calling a compiled function of another module (the physics kernels call the shared cell
list of ``maes_sim.core.kernels.cells``) would keep the old callee after that module is
edited. So the project's kernels are cached in a directory named after a digest of the source
of every module that compiles kernels (``$XDG_CACHE_HOME/maes_ros/numba/<digest>``, default
``~/.cache``): any edit of such a module starts a fresh cache (one full compile), and the last
few digests are kept so that switching between checkouts does not recompile. Inside it a kernel
is filed under its package-relative folder, not under its absolute path as numba would, so a
second clone or worktree of the same sources loads the kernels the first one compiled. A user's own
``NUMBA_CACHE_DIR`` is honoured as is; where no cache directory is writable, numba's default
applies.
"""

from __future__ import annotations

import atexit
import hashlib
import importlib.util
import os
import shutil
import sys
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

try:
    import numba as _numba
    from numba.core import event as _event
    from numba.core.caching import CacheImpl as _CacheImpl
    from numba.core.caching import NullCache as _NullCache
    from numba.core.caching import UserProvidedCacheLocator as _UserProvidedCacheLocator
except ImportError as exc:  # pragma: no cover - exercised in a subprocess by the tests
    raise ImportError(
        "MAES-ROS needs numba (its kernels are compiled with it; there is no pure-Python "
        f"fallback): {exc}. Install it into this environment, e.g. `pip install numba` "
        "(make setup does)."
    ) from exc

__all__ = [
    "JIT_OPTIONS",
    "cache_dir",
    "compile_seconds",
    "njit",
    "prange",
    "source_digest",
    "stop_between_compiles",
    "use_threads",
]

#: Options of the hot kernels: no fastmath (no reassociation, no fused multiply-add) so results
#: are bit-identical to the numpy references; an on-disk cache so the compile cost is paid once
#: per environment; no GIL so other Python threads (ROS executors) run meanwhile.
JIT_OPTIONS: dict[str, Any] = {
    "cache": True,
    "fastmath": False,
    "nogil": True,
    "error_model": "numpy",
}

#: numba's parallel range (a plain ``range`` in a kernel compiled without ``parallel=True``).
prange = _numba.prange

#: Rough first-run compile time of all kernels, shown in the notice.
FIRST_RUN_SECONDS = 30
_PACKAGES = ("maes_sim", "maes_controller")


#: Cache directories (one per source digest) kept under ``maes_ros/numba``.
KEEP_CACHES = 8


def source_digest(paths: Iterable[Path]) -> str:
    """16 hex digits hashing the names and contents of ``paths`` (order-independent).

    Examples
    --------
    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as d:
    ...     f = Path(d) / "k.py"
    ...     _ = f.write_text("x = 1")
    ...     before = source_digest([f])
    ...     _ = f.write_text("x = 2")
    ...     before != source_digest([f])
    True
    """
    h = hashlib.sha256()
    for path in sorted(Path(p) for p in paths):
        h.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
    return h.hexdigest()[:16]


def _kernel_modules() -> list[Path]:
    """The source files of every module of the project that compiles kernels."""
    roots = []
    for package in _PACKAGES:
        spec = importlib.util.find_spec(package)  # locates it without importing it
        if spec is not None and spec.submodule_search_locations:
            roots += [Path(p).resolve() for p in spec.submodule_search_locations]
    return [
        p for root in roots for p in root.rglob("*.py") if "njit(" in p.read_text(encoding="utf-8")
    ]


def _pick_cache_dir() -> str | None:
    if os.environ.get("NUMBA_CACHE_DIR"):
        return None  # the user's choice: numba uses it for everything
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "maes_ros" / "numba"
    try:
        path = base / source_digest(_kernel_modules())
        path.mkdir(parents=True, exist_ok=True)
        os.utime(path)  # most recently used: kept by the pruning below
        probe = path / f".probe-{os.getpid()}"
        probe.write_bytes(b"")
        probe.unlink()
        old = sorted(
            (p for p in base.iterdir() if p.is_dir() and p != path),
            key=lambda p: p.stat().st_mtime,
            reverse=True,
        )[KEEP_CACHES - 1 :]
        for stale in old:
            shutil.rmtree(stale, ignore_errors=True)
    except OSError:
        return None  # nowhere writable: numba's default (beside the source, or none)
    return str(path)


_CACHE_DIR = _pick_cache_dir()


class _CheckoutAgnosticLocator(_UserProvidedCacheLocator):
    """Caches a project kernel under its package-relative folder in :data:`_CACHE_DIR`.

    numba's own locator files a kernel under a hash of its source file's absolute path, so a
    second clone (or worktree) of the same sources compiled everything again although the cache
    directory, named by the sources' digest, already held it. numba checks a cached kernel
    against a hash of its source file's content, so sharing by package path is safe.
    """

    def __init__(self, py_func: Any, py_file: str) -> None:
        super().__init__(py_func, py_file)
        parts = Path(py_file).resolve().parent.parts
        package = max(i for i, part in enumerate(parts) if part in _PACKAGES)
        self._cache_path = os.path.join(_CACHE_DIR, *parts[package:])

    @classmethod
    def from_function(cls, py_func: Any, py_file: str) -> Any:
        parts = Path(py_file).resolve().parent.parts
        if _CACHE_DIR is None or _numba.config.CACHE_DIR != _CACHE_DIR:
            return None
        if not any(part in _PACKAGES for part in parts):
            return None
        return super().from_function(py_func, py_file)


_CacheImpl._locator_classes.insert(0, _CheckoutAgnosticLocator)


def cache_dir() -> str | None:
    """Where the project's compiled kernels are cached (None: numba's own choice).

    Examples
    --------
    >>> cache_dir() is None or "maes_ros" in cache_dir() or bool(os.environ.get("NUMBA_CACHE_DIR"))
    True
    """
    return _CACHE_DIR


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
        # numba picks a function's cache directory when it is decorated: point it at ours
        # for this one decoration only, so other libraries' caches are left where they were.
        saved = _numba.config.CACHE_DIR
        if _CACHE_DIR is not None and options.get("cache"):
            _numba.config.CACHE_DIR = _CACHE_DIR
        try:
            return _numba.njit(**options)(func)
        except RuntimeError:
            return _numba.njit(**{**options, "cache": False})(func)
        finally:
            _numba.config.CACHE_DIR = saved

    return decorate


class _CompileNotice(_event.Listener):
    """Says once that the project's kernels are compiling, and sums the top-level compile time
    (a kernel's callees compile inside it and are not counted twice)."""

    def __init__(self) -> None:
        self.announced = False
        self.depth = 0
        self.started = 0.0
        self.seconds = 0.0
        #: Called after each top-level compile (:func:`stop_between_compiles`).
        self.between: Callable[[], None] | None = None

    @staticmethod
    def _ours(event: Any) -> bool:
        """A cached kernel of the project (an uncached one compiles on every run, by choice)."""
        dispatcher = (event.data or {}).get("dispatcher")
        module = getattr(getattr(dispatcher, "py_func", None), "__module__", "") or ""
        cached = not isinstance(getattr(dispatcher, "_cache", None), _NullCache)
        return cached and module.split(".")[0] in _PACKAGES

    def on_start(self, event: Any) -> None:
        if self.depth == 0:
            if not self._ours(event):
                return
            self.started = time.perf_counter()
            if not self.announced:
                self.announced = True
                print(
                    "maes_sim: compiling kernels not yet in the on-disk cache (all of them take "
                    f"~{FIRST_RUN_SECONDS} s; each is compiled once per set of sources) ...",
                    file=sys.stderr,
                    flush=True,
                )
        self.depth += 1

    def on_end(self, event: Any) -> None:
        if self.depth == 0:
            return
        self.depth -= 1
        if self.depth == 0:
            self.seconds += time.perf_counter() - self.started
            if self.between is not None:
                self.between()

    def report(self) -> None:
        if self.announced:
            print(
                f"maes_sim: compiled kernels in {self.seconds:.1f} s (cached: later runs skip "
                "this)",
                file=sys.stderr,
                flush=True,
            )


_notice = _CompileNotice()
_event.register("numba:compile", _notice)
atexit.register(_notice.report)


@contextmanager
def stop_between_compiles(check: Callable[[], None]) -> Iterator[None]:
    """Within the block, call ``check()`` each time one of the project's kernels has compiled
    (with its callees): what it raises comes out of the call that compiled the kernel, between
    two kernels, never from inside numba's compiler. ``maes_run`` passes its stop check, so a
    Ctrl-C during a first run's compile (about ``FIRST_RUN_SECONDS`` on an idle machine, several
    times that on a loaded one) stops after the kernel in hand, not after all of them; that
    kernel is then not saved to the on-disk cache, and the next run compiles it again.
    """
    previous, _notice.between = _notice.between, check
    try:
        yield
    finally:
        _notice.between = previous


def use_threads(threads: int) -> int:
    """Let the parallel kernels of the calling thread use ``threads`` threads; returns how many
    they get: at most numba's pool (``NUMBA_NUM_THREADS``, default the number of cores).

    Examples
    --------
    >>> 1 <= use_threads(2) <= 2
    True
    """
    n = max(1, min(int(threads), _numba.config.NUMBA_NUM_THREADS))
    _numba.set_num_threads(n)
    return n


def compile_seconds() -> float:
    """Seconds this process spent compiling the project's kernels (0.0 with a warm cache).

    Examples
    --------
    >>> compile_seconds() >= 0.0
    True
    """
    return _notice.seconds
