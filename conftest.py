"""Repository-wide pytest setup: ROS isolation per run and Hypothesis profiles.

ROS isolation
    Every pytest process takes a ROS domain of its own before any test runs: it locks
    ``<tmp>/maes-ros-domain-<id>.lock`` for the first free id in 1..101 (starting from one derived
    from its PID) and exports ``ROS_DOMAIN_ID``; discovery is kept on this machine with
    ``ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST``. Two test runs on one machine therefore never
    hear each other, and subprocesses started by tests inherit the same domain. Ids above 101
    are avoided: with Fast DDS's port mapping they may run out of ports on Linux.
    The one-run-per-domain probe of ``maes_run``, ``ros2 launch`` and ``controller_node``
    keeps its full window here (``MAES_DOMAIN_PROBE_S`` unset): with 0.5 s, two CI runs each
    had a controller_node that stalled (once not reporting tick 2, once not ending on SIGINT),
    which a 4 s window had not shown; not understood, so not shortened.
    SIGINT ignored (pytest run as a background job): restored, so that the processes the
    tests start hear Ctrl-C as from a terminal (``ros2 launch`` would not).
    ``FASTDDS_BUILTIN_TRANSPORTS=UDPv4`` (unless set): no shared-memory transport, which a
    hard-killed process can leave locked for the processes started after it.
    ``MAES_STALL_DUMP_S=7`` (unless set): a node process that has not ended 7 s after its stop
    signal, or after its teardown began, prints every thread's stack (maes_common.process).

Hypothesis
    Profile ``dev`` (default) and ``ci`` (chosen when ``CI`` is set): no per-example deadline,
    since the first call of a numba kernel compiles it and a loaded 2-core machine is slow;
    ``ci`` also derandomizes so a CI run is reproducible. ``HYPOTHESIS_PROFILE`` overrides.

Nothing here imports ROS, so core tests run without it.
"""

from __future__ import annotations

import fcntl
import os
import signal
import tempfile
from pathlib import Path

import pytest

DOMAIN_ID_MIN = 1
DOMAIN_ID_MAX = 101

# Keeps the lock file open (and so the domain held) for the life of the pytest process.
_domain_lock_file = None


def acquire_ros_domain_id(start: int, lock_dir: Path) -> tuple[int, object]:
    """Lock and return the first free ROS domain id at or after ``start`` (wrapping around).

    Parameters
    ----------
    start : int
        Preferred id; any integer, folded into ``DOMAIN_ID_MIN..DOMAIN_ID_MAX``.
    lock_dir : Path
        Directory holding one lock file per domain id (shared by every run on the machine).

    Returns
    -------
    tuple
        ``(domain_id, open_lock_file)``; the domain stays reserved while the file is open.

    Raises
    ------
    RuntimeError
        If every id in the range is held by another process.

    Examples
    --------
    >>> domain_id, handle = acquire_ros_domain_id(7, Path(tempfile.gettempdir()))  # doctest: +SKIP
    >>> DOMAIN_ID_MIN <= domain_id <= DOMAIN_ID_MAX  # doctest: +SKIP
    True
    """
    span = DOMAIN_ID_MAX - DOMAIN_ID_MIN + 1
    for offset in range(span):
        domain_id = DOMAIN_ID_MIN + (start - DOMAIN_ID_MIN + offset) % span
        handle = open(lock_dir / f"maes-ros-domain-{domain_id}.lock", "a+")  # noqa: SIM115 - kept open: the lock lives as long as the process
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            handle.close()
            continue
        handle.seek(0)
        handle.truncate()
        handle.write(f"{os.getpid()}\n")
        handle.flush()
        return domain_id, handle
    raise RuntimeError(
        f"every ROS domain id {DOMAIN_ID_MIN}..{DOMAIN_ID_MAX} is locked by another test run "
        f"(lock files maes-ros-domain-*.lock in {lock_dir})"
    )


def _register_hypothesis_profiles() -> None:
    try:
        from hypothesis import HealthCheck, settings
    except ImportError:
        return
    settings.register_profile("dev", deadline=None)
    settings.register_profile(
        "ci",
        deadline=None,
        derandomize=True,
        print_blob=True,
        suppress_health_check=[HealthCheck.too_slow],
    )
    default = "ci" if os.environ.get("CI") else "dev"
    settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", default))


def pytest_configure(config: pytest.Config) -> None:
    """Reserve a ROS domain for this run and load the Hypothesis profile."""
    global _domain_lock_file
    if _domain_lock_file is None:
        domain_id, _domain_lock_file = acquire_ros_domain_id(
            os.getpid(), Path(tempfile.gettempdir())
        )
        os.environ["ROS_DOMAIN_ID"] = str(domain_id)
    os.environ["ROS_AUTOMATIC_DISCOVERY_RANGE"] = "LOCALHOST"
    # A background job of a non-interactive shell starts with SIGINT ignored, and the processes
    # a test starts would inherit that: ros2 launch (launch's signal manager only hears a
    # signal that has a Python handler) then never hears the Ctrl-C a test sends it. The
    # processes start as from a terminal: SIGINT at its default.
    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)
    # Fast DDS over UDP on loopback only, not its shared-memory transport: the tests kill
    # processes hard (SIGKILL, on purpose or when cleaning up), which can leave the shared
    # memory of the domain's ports locked or corrupt (eProsima/Fast-DDS#1144), and a node
    # started later then stalls (seen as controllers that never subscribed, never reported a
    # tick or never ended). Everything else is the same real DDS.
    os.environ.setdefault("FASTDDS_BUILTIN_TRANSPORTS", "UDPv4")
    # A node process still ending 7 s after its stop signal prints its threads' stacks (ros2
    # launch sends SIGTERM at 5 s and SIGKILL at 10 s): a hang shows where it is.
    os.environ.setdefault("MAES_STALL_DUMP_S", "7")
    _register_hypothesis_profiles()


def pytest_unconfigure(config: pytest.Config) -> None:
    """Release this run's ROS domain."""
    global _domain_lock_file
    if _domain_lock_file is not None:
        _domain_lock_file.close()
        _domain_lock_file = None


def pytest_report_header(config: pytest.Config) -> list[str]:
    """Show the ROS isolation and the environment in pytest's header."""
    in_env = os.environ.get("MAES_ROS_ENV") == "1"
    return [
        f"ROS_DOMAIN_ID={os.environ.get('ROS_DOMAIN_ID')} "
        f"ROS_AUTOMATIC_DISCOVERY_RANGE={os.environ.get('ROS_AUTOMATIC_DISCOVERY_RANGE')}",
        "environment: "
        + (
            "pip environment (scripts/env.sh)"
            if in_env
            else "bare (ROS tests skip; use scripts/with_env or make test)"
        ),
    ]
